"""Inputs that could end in a traceback end in one line: overflowing spans, bytes that are not
UTF-8, a shell command that cannot be split, a full disk, a ledger with a damaged block."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from bughunt.models import Observation, Status
from cli import app
from ledger import Ledger
from ledger._file import HEADER_BYTES

runner = CliRunner()


def _one_line(stderr: str) -> None:
    assert stderr.count("\n") == 1 and stderr.startswith("error: ") and "Traceback" not in stderr


@pytest.mark.parametrize("span", ["99999999999999d", "9999999999999999999h", "365001d"])
@pytest.mark.parametrize(
    "command",
    [["flakes", "--since"], ["cache", "prune", "--older-than"], ["flakes", "trend", "--since"]],
)
def test_a_span_too_long_is_one_line(ledger: Ledger, command: list[str], span: str) -> None:
    """A span past a thousand years names its option instead of overflowing a date."""
    result = runner.invoke(app, [*command, span, "--ledger", str(ledger.path)])
    assert result.exit_code == 2
    _one_line(result.stderr)
    assert command[-1] in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["sql", "SELECT '\udcff' AS x"],
        ["summary", "--run", "r\udcff"],
        ["unscored", "--run", "r\udcff"],
        ["export", "--query", "SELECT '\udcff'", "--out", "x.csv"],
        ["cache", "clear", "--judge", "j\udcff"],
    ],
    ids=["sql", "summary-run", "unscored-run", "export-query", "cache-judge"],
)
def test_text_that_is_not_utf8_is_one_line(ledger: Ledger, args: list[str]) -> None:
    """An argument holding bytes that are not UTF-8 (argv's surrogateescape) is refused in one line."""
    result = runner.invoke(app, [*args, "--ledger", str(ledger.path)])
    assert result.exit_code == 2
    _one_line(result.stderr)
    assert "not UTF-8" in result.stderr and "\\udcff" in result.stderr


def test_a_file_name_that_is_not_utf8_is_one_line(ledger: Ledger, tmp_path: Path) -> None:
    """A records file whose name is not UTF-8, in a real process (argv from bytes)."""
    name = os.fsencode(tmp_path) + b"/r\xff.jsonl"
    Path(os.fsdecode(name)).write_text('{"id": "A", "status": "pass"}\n')
    ledger_arg = [b"--ledger", os.fsencode(ledger.path)]
    for command in (b"ingest", b"summarize"):
        proc = subprocess.run(
            [sys.executable.encode(), b"-m", b"cli", command, name, *ledger_arg],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2, proc.stderr
        _one_line(proc.stderr)
    assert ledger.query("SELECT count(*) AS n FROM observations") == [{"n": 0}]


@pytest.mark.parametrize("command", ["pytest 'unbalanced", 'pytest "x', "pytest trailing\\"])
def test_a_test_command_that_cannot_be_split_is_one_line(tmp_path: Path, command: str) -> None:
    """`corpus mutate --test-command` with an unbalanced quote names the option."""
    target = tmp_path / "target"
    target.mkdir()
    (target / "m.py").write_text("def f():\n    return 1\n")
    out = str(tmp_path / "out")
    args = ["corpus", "mutate", "--target", str(target), "--out", out, "--test-command", command]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    _one_line(result.stderr)
    assert "--test-command" in result.stderr


def _full_disk_ingest(ledger: Path, records: Path, limit: int) -> subprocess.CompletedProcess[str]:
    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "cli", "ingest", str(records), "--ledger", str(ledger)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limited,
    )


def test_a_full_disk_is_one_line_and_stores_nothing(ledger: Ledger, tmp_path: Path) -> None:
    """A write that finds no room says so in one line (not DuckDB's rollback error); the
    ledger holds what it held, and takes the write once there is room."""
    records = tmp_path / "many.jsonl"
    with records.open("w") as out:
        for i in range(40_000):
            out.write(json.dumps({"id": f"c{i}", "status": "pass", "note": f"{i:0>300}"}) + "\n")
    room = ledger.path.stat().st_size + 1_000_000
    proc = _full_disk_ingest(ledger.path, records, room)
    assert proc.returncode == 2, proc.stderr
    _one_line(proc.stderr)
    assert "nothing of this write was stored" in proc.stderr and str(ledger.path) in proc.stderr
    assert ledger.query("SELECT count(*) AS n FROM observations") == [{"n": 0}]
    again = runner.invoke(app, ["ingest", str(records), "--ledger", str(ledger.path)])
    assert again.exit_code == 0, again.output
    assert ledger.query("SELECT count(*) AS n FROM observations") == [{"n": 40_000}]


def _damaged(path: Path) -> Path:
    """A ledger with rows over several blocks, one data block's bytes flipped in place."""
    rows = [
        Observation(
            observation_id=f"o{i}", case_id=f"c{i}", status=Status.FAIL, output=f"{i}" * 200
        )
        for i in range(20_000)
    ]
    Ledger(path).write(rows)
    con = duckdb.connect(str(path), read_only=True)
    (block, size), *_ = con.execute(
        "SELECT block_id, (SELECT block_size FROM pragma_database_size()) "
        "FROM pragma_storage_info('observations') WHERE block_id >= 0 ORDER BY block_id DESC"
    ).fetchall()
    con.close()
    at = HEADER_BYTES + int(block) * int(size) + 1000
    with path.open("r+b") as f:
        f.seek(at)
        data = f.read(64)
        f.seek(at)
        f.write(bytes(b ^ 0xFF for b in data))
    return path


@pytest.mark.parametrize("command", ["ingest", "migrate"])
def test_a_damaged_block_is_never_written_to(tmp_path: Path, command: str) -> None:
    """ingest and migrate refuse a ledger with a damaged block in one line; the file is unchanged."""
    path = _damaged(tmp_path / "ledger.duckdb")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    records = tmp_path / "one.jsonl"
    records.write_text('{"id": "new", "status": "pass"}\n')
    args = [command, str(records)] if command == "ingest" else [command]
    proc = subprocess.run(
        [sys.executable, "-m", "cli", *args, "--ledger", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    _one_line(proc.stderr)
    assert "damaged block" in proc.stderr and str(path) in proc.stderr
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
