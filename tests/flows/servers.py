"""A real Prefect server for the tests that need one, and the processes they start beside it.

One server per test session (``prefect_server`` in ``tests/flows/conftest.py``):
PREFECT_HOME in a temporary folder, 127.0.0.1 on a free port, its cron
scheduler off so nothing starts unasked, its analytics off. Its UI is on
(tests/flows/test_prefect_ui.py opens it; serving it costs the start a copy
of the bundle, about 1–2 s): the v1 UI by default, its bundle copied under
the server's folder, never into the venv. Every process started here runs in
its own process group and is killed with it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from tests.conftest import ROOT

PREFECT = str(Path(sys.executable).with_name("prefect"))
SERVER_START_TIMEOUT_S = 120.0
CLI_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class Server:
    """A running Prefect server and the environment that points at it."""

    api_url: str
    """Its API, ``http://127.0.0.1:<port>/api``."""
    ui_url: str
    """Its UI, ``http://127.0.0.1:<port>`` (Prefect's v1 UI)."""
    env: dict[str, str]
    """Environment for every process that talks to it (PREFECT_API_URL, PREFECT_HOME, …)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def tail(log: Path, lines: int = 60) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else ""


@contextmanager
def background(
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
            stop(proc)


def stop(proc: subprocess.Popen[bytes]) -> None:
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


def wait_healthy(api_url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"prefect server exited with {proc.returncode}:\n{tail(log)}")
        try:
            with urllib.request.urlopen(f"{api_url}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    pytest.fail(f"prefect server not healthy after {SERVER_START_TIMEOUT_S:.0f} s:\n{tail(log)}")


def prefect(
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


@contextmanager
def running_server(tmp: Path) -> Iterator[Server]:
    """A Prefect server on 127.0.0.1 and a free port, its home under ``tmp``, until exit."""
    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "BUGHUNT_"))}
    env |= {
        "PREFECT_HOME": str(tmp / "prefect-home"),
        "PREFECT_API_URL": api_url,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_UI_ENABLED": "true",
        "PREFECT_UI_API_URL": api_url,
        "PREFECT_SERVER_UI_STATIC_DIRECTORY": str(tmp / "ui"),
        # The v2 UI starts Amplitude's SDK before it reads the analytics setting, which
        # fetches sr-client-cfg.amplitude.com even with analytics off; the v1 UI asks no one.
        "PREFECT_SERVER_UI_V2_ENABLED": "false",
        "PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT": "false",
        # A deployment's cron must never start a run here: no scheduler service.
        "PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED": "false",
        "PREFECT_CLI_COLORS": "false",
        "PREFECT_WORKER_QUERY_SECONDS": "2",
        "COLUMNS": "200",
        # Whatever still ran by default would write here, never to the checkout's ledger.
        "BUGHUNT_LEDGER": str(tmp / "default-ledger.duckdb"),
    }
    log = tmp / "server.log"
    argv = [PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    with background(argv, env, tmp, log) as proc:
        wait_healthy(api_url, proc, log)
        yield Server(api_url=api_url, ui_url=f"http://127.0.0.1:{port}", env=env)


DASK = str(Path(sys.executable).with_name("dask"))
CLUSTER_START_TIMEOUT_S = 90.0


@dataclass(frozen=True, slots=True)
class Cluster:
    """A Dask scheduler and its worker processes, started with Dask's own commands."""

    address: str
    """The scheduler's ``tcp://127.0.0.1:<port>``."""
    workers: dict[str, subprocess.Popen[bytes]]
    """Each worker process by its name (``w0``, ``w1``…): no nanny, so killing one loses it."""


@contextmanager
def dask_cluster(tmp: Path, env: Mapping[str, str], workers: int = 2) -> Iterator[Cluster]:
    """``dask scheduler`` and ``workers`` × ``dask worker --nthreads 1`` on 127.0.0.1, until exit.

    The workers run from the checkout with ``env`` (a Prefect server's, so their task runs
    reach its API); each has one thread, so one shard at a time, and imports the stages as
    it starts (``--preload flows.dask_worker``).
    """
    from distributed import Client

    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**env, "PYTHONPATH": str(ROOT)}
    scheduler = [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]
    with ExitStack() as stack:
        stack.enter_context(background(scheduler, env, ROOT, tmp / "scheduler.log"))
        procs = {}
        for i in range(workers):
            name = f"w{i}"
            argv = [DASK, "worker", address, "--name", name, "--nthreads", "1"]
            argv += ["--no-nanny", "--no-dashboard", "--host", "127.0.0.1"]
            argv += ["--preload", "flows.dask_worker"]  # as docs/scale-out.md starts them
            procs[name] = stack.enter_context(background(argv, env, ROOT, tmp / f"{name}.log"))
        deadline = time.monotonic() + CLUSTER_START_TIMEOUT_S
        with Client(address, timeout=CLUSTER_START_TIMEOUT_S) as client:
            while len(client.scheduler_info()["workers"]) < workers:
                if time.monotonic() > deadline:
                    logs = "\n".join(tail(tmp / f"{n}.log") for n in procs)
                    pytest.fail(f"the Dask workers did not join in time:\n{logs}")
                time.sleep(0.5)
        yield Cluster(address=address, workers=procs)
