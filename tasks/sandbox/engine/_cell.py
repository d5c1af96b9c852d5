"""Cells: one hardened container per concurrent execution, a fresh set of namespaces per execution.

A fresh container per execution is neutral but costs most of what the
execution itself costs (create, start, kill: about as much of the engine's
work as a typical pytest run). A cell
keeps the isolation that neutrality needs and drops that cost: it is a
container with the usual hardening (``_container``), started once and used
by one execution at a time, and every execution in it runs under ``bwrap``
in namespaces of its own, made for it and gone with it:

- a new PID namespace: the test's processes start at pid 1 and all of them
  die with the execution (the namespace's init exits, the kernel kills the
  rest), so no process id climbs and no process outlives an execution;
- a new mount namespace over a root made for the execution: the image's
  folders read-only, and every writable place (``/work``, ``/scratch``,
  ``/tmp``, ``/var/tmp``, the home folder, ``/dev/shm``, ``/dev/mqueue``)
  a new empty tmpfs, so every timestamp a test can see is the image's or
  its own execution's; ``/etc/hostname``, ``/etc/hosts`` and
  ``/etc/resolv.conf`` are the same fixed text every time, never the
  engine's files (whose times are the container's creation);
- new IPC (SysV, POSIX queues), network (loopback only), cgroup and user
  namespaces; no ``/sys``, so the cell's cgroup counters, which grow across
  executions, cannot be read; the ``/proc`` paths Docker masks are masked
  again inside;
- the host name ``sandbox`` of the cell, which the test cannot change;
- on a FUSE-backed engine, ``/usr`` from the cell's copy of the image's
  (``_usr_volume``): the image's files, read at the engine's filesystem's speed.

What this asks of the cell, and why it is safe: ``bwrap`` needs user
namespaces and mounts, so the cell runs with the seccomp profile of
``_seccomp`` (the system's container allowlist, which allows them) and
without Docker's masked ``/proc`` paths (the kernel refuses a new procfs
under masks). Only trusted code runs in the cell itself; the test runs in
the namespaces above with no capabilities, no new privileges, and no way to
make another user namespace (``--disable-userns``), so it can neither mount
nor unshare, and it sees the masks again.

How the runner learns what happened without trusting the output: the cell's
trusted wrapper prints one status line after ``bwrap`` has ended, carrying a
random nonce the test never sees; a line without it is the test's own text.
The line says the exit code, whether ``bwrap`` set the namespaces up, and how
many processes the OOM killer took during the execution.
"""

from __future__ import annotations

import atexit
import base64
import binascii
import dataclasses
import hashlib
import json
import re
import secrets
import threading
import time
import zlib
from collections.abc import Sequence
from typing import Any

import requests
from docker.errors import APIError

from bughunt.errors import InputError
from tasks.sandbox.engine._container import (
    HOST_EXTRA,
    TREE_PATH,
    ExecResult,
    Limits,
    MiB,
    engine_error,
    kill_quietly,
    remove_quietly,
)
from tasks.sandbox.engine._errors import SandboxEngineError, SandboxImageError
from tasks.sandbox.engine._executor import Executor
from tasks.sandbox.engine._io import OutputCapture
from tasks.sandbox.engine._pool import on_dask_worker
from tasks.sandbox.engine._recipe import RECIPE
from tasks.sandbox.engine._seccomp import cell_profile
from tasks.sandbox.engine._usr_volume import usr_volume
from tasks.sandbox.engine._workspace import Workspace

# What Docker masks in /proc (hidden: /dev/null over a file, an empty tmpfs over
# a folder) and keeps read-only; only those this kernel has are named.
MASKED = (
    "/proc/acpi",
    "/proc/asound",
    "/proc/interrupts",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/proc/timer_list",
    "/proc/timer_stats",
)
READ_ONLY = ("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger")

# Root folders each execution gets new (or, /sys, not at all); the rest are the image's, read-only.
_MADE_NEW = frozenset({"/proc", "/dev", "/sys", "/tmp", TREE_PATH, "/scratch"})  # noqa: S108

_LAYOUT = r"""
for p in /*; do
  if [ -L "$p" ]; then printf 'L\t%s\t%s\n' "$p" "$(readlink "$p")"
  elif [ -d "$p" ]; then printf 'D\t%s\n' "$p"; fi
done
for p in MASKED; do
  if [ -d "$p" ]; then printf 'MD\t%s\n' "$p"; elif [ -e "$p" ]; then printf 'MF\t%s\n' "$p"; fi
done
for p in READ_ONLY; do [ -e "$p" ] && printf 'R\t%s\n' "$p"; done
command -v bwrap >/dev/null 2>&1 || printf 'NOBWRAP\n'
exit 0
""".replace("MASKED", " ".join(MASKED)).replace("READ_ONLY", " ".join(READ_ONLY))

USR_COPY = "/.bughunt-usr"
"""Where a cell mounts its copy of the image's ``/usr`` (a hidden root entry: the layout lists
none); each execution sees it at ``/usr``."""

_STATE = "/scratch/.cell-status"
"""bwrap's JSON status, in the cell's own scratch space (never inside an execution)."""

_TRACE = "/scratch/.cell-trace"
"""Where an execution's descriptor 7 leads (``harness/trace.py`` writes its line trace there), in
the cell's own scratch space; the wrapper sends it back, compressed, on its stderr."""

TRACE_ROOM = 4 * 1024 * 1024
"""Most bytes of a compressed, base64-encoded trace the runner reads back."""

# The trusted wrapper: counts OOM kills around bwrap, feeds it the fixed /etc files,
# and prints the status line carrying the nonce ($1) once bwrap has ended. The
# execution's stderr joins its stdout, so its output keeps its order and nothing the
# engine forwards on another stream can come after the status line. The wrapper's own
# stderr, which nothing inside the execution holds, carries the execution's line trace
# back (descriptor 7 inside; gzip and base64, so any byte the test wrote travels intact).
_WRAPPER = rf"""
oom() {{
  for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
    [ -r "$f" ] || continue
    while read -r k v; do [ "$k" = oom_kill ] && {{ echo "$v"; return; }}; done < "$f"
  done
  echo 0
}}
nonce=$1; shift
before=$(oom)
"$@" 3<<'HOSTNAME' 4<<'HOSTS' 5<<'RESOLV' 6>{_STATE} 7>{_TRACE} 2>&1
sandbox
HOSTNAME
127.0.0.1	localhost
::1	localhost ip6-localhost ip6-loopback
HOSTS
RESOLV
rc=$?
after=$(oom)
started=0
grep -q child-pid {_STATE} 2>/dev/null && started=1
printf '\nbughunt-cell %s rc=%s oom=%s started=%s\n' "$nonce" "$rc" "$((after - before))" "$started"
if [ -s {_TRACE} ]; then gzip -c {_TRACE} | base64 -w0 >&2; fi
rm -f {_TRACE}
exit "$rc"
"""


def bwrap_argv(layout: str, limits: Limits, *, usr: str | None = None) -> list[str]:
    """The ``bwrap`` options for one execution, from the cell's ``layout`` (``_LAYOUT``'s output).

    Pure. ``usr``: where the cell holds a copy of the image's ``/usr`` (``_usr_volume``),
    bound at ``/usr`` in its place. A layout without ``bwrap`` raises
    :class:`SandboxImageError` (an image built before cells: ``bughunt sandbox build``).
    """
    lines = [line.split("\t") for line in layout.splitlines() if line]
    if ["NOBWRAP"] in lines:
        raise SandboxImageError(
            "the sandbox image has no bwrap (bubblewrap); rebuild it with `bughunt sandbox build`"
        )
    root, folders = _root(lines, usr)
    return [
        "bwrap",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-net",
        "--unshare-cgroup",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--json-status-fd",
        "6",
        *root,
        "--proc",
        "/proc",
        *_proc_masks(lines),
        "--dev",
        "/dev",
        "--mqueue",
        "/dev/mqueue",
        *_writable(limits, with_var="/var" in folders),
        *(_fixed_etc() if "/etc" in folders else []),
        "--chdir",
        TREE_PATH,
        "--",
    ]


def _root(lines: list[list[str]], usr: str | None) -> tuple[list[str], set[str]]:
    """The image's root entries, read-only (symlinks as they are), and the folders among them;
    ``/usr`` from ``usr`` when given."""
    argv: list[str] = []
    folders = set()
    for kind, path, *rest in sorted(lines, key=lambda parts: parts[1:2]):
        if path in _MADE_NEW or path == usr:
            continue
        if kind == "L":
            argv += ["--symlink", rest[0], path]
        elif kind == "D":
            argv += ["--ro-bind", usr if path == "/usr" and usr else path, path]
            folders.add(path)
    return argv, folders


def _proc_masks(lines: list[list[str]]) -> list[str]:
    argv: list[str] = []
    for kind, path, *_rest in lines:
        if kind == "MF":
            argv += ["--ro-bind", "/dev/null", path]
        elif kind == "MD":
            argv += ["--perms", "0555", "--size", "4096", "--tmpfs", path, "--remount-ro", path]
        elif kind == "R":
            argv += ["--ro-bind", path, path]
    return argv


def _writable(limits: Limits, *, with_var: bool) -> list[str]:
    """Every writable place, a new empty tmpfs of its size (the execution's own, never the host's)."""
    places = [
        ("/dev/shm", "1777", limits.shm_bytes),  # noqa: S108 (see the docstring)
        ("/tmp", "1777", limits.tmp_bytes),  # noqa: S108 (see the docstring)
        *([("/var/tmp", "1777", limits.tmp_bytes)] if with_var else []),  # noqa: S108
        (TREE_PATH, "0755", limits.scratch_bytes),
        ("/scratch", "0755", limits.scratch_bytes),
        (RECIPE.home, "0755", limits.tmp_bytes),
    ]
    argv: list[str] = []
    for path, mode, size in places:
        argv += ["--perms", mode, "--size", str(size), "--tmpfs", path]
    return argv


def _fixed_etc() -> list[str]:
    """The engine's /etc files replaced by the wrapper's fixed text (fds 3 to 5)."""
    argv: list[str] = []
    for fd, path in (("3", "/etc/hostname"), ("4", "/etc/hosts"), ("5", "/etc/resolv.conf")):
        argv += ["--perms", "0644", "--ro-bind-data", fd, path]
    return argv


STATUS_ROOM = 256
"""Least output a cell keeps at each end: room for its status line, which comes last."""

_STATUS = re.compile(r"\nbughunt-cell ([0-9a-f]+) rc=(\d+) oom=(-?\d+) started=([01])\n")


def read_status(text: str, nonce: str) -> tuple[str, tuple[int, int, bool] | None]:
    """The output without the cell's status line, and (exit code, OOM kills, set up) from it.

    Pure. Only the last line carrying ``nonce`` counts; a status line with
    another nonce is the test's own output and stays in it. None when the
    line is missing (the cell died before its wrapper could print it).
    """
    for match in reversed(list(_STATUS.finditer(text))):
        if match[1] == nonce:
            rest = text[: match.start()] + text[match.end() :]
            return rest, (int(match[2]), int(match[3]), match[4] == "1")
    return text, None


def read_trace(side: OutputCapture) -> bytes | None:
    """The trace the wrapper sent back on its stderr; None when there was none or it is unreadable.

    Pure. Unreadable: cut (over :data:`TRACE_ROOM`), not base64 of gzip, or
    larger unpacked than the cell's scratch space could have held.
    """
    if side.total == 0 or side.cut:
        return None
    try:
        packed = base64.b64decode(side.raw(), validate=True)
        unpacker = zlib.decompressobj(wbits=31)  # gzip's header and trailer
        data = unpacker.decompress(packed, _TRACE_MAX)
    except (binascii.Error, zlib.error):
        return None
    return None if unpacker.unconsumed_tail or not unpacker.eof else data


_TRACE_MAX = 16 * MiB
"""The cell's /scratch: no trace written there can unpack to more."""


PARK_S = 10.0
"""How long a Dask worker keeps a closed executor's idle cells for the run's next shard."""


class _Parking:
    """Idle cells of closed executors on a Dask worker, kept :data:`PARK_S` seconds for the
    next executor of the same container settings (so the same run, image and limits).

    A worker runs a run's shards one after another, each closing its executors when it ends;
    without parking each shard would start its cells anew (a container start, a layout read
    and a kill per cell, each work for the engine). A parked cell is an idle cell like
    any other: every execution in it still gets fresh namespaces. Cells not taken in time are
    killed and removed by a thread of their own, and all of them when the process exits; a
    worker killed outright leaves them to the next run's sweep (their owner is dead).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cells: dict[str, list[tuple[float, Any, list[str] | None]]] = {}
        self._reaper: threading.Thread | None = None

    def park(self, key: str, cells: Sequence[Any], bwrap: list[str] | None) -> None:
        until = time.monotonic() + PARK_S
        with self._lock:
            self._cells.setdefault(key, []).extend((until, cell, bwrap) for cell in cells)
            if self._reaper is None:
                self._reaper = threading.Thread(target=self._reap, name="cell-parking", daemon=True)
                self._reaper.start()
                atexit.register(self.release)

    def take(self, key: str) -> tuple[Any, list[str] | None] | None:
        """A parked cell of ``key`` with its ``bwrap`` options, or None."""
        with self._lock:
            entries = self._cells.get(key)
            if not entries:
                return None
            _until, cell, bwrap = entries.pop()
            return cell, bwrap

    def _reap(self) -> None:
        while True:
            time.sleep(1.0)
            now = time.monotonic()
            with self._lock:
                expired = [c for entries in self._cells.values() for t, c, _ in entries if t <= now]
                self._cells = {
                    key: kept
                    for key, entries in self._cells.items()
                    if (kept := [e for e in entries if e[0] > now])
                }
            for cell in expired:
                remove_quietly(cell)

    def release(self) -> None:
        """Kill and remove every parked cell now."""
        with self._lock:
            cells = [c for entries in self._cells.values() for _t, c, _b in entries]
            self._cells.clear()
        for cell in cells:
            remove_quietly(cell)


_PARKING = _Parking()


class CellExecutor(Executor):
    """Runs commands like :class:`Executor`, each in fresh namespaces inside a reused cell.

    At most one execution runs in a cell at a time; a thread that finds no
    idle cell starts one, so the cells number the executions run at once.
    A cell whose execution outlived the runner's deadline, or whose status
    line is missing, is killed and never used again. Same errors as
    :class:`Executor`; ``collect`` is not offered (an execution's files are
    gone with its namespaces): passing it raises :class:`InputError`, and so
    does an output cap under :data:`STATUS_ROOM`.
    """

    def __init__(
        self,
        *,
        run_id: str,
        image: str | None = None,
        limits: Limits | None = None,
        env: dict[str, str] | None = None,
        client: Any | None = None,
        usr_copy: bool = True,
    ) -> None:
        """``usr_copy``: on a FUSE-backed engine, read the image's /usr from its copy
        (``_usr_volume``); False reads the image's own (what the copy is measured against)."""
        if (limits or Limits()).output_cap_bytes < STATUS_ROOM:
            raise InputError(
                f"a cell keeps at least {STATUS_ROOM} bytes of output at each end (its status "
                "line comes last)",
                field="output_cap_bytes",
            )
        super().__init__(run_id=run_id, image=image, limits=limits, env=env, client=client)
        small = f"rw,nosuid,nodev,noexec,uid={RECIPE.uid},gid={RECIPE.gid},mode=0755,size="
        # The cell's /scratch holds the running execution's trace (tmpfs takes only what is used).
        self._config["tmpfs"] = {TREE_PATH: f"{small}65536", "/scratch": f"{small}{16 * MiB}"}
        self._config["labels"] = {**self._config["labels"], "bughunt.mode": "cell"}
        self._config["security_opt"] = ["no-new-privileges", f"seccomp={cell_profile()}"]
        self._config[HOST_EXTRA] = {"MaskedPaths": [], "ReadonlyPaths": []}
        usr = usr_volume(self._client, self.image) if usr_copy else None
        self._usr = USR_COPY if usr is not None else None
        if usr is not None:  # the image's /usr on the engine's own filesystem: each execution's
            self._config["volumes"] = {usr: {"bind": USR_COPY, "mode": "ro"}}
        self._idle: list[Any] = []
        self._cells: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._bwrap: list[str] | None = None
        # Cells are interchangeable only between executors whose containers are made alike.
        made = json.dumps([self._config, repr(self.limits)], sort_keys=True, default=repr)
        self._kind = hashlib.sha256(made.encode()).hexdigest()

    def close(self) -> None:
        """Kill every cell and return once all are removed; safe to call twice. On a Dask
        worker the idle cells are parked for the run's next shard instead (:class:`_Parking`)."""
        with self._lock:
            cells = list(self._cells.values())
            idle = {cell.id for cell in self._idle}
            self._cells.clear()
            self._idle.clear()
        if on_dask_worker():
            _PARKING.park(self._kind, [c for c in cells if c.id in idle], self._bwrap)
            cells = [c for c in cells if c.id not in idle]
        for cell in cells:
            kill_quietly(cell)
            self._remover.put(cell)
        super().close()

    def run(
        self,
        command: Sequence[str],
        *,
        workspace: Workspace | bytes | None = None,
        timeout_s: float = 60.0,
        collect: str | None = None,
    ) -> ExecResult:
        """Run ``command`` in ``/work`` over a fresh copy of ``workspace``, killed at ``timeout_s``."""
        if collect is not None:
            raise InputError("an execution in a cell leaves no file to collect", field="collect")
        argv, deadline_s, payload = self._checked(command, workspace, timeout_s)
        nonce = secrets.token_hex(16)
        cell, exec_id, sock = self._launch_with(
            lambda: self._start_in_cell(nonce, deadline_s, argv)
        )
        reusable = False
        side = OutputCapture(TRACE_ROOM)
        try:
            finished, capture, duration = self._pump(exec_id, sock, payload, deadline_s, side)
            if not finished:  # even the in-namespace deadline did not end it
                return self._result(None, True, False, duration, capture, deadline_s)
            text, status = read_status(capture.text(), nonce)
            if status is None:
                raise SandboxEngineError("the sandbox cell ended without its status line")
            exit_code, oom_kills, started = status
            if not started:
                raise SandboxEngineError(
                    f"the sandbox cell could not set up an execution's namespaces: {text.strip()}"
                )
            reusable = True
            timed_out = exit_code in (124, 137) and duration >= deadline_s
            oom = exit_code == 137 and not timed_out and oom_kills > 0
            result = self._result(
                exit_code, timed_out, oom, duration, capture, deadline_s, text=text
            )
            return dataclasses.replace(result, trace=read_trace(side))
        except (APIError, requests.RequestException) as exc:
            raise SandboxEngineError(f"the engine failed during an execution: {exc}") from exc
        finally:
            self._give_back(cell, reusable)

    def _start_in_cell(
        self, nonce: str, deadline_s: float, argv: list[str]
    ) -> tuple[Any, str, Any]:
        """An idle cell (or a new one) with the execution's wrapper started in it."""
        with self._lock:
            cell = self._idle.pop() if self._idle else None
        if cell is None and (parked := _PARKING.take(self._kind)) is not None:
            cell, bwrap = parked
            with self._lock:
                self._cells[cell.id] = cell
                self._bwrap = self._bwrap or bwrap
        if cell is None:
            cell = self._new_cell()
        try:
            entry = [
                "sh",
                "-c",
                _WRAPPER,
                "sh",
                nonce,
                *self._bwrap_argv(cell),
                "sh",
                "-c",
                self._entry,
                "sh",
                f"{deadline_s:g}",
                *argv,
            ]
            api = self._client.api
            exec_id = api.exec_create(cell.id, entry, stdin=True)["Id"]
            sock = api.exec_start(exec_id, socket=True)
        except (APIError, requests.RequestException) as exc:
            self._give_back(cell, False)
            raise engine_error(exc, "start an execution in a sandbox cell") from exc
        return cell, exec_id, sock

    def _new_cell(self) -> Any:
        container = self._start_container()
        with self._lock:
            self._cells[container.id] = container
        with self._count_lock:
            self.containers_started += 1
        return container

    def _bwrap_argv(self, cell: Any) -> list[str]:
        if self._bwrap is None:
            code, out = self._control(cell, ["sh", "-c", _LAYOUT], 1 << 16)
            if code != 0:
                raise SandboxEngineError("could not read the sandbox image's layout in a cell")
            self._bwrap = bwrap_argv(out.decode("utf-8", "replace"), self.limits, usr=self._usr)
        return self._bwrap

    def _give_back(self, cell: Any, reusable: bool) -> None:
        with self._lock:
            if reusable and cell.id in self._cells:
                self._idle.append(cell)
                return
            known = self._cells.pop(cell.id, None) is not None
        kill_quietly(cell)
        if known:
            self._remover.put(cell)
