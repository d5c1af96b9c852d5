"""Stage 2, hash-corpus: content hashes of cases and the corpus (docs/architecture.md#content-hashes)."""

from tasks.hash_corpus._entry import RECORD, HashInputs, HashSettings, run
from tasks.hash_corpus._stage import (
    HashResult,
    hash_loaded_corpus,
    manifest_rows,
    previous_manifest,
)

__all__ = [
    "RECORD",
    "HashInputs",
    "HashResult",
    "HashSettings",
    "hash_loaded_corpus",
    "manifest_rows",
    "previous_manifest",
    "run",
]
