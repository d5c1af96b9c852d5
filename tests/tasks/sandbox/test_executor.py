"""Every execution in a never-used container, started when needed; and sweeping."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest
from docker.errors import NotFound

from tasks.sandbox.engine import ExecResult, Executor, Limits, map_bounded
from tasks.sandbox.engine._container import HOSTNAME
from tasks.sandbox.engine._executor import run_once
from tasks.sandbox.engine._labels import LABEL, RUN_LABEL
from tasks.sandbox.engine._sweep import sweep
from tests.conftest import ROOT
from tests.tasks.sandbox.conftest import PASSING_TEST, PYTEST
from tests.tasks.sandbox.test_run_once import FORK_BOMB, MEMORY_HOG, NETWORK_PROBE

LEAVE_TRACES = (
    "echo changed > test_ok.py; echo x > mine.txt; for d in /tmp /var/tmp $HOME /dev/shm /scratch; "
    "do echo t > $d/trace; done; python3 -c 'import ctypes; l = ctypes.CDLL(None); "
    'print("shm", l.shmget(4242, 4096, 0o1600))\'; '
    "sleep 300 </dev/null >/dev/null 2>&1 & echo wrote"
)
LOOK_AROUND = """
import glob, os
print(open("test_ok.py").read(), end="")
print("cwd:", os.getcwd(), sorted(os.listdir(".")))
for d in ["/tmp", "/var/tmp", os.environ["HOME"], "/dev/shm", "/dev/mqueue", "/scratch"]:
    print(d, sorted(os.listdir(d)))
print("sysv:", len(open("/proc/sysvipc/shm").read().splitlines()) - 1)
argvs = [open(path, "rb").read() for path in glob.glob("/proc/[0-9]*/cmdline")]
print("sleep 300 alive:", argvs.count(b"sleep\\x00300\\x00"))
print("host:", os.uname().nodename)
"""


NOTHING_LEFT = [
    "cwd: /work ['test_ok.py']",
    "/tmp []",
    "/var/tmp []",
    "/home/sandbox []",
    "/dev/shm []",
    "/dev/mqueue []",
    "/scratch []",
    "sysv: 0",
    "sleep 300 alive: 0",
    f"host: {HOSTNAME}",
]
"""What LOOK_AROUND prints (after the test file) where no earlier execution left anything."""


def _outcome(result: ExecResult) -> ExecResult:
    """The result without its wall-clock time (the one field that may differ between runs)."""
    return dataclasses.replace(result, duration_s=0.0)


def _containers(client: Any, run_id: str) -> list[str]:
    """Ids of the run's containers (the low-level call: no inspect that races a removal)."""
    labels = [f"{LABEL}=1", f"{RUN_LABEL}={run_id}"]
    return [c["Id"] for c in client.api.containers(all=True, filters={"label": labels})]


def _wait_for_container(client: Any, run_id: str) -> None:
    for _attempt in range(200):
        if _containers(client, run_id):
            return
        time.sleep(0.05)
    raise AssertionError(f"no container of run {run_id} appeared")


def _host_config_of_running(client: Any, run_id: str) -> dict[str, Any]:
    """HostConfig of the run's running container, once it runs (used ones are being removed)."""
    labels = [f"{LABEL}=1", f"{RUN_LABEL}={run_id}"]
    for _attempt in range(400):
        for c in client.api.containers(filters={"label": labels, "status": "running"}):
            try:
                return dict(client.api.inspect_container(c["Id"])["HostConfig"])
            except NotFound:
                continue
        time.sleep(0.05)
    raise AssertionError(f"no running container of run {run_id} appeared")


@pytest.mark.usefixtures("sandbox_image")
def test_each_execution_starts_from_nothing_left_by_another(
    docker_client: Any, run_id: str
) -> None:
    """Files in every writable place, SysV IPC and processes of execution 1 are absent in 2."""
    with Executor(run_id=run_id, client=docker_client) as executor:
        first = executor.run(["sh", "-c", LEAVE_TRACES], workspace=PASSING_TEST)
        second = executor.run(["python3", "-c", LOOK_AROUND], workspace=PASSING_TEST)
    assert first.output.endswith("wrote\n"), first.output
    assert "shm -1" not in first.output, first.output  # the segment was made
    lines = second.output.splitlines()
    assert lines[:2] == PASSING_TEST["test_ok.py"].splitlines()
    assert lines[2:] == NOTHING_LEFT, second.output


@pytest.mark.usefixtures("sandbox_image")
def test_every_execution_gets_a_container_of_its_own_and_all_are_removed(
    docker_client: Any, run_id: str
) -> None:
    """Three executions use three containers; each is gone once the executor closes."""
    with Executor(run_id=run_id, client=docker_client) as executor:
        results = [executor.run(PYTEST, workspace=PASSING_TEST, timeout_s=30) for _ in range(3)]
    assert [r.exit_code for r in results] == [0, 0, 0]
    assert all("1 passed" in r.output for r in results)
    assert executor.containers_started == 3
    assert _containers(docker_client, run_id) == []


@pytest.mark.usefixtures("sandbox_image")
def test_execution_container_is_hardened(docker_client: Any, run_id: str) -> None:
    """Every container is hardened, and it shows inside."""
    with Executor(run_id=run_id, client=docker_client) as executor:
        probe = executor.run(["python3", "-c", NETWORK_PROBE])
        caps = executor.run(  # all on stdout: the engine may forward stderr frames first
            ["sh", "-c", "id -u; grep CapEff /proc/self/status; touch /etc/x 2>&1"]
        )
        running = threading.Thread(target=executor.run, args=(["sleep", "4"],))
        running.start()
        try:
            host = _host_config_of_running(docker_client, run_id)
        finally:
            running.join()
    assert host["ReadonlyRootfs"] is True
    assert host["NetworkMode"] == "none"
    assert host["IpcMode"] == "private"
    assert host["CapDrop"] == ["ALL"]
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert host["Init"] is True
    assert host["Memory"] == host["MemorySwap"] == Limits().memory_bytes
    assert host["PidsLimit"] == Limits().pids
    assert host["NanoCpus"] == Limits().nano_cpus
    assert host["ShmSize"] == Limits().shm_bytes
    assert set(host["Tmpfs"]) == {"/work", "/scratch", "/tmp", "/var/tmp", "/home/sandbox"}
    assert "connect: failed" in probe.output and "dns: failed" in probe.output
    assert caps.output.splitlines()[:2] == ["10001", "CapEff:\t0000000000000000"]
    assert "Read-only file system" in caps.output


@pytest.mark.usefixtures("sandbox_image")
def test_deadline_kills_the_execution_and_the_next_one_runs(
    docker_client: Any, run_id: str
) -> None:
    """`sleep 1000` is killed at 2 s and reported timed out; the next execution runs normally."""
    with Executor(run_id=run_id, client=docker_client) as executor:
        hung = executor.run(["sleep", "1000"], timeout_s=2)
        after = executor.run(["echo", "next"])
    assert hung.timed_out and hung.exit_code is None
    assert 2 <= hung.duration_s < 6
    assert (after.exit_code, after.output, after.timed_out) == (0, "next\n", False)


@pytest.mark.usefixtures("sandbox_image")
def test_background_child_holding_the_output_does_not_stall_the_execution(
    docker_client: Any, run_id: str
) -> None:
    """A command that exits while a child it left still holds stdout ends in well under its deadline."""
    with Executor(run_id=run_id, client=docker_client) as executor:
        result = executor.run(["sh", "-c", "sleep 300 & echo done"], timeout_s=30)
    assert (result.exit_code, result.output, result.timed_out) == (0, "done\n", False)
    assert result.duration_s < 5


@pytest.mark.usefixtures("sandbox_image")
def test_fork_bomb_is_contained_and_the_next_execution_works(
    docker_client: Any, run_id: str
) -> None:
    """A fork bomb hits the pids limit, dies at its deadline, and the next execution works."""
    with Executor(run_id=run_id, client=docker_client, limits=Limits(pids=64)) as executor:
        bomb = executor.run(["python3", "-c", FORK_BOMB], timeout_s=3)
        after = executor.run(["echo", "next"])
    assert "fork refused: Resource temporarily unavailable" in bomb.output
    assert bomb.timed_out
    assert (after.exit_code, after.output) == (0, "next\n")


@pytest.mark.usefixtures("sandbox_image")
def test_oom_is_recorded_and_the_next_execution_is_not(docker_client: Any, run_id: str) -> None:
    """An OOM-killed execution is recorded as such; the next one is not."""
    limits = Limits(memory_bytes=256 * 1024 * 1024)
    with Executor(run_id=run_id, client=docker_client, limits=limits) as executor:
        hog = executor.run(["python3", "-c", MEMORY_HOG], timeout_s=60)
        after = executor.run(["echo", "next"])
    assert hog.oom_killed and hog.exit_code == 137
    assert hog.error is not None and "out of memory" in hog.error
    assert (after.oom_killed, after.exit_code, after.error) == (False, 0, None)


@pytest.mark.usefixtures("sandbox_image")
def test_execution_that_kills_every_process_is_recorded_and_the_next_runs(
    docker_client: Any, run_id: str
) -> None:
    """`kill -9 -1` ends the execution with a kill; the next one runs in another container."""
    with Executor(run_id=run_id, client=docker_client) as executor:
        killer = executor.run(["sh", "-c", "kill -9 -1; sleep 5"])
        after = executor.run(["echo", "next"])
    assert killer.exit_code != 0 and not killer.timed_out
    assert (after.exit_code, after.output, after.error) == (0, "next\n", None)


@pytest.mark.usefixtures("sandbox_image")
def test_output_is_capped(docker_client: Any, run_id: str) -> None:
    """An execution's output keeps head and tail at the cap."""
    script = "import sys\nsys.stdout.write('a' * 1000 + 'b' * 1_000_000 + 'c' * 1000)"
    limits = Limits(output_cap_bytes=1000)
    with Executor(run_id=run_id, client=docker_client, limits=limits) as executor:
        result = executor.run(["python3", "-c", script])
    assert result.output_truncated_bytes == 1_000_000
    assert result.output == "a" * 1000 + "\n[... 1000000 bytes of output cut ...]\n" + "c" * 1000


@pytest.mark.usefixtures("sandbox_image")
def test_a_file_left_by_the_command_is_collected_after_it_ends(
    docker_client: Any, run_id: str
) -> None:
    """``collect`` reads the named file once the command has ended; a missing one is None."""
    with Executor(run_id=run_id, client=docker_client) as executor:
        wrote = executor.run(
            ["sh", "-c", "printf '{\"a\": 1}' > /scratch/out.json; echo noise"],
            collect="/scratch/out.json",
        )
        nothing = executor.run(["true"], collect="/scratch/out.json")
    assert wrote.collected == b'{"a": 1}' and wrote.output == "noise\n"
    assert nothing.collected is None


@pytest.mark.usefixtures("sandbox_image")
def test_sweep_removes_containers_of_a_killed_process(docker_client: Any, run_id: str) -> None:
    """Containers left by a SIGKILLed process are removed by sweep; a live run's are kept."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.tasks.sandbox.executor_proc", run_id],
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
    live_run = f"{run_id}-live"
    with Executor(run_id=live_run, client=docker_client) as live:
        running = threading.Thread(target=live.run, args=(["sleep", "4"],))
        running.start()
        _wait_for_container(docker_client, live_run)
        removed = sweep(docker_client, run_id="some-current-run")
        assert _containers(docker_client, live_run) != []
        running.join()
    assert container_id[:12] in removed
    with pytest.raises(NotFound):
        docker_client.containers.get(container_id)


FAILING = {"test_bad.py": "def test_bad():\n    assert 1 == 2\n"}


def serially_and_in_parallel(
    executor: Executor, commands: Sequence[tuple[tuple[str, ...], dict[str, str]]]
) -> tuple[list[ExecResult], list[ExecResult]]:
    """Each ``(command, workspace)`` run on one worker, then on two."""

    def one(item: tuple[tuple[str, ...], dict[str, str]]) -> ExecResult:
        return executor.run(item[0], workspace=item[1], timeout_s=30)

    return map_bounded(one, commands, max_workers=1), map_bounded(one, commands, max_workers=2)


@pytest.mark.usefixtures("sandbox_image")
def test_results_are_identical_serially_and_in_parallel(docker_client: Any, run_id: str) -> None:
    """The same executions on one worker and on two give the same results, in order."""
    commands = [
        (("python3", "-c", "print(sum(range(4)))"), PASSING_TEST),
        (("sh", "-c", "python3 -m pytest -q -p no:cacheprovider >/dev/null; echo rc=$?"), FAILING),
        (
            ("sh", "-c", "python3 -m pytest -q -p no:cacheprovider >/dev/null; echo rc=$?"),
            PASSING_TEST,
        ),
        (("sh", "-c", "ls; exit 3"), FAILING),
    ]
    with Executor(run_id=run_id, client=docker_client) as executor:
        serial, parallel = serially_and_in_parallel(executor, commands)
    assert [_outcome(r) for r in serial] == [_outcome(r) for r in parallel]
    assert [r.output for r in serial] == ["6\n", "rc=1\n", "rc=0\n", "test_bad.py\n"]


@pytest.mark.usefixtures("sandbox_image")
def test_one_shot_runs_give_identical_results_serially_and_in_parallel(
    docker_client: Any, run_id: str
) -> None:
    """run_once over a bounded pool returns the same results as a serial loop, in order."""

    def one(n: int) -> ExecResult:
        return run_once(
            ["sh", "-c", f"echo {n}; exit {n}"], run_id=run_id, client=docker_client, timeout_s=30
        )

    serial = map_bounded(one, range(4), max_workers=1)
    parallel = map_bounded(one, range(4), max_workers=2)
    assert [_outcome(r) for r in serial] == [_outcome(r) for r in parallel]
    assert [(r.exit_code, r.output) for r in serial] == [(n, f"{n}\n") for n in range(4)]


AGE = (
    "import os\n"
    "def start(pid):\n"
    "    return int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[19])\n"
    "print((start('self') - start('1')) / os.sysconf('SC_CLK_TCK'))\n"
)


@pytest.mark.usefixtures("sandbox_image")
def test_a_containers_age_says_nothing_about_the_execution_before(
    docker_client: Any, run_id: str
) -> None:
    """After an execution that sleeps 4 s, the next one's container is as young as ever."""
    with Executor(run_id=run_id, client=docker_client) as executor:
        executor.run(["sleep", "4"])
        age = float(executor.run(["python3", "-c", AGE]).output)
    assert age < 2.0, age
