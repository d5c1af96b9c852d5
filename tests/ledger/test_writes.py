"""Bulk writes: one transaction per batch, many writers, crashes mid-batch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from bughunt.errors import LedgerLockedError
from bughunt.models import Observation, RunInfo, RunKind, RunStatus, Status
from ledger import Ledger
from tests.conftest import ROOT
from tests.ledger.writer_proc import batch_table


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.ledger.writer_proc", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_hundred_thousand_observations_in_one_bulk_write(ledger: Ledger) -> None:
    """100k pydantic observations land in one write and read back by count and content."""
    rows = [
        Observation(
            observation_id=str(i),
            record_id=f"r{i}",
            case_id=f"c{i % 97}",
            status=Status.PASS if i % 3 else Status.FAIL,
            annotations={"i": i},
        )
        for i in range(100_000)
    ]
    assert ledger.write(rows) == {"observations": 100_000}
    got = ledger.query(
        "SELECT count(*) AS n, count(DISTINCT observation_id) AS ids, "
        "sum(CASE WHEN status = 'fail' THEN 1 ELSE 0 END) AS fails, "
        "max(CAST(json_extract(annotations, '$.i') AS BIGINT)) AS top FROM observations"
    )
    assert got == [{"n": 100_000, "ids": 100_000, "fails": 33_334, "top": 99_999}]


def test_a_failing_batch_stores_nothing(ledger: Ledger) -> None:
    """When one table of a batch fails to insert, the other tables' rows are rolled back too."""
    good = batch_table("good", 0, 10)
    bad = pa.table({"no_such_column": [1]})
    with pytest.raises(duckdb.Error):
        ledger.write_arrow({"observations": good, "runs": bad})
    assert ledger.query("SELECT count(*) AS n FROM observations") == [{"n": 0}]


def test_mixed_models_write_in_one_call(ledger: Ledger) -> None:
    """One write call can carry rows of several models; each lands in its own table."""
    counts = ledger.write(
        [
            RunInfo(run_id="r", kind=RunKind.ADHOC, status=RunStatus.RUNNING),
            Observation(observation_id=str(uuid.uuid4()), status=Status.ERROR),
            RunInfo(run_id="r", kind=RunKind.ADHOC, status=RunStatus.COMPLETED),
        ]
    )
    assert counts == {"runs": 2, "observations": 1}
    assert ledger.query("SELECT status FROM runs_latest") == [{"status": "completed"}]


def test_two_writer_processes_both_land_every_row(ledger_path: Path) -> None:
    """Two processes writing at once wait for each other's lock; no row is lost."""
    Ledger(ledger_path).migrate()
    procs = [_spawn(str(ledger_path), name, "15", "2000") for name in ("a", "b")]
    for p in procs:
        _out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    rows = Ledger(ledger_path).query(
        "SELECT split_part(batch_id, '-', 1) AS w, count(*) AS n FROM observations GROUP BY 1 ORDER BY 1"
    )
    assert rows == [{"w": "a", "n": 30_000}, {"w": "b", "n": 30_000}]


def test_writer_gives_up_after_bounded_wait_with_clear_message(ledger_path: Path) -> None:
    """A writer that cannot get the lock in time raises LedgerLockedError naming the file."""
    Ledger(ledger_path).migrate()
    holder = duckdb.connect(str(ledger_path))  # this process holds the lock ...
    try:
        code = (
            "import sys\n"
            "from ledger import Ledger\n"
            "from bughunt.errors import LedgerLockedError\n"
            "try:\n"
            f"    Ledger({str(ledger_path)!r}, lock_timeout_s=1.5).migrate()\n"
            "except LedgerLockedError as e:\n"
            "    print(e); sys.exit(7)\n"
        )
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        waited = time.monotonic() - started
    finally:
        holder.close()
    assert proc.returncode == 7, proc.stderr
    assert str(ledger_path) in proc.stdout and "BUGHUNT_LOCK_TIMEOUT" in proc.stdout
    assert waited >= 1.5
    assert issubclass(LedgerLockedError, Exception)


def test_sigkill_mid_batch_leaves_whole_batches_only(ledger_path: Path) -> None:
    """A writer killed with SIGKILL inside a batch leaves a readable file with whole batches."""
    Ledger(ledger_path).migrate()
    size = 200_000
    proc = _spawn(str(ledger_path), "k", "50", str(size))
    assert proc.stdout is not None
    starts = 0
    for line in proc.stdout:
        if line.startswith("batch") and line.strip().endswith("start"):
            starts += 1
            if starts == 3:
                break
    time.sleep(0.05)  # inside the third batch's write
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    rows = Ledger(ledger_path).query(
        "SELECT batch_id, count(*) AS n FROM observations GROUP BY 1 ORDER BY 1"
    )
    assert all(r["n"] == size for r in rows), rows
    assert {r["batch_id"] for r in rows} <= {"k-0", "k-1", "k-2"}
    assert len(rows) >= 2
