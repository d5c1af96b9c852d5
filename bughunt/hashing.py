"""Content hashes from canonical bytes (docs/architecture.md#content-hashes), in one place.

Metadata is hashed as sorted-key compact JSON; files as their raw bytes;
trees as their sorted relative paths with each file's hash. The same content
gives the same hash on any machine, whatever the file modes or mtimes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from bughunt.errors import InputError
from bughunt.safeio import sha256_regular, special_entry


def canonical_json(value: Any) -> bytes:
    """Sorted-key, compact, UTF-8 JSON: the one serialisation that is hashed."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of raw bytes."""
    return hashlib.sha256(data).hexdigest()


def hash_json(value: Any) -> str:
    """Hex sha256 of a JSON-able value's canonical form."""
    return sha256_bytes(canonical_json(value))


def hash_parts(parts: Iterable[tuple[str, str]]) -> str:
    """Hash labelled part hashes, order-independent: sorted by label."""
    return hash_json(sorted(parts))


def file_sha256(path: Path) -> str:
    """Hex sha256 of a regular file's bytes; anything else (a link, a FIFO, a device) raises
    :class:`~bughunt.errors.InputError` naming it (:func:`bughunt.safeio.sha256_regular`)."""
    return sha256_regular(path)


def hash_tree(
    root: Path, *, exclude: Iterable[str] = (), file_hash: Callable[[Path], str] = file_sha256
) -> str:
    """Hash a folder: sorted relative POSIX paths, each with its file's sha256.

    Modes, mtimes and owners are not covered. Symlinks are hashed by their
    target text, never followed, so a link cannot pull outside bytes in. A
    FIFO, a device or a socket raises :class:`~bughunt.errors.InputError`
    naming it: its content is no content (``/dev/zero`` never ends).
    Names listed in ``exclude`` (folder or file names, e.g. ``__pycache__``)
    are skipped at any depth. ``file_hash`` gives a file's sha256 (a cache
    may answer it without reading the file; it must give the same digest).
    """
    skip = set(exclude)
    entries: list[tuple[str, str]] = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if skip.intersection(rel.parts):
            continue
        problem = special_entry(path)
        if problem is not None:
            raise InputError(problem, file=str(path))
        if path.is_symlink():
            entries.append((rel.as_posix(), "link:" + sha256_bytes(str(path.readlink()).encode())))
        elif path.is_file():
            entries.append((rel.as_posix(), file_hash(path)))
    return hash_json(entries)
