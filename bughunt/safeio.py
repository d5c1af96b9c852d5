"""Reading input files and copying trees without following or draining special files.

Every file a user, a corpus or an agent hands bughunt is read here, so one
rule holds everywhere (docs/architecture.md#bad-input): only a regular file
is read, and never more than a stated limit. A FIFO (which blocks its
reader), a character device (``/dev/zero`` never ends), a socket or a folder
is refused in one line naming the path.

The check is made on the opened descriptor (``fstat``), never before the
open: a check followed by an open can be raced, and opening a FIFO without
``O_NONBLOCK`` blocks until a writer comes. ``O_NOFOLLOW`` refuses a symlink
as the last component. A path named by the user on the command line may be
a symlink to a regular file: it is resolved once (``os.path.realpath``) and
the result is opened with ``O_NOFOLLOW``, so a link to a device is refused
all the same. Files met while walking a tree are never followed
(``follow=False``).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from bughunt.errors import InputError

MiB = 1024 * 1024

DEFAULT_INPUT_LIMIT = 256 * MiB
"""Largest input file read whole (records, reports, labels, configurations)."""

CONFIG_LIMIT = 16 * MiB
"""Largest configuration file read (a TOML file, a requirements file)."""

TREE_FILE_LIMIT = 64 * MiB
"""Largest single file copied or hashed out of a tree (a target, an agent's folder)."""

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, in words ("a FIFO", "a character device", …)."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _refused(shown: str, what: str, kind: str) -> InputError:
    return InputError(f"cannot read {what}: it is {kind}, not a regular file", file=shown)


def _open_error(exc: OSError, shown: str, what: str) -> InputError:
    if exc.errno == errno.ELOOP:
        return _refused(shown, what, "a symbolic link")
    if exc.errno == errno.ENXIO:  # a socket, or a FIFO end without a peer
        return _refused(shown, what, "a special file")
    return InputError(f"cannot read {what}: {exc.strerror or exc}", file=shown)


def open_regular(path: str | os.PathLike[str], *, what: str, follow: bool = True) -> int:
    """A read-only descriptor of ``path``, which must be a regular file.

    ``follow``: resolve symlinks on the way once (a user-named link to a
    regular file is read); ``False`` refuses a symlink as the last component.
    Either way, what is opened is checked by ``fstat``: anything but a regular
    file raises :class:`InputError` naming ``path`` and what it is.
    """
    shown = os.fspath(path)
    real = os.path.realpath(shown) if follow else shown
    try:
        fd = os.open(real, _FLAGS)
    except OSError as exc:
        raise _open_error(exc, shown, what) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            link = f" (a link to {real})" if real != os.path.abspath(shown) else ""
            raise _refused(shown, what, kind_of(mode) + link)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_fd(fd: int, *, limit: int, shown: str, what: str) -> bytes:
    """Up to ``limit`` bytes of an open descriptor; :class:`InputError` when there are more."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, min(MiB, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise InputError(f"{what} is over the {limit}-byte limit", file=shown)


def read_input(
    path: str | os.PathLike[str],
    *,
    limit: int = DEFAULT_INPUT_LIMIT,
    what: str = "an input file",
    follow: bool = True,
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    A missing file, a folder, a FIFO, a device, a socket, a symlink when
    ``follow`` is false (or a link to any of those), and a file over
    ``limit`` bytes raise :class:`InputError` naming ``path``. Never blocks
    on a FIFO and never reads past ``limit + 1`` bytes.
    """
    shown = os.fspath(path)
    fd = open_regular(path, what=what, follow=follow)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise InputError(f"{size} bytes; {what} is over the {limit}-byte limit", file=shown)
        return read_fd(fd, limit=limit, shown=shown, what=what)
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", file=shown) from None
    finally:
        os.close(fd)


def read_text_input(
    path: str | os.PathLike[str],
    *,
    limit: int = DEFAULT_INPUT_LIMIT,
    what: str = "an input file",
    follow: bool = True,
) -> str:
    """:func:`read_input` decoded as UTF-8; not UTF-8 is an :class:`InputError` naming ``path``."""
    data = read_input(path, limit=limit, what=what, follow=follow)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"not UTF-8 text ({exc.reason})", file=os.fspath(path), line=line
        ) from None


def special_entry(path: Path) -> str | None:
    """Why the tree entry ``path`` may not be copied or hashed; None for a regular file,
    a folder or a symlink (never followed). Reads the entry itself (``lstat``), nothing else."""
    mode = path.lstat().st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
        return None
    return f"is {kind_of(mode)}; a tree holds only regular files, folders and symlinks"


def special_file(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is (followed) when it exists and is neither a regular file nor a folder
    ("a FIFO", "a character device", …); None otherwise. For a file another library opens by
    name (DuckDB): checked before its open, the best that can be done there."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else kind_of(mode)


def copy_tree(
    src: Path,
    dest: Path,
    *,
    exclude: Iterable[str] = (),
    limit: int = TREE_FILE_LIMIT,
) -> None:
    """Copy the folder ``src`` to ``dest`` (created): folders, regular files, and symlinks as
    links (their text, never followed).

    Names in ``exclude`` are skipped at any depth. Anything else (a FIFO, a
    device, a socket) and a file over ``limit`` bytes raise
    :class:`InputError` naming its path under ``src``; what was copied so far
    stays in ``dest`` for the caller to remove. Each file is opened with
    ``O_NOFOLLOW | O_NONBLOCK`` and checked on its descriptor, so a file
    swapped for a FIFO or a link between the walk and the read is refused too.
    """
    skip = set(exclude)
    dest.mkdir(parents=True)
    for folder, dirs, files in os.walk(src, followlinks=False):
        here = Path(folder)
        there = dest / here.relative_to(src)
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for name in sorted({*dirs, *files} - skip):
            path = here / name
            problem = special_entry(path)
            if problem is not None:
                raise InputError(problem, file=str(path))
            if path.is_symlink():
                (there / name).symlink_to(os.readlink(path))
                dirs[:] = [d for d in dirs if d != name]  # a link to a folder is not entered
            elif name in dirs:
                (there / name).mkdir()
            else:
                (there / name).write_bytes(
                    read_input(path, limit=limit, what="a tree's file", follow=False)
                )


def sha256_regular(path: str | os.PathLike[str], *, what: str = "a tree's file") -> str:
    """Hex sha256 of the regular file ``path``, read in chunks, never followed.

    A symlink, a FIFO, a device or a socket raises :class:`InputError`
    naming ``path`` (a device would otherwise be read for ever).
    """
    shown = os.fspath(path)
    fd = open_regular(path, what=what, follow=False)
    digest = hashlib.sha256()
    try:
        while chunk := os.read(fd, MiB):
            digest.update(chunk)
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", file=shown) from None
    finally:
        os.close(fd)
    return digest.hexdigest()
