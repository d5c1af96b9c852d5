"""One run of the pipeline, shared by the nightly and the PR flow (DESIGN §2, §10).

classify → hash-corpus → sandbox → flake update → score → report. Only this
process writes the ledger: each stage's rows and its checkpoint go in one
transaction, so a re-run of the same run id resumes after the last finished
stage and never counts an observation twice.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bughunt.errors import InputError
from bughunt.hashing import sha256_bytes
from bughunt.models import (
    AgentVersion,
    BugCategory,
    FlakeRecord,
    JudgeCall,
    Observation,
    Reproduction,
    ReproOutcome,
    RunInfo,
    RunKind,
    RunStatus,
    Strategy,
)
from corpus import load_corpus
from flows._checkpoint import Checkpoints, Stage
from flows._runner import run_stage
from flows._summary import build_summary
from flows._tasks import classify_task, flake_task, hash_task, sandbox_task, score_task
from judging.judges import build_judge, load_judges
from ledger import Ledger, arrow_to_rows
from tasks.classify import ClassifyResult, previous_classifications
from tasks.classify import Stage as PlanStage
from tasks.flakes import UNTRUSTED_STATES, current_flakes, flake_key, record_key
from tasks.hash_corpus import CACHE_FILE, HashResult, manifest_rows, previous_manifest
from tasks.report import RunSummary, load_history, publish_artifacts, render_markdown, write_report
from tasks.sandbox import SandboxResult, SandboxSettings, known_checks
from tasks.score import (
    GateDecision,
    ReportEvidence,
    ScoreSettings,
    ScoreStageResult,
    decide_gate,
    load_gate_thresholds,
)

STAGES: tuple[str, ...] = tuple(s.value for s in PlanStage)
"""The six stages, in order."""


class RunParams(BaseModel):
    """Everything a run is started with (the flows' parameters; no secrets)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    corpus: str = "corpus/demo"
    """Corpus folder."""
    ledger: str | None = None
    """Ledger file (default ``BUGHUNT_LEDGER`` or ``.bughunt/ledger.duckdb``)."""
    out: str | None = None
    """Report folder (default ``<ledger folder>/runs/<run id>``)."""
    run_id: str | None = None
    """Run id; give an existing one to resume it."""
    baseline: str | None = None
    """Baseline agent (default: the corpus's pairing)."""
    candidate: str | None = None
    """Candidate agent (default: the corpus's pairing)."""
    judge: str = "sim"
    """Judge or jury name."""
    strategy: Strategy = Strategy.SWAP
    """Judging strategy."""
    repeats: int = Field(default=3, ge=1, le=20)
    """Executions per tree of each reproduction test."""
    workers: int | None = Field(default=None, ge=1)
    """Sandbox pairs at once (default: CPU count)."""
    refresh_judge: bool = False
    """Send every judge call again instead of using the cache."""
    probe_pairs: int = Field(default=20, ge=0)
    """Reports per bias probe (0: no probes)."""
    judges_config: str | None = None
    """File holding judge definitions (default ./pyproject.toml)."""
    test_timeout_s: float | None = Field(default=None, gt=0)
    """Per-test deadline of reproduction tests (default: the corpus's, else 10 s)."""
    judge_deadline_s: float = Field(default=90.0, gt=0)
    """Deadline of one judge call (all attempts)."""
    max_in_flight: int = Field(default=8, ge=1)
    """Judge requests in flight at once."""
    seed: int | None = Field(default=None, ge=0)
    """Seed of the sandbox's execution order and tree rewrites (default: drawn from the run id)."""


class RunResult(BaseModel):
    """What one run did and where its outputs are."""

    run_id: str
    """Run id (in every ledger row of the run)."""
    kind: RunKind
    """Nightly or PR."""
    ledger: str
    """Ledger file written."""
    stages_run: list[str]
    """Stages run in this process, in order."""
    stages_resumed: list[str]
    """Stages skipped because an earlier attempt of this run id finished them."""
    stages_skipped: list[str]
    """Stages the run plan did not need."""
    report_dir: str | None
    """Folder of report.md, report.html and summary.json."""
    summary: RunSummary
    """The run's figures."""


def new_run_id(kind: str = "nightly") -> str:
    """Sortable, unique run id: ``nightly-20261130T020000Z-1a2b3c``."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{kind}-{stamp}-{uuid.uuid4().hex[:6]}"


def run_seed(run_id: str) -> int:
    """The run's seed when none is given: from its id, whose random part no agent sees."""
    return int(sha256_bytes(f"bughunt-run-seed:{run_id}".encode())[:15], 16)


def _agent(agents: Sequence[AgentVersion], name: str, role: str, file: str) -> AgentVersion:
    for a in agents:
        if a.name == name:
            return a
    known = ", ".join(a.name for a in agents)
    raise InputError(f"no agent named {name!r} for the {role}; the corpus has: {known}", file=file)


def _observations_of(store: Ledger, run_id: str) -> list[Observation]:
    table = store.query_arrow(
        "SELECT * FROM observations WHERE run_id = ? AND source = 'sandbox' ORDER BY rowid",
        [run_id],
    )
    return arrow_to_rows(Observation, table)


def _restore_sandbox(payload: dict[str, Any], store: Ledger, run_id: str) -> dict[str, Any]:
    by_pair: dict[tuple[str | None, str | None], list[dict[str, Any]]] = {}
    for obs in _observations_of(store, run_id):
        by_pair.setdefault((obs.case_id, obs.agent_version), []).append(
            obs.model_dump(mode="json", by_alias=True)
        )
    pairs = [
        {**p, "observations": by_pair.get((p["case_id"], p["agent_version"]), [])}
        for p in payload["pairs"]
    ]
    return {"pairs": pairs}


def _restore_calls(payload: dict[str, Any], store: Ledger, run_id: str) -> dict[str, Any]:
    table = store.query_arrow("SELECT * FROM judge_calls WHERE run_id = ? ORDER BY rowid", [run_id])
    return {"calls": [c.model_dump(mode="json") for c in arrow_to_rows(JudgeCall, table)]}


class FlakeOutput(BaseModel):
    """The flake-update stage's output: flake rows and the run's reproduction outcomes."""

    flakes: list[FlakeRecord]
    reproductions: list[Reproduction]


def _stages(
    run_id: str, categories: dict[str, BugCategory | None], info: dict[str, Any]
) -> dict[str, Stage[Any]]:
    """How each stage's result is stored for this run (rows + resumable payload)."""
    known = {k: v for k, v in categories.items() if v is not None}
    return {
        "classify": Stage("classify", ClassifyResult),
        "hash-corpus": Stage(
            "hash-corpus", HashResult, rows=lambda r: manifest_rows(r, run_id, known)
        ),
        "sandbox": Stage(
            "sandbox",
            SandboxResult,
            rows=lambda r: [*r.observations(), *r.checks],
            payload_exclude={"pairs": {"__all__": {"observations"}}},
            restore_rows=_restore_sandbox,
        ),
        "flake-update": Stage(
            "flake-update", FlakeOutput, rows=lambda r: [*r.flakes, *r.reproductions]
        ),
        "score": Stage(
            "score",
            ScoreStageResult,
            rows=lambda r: [*r.calls, *r.verdicts, *r.probes],
            payload_exclude={"calls"},
            restore_rows=_restore_calls,
        ),
        "report": Stage(
            "report",
            RunSummary,
            rows=lambda s: [
                RunInfo(status=s.status, corpus_hash=s.corpus_hash, message=_message(s), **info)
            ],
        ),
    }


def reproductions_after_flakes(
    sandbox: SandboxResult,
    flakes: Sequence[FlakeRecord],
    run_id: str,
    categories: dict[str, BugCategory | None],
) -> list[Reproduction]:
    """Each pair's outcome, flaky when the flake ledger distrusts one of its test keys (DESIGN §5)."""
    untrusted = {record_key(f): f.state for f in flakes if f.state in UNTRUSTED_STATES}
    out = []
    for p in sandbox.pairs:
        outcome, reason = p.outcome, p.reason
        states = {untrusted[k] for o in p.observations if (k := flake_key(o)) in untrusted}
        if states and outcome in (ReproOutcome.REPRODUCED, ReproOutcome.NOT_REPRODUCED):
            outcome = ReproOutcome.FLAKY
            reason = f"its test is {'/'.join(sorted(s.value for s in states))} in the flake ledger"
        out.append(
            Reproduction(
                run_id=run_id,
                case_id=p.case_id,
                case_hash=p.case_hash,
                agent_version=p.agent_version,
                outcome=outcome,
                reason=reason,
                test_hash=p.test_hash,
                report_words=None,
                category=categories.get(p.case_id),
                symptom=p.symptom if outcome is ReproOutcome.REPRODUCED else None,
            )
        )
    return out


def run_pipeline(params: RunParams, kind: RunKind, pr_diff: bytes | None = None) -> RunResult:
    """Run (or resume) one run end to end; every ledger write happens here, in bulk."""
    store = Ledger(params.ledger)
    run_id = params.run_id or new_run_id(kind.value)
    if params.seed is None:  # recorded with the run's parameters, so a resume reuses it
        params = params.model_copy(update={"seed": run_seed(run_id)})
    started = datetime.now(UTC)
    checkpoints = Checkpoints(store, run_id)
    corpus = load_corpus(params.corpus)
    file = str(corpus.config_file)
    baseline = _agent(
        corpus.config.agents, params.baseline or corpus.config.pairing.baseline, "baseline", file
    )
    candidate = _agent(
        corpus.config.agents, params.candidate or corpus.config.pairing.candidate, "candidate", file
    )
    judges_cfg = load_judges(Path(params.judges_config) if params.judges_config else None)
    judge_configs = judges_cfg.resolve(params.judge)
    for config in judge_configs:  # fail now on a missing key or bad config, not mid-run
        build_judge(config)
    info: dict[str, Any] = {
        "run_id": run_id,
        "kind": kind,
        "corpus": corpus.name,
        "baseline": baseline.name,
        "candidate": candidate.name,
        "judge": params.judge,
        "strategy": params.strategy,
        "parameters": params.model_dump(mode="json", exclude={"ledger", "out", "run_id"}),
    }
    store.write([RunInfo(status=RunStatus.RUNNING, **info)])
    ran: list[str] = []
    resumed: list[str] = []

    def stage(spec: Stage[Any], inputs: Any, compute: Any) -> Any:
        result, was_resumed = checkpoints.run(spec, inputs, compute)
        (resumed if was_resumed else ran).append(spec.name)
        return result

    diff_hash = sha256_bytes(pr_diff) if pr_diff is not None else None
    # Beside the ledger, not in it: tasks never write the ledger, and a stat
    # identity means something only on this machine (tasks/hash_corpus/_cache.py).
    hash_cache = str(store.path.parent / CACHE_FILE)
    earlier = previous_classifications(store, corpus.name)
    classify: ClassifyResult = stage(
        Stage("classify", ClassifyResult),
        {"corpus": str(corpus.root), "diff": diff_hash},
        lambda: run_stage(classify_task, corpus, pr_diff, earlier, hash_cache),
    )
    plan = classify.plan
    wanted = {s.value for s in plan.stages}
    case_ids = list(classify.planned_case_ids)
    categories: dict[str, BugCategory | None] = {c.case_id: c.category for c in classify.cases}
    specs = _stages(run_id, categories, info)

    prev_run, prev = previous_manifest(store, corpus.name)
    hashed: HashResult = stage(
        specs["hash-corpus"],
        {"classify": checkpoints.inputs_of("classify")},
        lambda: run_stage(hash_task, corpus, prev, prev_run, hash_cache),
    )
    case_hashes = hashed.hashes()

    sandbox: SandboxResult | None = None
    observations: list[Observation] = []
    flake_out = FlakeOutput(flakes=[], reproductions=[])
    if PlanStage.SANDBOX.value in wanted and case_ids:
        settings = SandboxSettings(
            repeats=params.repeats,
            test_timeout_s=params.test_timeout_s or corpus.config.test_timeout_s or 10.0,
            workers=params.workers,
            seed=params.seed or 0,
        )
        sandbox = stage(
            specs["sandbox"],
            {
                "cases": case_ids,
                "hashes": case_hashes,
                "agents": [baseline.name, candidate.name],
                "settings": settings.model_dump(mode="json"),
            },
            lambda: run_stage(
                sandbox_task,
                corpus,
                case_ids,
                [baseline, candidate],
                case_hashes,
                run_id,
                settings,
                known_checks(store, corpus.name),
            ),
        )
        observations = sandbox.observations()
        flake_out = stage(
            specs["flake-update"],
            {"sandbox": checkpoints.inputs_of("sandbox")},
            lambda: _flake_stage(store, sandbox, observations, run_id, categories),
        )
    score: ScoreStageResult | None = None
    if PlanStage.SCORE.value in wanted and case_ids and sandbox is not None:
        evidence = _evidence(sandbox, flake_out.reproductions, (baseline, candidate))
        settings_s = ScoreSettings(
            strategy=params.strategy,
            seed=0,
            deadline_s=params.judge_deadline_s,
            max_in_flight=params.max_in_flight,
            probe_pairs=params.probe_pairs,
        )
        score = stage(
            specs["score"],
            {
                "sandbox": checkpoints.inputs_of("sandbox"),
                "judge": params.judge,
                "strategy": params.strategy.value,
                "refresh": params.refresh_judge,
                "probes": params.probe_pairs,
            },
            lambda: run_stage(
                score_task,
                evidence,
                run_id,
                baseline.name,
                candidate.name,
                categories,
                judge_configs,
                settings_s,
                store,
                params.refresh_judge,
            ),
        )
    gate: GateDecision | None = None
    if kind is RunKind.PR:
        gate = decide_gate(
            planned_cases=len(case_ids),
            score=score.summary if score else None,
            baseline_repro={
                r.case_id: r.outcome
                for r in flake_out.reproductions
                if r.agent_version == baseline.name
            },
            candidate_repro={
                r.case_id: r.outcome
                for r in flake_out.reproductions
                if r.agent_version == candidate.name
            },
            judge_degraded=bool(score and score.health.degraded),
            thresholds=load_gate_thresholds(),
        )
    summary = build_summary(
        run_id=run_id,
        kind=kind,
        started_at=started,
        corpus=corpus.name,
        corpus_hash=hashed.corpus_hash,
        baseline=baseline,
        candidate=candidate,
        judge=params.judge,
        strategy=params.strategy,
        stages_run=[*resumed, *ran],
        classify=classify,
        case_ids=case_ids,
        categories=categories,
        sandbox=sandbox,
        reproductions=flake_out.reproductions,
        flakes=flake_out.flakes,
        score=score,
        gate=gate,
    )
    summary = stage(
        specs["report"],
        {"score": checkpoints.inputs_of("score"), "gate": gate and gate.outcome.value},
        lambda: summary,
    )
    out_dir = Path(params.out) if params.out else store.path.parent / "runs" / run_id
    history = load_history(store, until_run_id=run_id)
    paths = write_report(summary, history, out_dir)
    publish_artifacts(summary, render_markdown(summary, history))
    skipped = [s for s in STAGES if s not in ran and s not in resumed]
    return RunResult(
        run_id=run_id,
        kind=kind,
        ledger=str(store.path),
        stages_run=ran,
        stages_resumed=resumed,
        stages_skipped=skipped,
        report_dir=str(paths.md.parent),
        summary=summary,
    )


def _message(summary: RunSummary) -> str:
    h = summary.headline
    parts = []
    if h is not None:
        parts.append(f"candidate won {h.candidate_wins} of {h.decisive} decisive pairs")
    if summary.gate is not None:
        parts.append(f"gate {summary.gate.outcome.value}")
    return "; ".join(parts) or "no pair judged"


def _flake_stage(
    store: Ledger,
    sandbox: SandboxResult,
    observations: list[Observation],
    run_id: str,
    categories: dict[str, BugCategory | None],
) -> FlakeOutput:
    flakes = run_stage(flake_task, store, observations, run_id)
    hashes = {o.case_hash for o in observations if o.case_hash}
    # The current state of every key this run touched: earlier rows, then this run's.
    known = {record_key(f): f for f in current_flakes(store, hashes)} if hashes else {}
    known.update({record_key(f): f for f in flakes})
    latest = list(known.values())
    return FlakeOutput(
        flakes=flakes, reproductions=reproductions_after_flakes(sandbox, latest, run_id, categories)
    )


def _evidence(
    sandbox: SandboxResult, reproductions: Sequence[Reproduction], agents: Sequence[AgentVersion]
) -> list[ReportEvidence]:
    wanted = {a.name for a in agents}
    final = {(r.case_id, r.agent_version): r for r in reproductions}
    out = []
    for p in sandbox.pairs:
        if p.agent_version not in wanted:
            continue
        r = final.get((p.case_id, p.agent_version))
        out.append(
            ReportEvidence(
                case_id=p.case_id,
                agent_version=p.agent_version,
                family=p.family,
                report=p.report,
                unusable_reason=p.unusable_reason,
                outcome=r.outcome if r else p.outcome,
                reason=r.reason if r else p.reason,
            )
        )
    return out
