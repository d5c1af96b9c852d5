"""Reading a labels file: valid pairs in file order, and every bad line as a one-line error naming file:line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from bughunt.errors import InputError
from bughunt.models import Winner
from judging.calibration import parse_labels, read_labels
from tests.judging.judges.helpers import report


def pair(pair_id: str = "p1", better: str = "first", **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": pair_id,
        "first": report("candidate").model_dump(),
        "second": report("baseline").model_dump(),
        "better": better,
    }
    return {**base, **fields}


def write(path: Path, *lines: Any) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def error_of(path: Path) -> str:
    with pytest.raises(InputError) as info:
        read_labels(path)
    return info.value.describe()


def test_pairs_are_read_in_file_order_with_the_file_hash(tmp_path: Path) -> None:
    """Valid lines become pairs in order; blank lines are skipped; the hash is the bytes' sha256."""
    path = write(tmp_path / "l.jsonl", pair("a", "first"), "", pair("b", "tie", note="same test"))
    labels = read_labels(path)
    assert [p.id for p in labels.pairs] == ["a", "b"]
    assert [p.better for p in labels.pairs] == [Winner.FIRST, Winner.TIE]
    assert labels.pairs[1].note == "same test"
    assert labels.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert labels.counts() == {"first": 1, "second": 0, "tie": 1}


def test_invalid_json_names_file_and_line(tmp_path: Path) -> None:
    """A line that is not JSON stops the read, naming file:line."""
    path = write(tmp_path / "l.jsonl", pair("a"), '{"id": "b", "first": ')
    assert error_of(path).startswith(f"{path}:2: invalid JSON: ")


def test_missing_field_names_line_and_field(tmp_path: Path) -> None:
    """A pair without its label names the line and the missing field."""
    bad = pair("b")
    del bad["better"]
    path = write(tmp_path / "l.jsonl", pair("a"), "", bad)
    assert error_of(path) == f"{path}:3, field 'better': Field required"


def test_a_label_outside_first_second_tie_is_refused(tmp_path: Path) -> None:
    """``better`` is a closed set: anything else names the field and the allowed values."""
    path = write(tmp_path / "l.jsonl", pair("a", "candidate"))
    message = error_of(path)
    assert message.startswith(f"{path}:1, field 'better': ") and "'first'" in message


def test_a_report_missing_its_test_names_the_nested_field(tmp_path: Path) -> None:
    """A report is validated as agents' reports are: the nested missing field is named."""
    second = report("baseline").model_dump()
    del second["repro_test"]
    path = write(tmp_path / "l.jsonl", pair("a", second=second))
    assert error_of(path) == f"{path}:1, field 'second.repro_test': Field required"


def test_duplicated_id_names_both_lines(tmp_path: Path) -> None:
    """A repeated id is refused at its second line, naming the first."""
    path = write(tmp_path / "l.jsonl", pair("a"), pair("b"), pair("a"))
    assert error_of(path) == f"{path}:3, field 'id': duplicated id 'a' (first on line 1)"


def test_reports_of_two_cases_are_refused(tmp_path: Path) -> None:
    """Both reports of a pair must be about the same case."""
    other = report("baseline", case_id="c2").model_dump()
    path = write(tmp_path / "l.jsonl", pair("a", second=other))
    assert error_of(path) == (
        f"{path}:1: the two reports are about different cases ('c1' and 'c2')"
    )


def test_a_line_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    """A JSON array or scalar on a line is not a pair."""
    path = write(tmp_path / "l.jsonl", [1, 2])
    assert error_of(path) == f"{path}:1: a labelled pair must be a JSON object, got list"


def test_unknown_keys_are_refused(tmp_path: Path) -> None:
    """A misspelt key is an error, not silently ignored (a typo of ``better`` must not pass)."""
    path = write(tmp_path / "l.jsonl", pair("a", beter="second"))
    assert error_of(path).startswith(f"{path}:1, field 'beter': ")


def test_non_utf8_line_names_the_line(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 name their line."""
    path = tmp_path / "l.jsonl"
    path.write_bytes(json.dumps(pair("a")).encode() + b"\n\xff\xfe\n")
    assert error_of(path).startswith(f"{path}:2: not UTF-8 ")


def test_unreadable_and_empty_files_name_the_file(tmp_path: Path) -> None:
    """A missing file, a folder and a file without pairs are one-line errors naming the file."""
    missing = tmp_path / "nope.jsonl"
    assert error_of(missing) == f"{missing}: cannot read the labels file: No such file or directory"
    assert error_of(tmp_path).startswith(f"{tmp_path}: cannot read the labels file: ")
    empty = write(tmp_path / "empty.jsonl", "", "  ")
    assert error_of(empty) == f"{empty}: no labelled pair in the file"


def test_parse_labels_names_the_given_source() -> None:
    """Errors from in-memory text carry the source name the caller gives."""
    with pytest.raises(InputError) as info:
        parse_labels(b"not json\n", "labels.jsonl")
    assert info.value.file == "labels.jsonl" and info.value.line == 1
