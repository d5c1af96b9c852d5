"""Reading outcome records: JSON Lines, JSON arrays, and bad lines that cost only themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from bughunt.models import Status
from tasks.outcomes import read_records


def read(tmp_path: Path, content: bytes, name: str = "r.jsonl") -> object:
    path = tmp_path / name
    path.write_bytes(content)
    return read_records(path, batch_id="b1")


def test_jsonl_records_keep_provenance_and_extra_fields(tmp_path: Path) -> None:
    """Each line becomes a record with file, line, batch; unknown fields become annotations."""
    res = read(
        tmp_path,
        b'{"id": "A", "case_id": "c", "status": "pass", "log": "ok"}\n\n{"case_id": "d"}\n',
    )
    a, d = res.records  # type: ignore[attr-defined]
    assert (a.record_id, a.source_line, a.batch_id, a.annotations) == ("A", 1, "b1", {"log": "ok"})
    assert a.source.endswith("r.jsonl")
    assert (d.source_line, d.status) == (3, Status.UNKNOWN)


@pytest.mark.parametrize(
    "line,reason",
    [
        (b"{not json", "invalid JSON"),
        (b'{"id": "A", "status": "\xff\xfe"}', "not UTF-8"),
        (b'{"id": "A", "status": "passed"}', "field 'status' has unknown value \"passed\""),
        (b'{"id": "A", "status": 1}', "field 'status'"),
        (b'{"status": "pass", "note": "orphan"}', "neither 'record_id' (or 'id') nor 'case_id'"),
        (b'["a", "list"]', "must be a JSON object"),
        (b'{"id": {"nested": 1}}', "field 'record_id' must be a string"),
        (b'{"id": "A", "record_id": "B"}', "disagree"),
    ],
)
def test_bad_line_is_named_and_others_kept(tmp_path: Path, line: bytes, reason: str) -> None:
    """A bad line is reported as file:line with its reason; the lines around it are read."""
    res = read(
        tmp_path,
        b'{"case_id": "before", "status": "pass"}\n'
        + line
        + b'\n{"case_id": "after", "status": "fail"}\n',
    )
    assert [r.case_id for r in res.records] == ["before", "after"]  # type: ignore[attr-defined]
    (bad,) = res.bad  # type: ignore[attr-defined]
    assert bad.line == 2 and reason in bad.reason
    assert bad.describe().startswith(f"{tmp_path / 'r.jsonl'}:2: ")


def test_json_array_lines_point_at_each_element(tmp_path: Path) -> None:
    """Elements of a JSON array carry the line they start on."""
    res = read(
        tmp_path,
        b'[\n  {"id": "A", "status": "pass"},\n\n  {"id": "B",\n   "status": "fail"}\n]\n',
        "r.json",
    )
    assert [(r.record_id, r.source_line) for r in res.records] == [("A", 2), ("B", 4)]  # type: ignore[attr-defined]


def test_json_array_syntax_error_keeps_elements_before_it(tmp_path: Path) -> None:
    """A broken array keeps the elements before the error and names the error's line."""
    res = read(tmp_path, b'[{"id": "A", "status": "pass"},\n {"id": "B", "status": ]\n', "r.json")
    assert [r.record_id for r in res.records] == ["A"]  # type: ignore[attr-defined]
    assert res.bad[0].line == 2 and "invalid JSON" in res.bad[0].reason  # type: ignore[attr-defined]


def test_json_array_element_with_unknown_status_is_one_bad_line(tmp_path: Path) -> None:
    """In an array a record-level error costs only that element."""
    res = read(
        tmp_path, b'[{"id": "A", "status": "maybe"},\n {"id": "B", "status": "pass"}]', "r.json"
    )
    assert [r.record_id for r in res.records] == ["B"]  # type: ignore[attr-defined]
    assert res.bad[0].line == 1  # type: ignore[attr-defined]


def test_non_utf8_array_names_the_line(tmp_path: Path) -> None:
    """A JSON array that is not UTF-8 is refused with the line of the first bad byte."""
    res = read(tmp_path, b'[{"id": "A"},\n{"id": "\xc3\x28"}]', "r.json")
    assert res.records == [] and res.bad[0].line == 2 and "not UTF-8" in res.bad[0].reason  # type: ignore[attr-defined]


def test_integer_ids_are_kept_as_text(tmp_path: Path) -> None:
    """Integer ids are accepted and stored as text; booleans are not ids."""
    res = read(tmp_path, b'{"id": 7, "status": "pass"}\n{"id": true}\n')
    assert res.records[0].record_id == "7"  # type: ignore[attr-defined]
    assert "must be a string" in res.bad[0].reason  # type: ignore[attr-defined]
