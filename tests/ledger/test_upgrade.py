"""Upgrades keep history: the previous release's ledger, migrated by this code, loses nothing.

The fixture ``fixtures/release-0009`` is a ledger written by the release whose
newest migration is 0009 (``fixtures/make_release_fixture.py`` says how it was
made and how to make it again), exported with ``EXPORT DATABASE``. Each test
imports it into a new file and upgrades it through every migration this code has
past 0009, whichever they are.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import duckdb
import pytest

from bughunt.models import ROW_MODELS, Row
from ledger import Ledger, current_version, known_migrations
from ledger._migrate import Migration

FIXTURE = Path(__file__).parent / "fixtures" / "release-0009"
RELEASE_VERSION = 9

# Tables a migration rewrites on purpose, each with the query (over the upgraded
# ledger, ``{after}``) that gives its old rows back in the old columns. None so far:
# 0010 adds a table and 0011 adds and replaces views; no migration moves rows.
ACCOUNTED_FOR: dict[str, str] = {}

# Columns of a release view whose answers a later migration changed on purpose.
CHANGED_ANSWERS: dict[str, set[str]] = {
    # 0011: `change` and `shifted` compare with the previous run of the same kind.
    "judge_bias_history": {"change", "shifted"},
    # 0012: the test hash joins a record's identity (records without an id) and its
    # outcome key (every record).
    "observation_identities": {"identity", "outcome_key"},
}


def import_release(path: Path) -> None:
    """A new DuckDB file at ``path`` holding the fixture (``IMPORT DATABASE``)."""
    con = duckdb.connect(str(path))
    try:
        con.execute(f"IMPORT DATABASE '{FIXTURE}'")
    finally:
        con.close()


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release's ledger, as it was (never written by the tests)."""
    path = tmp_path_factory.mktemp("release") / "ledger.duckdb"
    import_release(path)
    return path


@pytest.fixture(scope="module")
def upgraded(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release's ledger after ``Ledger.migrate()`` (never written by the tests)."""
    path = tmp_path_factory.mktemp("upgraded") / "ledger.duckdb"
    shutil.copy(release, path)
    Ledger(path).migrate()
    return path


@pytest.fixture
def both(release: Path, upgraded: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection with the release's ledger as ``before`` and the upgraded one as ``after``."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{release}' AS before (READ_ONLY)")
    con.execute(f"ATTACH '{upgraded}' AS after (READ_ONLY)")
    yield con
    con.close()


def _names(con: duckdb.DuckDBPyConnection, kind: str, db: str) -> list[str]:
    """Tables or views (``kind``) of database ``db``, by name."""
    sql = f"SELECT {kind}_name FROM duckdb_{kind}s() WHERE database_name = ? AND NOT internal"
    return sorted(r[0] for r in con.execute(sql, [db]).fetchall())


def _columns(con: duckdb.DuckDBPyConnection, db: str, name: str) -> list[str]:
    sql = (
        "SELECT column_name FROM duckdb_columns() WHERE database_name = ? AND table_name = ? "
        "ORDER BY column_index"
    )
    return [r[0] for r in con.execute(sql, [db, name]).fetchall()]


def _count(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    return int(con.execute(f"SELECT count(*) FROM ({sql})").fetchall()[0][0])


def _select(columns: list[str], db: str, name: str) -> str:
    quoted = ", ".join(f'"{c}"' for c in columns)
    return f'SELECT {quoted} FROM {db}."{name}"'


def lost_history(
    con: duckdb.DuckDBPyConnection, gained: Mapping[str, int] | None = None
) -> dict[str, str]:
    """Every table of ``before`` whose rows ``after`` no longer holds, with what went wrong.

    A row is kept when ``after`` has it with the same values in ``before``'s
    columns (or the :data:`ACCOUNTED_FOR` query gives it back); rows a migration
    may add are ``gained`` (table → rows). Empty when nothing was lost.
    """
    problems: dict[str, str] = {}
    tables_after = set(_names(con, "table", "after"))
    for table in _names(con, "table", "before"):
        old_columns = _columns(con, "before", table)
        if table not in tables_after and table not in ACCOUNTED_FOR:
            problems[table] = "the table is gone"
            continue
        gone = sorted(set(old_columns) - set(_columns(con, "after", table)))
        if gone and table not in ACCOUNTED_FOR:
            problems[table] = f"columns gone: {', '.join(gone)}"
            continue
        now = ACCOUNTED_FOR.get(table, _select(old_columns, "after", table)).format(after="after")
        was = _select(old_columns, "before", table)
        lost = _count(con, f"{was} EXCEPT ALL {now}")
        before, after = _count(con, was), _count(con, now)
        added = after - before - (gained or {}).get(table, 0)
        if lost or added:
            problems[table] = f"{lost} of {before} rows lost or changed; {added:+} rows unexplained"
    return problems


def test_fixture_is_the_release_schema(release: Path) -> None:
    """The imported fixture records migrations 1 to 9 and nothing later."""
    con = duckdb.connect(str(release), read_only=True)
    try:
        assert current_version(con) == RELEASE_VERSION
        versions = con.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall()
    finally:
        con.close()
    assert [v for (v,) in versions] == list(range(1, RELEASE_VERSION + 1))


def test_released_migrations_are_unchanged(release: Path) -> None:
    """Migrations 1 to 9 are byte for byte what the release recorded (their checksums)."""
    con = duckdb.connect(str(release), read_only=True)
    try:
        recorded = con.execute("SELECT version, name, checksum FROM schema_migrations").fetchall()
    finally:
        con.close()
    ours = [(m.version, m.name, m.checksum) for m in known_migrations()[:RELEASE_VERSION]]
    assert sorted(recorded) == ours


def test_upgrade_applies_every_newer_migration(upgraded: Path) -> None:
    """The upgraded ledger records every migration this code knows, in order, with its checksum."""
    con = duckdb.connect(str(upgraded), read_only=True)
    try:
        rows = con.execute("SELECT version, name, checksum FROM schema_migrations ORDER BY 1")
        recorded = rows.fetchall()
    finally:
        con.close()
    assert recorded == [(m.version, m.name, m.checksum) for m in known_migrations()]
    assert len(recorded) > RELEASE_VERSION, "no migration newer than the fixture to test"


def test_upgrade_keeps_every_row(both: duckdb.DuckDBPyConnection) -> None:
    """Every row of every release table is still there, unchanged; only new migrations are added."""
    newer = len(known_migrations()) - RELEASE_VERSION
    assert lost_history(both, gained={"schema_migrations": newer}) == {}
    assert _count(both, "FROM before.observations") > 500  # the fixture is no toy


def test_every_view_answers(upgraded: Path) -> None:
    """Every view of the upgraded ledger answers a query, read through ``Ledger``."""
    store = Ledger(upgraded)
    views = store.query(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal AND database_name = "
        "current_database()"
    )
    failures: dict[str, str] = {}
    for (name,) in (tuple(v.values()) for v in views):
        try:
            store.query(f'SELECT * FROM "{name}" LIMIT 5')
        except Exception as exc:
            failures[name] = str(exc)
    assert views
    assert failures == {}


@pytest.mark.parametrize("model", ROW_MODELS, ids=lambda m: m.__name__)
def test_release_rows_read_as_this_code_s_models(upgraded: Path, model: type[Row]) -> None:
    """Every row of the upgraded ledger validates as this code's row model of its table."""
    store = Ledger(upgraded)
    count = store.query(f'SELECT count(*) AS n FROM "{model.__table__}"')[0]["n"]
    assert len(store.read(model)) == count


# Each history or outcome view of the upgraded ledger, and what the release's
# tables say it must hold.
HISTORY = {
    "runs_latest": (
        "SELECT run_id, status FROM after.runs_latest",
        "SELECT run_id, arg_max(status, recorded_at) FROM before.runs GROUP BY run_id",
    ),
    "win_rate_history": (
        "SELECT run_id, pairs FROM after.win_rate_history",
        "SELECT run_id, count(*) FROM before.verdicts GROUP BY run_id",
    ),
    "repro_history": (
        "SELECT run_id, agent_version, cases FROM after.repro_history",
        "SELECT run_id, agent_version, count(*) FROM before.reproductions GROUP BY ALL",
    ),
    "judge_bias_history": (
        "SELECT DISTINCT run_id, judge, probe, metric, strategy FROM after.judge_bias_history",
        "SELECT DISTINCT run_id, judge, probe, metric, strategy FROM before.bias_probes",
    ),
    "flake_history": (
        "SELECT run_id, count(*) FROM after.flake_history GROUP BY run_id",
        "SELECT run_id, count(*) FROM before.flake_ledger GROUP BY run_id",
    ),
    "conflicts": (
        "SELECT identity FROM after.conflicts",
        "SELECT DISTINCT 'record_id=' || to_json(record_id) FROM before.observations "
        "WHERE record_id IS NOT NULL GROUP BY record_id HAVING count(DISTINCT status) > 1",
    ),
    "unscored": (
        "SELECT case_id FROM after.unscored",
        "SELECT coalesce(case_id, record_id) FROM before.observations GROUP BY ALL "
        "HAVING NOT bool_or(status IN ('pass', 'fail'))",
    ),
}


@pytest.mark.parametrize("view", sorted(HISTORY))
def test_history_view_returns_the_release_runs(both: duckdb.DuckDBPyConnection, view: str) -> None:
    """A history or outcome view of the upgraded ledger holds every run (or record) of the release."""
    got_sql, want_sql = HISTORY[view]
    got, want = both.execute(got_sql).fetchall(), both.execute(want_sql).fetchall()
    assert want, f"the fixture gives {view} nothing to show"
    assert sorted(got) == sorted(want)


def test_release_views_answer_as_before(both: duckdb.DuckDBPyConnection) -> None:
    """Each view the release had gives the same answers after the upgrade (bar deliberate changes)."""
    differ: dict[str, int | str] = {}
    views_after = set(_names(both, "view", "after"))
    for view in _names(both, "view", "before"):
        if view not in views_after:
            differ[view] = "gone"
            continue
        kept = set(_columns(both, "after", view)) - CHANGED_ANSWERS.get(view, set())
        columns = [c for c in _columns(both, "before", view) if c in kept]
        was, now = _select(columns, "before", view), _select(columns, "after", view)
        missing = _count(both, f"{was} EXCEPT ALL {now}") + _count(both, f"{now} EXCEPT ALL {was}")
        if missing:
            differ[view] = missing
    assert differ == {}


def _state(path: Path) -> dict[str, Any]:
    """Everything a migration could change: schema, views, macros, every table's rows."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        state: dict[str, Any] = {
            "columns": con.execute(
                "SELECT table_name, column_name, data_type, column_default "
                "FROM duckdb_columns() WHERE NOT internal ORDER BY ALL"
            ).fetchall(),
            "views": con.execute(
                "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY ALL"
            ).fetchall(),
            "macros": con.execute(
                "SELECT function_name, macro_definition FROM duckdb_functions() "
                "WHERE function_type = 'macro' AND NOT internal ORDER BY ALL"
            ).fetchall(),
        }
        for (table,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT internal"
        ).fetchall():
            state[table] = con.execute(
                f'SELECT count(*), md5(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY ALL)) FROM "{table}" t'
            ).fetchall()
        return state
    finally:
        con.close()


def test_second_migrate_changes_nothing(upgraded: Path, tmp_path: Path) -> None:
    """Migrating the upgraded ledger again applies nothing and changes nothing."""
    path = tmp_path / "ledger.duckdb"
    shutil.copy(upgraded, path)
    before = _state(path)
    Ledger(path).migrate()
    assert _state(path) == before


@pytest.mark.parametrize(
    ("damage", "table"),
    [
        ("DELETE FROM observations WHERE status = 'unknown'", "observations"),
        ("UPDATE judge_calls SET status = 'judged' WHERE status = 'aborted'", "judge_calls"),
        ("INSERT INTO runs SELECT * FROM runs LIMIT 1", "runs"),
        ("ALTER TABLE verdicts DROP COLUMN reason", "verdicts"),
        ("DROP VIEW win_rate_history; DROP TABLE verdicts", "verdicts"),
        ("DELETE FROM schema_migrations WHERE version = 1", "schema_migrations"),
    ],
)
def test_a_migration_that_loses_history_is_caught(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str, table: str
) -> None:
    """Upgrading through a migration that drops, changes or adds rows is reported, by table."""
    throwaway = Migration(len(known_migrations()) + 1, "throwaway", damage)
    shipped = known_migrations()
    monkeypatch.setattr("ledger._migrate.known_migrations", lambda: [*shipped, throwaway])
    path = tmp_path / "ledger.duckdb"
    shutil.copy(release, path)
    Ledger(path).migrate()
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{release}' AS before (READ_ONLY)")
        con.execute(f"ATTACH '{path}' AS after (READ_ONLY)")
        newer = throwaway.version - RELEASE_VERSION
        problems = lost_history(con, gained={"schema_migrations": newer})
    finally:
        con.close()
    assert list(problems) == [table]
