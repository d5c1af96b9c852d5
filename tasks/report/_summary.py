"""The run's summary (what the report shows), from the stages' results. Pure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from bughunt.models import (
    AgentRun,
    AgentVersion,
    BugCategory,
    Observation,
    Reproduction,
    ReproOutcome,
    RunStatus,
    Status,
    Verdict,
)
from bughunt.stats import case_mean, wilson
from tasks.flakes import flaky_keys
from tasks.gate import GateDecision
from tasks.outcomes import summarize
from tasks.report._answer import answer_of
from tasks.report._model import AgentCost, CaseRow, RunSummary, VersionRepro
from tasks.sandbox import SandboxResult
from tasks.sandbox.reproduction import VARIANT_REASON
from tasks.score import JudgeHealth, call_counts

if TYPE_CHECKING:
    from tasks.report._entry import ReportInputs

_N = TypeVar("_N", int, float)

_AS_STATUS = {
    ReproOutcome.REPRODUCED: Status.PASS,
    ReproOutcome.NOT_REPRODUCED: Status.FAIL,
    ReproOutcome.FLAKY: Status.UNKNOWN,  # flaky is never a pass or a fail (docs/ledger.md#flakes)
    ReproOutcome.ERROR: Status.ERROR,
}


def reproduction_records(reproductions: Sequence[Reproduction]) -> list[Observation]:
    """One outcome record per case, version and sample (pass = reproduced), for the outcome
    contract; each is its own identity (samples of one case are never replays)."""
    return [
        Observation(
            observation_id=(ident := _sample_id(r)),
            record_id=ident,
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


def _sample_id(r: Reproduction) -> str:
    return f"{r.run_id}/{r.case_id}/{r.agent_version}" + (f"/s{r.sample}" if r.sample else "")


def version_repro(agent: AgentVersion, reproductions: Sequence[Reproduction]) -> VersionRepro:
    """Reproduction figures of one version; flaky cases are out of the rate, in the bounds.

    With several samples per case, the case is the unit: each case's share of
    samples reproduced, averaged over cases (:func:`~bughunt.stats.case_mean`).
    """
    mine = [r for r in reproductions if r.agent_version == agent.name]
    n = {o: sum(1 for r in mine if r.outcome is o) for o in ReproOutcome}
    by_case: dict[str, Counter[ReproOutcome]] = {}
    for r in mine:
        by_case.setdefault(r.case_id, Counter())[r.outcome] += 1
    shares, low, high = [], [], []
    for counts in by_case.values():
        rep, nrep = counts[ReproOutcome.REPRODUCED], counts[ReproOutcome.NOT_REPRODUCED]
        flaky = counts[ReproOutcome.FLAKY]
        if rep + nrep:
            shares.append(rep / (rep + nrep))
        if rep + nrep + flaky:
            low.append(rep / (rep + nrep + flaky))
            high.append((rep + flaky) / (rep + nrep + flaky))
    mean, interval = case_mean(shares)
    bounds = None
    if n[ReproOutcome.FLAKY] and low:
        bounds = (sum(low) / len(low), sum(high) / len(high))
    return VersionRepro(
        agent_version=agent.name,
        family=agent.family,
        cases=len(by_case),
        reproduced=n[ReproOutcome.REPRODUCED],
        not_reproduced=n[ReproOutcome.NOT_REPRODUCED],
        flaky=n[ReproOutcome.FLAKY],
        error=n[ReproOutcome.ERROR],
        rate=mean,
        rate_ci=interval,
        rate_bounds=bounds,
        samples=max((r.sample + 1 for r in mine), default=1),
        **_bug_executed(mine),
    )


def _bug_executed(mine: Sequence[Reproduction]) -> dict[str, Any]:
    """How many of the reproductions' tests were traced running the bug, and the share with its
    interval, among those the trace had something to say about (rows before it have neither);
    how many pairs fell to a variant, and whether that looks like guessing."""
    reproduced = [r for r in mine if r.outcome is ReproOutcome.REPRODUCED]
    executed = sum(1 for r in reproduced if r.bug_executed)
    unmeasured = sum(1 for r in reproduced if r.bug_executed is None and r.coverage_reason)
    traced = executed + unmeasured
    refused = sum(1 for r in mine if (r.reason or "").endswith(VARIANT_REASON))
    checked = wilson(refused, len(reproduced) + refused)
    return {
        "bug_executed": executed,
        "bug_unmeasured": unmeasured,
        "bug_executed_share": executed / traced if traced else None,
        "bug_executed_ci": wilson(executed, traced),
        "variant_refused": refused,
        "guessing": refused >= GUESS_MIN and checked is not None and checked[0] >= GUESS_SHARE,
    }


def localisation_of(agent: str, sandbox: SandboxResult | None) -> dict[str, Any]:
    """How often the version's root causes name the bug's file and function, over cases (each
    case's samples averaged): the share with its interval, and the mean function credit."""
    files: dict[str, list[float]] = {}
    credits: dict[str, list[float]] = {}
    for pair in sandbox.pairs if sandbox else []:
        found = pair.localisation
        if pair.agent_version != agent or found is None:
            continue
        files.setdefault(pair.case_id, []).append(float(found.names_file))
        if found.function_credit is not None:
            credits.setdefault(pair.case_id, []).append(found.function_credit)
    file_share, file_ci = case_mean([sum(v) / len(v) for v in files.values()])
    credit, credit_ci = case_mean([sum(v) / len(v) for v in credits.values()])
    return {
        "localised_cases": len(files),
        "names_file": file_share,
        "names_file_ci": file_ci,
        "function_credit": credit,
        "function_credit_ci": credit_ci,
    }


GUESS_MIN = 2
"""Refusals on variants before an agent can be flagged as guessing."""
GUESS_SHARE = 0.05
"""The share of its checked pairs refused on variants that flags an agent, at the low end of the
Wilson interval: an honest test is never refused on a variant but by a flaky run."""


TRANSCRIPTS = "transcripts"
"""Folder of the agents' transcripts inside a run's report folder."""

OUTPUTS = "outputs"
"""Folder of the reproduction tests' executions (status, exit code, output) inside a run's
report folder."""


def pair_file(folder: str, case_id: str, agent_version: str, sample: int = 0) -> str:
    """Where a pair's file in ``folder`` is written, relative to the report folder (names are
    ids, no path); a later sample's beside the first's."""
    suffix = f".sample{sample}" if sample else ""
    return f"{folder}/{case_id}/{agent_version}{suffix}.txt"


def transcript_path(case_id: str, agent_version: str, sample: int = 0) -> str:
    """Where a pair's agent transcript is written, relative to the report folder."""
    return pair_file(TRANSCRIPTS, case_id, agent_version, sample)


def outputs_path(case_id: str, agent_version: str, sample: int = 0) -> str:
    """Where a pair's reproduction-test executions are written, relative to the report folder."""
    return pair_file(OUTPUTS, case_id, agent_version, sample)


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
        if runs:
            out.append(_agent_cost(agent.name, runs, _reproduced(agent.name, reproductions)))
    return out


def _reproduced(agent_version: str, reproductions: Sequence[Reproduction]) -> int:
    """How many of the version's reproductions (cases and samples) reproduced."""
    return sum(
        1
        for r in reproductions
        if r.agent_version == agent_version and r.outcome is ReproOutcome.REPRODUCED
    )


def _agent_cost(agent_version: str, runs: Sequence[AgentRun], reproduced: int) -> AgentCost:
    """One version's executions summed; a figure no execution reported stays None."""
    cost = _known_sum([r.cost for r in runs])
    return AgentCost(
        agent_version=agent_version,
        executions=len(runs),
        seconds=round(sum(r.seconds for r in runs), 3),
        requests=sum(r.requests for r in runs),
        refused=sum(r.refused for r in runs),
        tokens_in=_known_sum([r.tokens_in for r in runs]),
        tokens_out=_known_sum([r.tokens_out for r in runs]),
        cost=cost,
        reproduced=reproduced,
        cost_per_reproduced=cost / reproduced if cost is not None and reproduced else None,
    )


def _known_sum(values: Sequence[_N | None]) -> _N | None:
    """The sum of the values that are not None; None when every one is (or there are none)."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


_Key = tuple[str, str, int]
"""A pair's case id, agent version and sample."""


@dataclass(frozen=True, slots=True)
class _Side:
    """What one version shows in a case row."""

    status: ReproOutcome
    reason: str | None
    title: str | None
    transcript: str | None
    outputs: str | None


@dataclass(frozen=True, slots=True)
class _Pairs:
    """What the run holds per pair key: its reproduction, its report's title, whether its
    transcript was kept and whether its test ran."""

    repro: dict[_Key, Reproduction]
    titles: dict[_Key, str]
    traced: set[_Key]
    executed: set[_Key]
    keys: set[_Key]

    def own(self, key: _Key) -> _Key:
        """The key of this sample, or of the version's only sample (a replay agent); a sample
        missing from a sampled version stays missing."""
        case_id, agent, _ = key
        only = {k[2] for k in self.keys if k[:2] == (case_id, agent)} == {0}
        return key if key in self.keys or not only else (case_id, agent, 0)

    def side(self, key: _Key) -> _Side:
        """The version's outcome, title and files at ``key`` (its only sample's, for a replay
        agent); a pair that never ran is an error, "not run"."""
        own = self.own(key)
        r = self.repro.get(own)
        return _Side(
            status=r.outcome if r else ReproOutcome.ERROR,
            reason=r.reason if r else "not run",
            title=self.titles.get(own),
            transcript=transcript_path(*own) if own in self.traced else None,
            outputs=outputs_path(*own) if own in self.executed else None,
        )


def _index_pairs(reproductions: Sequence[Reproduction], sandbox: SandboxResult | None) -> _Pairs:
    """The run's pairs by key, from the reproductions and the sandbox's pairs (none without it)."""
    repro = {(r.case_id, r.agent_version, r.sample): r for r in reproductions}
    pairs = sandbox.pairs if sandbox is not None else []
    titles = {(p.case_id, p.agent_version, p.sample): p.report.title for p in pairs if p.report}
    traced = {(p.case_id, p.agent_version, p.sample) for p in pairs if p.transcript is not None}
    executed = {(p.case_id, p.agent_version, p.sample) for p in pairs if p.observations}
    return _Pairs(repro, titles, traced, executed, keys={*repro, *titles, *traced, *executed})


def _sample_count(keys: set[_Key], verdicts: Sequence[Verdict]) -> int:
    """Samples per case: the most any pair or verdict shows, at least one."""
    samples = 1 + max((k[2] for k in keys), default=0)
    return max(samples, 1 + max((v.sample for v in verdicts), default=0))


def case_rows(
    case_ids: Sequence[str],
    categories: Mapping[str, BugCategory | None],
    reproductions: Sequence[Reproduction],
    sandbox: SandboxResult | None,
    verdicts: Sequence[Verdict],
    baseline: str,
    candidate: str,
) -> list[CaseRow]:
    """One row per planned case (per case and agent sample, with several samples): both
    versions' outcomes and titles, and the verdict. A version with one sample (a replay
    agent) shows it in every sample's row."""
    pairs = _index_pairs(reproductions, sandbox)
    verdict = {(v.case_id, v.sample): v for v in verdicts}
    samples = _sample_count(pairs.keys, verdicts)
    rows = []
    for case_id, sample in ((c, s) for c in case_ids for s in range(samples)):
        b, c = pairs.side((case_id, baseline, sample)), pairs.side((case_id, candidate, sample))
        v = verdict.get((case_id, sample))
        rows.append(
            CaseRow(
                case_id=case_id,
                sample=sample if samples > 1 else None,
                category=categories.get(case_id),
                baseline_status=b.status,
                baseline_reason=b.reason,
                candidate_status=c.status,
                candidate_reason=c.reason,
                baseline_title=b.title,
                candidate_title=c.title,
                verdict=v.outcome.value if v else "unscored",
                verdict_reason=(v.reason if v else "not judged in this run"),
                verdict_rationale=v.rationale if v else None,
                baseline_transcript=b.transcript,
                candidate_transcript=c.transcript,
                baseline_outputs=b.outputs,
                candidate_outputs=c.outputs,
            )
        )
    return rows


def build_summary(inputs: ReportInputs, gate: GateDecision | None) -> RunSummary:
    """The RunSummary of one run (also its summary.json), with its gate."""
    classify, sandbox, score = inputs.classify, inputs.sandbox, inputs.score
    baseline, candidate = inputs.baseline, inputs.candidate
    reproductions = inputs.flakes.reproductions if inputs.flakes else []
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
    cases = case_rows(
        _evaluated(inputs),
        classify.categories(),
        reproductions,
        sandbox,
        score.verdicts if score else [],
        baseline.name,
        candidate.name,
    )
    return RunSummary(
        run_id=inputs.run_id,
        kind=inputs.kind,
        status=RunStatus.DEGRADED if score and score.health.degraded else RunStatus.COMPLETED,
        started_at=inputs.started_at,
        corpus=classify.corpus,
        corpus_hash=inputs.hashed.corpus_hash,
        baseline=baseline.name,
        candidate=candidate.name,
        judge=inputs.judge,
        strategy=inputs.strategy,
        stages_run=[s.value for s in inputs.stages_run],
        plan_reasons=list(classify.plan.reasons),
        headline=score.summary if score else None,
        repro=[
            version_repro(a, reproductions).model_copy(update=localisation_of(a.name, sandbox))
            for a in (baseline, candidate)
        ],
        costs=agent_costs((baseline, candidate), sandbox, reproductions),
        cases=cases,
        known_failures=sorted({t for c in sandbox.contract for t in c.known_failures})
        if sandbox
        else [],
        rewrite_levels=dict(
            sorted(
                Counter(str(c.rewrite_level) for c in sandbox.contract if c.rewrite_level).items()
            )
        )
        if sandbox
        else {},
        rejected_cases=[{"case_id": r.case_id, "reason": r.describe()} for r in classify.rejected],
        outcomes=summarize(reproduction_records(reproductions)),
        flaky=flaky_keys(inputs.flakes.flakes if inputs.flakes else []),
        probes=score.probes if score else [],
        health=health,
        gate=gate,
        evaluation=inputs.evaluation,
        answer=answer_of(cases),
    )


def _evaluated(inputs: ReportInputs) -> list[str]:
    """The cases the run evaluated (an adaptive run may stop before its plan is exhausted)."""
    if inputs.evaluation is None or not inputs.order:
        return inputs.classify.planned_case_ids
    return sorted(inputs.order[: inputs.evaluation.evaluated])
