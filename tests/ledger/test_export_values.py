"""``bughunt export`` writes correct files: valid JSON, exact numbers, nested cells in CSV,
column names that say one thing each."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bughunt.models import RunInfo, RunKind, RunStatus
from cli import app
from ledger import Ledger

runner = CliRunner()

VALUES = (
    "SELECT 'nan'::DOUBLE AS n, 'inf'::DOUBLE AS i, '-inf'::DOUBLE AS ni, "
    "170141183460469231731687303715884105727::HUGEINT AS h, 1234567890.123456789::DECIMAL(38,9) AS d, "
    "[1.5, 'nan'::DOUBLE] AS l, {'a': 1, 'b': ['x']} AS s, MAP {'k': 2} AS m, INTERVAL 3 DAY AS iv, "
    "'\\xAA'::BLOB AS b, 7 AS x"
)


def _export(ledger: Ledger, out: Path, query: str) -> Any:
    return runner.invoke(
        app, ["export", "--query", query, "--out", str(out), "--ledger", str(ledger.path)]
    )


def test_json_lines_are_valid_json_with_exact_numbers(ledger: Ledger, tmp_path: Path) -> None:
    """NaN and infinities become null (strict JSON parses it); HUGEINT and DECIMAL are exact numbers."""
    out = tmp_path / "v.jsonl"
    result = _export(ledger, out, VALUES)
    assert result.exit_code == 0, result.output

    def strict(token: str) -> None:
        raise ValueError(f"not JSON: {token}")

    (row,) = [json.loads(line, parse_constant=strict, parse_float=Decimal) for line in out.open()]
    assert row["n"] is None and row["i"] is None and row["ni"] is None
    assert row["h"] == 170141183460469231731687303715884105727
    assert row["d"] == Decimal("1234567890.123456789")
    assert row["l"] == [Decimal("1.5"), None]
    assert row["s"] == {"a": 1, "b": ["x"]}
    assert row["iv"] == {"months": 0, "days": 3, "nanoseconds": 0}
    assert row["b"] == "aa" and row["x"] == 7


def test_csv_holds_nested_columns_as_json_text(ledger: Ledger, tmp_path: Path) -> None:
    """Lists, structs, maps and intervals are cells of JSON text; bytes are hex; numbers stay numbers."""
    out = tmp_path / "v.csv"
    result = _export(ledger, out, VALUES)
    assert result.exit_code == 0, result.output
    (row,) = list(csv.DictReader(out.open()))
    assert json.loads(row["s"]) == {"a": 1, "b": ["x"]}
    assert json.loads(row["l"]) == [1.5, None]
    assert json.loads(row["m"]) == [["k", 2]]
    assert row["b"] == "aa" and row["h"] == "170141183460469231731687303715884105727"


@pytest.mark.parametrize("view", ["conflicts", "unscored"])
def test_csv_of_the_documented_views(ledger: Ledger, tmp_path: Path, view: str) -> None:
    """The views docs/ledger.md documents (list columns) export to CSV, one line of header."""
    records = tmp_path / "r.jsonl"
    records.write_text(
        '{"id": "A", "status": "pass"}\n{"id": "A", "status": "fail"}\n'
        '{"case_id": "u", "status": "timeout"}\n'
    )
    assert runner.invoke(app, ["ingest", str(records), "--ledger", str(ledger.path)]).exit_code == 0
    out = tmp_path / f"{view}.csv"
    result = runner.invoke(
        app, ["export", "--table", view, "--out", str(out), "--ledger", str(ledger.path)]
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 1
    assert isinstance(json.loads(rows[0]["sources"]), list)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_duplicate_column_names_are_refused(ledger: Ledger, tmp_path: Path, suffix: str) -> None:
    """Two columns of one name are refused in one line naming it; no file is written."""
    ledger.write([RunInfo(run_id="r1", kind=RunKind.ADHOC, status=RunStatus.COMPLETED)])
    out = tmp_path / f"d{suffix}"
    result = _export(ledger, out, "SELECT run_id AS a, status AS a FROM runs")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "'a'" in result.stderr
    assert not out.exists()
