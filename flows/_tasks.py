"""The six stages as Prefect tasks, each over a whole batch (DESIGN §2).

A task run costs milliseconds of orchestration, so there is one task per
stage, never one per test execution or judge call. Prefect retries a task
only on a transient infrastructure error (a held ledger lock, a busy Docker
engine); bad input and broken contracts fail at once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar

from prefect import Task, task
from prefect.cache_policies import NONE

from bughunt.errors import TransientError
from bughunt.models import AgentVersion, BugCategory, ContractCheck, FlakeRecord, Observation
from corpus import Corpus, RejectedCase
from judging.judges import JudgeConfig, build_judge
from ledger import Ledger
from tasks.classify import CaseClassification, ClassifyResult, classify_incremental
from tasks.flakes import flake_update
from tasks.hash_corpus import HashResult, hash_loaded_corpus
from tasks.sandbox import SandboxResult, SandboxSettings, run_sandbox
from tasks.score import ReportEvidence, ScoreSettings, ScoreStageResult, score_stage


def transient_only(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect's retry condition: retry only a :class:`TransientError`."""
    exc = state.data if isinstance(state.data, BaseException) else None
    if exc is None:
        try:
            state.result(raise_on_failure=True)
        except BaseException as raised:
            exc = raised
    return isinstance(exc, TransientError)


P = ParamSpec("P")
R = TypeVar("R")


def stage_task(name: str) -> Callable[[Callable[P, R]], Task[P, R]]:
    """A stage's task: no input hashing (inputs are large), two retries on transient errors."""
    return task(
        name=name,
        cache_policy=NONE,
        retries=2,
        retry_delay_seconds=2,
        retry_condition_fn=transient_only,
    )


@stage_task("classify")
def classify_task(
    corpus: Corpus,
    pr_diff: bytes | None,
    previous: Mapping[str, CaseClassification | RejectedCase] | None = None,
    hash_cache: str | None = None,
) -> ClassifyResult:
    """Stage 1: classify every case, validate patches, plan the run.

    Cases whose classify key is in ``previous`` (an earlier run's results) are not
    classified again; ``hash_cache`` is the stat cache file the target is hashed through.
    """
    return classify_incremental(corpus, pr_diff, previous or {}, hash_cache)


@stage_task("hash-corpus")
def hash_task(
    corpus: Corpus,
    previous: dict[str, str],
    previous_run_id: str | None,
    hash_cache: str | None = None,
) -> HashResult:
    """Stage 2: content hashes and what changed since the last manifest (unchanged files unread)."""
    return hash_loaded_corpus(corpus, previous, previous_run_id, hash_cache)


def _progress() -> Any:
    if not sys.stderr.isatty():
        return None
    from rich.progress import Progress

    return Progress(transient=True)


@stage_task("sandbox")
def sandbox_task(
    corpus: Corpus,
    case_ids: Sequence[str],
    agents: Sequence[AgentVersion],
    case_hashes: dict[str, str],
    run_id: str,
    settings: SandboxSettings,
    known_checks: dict[str, ContractCheck],
) -> SandboxResult:
    """Stage 3: every planned case × agent in hardened containers (a progress bar on a terminal)."""
    bar = _progress()
    if bar is None:
        return run_sandbox(
            corpus,
            case_ids=case_ids,
            agents=agents,
            case_hashes=case_hashes,
            run_id=run_id,
            settings=settings,
            known_checks=known_checks,
        )
    with bar:
        job = bar.add_task("sandbox", total=None)
        return run_sandbox(
            corpus,
            case_ids=case_ids,
            agents=agents,
            case_hashes=case_hashes,
            run_id=run_id,
            settings=settings,
            progress=lambda done, total: bar.update(job, completed=done, total=total),
            known_checks=known_checks,
        )


@stage_task("flake-update")
def flake_task(
    ledger: Ledger, observations: Sequence[Observation], run_id: str
) -> list[FlakeRecord]:
    """Stage 4: fold the run's executions into the flake ledger (rows returned, not written)."""
    return flake_update(ledger, observations, run_id)


@stage_task("score")
def score_task(
    evidence: Sequence[ReportEvidence],
    run_id: str,
    baseline: str,
    candidate: str,
    categories: dict[str, BugCategory | None],
    judges: Sequence[JudgeConfig],
    settings: ScoreSettings,
    ledger: Ledger,
    refresh: bool,
) -> ScoreStageResult:
    """Stage 5: judge every pair, fold verdicts, probe the judge.

    Judges travel as their configuration and are built here: a backend holds
    locks and HTTP clients that cannot be sent to another process (Dask).
    """
    return score_stage(
        evidence,
        run_id=run_id,
        baseline=baseline,
        candidate=candidate,
        categories=categories,
        judges=[build_judge(c) for c in judges],
        settings=settings,
        ledger=ledger,
        refresh=refresh,
    )
