"""One container per execution, against the real engine: hardening, limits, deadlines, output."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from bughunt.errors import InputError
from tasks.sandbox.engine import Limits
from tasks.sandbox.engine._container import UNPACK_FAILED
from tasks.sandbox.engine._errors import SandboxImageError
from tasks.sandbox.engine._executor import ContainerSpec, run_once
from tasks.sandbox.engine._labels import LABEL, RUN_LABEL
from tests.tasks.sandbox.conftest import PASSING_TEST, PYTEST

NETWORK_PROBE = """
import socket
try:
    socket.create_connection(("1.1.1.1", 53), timeout=3)
    print("connect: reached")
except OSError as exc:
    print("connect: failed", exc.strerror)
try:
    socket.getaddrinfo("example.com", 443)
    print("dns: resolved")
except OSError as exc:
    print("dns: failed", exc.strerror)
print(open("/proc/net/dev").read())
"""

WRITE_PROBE = """
for path in ["/etc/x", "/usr/x", "/x", "/opt/x", "/scratch/x", "/tmp/x", "/var/tmp/x",
             "/home/sandbox/x", "/dev/shm/x", "here.txt"]:
    try:
        with open(path, "w") as handle:
            handle.write("x")
        print("wrote", path)
    except OSError as exc:
        print("refused", path, exc.strerror)
"""

FORK_BOMB = """
import os, time
refused = False
while True:
    try:
        os.fork()
    except OSError as exc:
        if not refused:
            refused = True
            print("fork refused:", exc.strerror, flush=True)
        time.sleep(0.05)
"""

MEMORY_HOG = "x = 'x' * (2 * 1024**3)\nprint('allocated', len(x))"

FLOOD = """
import sys
sys.stdout.write("BEGIN\\n")
line = "y" * 99 + "\\n"
for _ in range(1_000_000):
    sys.stdout.write(line)
sys.stdout.write("END\\n")
"""


def _left(client: Any, run_id: str) -> list[Any]:
    return list(
        client.api.containers(all=True, filters={"label": [f"{LABEL}=1", f"{RUN_LABEL}={run_id}"]})
    )


@pytest.mark.usefixtures("sandbox_image")
def test_passing_pytest_in_the_workspace_exits_zero(docker_client: Any, run_id: str) -> None:
    """pytest runs over the unpacked workspace in a read-only container and passes."""
    result = run_once(PYTEST, run_id=run_id, workspace=PASSING_TEST, client=docker_client)
    assert result.exit_code == 0, result.output
    assert "1 passed" in result.output
    assert (result.timed_out, result.oom_killed, result.error) == (False, False, None)


@pytest.mark.usefixtures("sandbox_image")
def test_folder_workspace_arrives_with_its_links_and_modes(
    docker_client: Any, run_id: str, tmp_path: Path
) -> None:
    """A host folder (0700, root-owned) arrives readable, with its symlink and executable bit."""
    tmp_path.chmod(0o700)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "test_x.py").write_text("def test_x():\n    assert True\n")
    (tmp_path / "tool.sh").write_text("echo tool\n")
    (tmp_path / "tool.sh").chmod(0o700)
    (tmp_path / "link.py").symlink_to("pkg/test_x.py")
    script = "stat -c '%n %A %u' tool.sh link.py pkg/test_x.py; sh tool.sh; head -1 link.py; "
    script += " ".join(PYTEST)
    result = run_once(["sh", "-c", script], run_id=run_id, workspace=tmp_path, client=docker_client)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:5] == [
        "tool.sh -rwxr-xr-x 10001",
        "link.py lrwxrwxrwx 10001",
        "pkg/test_x.py -rw-r--r-- 10001",
        "tool",
        "def test_x():",
    ]
    assert "1 passed" in result.output


@pytest.mark.usefixtures("sandbox_image")
def test_network_is_unreachable(docker_client: Any, run_id: str) -> None:
    """A TCP connect to 1.1.1.1:53 and a DNS lookup both fail; only loopback exists."""
    result = run_once(
        ["python3", "-c", NETWORK_PROBE], run_id=run_id, client=docker_client, timeout_s=30
    )
    assert "connect: failed" in result.output, result.output
    assert "dns: failed" in result.output, result.output
    assert "eth0" not in result.output


@pytest.mark.usefixtures("sandbox_image")
def test_network_is_present_only_when_granted(docker_client: Any, run_id: str) -> None:
    """With network=True (an agent's API access) the container gets an interface besides lo."""
    result = run_once(
        ["cat", "/proc/net/dev"],
        run_id=run_id,
        client=docker_client,
        spec=ContainerSpec(network=True),
    )
    assert "eth0" in result.output, result.output


@pytest.mark.usefixtures("sandbox_image")
def test_only_scratch_space_is_writable(docker_client: Any, run_id: str) -> None:
    """Writes to /etc, /usr, / and /opt fail read-only; the tmpfs places and cwd work."""
    result = run_once(["python3", "-c", WRITE_PROBE], run_id=run_id, client=docker_client)
    for path in ("/etc/x", "/usr/x", "/x", "/opt/x"):
        assert f"refused {path} Read-only file system" in result.output, result.output
    for path in ("/scratch/x", "/tmp/x", "/var/tmp/x", "/home/sandbox/x", "/dev/shm/x", "here.txt"):
        assert f"wrote {path}" in result.output, result.output


@pytest.mark.usefixtures("sandbox_image")
def test_runs_as_uid_10001_without_capabilities(docker_client: Any, run_id: str) -> None:
    """The process is uid/gid 10001 with no effective, permitted or bounding capabilities."""
    script = "id -u; id -g; grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status"
    result = run_once(["sh", "-c", script], run_id=run_id, client=docker_client)
    lines = result.output.split()
    assert lines[:2] == ["10001", "10001"], result.output
    assert "CapEff:\t0000000000000000" in result.output
    assert "CapPrm:\t0000000000000000" in result.output
    assert "CapBnd:\t0000000000000000" in result.output
    assert "NoNewPrivs:\t1" in result.output


@pytest.mark.usefixtures("sandbox_image")
def test_memory_hog_is_killed_and_recorded_as_oom(docker_client: Any, run_id: str) -> None:
    """Allocating 2 GB under a 256 MB limit is OOM-killed and reported with its reason."""
    result = run_once(
        ["python3", "-c", MEMORY_HOG],
        run_id=run_id,
        client=docker_client,
        timeout_s=60,
        spec=ContainerSpec(limits=Limits(memory_bytes=256 * 1024 * 1024)),
    )
    assert result.oom_killed, result
    assert result.exit_code == 137
    assert result.error is not None and "out of memory" in result.error
    assert "allocated" not in result.output


@pytest.mark.usefixtures("sandbox_image")
def test_fork_bomb_hits_the_pids_limit_and_the_run_goes_on(docker_client: Any, run_id: str) -> None:
    """A fork bomb is refused new processes at the pids limit, killed at its deadline, then gone."""
    result = run_once(
        ["python3", "-c", FORK_BOMB],
        run_id=run_id,
        client=docker_client,
        timeout_s=3,
        spec=ContainerSpec(limits=Limits(pids=64)),
    )
    assert "fork refused: Resource temporarily unavailable" in result.output, result.output
    assert result.timed_out
    assert _left(docker_client, run_id) == []
    after = run_once(["echo", "still here"], run_id=run_id, client=docker_client)
    assert (after.exit_code, after.output) == (0, "still here\n")


@pytest.mark.usefixtures("sandbox_image")
def test_hanging_command_is_killed_at_its_deadline(docker_client: Any, run_id: str) -> None:
    """`sleep 1000` with a 3 s deadline is killed, recorded as timed out, and its container removed."""
    start = time.monotonic()
    result = run_once(["sleep", "1000"], run_id=run_id, client=docker_client, timeout_s=3)
    assert result.timed_out and result.exit_code is None
    assert result.error == "timed out: killed after 3 s"
    assert 3 <= result.duration_s < 8
    assert time.monotonic() - start < 15
    assert _left(docker_client, run_id) == []


@pytest.mark.usefixtures("sandbox_image")
def test_output_before_the_deadline_is_kept(docker_client: Any, run_id: str) -> None:
    """What a command printed before being killed at its deadline is in the result."""
    result = run_once(
        ["sh", "-c", "echo started; sleep 1000"], run_id=run_id, client=docker_client, timeout_s=2
    )
    assert result.timed_out
    assert result.output == "started\n"


@pytest.mark.usefixtures("sandbox_image")
def test_hundred_megabytes_of_output_are_capped_quickly_in_bounded_memory(
    docker_client: Any, run_id: str
) -> None:
    """100 MB of output keeps its head and tail, counts the cut, and never sits in memory."""
    tracemalloc.start()
    start = time.monotonic()
    try:
        result = run_once(["python3", "-c", FLOOD], run_id=run_id, client=docker_client)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - start < 30
    assert peak < 8 * 1024 * 1024, f"peak traced memory {peak} bytes"
    assert result.exit_code == 0
    cap = Limits().output_cap_bytes
    assert result.output_truncated_bytes == 6 + 100_000_000 + 4 - 2 * cap
    assert result.output.startswith("BEGIN\n" + "y" * 99)
    assert result.output.endswith("y" * 99 + "\nEND\n")
    assert f"[... {result.output_truncated_bytes} bytes of output cut ...]" in result.output


@pytest.mark.usefixtures("sandbox_image")
def test_environment_is_passed_and_bytecode_is_never_written(
    docker_client: Any, run_id: str
) -> None:
    """Caller environment reaches the command; PYTHONDONTWRITEBYTECODE stays 1."""
    result = run_once(
        ["sh", "-c", 'echo "$API_KEY $PYTHONDONTWRITEBYTECODE $HOME"'],
        run_id=run_id,
        client=docker_client,
        spec=ContainerSpec(env={"API_KEY": "k-123", "PYTHONDONTWRITEBYTECODE": "0"}),
    )
    assert result.output == "k-123 1 /home/sandbox\n"


@pytest.mark.usefixtures("sandbox_image")
def test_workspace_too_big_for_scratch_is_an_error_not_a_crash(
    docker_client: Any, run_id: str
) -> None:
    """A workspace the tmpfs cannot hold is refused up front with InputError."""
    with pytest.raises(InputError, match="scratch space"):
        run_once(
            ["true"],
            run_id=run_id,
            workspace={"big.bin": b"x" * (2 * 1024 * 1024)},
            client=docker_client,
            spec=ContainerSpec(limits=Limits(scratch_bytes=1024 * 1024)),
        )


@pytest.mark.usefixtures("sandbox_image")
def test_unpack_failure_is_reported_with_its_reason(docker_client: Any, run_id: str) -> None:
    """Files that fit by size but not by tmpfs blocks end as an error naming the unpacking."""
    files = {f"f{i}.txt": b"x" for i in range(300)}  # 300 one-byte files need 300 pages
    result = run_once(
        ["true"],
        run_id=run_id,
        workspace=files,
        client=docker_client,
        spec=ContainerSpec(limits=Limits(scratch_bytes=64 * 1024)),
    )
    assert result.exit_code == UNPACK_FAILED
    assert result.error == "the workspace could not be unpacked into the scratch space"


@pytest.mark.parametrize(
    ("command", "timeout_s", "field"),
    [([], 5.0, "command"), ("echo hi", 5.0, "command"), (["true"], 0.0, "timeout_s")],
)
def test_bad_input_is_refused_before_any_container_exists(
    docker_client: Any, run_id: str, command: Any, timeout_s: float, field: str
) -> None:
    """An empty or string command, or a non-positive deadline, raises InputError naming the field."""
    with pytest.raises(InputError) as info:
        run_once(command, run_id=run_id, client=docker_client, timeout_s=timeout_s)
    assert info.value.field == field
    assert _left(docker_client, run_id) == []


def test_missing_image_names_the_build_command(docker_client: Any, run_id: str) -> None:
    """An image that is not in the engine raises SandboxImageError naming `bughunt sandbox build`."""
    with pytest.raises(SandboxImageError, match="bughunt sandbox build"):
        run_once(
            ["true"],
            run_id=run_id,
            client=docker_client,
            spec=ContainerSpec(image="bughunt-sandbox:000000000000"),
        )
