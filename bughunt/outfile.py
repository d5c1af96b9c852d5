"""Writing a file a user names without replacing what is not a regular file.

A file is written whole or not at all: into a temporary file beside it,
renamed over it once complete. A rename replaces the *directory entry*, so
renaming over ``/dev/null`` (as root) leaves the machine a regular file
there, and renaming over a symlink replaces the link. So the destination is
looked at first (:func:`write_output`):

- nothing there, or a regular file: written beside it and renamed over it;
- a FIFO or a character device (``/dev/stdout``, a pipe, a terminal,
  ``/dev/null``), or a symlink to one or to a regular file, when the caller
  streams (``stream=True``, ``bughunt export``): opened through and written in
  order, as a shell's ``>`` writes; never created or renamed over;
- anything else (a folder, a socket, a block device, a dangling link, or a
  link or device when the caller does not stream, as for a report's files):
  refused in one line naming the path.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TypeVar

from bughunt.errors import InputError

T = TypeVar("T")

_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
}


def kind(mode: int) -> str:
    """What a file of ``mode`` is, in words."""
    return _KINDS.get(stat.S_IFMT(mode), "a regular file" if stat.S_ISREG(mode) else "special")


def _streamable(mode: int) -> bool:
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def write_output(
    path: Path,
    write: Callable[[BinaryIO], T],
    *,
    field: str,
    stream: bool = False,
    mode: int = 0o644,
) -> T:
    """Call ``write`` with a binary file that ends up at ``path``; what ``write`` returned.

    Nothing there, or a regular file: written beside it with ``mode`` and
    renamed over it. With ``stream``, a FIFO or character device, or a symlink
    to one or to a regular file, is opened through and written in order (never
    replaced; a regular file is truncated first). Anything else (a folder, a
    socket, a block device, a dangling link, or any of these without
    ``stream``) or a missing folder raises :class:`InputError` naming ``path``
    and ``field``; nothing is written then.
    """
    try:
        entry: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        entry = None
    if entry is None or stat.S_ISREG(entry.st_mode):
        if not path.parent.is_dir():
            raise InputError("its folder does not exist", file=str(path), field=field)
        return _named(path, lambda: _atomic(path, write, mode))
    try:
        final: os.stat_result | None = os.stat(path)  # through every link, /proc's too
    except FileNotFoundError:
        final = None
    what = kind(entry.st_mode)
    if final is not None and stat.S_ISLNK(entry.st_mode):
        what += f" to {kind(final.st_mode)}"
    if stream and final is not None and _through(entry.st_mode, final.st_mode):
        return _named(path, lambda: _stream(path, write, field, entry.st_mode))
    raise InputError(f"is {what}; refusing to write over it", file=str(path), field=field)


def _through(entry: int, final: int) -> bool:
    """A stream may be written to a FIFO or device, or through a link to a regular file."""
    return _streamable(final) or (stat.S_ISLNK(entry) and stat.S_ISREG(final))


def _named(path: Path, act: Callable[[], T]) -> T:
    """``act()``, an error of the file system (a full disk, a closed pipe) naming ``path``."""
    try:
        return act()
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc


def _stream(path: Path, write: Callable[[BinaryIO], T], field: str, entry: int) -> T:
    # Opened through the link as a shell's ``>`` opens it (the kernel's protections for links
    # in shared folders apply); never created, never renamed over.
    try:
        # Not blocking: a FIFO nobody reads would hold the command forever.
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            raise
        raise InputError(
            "is a FIFO nobody is reading; start its reader first", file=str(path), field=field
        ) from None
    opened = os.fstat(fd).st_mode
    if not _through(entry, opened):  # something else was put there since it was looked at
        os.close(fd)
        raise InputError(
            f"became {kind(opened)} while being opened; try again", file=str(path), field=field
        )
    os.set_blocking(fd, True)
    if stat.S_ISREG(opened):
        os.ftruncate(fd, 0)
    with os.fdopen(fd, "wb") as out:
        return write(out)


def _atomic(target: Path, write: Callable[[BinaryIO], T], mode: int) -> T:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)  # mkstemp makes it 0600
        with os.fdopen(fd, "wb") as out:
            result = write(out)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return result
