"""The classify stage's entry point: its inputs, settings and how its result is kept."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from corpus import Corpus
from ledger import StageInputs, StageRecord
from tasks.classify._batch import ClassifyResult
from tasks.classify._incremental import classify_incremental, previous_classifications


class ClassifyInputs(StageInputs):
    """The corpus, and the PR diff that picks what a PR run evaluates."""

    corpus: Corpus
    """The loaded corpus."""
    pr_diff: bytes | None = None
    """The PR's unified diff (``None``: a nightly run, every case and stage)."""


class ClassifySettings(BaseModel):
    """Where the stat cache of target hashes lives."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    hash_cache: str | None = Field(default=None, exclude=True)
    """Stat cache file the target is hashed through (``None``: in memory). A cache: it
    changes what is read, never the result, so it is not part of the stage's identity."""


def run(inputs: ClassifyInputs, settings: ClassifySettings) -> ClassifyResult:
    """Classify every case (reusing the ledger's results for unchanged ones) and plan the run."""
    earlier = previous_classifications(inputs.ledger, inputs.corpus.name)
    return classify_incremental(inputs.corpus, inputs.pr_diff, earlier, settings.hash_cache)


RECORD: StageRecord[ClassifyInputs, ClassifyResult] = StageRecord("classify", ClassifyResult)
"""No rows of its own: the result is kept whole as the checkpoint's payload."""
