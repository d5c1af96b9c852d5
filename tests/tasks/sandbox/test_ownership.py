"""Owner tokens: parsing, liveness (pid reuse included), claiming, and sweeping a dead run's processes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from tasks.sandbox.engine._ownership import (
    OWNER_ENV,
    Owner,
    claim,
    label_token,
    proc_stat,
    run_owner,
    sweep_processes,
    this_process,
)
from tests.conftest import ROOT

HOST = socket.gethostname()


def running(pid: int) -> bool:
    stat = proc_stat(pid)
    return stat is not None and stat.state not in ("Z", "X")


def token_of(pid: int) -> str:
    stat = proc_stat(pid)
    assert stat is not None
    return f"{HOST}:{pid}:{stat.started}"


@pytest.fixture
def dead_token() -> str:
    """The token of a process that has exited and been reaped."""
    proc = subprocess.Popen(["sleep", "60"])
    token = token_of(proc.pid)
    proc.kill()
    proc.wait()
    return token


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test starts; killed (with their groups when they lead one) afterwards."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


@given(
    host=st.text(st.sampled_from("abcxyz0123-."), min_size=1, max_size=20),
    pid=st.integers(1, 2**22),
    started=st.none() | st.integers(1, 2**40),
)
def test_a_token_round_trips_through_its_text(host: str, pid: int, started: int | None) -> None:
    """Owner.parse(str(owner)) is the owner, with or without a start time."""
    owner = Owner(host, pid, started)
    assert Owner.parse(str(owner)) == owner


@pytest.mark.parametrize(
    "token",
    [None, "", "vm", "vm:", ":12", ":12:34", "vm:0", "vm:12:0", "vm:-1:5", "vm:x:5", "vm:١٢:5",
     "vm:12:34:56", "vm:12:3.5"],
)  # fmt: skip
def test_a_malformed_token_names_no_owner(token: str | None) -> None:
    """Anything but host:pid[:start] with positive ASCII numbers parses to None."""
    assert Owner.parse(token) is None


def test_this_process_is_alive_and_its_token_parses() -> None:
    """The process's own token names a live owner."""
    me = this_process()
    assert me.pid == os.getpid() and me.started is not None
    assert Owner.parse(str(me)) == me and not me.is_dead()


def test_the_same_pid_with_another_start_time_is_dead() -> None:
    """Pid reuse: a live pid whose process started at another time is not the owner."""
    me = this_process()
    assert me.started is not None
    assert Owner(me.host, me.pid, me.started + 1).is_dead()
    assert Owner(me.host, me.pid, me.started - 1).is_dead()


def test_an_exited_process_is_dead(dead_token: str) -> None:
    """A reaped owner is dead."""
    owner = Owner.parse(dead_token)
    assert owner is not None and owner.is_dead()


def test_a_zombie_is_dead(spawned: list[subprocess.Popen[str]]) -> None:
    """An owner that has exited but was not reaped yet is dead."""
    proc = subprocess.Popen(["true"], text=True)
    spawned.append(proc)
    for _ in range(200):
        stat = proc_stat(proc.pid)
        if stat is not None and stat.state == "Z":
            break
        time.sleep(0.01)
    assert Owner(HOST, proc.pid).is_dead()


def test_an_owner_on_another_host_is_never_dead(dead_token: str) -> None:
    """Another host's pids mean nothing here: its leftovers are not this host's to judge."""
    owner = Owner.parse(dead_token)
    assert owner is not None
    assert not Owner(f"not-{HOST}", owner.pid, owner.started).is_dead()


def test_a_label_without_start_time_is_told_by_when_the_object_was_made() -> None:
    """host:pid of a live pid: alive if the object was made after it started, dead if before."""
    legacy = Owner(HOST, os.getpid())
    assert not legacy.is_dead() and not legacy.is_dead(made_at=time.time())
    assert legacy.is_dead(made_at=time.time() - 3600 * 24 * 365 * 30)


def test_run_owner_is_the_inherited_token_else_this_process(
    monkeypatch: pytest.MonkeyPatch, dead_token: str
) -> None:
    """A run's descendant labels with its run's token; a malformed or missing one is ignored."""
    monkeypatch.setenv(OWNER_ENV, dead_token)
    assert str(run_owner()) == dead_token
    assert label_token() == dead_token.rsplit(":", 1)[0]
    monkeypatch.setenv(OWNER_ENV, "garbage")
    assert run_owner() == this_process()
    monkeypatch.delenv(OWNER_ENV)
    assert run_owner() == this_process()


def test_claim_overwrites_an_inherited_token_and_children_inherit_it(
    monkeypatch: pytest.MonkeyPatch, dead_token: str
) -> None:
    """After claim(), a child process starts with this process's token in its environment."""
    monkeypatch.setenv(OWNER_ENV, dead_token)
    owner = claim()
    assert owner == this_process() and os.environ[OWNER_ENV] == str(owner)
    child = subprocess.run(
        ["sh", "-c", f'printf %s "${OWNER_ENV}"'], capture_output=True, text=True, check=True
    )
    assert child.stdout == str(owner)


# A dead run as bughunt leaves one: a "judge" in a session of its own with a grandchild that
# dropped the variable, a "server" in the run's process group. Prints their pids.
DEAD_RUN = """
import os, subprocess, sys, time
from tasks.sandbox.engine._ownership import claim
claim()
judge = subprocess.Popen(
    [sys.executable, "-c", "import subprocess, time\\n"
     "g = subprocess.Popen(['sleep', '300'], env={})\\nprint(g.pid, flush=True)\\ntime.sleep(300)"],
    start_new_session=True, stdout=subprocess.PIPE, text=True,
)
grandchild = judge.stdout.readline().strip()
server = subprocess.Popen(["sleep", "300"])
print(judge.pid, grandchild, server.pid, flush=True)
time.sleep(300)
"""


def _start(
    spawned: list[subprocess.Popen[str]], argv: list[str], **kw: Any
) -> subprocess.Popen[str]:
    proc: subprocess.Popen[str] = subprocess.Popen(argv, cwd=ROOT, text=True, **kw)
    spawned.append(proc)
    return proc


def test_sweep_kills_a_dead_runs_processes_and_spares_the_living(
    spawned: list[subprocess.Popen[str]],
) -> None:
    """The dead run's judge, its grandchild and its server go; a live run and bystanders stay."""
    run = _start(
        spawned, [sys.executable, "-c", DEAD_RUN], stdout=subprocess.PIPE, start_new_session=True
    )
    assert run.stdout is not None
    judge, grandchild, server = map(int, run.stdout.readline().split())
    dead = token_of(run.pid)
    live = _start(spawned, [sys.executable, "-c", "import time; time.sleep(300)"])
    live_child = _start(spawned, ["sleep", "300"], env={OWNER_ENV: token_of(live.pid)})
    # A dead run's process in a group led by a live shell: only the process goes.
    shell = _start(
        spawned,
        ["sh", "-c", f"{OWNER_ENV}={dead} sleep 300 & sleep 300 & wait"],
        start_new_session=True,
    )
    # A process older than the owner its token names cannot descend from it.
    older = _start(spawned, ["sleep", "300"], env={OWNER_ENV: f"{dead.rsplit(':', 1)[0]}:{2**40}"})
    time.sleep(0.3)  # the shell's children exist
    members = {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()}
    shell_kids = {p for p in members if (s := proc_stat(p)) and s.ppid == shell.pid}
    in_shell_with_token = {p for p in shell_kids if _env_token(p) == dead}
    assert len(shell_kids) == 2 and len(in_shell_with_token) == 1
    os.kill(run.pid, signal.SIGKILL)
    run.wait()

    swept = sweep_processes()

    gone = {judge, grandchild, server, *in_shell_with_token}
    assert gone <= set(swept) and not any(running(p) for p in gone)
    survivors = {live.pid, live_child.pid, shell.pid, older.pid, *(shell_kids - gone)}
    assert all(running(p) for p in survivors) and not survivors & set(swept)
    os.killpg(shell.pid, signal.SIGKILL)


def _env_token(pid: int) -> str | None:
    try:
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    values = [e.split(b"=", 1)[1].decode() for e in env if e.startswith(OWNER_ENV.encode() + b"=")]
    return values[0] if values else None


def test_sweep_spares_the_sweeping_process_and_its_ancestors(
    spawned: list[subprocess.Popen[str]], dead_token: str
) -> None:
    """A sweep run by a dead run's descendant kills neither itself nor its parent."""
    code = "from tasks.sandbox.engine._ownership import sweep_processes; print(sweep_processes())"
    shell = _start(
        spawned,
        ["sh", "-c", f'"{sys.executable}" -c "{code}"; echo done'],
        env={**os.environ, OWNER_ENV: dead_token},
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    out, _ = shell.communicate(timeout=60)
    assert shell.returncode == 0 and out.splitlines()[-1] == "done"
    assert str(shell.pid) not in out.splitlines()[0]
