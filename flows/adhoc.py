"""Ledger writes outside a pipeline run: ingested outcome records, a recorded manifest, bias probes.

Like the pipeline, each is one bulk write from this process; the CLI calls
these and never writes the ledger itself. Nothing here imports Prefect.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bughunt.models import BiasProbe, JudgeCall, Observation, RunInfo, RunKind, RunStatus, Strategy
from corpus import Corpus
from flows.params import new_run_id
from judging.judges import build_judge, load_judges
from ledger import Ledger
from tasks.hash_corpus import HashResult, manifest_rows
from tasks.score import ScoreSettings, probe_corpus


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
        settings=ScoreSettings(probe_pairs=pairs, refresh=refresh),
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
