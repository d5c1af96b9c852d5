"""Pack a workspace into the tar an execution unpacks into its scratch space.

Pure: no Docker. The tar is deterministic (sorted entries, fixed owner,
modes and times), so the same content gives the same bytes on any host, and
nothing in it can point outside the workspace (docs/architecture.md#bad-input).
"""

from __future__ import annotations

import io
import os
import posixpath
import stat
import tarfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from bughunt.errors import InputError
from bughunt.safeio import read_input

Workspace = Path | Mapping[str, bytes | str]
"""A folder on the host, or a mapping of relative POSIX paths to file contents."""

OWNER_ID = 10001
"""Owner written into every tar entry (the sandbox user; tar as non-root ignores it anyway)."""

_MTIME = 946_684_800  # 2000-01-01: fixed, so identical content gives identical tars


def _entry(name: str, kind: bytes, mode: int, size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.size = size
    info.mtime = _MTIME
    info.uid = info.gid = OWNER_ID
    info.uname = info.gname = "sandbox"
    return info


def _check_relative(name: str, *, source: str) -> str:
    """The normalised relative path, or InputError when it could escape the workspace."""
    if not name or "\x00" in name:
        raise InputError("empty path or a NUL byte in a workspace path", file=source)
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        raise InputError(f"workspace path {name!r} escapes the workspace", file=source)
    return path.as_posix()


def _dirs_of(names: list[str]) -> list[str]:
    dirs: set[str] = set()
    for name in names:
        parent = PurePosixPath(name).parent
        while parent != PurePosixPath("."):
            dirs.add(parent.as_posix())
            parent = parent.parent
    return sorted(dirs)


def pack_workspace(workspace: Workspace | None, *, max_bytes: int) -> bytes:
    """The workspace as an uncompressed tar, or an empty tar for ``None``.

    A folder is read without following symlinks: a symlink is kept only when
    its relative target stays inside the folder; an absolute or escaping link,
    a device, FIFO or socket raises :class:`InputError` naming the file. A
    mapping's keys must be relative paths without ``..``. Content over
    ``max_bytes`` raises :class:`InputError` before anything is started.
    """
    buffer = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        if workspace is None:
            pass
        elif isinstance(workspace, Path):
            total = _pack_folder(tar, workspace, max_bytes)
        else:
            total = _pack_mapping(tar, workspace, max_bytes)
    if total > max_bytes:
        raise InputError(f"workspace holds {total} bytes, over the {max_bytes}-byte scratch space")
    return buffer.getvalue()


def _pack_mapping(tar: tarfile.TarFile, files: Mapping[str, bytes | str], max_bytes: int) -> int:
    contents: dict[str, bytes] = {}
    for raw_name, value in files.items():
        name = _check_relative(raw_name, source=raw_name)
        if not isinstance(value, bytes | str):
            raise InputError(f"content of {name!r} is neither bytes nor text", file=raw_name)
        contents[name] = value.encode() if isinstance(value, str) else value
    total = sum(len(data) for data in contents.values())
    if total > max_bytes:
        return total
    clash = set(contents).intersection(_dirs_of(list(contents)))
    if clash:
        raise InputError(f"{sorted(clash)[0]!r} is both a file and a folder", file=sorted(clash)[0])
    for folder in _dirs_of(list(contents)):
        tar.addfile(_entry(folder, tarfile.DIRTYPE, 0o755))
    for name in sorted(contents):
        data = contents[name]
        tar.addfile(_entry(name, tarfile.REGTYPE, 0o644, len(data)), io.BytesIO(data))
    return total


def _pack_folder(tar: tarfile.TarFile, root: Path, max_bytes: int) -> int:
    if not root.is_dir():
        raise InputError("workspace is not a folder", file=str(root))
    total = 0
    for current, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        base = Path(current)
        for name in [*dirnames, *sorted(filenames)]:
            path = base / name
            rel = path.relative_to(root).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(path)
                inside = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
                if posixpath.isabs(target) or inside == ".." or inside.startswith("../"):
                    raise InputError(f"symlink points outside the workspace ({target})", file=rel)
                link = _entry(rel, tarfile.SYMTYPE, 0o777)
                link.linkname = target
                tar.addfile(link)
            elif stat.S_ISDIR(info.st_mode):
                tar.addfile(_entry(rel, tarfile.DIRTYPE, 0o755))
            elif stat.S_ISREG(info.st_mode):
                total += info.st_size
                if total > max_bytes:
                    return total
                mode = 0o755 if info.st_mode & 0o111 else 0o644
                # Read from a descriptor checked to be a regular file: a swap for a FIFO or a
                # link after the lstat above is refused, never waited on or followed.
                data = read_input(path, limit=info.st_size, what="a workspace file", follow=False)
                tar.addfile(_entry(rel, tarfile.REGTYPE, mode, len(data)), io.BytesIO(data))
            else:
                raise InputError("not a regular file, folder or symlink", file=rel)
    return total
