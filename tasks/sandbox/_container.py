"""Run untrusted code in a hardened container, one container per execution (DESIGN §7).

Every container: no network (unless a caller grants it to an agent), a
read-only root filesystem with size-limited tmpfs scratch at ``/scratch``
and ``/tmp``, every capability dropped, no-new-privileges, uid 10001,
memory (no swap), CPU and pids limits, an init process, labels naming the
run and the owning process, and no log driver (output is read live from
the attach stream and capped on the way; the engine's json-file logs here
rotate at 10 MB and so lose the head of a long output).

How the workspace gets in: ``put_archive`` is refused on a read-only root
filesystem, and a created-but-not-started container has no tmpfs mounted
yet, so neither route reaches ``/scratch``. A bind mount would expose host
paths (and their owners and modes) and fail on a remote engine. The
workspace therefore travels as a tar on the container's stdin: the entry
script unpacks it into ``/scratch/ws`` and only then runs the command, so
nothing the command prints can race the upload.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import requests
from docker.errors import APIError, ImageNotFound, NotFound
from docker.types import LogConfig

from bughunt.errors import InputError
from tasks.sandbox._engine import connect
from tasks.sandbox._errors import SandboxEngineError, SandboxImageError
from tasks.sandbox._io import DEFAULT_CAP, FrameDecoder, OutputCapture, close_quietly, pump
from tasks.sandbox._labels import LABEL, OWNER_LABEL, RUN_LABEL, owner
from tasks.sandbox._recipe import RECIPE, image_tag
from tasks.sandbox._workspace import Workspace, pack_workspace

log = logging.getLogger("bughunt.sandbox")

MiB = 1024 * 1024
UNPACK_FAILED = 125
"""Exit code of the entry script when the workspace could not be unpacked."""
UNPACK_MARKER = "bughunt-sandbox: cannot unpack the workspace"

# Runaway guard inside the container: if the runner dies and cannot kill
# it, the command still ends this long after its deadline (sweep removes
# the stopped container at the next start).
_INNER_GRACE_S = 30
_DRAIN_S = 5.0
_EXIT_WAIT_S = 30

_ONCE_ENTRY = (
    "mkdir /scratch/ws && tar -x -C /scratch/ws || "
    f'{{ echo "{UNPACK_MARKER}" >&2; exit {UNPACK_FAILED}; }}; '
    'cd /scratch/ws && limit=$1 && shift && exec timeout -s KILL "$limit" "$@"'
)


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one sandbox container.

    tmpfs pages count against the memory limit, so a full scratch space
    leaves that much less memory for processes.
    """

    memory_bytes: int = 512 * MiB
    """Memory limit; swap is disabled (memswap equal to it)."""
    nano_cpus: int = 1_000_000_000
    """CPU quota in billionths of a CPU (1e9 = one CPU)."""
    pids: int = 256
    """Most processes and threads alive at once; stops fork bombs."""
    scratch_bytes: int = 256 * MiB
    """Size of the ``/scratch`` tmpfs (workspace and run folders)."""
    tmp_bytes: int = 64 * MiB
    """Size of the ``/tmp`` tmpfs."""
    output_cap_bytes: int = DEFAULT_CAP
    """Bytes of output kept at each end (head and tail)."""

    def __post_init__(self) -> None:
        """Refuse limits the engine would reject or that leave nothing to run in."""
        for name in ("memory_bytes", "nano_cpus", "pids", "scratch_bytes", "tmp_bytes"):
            if getattr(self, name) <= 0:
                raise InputError(f"{name} must be positive", field=name)
        if self.memory_bytes < 8 * MiB:
            raise InputError("memory_bytes must be at least 8 MiB", field="memory_bytes")
        if self.output_cap_bytes < 1:
            raise InputError("output_cap_bytes must be positive", field="output_cap_bytes")


@dataclass(frozen=True, slots=True)
class RunResult:
    """What one execution did."""

    exit_code: int | None
    """Exit code of the command; None when it never ran to an exit (killed at the deadline)."""
    timed_out: bool
    """Killed at its wall-clock deadline."""
    oom_killed: bool
    """A process was killed for exceeding the memory limit."""
    duration_s: float
    """Wall-clock seconds from start to exit or kill."""
    output: str
    """stdout and stderr merged, head and tail kept (see ``output_truncated_bytes``)."""
    output_truncated_bytes: int
    """Bytes of output cut from the middle; 0 when the output is whole."""
    error: str | None
    """Why the execution did not end normally (deadline, memory, workspace); None otherwise."""


def check_command(command: Sequence[str]) -> list[str]:
    """The command as an argument list, or InputError (empty, not strings, NUL bytes)."""
    if isinstance(command, str | bytes) or not command:
        raise InputError("command must be a non-empty list of arguments", field="command")
    argv = list(command)
    if not all(isinstance(arg, str) and "\x00" not in arg for arg in argv):
        raise InputError("every argument must be text without NUL bytes", field="command")
    return argv


def check_timeout(timeout_s: float) -> float:
    """The deadline in seconds, or InputError when not a positive finite number."""
    if not isinstance(timeout_s, int | float) or not math.isfinite(timeout_s) or timeout_s <= 0:
        raise InputError(f"timeout must be a positive number, got {timeout_s!r}", field="timeout_s")
    return float(timeout_s)


def container_config(
    *,
    image: str,
    command: list[str],
    run_id: str,
    limits: Limits,
    network: bool,
    env: Mapping[str, str] | None,
    mode: str,
    stdin: bool,
) -> dict[str, Any]:
    """Keyword arguments of ``containers.create`` for a hardened sandbox container."""
    environment = {key: value for key, value in RECIPE.env}
    for key, value in (env or {}).items():
        if not isinstance(key, str) or not key or "=" in key or not isinstance(value, str):
            raise InputError(f"bad environment entry {key!r}", field="env")
        environment[key] = value
    environment["PYTHONDONTWRITEBYTECODE"] = "1"  # read-only tree: never try to write .pyc
    # runc gives a tmpfs mounted over a directory that exists in the image that
    # directory's mode, ignoring mode=; owning it (uid=, gid=) is what reliably
    # makes the scratch space writable by the sandbox user.
    tmpfs = f"rw,nosuid,nodev,noexec,uid={RECIPE.uid},gid={RECIPE.gid},mode=1777,size={{}}"
    config: dict[str, Any] = {
        "image": image,
        "command": command,
        "user": f"{RECIPE.uid}:{RECIPE.gid}",
        "working_dir": "/scratch",
        "read_only": True,
        "tmpfs": {
            "/scratch": tmpfs.format(limits.scratch_bytes),
            "/tmp": tmpfs.format(limits.tmp_bytes),  # noqa: S108  (the container's own /tmp)
        },
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "init": True,
        "mem_limit": limits.memory_bytes,
        "memswap_limit": limits.memory_bytes,
        "nano_cpus": limits.nano_cpus,
        "pids_limit": limits.pids,
        "labels": {LABEL: "1", RUN_LABEL: run_id, OWNER_LABEL: owner(), "bughunt.mode": mode},
        "environment": environment,
        "log_config": LogConfig(type=LogConfig.types.NONE),
        "stdin_open": stdin,
    }
    if not network:
        config["network_mode"] = "none"
    return config


def create_container(client: Any, config: dict[str, Any]) -> Any:
    """Create (not start) a container; a missing image raises SandboxImageError naming the fix."""
    try:
        return client.containers.create(**config)
    except ImageNotFound as exc:
        raise SandboxImageError(
            f"sandbox image {config['image']} is not in the engine; run `bughunt sandbox build`"
        ) from exc
    except (APIError, requests.RequestException) as exc:
        raise SandboxEngineError(f"the engine could not create a container: {exc}") from exc


def remove_quietly(container: Any) -> None:
    """Kill and remove a container; one that is already gone is fine."""
    try:
        container.remove(force=True)
    except NotFound:
        pass  # removed already (by sweep or the engine)
    except (APIError, requests.RequestException) as exc:
        log.warning("could not remove container %s: %s", container.short_id, exc)


def kill_quietly(container: Any) -> None:
    """SIGKILL a container; one that has already exited is fine."""
    # It may have exited between the deadline and the kill: nothing left to stop.
    with contextlib.suppress(NotFound, APIError):
        container.kill()


def _exit_code(container: Any) -> int | None:
    """Exit status after the stream ended; ``wait`` only times out the HTTP call (docker-py #2964)."""
    for _attempt in range(2):
        try:
            status = container.wait(timeout=_EXIT_WAIT_S)
            return int(status.get("StatusCode", -1))
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            kill_quietly(container)
    return None


def run_once(
    command: Sequence[str],
    *,
    run_id: str,
    workspace: Workspace | None = None,
    image: str | None = None,
    timeout_s: float = 60.0,
    limits: Limits | None = None,
    network: bool = False,
    env: Mapping[str, str] | None = None,
    client: Any | None = None,
) -> RunResult:
    """Run ``command`` in a fresh hardened container over a copy of ``workspace``, then remove it.

    The command starts in ``/scratch/ws`` (a tmpfs copy of the workspace). At
    ``timeout_s`` the container is killed, what it printed is read, and the
    result says ``timed_out``. Bad input (empty command, bad timeout, a
    workspace path escaping the folder, an oversized workspace) raises
    :class:`InputError` before any container exists. A missing image raises
    :class:`SandboxImageError`; an engine failure :class:`SandboxEngineError`.
    The container is removed whatever happens.
    """
    argv = check_command(command)
    deadline_s = check_timeout(timeout_s)
    limits = limits or Limits()
    payload = pack_workspace(workspace, max_bytes=limits.scratch_bytes)
    client = client if client is not None else connect()
    inner = str(math.ceil(deadline_s) + _INNER_GRACE_S)
    config = container_config(
        image=image or image_tag(),
        command=["sh", "-c", _ONCE_ENTRY, "sh", inner, *argv],
        run_id=run_id,
        limits=limits,
        network=network,
        env=env,
        mode="once",
        stdin=True,
    )
    container = create_container(client, config)
    try:
        return _attach_and_run(client, container, payload, deadline_s, limits)
    except (APIError, requests.RequestException) as exc:
        raise SandboxEngineError(f"the engine failed during an execution: {exc}") from exc
    finally:
        remove_quietly(container)


def _attach_and_run(
    client: Any, container: Any, payload: bytes, timeout_s: float, limits: Limits
) -> RunResult:
    capture = OutputCapture(limits.output_cap_bytes)
    decoder = FrameDecoder(capture.feed)
    # Attach before start so no byte of output is missed.
    sock = client.api.attach_socket(
        container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
    )
    try:
        container.start()
        started = time.monotonic()
        finished = pump(sock, payload, decoder.feed, started + timeout_s)
        if not finished:
            kill_quietly(container)
            pump(sock, b"", decoder.feed, time.monotonic() + _DRAIN_S)
        duration = time.monotonic() - started
    finally:
        close_quietly(sock)
    exit_code = _exit_code(container)
    container.reload()
    oom = bool(container.attrs.get("State", {}).get("OOMKilled", False))
    text = capture.text()
    error: str | None = None
    if not finished:
        error = f"timed out: killed after {timeout_s:g} s"
        exit_code = None
    elif oom:
        error = f"out of memory: killed at the {limits.memory_bytes // MiB} MiB limit"
    elif exit_code == UNPACK_FAILED and UNPACK_MARKER in text:
        error = "the workspace could not be unpacked into the scratch space"
    elif exit_code is None:
        error = "the engine reported no exit code for the execution"
    return RunResult(
        exit_code=exit_code,
        timed_out=not finished,
        oom_killed=oom,
        duration_s=round(duration, 3),
        output=text,
        output_truncated_bytes=capture.cut,
        error=error,
    )
