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
from tasks.report._model import CaseRow, RunSummary, VersionRepro
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
    if sandbox is not None:
        titles = {(p.case_id, p.agent_version): p.report.title for p in sandbox.pairs if p.report}
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
