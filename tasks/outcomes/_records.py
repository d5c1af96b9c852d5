"""Reading outcome records from files (JSON Lines or a JSON array) into observations.

A bad line costs only itself (docs/architecture.md#bad-input): it becomes a :class:`BadLine` naming
``file:line`` and the reason, and the other lines of the file are read. What
the caller does with bad lines (keep the rest, or store nothing: ``--strict``)
is the caller's choice.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bughunt import jsontext
from bughunt.jsontext import JsonTextError
from bughunt.models import Observation, Status, utcnow
from bughunt.safeio import read_input

IDENTITY_FIELDS = ("record_id", "case_id", "run_id", "agent_version", "kind", "test_hash")
"""Fields read into their own columns (with ``status``, ``note``, ``case_hash``)."""

_STATUSES = {s.value for s in Status}


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line that could not become a record, and why."""

    source: str
    line: int
    reason: str

    def describe(self) -> str:
        return f"{self.source}:{self.line}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ReadResult:
    """The records read from one file and the lines that were refused."""

    source: str
    records: list[Observation]
    bad: list[BadLine]


def record_from_dict(
    obj: Any, *, source: str, line: int, batch_id: str, ingested_at: datetime
) -> Observation | BadLine:
    """One JSON value → an Observation, or a BadLine saying which field is wrong.

    ``id`` is an alias of ``record_id`` (both given and different is refused).
    Ids may be strings or integers (kept as text). A missing status is
    ``unknown``; a status outside pass/fail/error/timeout/unknown is refused,
    never guessed. Every other field is kept in ``annotations``.
    """

    def bad(reason: str) -> BadLine:
        return BadLine(source, line, reason)

    if not isinstance(obj, dict):
        return bad(f"a record must be a JSON object, got {type(obj).__name__}")
    data = dict(obj)
    if "id" in data:
        alias = data.pop("id")
        if "record_id" in data and data["record_id"] != alias:
            return bad(f"'id' ({alias!r}) and 'record_id' ({data['record_id']!r}) disagree")
        data["record_id"] = alias
    values: dict[str, Any] = {}
    for name in (*IDENTITY_FIELDS, "case_hash"):
        value = data.pop(name, None)
        if isinstance(value, bool) or not (value is None or isinstance(value, str | int)):
            return bad(f"field {name!r} must be a string, got {json.dumps(value)}")
        values[name] = None if value is None or value == "" else str(value)
    note = data.pop("note", None)
    # A note is annotation only; a non-string note is kept as its JSON text.
    values["note"] = note if note is None or isinstance(note, str) else json.dumps(note)
    status = data.pop("status", None)
    if status is None:
        status = Status.UNKNOWN.value
    if not isinstance(status, str) or status not in _STATUSES:
        return bad(
            f"field 'status' has unknown value {json.dumps(status)}; "
            f"expected one of {', '.join(sorted(_STATUSES))} (or no status for unknown)"
        )
    if values["record_id"] is None and values["case_id"] is None:
        return bad("record has neither 'record_id' (or 'id') nor 'case_id'")
    return Observation(
        observation_id=uuid.uuid4().hex,
        status=Status(status),
        annotations=data,
        source=source,
        source_line=line,
        batch_id=batch_id,
        ingested_at=ingested_at,
        **values,
    )


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _element(
    decoder: json.JSONDecoder, text: str, pos: int, source: str
) -> tuple[tuple[int, Any] | BadLine, int | None]:
    """The array element at ``pos`` and where it ends; ``None`` when a syntax error ends the file."""
    try:  # where the element ends
        _, end = decoder.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        return BadLine(source, exc.lineno, f"invalid JSON: {exc.msg}"), None
    except RecursionError:
        return BadLine(source, _line_of(text, pos), "invalid JSON: nested too deep to read"), None
    try:  # then the element alone, strictly: a duplicated key costs only its element
        return (_line_of(text, pos), jsontext.loads(text[pos:end])), end
    except JsonTextError as exc:
        return BadLine(source, _line_of(text, pos), f"invalid JSON: {exc.message}"), end


def _array_items(text: str, source: str) -> Iterator[tuple[int, Any] | BadLine]:
    """Elements of a JSON array with the line each starts on; a syntax error ends the file."""
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    expect_value = True
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos >= len(text):
            yield BadLine(source, _line_of(text, pos), "JSON array is not closed")
            return
        if text[pos] == "]":
            rest = text[pos + 1 :].strip()
            if rest:
                yield BadLine(source, _line_of(text, pos + 1), "text after the closing ']'")
            return
        if not expect_value:
            if text[pos] != ",":
                yield BadLine(source, _line_of(text, pos), "expected ',' or ']' in the array")
                return
            pos += 1
            expect_value = True
            continue
        item, end = _element(decoder, text, pos, source)
        yield item
        if end is None:
            return
        pos = end
        expect_value = False


def read_records(path: Path, *, batch_id: str, source: str | None = None) -> ReadResult:
    """Read one file of records: a JSON array, or JSON Lines (one object a line).

    JSON Lines: each line is decoded on its own, so a non-UTF-8 or invalid line
    is one bad line. A JSON array must be valid UTF-8 and valid JSON as a whole
    up to the first error; elements before it are kept. Blank lines are skipped.
    """
    name = source or str(path)
    raw = read_input(path, what="a records file")
    stamp = utcnow()
    records: list[Observation] = []
    bad: list[BadLine] = []

    def take(obj: Any, line: int) -> None:
        rec = record_from_dict(obj, source=name, line=line, batch_id=batch_id, ingested_at=stamp)
        (bad if isinstance(rec, BadLine) else records).append(rec)  # type: ignore[arg-type]  # union split

    if raw.lstrip()[:1] == b"[":
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            return ReadResult(name, [], [BadLine(name, line, f"not UTF-8 ({exc.reason})")])
        for item in _array_items(text, name):
            if isinstance(item, BadLine):
                bad.append(item)
            else:
                take(item[1], item[0])
        return ReadResult(name, records, bad)

    for number, chunk in enumerate(raw.split(b"\n"), start=1):
        if not chunk.strip():
            continue
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad.append(BadLine(name, number, f"not UTF-8 ({exc.reason} at byte {exc.start})"))
            continue
        try:
            obj = jsontext.loads(text)
        except JsonTextError as exc:
            column = f" (column {exc.column})" if exc.column else ""
            bad.append(BadLine(name, number, f"invalid JSON: {exc.message}{column}"))
            continue
        take(obj, number)
    return ReadResult(name, records, bad)


def new_batch_id() -> str:
    """Id of one ingest call."""
    return "batch-" + uuid.uuid4().hex[:12]
