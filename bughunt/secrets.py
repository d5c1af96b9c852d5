"""Scrubbing secret values, and their usual encodings, from text bughunt stores or prints.

An agent may be given host variables (``AgentVersion.env``), and a judge
backend holds an API key. Whatever comes back from either (an agent's report
and log, a judge's answer and error text) may quote the value, raw or encoded,
by accident or on purpose. A :class:`Scrubber` replaces every occurrence of
each value with ``[secret:NAME]`` in these forms:

- the value itself, in any letter case;
- URL-encoded (``quote`` with and without ``/`` kept, ``quote_plus``), any case;
- JSON-escaped (``json.dumps`` without the quotes, ASCII-only and not), any case;
- hex of its UTF-8 bytes, lower or upper case;
- the last three also of the value in lower and upper case (a non-ASCII
  letter's escape changes with its case);
- base64 of its UTF-8 bytes, standard and URL-safe alphabet, in each of the
  three byte alignments: the characters that depend on the value's bytes only,
  so the value is found inside a longer base64 stream wherever it starts.

Values shorter than :data:`MIN_LENGTH` characters are not scrubbed (they would
hit ordinary text); each such name is logged once per process as a warning,
never its value.

The contract: there is no process-wide scrubber. Whoever holds secret values
builds a :class:`Scrubber` from them and passes it where text is stored or
printed; the sandbox stage builds one per run from the command agents'
``env`` (``corpus.agent_secrets``), a judge backend one from its own key and
environment. A :class:`Scrubber` never shows a value in its ``repr``.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
from collections.abc import Iterable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import quote, quote_plus

if TYPE_CHECKING:  # the model gateway runs this module in a container without pydantic
    from pydantic import BaseModel

log = logging.getLogger("bughunt.secrets")

MIN_LENGTH = 8
"""Shortest value that is scrubbed; shorter ones are left alone, with a warning."""

_warned: set[str] = set()
_warned_lock = threading.Lock()

T = TypeVar("T")
M = TypeVar("M", bound="BaseModel")


def marker(name: str) -> str:
    """What a secret called ``name`` is replaced with."""
    return f"[secret:{name}]"


def base64_inner(data: bytes, offset: int, *, urlsafe: bool = False) -> str:
    """The base64 characters of ``data`` placed at byte ``offset`` (0, 1, 2) of a stream.

    Only the characters whose six bits all come from ``data`` are kept: those
    are the same wherever ``data`` sits in a longer stream at that alignment,
    whatever comes before or after it.
    """
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    text = encode(bytes(offset) + data).decode("ascii")
    first = -(-8 * offset // 6)  # the first character starting at or after the value's first bit
    last = (8 * (offset + len(data))) // 6  # characters ending at or before its last bit
    return text[first:last]


def encoded_forms(value: str) -> tuple[list[str], list[str]]:
    """Every form of ``value`` scrubbed: (matched in any letter case, matched exactly).

    The first list holds the value, its URL-encodings, JSON escapes and hex,
    also of the value in lower and upper case; the second its base64 forms,
    whose letter case carries the bits.
    """
    data = value.encode("utf-8")
    # Encoded after a case change, a non-ASCII letter's escape changes (é %C3%A9, É %C3%89).
    folded = [
        form
        for cased in (value, value.lower(), value.upper())
        for form in (
            cased,
            quote(cased, safe=""),
            quote(cased),
            quote_plus(cased),
            json.dumps(cased)[1:-1],
            json.dumps(cased, ensure_ascii=False)[1:-1],
            cased.encode("utf-8").hex(),
        )
    ]
    exact = [
        base64_inner(data, offset, urlsafe=urlsafe)
        for offset in (0, 1, 2)
        for urlsafe in (False, True)
    ]
    # ASCII forms that differ only in case are one pattern (matched in any case anyway).
    unique: dict[str, str] = {}
    for form in folded:
        unique.setdefault(form.lower() if form.isascii() else form, form)
    return list(unique.values()), [form for form in dict.fromkeys(exact) if form]


def _warn_short(name: str) -> None:
    with _warned_lock:
        if name in _warned:
            return
        _warned.add(name)
    log.warning(
        "secret %s is shorter than %d characters: it is passed on but not scrubbed",
        name,
        MIN_LENGTH,
    )


class Scrubber:
    """Replaces named secret values, raw and encoded, by ``[secret:NAME]``.

    Built from ``{name: value}`` (or ``(name, value)`` pairs, where one name
    may have several values); none, or only short values, scrubs nothing. Occurrences that overlap (two secrets sharing characters,
    or two forms of one) are replaced as one span, so no piece of either is
    left; at any one place the longest form wins.
    """

    __slots__ = ("_bytes_regex", "_groups", "_names", "_pairs", "_regex")

    def __init__(
        self, secrets: Mapping[str, str] | Iterable[tuple[str, str]] | None = None
    ) -> None:
        items = secrets.items() if isinstance(secrets, Mapping) else (secrets or ())
        self._pairs = tuple(dict.fromkeys((str(n), str(v)) for n, v in items))
        patterns: list[tuple[str, str, bool]] = []  # (form, name, any letter case)
        names: list[str] = []
        for name, value in self._pairs:
            if len(value) < MIN_LENGTH:
                _warn_short(name)
                continue
            if name not in names:
                names.append(name)
            folded, exact = encoded_forms(value)
            patterns += [(form, name, True) for form in folded]
            patterns += [(form, name, False) for form in exact]
        # Longest first: at one place, the alternation takes the first form that matches.
        patterns.sort(key=lambda p: len(p[0]), reverse=True)
        self._names = tuple(names)
        self._groups = {f"g{i}": name for i, (_form, name, _fold) in enumerate(patterns)}
        self._regex: re.Pattern[str] | None = None
        self._bytes_regex: re.Pattern[bytes] | None = None
        if patterns:
            self._regex = re.compile(_alternation([(f, fold) for f, _n, fold in patterns]))
            self._bytes_regex = re.compile(
                _alternation([(f, fold) for f, _n, fold in patterns]).encode("utf-8")
            )

    @property
    def names(self) -> tuple[str, ...]:
        """The names whose values are scrubbed (long enough)."""
        return self._names

    def __bool__(self) -> bool:
        return self._regex is not None

    def __repr__(self) -> str:  # never the values
        return f"Scrubber(names={list(self._names)!r})"

    def including(self, secrets: Mapping[str, str]) -> Scrubber:
        """A scrubber of this one's secrets and ``secrets`` too (``self`` when nothing is new)."""
        new = [pair for pair in secrets.items() if pair not in self._pairs]
        return Scrubber([*self._pairs, *new]) if new else self

    def scrub(self, text: str) -> str:
        """``text`` with every form of every secret replaced by its marker."""
        if self._regex is None or not text:
            return text
        return _replace(text, self._spans(self._regex, text), str)

    def scrub_bytes(self, data: bytes) -> bytes:
        """``data`` with every form's UTF-8 bytes replaced by the marker (ASCII case folding)."""
        if self._bytes_regex is None or not data:
            return data
        return _replace(data, self._spans(self._bytes_regex, data), lambda s: s.encode("utf-8"))

    def scrub_json(self, value: T) -> T:
        """A copy of a JSON-like value (dicts, lists, tuples of str and scalars), keys too, scrubbed.

        Anything that is not a plain string (numbers, enums, None) is kept as it is.
        """
        return cast(T, self._walk(value))

    def scrub_model(self, model: M) -> M:
        """``model`` with every string in it scrubbed, nested models and containers too.

        Fields that change are replaced without re-validation (a string stays a
        string); the model itself is returned when nothing changed.
        """
        if self._regex is None:
            return model
        update: dict[str, Any] = {}
        for field in type(model).model_fields:
            value = getattr(model, field)
            new = self._walk(value)
            if new is not value:
                update[field] = new
        return model.model_copy(update=update) if update else model

    def _walk(self, value: Any) -> Any:
        if isinstance(value, Enum):
            return value
        if isinstance(value, str):
            new = self.scrub(value)
            return value if new == value else new
        if isinstance(value, bytes):
            data = self.scrub_bytes(value)
            return value if data == value else data
        if hasattr(type(value), "model_fields") and hasattr(value, "model_copy"):  # a model
            return self.scrub_model(value)
        if isinstance(value, dict):
            pairs = [(self._walk(k), self._walk(v)) for k, v in value.items()]
            if all(
                k2 is k and v2 is v for (k2, v2), (k, v) in zip(pairs, value.items(), strict=True)
            ):
                return value
            return dict(pairs)
        if isinstance(value, list | tuple):
            out = [self._walk(v) for v in value]
            if all(a is b for a, b in zip(out, value, strict=True)):
                return value
            return type(value)(out) if isinstance(value, tuple) else out
        return value

    def _spans(self, regex: re.Pattern[Any], text: Any) -> list[tuple[int, int, str]]:
        """Merged spans of every occurrence, overlapping ones joined, with the names in each."""
        merged: list[tuple[int, int, list[str]]] = []
        for match in regex.finditer(text):
            group = match.lastgroup
            assert group is not None
            start, end, name = match.start(group), match.end(group), self._groups[group]
            if merged and start < merged[-1][1]:
                last = merged[-1]
                if end > last[1]:  # it sticks out: both are replaced, as one span
                    names = last[2] if name in last[2] else [*last[2], name]
                    merged[-1] = (last[0], end, names)
            else:
                merged.append((start, end, [name]))
        return [(s, e, "".join(marker(n) for n in names)) for s, e, names in merged]


def _alternation(forms: list[tuple[str, bool]]) -> str:
    """A lookahead trying every form at each place, so overlapping occurrences are all found.

    A class of the forms' first characters goes first: most places fail on it
    at once instead of on every form in turn (about 3x faster on plain text).
    """
    parts = [
        f"(?P<g{i}>(?i:{re.escape(form)}))" if fold else f"(?P<g{i}>{re.escape(form)})"
        for i, (form, fold) in enumerate(forms)
    ]
    folded = "".join(sorted({re.escape(form[0]) for form, fold in forms if fold}))
    exact = "".join(sorted({re.escape(form[0]) for form, fold in forms if not fold}))
    first = "|".join(([f"(?i:[{folded}])"] if folded else []) + ([f"[{exact}]"] if exact else []))
    return f"(?=(?:{first}))(?=(?:{'|'.join(parts)}))"


S = TypeVar("S", str, bytes)


def _replace(text: S, spans: list[tuple[int, int, str]], encode: Any) -> S:
    if not spans:
        return text
    out: list[S] = []
    at = 0
    for start, end, mark in spans:
        out.append(text[at:start])
        out.append(encode(mark))
        at = end
    out.append(text[at:])
    return text[:0].join(out)
