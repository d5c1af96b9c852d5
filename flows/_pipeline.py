"""One run of the pipeline, shared by the nightly and the PR flow.

classify → hash-corpus → sandbox → flake update → score → report. Each stage
is handed its inputs (earlier stages' results among them) and its settings,
and runs as one Prefect task on the flow's task runner; its result comes back
here and is checkpointed with its ledger rows in one transaction. Only this
process writes the ledger, so a re-run of the same run id resumes after the
last finished stage and never counts an observation twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from bughunt.models import PipelineStage, RunInfo, RunKind, RunStatus
from flows._adaptive import RunContext, evaluate
from flows._checkpoint import Checkpoints
from flows._inputs import INPUTS_KEY
from flows._prepare import Prepared, for_runner
from flows._progress import StageProgress, terminal
from flows._runner import (
    ClusterStartup,
    run_stage,
    shard_default,
    shard_tail_default,
    submit_stage,
)
from flows._tasks import run_logger, stage_function, stage_task
from ledger import Ledger, StageInputs, StageRecord
from tasks import classify, hash_corpus, report
from tasks.report import RunSummary

STAGES: tuple[str, ...] = tuple(s.value for s in PipelineStage)
"""The six stages, in order."""

In = TypeVar("In", bound=StageInputs)
R = TypeVar("R", bound=BaseModel)


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


class _RunStages:
    """The stages of one run so far: each is resumed from its checkpoint or run as a task."""

    def __init__(self, store: Ledger, run_id: str, *, orchestrated: bool = True) -> None:
        self.checkpoints = Checkpoints(store, run_id)
        self.orchestrated = orchestrated
        """Whether stages run as Prefect tasks (inside a flow run) or as their plain functions."""
        self.ran: list[str] = []
        self.resumed: list[str] = []
        self.cluster: ClusterStartup | None = None
        """The flow's Dask cluster coming up while the flow goes on (:meth:`start_cluster`)."""

    def start_cluster(self) -> None:
        """Start the flow's Dask cluster now, for the shards to come."""
        if self.orchestrated and self.cluster is None:
            self.cluster = ClusterStartup()

    def say(self) -> Callable[[str], None]:
        """Where progress lines go: the flow run's log (none when not orchestrated)."""
        say = run_logger() if self.orchestrated else None
        return say if say is not None else (lambda _line: None)

    def stage(self, record: StageRecord[In, R], inputs: In, settings: BaseModel) -> R:
        say = self.say()

        def compute() -> R:
            if not self.orchestrated:
                result: R = stage_function(record)(inputs, settings)
                return result
            with StageProgress(record.name, "task", 1, say, bars=terminal()) as shown:
                computed: R = run_stage(stage_task(record.name), inputs, settings)
                shown.advance()
            return computed

        result, resumed = self.checkpoints.run(record, inputs, settings, compute)
        if resumed:
            say(f"{record.name}: resumed from its checkpoint")
        (self.resumed if resumed else self.ran).append(record.name)
        return result

    def shards(
        self, record: StageRecord[In, R], shards: Sequence[In], settings: BaseModel
    ) -> list[R]:
        if not self.orchestrated:  # shards go through a flow's task runner
            raise ValueError(f"the {record.name} stage's shards need a flow run")
        task = stage_task(record.name)
        if self.cluster is not None:  # the stage's clock starts with its workers up
            self.cluster.wait()
        with StageProgress(
            record.name, "shards", len(shards), self.say(), bars=terminal()
        ) as shown:
            done = self.checkpoints.run_shards(
                record,
                shards,
                settings,
                lambda inputs: submit_stage(task, inputs, settings),
                finished=shown.advance,
            )
        (self.resumed if all(resumed for _r, resumed in done) else self.ran).append(record.name)
        return [result for result, _resumed in done]

    def combine(self, result: R, parts: list[Any]) -> R:
        return self.checkpoints.combine(result, parts)

    def done(self) -> list[PipelineStage]:
        """The stages this run computed or resumed, each once, in pipeline order."""
        seen = {*self.resumed, *self.ran}
        return [s for s in PipelineStage if s.value in seen]


def run_pipeline(run: Prepared, *, orchestrated: bool = True) -> RunResult:
    """Run (or resume) one prepared run (:func:`~flows._prepare.prepare`) end to end; every
    ledger write happens here, in bulk.

    ``orchestrated=False`` runs each stage as its plain function, outside any
    flow run and without Prefect artifacts: for a PR whose plan evaluates
    nothing (:func:`~flows._prepare.evaluates_nothing`), which then needs no
    Prefect server; its sandbox or score stage, were the plan to have one,
    raises :class:`ValueError` (shards need a flow's task runner).
    """
    run = for_runner(
        run,
        shard_default() if orchestrated else None,
        orchestrated and shard_tail_default(),
    )
    store, run_id, params, corpus, kind = run.store, run.run_id, run.params, run.corpus, run.kind
    baseline, candidate, hash_cache = run.baseline, run.candidate, run.hash_cache
    gate = run.config.gate
    judges = run.judges
    started = datetime.now(UTC)
    recorded = params.model_dump(mode="json", exclude={"ledger", "out", "run_id"})
    store.write(
        [
            RunInfo(
                run_id=run_id,
                kind=kind,
                corpus=corpus.name,
                baseline=baseline.name,
                candidate=candidate.name,
                judge=params.judge,
                strategy=params.strategy,
                parameters={**recorded, INPUTS_KEY: run.inputs},
                status=RunStatus.RUNNING,
            )
        ]
    )
    stages = _RunStages(store, run_id, orchestrated=orchestrated)
    ids = {"run_id": run_id, "ledger": store}
    if orchestrated:
        label_flow_run(run_id, [f"kind:{kind.value}", f"corpus:{corpus.name}"], stages.say())

    classified = stages.stage(
        classify.RECORD,
        classify.ClassifyInputs(**ids, corpus=corpus, changed_paths=run.changed),
        classify.ClassifySettings(hash_cache=hash_cache, impact=run.config.impact),
    )
    planned = set(classified.plan.stages) if classified.planned_case_ids else set()
    evaluates = PipelineStage.SANDBOX in planned or PipelineStage.SCORE in planned
    if evaluates:
        stages.start_cluster()  # a Dask cluster comes up while the corpus is hashed
    hashed = stages.stage(
        hash_corpus.RECORD,
        hash_corpus.HashInputs(**ids, corpus=corpus, classify=classified),
        hash_corpus.HashSettings(hash_cache=hash_cache),
    )
    evaluated = None
    if evaluates:
        evaluated = evaluate(
            stages,
            RunContext(
                run=ids,
                corpus=corpus,
                classify=classified,
                hashed=hashed,
                baseline=baseline,
                candidate=candidate,
                judges=judges,
                params=params,
                kind=kind,
                gate=gate,
                flake_thresholds=run.config.flakes,
                judged=PipelineStage.SCORE in planned,
                corpus_content=run.inputs.get("corpus_content"),
            ),
        )
    out_dir = Path(params.out) if params.out else report.default_out_dir(store, run_id)
    summary = stages.stage(
        report.RECORD,
        report.ReportInputs(
            **ids,
            kind=kind,
            started_at=started,
            baseline=baseline,
            candidate=candidate,
            judge=params.judge,
            strategy=params.strategy,
            parameters=recorded,
            stages_run=stages.done(),
            classify=classified,
            hashed=hashed,
            order=evaluated.order if evaluated else [],
            evaluation=evaluated.evaluation if evaluated else None,
            sandbox=evaluated.sandbox if evaluated else None,
            flakes=evaluated.flakes if evaluated else None,
            score=evaluated.score if evaluated else None,
        ),
        report.ReportSettings(gate=gate),
    )
    if orchestrated and summary.gate is not None:
        label_flow_run(None, [f"gate:{summary.gate.outcome.value}"], stages.say())
    # every time: a resumed run gets its files back (transcripts from the restored sandbox result)
    report.publish(
        summary, store, out_dir, evaluated.sandbox if evaluated else None, artifacts=orchestrated
    )
    return RunResult(
        run_id=run_id,
        kind=kind,
        ledger=str(store.path),
        stages_run=list(dict.fromkeys(stages.ran)),
        stages_resumed=list(dict.fromkeys(stages.resumed)),
        stages_skipped=_skipped(stages),
        report_dir=str(out_dir),
        summary=summary,
    )


def label_flow_run(name: str | None, tags: list[str], say: Callable[[str], None]) -> None:
    """Name the current flow run (after the bughunt run id) and add ``tags`` to it, so the
    Prefect UI lists runs as the ledger and the reports name them.

    Outside a flow run, nothing. A label is for people reading the UI: when the API refuses
    it, the run goes on and its log says why.
    """
    from prefect.client.orchestration import get_client
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return
    flow_run = context.flow_run
    try:
        with get_client(sync_client=True) as client:
            current = client.read_flow_run(flow_run.id)
            client.update_flow_run(
                flow_run.id, name=name, tags=sorted({*(current.tags or []), *tags})
            )
    except Exception as exc:  # a label never fails a run; the log says so
        say(f"the flow run was not labelled ({', '.join(tags)}): {type(exc).__name__}: {exc}")


def finished(result: RunResult) -> RunResult:
    """The flow run's final state: Completed, its message the headline and the gate.

    Prefect hands the caller the state's data, so the flow still returns the
    :class:`RunResult`; the Prefect UI shows the message.
    """
    from prefect.client.schemas.objects import State
    from prefect.states import Completed  # in a flow run, where Prefect is imported already

    state: State[RunResult] = Completed(message=report.closing_message(result.summary), data=result)
    return cast(RunResult, state)


def _skipped(stages: _RunStages) -> list[str]:
    done: Sequence[str] = (*stages.ran, *stages.resumed)
    return [s for s in STAGES if s not in done]
