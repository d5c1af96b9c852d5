"""The run's summary (what the report shows), from the stages' results. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from bughunt.models import (
    AgentVersion,
    BugCategory,
    FlakeRecord,
    Observation,
    Reproduction,
    ReproOutcome,
    RunKind,
    RunStatus,
    Status,
    Strategy,
    Verdict,
)
from bughunt.stats import rate, wilson
from tasks.classify import ClassifyResult
from tasks.flakes import flaky_keys
from tasks.report._model import AgentCost, CaseRow, RunSummary, VersionRepro
from tasks.sandbox import SandboxResult
from tasks.score import (
    Evaluation,
    GateDecision,
    JudgeHealth,
    ScoreResult,
    call_counts,
    summarize,
)

_AS_STATUS = {
    ReproOutcome.REPRODUCED: Status.PASS,
    ReproOutcome.NOT_REPRODUCED: Status.FAIL,
    ReproOutcome.FLAKY: Status.UNKNOWN,  # flaky is never a pass or a fail (docs/ledger.md#flakes)
    ReproOutcome.ERROR: Status.ERROR,
}


def reproduction_records(reproductions: Sequence[Reproduction]) -> list[Observation]:
    """One outcome record per case and version (pass = reproduced), for the outcome contract."""
    return [
        Observation(
            observation_id=f"{r.run_id}/{r.case_id}/{r.agent_version}",
            case_id=r.case_id,
            run_id=r.run_id,
            agent_version=r.agent_version,
            kind="reproduction",
            status=_AS_STATUS[r.outcome],
            case_hash=r.case_hash,
            note=r.reason,
            source="sandbox",
            ingested_at=r.created_at,
        )
        for r in reproductions
    ]


def version_repro(agent: AgentVersion, reproductions: Sequence[Reproduction]) -> VersionRepro:
    """Reproduction figures of one version; flaky cases are out of the rate, in the bounds."""
    mine = [r for r in reproductions if r.agent_version == agent.name]
    n = {o: sum(1 for r in mine if r.outcome is o) for o in ReproOutcome}
    rep, nrep, flaky = (
        n[ReproOutcome.REPRODUCED],
        n[ReproOutcome.NOT_REPRODUCED],
        n[ReproOutcome.FLAKY],
    )
    decided = rep + nrep
    bounds = None
    if flaky and decided + flaky:
        bounds = (rep / (decided + flaky), (rep + flaky) / (decided + flaky))
    return VersionRepro(
        agent_version=agent.name,
        family=agent.family,
        cases=len(mine),
        reproduced=rep,
        not_reproduced=nrep,
        flaky=flaky,
        error=n[ReproOutcome.ERROR],
        rate=rate(rep, decided),
        rate_ci=wilson(rep, decided),
        rate_bounds=bounds,
    )


TRANSCRIPTS = "transcripts"
"""Folder of the agents' transcripts inside a run's report folder."""


def transcript_path(case_id: str, agent_version: str) -> str:
    """Where a pair's transcript is written, relative to the report folder (names are ids, no path)."""
    return f"{TRANSCRIPTS}/{case_id}/{agent_version}.txt"


def agent_costs(
    agents: Sequence[AgentVersion],
    sandbox: SandboxResult | None,
    reproductions: Sequence[Reproduction],
) -> list[AgentCost]:
    """Per agent version that ran in the sandbox: time, requests, tokens, cost, cost per reproduced bug."""
    if sandbox is None:
        return []
    out = []
    for agent in agents:
        runs = [p.agent_run for p in sandbox.pairs if p.agent_version == agent.name and p.agent_run]
        if not runs:
            continue
        reproduced = sum(
            1
            for r in reproductions
            if r.agent_version == agent.name and r.outcome is ReproOutcome.REPRODUCED
        )
        tokens_in = [r.tokens_in for r in runs if r.tokens_in is not None]
        tokens_out = [r.tokens_out for r in runs if r.tokens_out is not None]
        costs = [r.cost for r in runs if r.cost is not None]
        cost = sum(costs) if costs else None
        out.append(
            AgentCost(
                agent_version=agent.name,
                executions=len(runs),
                seconds=round(sum(r.seconds for r in runs), 3),
                requests=sum(r.requests for r in runs),
                refused=sum(r.refused for r in runs),
                tokens_in=sum(tokens_in) if tokens_in else None,
                tokens_out=sum(tokens_out) if tokens_out else None,
                cost=cost,
                reproduced=reproduced,
                cost_per_reproduced=cost / reproduced if cost is not None and reproduced else None,
            )
        )
    return out


def case_rows(
    case_ids: Sequence[str],
    categories: Mapping[str, BugCategory | None],
    reproductions: Sequence[Reproduction],
    sandbox: SandboxResult | None,
    verdicts: Sequence[Verdict],
    baseline: str,
    candidate: str,
) -> list[CaseRow]:
    """One row per planned case: both versions' outcomes and titles, and the verdict."""
    repro = {(r.case_id, r.agent_version): r for r in reproductions}
    titles = {}
    traced: set[tuple[str, str]] = set()
    if sandbox is not None:
        titles = {(p.case_id, p.agent_version): p.report.title for p in sandbox.pairs if p.report}
        traced = {(p.case_id, p.agent_version) for p in sandbox.pairs if p.transcript is not None}

    def transcript(case_id: str, agent: str) -> str | None:
        return transcript_path(case_id, agent) if (case_id, agent) in traced else None

    verdict = {v.case_id: v for v in verdicts}
    rows = []
    for case_id in case_ids:
        b, c = repro.get((case_id, baseline)), repro.get((case_id, candidate))
        v = verdict.get(case_id)
        rows.append(
            CaseRow(
                case_id=case_id,
                category=categories.get(case_id),
                baseline_status=b.outcome if b else ReproOutcome.ERROR,
                baseline_reason=b.reason if b else "not run",
                candidate_status=c.outcome if c else ReproOutcome.ERROR,
                candidate_reason=c.reason if c else "not run",
                baseline_title=titles.get((case_id, baseline)),
                candidate_title=titles.get((case_id, candidate)),
                verdict=v.outcome.value if v else "unscored",
                verdict_reason=(v.reason if v else "not judged in this run"),
                baseline_transcript=transcript(case_id, baseline),
                candidate_transcript=transcript(case_id, candidate),
            )
        )
    return rows


def build_summary(
    *,
    run_id: str,
    kind: RunKind,
    started_at: datetime,
    corpus: str,
    corpus_hash: str | None,
    baseline: AgentVersion,
    candidate: AgentVersion,
    judge: str,
    strategy: Strategy,
    stages_run: list[str],
    classify: ClassifyResult,
    case_ids: Sequence[str],
    categories: Mapping[str, BugCategory | None],
    sandbox: SandboxResult | None,
    reproductions: Sequence[Reproduction],
    flakes: Sequence[FlakeRecord],
    score: ScoreResult | None,
    gate: GateDecision | None,
    evaluation: Evaluation | None = None,
) -> RunSummary:
    """The RunSummary of one run (also its summary.json)."""
    no_calls = call_counts([])
    health = (
        score.health
        if score
        else JudgeHealth(
            calls_by_status={},
            cache_hits=0,
            calls_sent=0,
            requests=0,
            degraded=False,
            degraded_reason=None,
            verdict_calls=no_calls,
            probe_calls=no_calls,
        )
    )
    return RunSummary(
        run_id=run_id,
        kind=kind,
        status=RunStatus.DEGRADED if score and score.health.degraded else RunStatus.COMPLETED,
        started_at=started_at,
        corpus=corpus,
        corpus_hash=corpus_hash,
        baseline=baseline.name,
        candidate=candidate.name,
        judge=judge,
        strategy=strategy,
        stages_run=stages_run,
        plan_reasons=list(classify.plan.reasons),
        headline=score.summary if score else None,
        repro=[version_repro(a, reproductions) for a in (baseline, candidate)],
        costs=agent_costs((baseline, candidate), sandbox, reproductions),
        cases=case_rows(
            case_ids,
            categories,
            reproductions,
            sandbox,
            score.verdicts if score else [],
            baseline.name,
            candidate.name,
        ),
        rejected_cases=[{"case_id": r.case_id, "reason": r.describe()} for r in classify.rejected],
        outcomes=summarize(reproduction_records(reproductions)),
        flaky=flaky_keys(flakes),
        probes=score.probes if score else [],
        health=health,
        gate=gate,
        evaluation=evaluation,
    )
