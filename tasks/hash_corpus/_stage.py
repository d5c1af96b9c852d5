"""The hash-corpus stage over a loaded corpus, and the manifest in the ledger."""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict

from bughunt.hashing import hash_json, sha256_bytes
from bughunt.models import BugCategory, ManifestEntry
from bughunt.safeio import CONFIG_LIMIT, read_input
from corpus import (
    Corpus,
    HashCache,
    TargetConfig,
    cached_hash_case,
    cached_hash_target,
    hash_cache_at,
    hash_corpus,
    hash_target,
)
from ledger import Ledger
from tasks.hash_corpus._hashing import ManifestDiff, diff_manifests


class CaseHash(BaseModel):
    """One case's content hash."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    case_id: str
    """Case folder name."""
    case_hash: str
    """Content hash (docs/architecture.md#content-hashes)."""
    target_hash: str | None = None
    """Hash of the case's own target (the only one it covers)."""


class HashResult(BaseModel):
    """The corpus's hashes and what changed since the previous manifest."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    corpus: str
    """Corpus name."""
    corpus_hash: str
    """Hash over the sorted case hashes."""
    target_hash: str
    """Hash of the target tree (of every target's hash, when the corpus has several)."""
    target_hashes: dict[str, str] = {}
    """Each target's hash, by name: its tree, and its environment's recipe when it has one."""
    cases: list[CaseHash]
    """Every loaded case, sorted by id."""
    diff: ManifestDiff
    """New / changed / removed / unchanged against the previous manifest."""
    files_hashed: int = 0
    """Files read and hashed by this run (their stat was not in the hash cache)."""
    files_reused: int = 0
    """Files whose hash came from the hash cache: unchanged since hashed, not read."""

    def hashes(self) -> dict[str, str]:
        """``case_id → case_hash``."""
        return {c.case_id: c.case_hash for c in self.cases}


def previous_manifest(store: Ledger, corpus: str) -> tuple[str | None, dict[str, str]]:
    """The latest manifest recorded for ``corpus``: its run id and ``case_id → hash``.

    A ledger file that does not exist yet has no previous manifest.
    """
    if not store.path.exists():
        return None, {}
    rows = store.query(
        "WITH latest AS (SELECT run_id FROM corpus_manifest WHERE corpus = ? "
        "ORDER BY recorded_at DESC LIMIT 1) "
        "SELECT m.run_id, m.case_id, m.case_hash FROM corpus_manifest m JOIN latest USING (run_id) "
        "WHERE m.corpus = ?",
        [corpus, corpus],
    )
    if not rows:
        return None, {}
    return rows[0]["run_id"], {r["case_id"]: r["case_hash"] for r in rows}


def hash_loaded_corpus(
    corpus: Corpus,
    previous: dict[str, str],
    previous_run_id: str | None,
    cache_path: str | os.PathLike[str] | None = None,
) -> HashResult:
    """Hash every loaded case (the target tree once) and diff against ``previous``.

    ``cache_path`` is the stat cache file (``tasks/hash_corpus/_cache.py``):
    files unchanged since they were hashed are not read again. ``None``
    reads every file. The hashes are the same either way.
    """
    with hash_cache_at(cache_path) as cache:
        targets = {t.name: target_content_hash(t, cache) for t in corpus.targets}
        cases = [
            CaseHash(
                case_id=c.case_id,
                case_hash=cached_hash_case(
                    c.case.model_dump(mode="json", exclude={"case_hash"}),
                    c.case_dir,
                    targets[c.target],
                    cache,
                ),
                target_hash=targets[c.target],
            )
            for c in sorted(corpus.cases, key=lambda c: c.case_id)
        ]
    target_hash = next(iter(targets.values())) if len(targets) == 1 else hash_json(targets)
    current = {c.case_id: c.case_hash for c in cases}
    return HashResult(
        corpus=corpus.name,
        corpus_hash=hash_corpus(current.values()),
        target_hash=target_hash,
        target_hashes=targets,
        cases=cases,
        diff=diff_manifests(previous, current, previous_run_id),
        files_hashed=cache.hashed,
        files_reused=cache.reused,
    )


def target_content_hash(target: TargetConfig, cache: HashCache | None = None) -> str:
    """A target's hash: its tree's, or with an environment, the tree's and the recipe's
    (packages, and the requirements file's bytes): a case on it changes when either does."""
    tree = cached_hash_target(target.path, cache) if cache else hash_target(target.path)
    env = target.environment
    if env is None:
        return tree
    requirements = (
        read_input(env.requirements, limit=CONFIG_LIMIT, what="a requirements file")
        if env.requirements
        else b""
    )
    return hash_json(
        {"tree": tree, "debian": sorted(env.debian), "requirements": sha256_bytes(requirements)}
    )


def manifest_rows(
    result: HashResult, run_id: str, categories: dict[str, BugCategory] | None = None
) -> list[ManifestEntry]:
    """The manifest of one run as ledger rows (one per case)."""
    categories = categories or {}
    return [
        ManifestEntry(
            run_id=run_id,
            corpus=result.corpus,
            corpus_hash=result.corpus_hash,
            target_hash=c.target_hash or result.target_hash,
            case_id=c.case_id,
            case_hash=c.case_hash,
            category=categories.get(c.case_id),
        )
        for c in result.cases
    ]
