"""One container serving many executions, the pool, and sweeping, against the real engine."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from typing import Any

import pytest
from docker.errors import NotFound

from tasks.sandbox import (
    Limits,
    RunResult,
    SandboxSession,
    SessionJob,
    map_bounded,
    run_once,
    run_sessions,
    sweep,
)
from tests.conftest import ROOT
from tests.tasks.sandbox.conftest import PASSING_TEST, PYTEST
from tests.tasks.sandbox.test_run_once import FORK_BOMB, MEMORY_HOG, NETWORK_PROBE

LEAVE_TRACES = (
    "echo changed > test_ok.py; echo x > mine.txt; echo t > /tmp/t.txt; "
    "echo s > /scratch/stray.txt; sleep 300 </dev/null >/dev/null 2>&1 & echo wrote"
)
LOOK_AROUND = """
import glob, os
print(open("test_ok.py").read(), end="")
print("cwd:", sorted(os.listdir(".")))
print("tmp:", sorted(os.listdir("/tmp")))
print("scratch:", sorted(os.listdir("/scratch")))
argvs = [open(path, "rb").read() for path in glob.glob("/proc/[0-9]*/cmdline")]
print("sleep 300 alive:", argvs.count(b"sleep\\x00300\\x00"))
"""


def _outcome(result: RunResult) -> RunResult:
    """The result without its wall-clock time (the one field that may differ between runs)."""
    return dataclasses.replace(result, duration_s=0.0)


def test_each_execution_gets_a_fresh_workspace(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """Files, /tmp entries and processes left by execution 1 are absent in execution 2."""
    with SandboxSession(run_id=run_id, workspace=PASSING_TEST, client=docker_client) as session:
        first = session.exec(["sh", "-c", LEAVE_TRACES])
        second = session.exec(["python3", "-c", LOOK_AROUND])
        assert session.containers_started == 1
    assert first.output == "wrote\n"
    lines = second.output.splitlines()
    assert lines[:2] == PASSING_TEST["test_ok.py"].splitlines()
    assert lines[2:] == [
        "cwd: ['test_ok.py']",
        "tmp: []",
        "scratch: ['run-2']",
        "sleep 300 alive: 0",
    ], second.output


def test_session_runs_pytest_repeatedly(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """Three repeats of a passing test in one container all pass."""
    with SandboxSession(run_id=run_id, workspace=PASSING_TEST, client=docker_client) as session:
        results = [session.exec(PYTEST, timeout_s=30) for _ in range(3)]
    assert [r.exit_code for r in results] == [0, 0, 0]
    assert all("1 passed" in r.output for r in results)


def test_session_container_is_hardened(docker_client: Any, sandbox_image: str, run_id: str) -> None:
    """The long-lived container has the same hardening as one-shot ones, and it shows inside."""
    with SandboxSession(run_id=run_id, client=docker_client) as session:
        assert session.container_id is not None
        host = docker_client.api.inspect_container(session.container_id)["HostConfig"]
        probe = session.exec(["python3", "-c", NETWORK_PROBE])
        caps = session.exec(["sh", "-c", "id -u; grep CapEff /proc/self/status; touch /etc/x"])
    assert host["ReadonlyRootfs"] is True
    assert host["NetworkMode"] == "none"
    assert host["CapDrop"] == ["ALL"]
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert host["Init"] is True
    assert host["Memory"] == host["MemorySwap"] == Limits().memory_bytes
    assert host["PidsLimit"] == Limits().pids
    assert host["NanoCpus"] == Limits().nano_cpus
    assert set(host["Tmpfs"]) == {"/scratch", "/tmp"}
    assert "connect: failed" in probe.output and "dns: failed" in probe.output
    assert caps.output.splitlines()[:2] == ["10001", "CapEff:\t0000000000000000"]
    assert "Read-only file system" in caps.output


def test_session_deadline_kills_the_execution_and_the_session_goes_on(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """`sleep 1000` is killed at 2 s and reported timed out; the next execution runs normally."""
    with SandboxSession(run_id=run_id, client=docker_client) as session:
        hung = session.exec(["sleep", "1000"], timeout_s=2)
        after = session.exec(["echo", "next"])
        assert session.containers_started == 1
    assert hung.timed_out and hung.exit_code is None
    assert 2 <= hung.duration_s < 6
    assert (after.exit_code, after.output, after.timed_out) == (0, "next\n", False)


def test_session_survives_a_fork_bomb(docker_client: Any, sandbox_image: str, run_id: str) -> None:
    """A fork bomb hits the pids limit, dies at its deadline, and the next execution works."""
    with SandboxSession(run_id=run_id, client=docker_client, limits=Limits(pids=64)) as session:
        bomb = session.exec(["python3", "-c", FORK_BOMB], timeout_s=3)
        after = session.exec(["echo", "next"])
    assert "fork refused: Resource temporarily unavailable" in bomb.output
    assert bomb.timed_out
    assert (after.exit_code, after.output) == (0, "next\n")


def test_session_records_oom_and_goes_on(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """An OOM-killed execution is recorded as such; the next one is not."""
    limits = Limits(memory_bytes=256 * 1024 * 1024)
    with SandboxSession(run_id=run_id, client=docker_client, limits=limits) as session:
        hog = session.exec(["python3", "-c", MEMORY_HOG], timeout_s=60)
        after = session.exec(["echo", "next"])
    assert hog.oom_killed and hog.exit_code == 137
    assert hog.error is not None and "out of memory" in hog.error
    assert (after.oom_killed, after.exit_code, after.error) == (False, 0, None)


def test_execution_that_kills_every_process_is_recorded_and_the_session_goes_on(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """`kill -9 -1` stops the container: the result says so and the next runs in a new one."""
    with SandboxSession(run_id=run_id, client=docker_client) as session:
        killer = session.exec(["sh", "-c", "kill -9 -1; sleep 5"])
        after = session.exec(["echo", "next"])
        assert session.containers_started == 2
    assert killer.error == "the sandbox container stopped during the execution"
    assert (after.exit_code, after.output, after.error) == (0, "next\n", None)


def test_session_output_is_capped(docker_client: Any, sandbox_image: str, run_id: str) -> None:
    """An execution's output keeps head and tail at the session's cap."""
    script = "import sys\nsys.stdout.write('a' * 1000 + 'b' * 1_000_000 + 'c' * 1000)"
    limits = Limits(output_cap_bytes=1000)
    with SandboxSession(run_id=run_id, client=docker_client, limits=limits) as session:
        result = session.exec(["python3", "-c", script])
    assert result.output_truncated_bytes == 1_000_000
    assert result.output == "a" * 1000 + "\n[... 1000000 bytes of output cut ...]\n" + "c" * 1000


def test_sweep_removes_containers_of_a_killed_process(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """A session left by a SIGKILLed process is removed by sweep; live sessions are kept."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.tasks.sandbox.session_proc", run_id],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    container_id = proc.stdout.readline().strip()
    assert container_id, proc.stderr.read() if proc.stderr else ""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert docker_client.containers.get(container_id).status == "running"
    with SandboxSession(run_id=f"{run_id}-live", client=docker_client) as live:
        removed = sweep(docker_client, run_id="some-current-run")
        assert docker_client.containers.get(live.container_id).status == "running"
    assert container_id[:12] in removed
    with pytest.raises(NotFound):
        docker_client.containers.get(container_id)


def test_sessions_give_identical_results_serially_and_in_parallel(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """The same jobs on one worker and on two give the same results, in job order."""
    failing = {"test_bad.py": "def test_bad():\n    assert 1 == 2\n"}
    jobs = [
        SessionJob(
            commands=(
                ("python3", "-c", f"print(sum(range({n})))"),
                ("sh", "-c", "python3 -m pytest -q -p no:cacheprovider >/dev/null; echo rc=$?"),
                ("sh", "-c", "ls; exit 3"),
            ),
            workspace=PASSING_TEST if n % 2 else failing,
            timeout_s=30,
        )
        for n in range(4)
    ]
    serial = run_sessions(jobs, run_id=run_id, client=docker_client, max_workers=1)
    parallel = run_sessions(jobs, run_id=run_id, client=docker_client, max_workers=2)
    assert [[_outcome(r) for r in rs] for rs in serial] == [
        [_outcome(r) for r in rs] for rs in parallel
    ]
    assert [rs[0].output for rs in serial] == ["0\n", "0\n", "1\n", "3\n"]
    assert [rs[1].output for rs in serial] == ["rc=1\n", "rc=0\n", "rc=1\n", "rc=0\n"]
    assert [rs[2].exit_code for rs in serial] == [3, 3, 3, 3]


def test_one_shot_runs_give_identical_results_serially_and_in_parallel(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """run_once over a bounded pool returns the same results as a serial loop, in order."""

    def one(n: int) -> RunResult:
        return run_once(
            ["sh", "-c", f"echo {n}; exit {n}"], run_id=run_id, client=docker_client, timeout_s=30
        )

    serial = map_bounded(one, range(4), max_workers=1)
    parallel = map_bounded(one, range(4), max_workers=2)
    assert [_outcome(r) for r in serial] == [_outcome(r) for r in parallel]
    assert [(r.exit_code, r.output) for r in serial] == [(n, f"{n}\n") for n in range(4)]
