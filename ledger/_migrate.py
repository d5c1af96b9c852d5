"""Numbered schema migrations, recorded in the ledger file (docs/ledger.md).

Each migration is ``migrations/NNNN_name.sql``, applied once, in one
transaction together with its row in ``schema_migrations``. A file recorded
at a version this code does not know is refused before anything is written.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources

import duckdb

from bughunt.errors import LedgerSchemaError
from bughunt.hashing import sha256_bytes

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return sha256_bytes(self.sql.encode())


def known_migrations() -> list[Migration]:
    """Every migration shipped with this code, in version order."""
    return list(_shipped())


@functools.cache
def _shipped() -> tuple[Migration, ...]:
    # Read once per process: every ledger open asks for the latest version.
    folder = resources.files("ledger").joinpath("migrations")
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise LedgerSchemaError(f"migrations are not numbered 1..N without gaps: {versions}")
    return tuple(found)


def current_version(con: duckdb.DuckDBPyConnection) -> int:
    """Highest migration recorded in the file; 0 for a new file."""
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
    ).fetchall()
    if exists[0][0] == 0:
        return 0
    row = con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchall()
    return int(row[0][0])


def check_version(con: duckdb.DuckDBPyConnection, path: str) -> int:
    """Refuse a file written by a newer schema; return its version."""
    version = current_version(con)
    latest = len(known_migrations())
    if version > latest:
        raise LedgerSchemaError(
            f"ledger schema is version {version} but this bughunt knows only up to "
            f"{latest}; upgrade bughunt (the file was not changed)",
            file=path,
        )
    return version


def migrate(con: duckdb.DuckDBPyConnection, path: str) -> list[int]:
    """Apply every missing migration, each in its own transaction; return those applied."""
    version = check_version(con, path)
    if version == 0:
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
            "checksum VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT now())"
        )
    applied: list[int] = []
    for m in known_migrations():
        if m.version <= version:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(m.sql)
            con.execute(  # applied_at in UTC, as every ledger time (now() is local time)
                "INSERT INTO schema_migrations (version, name, checksum, applied_at) "
                "VALUES (?, ?, ?, ?)",
                [m.version, m.name, m.checksum, datetime.now(UTC).replace(tzinfo=None)],
            )
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(m.version)
    return applied
