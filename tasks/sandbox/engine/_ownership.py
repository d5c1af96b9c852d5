"""Which run owns a process, container or network, and whether that run still lives.

A run command claims what it will start (:func:`claim`): it exports its
*owner token* ``<host>:<pid>:<start>`` as ``BUGHUNT_OWNER``. Every process
the run starts inherits it, whatever its process group or session: Prefect's
local API server, command judges (each in a session of its own), Dask
workers, and their children. Containers and networks the sandbox makes carry
the run's host and pid as their owner label (:func:`label_token`). When the run is
SIGKILLed, what it left behind is still marked as its own, and the next run
removes it (:func:`sweep_processes`; the sandbox sweeps the engine).

Why the environment: the kernel hands an orphan to init, so the process tree
is lost with its root, and a judge's own session takes it out of the run's
process group; its environment is neither, and ``/proc/<pid>/environ`` shows
it without the process's help. That file holds the environment the process
was *started* with, which is the one that matters: a run's own later
:func:`claim` does not show there, its children's inheritance does.

The start time (``/proc/<pid>/stat`` field 22, clock ticks after boot) guards
against pid reuse: a token whose pid now belongs to a process started at
another time names a dead owner. Labels on containers and networks keep the
older ``<host>:<pid>`` form (:func:`label_token`), which bughunt versions
before start times read as alive while the pid lives; a full token there
would read as dead to them, and a run of such a version on the same engine
would remove this run's live containers. Their pid reuse is told by time
instead: a process started after the object was made cannot be the one that
made it (:meth:`Owner.is_dead`, ``made_at``). A token of another host is
never called dead: its pids mean nothing here, and two machines may share
one engine. Only Linux has ``/proc``: elsewhere no process is swept, and
liveness falls back to ``kill(pid, 0)``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

OWNER_ENV = "BUGHUNT_OWNER"
"""Environment variable holding the owner token of the run a process belongs to."""

PROC = Path("/proc")

CLOCK_SLACK_S = 60.0
"""Seconds a pid's process may seem to start after the labelled object was made and still
have made it: the engine's clock (remote engines) may differ from this host's. A pid reused
that soon after is not told from its owner; its leftovers then wait for a later sweep."""


def _number(text: str) -> int | None:
    """A positive decimal number written in ASCII digits, else ``None``."""
    return int(text) if text.isascii() and text.isdigit() and int(text) > 0 else None


@dataclass(frozen=True, slots=True)
class Owner:
    """The process a run's leftovers belong to, as its token names it."""

    host: str
    """``socket.gethostname()`` where the process ran."""
    pid: int
    """Its process id."""
    started: int | None = None
    """Its start time in clock ticks after boot; ``None`` in a ``<host>:<pid>`` label of an
    older bughunt (then only the pid is checked)."""

    def __str__(self) -> str:
        token = f"{self.host}:{self.pid}"
        return token if self.started is None else f"{token}:{self.started}"

    @classmethod
    def parse(cls, token: str | None) -> Owner | None:
        """The owner ``token`` names (``host:pid:start`` or ``host:pid``); ``None`` if malformed."""
        parts = (token or "").strip().split(":")
        if len(parts) not in (2, 3) or not parts[0]:
            return None
        pid = _number(parts[1])
        started = _number(parts[2]) if len(parts) == 3 else None
        if pid is None or (len(parts) == 3 and started is None):
            return None
        return cls(parts[0], pid, started)

    def is_dead(self, made_at: float | None = None) -> bool:
        """True only when this owner provably no longer runs on this host.

        Dead: the pid is gone or a zombie; with a start time, the pid belongs
        to a process started at another time; without one, to a process
        started more than :data:`CLOCK_SLACK_S` after ``made_at`` (the Unix
        time the labelled object was made), which cannot have made it. Never
        dead: an owner on another host, or a pid that answers ``kill(0)``
        where ``/proc`` cannot tell.
        """
        if self.host != socket.gethostname():
            return False
        stat = proc_stat(self.pid)
        if stat is None:
            return not _signalable(self.pid)
        if stat.state in ("Z", "X"):
            return True
        if self.started is not None:
            return stat.started != self.started
        began = wall_start(stat)
        return made_at is not None and began is not None and began > made_at + CLOCK_SLACK_S


def _signalable(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


@dataclass(frozen=True, slots=True)
class ProcStat:
    """The fields of ``/proc/<pid>/stat`` the sweep needs."""

    pid: int
    state: str
    """One letter: ``R``, ``S``, ``D``, ``Z`` (zombie), ..."""
    ppid: int
    pgid: int
    started: int
    """Start time in clock ticks after boot (field 22)."""


def proc_stat(pid: int) -> ProcStat | None:
    """The process's stat fields, or ``None`` when it is gone or there is no ``/proc``."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ")".
    fields = text.rpartition(")")[2].split()
    try:
        return ProcStat(pid, fields[0], int(fields[1]), int(fields[2]), int(fields[19]))
    except (IndexError, ValueError):
        return None


@functools.cache
def _boot_time() -> float | None:
    """Unix time of the boot (``btime`` in ``/proc/stat``)."""
    with contextlib.suppress(OSError, ValueError):
        for line in (PROC / "stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    return None


def wall_start(stat: ProcStat) -> float | None:
    """The process's start as Unix time (to about a second), or ``None`` without ``/proc``."""
    boot = _boot_time()
    return None if boot is None else boot + stat.started / os.sysconf("SC_CLK_TCK")


def this_process() -> Owner:
    """This process's own token (its start time from ``/proc`` when there is one)."""
    stat = proc_stat(os.getpid())
    return Owner(socket.gethostname(), os.getpid(), stat.started if stat else None)


def run_owner() -> Owner:
    """The owner of what this process starts: the inherited ``BUGHUNT_OWNER``, else itself.

    A Dask worker or a judge of a run thus labels its containers with the
    run's token; a process outside any run (a deployment's flow, a test) with
    its own.
    """
    return Owner.parse(os.environ.get(OWNER_ENV)) or this_process()


def label_token() -> str:
    """``<host>:<pid>`` of :func:`run_owner`: the owner label of containers and networks."""
    owner = run_owner()
    return f"{owner.host}:{owner.pid}"


def claim() -> Owner:
    """Make this process the owner of everything it starts from now on; return its token.

    Overwrites an inherited token: a run command is the root of its own run.
    """
    owner = this_process()
    os.environ[OWNER_ENV] = str(owner)
    return owner


def environ_owner(pid: int) -> Owner | None:
    """The owner token ``pid`` was started with; ``None`` if none, unreadable or gone."""
    try:
        data = (PROC / str(pid) / "environ").read_bytes()
    except OSError:  # gone, another user's, or no /proc
        return None
    prefix = OWNER_ENV.encode() + b"="
    for entry in data.split(b"\0"):
        if entry.startswith(prefix):
            return Owner.parse(entry[len(prefix) :].decode("ascii", "replace"))
    return None


@dataclass(frozen=True, slots=True)
class _Proc:
    stat: ProcStat
    owner: Owner | None


def _scan() -> dict[int, _Proc]:
    """Every visible process with its stat fields and inherited owner."""
    found: dict[int, _Proc] = {}
    with contextlib.suppress(OSError):
        for entry in PROC.iterdir():
            pid = _number(entry.name)
            stat = proc_stat(pid) if pid is not None else None
            if stat is not None:
                found[stat.pid] = _Proc(stat, environ_owner(stat.pid))
    return found


def _lineage(pid: int, procs: dict[int, _Proc]) -> set[int]:
    """``pid`` and its ancestors."""
    line: set[int] = set()
    while pid > 0 and pid not in line:
        line.add(pid)
        pid = procs[pid].stat.ppid if pid in procs else 0
    return line


def _orphaned(proc: _Proc) -> bool:
    """True when ``proc`` belongs to a dead owner and could be its descendant."""
    owner = proc.owner
    if owner is None or proc.stat.state in ("Z", "X") or not owner.is_dead():
        return False
    # A process older than its owner cannot descend from it (a token copied by hand).
    return owner.started is None or proc.stat.started >= owner.started


def _groups(victims: list[_Proc], procs: dict[int, _Proc], protected: set[int]) -> set[int]:
    """Process groups that are wholly a dead run's: led by a victim, or by a dead owner itself.

    A group whose leader is anything else (a shell, a CI runner, a live run)
    is never killed whole: only its victims are.
    """
    pids = {v.stat.pid for v in victims}
    owners = {v.owner.pid for v in victims if v.owner is not None}
    return {
        g
        for g in {v.stat.pgid for v in victims}
        if g not in protected and (g in pids or (g in owners and not _running(procs.get(g))))
    }


def _running(proc: _Proc | None) -> bool:
    return proc is not None and proc.stat.state not in ("Z", "X")


def _kill(pid: int, started: int) -> None:
    """SIGKILL ``pid`` if it is still the process that started at ``started``.

    With a pidfd the check and the signal cannot hit a pid reused in between.
    """
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfds here, or already gone
        fd = -1
    try:
        stat = proc_stat(pid)
        if stat is None or stat.started != started:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if fd >= 0:
                signal.pidfd_send_signal(fd, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
    finally:
        if fd >= 0:
            os.close(fd)


def _wait_gone(procs: Iterable[ProcStat], timeout_s: float) -> None:
    """Wait until each process has exited (a zombie counts) or ``timeout_s`` has passed."""
    pending = list(procs)
    deadline = time.monotonic() + timeout_s
    while pending and time.monotonic() < deadline:
        time.sleep(0.02)
        pending = [p for p in pending if _still_running(p)]


def _still_running(p: ProcStat) -> bool:
    now = proc_stat(p.pid)
    return now is not None and now.started == p.started and now.state not in ("Z", "X")


def sweep_processes(timeout_s: float = 5.0) -> list[int]:
    """SIGKILL what dead runs left running on this host; return the pids killed, sorted.

    A victim is a process started with a ``BUGHUNT_OWNER`` whose owner
    :meth:`Owner.is_dead`. Its process group goes too when the group is the
    dead run's own (led by a victim, such as a judge in its session, or by
    the dead owner), so a child that dropped the variable cannot stay. Never
    touched: this process and its ancestors and their groups, processes of
    live owners or of another host, processes without a token, and
    processes older than the owner their token names. Returns once the
    killed processes have exited, or after ``timeout_s``.
    """
    procs = _scan()
    mine = _lineage(os.getpid(), procs)
    protected_groups = {procs[p].stat.pgid for p in mine if p in procs}
    victims = [p for p in procs.values() if p.stat.pid not in mine and _orphaned(p)]
    groups = _groups(victims, procs, protected_groups)
    doomed = {p.stat.pid: p.stat for p in victims}
    doomed |= {
        p.stat.pid: p.stat
        for p in procs.values()
        if p.stat.pgid in groups and p.stat.pid not in mine and p.stat.state not in ("Z", "X")
    }
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    for stat in doomed.values():
        _kill(stat.pid, stat.started)
    _wait_gone(doomed.values(), timeout_s)
    return sorted(doomed)
