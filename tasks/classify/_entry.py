"""The classify stage's entry point: its inputs, settings and how its result is kept."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from corpus import Corpus
from ledger import StageInputs, StageRecord
from tasks.classify._batch import ClassifyResult, find_repo_root
from tasks.classify._impact import ImpactConfig, load_impact_config
from tasks.classify._incremental import classify_incremental, previous_classifications


class ClassifyInputs(StageInputs):
    """The corpus, and the PR's changed paths that pick what a PR run evaluates."""

    corpus: Corpus
    """The loaded corpus."""
    changed_paths: list[str] | None = None
    """The paths the PR's diff changes, parsed once by the flow before the run starts
    (``None``: a nightly run, every case and stage)."""


class ClassifySettings(BaseModel):
    """Where the stat cache of target hashes lives, and the globs a PR's paths are classified by."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    impact: ImpactConfig | None = None
    """The impact globs (:func:`impact_config_of`, resolved by the flow before the run
    starts); ``None``: the built-in ones. Unused without a PR diff."""

    hash_cache: str | None = Field(default=None, exclude=True)
    """Stat cache file the target is hashed through (``None``: in memory). A cache: it
    changes what is read, never the result, so it is not part of the stage's identity."""


def run(inputs: ClassifyInputs, settings: ClassifySettings) -> ClassifyResult:
    """Classify every case (reusing the ledger's results for unchanged ones) and plan the run."""
    earlier = previous_classifications(inputs.ledger, inputs.corpus.name)
    return classify_incremental(
        inputs.corpus,
        inputs.changed_paths,
        earlier,
        settings.hash_cache,
        impact=settings.impact or ImpactConfig(),
    )


def impact_config_of(corpus: Corpus) -> ImpactConfig:
    """The impact globs of the repository holding ``corpus``: ``[tool.bughunt.impact]`` of the
    ``pyproject.toml`` at its root (the nearest folder above the corpus with ``.git``, else with
    a ``pyproject.toml``); the built-in globs where there is none.

    Raises :class:`~bughunt.errors.InputError` naming the file and the field for an invalid table.
    """
    root = find_repo_root(corpus.root)
    return load_impact_config(root / "pyproject.toml" if root else None)


RECORD: StageRecord[ClassifyInputs, ClassifyResult] = StageRecord("classify", ClassifyResult)
"""No rows of its own: the result is kept whole as the checkpoint's payload."""
