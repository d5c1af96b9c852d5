"""Runs spread over a real Dask cluster of separate processes (docs/scale-out.md).

A scheduler and two workers started with Dask's own commands on 127.0.0.1
(``dask scheduler``, ``dask worker --nthreads 1 --no-nanny``), the session's
Prefect server, one ledger file, and each run a `bughunt run` process of its
own: every piece is the process it would be on a team's machines.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import docker
import pytest
from distributed import Client, get_task_stream

from ledger import Ledger
from tasks.sandbox.engine._labels import RUN_LABEL
from tests.flows.corpora import SEVEN, case_diff, mini_corpus
from tests.flows.servers import Cluster, Server, dask_cluster

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CASES = SEVEN[:3]
"""Cases whose recorded reports and tests are deterministic: a serial run is the reference."""
PAIRING = ("baseline-recorded", "candidate-recorded")
RUN_TIMEOUT_S = 600.0


def bughunt(
    tmp: Path, server: Server, cluster: Cluster | None, name: str, *args: str
) -> subprocess.Popen[str]:
    """`bughunt run ...` against ``server``, its shards on ``cluster`` (None: in its own process)."""
    env = dict(server.env)
    if cluster is not None:
        env |= {"BUGHUNT_TASK_RUNNER": "dask", "BUGHUNT_DASK_ADDRESS": cluster.address}
    log = (tmp / f"{name}.log").open("w")
    return subprocess.Popen(
        [sys.executable, "-m", "cli", "run", *args],
        cwd=tmp,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def finished(proc: subprocess.Popen[str], tmp: Path, name: str, code: int = 0) -> None:
    """Wait for a run; a test failure with its log when it exits other than ``code``."""
    try:
        proc.wait(timeout=RUN_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    log = (tmp / f"{name}.log").read_text(errors="replace")
    assert proc.returncode == code, f"{name} exited {proc.returncode}:\n{log[-4000:]}"


def common(corpus: Path, ledger: Path, run_id: str) -> list[str]:
    return [
        "--corpus",
        str(corpus),
        "--ledger",
        str(ledger),
        "--run-id",
        run_id,
        "--repeats",
        "1",
        "--probe-pairs",
        "2",
        "--seed",
        "7",
        "--shard-size",
        "1",
    ]


@contextmanager
def containers_removed(run_ids: list[str]) -> Iterator[None]:
    """On exit, remove what a killed worker's shard may have left running on the engine."""
    try:
        yield
    finally:
        api = docker.from_env().api
        for run_id in run_ids:
            for c in api.containers(all=True, filters={"label": f"{RUN_LABEL}={run_id}"}):
                # NotFound: its own run removed it in between
                with contextlib.suppress(docker.errors.NotFound):
                    api.remove_container(c["Id"], force=True)


def observations(store: Ledger, run_id: str) -> dict[str, Any]:
    rows = store.query(
        "SELECT case_id, agent_version, tree, rewrite, repeat, status, kind FROM observations "
        "WHERE run_id = ? ORDER BY ALL",
        [run_id],
    )
    ids = store.query(
        "SELECT count(DISTINCT record_id) AS n FROM observations WHERE run_id = ?", [run_id]
    )[0]["n"]
    return {"rows": [tuple(r.values()) for r in rows], "distinct_ids": ids}


def verdicts(store: Ledger, run_id: str) -> list[tuple[Any, ...]]:
    rows = store.query(
        "SELECT case_id, outcome, calls FROM verdicts WHERE run_id = ? ORDER BY case_id", [run_id]
    )
    return [tuple(r.values()) for r in rows]


def test_a_worker_killed_mid_sandbox_loses_and_duplicates_nothing(
    tmp_path: Path, prefect_server: Server
) -> None:
    """SIGKILL the worker running a sandbox shard: Dask hands the shard to the other worker,
    the run completes there, and its observations and verdicts are those of a serial run of
    the same corpus, each observation once."""
    corpus = mini_corpus(tmp_path / "repo", CASES, pairing=PAIRING)
    ledger = tmp_path / "l.duckdb"
    serial = bughunt(
        tmp_path, prefect_server, None, "serial", "nightly", *common(corpus, ledger, "serial")
    )
    finished(serial, tmp_path, "serial")
    with (
        containers_removed(["spread"]),
        dask_cluster(tmp_path, prefect_server.env) as cluster,
        Client(cluster.address) as client,
    ):
        names = {a: w["name"] for a, w in client.scheduler_info()["workers"].items()}
        run = bughunt(
            tmp_path,
            prefect_server,
            cluster,
            "spread",
            "nightly",
            *common(corpus, ledger, "spread"),
        )
        victim = None
        seen: dict[str, float] = {}
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while victim is None and run.poll() is None and time.monotonic() < deadline:
            for address, keys in client.processing().items():
                if any(str(k).startswith("sandbox-") for k in keys):
                    first = seen.setdefault(address, time.monotonic())
                    if time.monotonic() - first > 3.0:  # well into its executions
                        victim = names[address]
            time.sleep(0.2)
        assert victim is not None, "no sandbox shard was seen running on a worker"
        cluster.workers[victim].kill()
        cluster.workers[victim].wait(timeout=10)
        finished(run, tmp_path, "spread")
        assert len(client.scheduler_info()["workers"]) == 1
    store = Ledger(ledger)
    ref, spread = observations(store, "serial"), observations(store, "spread")
    assert spread["rows"] == ref["rows"]
    # cases × agents × 2 trees × 1 repeat as shown, then the variants
    assert sum(not r[-1].endswith("-variant") for r in ref["rows"]) == len(CASES) * 2 * 2
    assert spread["distinct_ids"] == len(spread["rows"])  # none written twice
    assert verdicts(store, "spread") == verdicts(store, "serial")
    assert len(verdicts(store, "serial")) == len(CASES)
    shards = store.query(
        "SELECT count(*) AS n FROM stage_outputs WHERE run_id = 'spread' AND stage = 'sandbox'"
    )[0]["n"]
    assert shards == len(CASES)
    latest = store.query("SELECT status FROM runs_latest WHERE run_id = 'spread'")
    assert latest == [{"status": "completed"}]


def test_a_nightly_and_two_prs_at_once_share_the_cluster_and_the_ledger(
    tmp_path: Path, prefect_server: Server
) -> None:
    """Three runs at once on one cluster, one Prefect server and one ledger: the shards run on
    both workers (the scheduler's task stream says where) and every row of every run lands."""
    corpus = mini_corpus(tmp_path / "repo", CASES, pairing=PAIRING)
    ledger = tmp_path / "l.duckdb"
    diffs = []
    for i, case in enumerate(CASES[:2]):
        diff = tmp_path / f"pr{i}.diff"
        diff.write_bytes(case_diff(case))
        diffs.append(diff)
    with (
        dask_cluster(tmp_path, prefect_server.env) as cluster,
        Client(cluster.address) as client,
        get_task_stream(client) as stream,
    ):
        names = {a: w["name"] for a, w in client.scheduler_info()["workers"].items()}
        runs = {
            "nightly": bughunt(
                tmp_path,
                prefect_server,
                cluster,
                "nightly",
                "nightly",
                *common(corpus, ledger, "nightly"),
            )
        }
        for i, diff in enumerate(diffs):
            runs[f"pr{i}"] = bughunt(
                tmp_path,
                prefect_server,
                cluster,
                f"pr{i}",
                "pr",
                "--diff",
                str(diff),
                *common(corpus, ledger, f"pr{i}"),
            )
        # Each PR touches one case: too little evidence, its gate is inconclusive (exit 4).
        for name, proc in runs.items():
            finished(proc, tmp_path, name, 0 if name == "nightly" else 4)
    # the stream's records arrive when its block ends
    sandbox = [r for r in stream.data if r["key"].startswith("sandbox-")]
    assert len(sandbox) == len(CASES) + 2  # one shard of one case each
    assert {names[r["worker"]] for r in sandbox} == {"w0", "w1"}
    store = Ledger(ledger)
    counts = {
        r["run_id"]: r["n"]
        for r in store.query(
            "SELECT run_id, count(*) AS n FROM observations WHERE kind NOT LIKE '%-variant' "
            "GROUP BY 1"
        )
    }
    # cases × agents × 2 trees × 1 repeat as shown, the variants aside
    assert counts == {"nightly": len(CASES) * 4, "pr0": 4, "pr1": 4}
    every = store.query("SELECT count(*) AS n, count(DISTINCT record_id) AS ids FROM observations")
    assert every[0]["ids"] == every[0]["n"]  # none written twice
    assert {r: len(verdicts(store, r)) for r in runs} == {"nightly": len(CASES), "pr0": 1, "pr1": 1}
    latest = {
        r["run_id"]: r["status"] for r in store.query("SELECT run_id, status FROM runs_latest")
    }
    assert latest == dict.fromkeys(runs, "completed")
