"""Ledger writes outside a pipeline run: ingested outcome records, a recorded manifest, bias
probes, judge calibrations, the judge cache's clearing, pruning and adoptions.

Like the pipeline, each is one bulk write from this process; the CLI calls
these and never writes the ledger itself. Nothing here imports Prefect.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bughunt.errors import InputError
from bughunt.models import (
    BiasProbe,
    JudgeCacheAdoption,
    JudgeCacheInvalidation,
    JudgeCall,
    Observation,
    RunInfo,
    RunKind,
    RunStatus,
    Strategy,
)
from corpus import Corpus
from flows.params import new_run_id
from judging.calibration import LabelSet
from judging.judges import build_judge, load_judges
from ledger import Ledger
from tasks.hash_corpus import HashResult, manifest_rows
from tasks.score import (
    CalibrationRun,
    CalibrationSettings,
    ScoreSettings,
    calibrate_judge,
    probe_corpus,
)
from tasks.score.judge_cache import adoptable, adoption, adoption_of, invalidated


def ingest_records(records: Sequence[Observation], ledger: Ledger) -> int:
    """Store outcome records (one bulk write); returns how many."""
    if records:
        ledger.write(records)
    return len(records)


def record_manifest(corpus: Corpus, result: HashResult, ledger: Ledger) -> str:
    """Store a corpus manifest as an ad-hoc run of its own; returns the run id."""
    run_id = new_run_id("hash")
    ledger.write(
        [
            RunInfo(
                run_id=run_id,
                kind=RunKind.ADHOC,
                corpus=corpus.name,
                status=RunStatus.COMPLETED,
                corpus_hash=result.corpus_hash,
            ),
            *manifest_rows(result, run_id),
        ]
    )
    return run_id


class ProbeRun(BaseModel):
    """An ad-hoc bias-probe run: its id, every call and the probe rows, as stored."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    run_id: str
    """The ad-hoc run's id."""
    judges: int
    """Judges probed (more than one: a jury, self-preference measured too)."""
    calls: list[JudgeCall]
    """Every judge call, failures included."""
    probes: list[BiasProbe]
    """One row per judge, probe and metric."""


def probe_judges(
    corpus: Corpus,
    judge: str,
    *,
    pairs: int,
    ledger: Ledger,
    judges_config: Path | None = None,
    refresh: bool = False,
    cache_ttl_s: float | None = None,
) -> ProbeRun:
    """Probe a judge or jury on the corpus's recorded reports and store it as an ad-hoc run.

    Raises :class:`~bughunt.errors.InputError` when the corpus has no recorded report.
    """
    configs = load_judges(judges_config).resolve(judge)
    members = [build_judge(c) for c in configs]
    run_id = new_run_id("probe")
    result = probe_corpus(
        corpus,
        members,
        run_id=run_id,
        settings=ScoreSettings(probe_pairs=pairs, refresh=refresh, cache_ttl_s=cache_ttl_s),
        ledger=ledger,
    )
    ledger.write(
        [
            RunInfo(
                run_id=run_id,
                kind=RunKind.ADHOC,
                corpus=corpus.name,
                judge=judge,
                status=RunStatus.COMPLETED,
                strategy=Strategy.SWAP,
                message="bias probes",
            ),
            *result.calls,
            *result.probes,
        ]
    )
    return ProbeRun(run_id=run_id, judges=len(members), calls=result.calls, probes=result.probes)


class CalibrationOptions(BaseModel):
    """How ``bughunt judge calibrate`` measures a judge."""

    model_config = ConfigDict(frozen=True)

    strategy: Strategy = Strategy.SWAP
    k: int = 5
    seed: int = 0
    deadline_s: float | None = None
    """Seconds per call; ``None``: the judge's own (the tightest of a jury's members)."""
    refresh: bool = False
    cache_ttl_s: float | None = None
    """Reuse no cached answer older than this many seconds; ``None``: no limit."""


def calibrate_judges(
    labels: LabelSet,
    judge: str,
    *,
    options: CalibrationOptions,
    labels_file: str,
    ledger: Ledger,
    judges_config: Path | None = None,
) -> CalibrationRun:
    """Calibrate a judge or jury against human labels and store it as an ad-hoc run."""
    configs = load_judges(judges_config).resolve(judge)
    members = [build_judge(c) for c in configs]
    settings = CalibrationSettings(
        strategy=options.strategy,
        k=options.k,
        seed=options.seed,
        deadline_s=options.deadline_s or min(c.deadline_s for c in configs),
        max_in_flight=min(c.max_in_flight for c in configs),
        refresh=options.refresh,
        cache_ttl_s=options.cache_ttl_s,
    )
    run_id = new_run_id("calibrate")
    done = calibrate_judge(
        labels, members, judge=judge, run_id=run_id, settings=settings, ledger=ledger
    )
    info = RunInfo(
        run_id=run_id,
        kind=RunKind.ADHOC,
        judge=judge,
        strategy=options.strategy,
        status=RunStatus.COMPLETED,
        parameters={
            "labels": labels_file,
            "labels_hash": labels.sha256,
            "k": options.k,
            "seed": options.seed,
        },
        message="judge calibration against human labels",
    )
    ledger.write([info, *done.calls, done.row])
    return done


def invalidate_cache(ledger: Ledger, row: JudgeCacheInvalidation) -> int:
    """Stop the judge cache reusing the answers ``row`` names (``bughunt cache clear|prune``);
    how many answers it held that it no longer reuses.

    One bulk write of ``row``; no judge call is changed or deleted (calls are
    history). A ledger from before migration 0016 is migrated first; a path
    that holds no ledger is refused (a mistyped ``--ledger`` makes no file).
    """
    ledger.check_readable()
    ledger.migrate()
    dropped = invalidated(ledger, row)
    ledger.write([row])
    return dropped


class Adopted(BaseModel):
    """What ``bughunt cache adopt`` did: the adoption that holds, and the answers it opened."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    adoption: JudgeCacheAdoption | None
    """The row written; ``None`` when there was nothing to adopt (nothing written)."""
    answers: int
    """The judge's answers from before 0016 the cache may now reuse."""


def adopt_cache(ledger: Ledger, judge: str, judges_config: Path | None = None) -> Adopted:
    """Let the judge cache reuse ``judge``'s calls from before migration 0016 as answers of the
    model and endpoint its configuration names now (one bulk write; no key is read).

    Raises :class:`InputError` when the judge's older calls were adopted before
    (the first adoption holds), and writes nothing when there is none to adopt.
    A path that holds no ledger is refused, as by :func:`invalidate_cache`.
    """
    config = load_judges(judges_config).judge(judge)
    ledger.check_readable()
    ledger.migrate()
    earlier = adoption_of(ledger, judge)
    if earlier is not None:
        raise InputError(
            f"judge {judge!r}'s calls from before the cache key had a model were adopted "
            f"already, as model {earlier.model!r} at {earlier.endpoint!r} on "
            f"{earlier.recorded_at:%Y-%m-%d %H:%M} UTC; to take them back, run "
            f"`bughunt cache clear --judge {judge}`",
            field="--judge",
        )
    answers = adoptable(ledger, judge)
    if answers == 0:
        return Adopted(adoption=None, answers=0)
    row = adoption(config)
    ledger.write([row])
    return Adopted(adoption=row, answers=answers)
