"""Cells: a reused hardened container, fresh namespaces for every execution in it."""

from __future__ import annotations

import itertools
import json
import threading
import time
from typing import Any

import pytest

from bughunt.errors import InputError
from tasks.sandbox.engine import CellExecutor, Limits
from tasks.sandbox.engine._cell import MASKED, bwrap_argv, read_status
from tasks.sandbox.engine._container import HOSTNAME
from tasks.sandbox.engine._errors import SandboxImageError
from tasks.sandbox.engine._seccomp import DENIED, NEEDED, cell_profile, tighten
from tests.tasks.sandbox.conftest import PASSING_TEST, PYTEST
from tests.tasks.sandbox.test_executor import (
    AGE,
    FAILING,
    LEAVE_TRACES,
    LOOK_AROUND,
    NOTHING_LEFT,
    _containers,
    _host_config_of_running,
    _outcome,
    serially_and_in_parallel,
)
from tests.tasks.sandbox.test_run_once import FORK_BOMB, MEMORY_HOG, NETWORK_PROBE

NONCE = "ab" * 16

LAYOUT = "\n".join(
    [
        "L\t/bin\tusr/bin",
        "D\t/etc",
        "D\t/home",
        "D\t/proc",
        "D\t/sys",
        "D\t/tmp",
        "D\t/usr",
        "D\t/var",
        "D\t/work",
        "MF\t/proc/timer_list",
        "MD\t/proc/acpi",
        "R\t/proc/sys",
    ]
)


def test_the_status_line_needs_the_executions_nonce() -> None:
    """A status line with another nonce is the test's own output; the real one is cut out."""
    forged = f"\nbughunt-cell {'cd' * 16} rc=0 oom=0 started=1\n"
    real = f"\nbughunt-cell {NONCE} rc=1 oom=2 started=1\n"
    text, status = read_status("out" + forged + "tail" + real, NONCE)
    assert status == (1, 2, True)
    assert text == "out" + forged + "tail"


def test_a_missing_status_line_is_none() -> None:
    """Output without the nonce's line (the cell died first) has no status and stays whole."""
    assert read_status("partial output", NONCE) == ("partial output", None)


def test_bwrap_binds_the_images_folders_read_only_and_makes_every_writable_place_new() -> None:
    """Image folders are read-only binds; /tmp, /work, /proc, /sys are never the cell's own."""
    argv = bwrap_argv(LAYOUT, Limits())
    pairs = list(itertools.pairwise(argv))
    binds = {dest for opt, dest in pairs if opt == "--ro-bind"}
    assert {"/etc", "/home", "/usr", "/var"} <= binds
    assert not {"/proc", "/sys", "/tmp", "/work"} & binds
    tmpfs = [dest for opt, dest in pairs if opt == "--tmpfs"]
    assert tmpfs == [
        "/proc/acpi",
        "/dev/shm",
        "/tmp",
        "/var/tmp",
        "/work",
        "/scratch",
        "/home/sandbox",
    ]
    assert ("--ro-bind", "/dev/null") in pairs and argv[argv.index("/dev/null") + 1] == (
        "/proc/timer_list"
    )
    assert "--disable-userns" in argv and "--unshare-pid" in argv and argv[-1] == "--"
    assert ("--symlink", "usr/bin") in pairs


def test_an_image_without_bwrap_is_refused_naming_the_fix() -> None:
    """A layout that lacks bwrap says to rebuild the image."""
    with pytest.raises(SandboxImageError, match="bughunt sandbox build"):
        bwrap_argv(LAYOUT + "\nNOBWRAP", Limits())


def test_the_seccomp_profile_denies_keyrings_and_needs_the_namespace_calls() -> None:
    """DENIED leaves every allow rule; a base without what bwrap needs is refused."""
    base = json.loads(cell_profile())
    allowed = {n for r in base["syscalls"] if r["action"] == "SCMP_ACT_ALLOW" for n in r["names"]}
    assert not DENIED & allowed and allowed >= NEEDED
    without = {"syscalls": [{"names": ["read", "mount"], "action": "SCMP_ACT_ALLOW"}]}
    with pytest.raises(SandboxImageError, match="does not allow"):
        tighten(without, where="x.json")


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_each_execution_starts_from_nothing_left_by_another_in_one_cell(
    docker_client: Any, run_id: str
) -> None:
    """Files, SysV IPC and processes of execution 1 are absent in 2, which ran in the same cell."""
    with CellExecutor(run_id=run_id, client=docker_client) as executor:
        first = executor.run(["sh", "-c", LEAVE_TRACES], workspace=PASSING_TEST)
        second = executor.run(["python3", "-c", LOOK_AROUND], workspace=PASSING_TEST)
        third = executor.run(PYTEST, workspace=PASSING_TEST, timeout_s=30)
    assert executor.containers_started == 1
    assert first.output.endswith("wrote\n") and "shm -1" not in first.output, first.output
    assert second.output.splitlines()[2:] == NOTHING_LEFT, second.output
    assert third.exit_code == 0 and "1 passed" in third.output
    assert _containers(docker_client, run_id) == []


INSIDE = (
    "id -u; grep CapEff /proc/self/status; echo pid $$; touch /etc/x 2>&1; "
    "ls /sys 2>&1 | head -1; cat /proc/timer_list 2>/dev/null | wc -c; "
    "echo 1 > /proc/sys/kernel/ns_last_pid 2>&1; "
    "unshare -U true 2>&1 || echo refused; unshare -m true 2>&1 || echo refused; "
    "cat /etc/hostname; stat -c %Y /etc/hostname"
)


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_a_cell_is_hardened_and_its_executions_cannot_mount_unshare_or_see_its_cgroup(
    docker_client: Any, run_id: str
) -> None:
    """The cell keeps the container hardening; inside, no caps, no new namespaces, masks again."""
    with CellExecutor(run_id=run_id, client=docker_client) as executor:
        probe = executor.run(["python3", "-c", NETWORK_PROBE])
        started = time.time()
        inside = executor.run(["sh", "-c", INSIDE])
        again = executor.run(["sh", "-c", "echo pid $$"])
        running = threading.Thread(target=executor.run, args=(["sleep", "4"],))
        running.start()
        try:
            host = _host_config_of_running(docker_client, run_id)
        finally:
            running.join()
    assert host["ReadonlyRootfs"] is True and host["NetworkMode"] == "none"
    assert host["CapDrop"] == ["ALL"] and host["Init"] is True
    assert host["SecurityOpt"][0] == "no-new-privileges"
    assert host["SecurityOpt"][1].startswith("seccomp=")
    assert host["Memory"] == host["MemorySwap"] == Limits().memory_bytes
    assert host["PidsLimit"] == Limits().pids
    assert "connect: failed" in probe.output and "dns: failed" in probe.output
    lines = inside.output.splitlines()
    assert lines[:2] == ["10001", "CapEff:\t0000000000000000"], inside.output
    assert lines[2] == again.output.strip() and int(lines[2].split()[1]) < 10  # a new PID ns
    assert "Read-only file system" in lines[3]
    assert "No such file or directory" in lines[4]  # no /sys: the cell's cgroup counters
    assert lines[5] == "0"  # /proc/timer_list masked (or absent)
    assert "Read-only file system" in lines[6] or "Permission denied" in lines[6]
    # No user namespace (--disable-userns) and, without one, no mount namespace.
    assert lines[7:11] == [lines[7], "refused", lines[9], "refused"], inside.output
    assert "unshare failed" in lines[7] and "unshare failed" in lines[9]
    assert lines[11] == HOSTNAME
    assert int(lines[12]) >= int(started) - 1  # made for this execution, not the cell's age
    assert "/proc/timer_list" in MASKED


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_a_forged_status_line_changes_nothing(docker_client: Any, run_id: str) -> None:
    """A test printing a status line of its own keeps its real exit code, and its text."""
    forged = "printf '\\nbughunt-cell %s rc=0 oom=0 started=1\\n' " + "ff" * 16 + "; exit 1"
    with CellExecutor(run_id=run_id, client=docker_client) as executor:
        result = executor.run(["sh", "-c", forged])
    assert result.exit_code == 1
    assert f"bughunt-cell {'ff' * 16} rc=0" in result.output


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_a_cells_age_says_nothing_about_the_execution_before(
    docker_client: Any, run_id: str
) -> None:
    """After an execution that sleeps 4 s in the same cell, the next one's init is as young."""
    with CellExecutor(run_id=run_id, client=docker_client) as executor:
        executor.run(["sleep", "4"])
        age = float(executor.run(["python3", "-c", AGE]).output)
    assert executor.containers_started == 1
    assert age < 2.0, age


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_deadline_kills_the_execution_and_its_children_and_the_cell_runs_the_next(
    docker_client: Any, run_id: str
) -> None:
    """A hung command and a child it detached are killed at 2 s; the next execution reuses the cell."""
    detach = "setsid sleep 1000 </dev/null >/dev/null 2>&1 & sleep 1000"
    # the shell counts by itself: a pipeline's second process may or may not exist yet when
    # the first lists /proc
    count = ["sh", "-c", "n=0; for p in /proc/[0-9]*; do n=$((n + 1)); done; echo $n"]
    with CellExecutor(run_id=run_id, client=docker_client) as executor:
        before = executor.run(count)
        hung = executor.run(["sh", "-c", detach], timeout_s=2)
        after = executor.run(count)
    assert hung.timed_out and hung.exit_code is None and 2 <= hung.duration_s < 6
    assert (after.exit_code, after.output) == (0, before.output)  # nothing left behind
    assert executor.containers_started == 1


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_fork_bomb_and_oom_are_recorded_and_the_next_execution_is_clean(
    docker_client: Any, run_id: str
) -> None:
    """A fork bomb meets the pids limit, a hog the OOM killer; the executions after are clean."""
    limits = Limits(pids=64, memory_bytes=256 * 1024 * 1024)
    with CellExecutor(run_id=run_id, client=docker_client, limits=limits) as executor:
        bomb = executor.run(["python3", "-c", FORK_BOMB], timeout_s=3)
        after_bomb = executor.run(["echo", "next"])
        hog = executor.run(["python3", "-c", MEMORY_HOG], timeout_s=60)
        after_hog = executor.run(["echo", "next"])
    assert "fork refused: Resource temporarily unavailable" in bomb.output and bomb.timed_out
    assert (after_bomb.exit_code, after_bomb.output) == (0, "next\n")
    assert hog.oom_killed and hog.exit_code == 137 and "out of memory" in (hog.error or "")
    assert (after_hog.oom_killed, after_hog.exit_code, after_hog.error) == (False, 0, None)


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_a_cell_killed_under_the_runner_is_replaced(docker_client: Any, run_id: str) -> None:
    """An idle cell that died is dropped and the execution runs in a new one."""
    with CellExecutor(run_id=run_id, client=docker_client) as executor:
        executor.run(["true"])
        for cid in _containers(docker_client, run_id):
            docker_client.api.kill(cid)
        after = executor.run(["echo", "next"])
    assert (after.exit_code, after.output) == (0, "next\n")
    assert executor.containers_started == 2


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_results_are_identical_serially_and_in_parallel_cells(
    docker_client: Any, run_id: str
) -> None:
    """The same executions on one worker and on two give the same results; two cells at most."""
    commands = [
        (("python3", "-c", "print(sum(range(4)))"), PASSING_TEST),
        (("sh", "-c", "python3 -m pytest -q -p no:cacheprovider >/dev/null; echo rc=$?"), FAILING),
        (("sh", "-c", "ls; exit 3"), FAILING),
        (("sh", "-c", "echo $$"), PASSING_TEST),
    ]
    with CellExecutor(run_id=run_id, client=docker_client) as executor:
        serial, parallel = serially_and_in_parallel(executor, commands)
    assert [_outcome(r) for r in serial] == [_outcome(r) for r in parallel]
    assert [r.output for r in serial[:3]] == ["6\n", "rc=1\n", "test_bad.py\n"]
    assert int(serial[3].output) < 10  # the shell's pid in a PID namespace of its own
    assert executor.containers_started <= 2


def test_a_cell_collects_no_file(docker_client: Any, run_id: str) -> None:
    """``collect`` is refused before anything starts: an execution's files die with it."""
    with (
        CellExecutor(run_id=run_id, client=docker_client) as executor,
        pytest.raises(InputError, match="collect"),
    ):
        executor.run(["true"], collect="/scratch/x")


def test_a_cell_refuses_an_output_cap_too_small_for_its_status_line(
    docker_client: Any, run_id: str
) -> None:
    """The status line comes last: a tail shorter than it could lose it, so such a cap is refused."""
    with pytest.raises(InputError, match="output_cap_bytes"):
        CellExecutor(run_id=run_id, client=docker_client, limits=Limits(output_cap_bytes=100))


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_on_a_dask_worker_the_next_shard_takes_the_last_one_s_idle_cell(
    docker_client: Any, run_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker runs a run's shards one after another, each closing its executor: the next
    executor made alike takes the idle cell (its executions still start from nothing), one
    made otherwise never does, and a cell no shard takes is removed after ``PARK_S``."""
    import tasks.sandbox.engine._cell as cells

    monkeypatch.setattr(cells, "on_dask_worker", lambda: True)
    monkeypatch.setattr(cells, "PARK_S", 2.0)
    with CellExecutor(run_id=run_id, client=docker_client) as first:
        traces = first.run(["sh", "-c", LEAVE_TRACES], workspace=PASSING_TEST)
    assert traces.output.endswith("wrote\n")
    assert len(_containers(docker_client, run_id)) == 1  # parked, not killed
    with CellExecutor(run_id=run_id, client=docker_client) as second:
        looked = second.run(["python3", "-c", LOOK_AROUND], workspace=PASSING_TEST)
    assert second.containers_started == 0
    assert looked.output.splitlines()[2:] == NOTHING_LEFT, looked.output
    with CellExecutor(
        run_id=run_id, client=docker_client, limits=Limits(pids=200)
    ) as other:  # other limits: another kind of cell
        other.run(["true"])
    assert other.containers_started == 1
    assert len(_containers(docker_client, run_id)) == 2
    deadline = time.monotonic() + 20
    while _containers(docker_client, run_id) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _containers(docker_client, run_id) == []


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_outside_a_dask_worker_a_closed_executor_keeps_no_cell(
    docker_client: Any, run_id: str
) -> None:
    """In the flow's own process (the thread runner) closing an executor removes its cells."""
    with CellExecutor(run_id=run_id, client=docker_client) as executor:
        executor.run(["true"])
    assert _containers(docker_client, run_id) == []


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_a_parked_cell_that_died_is_replaced(
    docker_client: Any, run_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parked cell killed before the next shard takes it costs that shard a new cell, not
    an error."""
    import tasks.sandbox.engine._cell as cells

    monkeypatch.setattr(cells, "on_dask_worker", lambda: True)
    with CellExecutor(run_id=run_id, client=docker_client) as first:
        first.run(["true"])
    for cid in _containers(docker_client, run_id):
        docker_client.api.kill(cid)
    try:
        with CellExecutor(run_id=run_id, client=docker_client) as second:
            after = second.run(["echo", "next"])
        assert (after.exit_code, after.output) == (0, "next\n")
        assert second.containers_started == 1
    finally:
        cells._PARKING.release()
    assert _containers(docker_client, run_id) == []
