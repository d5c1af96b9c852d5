"""The report stage's entry point: the run's summary, the PR gate, and the report files.

The stage gathers what the earlier stages found into a :class:`RunSummary`
and decides the gate of a PR run from that evidence; its row is the run's
closing ``runs`` event. :func:`publish` then writes ``report.md``,
``report.html`` and ``summary.json`` (with the ledger's history up to this
run) and the run's Prefect artifacts — every time, a resumed run too, so a
fresh workspace or a lost folder gets its report back.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bughunt.models import AgentVersion, PipelineStage, RunInfo, RunKind, Strategy
from ledger import Ledger, StageInputs, StageRecord
from tasks.classify import ClassifyResult
from tasks.flakes import FlakeResult
from tasks.gate import Evaluation, GateDecision, GateThresholds, RunEvidence, gate_of_run
from tasks.hash_corpus import HashResult
from tasks.report._artifacts import publish_artifacts
from tasks.report._comment import pr_comment
from tasks.report._format import wins_phrase
from tasks.report._model import RunSummary
from tasks.report._summary import build_summary
from tasks.report._write import write_outputs, write_report, write_transcripts
from tasks.report.runs import load_history, previous_nightly
from tasks.sandbox import SandboxResult
from tasks.score import ScoreResult, last_calibration


class ReportInputs(StageInputs):
    """Every earlier stage's result (those the plan ran), the run's identity and where to write."""

    kind: RunKind
    """Nightly or PR (a PR run's report carries the gate)."""
    started_at: datetime = Field(exclude=True)
    """When the run first started (a resumed attempt keeps its first report)."""
    baseline: AgentVersion
    """The baseline agent."""
    candidate: AgentVersion
    """The candidate agent."""
    judge: str
    """Judge or jury name."""
    strategy: Strategy
    """Judging strategy."""
    parameters: dict[str, Any] = Field(exclude=True)
    """The run's parameters (recorded in its closing ``runs`` row; the stages that use them
    carry them in their own settings)."""
    stages_run: list[PipelineStage]
    """The stages this run computed or resumed, in order."""
    classify: ClassifyResult
    """The classify stage's result: the plan and its cases."""
    hashed: HashResult
    """The hash-corpus stage's result."""
    order: list[str] = Field(default_factory=list)
    """The seeded random order the planned cases were evaluated in (the gate's bounds take
    the cases in it)."""
    evaluation: Evaluation | None = Field(default=None, exclude=True)
    """How much of the plan was evaluated and why it stopped, when the plan ran any case.
    Not part of the identity: it follows from the batches' results (which are), except its
    sandbox seconds, the wall time of the attempt that ran them."""
    sandbox: SandboxResult | None = None
    """The sandbox stage's result, when the plan ran it."""
    flakes: FlakeResult | None = None
    """The flake-update stage's result, when the plan ran it."""
    score: ScoreResult | None = None
    """The score stage's result, when the plan ran it."""


class ReportSettings(BaseModel):
    """The PR gate's thresholds."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    gate: GateThresholds = Field(default_factory=GateThresholds)
    """The thresholds a PR run's gate is decided with (the flow reads ``[tool.bughunt.gate]``)."""


def gate_of(inputs: ReportInputs, settings: ReportSettings) -> GateDecision | None:
    """A PR run's gate from its evidence; ``None`` for any other run."""
    if inputs.kind is not RunKind.PR:
        return None
    evidence = RunEvidence(
        planned=len(inputs.classify.planned_case_ids),
        order=inputs.order,
        evaluated=inputs.evaluation.evaluated if inputs.evaluation and inputs.order else None,
        baseline=inputs.baseline.name,
        candidate=inputs.candidate.name,
        scores=[inputs.score] if inputs.score else [],
        flakes=[inputs.flakes] if inputs.flakes else [],
    )
    return gate_of_run(evidence, settings.gate)


def run(inputs: ReportInputs, settings: ReportSettings) -> RunSummary:
    """Summarise the run and decide its gate (its files are :func:`publish`'s)."""
    summary = build_summary(inputs, gate_of(inputs, settings))
    calibration = last_calibration(inputs.ledger, inputs.judge, inputs.strategy)
    return summary.model_copy(update={"calibration": calibration})


def publish(
    summary: RunSummary,
    ledger: Ledger,
    out_dir: str | Path,
    sandbox: SandboxResult | None = None,
    *,
    artifacts: bool = True,
) -> Path:
    """Write the run's report files into ``out_dir`` and publish its Prefect artifacts.

    The history shown is what the ledger knew when the run finished. With
    ``sandbox``, each command agent's transcript (its scrubbed output and its
    gateway's request log) is written under ``transcripts/``, and each pair's
    reproduction-test executions under ``outputs/``, where the case rows link
    (their outputs read from the ledger, which holds the run's rows by then).
    Returns the folder. Call it inside the flow run, so the artifacts link to
    it; a run with no flow run (``artifacts=False``) has only its files.
    """
    history = load_history(ledger, until_run_id=summary.run_id)
    paths = write_report(summary, history, out_dir)
    if sandbox is not None:
        write_transcripts(sandbox, paths.md.parent)
        write_outputs(sandbox, paths.md.parent, ledger)
    if artifacts:
        # The UI's artifact: the short summary (gate, headline, reproduction, change since the
        # last nightly, where the report is). The whole report's tables, cells that never wrap
        # in Prefect's UI, would be several screens wide; its files are a click away.
        brief = pr_comment(summary, previous_nightly(ledger, summary), str(paths.html))
        publish_artifacts(summary, brief)
    return paths.md.parent


def closing_message(summary: RunSummary) -> str:
    """One line for the run's closing ``runs`` row and the flow run's state message, shortest
    first (a page shows its first words only): the gate's outcome (a PR run), the answer in a
    few words, the headline, then the gate's score bounds."""
    h = summary.headline
    gate = summary.gate
    parts = [f"gate {gate.outcome.value} (exit {gate.exit_code})"] if gate else []
    if summary.answer is not None and summary.answer.short:
        parts.append(summary.answer.short)
    if h is not None:
        parts.append(f"candidate {wins_phrase(h, 'won')}")
    if gate is not None and gate.score is not None and gate.score.mean is not None:
        parts.append(
            f"gate's mean pair score {gate.score.mean:.2f}, bounds "
            f"[{gate.score.lower:.2f}, {gate.score.upper:.2f}]"
        )
    return "; ".join(parts) or "no pair judged"


def _rows(inputs: ReportInputs, summary: RunSummary) -> list[RunInfo]:
    return [
        RunInfo(
            run_id=inputs.run_id,
            kind=inputs.kind,
            corpus=summary.corpus,
            baseline=inputs.baseline.name,
            candidate=inputs.candidate.name,
            judge=inputs.judge,
            strategy=inputs.strategy,
            parameters=inputs.parameters,
            status=summary.status,
            corpus_hash=summary.corpus_hash,
            message=closing_message(summary),
        )
    ]


RECORD: StageRecord[ReportInputs, RunSummary] = StageRecord(
    PipelineStage.REPORT.value, RunSummary, rows=_rows
)
"""The run's closing ``runs`` row; the summary is the payload (``bughunt report`` reads it)."""
