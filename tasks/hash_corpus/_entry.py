"""The hash-corpus stage's entry point: its inputs, settings and how its result is kept."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bughunt.models import ManifestEntry
from corpus import Corpus
from ledger import StageInputs, StageRecord
from tasks.classify import ClassifyResult
from tasks.hash_corpus._stage import (
    HashResult,
    hash_loaded_corpus,
    manifest_rows,
    previous_manifest,
)


class HashInputs(StageInputs):
    """The corpus, and the classify result whose categories the manifest records."""

    corpus: Corpus
    """The loaded corpus."""
    classify: ClassifyResult
    """The classify stage's result."""


class HashSettings(BaseModel):
    """Where the stat cache of file hashes lives."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    hash_cache: str | None = Field(default=None, exclude=True)
    """Stat cache file (``None``: in memory; unchanged files are then read again). A cache:
    not part of the stage's identity."""


def run(inputs: HashInputs, settings: HashSettings) -> HashResult:
    """Hash every loaded case and diff against the corpus's latest manifest in the ledger."""
    previous_run_id, previous = previous_manifest(inputs.ledger, inputs.corpus.name)
    return hash_loaded_corpus(inputs.corpus, previous, previous_run_id, settings.hash_cache)


def _rows(inputs: HashInputs, result: HashResult) -> list[ManifestEntry]:
    known = {k: v for k, v in inputs.classify.categories().items() if v is not None}
    return manifest_rows(result, inputs.run_id, known)


RECORD: StageRecord[HashInputs, HashResult] = StageRecord("hash-corpus", HashResult, rows=_rows)
"""The run's manifest goes to ``corpus_manifest``; the result is the payload."""
