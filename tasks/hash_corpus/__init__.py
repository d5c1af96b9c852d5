"""Stage 2, hash-corpus: content hashes of cases and the corpus (docs/architecture.md#content-hashes)."""

from corpus import CACHE_FILE, HashCache, hash_cache_at, hash_case, hash_corpus, hash_target
from tasks.hash_corpus._entry import RECORD, HashInputs, HashSettings, run
from tasks.hash_corpus._hashing import ManifestDiff, diff_manifests
from tasks.hash_corpus._stage import (
    CaseHash,
    HashResult,
    hash_loaded_corpus,
    manifest_rows,
    previous_manifest,
)

__all__ = [
    "CACHE_FILE",
    "RECORD",
    "CaseHash",
    "HashCache",
    "HashInputs",
    "HashResult",
    "HashSettings",
    "ManifestDiff",
    "diff_manifests",
    "hash_cache_at",
    "hash_case",
    "hash_corpus",
    "hash_loaded_corpus",
    "hash_target",
    "manifest_rows",
    "previous_manifest",
    "run",
]
