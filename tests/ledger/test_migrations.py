"""Numbered migrations: recorded, idempotent, and version-checked."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pytest

from bughunt.errors import LedgerSchemaError
from ledger import Ledger, current_version, known_migrations
from ledger._migrate import migrate


def _tables(path: Path) -> list[tuple[str, str]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(
            "SELECT table_name, column_name FROM information_schema.columns ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()


def test_new_file_gets_every_migration_recorded(ledger_path: Path) -> None:
    """A new ledger records each known migration once, with its checksum."""
    Ledger(ledger_path).migrate()
    con = duckdb.connect(str(ledger_path), read_only=True)
    rows = con.execute(
        "SELECT version, name, checksum FROM schema_migrations ORDER BY 1"
    ).fetchall()
    con.close()
    assert [(m.version, m.name, m.checksum) for m in known_migrations()] == rows


def test_migrate_twice_changes_nothing(ledger_path: Path) -> None:
    """Migrating an up-to-date file applies nothing and leaves the schema as it was."""
    store = Ledger(ledger_path)
    store.migrate()
    before = _tables(ledger_path)
    con = duckdb.connect(str(ledger_path))
    assert migrate(con, str(ledger_path)) == []
    con.close()
    store.migrate()
    assert _tables(ledger_path) == before


def test_every_row_table_exists(ledger: Ledger) -> None:
    """The seven append-only tables of the ledger (docs/ledger.md) exist after migration."""
    names = {
        r["table_name"] for r in ledger.query("SELECT table_name FROM information_schema.tables")
    }
    assert {
        "runs",
        "corpus_manifest",
        "observations",
        "judge_calls",
        "verdicts",
        "bias_probes",
        "flake_ledger",
    } <= names


def test_newer_schema_is_refused_and_file_untouched(ledger_path: Path) -> None:
    """A file recorded at a version this code does not know is refused; its bytes do not change."""
    Ledger(ledger_path).migrate()
    con = duckdb.connect(str(ledger_path))
    future = len(known_migrations()) + 1
    con.execute(
        "INSERT INTO schema_migrations (version, name, checksum) VALUES (?, 'future', 'x')",
        [future],
    )
    con.execute("CHECKPOINT")
    con.close()
    digest = hashlib.sha256(ledger_path.read_bytes()).hexdigest()
    for action in (Ledger(ledger_path).migrate, lambda: Ledger(ledger_path).query("SELECT 1")):
        with pytest.raises(LedgerSchemaError, match=f"version {future}"):
            action()
    assert hashlib.sha256(ledger_path.read_bytes()).hexdigest() == digest


def test_version_of_new_file_is_zero(tmp_path: Path) -> None:
    """An empty DuckDB file reads as schema version 0."""
    con = duckdb.connect(str(tmp_path / "empty.duckdb"))
    assert current_version(con) == 0
    con.close()


def test_reader_on_missing_file_names_the_file(tmp_path: Path) -> None:
    """Querying a ledger that does not exist says which file and how to create it."""
    missing = tmp_path / "nope.duckdb"
    with pytest.raises(Exception, match="no ledger here yet") as info:
        Ledger(missing).query("SELECT 1")
    assert str(missing) in str(info.value)
    assert not missing.exists()
