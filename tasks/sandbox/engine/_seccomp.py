"""The seccomp profile of a cell (``_cell``): the system's container allowlist, a little tighter.

A cell makes a fresh user, PID, mount, IPC, network and cgroup namespace for
every execution with ``bwrap``, which needs ``unshare``, ``mount``,
``pivot_root`` and namespace flags on ``clone``. Docker's built-in profile
refuses those to a container without ``CAP_SYS_ADMIN``; the profile that
Debian ships for container engines (``golang-github-containers-common``:
``/usr/share/containers/seccomp.json``, podman's default) allows them and is
otherwise the same kind of allowlist, kept up to date by its maintainers, so
bughunt loads it rather than keeping its own list of 350 system calls.

On top of it, bughunt denies what no execution needs and Docker's profile
denies as well (kernel keyrings, reboot, the kernel log, file handles).
Inside the cell the test gets none of the namespace calls either: it runs
without capabilities in its own user namespace and ``bwrap
--disable-userns`` stops it making another, so ``mount`` and ``unshare``
fail for it with EPERM.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from tasks.sandbox.engine._errors import SandboxImageError

PROFILE_ENV = "BUGHUNT_SECCOMP_PROFILE"
"""Overrides where the base profile is read from (another distribution's path)."""
DEFAULT_PROFILE = Path("/usr/share/containers/seccomp.json")
PACKAGE = "golang-github-containers-common"
"""The Debian package that ships :data:`DEFAULT_PROFILE` (``make deps`` installs it)."""

DENIED = frozenset(
    {
        "add_key",
        "keyctl",
        "request_key",
        "reboot",
        "syslog",
        "name_to_handle_at",
        "open_by_handle_at",
    }
)
"""Taken out of every allow rule of the base profile."""

NEEDED = frozenset({"clone", "unshare", "mount", "umount2", "pivot_root"})
"""What ``bwrap`` needs allowed without a capability; a base profile lacking one is refused."""


def profile_path() -> Path:
    """Where the base profile is read from: ``BUGHUNT_SECCOMP_PROFILE``, else the Debian path."""
    return Path(os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE)


@functools.cache
def cell_profile(path: Path | None = None) -> str:
    """The cell's profile as compact JSON, for ``security_opt=["seccomp=<json>"]``.

    A missing or unreadable base profile, or one that does not allow what
    ``bwrap`` needs, raises :class:`SandboxImageError` naming the file and the
    package that provides it.
    """
    where = path or profile_path()
    try:
        base = json.loads(where.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SandboxImageError(
            f"{where}: the seccomp profile of sandbox cells is missing; install the Debian "
            f"package {PACKAGE} (`make deps`), or point {PROFILE_ENV} at an equivalent profile"
        ) from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SandboxImageError(f"{where}: not a readable seccomp profile: {exc}") from exc
    return json.dumps(tighten(base, where=where), sort_keys=True, separators=(",", ":"))


def tighten(base: Any, *, where: Path | str = "profile") -> dict[str, Any]:
    """``base`` with :data:`DENIED` taken out of its allow rules; checked to allow :data:`NEEDED`.

    Pure. Anything but a profile with a ``syscalls`` list, or one whose
    unconditional allow rules miss a name in :data:`NEEDED`, raises
    :class:`SandboxImageError` naming ``where``.
    """
    if not isinstance(base, dict) or not isinstance(base.get("syscalls"), list):
        raise SandboxImageError(f"{where}: not a seccomp profile (no 'syscalls' list)")
    rules: list[dict[str, Any]] = []
    allowed: set[str] = set()
    for rule in base["syscalls"]:
        if not isinstance(rule, dict) or not isinstance(rule.get("names"), list):
            raise SandboxImageError(f"{where}: a rule without a 'names' list: {rule!r}")
        rule = dict(rule)
        if rule.get("action") == "SCMP_ACT_ALLOW":
            rule["names"] = [n for n in rule["names"] if n not in DENIED]
            if not rule.get("args") and not rule.get("includes") and not rule.get("excludes"):
                allowed.update(rule["names"])
        if rule["names"]:
            rules.append(rule)
    missing = sorted(NEEDED - allowed)
    if missing:
        raise SandboxImageError(
            f"{where}: the profile does not allow {', '.join(missing)}, which sandbox cells need"
        )
    return {**base, "syscalls": rules}
