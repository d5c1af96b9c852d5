"""Is this file a whole bughunt ledger? Checked before anything reads or writes it.

DuckDB opens some broken files without complaint: a copy cut short at a
block boundary opens, answers the catalog, and fails (or, worse, is written
over) only when a missing block is touched. And it opens any DuckDB file,
so ``--ledger`` pointed at someone else's database would be migrated into.
A file that fails these checks is refused with a :class:`LedgerFileError`
naming it; nothing is written to it.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from bughunt.errors import LedgerFileError

HEADER_BYTES = 3 * 4096
"""DuckDB's file header and its two alternating database headers, before the first block."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def unreadable(path: Path, exc: BaseException) -> LedgerFileError:
    """The error for a file DuckDB could not open or read as a database."""
    if path.is_dir():
        return LedgerFileError("is a folder, not a ledger file", file=str(path))
    return LedgerFileError(
        f"not a readable DuckDB ledger file (DuckDB said: {_first_line(exc)})", file=str(path)
    )


_NO_ROOM = ("No space left on device", "File too large", "Disk quota exceeded")


def is_unwritable(exc: BaseException) -> bool:
    """True for DuckDB errors that mean a write found no room (a full disk, a file size
    limit, a quota) or left the database closed to writes (DuckDB's fatal errors)."""
    if not isinstance(exc, duckdb.Error):
        return False
    return isinstance(exc, duckdb.FatalException) or any(s in str(exc) for s in _NO_ROOM)


def unwritable(path: Path, exc: BaseException) -> LedgerFileError:
    """The error for a write that could not be made; the transaction stored nothing."""
    text = str(exc)
    said = next((s for s in _NO_ROOM if s in text), None) or _first_line(exc)
    return LedgerFileError(
        f"could not be written ({said}); nothing of this write was stored: make room and "
        "run it again",
        file=str(path),
    )


def is_damage(exc: BaseException) -> bool:
    """True for DuckDB errors that mean the file itself is damaged (not a bad query)."""
    if isinstance(exc, duckdb.IOException):
        return True
    return isinstance(exc, duckdb.Error) and "Corrupt database file" in str(exc)


def _user_tables(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """Every user table of the open file: its name, and its quoted ``"schema"."table"`` (from
    the catalog itself, never user input)."""
    tables = con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() "
        "WHERE NOT internal AND database_name = current_database()"
    ).fetchall()
    return [
        (table, '"' + schema.replace('"', '""') + '"."' + table.replace('"', '""') + '"')
        for schema, table in tables
    ]


def _highest_block(con: duckdb.DuckDBPyConnection) -> int:
    """The highest block id any table's data or the catalog's metadata lives in (-1: none)."""
    highest = -1
    for _table, qualified in _user_tables(con):
        row = con.execute(
            "SELECT max(block_id) FROM pragma_storage_info(?) WHERE block_id >= 0", [qualified]
        ).fetchone()
        if row is not None and row[0] is not None:
            highest = max(highest, int(row[0]))
    row = con.execute("SELECT max(block_id) FROM pragma_metadata_info()").fetchone()
    if row is not None and row[0] is not None:
        highest = max(highest, int(row[0]))
    return highest


def check_whole(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Refuse a file cut short: not whole blocks, or fewer blocks than it uses (a truncated copy).

    DuckDB writes whole blocks after its header, and trims free blocks off the
    end, so a whole file holds a whole number of blocks, at least as many as
    it counts in use, and every block a table or the catalog lives in.
    Skipped while a write-ahead log is beside the file: DuckDB replays it on
    open, and what it counts may not be on disk yet.
    """
    if Path(f"{path}.wal").exists():
        return
    row = con.execute("SELECT block_size, used_blocks FROM pragma_database_size()").fetchone()
    if row is None:
        return
    block_size, used = int(row[0]), int(row[1])
    size = os.path.getsize(path)
    blocks, rest = divmod(size - HEADER_BYTES, block_size)
    needed = max(used, _highest_block(con) + 1)
    if rest or blocks < needed:
        raise LedgerFileError(
            f"truncated: it has {size} bytes, not the {needed} whole blocks of "
            f"{block_size} bytes after its header that it uses; restore it from a copy "
            "(nothing was written to it)",
            file=str(path),
        )


def check_blocks(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Refuse a file with a damaged block: read every value of every table once.

    DuckDB checks a block's checksum only when it reads the block, and a
    write touches only the blocks it needs, so a file with a damaged block is
    otherwise written to (the damage stays, and grows with what relies on it).
    Reading every column of every table (a hash of each value, nothing kept)
    checks every data block; the catalog's were read on opening. Costs one
    pass over the file (tens of milliseconds for megabytes); made before the
    first write of a process to a file it has not checked (see ``ledger._store``).
    """
    for table, qualified in _user_tables(con):
        try:
            con.execute(f"SELECT bit_xor(hash(COLUMNS(*))) FROM {qualified}").fetchall()  # noqa: S608
        except duckdb.Error as exc:
            if not is_damage(exc):
                raise
            raise LedgerFileError(
                f"a damaged block in table {table} (DuckDB said: {_first_line(exc)}); "
                "restore it from a copy (nothing was written to it)",
                file=str(path),
            ) from exc


def check_is_ledger(con: duckdb.DuckDBPyConnection, path: Path, version: int) -> None:
    """Refuse a DuckDB file that holds tables but no bughunt schema (``version`` 0)."""
    if version > 0:
        return
    row = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE NOT internal AND database_name = current_database()"
    ).fetchone()
    if row is not None and int(row[0]) > 0:
        raise LedgerFileError(
            "a DuckDB database but not a bughunt ledger (it has tables and no "
            "schema_migrations); point --ledger at a ledger file or a new path",
            file=str(path),
        )
