"""The hash stat cache: same hashes as without it, and unchanged files are not read again."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from hypothesis import given, settings, strategies as st

from bughunt.hashing import hash_tree
from corpus import hash_case, hash_target, load_corpus
from corpus._hash_cache import (
    HashCache,
    cached_hash_case,
    cached_hash_target,
    hash_cache_at,
)
from tests.corpus_loader.builders import good_case, write_corpus

NAMES = st.sampled_from(["a.py", "b.py", "pkg/c.py", "pkg/d.txt", "__pycache__/x.pyc"])
TREES = st.dictionaries(NAMES, st.binary(max_size=64), min_size=1, max_size=5)
HOUR_NS = 3_600 * 10**9


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def an_hour_from_now() -> int:
    """A clock an hour ahead: files just written are not racy to a cache reading it."""
    return time.time_ns() + HOUR_NS


@settings(max_examples=60, deadline=None)
@given(TREES)
def test_cached_tree_hash_is_hash_tree(files: dict[str, bytes]) -> None:
    """Cold or warm, the cached tree hash equals bughunt.hashing.hash_tree."""
    with tempfile.TemporaryDirectory() as tmp:
        root = write_tree(Path(tmp), files)
        cache = HashCache(now_ns=an_hour_from_now)
        exclude = ("__pycache__",)
        expected = hash_tree(root, exclude=exclude)
        assert cache.hash_tree(root, exclude=exclude) == expected
        assert cache.hash_tree(root, exclude=exclude) == expected


def test_second_pass_reads_nothing(tmp_path: Path) -> None:
    """Files unchanged since they were hashed are answered from the cache, not read."""
    root = write_tree(tmp_path / "t", {"a.py": b"a", "pkg/b.py": b"b", "c.txt": b"c"})
    cache = HashCache(now_ns=an_hour_from_now)
    cache.hash_tree(root)
    assert (cache.hashed, cache.reused) == (3, 0)
    cache.hash_tree(root)
    assert (cache.hashed, cache.reused) == (3, 3)


def test_rewrite_with_same_size_and_mtime_is_read_again(tmp_path: Path) -> None:
    """A rewrite that keeps size and mtime still changes ctime: the file is read and rehashed."""
    root = write_tree(tmp_path / "t", {"a.py": b"old"})
    path = root / "a.py"
    before = path.stat()
    cache = HashCache(now_ns=an_hour_from_now)
    first = cache.hash_tree(root)
    path.write_bytes(b"new")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert cache.hash_tree(root) != first
    assert cache.hashed == 2
    assert cache.hash_tree(root) == hash_tree(root)


def test_file_written_just_now_is_not_trusted(tmp_path: Path) -> None:
    """A file changed less than racy_s before it was hashed is never cached (racy clean)."""
    root = write_tree(tmp_path / "t", {"a.py": b"x"})
    cache = HashCache(racy_s=3_600)
    cache.hash_tree(root)
    cache.hash_tree(root)
    assert (cache.hashed, cache.reused, len(cache)) == (2, 0, 0)


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    """A saved cache answers for the same files after loading; vanished files are dropped."""
    root = write_tree(tmp_path / "t", {"a.py": b"a", "b.py": b"b"})
    file = tmp_path / "hash-cache.json"
    cache = HashCache(now_ns=an_hour_from_now)
    cache.hash_tree(root)
    (root / "b.py").unlink()
    cache.save(file)
    loaded = HashCache.load(file, now_ns=an_hour_from_now)
    assert len(loaded) == 1
    loaded.hash_tree(root)
    assert (loaded.hashed, loaded.reused) == (0, 1)


def test_bad_cache_files_are_empty_caches(tmp_path: Path) -> None:
    """Corrupt JSON, another format or malformed entries cost a re-read, never an error."""
    file = tmp_path / "hash-cache.json"
    file.write_text("{not json")
    assert len(HashCache.load(file)) == 0
    file.write_text(json.dumps({"format": 99, "files": {"/x": [[1, 2, 3, 4, 5], "0" * 64]}}))
    assert len(HashCache.load(file)) == 0
    good = [[1, 2, 3, 4, 5], "a" * 64]
    file.write_text(
        json.dumps({"format": 1, "files": {"/ok": good, "/bad": [[1, 2], "x"], "/n": None}})
    )
    assert len(HashCache.load(file)) == 1
    assert len(HashCache.load(tmp_path / "missing.json")) == 0


def test_save_never_creates_the_folder(tmp_path: Path) -> None:
    """Saving into a folder that does not exist (a task on another machine) writes nothing."""
    HashCache().save(tmp_path / "nowhere" / "hash-cache.json")
    assert not (tmp_path / "nowhere").exists()


def test_cache_at_saves_on_success(tmp_path: Path) -> None:
    """hash_cache_at loads, hands out and saves the cache; None keeps it in memory."""
    root = write_tree(tmp_path / "t", {"a.py": b"a"})
    os.utime(root / "a.py", ns=(0, 0))
    file = tmp_path / "hash-cache.json"
    with hash_cache_at(file) as cache:
        cache.hash_tree(root)
    assert json.loads(file.read_text())["format"] == 1
    with hash_cache_at(None) as memory:
        memory.hash_tree(root)
    assert memory.hashed == 1


def test_cached_case_and_target_hashes_match_the_stage(tmp_path: Path) -> None:
    """cached_hash_case / cached_hash_target give exactly hash_case / hash_target."""
    corpus = load_corpus(write_corpus(tmp_path / "c", {"one": good_case("one")}))
    cache = HashCache(now_ns=an_hour_from_now)
    target = cached_hash_target(corpus.targets[0].path, cache)
    assert target == hash_target(corpus.targets[0].path)
    case = corpus.cases[0]
    metadata = case.case.model_dump(mode="json", exclude={"case_hash"})
    assert cached_hash_case(metadata, case.case_dir, target, cache) == hash_case(
        metadata, case.case_dir, target
    )
