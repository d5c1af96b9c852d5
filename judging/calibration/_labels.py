"""Human preference labels on report pairs, read from JSON Lines (docs/judges.md#calibration).

One labelled pair a line::

    {"id": "cmp-1", "first": {<bug report>}, "second": {<bug report>}, "better": "first",
     "note": "why (optional)"}

``first`` and ``second`` are bug reports in the shape agents hand in
(:class:`~bughunt.models.BugReport`), both about the same case; ``better``
says which one a person judged more useful: ``first``, ``second`` or ``tie``.
A calibration measured on part of a file would misstate what the file says,
so the first bad line stops the read with an :class:`InputError` naming
``file:line`` (and the field), and nothing is measured.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bughunt import jsontext
from bughunt.errors import InputError
from bughunt.hashing import sha256_bytes
from bughunt.jsontext import JsonTextError
from bughunt.models import BugReport, Winner
from bughunt.safeio import read_input


class LabelledPair(BaseModel):
    """Two reports of one case and which one a person judged better."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$", max_length=120)
    """Unique id of the pair in its file."""
    first: BugReport
    """The report the file lists first."""
    second: BugReport
    """The report the file lists second."""
    better: Winner
    """Which report is better: ``first``, ``second`` or ``tie`` (as good as each other)."""
    note: str | None = Field(default=None, max_length=4_000)
    """Why, in the labeller's words (kept, never read by the judge)."""

    @model_validator(mode="after")
    def _same_case(self) -> Self:
        if self.first.case_id != self.second.case_id:
            raise ValueError(
                f"the two reports are about different cases "
                f"({self.first.case_id!r} and {self.second.case_id!r})"
            )
        return self


@dataclass(frozen=True, slots=True)
class LabelSet:
    """Every labelled pair of one file, in file order, with the file's content hash."""

    source: str
    """The file as given."""
    sha256: str
    """sha256 of the file's bytes."""
    pairs: tuple[LabelledPair, ...]
    """The pairs, in file order."""

    def counts(self) -> dict[str, int]:
        """Pairs per label (``first``, ``second``, ``tie``), every label present."""
        found = Counter(p.better.value for p in self.pairs)
        return {w.value: found.get(w.value, 0) for w in Winner}


def _field(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc)


def _pair(obj: Any, source: str, line: int) -> LabelledPair:
    if not isinstance(obj, dict):
        raise InputError(
            f"a labelled pair must be a JSON object, got {type(obj).__name__}",
            file=source,
            line=line,
        )
    try:
        return LabelledPair.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = str(first["msg"]).removeprefix("Value error, ")
        field = _field(first["loc"]) or None
        raise InputError(message, file=source, line=line, field=field) from exc


def parse_labels(raw: bytes, source: str) -> LabelSet:
    """The labelled pairs of a JSON Lines text; blank lines are skipped.

    Raises :class:`InputError` naming ``source:line`` at the first line that is
    not UTF-8, not JSON, not an object, misses or mistypes a field, pairs
    reports of two cases, or repeats an earlier id; and naming ``source`` when
    the file holds no pair.
    """
    pairs: list[LabelledPair] = []
    seen: dict[str, int] = {}
    for number, chunk in enumerate(raw.split(b"\n"), start=1):
        if not chunk.strip():
            continue
        try:
            obj = jsontext.loads(chunk.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(
                f"not UTF-8 ({exc.reason} at byte {exc.start})", file=source, line=number
            ) from exc
        except JsonTextError as exc:
            column = f" (column {exc.column})" if exc.column else ""
            raise InputError(
                f"invalid JSON: {exc.message}{column}", file=source, line=number
            ) from exc
        pair = _pair(obj, source, number)
        if pair.id in seen:
            raise InputError(
                f"duplicated id {pair.id!r} (first on line {seen[pair.id]})",
                file=source,
                line=number,
                field="id",
            )
        seen[pair.id] = number
        pairs.append(pair)
    if not pairs:
        raise InputError("no labelled pair in the file", file=source)
    return LabelSet(source=source, sha256=sha256_bytes(raw), pairs=tuple(pairs))


def read_labels(path: Path) -> LabelSet:
    """The labelled pairs of a JSON Lines file (see :func:`parse_labels`).

    Raises :class:`InputError` naming the file when it cannot be read.
    """
    raw = read_input(path, what="the labels file")
    return parse_labels(raw, str(path))
