"""kill -9 of `bughunt run nightly` leaves nothing behind past the next run's start.

The run is SIGKILLed alone (as ``kill -9 PID`` or the OOM killer would), not
its process group: its Prefect server stays in the group, a command judge in
a session of its own, containers in the engine. The next run sweeps them
before Prefect starts its own server; a live run's processes, containers and
networks on the same machine and engine stay.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tasks.sandbox.engine import connect, ensure_image
from tasks.sandbox.engine._labels import LABEL, OWNER_LABEL, RUN_LABEL
from tests.flows.corpora import mini_corpus
from tests.flows.test_crash_and_concurrency import bughunt, stages_done

pytestmark = pytest.mark.docker

CASE = "cmp-withdraw-exact-balance"
SLOW_AGENT = (
    '\n[[agents]]\nname = "slow"\nfamily = "scripted-slow"\nmode = "command"\n'
    'command = ["sleep", "300"]\npath = "agents/scripted"\n'
)
SLOW_JUDGE = """\
import os, subprocess, sys, time
sys.stdin.read()
# A grandchild that drops the run's variable: only the judge's process group holds it.
child = subprocess.Popen(["sleep", "300"], env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
with open(sys.argv[1] + ".tmp", "w") as mark:
    mark.write(f"{os.getpid()} {child.pid}")
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(300)
"""
SWEPT = "swept leftovers of dead runs"
SERVER = "Starting temporary server"


def _stat(pid: int) -> list[str] | None:
    """Fields 3… of /proc/<pid>/stat (state first), or None when the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def running(pid: int) -> bool:
    """The process exists and is not a zombie."""
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def token_of(pid: int) -> str:
    """The owner token a run with this pid claims: host, pid, start time (stat field 22)."""
    fields = _stat(pid)
    assert fields is not None
    return f"{socket.gethostname()}:{pid}:{fields[19]}"


def owner_label(token: str) -> str:
    """The owner label of a run's containers and networks: its token's host and pid."""
    return token.rsplit(":", 1)[0]


def _pids() -> Iterator[int]:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and running(int(entry.name)):
            yield int(entry.name)


def carrying(token: str) -> set[int]:
    """Live processes started with ``BUGHUNT_OWNER=token``."""
    wanted = f"BUGHUNT_OWNER={token}".encode()
    found = set()
    for pid in _pids():
        with suppress(OSError):
            if wanted in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                found.add(pid)
    return found


def in_group(pgid: int) -> set[int]:
    """Live processes of process group ``pgid``."""
    return {pid for pid in _pids() if (f := _stat(pid)) is not None and int(f[2]) == pgid}


def labelled(client: Any, token: str) -> tuple[list[str], list[str]]:
    """Ids of containers and networks labelled as made by the run of ``token``."""
    labels = [f"{LABEL}=1", f"{OWNER_LABEL}={owner_label(token)}"]
    return (
        [c["Id"] for c in client.api.containers(all=True, filters={"label": labels})],
        [n["Id"] for n in client.api.networks(filters={"label": labels})],
    )


def wait_for(what: str, check: Callable[[], bool], proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 240
    while not check():
        assert proc.poll() is None, f"the run ended before {what}: {proc.communicate()[1][-3000:]}"
        assert time.monotonic() < deadline, f"the run never reached {what}"
        time.sleep(0.2)


def kill9(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the run's own process only, and reap it."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def cleanup(client: Any, token: str, groups: set[int]) -> None:
    """Kill what one of this test's runs left, should a sweep have missed anything."""
    for group in groups:
        with suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
    for pid in carrying(token):
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    containers, networks = labelled(client, token)
    for container in containers:
        with suppress(Exception):
            client.api.remove_container(container, force=True)
    for network in networks:
        with suppress(Exception):
            client.api.remove_network(network)


def _pump(proc: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
    """Hand the process's stderr lines to ``lines`` until it closes."""
    assert proc.stderr is not None
    for line in proc.stderr:
        lines.put(line)


@contextmanager
def next_run_started(tmp: Path, client: Any, *args: str) -> Iterator[str]:
    """The next `bughunt run`, until its start: its sweep's line or Prefect's server, whichever
    it writes first (the line is yielded). The run is stopped and cleaned up afterwards."""
    proc = bughunt(tmp, "next", *args)
    token = token_of(proc.pid)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_pump, args=(proc, lines), daemon=True).start()
    seen: list[str] = []
    try:
        while not seen or not (SWEPT in seen[-1] or SERVER in seen[-1]):
            try:
                seen.append(lines.get(timeout=120))
            except queue.Empty:
                pytest.fail(f"the next run never started (exit {proc.poll()}): {''.join(seen)}")
        yield seen[-1]
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        cleanup(client, token, {proc.pid})


@dataclass
class Live:
    """A concurrent live run: an owner process, a child carrying its token, engine objects."""

    token: str
    owner: subprocess.Popen[bytes]
    child: subprocess.Popen[bytes]
    container: str
    network: str

    def survived(self, client: Any) -> bool:
        return (
            running(self.owner.pid)
            and running(self.child.pid)
            and labelled(client, self.token) == ([self.container], [self.network])
        )


@contextmanager
def live_run(client: Any) -> Iterator[Live]:
    """Another run on the same machine and engine, alive for the whole test."""
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    token = token_of(owner.pid)
    child = subprocess.Popen(
        ["sleep", "300"], env={**os.environ, "BUGHUNT_OWNER": token}, start_new_session=True
    )
    labels = {LABEL: "1", OWNER_LABEL: owner_label(token), RUN_LABEL: "live-run"}
    container = client.api.create_container(
        ensure_image(client).tag, ["sleep", "300"], labels=labels
    )["Id"]
    network = client.api.create_network(f"bughunt-live-{owner.pid}", labels=labels)["Id"]
    try:
        yield Live(token, owner, child, container, network)
    finally:
        for proc in (child, owner):
            proc.kill()
            proc.wait()
        with suppress(Exception):
            client.api.remove_container(container, force=True)
        with suppress(Exception):
            client.api.remove_network(network)


def run_args(tmp: Path, corpus: Path, run_id: str) -> list[str]:
    return [
        "nightly",
        "--corpus",
        str(corpus),
        "--ledger",
        str(tmp / "l.duckdb"),
        "--run-id",
        run_id,
        "--repeats",
        "1",
        "--probe-pairs",
        "0",
        "--workers",
        "1",
    ]


def agent_container(client: Any, run_id: str) -> bool:
    """True once the run's agent container (not a contract check's) is there."""
    for c in client.api.containers(filters={"label": f"{RUN_LABEL}={run_id}"}):
        with suppress(Exception):
            env = client.api.inspect_container(c["Id"])["Config"]["Env"] or []
            if any(e.startswith("BUGHUNT_REPORT=") for e in env):
                return True
    return False


def taken_first(attempt: Callable[[Path, int], bool], tmp: Path) -> None:
    """Run ``attempt`` until the next run's own sweep is shown to take the leftovers.

    A sweep at any run's start takes every dead owner's leftovers on the
    machine, so another test's run may take them between the kill and the
    next run's start: they are gone in time, but not by the next run's hand,
    and who took them cannot be told. ``attempt`` returns False then, and a
    fresh one goes; a run that never sweeps first fails every try.
    """
    for number in range(3):
        if attempt(tmp / f"try{number}", number):
            return
    pytest.fail(
        "three times the next run's first line did not name the killed run's leftovers: it "
        "started Prefect's server before sweeping, or another run swept them each time"
    )


def test_kill9_mid_sandbox_leaves_nothing_past_the_next_run_start(tmp_path: Path) -> None:
    """Killed while an agent's container runs: its server, containers and networks are swept."""
    client = connect()

    def attempt(tmp: Path, number: int) -> bool:
        corpus = mini_corpus(tmp / "repo", [CASE], pairing=("slow", "candidate-recorded"))
        (corpus / "corpus.toml").write_text((corpus / "corpus.toml").read_text() + SLOW_AGENT)
        run_id = f"kill9-sandbox-{number}"
        args = run_args(tmp, corpus, run_id)
        with live_run(client) as live:
            proc = bughunt(tmp, "first", *args)
            token = token_of(proc.pid)
            try:
                wait_for("its agent's container", lambda: agent_container(client, run_id), proc)
                # The network an agent with network access will get (none is made yet).
                client.api.create_network(
                    f"bughunt-dead-{proc.pid}", labels={LABEL: "1", OWNER_LABEL: owner_label(token)}
                )
                kill9(proc)
                orphans = in_group(proc.pid)
                assert orphans, "the killed run's Prefect server should be left in its group"
                containers, networks = labelled(client, token)
                assert containers and networks
                marked = carrying(token)

                with next_run_started(tmp, client, *run_args(tmp, corpus, "next")) as line:
                    assert not {p for p in orphans if running(p)}, "the Prefect server outlived it"
                    assert not in_group(proc.pid) and not carrying(token)
                    assert labelled(client, token) == ([], [])
                    assert live.survived(client)
                    swept_first = SWEPT in line
                # The orphans carried the run's token (the Prefect server inherits it).
                assert orphans <= marked
                return swept_first
            finally:
                cleanup(client, token, {proc.pid})

    taken_first(attempt, tmp_path)


@pytest.mark.parametrize("runner", ["threads", pytest.param("dask", marks=pytest.mark.slow)])
def test_kill9_mid_score_leaves_nothing_past_the_next_run_start(
    tmp_path: Path, runner: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed while a command judge runs: the judge, its child and the servers are swept.

    On Dask the workers end with the run, but the judge (started by one) and
    each worker's own Prefect server outlive it."""
    monkeypatch.setenv("BUGHUNT_TASK_RUNNER", runner)
    monkeypatch.setenv("BUGHUNT_DASK_WORKERS", "1")
    client = connect()

    def attempt(tmp: Path, number: int) -> bool:
        corpus = mini_corpus(
            tmp / "repo", [CASE], pairing=("baseline-recorded", "candidate-recorded")
        )
        judge, mark = tmp / "judge.py", tmp / "judge.pid"
        judge.write_text(SLOW_JUDGE)
        config = tmp / "judges.toml"
        config.write_text(
            '[judges.slow]\nbackend = "command"\nfamily = "slowfam"\ndeadline_s = 600\n'
            f"command = [{sys.executable!r}, {str(judge)!r}, {str(mark)!r}]\n"
        )
        run_id = f"kill9-score-{number}"
        args = run_args(tmp, corpus, run_id)
        judged = ["--judge", "slow", "--judges-config", str(config), "--strategy", "single"]
        groups: set[int] = set()
        with live_run(client) as live:
            proc = bughunt(tmp, "first", *args, *judged, "--judge-deadline-s", "600")
            token = token_of(proc.pid)
            groups.add(proc.pid)
            try:
                wait_for("its judge", mark.exists, proc)
                assert "flake-update" in stages_done(tmp / "l.duckdb", run_id)
                judge_pid, grandchild = map(int, mark.read_text().split())
                groups.add(judge_pid)
                kill9(proc)
                orphans = in_group(proc.pid) | in_group(judge_pid)
                assert {judge_pid, grandchild} < orphans, "the judge and the server should be left"
                marked = carrying(token)

                with next_run_started(tmp, client, *run_args(tmp, corpus, "next")) as line:
                    assert not {p for p in orphans if running(p)}, "the judge or server outlived it"
                    assert not in_group(proc.pid) and not in_group(judge_pid)
                    assert not carrying(token)
                    assert live.survived(client)
                    swept_first = SWEPT in line and re.search(rf"\b{judge_pid}\b", line) is not None
                # The judge and the server carried the token; the grandchild dropped it.
                assert judge_pid in marked and grandchild not in marked
                return swept_first
            finally:
                cleanup(client, token, groups)

    taken_first(attempt, tmp_path)
