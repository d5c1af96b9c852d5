"""The score stage's entry point: evidence from the earlier stages, judging, and what is kept."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from bughunt.models import AgentVersion, JudgeCall, Reproduction, Row
from judging.judges import JudgeConfig, build_judge, close_judges
from ledger import Ledger, StageInputs, StageRecord, arrow_to_rows
from tasks.classify import ClassifyResult
from tasks.flakes import FlakeResult
from tasks.sandbox import SandboxResult
from tasks.score._evidence import ReportEvidence
from tasks.score._settings import ScoreSettings
from tasks.score._stage import Matchup, ScoreResult, score_stage


class ScoreInputs(StageInputs):
    """The two agents' reports with their final outcomes, and the judges that compare them."""

    classify: ClassifyResult
    """The classify stage's result: each case's category."""
    sandbox: SandboxResult
    """The sandbox stage's result: each pair's report."""
    flakes: FlakeResult
    """The flake-update stage's result: each pair's final outcome."""
    baseline: AgentVersion
    """The baseline agent."""
    candidate: AgentVersion
    """The candidate agent."""
    judges: list[JudgeConfig]
    """The judge, or a jury's members. Configurations: a backend holds locks and HTTP
    clients that cannot travel to another process, so judges are built where the stage runs."""
    earlier: ScoreResult | None = None
    """What earlier batches of an adaptive run scored (``sandbox`` and ``flakes`` then cover
    them too): their pairs are not judged again."""
    cached: list[JudgeCall] = Field(exclude=True)
    """Earlier judge calls that may answer this stage's, read from the ledger by the flow before
    the stage was submitted (a stage on another machine has no ledger to read; none when the
    run refreshes the judge). Not part of the stage's identity, like the ledger itself."""


def evidence_of(
    sandbox: SandboxResult, reproductions: Sequence[Reproduction], agents: Sequence[AgentVersion]
) -> list[ReportEvidence]:
    """Each report of ``agents`` with its final outcome (after the flake ledger's word)."""
    wanted = {a.name for a in agents}
    final = {(r.case_id, r.agent_version, r.sample): r for r in reproductions}
    out = []
    for p in sandbox.pairs:
        if p.agent_version not in wanted:
            continue
        r = final.get((p.case_id, p.agent_version, p.sample))
        out.append(
            ReportEvidence(
                case_id=p.case_id,
                agent_version=p.agent_version,
                family=p.family,
                report=p.report,
                unusable_reason=p.unusable_reason,
                outcome=r.outcome if r else p.outcome,
                reason=r.reason if r else p.reason,
                sample=p.sample,
            )
        )
    return out


def agent_variables(agents: Sequence[AgentVersion]) -> list[str]:
    """Host variables that are the agents' alone: their secrets (``env``) and model keys."""
    names = {name for agent in agents for name in agent.env}
    names |= {a.network.api_key_env for a in agents if a.network and a.network.api_key_env}
    return sorted(names)


def run(inputs: ScoreInputs, settings: ScoreSettings) -> ScoreResult:
    """Judge every candidate/baseline pair, fold the verdicts, probe the judge's biases.

    A command judge never gets the agents' secrets or model keys in its environment.
    """
    agents = (inputs.baseline, inputs.candidate)
    judges = [
        build_judge(c, withhold=agent_variables(agents), max_connections=settings.max_in_flight)
        for c in inputs.judges
    ]
    try:
        return score_stage(
            evidence_of(
                inputs.sandbox, inputs.flakes.reproductions, (inputs.baseline, inputs.candidate)
            ),
            Matchup(inputs.run_id, inputs.baseline.name, inputs.candidate.name),
            categories=inputs.classify.categories(),
            judges=judges,
            settings=settings,
            cached=inputs.cached,
            earlier=inputs.earlier,
        )
    finally:
        close_judges(judges)  # a judge's connections live as long as its stage (or shard)


def _rows(_inputs: ScoreInputs, result: ScoreResult) -> list[Row]:
    return [*result.calls, *result.verdicts, *result.probes]


def _restore(payload: dict[str, Any], store: Ledger, run_id: str) -> dict[str, Any]:
    """The stage's judge calls, read back from ``judge_calls`` by id (in the order written).

    A checkpoint written before calls were listed by id (one score stage per run) gets
    every call of its run.
    """
    if "call_ids" not in payload:
        table = store.query_arrow(
            "SELECT * FROM judge_calls WHERE run_id = ? ORDER BY rowid", [run_id]
        )
        return {"calls": [c.model_dump(mode="json") for c in arrow_to_rows(JudgeCall, table)]}
    table = store.query_arrow(
        "SELECT * FROM judge_calls WHERE run_id = ? AND list_contains(?, call_id) ORDER BY rowid",
        [run_id, payload.get("call_ids", [])],
    )
    return {"calls": [c.model_dump(mode="json") for c in arrow_to_rows(JudgeCall, table)]}


def _call_ids(result: ScoreResult) -> dict[str, Any]:
    return {"call_ids": [c.call_id for c in result.calls]}


RECORD: StageRecord[ScoreInputs, ScoreResult] = StageRecord(
    "score",
    ScoreResult,
    rows=_rows,
    payload_exclude={"calls"},
    restore_rows=_restore,
    payload_keys=_call_ids,
)
"""Judge calls, verdicts and probes go to their tables; calls are left out of the payload."""
