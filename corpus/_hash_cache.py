"""A stat cache for content hashing: a file whose stat is unchanged is not read again.

An unchanged night re-hashes a corpus whose bytes have not moved. The cache
maps a file's path and stat identity — size, mtime and ctime in nanoseconds,
inode and device — to the sha256 of its bytes, so such a file costs one
``stat`` instead of a read. Any change to the file changes its ctime (which
no user tool can set back), so a hit is a file the kernel says was not
written since it was hashed. Hashes stay exactly those of
:func:`bughunt.hashing.hash_tree` (docs/architecture.md#content-hashes): the cache changes what is
read, never what is hashed.

**Racy files.** A file written in the same timestamp tick as it was hashed
could be written again within that tick without its stat changing (git's
"racy clean" problem). Entries whose mtime or ctime is less than
``racy_s`` (2 s) before the moment they were hashed are therefore not kept.

**Where it lives.** ``.hash-cache.json`` in the folder named after the ledger
(``<ledger name>.runs/``, :data:`CACHE_FILE`), not in it: tasks never write the ledger (docs/architecture.md#the-stages),
a stat identity means something only on the machine that read the file
(the ledger's rows are portable), and the cache is disposable — deleting
it, or a corrupt or foreign file, costs only a re-read, never a wrong hash.
It is written atomically (temporary file, then rename); two runs saving at
once leave one of two valid caches. Entries of files that no longer exist
are dropped on save.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bughunt.errors import InputError
from bughunt.hashing import hash_json, hash_tree
from bughunt.outfile import write_output
from bughunt.safeio import read_input, sha256_regular
from corpus._hashing import METADATA_FILE, TREE_EXCLUDE

CACHE_FILE = ".hash-cache.json"
"""File name of the cache, in the ledger's folder."""
FORMAT = 1
"""Version of the file's layout; a file of another version is ignored."""
DEFAULT_RACY_S = 2.0
"""Files changed this recently before being hashed are not cached (see module docs)."""

Stat = tuple[int, int, int, int, int]
"""(size, mtime_ns, ctime_ns, inode, device)."""


def _stat_of(st: os.stat_result) -> Stat:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


class HashCache:
    """Path + stat → sha256, with counts of files read (``hashed``) and not read (``reused``)."""

    def __init__(
        self,
        entries: Mapping[str, tuple[Stat, str]] | None = None,
        *,
        racy_s: float = DEFAULT_RACY_S,
        now_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self._entries: dict[str, tuple[Stat, str]] = dict(entries or {})
        self._racy_ns = int(racy_s * 1e9)
        self._now_ns = now_ns
        self.hashed = 0
        """Files read and hashed through this cache."""
        self.reused = 0
        """Files whose hash came from the cache (not read)."""

    def __len__(self) -> int:
        return len(self._entries)

    # --- hashing ---------------------------------------------------------------

    def file_sha256(self, path: Path) -> str:
        """sha256 of the file's bytes; read only when its stat differs from the cached one."""
        key = os.fspath(path.absolute())
        stat = _stat_of(path.stat())
        hit = self._entries.get(key)
        if hit is not None and hit[0] == stat:
            self.reused += 1
            return hit[1]
        digest = sha256_regular(path)
        self.hashed += 1
        after = _stat_of(path.stat())
        newest = max(after[1], after[2])
        if after == stat and self._now_ns() - newest >= self._racy_ns:
            self._entries[key] = (stat, digest)
        else:  # written while read, or too recently to trust its stat: never cached
            self._entries.pop(key, None)
        return digest

    def hash_tree(self, root: Path, *, exclude: Iterable[str] = ()) -> str:
        """Exactly :func:`bughunt.hashing.hash_tree`, reading only files whose stat changed."""
        return hash_tree(root, exclude=exclude, file_hash=self.file_sha256)

    # --- persistence -----------------------------------------------------------

    @classmethod
    def load(cls, path: Path, **kwargs: Any) -> HashCache:
        """The cache saved at ``path``; empty when it is missing, unreadable, corrupt or foreign."""
        try:
            doc = json.loads(read_input(path, what="the hash cache").decode("utf-8"))
        except (InputError, UnicodeDecodeError, ValueError):
            return cls(**kwargs)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            return cls(**kwargs)
        entries: dict[str, tuple[Stat, str]] = {}
        raw = doc.get("files")
        for name, value in raw.items() if isinstance(raw, dict) else ():
            try:
                stat, digest = value
                size, mtime, ctime, ino, dev = (int(x) for x in stat)
            except (TypeError, ValueError):
                continue  # one bad entry costs only its re-read
            if isinstance(name, str) and isinstance(digest, str) and len(digest) == 64:
                entries[name] = ((size, mtime, ctime, ino, dev), digest)
        return cls(entries, **kwargs)

    def save(self, path: Path) -> None:
        """Write the cache atomically, without entries of files that no longer exist.

        A folder that does not exist is not created (a task on another
        machine has no ledger folder): nothing is written then; nor over
        anything at ``path`` that is not a regular file (a device, a FIFO, a
        symlink), which is left as it is.
        """
        if not path.parent.is_dir():
            return
        files = {
            name: [list(stat), digest]
            for name, (stat, digest) in sorted(self._entries.items())
            if os.path.lexists(name)
        }
        data = json.dumps({"format": FORMAT, "files": files}, separators=(",", ":")).encode()
        try:
            write_output(path, lambda out: out.write(data), field="hash cache", mode=0o600)
        except InputError:
            return  # a device, FIFO or link where the cache goes: left alone, never replaced


@contextmanager
def hash_cache_at(path: str | os.PathLike[str] | None) -> Iterator[HashCache]:
    """The cache saved at ``path`` (an empty in-memory one for ``None``), saved again on success."""
    if path is None:
        yield HashCache()
        return
    file = Path(path)
    cache = HashCache.load(file)
    yield cache
    cache.save(file)


def cached_hash_target(target: Path, cache: HashCache) -> str:
    """:func:`~corpus.hash_target`, through ``cache``."""
    return cache.hash_tree(target, exclude=TREE_EXCLUDE)


def cached_hash_case(
    metadata: Mapping[str, Any], case_dir: Path, target_hash: str, cache: HashCache
) -> str:
    """:func:`~corpus.hash_case`, through ``cache`` (same hash, same inputs)."""
    files = cache.hash_tree(case_dir, exclude=(*TREE_EXCLUDE, METADATA_FILE))
    return hash_json({"metadata": dict(metadata), "files": files, "target": target_hash})
