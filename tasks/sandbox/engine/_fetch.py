"""Fetching an environment's packages on the host, for a build container that has no network.

Debian packages come from the archive of the sandbox base's suite, through a
private apt configuration (its own sources list, lists, cache and state, and
none of the host's ``apt.conf.d`` hooks or pins): the names are checked first
against an empty status, then the closure is resolved against the base
image's own ``dpkg`` status, so exactly the packages missing from the base
are downloaded; a name is used only when it is a package's exact name.
Python wheels come from the operator's package index through pip run
isolated, for the base's Python and platform, from a requirements file the
host writes from the checked pins (never the user's), wheels only, every
file checked against its hash; a pin with no wheel comes as its source
distribution's bytes (``_sdist``), built later in the build container.
Nothing here builds or runs a package, or starts a container.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from packaging.utils import canonicalize_name

from bughunt.errors import InputError
from tasks.sandbox.engine._errors import SandboxImageError
from tasks.sandbox.engine._requirements import Pin, render
from tasks.sandbox.engine._sdist import fetch_sdist

MIRROR = "http://deb.debian.org/debian"
"""Debian archive the packages come from (debootstrap's default, where the base came from)."""
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
"""Keys the archive's Release file is checked with (package ``debian-archive-keyring``)."""
PIP_WHEEL_PACKAGE = "python3-pip-whl"
"""Debian's pip as a wheel: runs the install inside the build container and is not installed."""
PIP_INDEX_ENV = "BUGHUNT_PIP_INDEX_URL"
"""Operator's variable naming the package index wheels are fetched from (docs/agents.md)."""
DEFAULT_PIP_INDEX = "https://pypi.org/simple"
"""The index without ``BUGHUNT_PIP_INDEX_URL``."""

_TOOL_TIMEOUT_S = 900
# Docker's architecture names (GOARCH) → Debian's, and the machine in manylinux tags.
_DPKG_ARCH = {"amd64": "amd64", "arm64": "arm64", "386": "i386", "ppc64le": "ppc64el"}
_MACHINE = {"amd64": "x86_64", "arm64": "aarch64", "386": "i686", "ppc64le": "ppc64le"}
_APT_MISSING = re.compile(
    r"^E: (?:Unable to locate package (\S+)|Package '?([^' ]+)'? has no installation candidate"
    r"|Couldn't find any package by \w+ '([^']+)')"
)
_PIP_MISSING = re.compile(r"No matching distribution found for (\S+)")


@dataclass(frozen=True, slots=True)
class Requirements:
    """An environment's checked requirements: the file they were read from and its pins."""

    file: Path
    """The user's requirements file (named in errors, never handed to pip)."""
    pins: tuple[Pin, ...]
    """Its requirements, checked (:func:`tasks.sandbox.engine._requirements.check_requirements`)."""


@dataclass(frozen=True, slots=True)
class Platform:
    """What pip downloads for: the base's Python and C library, on its architecture."""

    python: str
    """``major.minor`` of the base's ``python3``."""
    glibc: tuple[int, int]
    """Version of the base's C library (manylinux tags up to it are accepted)."""
    machine: str
    """Machine in wheel tags (``x86_64``)."""

    def pip_args(self) -> list[str]:
        """pip's target options: this Python's CPython ABI and every manylinux tag it accepts."""
        major, minor = self.glibc
        tags = [f"manylinux_{major}_{m}_{self.machine}" for m in range(minor, 4, -1)]
        legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
        tags += [f"{name}_{self.machine}" for m, name in legacy.items() if m <= minor]
        abi = "cp" + self.python.replace(".", "")
        args = ["--python-version", self.python, "--implementation", "cp", "--abi", abi]
        for tag in tags:
            args += ["--platform", tag]
        return args


class Apt:
    """apt on the host with a configuration of its own under ``root``: one suite, one architecture.

    ``docker_arch`` is the base image's architecture as the engine names it.
    Raises :class:`SandboxImageError` when apt or the archive keyring is
    missing on the host, or the architecture has no Debian name.
    """

    def __init__(self, root: Path, *, suite: str, docker_arch: str) -> None:
        if shutil.which("apt-get") is None or shutil.which("apt-cache") is None:
            raise SandboxImageError(
                "apt-get is needed on the host to fetch an environment's Debian packages"
            )
        if not KEYRING.is_file():
            raise SandboxImageError(
                f"{KEYRING} is missing (`apt-get install debian-archive-keyring`)"
            )
        arch = _DPKG_ARCH.get(docker_arch)
        if arch is None:
            raise SandboxImageError(f"no Debian architecture for the base's {docker_arch!r}")
        self.root, self.arch, self.docker_arch, self.suite = root, arch, docker_arch, suite
        self._known: frozenset[str] | None = None
        for sub in ("parts", "lists/partial", "archives/partial", "state", "cache", "pool"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        self.empty_status = root / "empty-status"
        self.empty_status.write_text("")
        (root / "sources.list").write_text(f"deb [signed-by={KEYRING}] {MIRROR} {suite} main\n")
        # Read before the host's apt.conf.d (APT_CONFIG), so its hooks and pins never apply.
        settings = {
            "Dir::Etc::Parts": root / "parts",
            "Dir::Etc::SourceList": root / "sources.list",
            "Dir::Etc::SourceParts": root / "parts",
            "Dir::Etc::Preferences": root / "preferences",
            "Dir::Etc::PreferencesParts": root / "parts",
            "Dir::State": root / "state",
            "Dir::State::Lists": root / "lists",
            "Dir::State::status": self.empty_status,
            "Dir::Cache": root / "cache",
            "Dir::Cache::archives": root / "archives",
            "APT::Architecture": arch,
            "Debug::NoLocking": "true",  # every folder is this build's own
            "APT::Sandbox::User": "root",  # as root, do not drop to _apt (it cannot enter root's temp)
            "Acquire::Languages": "none",
        }
        config = "".join(f'{key} "{value}";\n' for key, value in settings.items())
        config += f'APT::Architectures {{ "{arch}"; }};\n'
        (root / "apt.conf").write_text(config)

    def _run(self, argv: list[str], *, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "APT_CONFIG": str(self.root / "apt.conf"), "LC_ALL": "C"}
        return subprocess.run(
            argv,
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=_TOOL_TIMEOUT_S,
            check=False,
        )

    def update(self) -> None:
        """Fetch the suite's package index (about 9 MB); SandboxImageError when it cannot."""
        self._known = None
        done = self._run(["apt-get", "-q", "update"])
        if done.returncode != 0 or "Failed to fetch" in done.stderr:
            raise SandboxImageError(f"apt-get update from {MIRROR} failed: {_last(done.stderr)}")

    def package_names(self) -> frozenset[str]:
        """Every package name of the suite's index, exactly as apt knows it."""
        done = self._run(["apt-cache", "pkgnames"])
        if done.returncode != 0:
            raise SandboxImageError(f"apt-cache pkgnames failed: {_last(done.stderr)}")
        return frozenset(done.stdout.split())

    def _require_exact(self, names: list[str], *, file: str | None, field: str) -> None:
        if self._known is None:
            self._known = self.package_names()
        for name in names:
            if name not in self._known:
                raise InputError(
                    f"no Debian package named exactly {name!r} in {MIRROR} {self.suite} "
                    "(exact package names only, never patterns)",
                    file=file,
                    field=field,
                )

    def check_names(self, names: list[str], *, file: str | None, field: str) -> None:
        """Every name is an installable package of the suite, or InputError naming the first that is not.

        A name must be a package's exact name first: apt-get reads one it
        does not find as a glob or a POSIX regular expression over every
        package (``texlive-.+`` selects hundreds), and a trailing ``+`` or
        ``-`` as an install or remove request. Only exact names ever reach
        apt-get, which then selects that package alone.
        """
        self._require_exact(names, file=file, field=field)
        done = self._run(["apt-get", "-s", "-q", "--no-install-recommends", "install", *names])
        if done.returncode == 0:
            return
        for line in done.stderr.splitlines():
            match = _APT_MISSING.match(line)
            if match:
                name = next(g for g in match.groups() if g)
                raise InputError(
                    f"no Debian package {name!r} to install (apt: {line[3:].strip()})",
                    file=file,
                    field=field,
                )
        raise InputError(
            f"the Debian packages cannot be installed: {_last(done.stderr)}", file=file, field=field
        )

    def version(self, package: str) -> str:
        """The suite's version of ``package``; SandboxImageError when the index has none."""
        done = self._run(["apt-cache", "show", "--no-all-versions", package])
        for line in done.stdout.splitlines():
            if line.startswith("Version: "):
                return line.removeprefix("Version: ").strip()
        raise SandboxImageError(f"the {MIRROR} index has no {package}: {_last(done.stderr)}")

    def platform(self) -> Platform:
        """The Python and C library of the suite (so of the base), for pip's wheel tags."""
        python = re.match(r"(\d+\.\d+)", self.version("python3"))
        glibc = re.match(r"(\d+)\.(\d+)", self.version("libc6"))
        if python is None or glibc is None:
            raise SandboxImageError("cannot read the Python and C library versions of the suite")
        return Platform(python[1], (int(glibc[1]), int(glibc[2])), _MACHINE[self.docker_arch])

    def download_missing(
        self, names: list[str], *, status: Path, file: str | None, field: str
    ) -> list[Path]:
        """The .deb files of ``names`` and their dependencies that the dpkg ``status`` lacks.

        ``names`` must be exact package names (:meth:`check_names`); any other
        is an InputError, never handed to apt-get.
        """
        self._require_exact(names, file=file, field=field)
        done = self._run(
            [
                "apt-get",
                "-q",
                "-y",
                "--no-install-recommends",
                "-o",
                f"Dir::State::status={status}",
                "install",
                "--download-only",
                *names,
            ]
        )
        if done.returncode != 0:
            raise InputError(
                f"the Debian packages cannot be installed on the base: {_last(done.stderr)}",
                file=file,
                field=field,
            )
        if re.search(r"^The following packages will be REMOVED", done.stdout, re.M):
            removed = done.stdout.split("will be REMOVED:", 1)[1].split("\n", 2)[1].strip()
            raise InputError(
                f"installing them would remove packages of the sandbox base ({removed})",
                file=file,
                field=field,
            )
        return sorted((self.root / "archives").glob("*.deb"))

    def download(self, package: str) -> Path:
        """One package's .deb alone (no dependencies), into the pool folder."""
        done = self._run(["apt-get", "-q", "download", package], cwd=self.root / "pool")
        found = sorted((self.root / "pool").glob(f"{package}_*.deb"))
        if done.returncode != 0 or not found:
            raise SandboxImageError(f"cannot download {package}: {_last(done.stderr)}")
        return found[0]


def pip_index(environ: Mapping[str, str] = os.environ) -> str:
    """The package index wheels come from: the operator's ``BUGHUNT_PIP_INDEX_URL``, or PyPI.

    An operator's setting, never a recipe's (a requirements file names no
    index). A value that is not an http(s) URL with a host is a
    :class:`SandboxImageError` naming the variable.
    """
    url = environ.get(PIP_INDEX_ENV, "").strip() or DEFAULT_PIP_INDEX
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise SandboxImageError(f"{PIP_INDEX_ENV}={url!r} is not an http(s) URL with a host")
    return url


@dataclass(frozen=True, slots=True)
class Fetched:
    """What the host fetched for an environment's requirements, all checked against the pins."""

    requirements: Path
    """The requirements file the host wrote from the pins (every pin, hashes included)."""
    wheels: list[Path]
    """Wheels pip downloaded."""
    sdists: list[Path]
    """Source distributions of pins without a wheel, to be built in the build container."""


def pip_download(
    requirements: Requirements, work: Path, platform: Platform, *, index: str, field: str
) -> Fetched:
    """Every file the checked ``requirements`` pin, fetched into ``work/wheels``.

    pip is never handed the user's file: it gets one written here from the
    pins, runs isolated from the host's pip configuration, with
    ``--only-binary=:all: --no-deps --require-hashes`` against ``index``, so
    no package is built or run on the host. A pin with no wheel for
    ``platform`` is looked up as a source distribution (:mod:`._sdist`):
    fetched as a plain file when one of its hashes matches, for the build
    container to build. A pin with neither (or no such project or version),
    or a file whose hash differs, is an :class:`InputError` naming the user's
    file, the pin's line and ``field``; any other failure (the index
    unreachable) :class:`SandboxImageError`.
    """
    dest = work / "wheels"
    dest.mkdir(parents=True, exist_ok=True)
    remaining, sdists = list(requirements.pins), list[Path]()
    while remaining:
        output = _pip(remaining, work / "pip-requirements.txt", dest, platform, index)
        if output is None:
            break
        missing = _PIP_MISSING.search(output)
        pin = _pin_named(requirements, missing[1]) if missing else None
        if pin is None or pin not in remaining:
            raise _pip_failure(output, requirements, platform, field=field)
        sdist = fetch_sdist(pin, index, dest)
        if sdist is None:
            raise _pip_failure(output, requirements, platform, field=field)
        sdists.append(sdist)
        remaining.remove(pin)
    written = work / "requirements.txt"
    written.write_text(render(list(requirements.pins)))
    return Fetched(written, sorted(dest.glob("*.whl")), sdists)


def _pip(pins: list[Pin], file: Path, dest: Path, platform: Platform, index: str) -> str | None:
    """Run ``pip download`` of ``pins`` (written to ``file``); None when it succeeded, else its output."""
    file.write_text(render(pins))
    argv = [
        sys.executable,
        "-m",
        "pip",
        "--isolated",
        "download",
        "--disable-pip-version-check",
        "--no-input",
        "--progress-bar",
        "off",
        "--index-url",
        index,
        "--require-hashes",
        "--only-binary=:all:",
        "--no-deps",
        *platform.pip_args(),
        "--dest",
        str(dest),
        "--requirement",
        str(file),
    ]
    done = subprocess.run(
        argv, capture_output=True, text=True, errors="replace", timeout=_TOOL_TIMEOUT_S, check=False
    )
    return None if done.returncode == 0 else done.stdout + done.stderr


def _pip_failure(
    output: str, requirements: Requirements, platform: Platform, *, field: str
) -> Exception:
    """What a failed ``pip download`` means: bad input naming the pin's line, or the index's fault."""
    file = str(requirements.file)
    missing = _PIP_MISSING.search(output)
    if missing:
        pin = _pin_named(requirements, missing[1])
        where = f"Python {platform.python}, manylinux {platform.machine}"
        return InputError(
            f"no wheel of {missing[1]} for {where} and no source distribution matching its "
            "hashes on the index (no such project or version?)",
            file=file,
            line=pin.line if pin else None,
            field=field,
        )
    lowered = output.lower()
    if "do not match the hashes" in lowered or "hashes are required" in lowered:
        culprit = re.search(r"^\s+(\S+==\S+) from ", output, re.M)
        pin = _pin_named(requirements, culprit[1]) if culprit else None
        return InputError(
            f"pip refused the hashes: {_last(output)}",
            file=file,
            line=pin.line if pin else None,
            field=field,
        )
    return SandboxImageError(f"pip download failed ({field}): {_last(output)}")


def _pin_named(requirements: Requirements, spec: str) -> Pin | None:
    """The pin ``name==version`` (as pip prints it) stands for, if any."""
    name = canonicalize_name(re.split(r"[=<>!~\[;\s]", spec, maxsplit=1)[0])
    return next((p for p in requirements.pins if p.name == name), None)


def _last(output: str, lines: int = 3) -> str:
    """The last few non-empty lines of a tool's output, joined into one line."""
    kept = [line.strip() for line in output.splitlines() if line.strip()][-lines:]
    return " | ".join(kept) or "no output"
