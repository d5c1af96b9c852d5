"""The sandbox → flake update → score part of a run, batch by batch (docs/gate.md).

A run evaluates its planned cases in a seeded uniformly random order. A PR
run, and a nightly with ``--until-decided``, does so in batches and stops as
soon as the evidence decides (the gate, or the nightly's interval), the plan
is exhausted, or the next batch would overrun a budget; any other run is one
batch of every case. Each batch is its own sandbox, flake-update and score
stage, checkpointed like any stage, so a resumed run redoes only the batches
that did not finish. A batch's score stage sees every batch so far and
judges only its own pairs; the bias probes run once, after the last batch.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from bughunt.models import AgentVersion, JudgeCall, RunKind, VerdictOutcome
from corpus import Corpus
from flows._runner import plan_shards
from flows.params import RunParams
from judging.judges import JudgeConfig
from ledger import StageInputs, StageRecord
from tasks import flakes, sandbox, score
from tasks.classify import ClassifyResult
from tasks.gate import (
    Evaluation,
    GateOutcome,
    GateThresholds,
    RunEvidence,
    StopReason,
    evaluation_order,
    gate_of_run,
    interval_decided,
    score_interval,
    verdict_samples,
)
from tasks.hash_corpus import HashResult
from tasks.score import judge_cache

In = TypeVar("In", bound=StageInputs)
R = TypeVar("R", bound=BaseModel)


class RunStages(Protocol):
    """The run's stages so far (``flows._pipeline._RunStages``)."""

    def stage(self, record: StageRecord[In, R], inputs: In, settings: BaseModel) -> R: ...

    def shards(
        self, record: StageRecord[In, R], shards: Sequence[In], settings: BaseModel
    ) -> list[R]: ...

    def combine(self, result: R, parts: list[Any]) -> R: ...


@dataclass(frozen=True)
class RunContext:
    """What every batch's stages are handed besides their cases."""

    run: dict[str, Any]
    corpus: Corpus
    classify: ClassifyResult
    hashed: HashResult
    baseline: AgentVersion
    candidate: AgentVersion
    judges: list[JudgeConfig]
    params: RunParams
    kind: RunKind
    gate: GateThresholds
    flake_thresholds: flakes.FlakeThresholds
    """The flake thresholds the run resolved from the project's configuration."""
    judged: bool
    """Whether the plan scores the pairs (else only the sandbox and flake stages run)."""
    corpus_content: str | None = None
    """The corpus folder's content hash the run recorded at its start: every sandbox shard
    checks that it reads the same content."""


@dataclass
class Evaluated:
    """What the batches found, merged (each registered as the combination of its batches)."""

    order: list[str]
    evaluation: Evaluation
    sandbox: sandbox.SandboxResult
    flakes: flakes.FlakeResult
    score: score.ScoreResult | None


@dataclass
class _Progress:
    sandbox: list[sandbox.SandboxResult] = field(default_factory=list)
    flakes: list[flakes.FlakeResult] = field(default_factory=list)
    scores: list[score.ScoreResult] = field(default_factory=list)
    evaluated: int = 0
    batches: int = 0
    summarised: bool = True
    """Whether the last score stage's summary covers every pair (not so after shards)."""
    sandbox_seconds: float = 0.0

    def calls_sent(self) -> int:
        """Verdict calls that reached a judge (the bias probes' are not the budget's)."""
        return sum(
            s.health.verdict_calls.sent if s.health.verdict_calls else s.health.calls_sent
            for s in self.scores
        )


def _merged(stages: RunStages, merge: Callable[[list[R]], R], parts: list[R]) -> R:
    return stages.combine(merge(parts), parts)


def _run_batch(
    stages: RunStages, ctx: RunContext, cases: list[str], progress: _Progress, *, adaptive: bool
) -> None:
    """One batch's sandbox, flake-update and score stages.

    The sandbox stage, and the score stage, go in shards of ``--shard-size`` cases (the
    run's recorded size, its task runner's default when it gave none; with none at all,
    the whole batch; the last ones smaller with ``--shard-tail``,
    :func:`~flows._runner.plan_shards`), submitted at once through the flow's task runner. A batch in one
    shard probes the judge in its score stage unless the run is adaptive; a batch in
    several leaves the summary over every pair, and the probes, to one score stage after
    the last batch (:func:`evaluate`).
    """
    started = time.perf_counter()
    parts = plan_shards(cases, ctx.params.shard_size, tail=bool(ctx.params.shard_tail))
    known = sandbox.known_checks(ctx.run["ledger"], ctx.corpus.name)  # before any shard writes
    shards = stages.shards(
        sandbox.RECORD,
        [
            sandbox.SandboxInputs(
                **ctx.run,
                corpus=ctx.corpus,
                classify=ctx.classify,
                hashed=ctx.hashed,
                agents=[ctx.baseline, ctx.candidate],
                case_ids=part,
                known_checks=known,
                corpus_content=ctx.corpus_content,
            )
            for part in parts
        ],
        ctx.params.sandbox_settings(ctx.corpus),
    )
    progress.sandbox_seconds += time.perf_counter() - started
    progress.sandbox.extend(shards)
    ran = shards[0] if len(shards) == 1 else _merged(stages, sandbox.SandboxResult.merge, shards)
    flaked = stages.stage(
        flakes.RECORD,
        flakes.FlakeInputs(**ctx.run, classify=ctx.classify, sandbox=ran),
        flakes.FlakeSettings(thresholds=ctx.flake_thresholds),
    )
    progress.flakes.append(flaked)
    progress.evaluated += len(cases)
    progress.batches += 1
    if not ctx.judged:
        return
    if len(shards) == 1:
        progress.scores.append(_score(stages, ctx, progress, probes=not adaptive))
        progress.summarised = True
        return
    progress.scores.extend(_score_shards(stages, ctx, parts, shards, flaked))
    progress.summarised = False


def _score_shards(
    stages: RunStages,
    ctx: RunContext,
    parts: list[list[str]],
    shards: list[sandbox.SandboxResult],
    flaked: flakes.FlakeResult,
) -> list[score.ScoreResult]:
    """The batch's pairs judged in the sandbox's shards, each shard's cases by one task.

    A shard's pairs are its own cases' (no earlier batch holds them), so it needs
    nothing of the others; the judge cache is read here, before any shard writes.
    """
    cache = _cache(ctx, [c for part in parts for c in part], probes=False)
    return stages.shards(
        score.RECORD,
        [
            score.ScoreInputs(
                **ctx.run,
                classify=ctx.classify,
                sandbox=ran,
                flakes=flaked.for_cases(part),
                baseline=ctx.baseline,
                candidate=ctx.candidate,
                judges=ctx.judges,
                cached=[c for case in part for c in cache.get(case, [])],
            )
            for part, ran in zip(parts, shards, strict=True)
        ],
        ctx.params.score_settings(probes=False),
    )


def _cache(ctx: RunContext, cases: list[str], *, probes: bool) -> dict[str, list[JudgeCall]]:
    """The judge cache the score stage on ``cases`` may use, read from the ledger here."""
    if ctx.params.refresh_judge:
        return {}
    return judge_cache.cached_calls(
        ctx.run["ledger"],
        [j.name for j in ctx.judges],
        cases,
        probes=probes,
        not_before=judge_cache.cache_cutoff(ctx.params.judge_cache_ttl_s()),
    )


def _score(
    stages: RunStages, ctx: RunContext, progress: _Progress, *, probes: bool
) -> score.ScoreResult:
    """A score stage over every batch so far (judging only the pairs not judged yet)."""
    judged = {v.case_id for s in progress.scores for v in s.verdicts}
    cases = sorted({p.case_id for s in progress.sandbox for p in s.pairs} - judged)
    cache = _cache(ctx, cases, probes=probes and ctx.params.probe_pairs > 0)
    # as one shard: through the task runner, like every shard of the score stage
    [result] = stages.shards(
        score.RECORD,
        [
            score.ScoreInputs(
                **ctx.run,
                classify=ctx.classify,
                sandbox=_merged(stages, sandbox.SandboxResult.merge, progress.sandbox),
                flakes=_merged(stages, flakes.FlakeResult.merge, progress.flakes),
                baseline=ctx.baseline,
                candidate=ctx.candidate,
                judges=ctx.judges,
                earlier=_merged(stages, score.ScoreResult.merge, progress.scores)
                if progress.scores
                else None,
                cached=[c for calls in cache.values() for c in calls],
            )
        ],
        ctx.params.score_settings(probes=probes),
    )
    return result


def _stop(ctx: RunContext, order: list[str], progress: _Progress) -> StopReason | None:
    """Why to stop after this batch, if the evidence decides or the judge has failed."""
    if any(s.health.degraded for s in progress.scores):
        return StopReason.JUDGE_DEGRADED  # further calls would be aborted: the review failed
    return StopReason.DECIDED if _decided(ctx, order, progress) else None


def _decided(ctx: RunContext, order: list[str], progress: _Progress) -> bool:
    """Whether the evidence so far decides: the PR gate, or the nightly's interval."""
    verdicts = _verdicts(progress)
    planned = len(order)
    if ctx.kind is RunKind.PR:
        # No score stage so far is degraded: a degraded one stops the run first (_stop).
        evidence = RunEvidence(
            planned=planned,
            order=order,
            evaluated=progress.evaluated,
            baseline=ctx.baseline.name,
            candidate=ctx.candidate.name,
            scores=progress.scores,
            flakes=progress.flakes,
        )
        gate = gate_of_run(evidence, ctx.gate)
        return gate.outcome in (GateOutcome.REGRESSION, GateOutcome.PASS)
    interval = score_interval(order, verdicts, ctx.gate.alpha)
    return interval_decided(interval, ctx.params.width)


def _verdicts(progress: _Progress) -> dict[str, list[VerdictOutcome]]:
    return verdict_samples(v for s in progress.scores for v in s.verdicts)


def _interval(ctx: RunContext, order: list[str], progress: _Progress) -> tuple[float, float] | None:
    """A nightly's score interval as its stopping rule last saw it."""
    if ctx.kind is RunKind.PR or not progress.scores:
        return None
    return score_interval(order, _verdicts(progress), ctx.gate.alpha)


def _over_budget(params: RunParams, progress: _Progress, next_cases: int) -> StopReason | None:
    """The budget the next batch would overrun at the rate seen so far, if any."""
    if progress.evaluated == 0:
        return None
    per_case_calls = progress.calls_sent() / progress.evaluated
    per_case_seconds = progress.sandbox_seconds / progress.evaluated
    if (
        params.max_judge_calls is not None
        and progress.calls_sent() + per_case_calls * next_cases > params.max_judge_calls
    ):
        return StopReason.JUDGE_BUDGET
    if (
        params.max_sandbox_seconds is not None
        and progress.sandbox_seconds + per_case_seconds * next_cases > params.max_sandbox_seconds
    ):
        return StopReason.SANDBOX_BUDGET
    return None


def evaluate(stages: RunStages, ctx: RunContext) -> Evaluated:
    """Evaluate the plan's cases, in batches where the run is adaptive, and merge the results."""
    seed = ctx.params.seed or 0
    order = evaluation_order(ctx.classify.planned_case_ids, seed)
    adaptive = ctx.kind is RunKind.PR or ctx.params.until_decided
    size = ctx.params.batch_size if adaptive else max(1, len(order))
    batches = [order[i : i + size] for i in range(0, len(order), size)]
    progress = _Progress()
    stop = StopReason.EXHAUSTED
    for cases in batches:
        over = _over_budget(ctx.params, progress, len(cases)) if adaptive else None
        if over is not None:
            stop = over
            break
        _run_batch(stages, ctx, cases, progress, adaptive=adaptive)
        decided = _stop(ctx, order, progress) if adaptive and ctx.judged else None
        if decided is not None:
            stop = decided
            break
    probes_left = adaptive and ctx.params.probe_pairs > 0
    if ctx.judged and progress.scores and (probes_left or not progress.summarised):
        progress.scores.append(_score(stages, ctx, progress, probes=True))
    evaluation = Evaluation(
        adaptive=adaptive,
        rule=_rule(ctx) if adaptive else "every planned case",
        order_seed=seed,
        batch_size=size,
        planned=len(order),
        evaluated=progress.evaluated,
        batches=progress.batches,
        stop=stop,
        judge_calls_sent=progress.calls_sent(),
        sandbox_seconds=round(progress.sandbox_seconds, 3),
        score_interval=_interval(ctx, order, progress) if adaptive else None,
    )
    return Evaluated(
        order=order,
        evaluation=evaluation,
        sandbox=_merged(stages, sandbox.SandboxResult.merge, progress.sandbox),
        flakes=_merged(stages, flakes.FlakeResult.merge, progress.flakes),
        score=_merged(stages, score.ScoreResult.merge, progress.scores)
        if progress.scores
        else None,
    )


def _rule(ctx: RunContext) -> str:
    if ctx.kind is RunKind.PR:
        return "the PR gate decides (regression or pass)"
    width = f" or is narrower than {ctx.params.width:g}" if ctx.params.width else ""
    return f"the score's interval excludes 0.5{width}"
