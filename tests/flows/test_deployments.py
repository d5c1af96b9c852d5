"""prefect.yaml's deployments on a real Prefect server and process worker (docs/operations.md).

One server per module (PREFECT_HOME in a temporary folder, 127.0.0.1 on a
free port, its cron scheduler off so nothing starts unasked); the worker runs
from a folder that is not the checkout, so the flow can only find its code
through the ``{{ $BUGHUNT_HOME }}`` pull step. Every process started here is
killed, with its process group, in ``finally``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from flows import RunParams
from ledger import Ledger
from tests.conftest import ROOT
from tests.flows.minicorpus import build_minicorpus

PREFECT = str(Path(sys.executable).with_name("prefect"))
POOL = "bughunt"
SERVER_START_TIMEOUT_S = 120.0
CLI_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 240.0


@dataclass(frozen=True, slots=True)
class Server:
    """A running Prefect server and the environment that points at it."""

    api_url: str
    """Its API, ``http://127.0.0.1:<port>/api``."""
    env: dict[str, str]
    """Environment for every process that talks to it (PREFECT_API_URL, PREFECT_HOME, …)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _tail(log: Path, lines: int = 60) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else ""


@contextmanager
def _background(
    argv: list[str], env: Mapping[str, str], cwd: Path, log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``argv`` in its own process group; on exit TERM it, then KILL the group after 15 s."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            env=dict(env),
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield proc
        finally:
            _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """TERM the process group, wait up to 15 s, then KILL what is left of it and of its descendants.

    Descendants are collected first: a worker may start a flow run in a session of its own.
    """
    try:
        family = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        family = []
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=15)
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    for child in family:
        with suppress(psutil.NoSuchProcess):
            child.kill()
    proc.wait(timeout=10)


def _wait_healthy(api_url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"prefect server exited with {proc.returncode}:\n{_tail(log)}")
        try:
            with urllib.request.urlopen(f"{api_url}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    pytest.fail(f"prefect server not healthy after {SERVER_START_TIMEOUT_S:.0f} s:\n{_tail(log)}")


def _prefect(
    server: Server,
    *args: str,
    cwd: Path = ROOT,
    timeout: float = CLI_TIMEOUT_S,
    expect: int = 0,
) -> str:
    """Run a prefect CLI command against ``server``; its output, or a test failure showing it
    (when it exits other than ``expect``)."""
    proc = subprocess.run(
        [PREFECT, "--no-prompt", *args],
        env=server.env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == expect, (
        f"prefect {' '.join(args)} exited {proc.returncode}:\n{output}"
    )
    return output


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A fresh Prefect server holding the work pool and every deployment of prefect.yaml."""
    tmp = tmp_path_factory.mktemp("prefect-server")
    port = _free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "BUGHUNT_"))}
    env |= {
        "PREFECT_HOME": str(tmp / "prefect-home"),
        "PREFECT_API_URL": api_url,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_UI_ENABLED": "false",
        # The nightly cron must never start a run here: no scheduler service.
        "PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED": "false",
        "PREFECT_CLI_COLORS": "false",
        "PREFECT_WORKER_QUERY_SECONDS": "2",
        "COLUMNS": "200",
        # Whatever still ran by default would write here, never to the checkout's ledger.
        "BUGHUNT_LEDGER": str(tmp / "default-ledger.duckdb"),
    }
    log = tmp / "server.log"
    argv = [PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    with _background(argv, env, tmp, log) as proc:
        _wait_healthy(api_url, proc, log)
        server = Server(api_url=api_url, env=env)
        _prefect(server, "work-pool", "create", POOL, "--type", "process")
        # Deployed without BUGHUNT_HOME: the pull step must keep its template for run time.
        _prefect(server, "deploy", "--all", "--prefect-file", str(ROOT / "prefect.yaml"))
        yield server


def _inspect(server: Server, name: str) -> dict[str, Any]:
    out = _prefect(server, "deployment", "inspect", name, "--output", "json")
    data: dict[str, Any] = json.loads(out[out.index("{") : out.rindex("}") + 1])
    return data


@pytest.mark.slow
def test_nightly_deployment_has_cron_schedule_with_timezone(deployed: Server) -> None:
    """The nightly deployment runs at 02:00 Europe/Berlin on the bughunt pool, with its parameters."""
    d = _inspect(deployed, "nightly-judge-comparison/nightly-judge-comparison")
    [entry] = d["schedules"]
    assert entry["active"] is True
    assert entry["schedule"]["cron"] == "0 2 * * *"
    assert entry["schedule"]["timezone"] == "Europe/Berlin"
    assert d["work_pool_name"] == POOL
    assert d["entrypoint"] == "flows/nightly.py:nightly_flow"
    assert RunParams.model_validate(d["parameters"]["params"]).corpus == "corpus/demo"
    assert d["global_concurrency_limit"]["limit"] == 1


@pytest.mark.slow
def test_pr_check_deployment_has_no_schedule(deployed: Server) -> None:
    """pr-check is only ever triggered, and its pull step resolves BUGHUNT_HOME at run time."""
    d = _inspect(deployed, "pr-check/pr-check")
    assert d["schedules"] == []
    assert d["work_pool_name"] == POOL
    assert d["entrypoint"] == "flows/pr.py:pr_flow"
    assert d["pull_steps"] == [
        {"prefect.deployments.steps.set_working_directory": {"directory": "{{ $BUGHUNT_HOME }}"}}
    ]


@pytest.mark.docker
@pytest.mark.slow
def test_pr_check_deployment_runs_the_touched_case_on_a_worker(
    deployed: Server, tmp_path: Path
) -> None:
    """`prefect deployment run pr-check/pr-check --watch` runs on a worker; only the touched
    case's rows land. One case is too little evidence: the gate is inconclusive, and the
    deployment's fail_on_gate ends the run Failed (after writing it), so --watch exits 1."""
    mini = build_minicorpus(tmp_path / "repo")
    touched = mini.cases[1]
    diff = tmp_path / "pr.diff"
    diff.write_text(mini.touch_case(touched))
    ledger = tmp_path / "ledger.duckdb"
    run_id = "pr-deployment-test"
    worker_dir = tmp_path / "worker"
    worker_dir.mkdir()
    worker_env = deployed.env | {"BUGHUNT_HOME": str(ROOT)}
    worker_log = tmp_path / "worker.log"
    argv = [PREFECT, "--no-prompt", "worker", "start", "--pool", POOL, "--name", "test-worker"]
    with _background(argv, worker_env, worker_dir, worker_log):
        try:
            out = _prefect(
                deployed,
                "deployment",
                "run",
                "pr-check/pr-check",
                "--param",
                f"diff={diff}",
                "--param",
                "params="
                + json.dumps(
                    {
                        "corpus": str(mini.corpus),
                        "ledger": str(ledger),
                        "run_id": run_id,
                        "repeats": 1,
                        "probe_pairs": 2,
                    }
                ),
                "--watch",
                "--watch-timeout",
                str(int(RUN_TIMEOUT_S)),
                timeout=RUN_TIMEOUT_S + 30,
                expect=1,
            )
        except (AssertionError, subprocess.TimeoutExpired) as exc:
            raise AssertionError(f"{exc}\n--- worker log ---\n{_tail(worker_log)}") from exc
    assert "Failed" in out, out
    store = Ledger(ledger)
    statuses = store.query(
        "SELECT status, message FROM runs WHERE run_id = ? ORDER BY recorded_at", [run_id]
    )
    assert [r["status"] for r in statuses] == ["running", "completed"]
    assert "gate inconclusive (exit 4)" in statuses[-1]["message"]
    observed = store.query(
        "SELECT DISTINCT case_id, agent_version FROM observations WHERE run_id = ?", [run_id]
    )
    assert {r["case_id"] for r in observed} == {touched}
    assert len(observed) == 2  # baseline and candidate
    verdicts = store.query("SELECT case_id FROM verdicts WHERE run_id = ?", [run_id])
    assert [r["case_id"] for r in verdicts] == [touched]
    manifest = store.query("SELECT case_id FROM corpus_manifest WHERE run_id = ?", [run_id])
    assert {r["case_id"] for r in manifest} == set(mini.cases)
    assert (ledger.parent / "runs" / run_id / "report.md").is_file()
