"""Case and corpus content hashes, and manifest differences (DESIGN §4). Pure functions.

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

from pydantic import BaseModel, ConfigDict

from bughunt.hashing import hash_json, hash_tree

TREE_EXCLUDE: tuple[str, ...] = ("__pycache__", ".pytest_cache", ".mypy_cache", ".DS_Store")
"""Names never hashed: caches a test run leaves behind."""

METADATA_FILE = "case.toml"


class ManifestDiff(BaseModel):
    """What changed since the previous manifest of the same corpus."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    previous_run_id: str | None
    """Run whose manifest was compared against; null when there was none."""
    new: list[str]
    """Cases absent from the previous manifest."""
    changed: list[str]
    """Cases whose hash differs."""
    removed: list[str]
    """Cases in the previous manifest but not now."""
    unchanged: list[str]
    """Cases with the same hash."""


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


def diff_manifests(
    previous: Mapping[str, str], current: Mapping[str, str], previous_run_id: str | None
) -> ManifestDiff:
    """Compare two ``case_id → case_hash`` maps; every list is sorted."""
    return ManifestDiff(
        previous_run_id=previous_run_id,
        new=sorted(set(current) - set(previous)),
        changed=sorted(c for c in current if c in previous and previous[c] != current[c]),
        removed=sorted(set(previous) - set(current)),
        unchanged=sorted(c for c in current if previous.get(c) == current[c]),
    )
