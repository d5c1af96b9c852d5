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

The forms are looked for in the text itself and in its *folded views*, so
that layering and wrapping cannot hide them: the text percent-decoded and
JSON-unescaped again and again (every byte percent-encoded, ``%252D``, a
JSON string inside a JSON string, up to :data:`MAX_DEPTH` levels), and each
of those with every whitespace character removed (base64 or hex wrapped at
76 characters, split across lines). A form found in a view is replaced in
the text over the whole span it came from, escapes and line breaks included.
Deliberate disguises are out of reach: reversed, ROT13, compressed or
encrypted values, or a value split across fields (docs/sandbox.md#secrets).

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
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import quote, quote_plus

if TYPE_CHECKING:  # the model gateway runs this module in a container without pydantic
    from pydantic import BaseModel

log = logging.getLogger("bughunt.secrets")

MIN_LENGTH = 8
"""Shortest value that is scrubbed; shorter ones are left alone, with a warning."""
MAX_DEPTH = 8
"""Levels of percent-encoding and JSON escaping seen through (each level one decoding pass)."""

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

    __slots__ = ("_groups", "_names", "_pairs", "_regex")

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
        if patterns:
            self._regex = re.compile(_alternation([(f, fold) for f, _n, fold in patterns]))

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
        """``text`` with every form of every secret, in the text or a folded view of it, replaced."""
        if self._regex is None or not text:
            return text
        return _replace(text, self._spans(self._regex, text))

    def scrub_bytes(self, data: bytes) -> bytes:
        """``data`` scrubbed as its UTF-8 text; bytes that are not UTF-8 are kept as they are."""
        if self._regex is None or not data:
            return data
        text = data.decode("utf-8", "surrogateescape")
        out = self.scrub(text)
        return data if out == text else out.encode("utf-8", "surrogateescape")

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

    def _spans(self, regex: re.Pattern[str], text: str) -> list[tuple[int, int, str]]:
        """Merged spans of every occurrence in every view, overlapping ones joined, with names."""
        found: list[tuple[int, int, str]] = []
        for view in _views(text):
            for match in regex.finditer(view.text):
                group = match.lastgroup
                assert group is not None
                start, end = view.source(match.start(group), match.end(group))
                found.append((start, end, self._groups[group]))
        found.sort(key=lambda hit: (hit[0], -hit[1]))
        merged: list[tuple[int, int, list[str]]] = []
        for start, end, name in found:
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
    at once instead of on every form in turn (much faster on plain text).
    """
    parts = [
        f"(?P<g{i}>(?i:{re.escape(form)}))" if fold else f"(?P<g{i}>{re.escape(form)})"
        for i, (form, fold) in enumerate(forms)
    ]
    folded = "".join(sorted({re.escape(form[0]) for form, fold in forms if fold}))
    exact = "".join(sorted({re.escape(form[0]) for form, fold in forms if not fold}))
    first = "|".join(([f"(?i:[{folded}])"] if folded else []) + ([f"[{exact}]"] if exact else []))
    return f"(?=(?:{first}))(?=(?:{'|'.join(parts)}))"


def _replace(text: str, spans: list[tuple[int, int, str]]) -> str:
    if not spans:
        return text
    out: list[str] = []
    at = 0
    for start, end, mark in spans:
        out.append(text[at:start])
        out.append(mark)
        at = end
    out.append(text[at:])
    return "".join(out)


# --- folded views -------------------------------------------------------------

_ESCAPE = re.compile(
    r"(?:%[0-9A-Fa-f]{2})++"
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|\\u[0-9a-fA-F]{4}"
    r"|\\[\\\"/'bfnrt]"
)
_SIMPLE_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_SPACE = re.compile(r"\s++")
_WORD = re.compile(r"\S++")

_Piece = tuple[int, int, bool]
"""Where a run of a view comes from in the text it was made of: start, end, and whether
the run is that text's characters one for one (else one character decoded from the span)."""


class _View:
    """A text made from another by decoding or dropping characters, and how to map back.

    ``starts`` and ``pieces`` say where each run of ``text`` came from in the
    parent view (the original text at the root); they are made on first use,
    since most views hold no secret at all.
    """

    __slots__ = ("_make", "_pieces", "_starts", "parent", "text")

    def __init__(
        self,
        text: str,
        parent: _View | None,
        make: Callable[[], tuple[list[int], list[_Piece]]] | None = None,
    ) -> None:
        self.text = text
        self.parent = parent
        self._make = make
        self._starts: list[int] = []
        self._pieces: list[_Piece] = []

    def source(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that ``text[start:end]`` (non-empty) was made from."""
        if self.parent is None:
            return start, end
        if self._make is not None:
            self._starts, self._pieces = self._make()
            self._make = None
        first, _ = self._char(start)
        _, last = self._char(end - 1)
        return self.parent.source(first, last)

    def _char(self, at: int) -> tuple[int, int]:
        index = bisect_right(self._starts, at) - 1
        begin, finish, literal = self._pieces[index]
        if literal:
            begin += at - self._starts[index]
            return begin, begin + 1
        return begin, finish


def _unescape(escape: str) -> list[tuple[str, int]]:
    """The characters an escape run stands for, each with the length of its source."""
    if escape[0] == "%":
        data = bytes.fromhex(escape.replace("%", ""))
        chars = data.decode("utf-8", "surrogateescape")
        return [(c, 3 * len(c.encode("utf-8", "surrogateescape"))) for c in chars]
    if escape[1] == "u":
        code = int(escape[2:6], 16)
        if len(escape) == 12:  # a UTF-16 surrogate pair, one character to JSON
            code = 0x10000 + ((code - 0xD800) << 10) + (int(escape[8:12], 16) - 0xDC00)
        return [(chr(code), len(escape))]
    return [(_SIMPLE_ESCAPES.get(escape[1], escape[1]), 2)]


def _decoded(parent: _View) -> _View | None:
    """``parent``'s text with every percent-escape and JSON escape decoded once; None if none."""
    text = parent.text
    if "%" not in text and "\\" not in text:
        return None
    out: list[str] = []
    starts: list[int] = []
    pieces: list[_Piece] = []
    at = size = 0
    for match in _ESCAPE.finditer(text):
        if match.start() > at:
            starts.append(size)
            pieces.append((at, match.start(), True))
            out.append(text[at : match.start()])
            size += match.start() - at
        at = match.start()
        for char, length in _unescape(match.group()):
            starts.append(size)
            pieces.append((at, at + length, False))
            out.append(char)
            size += 1
            at += length
    if not pieces:
        return None
    if at < len(text):
        starts.append(size)
        pieces.append((at, len(text), True))
        out.append(text[at:])
    return _View("".join(out), parent, lambda: (starts, pieces))


def _unspaced(parent: _View) -> _View | None:
    """``parent``'s text without whitespace (wrapped base64 or hex); None if it has none."""
    text = _SPACE.sub("", parent.text)
    if len(text) == len(parent.text):
        return None

    def make() -> tuple[list[int], list[_Piece]]:
        starts: list[int] = []
        pieces: list[_Piece] = []
        size = 0
        for word in _WORD.finditer(parent.text):
            starts.append(size)
            pieces.append((word.start(), word.end(), True))
            size += word.end() - word.start()
        return starts, pieces

    return _View(text, parent, make)


def _views(text: str) -> list[_View]:
    """The text, each level of it decoded (up to :data:`MAX_DEPTH`), and each without whitespace."""
    views: list[_View] = []
    view: _View | None = _View(text, None)
    depth = 0
    while view is not None:
        views.append(view)
        if (bare := _unspaced(view)) is not None:
            views.append(bare)
        depth += 1
        view = _decoded(view) if depth <= MAX_DEPTH else None
    return views
