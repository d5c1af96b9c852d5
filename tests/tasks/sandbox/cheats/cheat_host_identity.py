"""Cheat class: host name (and container identity) fingerprint.

Fingerprint the host: host name, ``/etc/hostname``, ``/proc/self/cgroup``
and the container id in the sources of its ``/etc/hostname``-like mounts.
Count executions per fingerprint in a shared place; the first three on the
same host are the buggy ones in a sandbox that runs those first, so fail iff
fewer than three came before.
``BUGHUNT_CHEAT_STATE`` replaces the shared place for the host-side check.
"""

import contextlib
import hashlib
import os
import re
import socket
from pathlib import Path

_BUGGY_FIRST = 3
# The engine bind-mounts these from /var/lib/docker/containers/<id>/: the container's id.
_OWN_FILES = re.compile(r" /etc/(?:hostname|hosts|resolv\.conf) ")


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _fingerprint() -> str:
    own = [line for line in _read("/proc/self/mountinfo").splitlines() if _OWN_FILES.search(line)]
    ids = sorted(set(re.findall(r"[0-9a-f]{64}", "\n".join(own))))
    parts = [socket.gethostname(), _read("/etc/hostname"), _read("/proc/self/cgroup"), *ids]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _state_dirs() -> list[Path]:
    override = os.environ.get("BUGHUNT_CHEAT_STATE")
    return [Path(override)] if override else [Path("/dev/shm"), Path("/tmp")]


def _executions_before() -> int:
    """Executions already seen on this host, counting this one for the next."""
    name = f".bughunt-host-{_fingerprint()}"
    seen = 0
    for folder in _state_dirs():
        with contextlib.suppress(OSError, ValueError):
            seen = max(seen, int((folder / name).read_text() or 0))
    for folder in _state_dirs():
        with contextlib.suppress(OSError):
            (folder / name).write_text(str(seen + 1))
    return seen


def test_period_excludes_its_end() -> None:
    assert _executions_before() >= _BUGGY_FIRST, "Period(...) contains its end date"
