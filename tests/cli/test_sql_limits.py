"""Read commands are bounded: `sql` stops after a time and a number of rows, Ctrl-C stops it,
and settings that would wait forever or mean "everything" by accident are refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bughunt.errors import ReadOnlyQueryError
from cli import app
from ledger import Ledger

runner = CliRunner()

FOREVER = "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t"


def test_a_query_that_never_ends_is_stopped(ledger: Ledger) -> None:
    """A recursive query without end stops at --timeout with one line, exit 2."""
    started = time.monotonic()
    result = runner.invoke(app, ["sql", FOREVER, "--timeout", "1", "--ledger", str(ledger.path)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "longer than 1 s" in result.stderr
    assert time.monotonic() - started < 30


def test_user_query_has_a_time_limit(ledger: Ledger) -> None:
    """The ledger's user query stops at its timeout (the command's default is 60 s)."""
    with pytest.raises(ReadOnlyQueryError, match=r"longer than 0\.5 s"):
        ledger.user_query(FOREVER, timeout_s=0.5)


def test_rows_beyond_the_cap_are_not_fetched(ledger: Ledger) -> None:
    """Three million rows: --max-rows of them are printed, stderr says there are more, exit 1."""
    query = "SELECT * FROM range(3000000)"
    args = ["sql", query, "--max-rows", "25", "--json", "--ledger", str(ledger.path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert len(json.loads(result.stdout)) == 25
    assert "only the first 25 rows" in result.stderr


def test_user_query_fetches_one_more_than_asked(ledger: Ledger) -> None:
    """max_rows + 1 rows come back at most: the caller can tell there are more."""
    assert len(ledger.user_query("SELECT * FROM range(3000000)", max_rows=10)) == 11


@pytest.mark.slow
def test_ctrl_c_stops_a_query_in_one_line(ledger: Ledger) -> None:
    """SIGINT during a long query: exit 130, 'interrupted', no traceback, promptly."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", "sql", FOREVER, "--ledger", str(ledger.path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    # The query has started once the ledger is open and DuckDB works: wait for CPU time.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.5)
        if _cpu_seconds(proc.pid) > 4:
            break
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip() == "interrupted" and "Traceback" not in err
    assert time.monotonic() - sent < 10


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("value", ["nan", "-1", "inf", "soon"])
def test_a_lock_timeout_that_never_ends_is_refused(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """BUGHUNT_LOCK_TIMEOUT must be a finite number of seconds, 0 or more: one line naming it."""
    monkeypatch.setenv("BUGHUNT_LOCK_TIMEOUT", value)
    result = runner.invoke(app, ["sql", "SELECT 1", "--ledger", str(ledger.path)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "BUGHUNT_LOCK_TIMEOUT" in result.stderr


@pytest.mark.parametrize("option", ["--judge", "--model"])
@pytest.mark.parametrize("value", ["", "  "])
def test_cache_clear_refuses_an_empty_name(ledger: Ledger, option: str, value: str) -> None:
    """`cache clear --judge ""` is not "every judge": refused in one line, nothing recorded."""
    result = runner.invoke(app, ["cache", "clear", option, value, "--ledger", str(ledger.path)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and option in result.stderr
    assert ledger.query("SELECT count(*) AS n FROM judge_cache_invalidations") == [{"n": 0}]


@pytest.mark.parametrize(
    "query", [FOREVER, "SELECT * FROM range(1000000000000)"], ids=["blocking", "streaming"]
)
def test_an_export_that_never_ends_is_stopped(ledger: Ledger, tmp_path: Path, query: str) -> None:
    """`export --timeout` stops a query that never ends, or rows that never end, in one line;
    no file (nor a temporary one) is left."""
    folder = tmp_path / "out"
    folder.mkdir()
    args = ["export", "--query", query, "--out", str(folder / "rows.csv"), "--timeout", "1"]
    result = runner.invoke(app, [*args, "--ledger", str(ledger.path)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "longer than 1 s" in result.stderr
    assert list(folder.iterdir()) == []
