"""A flow killed with SIGKILL resumes without duplicates; a nightly and a PR run at once both land."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from ledger import Ledger, runs_folder
from tests.flows.corpora import case_diff, mini_corpus

pytestmark = pytest.mark.docker  # each test runs `bughunt run` in a process of its own

CASES = ["cmp-withdraw-exact-balance", "ret-credit-balance-sign", "state-next-id"]
PAIRING = ("baseline-recorded", "candidate-recorded")


def bughunt(tmp: Path, name: str, *args: str) -> subprocess.Popen[str]:
    """`bughunt run ...` in its own process group, with its own Prefect home."""
    env = dict(os.environ)
    env["PREFECT_HOME"] = str(tmp / f"prefect-{name}")
    env["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    env.pop("PREFECT_API_URL", None)
    return subprocess.Popen(
        [sys.executable, "-m", "cli", "run", *args],
        cwd=tmp,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def stages_done(ledger: Path, run_id: str) -> set[str]:
    if not ledger.exists():
        return set()
    try:
        rows = Ledger(ledger, lock_timeout_s=2).query(
            "SELECT stage FROM stage_outputs WHERE run_id = ?", [run_id]
        )
    except Exception:  # the writer holds the lock for a moment: ask again
        return set()
    return {r["stage"] for r in rows}


def test_sigkill_mid_run_then_resume_has_no_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed during the sandbox stage, the same run id re-run resumes and stores every row once.

    The resumed run, with no terminal, says in its log where it is: each stage's start and
    end, and lines every second (BUGHUNT_PROGRESS_S) while the sandbox runs."""
    monkeypatch.setenv("BUGHUNT_PROGRESS_S", "1")
    corpus = mini_corpus(tmp_path / "repo", CASES, pairing=PAIRING)
    ledger, run_id = tmp_path / "l.duckdb", "nightly-crash-test"
    args = [
        "nightly",
        "--corpus",
        str(corpus),
        "--ledger",
        str(ledger),
        "--run-id",
        run_id,
        "--repeats",
        "1",
        "--probe-pairs",
        "0",
        "--workers",
        "1",
    ]
    proc = bughunt(tmp_path, "first", *args)
    deadline = time.monotonic() + 240
    while "hash-corpus" not in stages_done(ledger, run_id):
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the first attempt never finished hash-corpus"
        time.sleep(0.2)
    # Inside the sandbox stage: kill once one of its containers exists (a fixed sleep left
    # none yet on a loaded machine), so the attempt leaves one behind for a sweep. The low-level
    # listing: `containers.list` inspects each container it lists, and one the run removed in
    # between raises NotFound.
    engine = docker.from_env()
    while not engine.api.containers(all=True, filters={"label": f"bughunt.run_id={run_id}"}):
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the first attempt never started a container"
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert "sandbox" not in stages_done(ledger, run_id)

    again = bughunt(tmp_path, "second", *args, "--json")
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err[-3000:]
    store = Ledger(ledger)
    rows = store.query(
        "SELECT count(*) AS n, count(DISTINCT record_id) AS ids, "
        "count(*) FILTER (WHERE kind NOT LIKE '%-variant') AS shown "
        "FROM observations WHERE run_id = ?",
        [run_id],
    )[0]
    # cases × agents × 2 trees × 1 repeat as shown; then the variants of the pairs those made
    # reproductions: no row twice
    assert rows["n"] == rows["ids"] and rows["shown"] == len(CASES) * 2 * 2 * 1
    stages = store.query(
        "SELECT stage, count(*) AS n FROM stage_outputs WHERE run_id = ? GROUP BY 1", [run_id]
    )
    assert {r["stage"]: r["n"] for r in stages} == {
        "classify": 1,
        "hash-corpus": 1,
        "sandbox": 1,
        "flake-update": 1,
        "score": 1,
        "report": 1,
    }
    assert '"stages_resumed": [\n    "classify",\n    "hash-corpus"\n  ]' in out
    said = out + err
    for line in (
        "classify: resumed from its checkpoint",
        "sandbox: started, 1 shards",
        "sandbox: done in ",
        "score: started, 1 shards",
        "report: started, 1 task",
        "report: done in ",
    ):
        assert line in said, (line, err[-3000:])
    during = re.findall(r"sandbox shard of 3 case\(s\): (\d+)/(\d+) pairs done after", said)
    assert during and all(int(total) == 6 for _, total in during), err[-3000:]
    assert not docker.from_env().api.containers(
        all=True, filters={"label": f"bughunt.run_id={run_id}"}
    )

    # A third attempt after everything finished, from a fresh workspace (the report folder
    # gone), with the ledger reached by another path and a judge setting that does not
    # change what is computed: every stage resumes, nothing is written twice, and the
    # report files come back.
    shutil.rmtree(runs_folder(ledger) / run_id)
    alias = tmp_path / "alias"
    alias.symlink_to(tmp_path, target_is_directory=True)
    moved = [*args]
    moved[moved.index("--ledger") + 1] = str(alias / ledger.name)
    third = bughunt(tmp_path, "third", *moved, "--max-in-flight", "3", "--json")
    out, err = third.communicate(timeout=300)
    assert third.returncode == 0, err[-3000:]
    assert json.loads(out)["stages_run"] == []
    assert (runs_folder(ledger) / run_id / "report.html").is_file()
    again_rows = store.query("SELECT count(*) AS n FROM observations WHERE run_id = ?", [run_id])[0]
    assert again_rows["n"] == rows["n"]


def test_nightly_and_pr_at_the_same_time_both_land(tmp_path: Path) -> None:
    """Two flows writing one ledger at once: each waits for the lock, every row of both lands."""
    corpus = mini_corpus(tmp_path / "repo", CASES[:2], pairing=PAIRING)
    ledger = tmp_path / "l.duckdb"
    diff = tmp_path / "pr.diff"
    diff.write_bytes(case_diff(CASES[0]))
    common = [
        "--corpus",
        str(corpus),
        "--ledger",
        str(ledger),
        "--repeats",
        "1",
        "--probe-pairs",
        "4",
    ]
    nightly = bughunt(tmp_path, "nightly", "nightly", "--run-id", "nightly-both", *common)
    pr = bughunt(tmp_path, "pr", "pr", "--diff", str(diff), "--run-id", "pr-both", *common)
    # The PR touches one case: too little evidence, so its gate is inconclusive (exit 4).
    for proc, code in ((nightly, 0), (pr, 4)):
        _out, err = proc.communicate(timeout=600)
        assert proc.returncode == code, err[-3000:]
    store = Ledger(ledger)
    counts = {
        r["run_id"]: r["n"]
        for r in store.query(
            "SELECT run_id, count(*) AS n FROM observations WHERE kind NOT LIKE '%-variant' "
            "GROUP BY 1"
        )
    }
    # cases × agents × 2 trees × 1 repeat as shown, the variants aside
    assert counts == {"nightly-both": 2 * 2 * 2, "pr-both": 1 * 2 * 2}
    verdicts = {
        r["run_id"]: r["n"]
        for r in store.query("SELECT run_id, count(*) AS n FROM verdicts GROUP BY 1")
    }
    assert verdicts == {"nightly-both": 2, "pr-both": 1}
    latest = {
        r["run_id"]: r["status"] for r in store.query("SELECT run_id, status FROM runs_latest")
    }
    assert latest == {"nightly-both": "completed", "pr-both": "completed"}
