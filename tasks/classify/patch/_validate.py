"""Patch validation (docs/architecture.md#bad-input): is this ``bug.patch`` safe and able to inject its bug?

Checks run cheapest first, so a hostile patch costs as little as possible:
size (before anything is decoded or parsed), UTF-8, binary content, the
``unidiff`` parse, at least one file and hunk, every path (relative, ``a/`` /
``b/`` prefixed, no ``..``, no ``.git``, not through or onto a symlink in the
target, no symlink or submodule modes), and last a dry run of ``git apply
--check`` in the target. The first failed check is the reason.

``git apply`` is the applier (not GNU ``patch``): it handles renames, new and
deleted files, ``\\ No newline at end of file`` and CRLF lines exactly; it
never runs ``ed`` scripts; it refuses ``..`` paths and paths beyond a symlink
on its own, a second line of defence behind the checks here; and it applies
with no fuzz, so "applies" means the context matches.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from bughunt.errors import InputError, TerminalError
from corpus import DEFAULT_MAX_PATCH_BYTES
from tasks.classify.patch._diff import DEV_NULL, FilePatch, ParsedPatch, decode_utf8, parse_patch

DEFAULT_APPLY_TIMEOUT_S = 30.0
"""Wall-clock limit of one ``git apply --check`` dry run."""

_BINARY = re.compile(r"^(?:GIT binary patch|Binary files? .* (?:differ|has changed))\r?$", re.M)
_SPECIAL_MODES = {"120000": "a symbolic link", "160000": "a submodule"}


def git_apply_argv(*, check: bool) -> list[str]:
    """Argument vector applying a patch read from stdin with ``-p1``, run with cwd = the target.

    ``check=True`` is the dry run used here; the sandbox applies with
    ``check=False`` so both agree on what "applies" means.
    """
    return ["git", "apply", *(["--check"] if check else []), "-p1", "--whitespace=nowarn", "-"]


def git_apply_env(target: Path) -> dict[str, str]:
    """A clean environment for ``git apply`` in ``target``.

    Outside of a repository, ``git apply`` patches the working directory. A
    target that lives inside a repository (the demo corpus does) would make it
    resolve paths from the repository root and silently skip files outside
    the current folder, so discovery is stopped at the target's parent. No
    user or system config (an ``apply.whitespace=error`` there must not change
    the answer), and no inherited ``GIT_DIR``.
    """
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CEILING_DIRECTORIES": str(target.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LC_ALL": "C",
    }


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _unprefixed(name: str, *, prefixed: bool, file: str, line: int) -> str:
    """``name`` without its ``a/`` or ``b/`` prefix; it must name a file by a relative path."""
    if not name:
        raise InputError("a file header names no file", file=file, line=line)
    if name.startswith("/"):
        raise InputError(f"absolute path {name!r}", file=file, line=line)
    if not prefixed:
        return name
    if not name.startswith(("a/", "b/")):
        raise InputError(
            f"path {name!r} lacks the a/ or b/ prefix (the patch is applied with -p1)",
            file=file,
            line=line,
        )
    return name[2:]


def _segments(name: str, rel: str, *, file: str, line: int) -> list[str]:
    """The segments of ``rel``, which must be relative, with no ``..`` and no ``.git``."""
    parts = rel.split("/")
    if rel.startswith("/"):
        raise InputError(f"absolute path {rel!r} after the prefix", file=file, line=line)
    if ".." in parts:
        raise InputError(f"path {name!r} escapes the target (..)", file=file, line=line)
    if any(p.lower() == ".git" for p in parts):
        # A .git folder written into the target would turn it into a repository
        # whose config git (run in the target) obeys.
        raise InputError(f"path {name!r} writes into a .git folder", file=file, line=line)
    return parts


def _check_no_symlink(name: str, parts: list[str], *, target: Path, file: str, line: int) -> None:
    """No part of the path that exists in ``target`` is a symbolic link."""
    current = target
    for part in parts:
        if part in ("", "."):
            continue
        current = current / part
        if current.is_symlink():
            shown = current.relative_to(target).as_posix()
            raise InputError(
                f"path {name!r} passes through a symbolic link in the target ({shown})",
                file=file,
                line=line,
            )
        if not current.exists():
            break


def _check_name(name: str, *, prefixed: bool, target: Path, file: str, line: int) -> None:
    """One path named by the patch must land inside ``target`` and not through a symlink."""
    if name == DEV_NULL and prefixed:
        return
    rel = _unprefixed(name, prefixed=prefixed, file=file, line=line)
    parts = _segments(name, rel, file=file, line=line)
    _check_no_symlink(name, parts, target=target, file=file, line=line)
    if not (target / rel).resolve().is_relative_to(target):
        raise InputError(f"path {name!r} resolves outside the target", file=file, line=line)


def _check_file(fp: FilePatch, *, target: Path, file: str) -> None:
    line = fp.header_line
    if fp.binary:
        raise InputError(f"binary change to {fp.path!r}", file=file, line=line)
    if fp.mode in _SPECIAL_MODES:
        raise InputError(
            f"{fp.path!r} would become {_SPECIAL_MODES[fp.mode]} (mode {fp.mode})",
            file=file,
            line=line,
        )
    for name in (fp.raw_old, fp.raw_new):
        _check_name(name, prefixed=True, target=target, file=file, line=line)
    for name in fp.extra_paths:
        _check_name(name, prefixed=False, target=target, file=file, line=line)


def _dry_run(data: bytes, target: Path, *, file: str, timeout: float) -> None:
    try:
        proc = subprocess.run(
            git_apply_argv(check=True),
            input=data,
            cwd=target,
            env=git_apply_env(target),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        # Not the case's fault: every case would fail the same way.
        raise TerminalError(
            "git is needed to dry-run patches and was not found on PATH; install git"
        ) from None
    except subprocess.TimeoutExpired:
        raise InputError(
            f"dry run (git apply --check) did not finish within {timeout:g} s", file=file
        ) from None
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
        detail = "; ".join(s.removeprefix("error: ") for s in said[:4]) or f"exit {proc.returncode}"
        raise InputError(f"does not apply to the target: {detail}", file=file)


def validate_patch(
    data: bytes,
    target: Path,
    *,
    file: str = "bug.patch",
    max_bytes: int = DEFAULT_MAX_PATCH_BYTES,
    apply_timeout: float = DEFAULT_APPLY_TIMEOUT_S,
) -> ParsedPatch:
    """Check a patch against the target tree; return it parsed when it is safe and applies.

    Raises :class:`InputError` naming ``file`` (and the patch line where one
    is at fault) for the first failed check, in this order: over
    ``max_bytes`` (nothing else is done), not UTF-8, a NUL byte, binary
    content, malformed diff, no file or no hunk, an unsafe path or mode, does
    not apply cleanly. Never writes to ``target``. Raises
    :class:`TerminalError` only when ``git`` itself is missing.
    """
    if len(data) > max_bytes:
        raise InputError(f"{len(data)} bytes is over the {max_bytes}-byte patch limit", file=file)
    text = decode_utf8(data, file=file)
    nul = text.find("\0")
    if nul >= 0:
        raise InputError("binary content (a NUL byte)", file=file, line=_line_of(text, nul))
    binary = _BINARY.search(text)
    if binary:
        raise InputError(
            f"binary patch ({binary.group().strip()!r})",
            file=file,
            line=_line_of(text, binary.start()),
        )
    parsed = parse_patch(text, file=file)
    if not parsed.files:
        raise InputError("no file changes found: not a unified diff?", file=file)
    target = target.resolve()
    if not target.is_dir():
        raise InputError("target folder does not exist", file=str(target))
    for fp in parsed.files:
        _check_file(fp, target=target, file=file)
    if parsed.hunks == 0:
        raise InputError("no hunks: the patch changes no lines", file=file)
    _dry_run(data, target, file=file, timeout=apply_timeout)
    return parsed
