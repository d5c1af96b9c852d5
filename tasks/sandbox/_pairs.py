"""Running the stage's jobs: each pair's report (recorded, given, or its agent run in the
sandbox), then its reproduction test on the case's trees, scrubbed of every agent's secrets.

A pair's engine failure is that pair's ``error``; the other pairs go on.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bughunt.models import AgentMode, BugReport, ReproOutcome
from gateway.secrets import Scrubber
from tasks.sandbox._agents import (
    AgentCase,
    AgentContainer,
    AgentExecution,
    recorded_report,
    run_agent,
)
from tasks.sandbox._jobs import Job
from tasks.sandbox._result import AgentTrace, PairResult, agent_trace
from tasks.sandbox._settings import SandboxSettings
from tasks.sandbox._stage_engine import StageEngine
from tasks.sandbox.engine import (
    Gateway,
    SandboxEngineError,
    SandboxRequestError,
    map_bounded,
    pool_size,
)
from tasks.sandbox.evidence import localise
from tasks.sandbox.reproduction import (
    FINGERPRINT_REASON,
    PairIds,
    ReproRuns,
    outcome_of,
    reproduce,
    symptom_of,
)


@dataclass(frozen=True, slots=True)
class AgentAccess:
    """What command agents are handed beyond their tree, by agent name."""

    secrets: Mapping[str, Mapping[str, str]] = dataclasses.field(default_factory=dict)
    """Each command agent's secrets (its ``env``): for its own container only."""
    model_keys: Mapping[str, str | None] = dataclasses.field(default_factory=dict)
    """Each networked agent's model key: held by its gateway only."""


@dataclass(frozen=True, slots=True)
class PairSetup:
    """What every pair of one stage run shares: the run, its engine, secrets and gateways."""

    run_id: str
    settings: SandboxSettings
    engine: StageEngine
    secrets: Mapping[str, Mapping[str, str]]
    """Each command agent's secrets (its ``env``), by agent name: for its own container only."""
    scrubber: Scrubber
    """The run's scrubber: every command agent's secrets."""
    gateways: Mapping[str, Gateway]
    """Each networked agent's gateway for the run (docs/agents.md#network), by name."""


def run_jobs(
    jobs: Sequence[Job],
    engine: StageEngine,
    *,
    run_id: str,
    settings: SandboxSettings,
    access: AgentAccess | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[PairResult]:
    """Every job's pair, in job order, on the engine's executors, scrubbed of every agent's
    secrets (``access.secrets``).

    Each agent with a network table gets one gateway for the stage, holding
    its model's key (``access.model_keys``), removed when the stage ends.
    """
    access = access or AgentAccess()
    workers = pool_size(settings.workers)
    done = 0
    keys = {
        agent.network.api_key_env: key
        for agent in {job.agent.name: job.agent for job in jobs}.values()
        if agent.network is not None
        and agent.network.api_key_env
        and (key := access.model_keys.get(agent.name))
    }
    scrubber = Scrubber(
        [*(p for values in access.secrets.values() for p in values.items()), *keys.items()]
    )
    with contextlib.ExitStack() as stack:
        gateways = _start_gateways(stack, jobs, run_id, engine, access.model_keys)
        setup = PairSetup(run_id, settings, engine, access.secrets, scrubber, gateways)

        def one(job: Job) -> PairResult:
            nonlocal done
            try:
                result = scrubber.scrub_model(_run_pair(job, setup))
            finally:
                job.work.done()
            done += 1
            if progress is not None:
                progress(done, len(jobs))
            return result

        return map_bounded(one, jobs, max_workers=workers)


def _start_gateways(
    stack: contextlib.ExitStack,
    jobs: Sequence[Job],
    run_id: str,
    engine: StageEngine,
    model_keys: Mapping[str, str | None],
) -> dict[str, Gateway]:
    """One gateway per agent with a network table among ``jobs``, closed with ``stack``."""
    gateways: dict[str, Gateway] = {}
    for job in jobs:
        agent = job.agent
        if agent.network is None or agent.name in gateways or agent.mode is not AgentMode.COMMAND:
            continue
        gateway = Gateway(
            run_id=run_id,
            agent=agent,
            network=agent.network,
            key=model_keys.get(agent.name),
            client=engine.client,
            image=engine.image,
        )
        gateways[agent.name] = stack.enter_context(gateway)
    return gateways


def _report_of(job: Job, setup: PairSetup) -> tuple[BugReport | str, AgentExecution | None]:
    """The agent's report for the case (recorded, or run in the sandbox) and its execution."""
    if job.report is not None:
        return job.report, None
    if job.agent.mode is AgentMode.REPLAY:
        return recorded_report(job.agent, job.case.case_id), None
    case_info: dict[str, object] = {
        "id": job.case.case_id,
        "title": job.case.case.title,
        "hints": job.case.case.hints,
        "sample": job.sample,
    }
    engine = setup.engine
    container = AgentContainer(
        run_id=setup.run_id,
        image=engine.images.agent(job.agent.name, job.case.target) or engine.image,
        timeout_s=setup.settings.agent_timeout_s,
        limits=engine.limits,
        client=engine.client,
    )
    execution = run_agent(
        job.agent,
        AgentCase(job.case.case_id, job.view, case_info),
        container,
        secrets=setup.secrets.get(job.agent.name, {}),
        scrubber=setup.scrubber,
        gateway=setup.gateways.get(job.agent.name),
    )
    return execution.got, execution


def _run_pair(job: Job, setup: PairSetup) -> PairResult:
    """The job's pair: its report, that report's executions and the outcome they decide."""
    case_id, agent, settings = job.case.case_id, job.agent, setup.settings
    trace: AgentTrace = {}
    agent_seconds: float | None = None
    try:
        got, execution = _report_of(job, setup)
        trace = agent_trace(
            execution,
            run_id=setup.run_id,
            case_id=case_id,
            case_hash=job.case_hash,
            agent=agent.name,
            sample=job.sample,
        )
        agent_seconds = execution.seconds if execution is not None else None
        if isinstance(got, str):
            return PairResult.failed(
                job.key,
                f"no usable report: {got}",
                unusable_reason=got,
                agent_seconds=agent_seconds,
                trace=trace,
            )
        executor, image_id = setup.engine.executors[job.case.target]
        timeout_s = settings.timeout_for(job.case.target)
        ids = PairIds(setup.run_id, case_id, job.case_hash, agent.name, image_id, job.sample)
        runs = ReproRuns(settings.repeats, settings.rewrite_repeats, timeout_s, settings.seed)
        test_hash, observations = reproduce(got, job.trees, executor=executor, ids=ids, runs=runs)
        outcome, reason = outcome_of(observations, timeout_s)
        if reason == FINGERPRINT_REASON and job.check is not None:
            problem = job.check.problem(executor)
            if problem is not None:  # our rewrite is at fault, not the test
                outcome, reason = ReproOutcome.ERROR, f"cannot check against a rewrite: {problem}"
    except (SandboxEngineError, SandboxRequestError) as exc:  # this pair's, not the stage's
        return PairResult.failed(
            job.key,
            f"sandbox engine failed: {exc.message}",
            agent_seconds=agent_seconds,
            trace=trace,
        )
    return PairResult(
        case_id=case_id,
        case_hash=job.case_hash,
        agent_version=agent.name,
        family=agent.family,
        report=got,
        unusable_reason=None,
        outcome=outcome,
        reason=reason,
        test_hash=test_hash,
        agent_seconds=agent_seconds,
        rewrite_seed=job.trees.rewrite_seed,
        symptom=symptom_of(outcome, observations),
        observations=observations,
        sample=job.sample,
        localisation=localise(got.root_cause, job.trees.buggy, job.trees.clean),
        **trace,
    )
