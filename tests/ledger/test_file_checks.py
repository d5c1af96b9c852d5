"""A ledger path that is not a whole bughunt ledger is refused, named, and left as it was."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from bughunt.errors import LedgerFileError
from bughunt.models import Observation, Status
from ledger import Ledger
from ledger._file import HEADER_BYTES


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _row() -> Observation:
    return Observation(observation_id="o1", case_id="c1", status=Status.PASS)


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated ledger with a row, checkpointed into its file (no write-ahead log)."""
    path = tmp_path_factory.mktemp("good") / "ledger.duckdb"
    store = Ledger(path)
    store.write([_row()])
    assert not Path(f"{path}.wal").exists()
    return path


def _truncated_at_block(good: Path, dest: Path) -> None:
    shutil.copy(good, dest)
    os.truncate(dest, HEADER_BYTES + 262_144)  # the header and its first block: opens, answers


def _truncated_mid_block(good: Path, dest: Path) -> None:
    shutil.copy(good, dest)
    os.truncate(dest, good.stat().st_size - 1000)


def _last_block_cut(good: Path, dest: Path) -> None:
    """A ledger of several blocks, some free, cut at a block boundary before its last one."""
    shutil.copy(good, dest)
    rows = [
        Observation(
            observation_id=f"o{i}", case_id=f"c{i}", status=Status.FAIL, output=f"{i}" * 200
        )
        for i in range(20_000)
    ]
    Ledger(dest).write(rows)
    Ledger(dest).write(rows[:10])
    os.truncate(dest, dest.stat().st_size - 262_144)


def _flipped(good: Path, dest: Path) -> None:
    shutil.copy(good, dest)
    with dest.open("r+b") as handle:
        handle.seek(HEADER_BYTES + 5000)
        handle.write(b"\xff" * 2000)


def _text(_good: Path, dest: Path) -> None:
    dest.write_text("hello, not a database\n")


def _foreign(_good: Path, dest: Path) -> None:
    con = duckdb.connect(str(dest))
    con.execute("CREATE TABLE payroll (who VARCHAR, amount INTEGER)")
    con.execute("INSERT INTO payroll VALUES ('a', 1)")
    con.close()


BROKEN: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "truncated at a block boundary": (_truncated_at_block, "truncated"),
    "truncated mid-block": (_truncated_mid_block, "truncated"),
    "its last block cut off": (_last_block_cut, "truncated"),
    "a damaged block": (_flipped, "not a readable DuckDB ledger file"),
    "a text file": (_text, "not a readable DuckDB ledger file"),
    "another DuckDB database": (_foreign, "not a bughunt ledger"),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_refused_for_writing_and_left_unchanged(name: str, good: Path, tmp_path: Path) -> None:
    """Writing to a broken file fails with its name and reason, and not one byte changes."""
    make, says = BROKEN[name]
    path = tmp_path / "ledger.duckdb"
    make(good, path)
    before = _digest(path)
    with pytest.raises(LedgerFileError, match=says) as caught:
        Ledger(path).write([_row()])
    assert caught.value.file == str(path)
    assert _digest(path) == before


@pytest.mark.parametrize("name", list(BROKEN))
def test_refused_for_reading(name: str, good: Path, tmp_path: Path) -> None:
    """Reading a broken file fails with its name and reason, never a DuckDB traceback."""
    make, says = BROKEN[name]
    path = tmp_path / "ledger.duckdb"
    make(good, path)
    with pytest.raises(LedgerFileError, match=says):
        Ledger(path).query("SELECT count(*) FROM observations")


def test_a_folder_is_not_a_ledger(tmp_path: Path) -> None:
    """A folder given as the ledger is refused for reading and writing."""
    with pytest.raises(LedgerFileError, match="is a folder"):
        Ledger(tmp_path).write([_row()])
    with pytest.raises(LedgerFileError, match="is a folder"):
        Ledger(tmp_path).query("SELECT 1")


def test_an_empty_database_is_not_read_as_a_ledger(tmp_path: Path) -> None:
    """A DuckDB file with nothing in it is no ledger to read, and becomes one when written."""
    path = tmp_path / "ledger.duckdb"
    duckdb.connect(str(path)).close()
    with pytest.raises(LedgerFileError, match="holds no ledger yet"):
        Ledger(path).query("SELECT 1")
    Ledger(path).write([_row()])
    assert Ledger(path).query("SELECT count(*) AS n FROM observations") == [{"n": 1}]


def test_a_whole_ledger_passes(good: Path, tmp_path: Path) -> None:
    """The checks pass a whole ledger, for reading and for writing."""
    path = tmp_path / "ledger.duckdb"
    shutil.copy(good, path)
    Ledger(path).write([_row().model_copy(update={"observation_id": "o2"})])
    assert Ledger(path).query("SELECT count(*) AS n FROM observations") == [{"n": 2}]


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_ledger_broken_in_place_after_use_is_refused(
    name: str, good: Path, tmp_path: Path
) -> None:
    """A file this process has read and written is inspected again once anything changes it:
    broken in its own place, between two opens, it is refused with its reason."""
    make, says = BROKEN[name]
    path = tmp_path / "ledger.duckdb"
    shutil.copy(good, path)
    store = Ledger(path)
    store.write([_row()])
    assert store.query("SELECT count(*) AS n FROM observations") == [{"n": 2}]
    staged = tmp_path / "staged.duckdb"
    make(good, staged)
    os.replace(staged, path)  # another program puts a broken file where the ledger was
    with pytest.raises(LedgerFileError, match=says):
        store.query("SELECT count(*) FROM observations")


def test_an_unchanged_ledger_is_inspected_once(
    good: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reads and writes of a file as this process left it skip the whole-file inspection."""
    import ledger._store as store_module

    path = tmp_path / "ledger.duckdb"
    shutil.copy(good, path)
    seen: list[Path] = []
    real = store_module.check_whole  # type: ignore[attr-defined]  # the name the store calls

    def counting(con: duckdb.DuckDBPyConnection, where: Path) -> None:
        seen.append(where)
        real(con, where)

    monkeypatch.setattr(store_module, "check_whole", counting)
    store = Ledger(path)
    for _ in range(5):
        store.query("SELECT count(*) FROM observations")
        store.write([_row()])
    assert len(seen) == 1
    os.utime(path)  # touched from outside: no longer the file this process left
    store.query("SELECT 1")
    assert len(seen) == 2
