"""``bughunt sql``, ``schema`` and ``migrate`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bughunt.models import MODELS, RunInfo, RunKind, RunStatus
from cli import app
from ledger import Ledger, known_migrations

runner = CliRunner()


def test_sql_prints_json_rows(ledger: Ledger) -> None:
    """A SELECT prints its rows as JSON with --json."""
    ledger.write([RunInfo(run_id="r1", kind=RunKind.ADHOC, status=RunStatus.COMPLETED)])
    result = runner.invoke(
        app, ["sql", "SELECT run_id, status FROM runs", "--json", "--ledger", str(ledger.path)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"run_id": "r1", "status": "completed"}]


def test_sql_reads_ledger_from_environment(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    """BUGHUNT_LEDGER picks the file when --ledger is not given."""
    monkeypatch.setenv("BUGHUNT_LEDGER", str(ledger.path))
    result = runner.invoke(app, ["sql", "SELECT count(*) AS n FROM runs", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"n": 0}]


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM runs",
        "DROP TABLE runs",
        "INSERT INTO runs (run_id) VALUES ('x')",
        "UPDATE runs SET status = 'x'",
        "CREATE TABLE t (a INT)",
        "COPY runs TO '/tmp/bughunt-leak.csv'",
        "ATTACH '/tmp/bughunt-other.duckdb'",
        "SELECT 1; DROP TABLE runs",
        "SELECT * FROM read_text('/etc/hostname')",
    ],
)
def test_sql_refuses_anything_that_writes(ledger: Ledger, statement: str) -> None:
    """Write statements, several statements and file access are refused; the ledger is unchanged."""
    ledger.write([RunInfo(run_id="r1", kind=RunKind.ADHOC, status=RunStatus.COMPLETED)])
    result = runner.invoke(app, ["sql", statement, "--ledger", str(ledger.path)])
    assert result.exit_code == 2
    assert "error:" in result.stderr
    assert ledger.query("SELECT count(*) AS n FROM runs") == [{"n": 1}]
    assert not Path("/tmp/bughunt-leak.csv").exists()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_schema_prints_each_model(name: str) -> None:
    """`bughunt schema MODEL` prints a JSON schema with a description for every field."""
    result = runner.invoke(app, ["schema", name])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    assert schema["title"] == name
    for field, prop in schema["properties"].items():
        assert prop.get("description"), f"{name}.{field} has no docstring"


def test_schema_unknown_model_lists_choices() -> None:
    """An unknown model name is an error that lists the valid names."""
    result = runner.invoke(app, ["schema", "Nope"])
    assert result.exit_code == 2
    assert "Observation" in result.stderr


def test_migrate_reports_version(ledger_path: Path) -> None:
    """`bughunt migrate` creates the file and says its schema version."""
    result = runner.invoke(app, ["migrate", "--ledger", str(ledger_path)])
    assert result.exit_code == 0, result.output
    assert f"schema version {len(known_migrations())}" in result.stdout
    assert ledger_path.exists()


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_export_writes_a_table_in_the_format_its_name_says(
    ledger: Ledger, tmp_path: Path, suffix: str
) -> None:
    """`export --table runs` writes every row; read back, the file holds the same run ids."""
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pa_parquet

    ledger.write(
        [RunInfo(run_id=f"r{i}", kind=RunKind.ADHOC, status=RunStatus.COMPLETED) for i in range(3)]
    )
    out = tmp_path / f"runs{suffix}"
    result = runner.invoke(
        app, ["export", "--table", "runs", "--out", str(out), "--ledger", str(ledger.path)]
    )
    assert result.exit_code == 0, result.output
    assert "wrote 3 row(s)" in result.output
    if suffix == ".csv":
        ids = pa_csv.read_csv(out).column("run_id").to_pylist()
    elif suffix == ".parquet":
        ids = pa_parquet.read_table(out).column("run_id").to_pylist()
    else:
        ids = [json.loads(line)["run_id"] for line in out.read_text().splitlines()]
    assert sorted(ids) == ["r0", "r1", "r2"]
    assert out.stat().st_mode & 0o777 == 0o644


def test_export_a_query_as_json_lines(ledger: Ledger, tmp_path: Path) -> None:
    """`--query` exports what a read-only SELECT returns; times are ISO text in JSON."""
    ledger.write([RunInfo(run_id="r1", kind=RunKind.ADHOC, status=RunStatus.COMPLETED)])
    out = tmp_path / "x.data"
    result = runner.invoke(
        app,
        [
            "export",
            "--query",
            "SELECT run_id, recorded_at FROM runs",
            "--format",
            "jsonl",
            "--out",
            str(out),
            "--ledger",
            str(ledger.path),
        ],
    )
    assert result.exit_code == 0, result.output
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["run_id"] == "r1" and "T" in row["recorded_at"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--table", "runs", "--query", "SELECT 1"], "exactly one of --table and --query"),
        ([], "exactly one of --table and --query"),
        (["--table", "no_such"], "no table or view 'no_such'"),
        (["--query", "DELETE FROM runs"], "only read-only statements"),
        (["--query", "SELECT * FROM read_csv('/etc/passwd')"], "disabled by configuration"),
        (["--query", "COPY runs TO 'x.csv'"], "only read-only statements"),
    ],
)
def test_export_refuses_what_could_write_or_reach_outside(
    ledger: Ledger, tmp_path: Path, args: list[str], says: str
) -> None:
    """Two sources or none, an unknown table, a writing statement, a file the query would read:
    exit 2, one line, and no file written."""
    out = tmp_path / "out.csv"
    result = runner.invoke(app, ["export", *args, "--out", str(out), "--ledger", str(ledger.path)])
    assert result.exit_code == 2, result.output
    assert says in result.output
    assert not out.exists() and list(tmp_path.glob(".out.csv.*")) == []


def test_export_names_a_file_whose_format_it_cannot_tell(ledger: Ledger, tmp_path: Path) -> None:
    """An unknown suffix without --format is bad input naming the file."""
    out = tmp_path / "out.txt"
    result = runner.invoke(
        app, ["export", "--table", "runs", "--out", str(out), "--ledger", str(ledger.path)]
    )
    assert result.exit_code == 2 and "say --format" in result.output and str(out) in result.output
