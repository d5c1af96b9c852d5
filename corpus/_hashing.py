"""Case and corpus content hashes (docs/corpus.md, "Hashes"). Pure functions.

A case hash covers the case's metadata (canonical JSON of its parsed
case.toml), every other file of its folder (``bug.patch`` first among them,
raw bytes), and the hash of the target tree it applies to (which holds the
target's tests). The corpus hash is a hash over the sorted case hashes.
Modes, mtimes, owners, checkout paths and case.toml formatting are not covered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bughunt.hashing import hash_json, hash_tree

TREE_EXCLUDE: tuple[str, ...] = ("__pycache__", ".pytest_cache", ".mypy_cache", ".DS_Store")
"""Names never hashed: caches a test run leaves behind."""

METADATA_FILE = "case.toml"


def hash_target(target: Path) -> str:
    """Hash of the shared target tree (its sources and its tests)."""
    return hash_tree(target, exclude=TREE_EXCLUDE)


def hash_case(metadata: Mapping[str, Any], case_dir: Path, target_hash: str) -> str:
    """Hash of one case: metadata as canonical JSON, its folder's other files, its target."""
    files = hash_tree(case_dir, exclude=(*TREE_EXCLUDE, METADATA_FILE))
    return hash_json({"metadata": dict(metadata), "files": files, "target": target_hash})


def hash_corpus(case_hashes: Iterable[str]) -> str:
    """Hash over the sorted case hashes: the same set of cases gives the same hash."""
    return hash_json(sorted(case_hashes))
