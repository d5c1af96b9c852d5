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
