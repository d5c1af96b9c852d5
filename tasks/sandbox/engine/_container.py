"""What every sandbox container is: hardening, limits, layout, and the results it gives.

Every container: no network (unless a caller grants it to an agent), a
read-only root filesystem with size-limited, empty tmpfs mounts for every
writable place (``/work``, ``/scratch``, ``/tmp``, ``/var/tmp``, the home
folder, ``/dev/shm``), every capability dropped, no-new-privileges, uid
10001, memory (no swap), CPU and pids limits, an init process, a private IPC
namespace, a fixed host name, labels naming the run and the owning process,
and no log driver (output is read live and capped on the way).

How the workspace gets in: ``put_archive`` is refused on a read-only root
filesystem, and a bind mount would expose host paths (and their owners and
modes) and fail on a remote engine. The workspace therefore travels as a tar
on the execution's stdin and is unpacked into ``/work`` before the command
runs (``_executor``).
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import requests
from docker.errors import APIError, ImageNotFound, NotFound
from docker.models.containers import _create_container_args
from docker.types import LogConfig

from bughunt.errors import InputError
from tasks.sandbox.engine._errors import SandboxEngineError, SandboxImageError, SandboxRequestError
from tasks.sandbox.engine._io import DEFAULT_CAP
from tasks.sandbox.engine._labels import LABEL, OWNER_LABEL, RUN_LABEL, owner
from tasks.sandbox.engine._recipe import RECIPE

log = logging.getLogger("bughunt.sandbox")

MiB = 1024 * 1024
UNPACK_FAILED = 125
"""Exit code of the entry script when the workspace could not be unpacked."""
UNPACK_MARKER = "bughunt-sandbox: cannot unpack the workspace"

TREE_PATH = RECIPE.workdir
"""Where every execution's workspace is unpacked; its working folder."""
HOSTNAME = "sandbox"
"""Host name of every sandbox container (never the container id)."""


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
    """Size of the ``/work`` tmpfs (the workspace) and of ``/scratch``."""
    tmp_bytes: int = 64 * MiB
    """Size of each of the ``/tmp``, ``/var/tmp`` and home folder tmpfs mounts."""
    shm_bytes: int = 16 * MiB
    """Size of ``/dev/shm``."""
    output_cap_bytes: int = DEFAULT_CAP
    """Bytes of output kept at each end (head and tail)."""

    def __post_init__(self) -> None:
        """Refuse limits the engine would reject or that leave nothing to run in."""
        for name in (
            "memory_bytes",
            "nano_cpus",
            "pids",
            "scratch_bytes",
            "tmp_bytes",
            "shm_bytes",
        ):
            if getattr(self, name) <= 0:
                raise InputError(f"{name} must be positive", field=name)
        if self.memory_bytes < 8 * MiB:
            raise InputError("memory_bytes must be at least 8 MiB", field="memory_bytes")
        if self.output_cap_bytes < 1:
            raise InputError("output_cap_bytes must be positive", field="output_cap_bytes")


@dataclass(frozen=True, slots=True)
class ExecResult:
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
    collected: bytes | None = None
    """The file the caller asked to collect after the command ended, when it was there."""
    trace: bytes | None = None
    """A cell's execution: the line trace its process wrote (``harness/trace.py``'s records);
    None when it wrote none or what came back could not be read whole."""


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
) -> dict[str, Any]:
    """Keyword arguments of ``containers.create`` for a hardened sandbox container, without
    bind mounts: a caller adds ``volumes`` only for a gateway's folder (``_gateway``, an
    agent's :class:`~tasks.sandbox.engine._executor.GatewayLink`); workspaces never travel that way.
    """
    environment = {key: value for key, value in RECIPE.env}
    for key, value in (env or {}).items():
        if not isinstance(key, str) or not key or "=" in key or not isinstance(value, str):
            raise InputError(f"bad environment entry {key!r}", field="env")
        environment[key] = value
    environment["PYTHONDONTWRITEBYTECODE"] = "1"  # read-only tree: never try to write .pyc
    # runc gives a tmpfs mounted over a directory that exists in the image that
    # directory's mode, ignoring mode=; owning it (uid=, gid=) is what reliably
    # makes the space writable by the sandbox user.
    owned = f"rw,nosuid,nodev,noexec,uid={RECIPE.uid},gid={RECIPE.gid}"
    config: dict[str, Any] = {
        "image": image,
        "command": command,
        "user": f"{RECIPE.uid}:{RECIPE.gid}",
        "working_dir": TREE_PATH,
        "hostname": HOSTNAME,
        "read_only": True,
        "tmpfs": {
            TREE_PATH: f"{owned},mode=0755,size={limits.scratch_bytes}",
            "/scratch": f"{owned},mode=0755,size={limits.scratch_bytes}",
            RECIPE.home: f"{owned},mode=0755,size={limits.tmp_bytes}",
            # The container's own temporary folders, not the host's.
            "/tmp": f"{owned},mode=1777,size={limits.tmp_bytes}",  # noqa: S108
            "/var/tmp": f"{owned},mode=1777,size={limits.tmp_bytes}",  # noqa: S108
        },
        "shm_size": limits.shm_bytes,
        "ipc_mode": "private",
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
    }
    if not network:
        config["network_mode"] = "none"
    return config


# Answers that mean the container, not the request, is at fault: it was removed
# (404) or is not running (409: it exited before it answered). A fresh one may do.
_GONE = (404, 409)


def engine_error(exc: Exception, doing: str) -> SandboxEngineError | SandboxRequestError:
    """The sandbox error for an engine call that failed while trying to ``doing``.

    Transient, :class:`SandboxEngineError` (worth a fresh container): the
    connection failed or timed out, the engine answered 5xx (busy,
    restarting, out of resources for the moment), or the container was gone
    or not running (404, 409). Terminal, :class:`SandboxRequestError`: any
    other 4xx, the engine refusing the request itself. Either way the
    message keeps the engine's own words.
    """
    # APIError is a requests HTTPError: look at its status before calling it a transport failure.
    status = exc.status_code if isinstance(exc, APIError) else None
    if status is not None and 400 <= status < 500 and status not in _GONE:
        return SandboxRequestError(
            f"the engine refused to {doing} (not retried: asking again gets the same answer): {exc}"
        )
    return SandboxEngineError(f"the engine could not {doing}: {exc}")


HOST_EXTRA = "bughunt_host_config"
"""Key of a config's raw ``HostConfig`` fields that the SDK's keywords cannot express
(``MaskedPaths``, ``ReadonlyPaths``: a cell's, ``_cell``)."""


def create_container(client: Any, config: dict[str, Any]) -> Any:
    """Create (not start) a container; a missing image raises SandboxImageError naming the fix.

    Any other failure is :func:`engine_error`'s (transient or refused).
    """
    try:
        extra = config.get(HOST_EXTRA)
        if not extra:
            return client.containers.create(**config)
        # The SDK's create() has no keyword for these HostConfig fields: build its
        # arguments as create() does, add them, and call the low-level API.
        kwargs = {k: v for k, v in config.items() if k != HOST_EXTRA}
        kwargs["version"] = client.api._version
        args = _create_container_args(kwargs)
        args["host_config"].update(extra)
        return client.containers.get(client.api.create_container(**args)["Id"])
    except ImageNotFound as exc:
        raise SandboxImageError(
            f"sandbox image {config['image']} is not in the engine; run `bughunt sandbox build`"
        ) from exc
    except (APIError, requests.RequestException) as exc:
        raise engine_error(exc, "create a container") from exc


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
