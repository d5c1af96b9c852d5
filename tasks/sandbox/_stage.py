"""Stage 3, sandbox run: every planned case × agent version, in hardened containers.

For each pair (case, agent version): obtain the report (run the agent in the
sandbox, or take the recorded one), validate it, then run its reproduction
test against the buggy tree and the clean tree ``repeats`` times each and
against this run's behaviour-preserving rewrites of both, every execution in
fresh namespaces of a hardened cell (``_cell``), in a seeded shuffled order
(``_reproduce``); agents run in fresh containers (``_agents``). Every
execution is an :class:`~bughunt.models.Observation`; the pair gets a
:class:`~bughunt.models.ReproOutcome` with its reason.

Nothing is written here: the flow writes the rows.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict

from bughunt.errors import InputError
from bughunt.models import (
    AgentMode,
    AgentRun,
    AgentVersion,
    BugReport,
    ContractCheck,
    ContractStatus,
    Observation,
    ReproOutcome,
    Symptom,
)
from bughunt.safeio import read_input
from corpus import (
    Corpus,
    LoadedCase,
    TargetConfig,
    agent_secrets,
    agent_view,
    model_key,
)
from gateway.secrets import Scrubber
from tasks.sandbox._agents import (
    AGENT_OUTPUT_CAP,
    AgentExecution,
    parse_report,
    recorded_report,
    run_agent,
)
from tasks.sandbox._cell import CellExecutor
from tasks.sandbox._container import Limits
from tasks.sandbox._contract import check_contract
from tasks.sandbox._engine import connect
from tasks.sandbox._environments import RunImages, announce, ensure_corpus_images
from tasks.sandbox._errors import SandboxEngineError, SandboxRequestError
from tasks.sandbox._executor import Executor
from tasks.sandbox._gateway import Gateway
from tasks.sandbox._image import ensure_image
from tasks.sandbox._pool import map_bounded, pool_size
from tasks.sandbox._reproduce import (
    FINGERPRINT_REASON,
    CaseTrees,
    PairIds,
    outcome_of,
    reproduce,
    symptom_of,
)
from tasks.sandbox._rewrites import RewriteCheck, case_trees, rewrite_plan
from tasks.sandbox._settings import SandboxSettings
from tasks.sandbox._sweep import sweep
from tasks.sandbox._trees import Files, apply_patch, read_tree


class PairResult(BaseModel):
    """One agent version on one case: its report, executions and outcome."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    case_id: str
    """Case id."""
    case_hash: str | None
    """Content hash of the case."""
    agent_version: str
    """Agent version."""
    family: str
    """Its model family."""
    report: BugReport | None
    """The validated report, when there is one."""
    unusable_reason: str | None
    """Why there is no usable report."""
    outcome: ReproOutcome
    """reproduced, not_reproduced, flaky or error."""
    reason: str | None
    """Why, for anything but a clean reproduction."""
    test_hash: str | None
    """sha256 of the reproduction test source."""
    agent_seconds: float | None
    """Seconds the agent ran (command mode)."""
    rewrite_seed: int | None = None
    """Seed of the rewrites the test also ran on; None when the case had none."""
    symptom: Symptom | None = None
    """How the bug showed when reproduced: fail, or hang (every buggy execution timed out)."""
    observations: list[Observation]
    """Every execution of the reproduction test."""
    agent_run: AgentRun | None = None
    """The agent's execution (command mode): time, model requests, tokens, cost."""
    transcript: str | None = None
    """The agent's output, head and tail, scrubbed (command mode)."""
    calls: list[dict[str, Any]] = []
    """The requests its gateway saw for this case, scrubbed (an agent with a network)."""
    sample: int = 0
    """Which of the agent's samples on the case this is (``agent_samples``; 0-based)."""

    @classmethod
    def failed(
        cls,
        case_id: str,
        case_hash: str | None,
        agent: AgentVersion,
        reason: str,
        *,
        unusable_reason: str | None = None,
        agent_seconds: float | None = None,
        trace: AgentTrace | None = None,
        sample: int = 0,
    ) -> PairResult:
        """A pair that ended in ``error`` before any execution, with its reason."""
        return cls(
            case_id=case_id,
            case_hash=case_hash,
            agent_version=agent.name,
            family=agent.family,
            report=None,
            unusable_reason=unusable_reason,
            outcome=ReproOutcome.ERROR,
            reason=reason,
            test_hash=None,
            agent_seconds=agent_seconds,
            observations=[],
            sample=sample,
            **(trace or {}),
        )


class SandboxResult(BaseModel):
    """The sandbox stage's output for one run."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    image: str
    """Image tag used."""
    image_id: str
    """Image id (part of every flake key)."""
    seed: int = 0
    """Seed the executions were shuffled and the trees rewritten with."""
    swept: list[str]
    """Containers of crashed runs removed at the start."""
    checks: list[ContractCheck] = []
    """Corpus-contract checks made in this run (cases whose content was not checked before)."""
    contract: list[ContractCheck] = []
    """Every planned case's contract check the run went by, made now or known from the ledger
    (its target's known failures and its rewrite level: the report shows them)."""
    pairs: list[PairResult]
    """One per planned case × agent version, sorted."""

    def observations(self) -> list[Observation]:
        """Every execution of the run."""
        return [o for p in self.pairs for o in p.observations]

    @classmethod
    def merge(cls, parts: Sequence[SandboxResult]) -> SandboxResult:
        """One result from the batches of an adaptive run (each case in one batch)."""
        if not parts:
            raise ValueError("nothing to merge")
        return cls(
            image=parts[0].image,
            image_id=parts[0].image_id,
            seed=parts[0].seed,
            swept=[c for p in parts for c in p.swept],
            checks=[c for p in parts for c in p.checks],
            contract=sorted((c for p in parts for c in p.contract), key=lambda c: c.case_id),
            pairs=sorted((pair for p in parts for pair in p.pairs), key=pair_order),
        )


def pair_order(pair: PairResult) -> tuple[str, str, int]:
    """How a stage's pairs are sorted: by case, agent version, then sample."""
    return (pair.case_id, pair.agent_version, pair.sample)


class AgentTrace(TypedDict, total=False):
    """What a pair keeps of its agent's execution (command mode)."""

    agent_run: AgentRun | None
    transcript: str | None
    calls: list[dict[str, Any]]


def agent_trace(
    execution: AgentExecution | None,
    *,
    run_id: str,
    case_id: str,
    case_hash: str | None,
    agent: str,
    sample: int = 0,
) -> AgentTrace:
    """The pair's fields for an agent execution: its ``agent_runs`` row, transcript and calls.

    Usage figures are sums over the answers that reported them; None when
    none did (absence is never zero), and no cost without any model call.
    """
    if execution is None:
        return {}
    calls = execution.calls
    # Tunnels (CONNECT, ``network.allow``) are counted apart: they carry no model usage.
    model_calls = [c for c in calls if c.get("kind", "model") == "model"]
    answered = [c for c in model_calls if c.get("refused") is None]
    tunnels = [c for c in calls if c.get("kind") == "tunnel" and c.get("refused") is None]
    tokens_in = [c["tokens_in"] for c in answered if c.get("tokens_in") is not None]
    tokens_out = [c["tokens_out"] for c in answered if c.get("tokens_out") is not None]
    models = [c["model"] for c in answered if c.get("model")]
    got = execution.got
    row = AgentRun(
        run_id=run_id,
        case_id=case_id,
        case_hash=case_hash,
        agent_version=agent,
        seconds=execution.seconds,
        ended="report" if not isinstance(got, str) else got[:2_000],
        requests=len(answered),
        # The gateway folds a long run of refusals into one entry with its ``count``.
        refused=sum(int(c.get("count") or 1) for c in calls if c.get("refused") is not None),
        tunnels=len(tunnels),
        tokens_in=sum(tokens_in) if tokens_in else None,
        tokens_out=sum(tokens_out) if tokens_out else None,
        cost=sum(float(c.get("cost") or 0.0) for c in answered) if answered else None,
        model=models[-1] if models else None,
        sample=sample,
    )
    return {"agent_run": row, "transcript": execution.transcript, "calls": calls}


_Made = tuple[CaseTrees, RewriteCheck | None, Files]

Executors = dict[str, tuple[Executor, str]]
"""Per target name, the executor that runs its cases and the id of its image."""


class _Window:
    """How many cases' trees are held at once: what the thread that makes them ahead waits on."""

    def __init__(self, ahead: int) -> None:
        self.ahead = ahead
        self.held = 0
        self.cond = threading.Condition()

    def change(self, by: int) -> None:
        with self.cond:
            self.held += by
            self.cond.notify_all()

    def wait_for_room(self, stop: threading.Event) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.held < self.ahead or stop.is_set())

    def wake(self) -> None:
        """Have a waiter look at its stop event again."""
        self.change(0)


class _CaseWork:
    """A case's trees (with this run's rewrites), their rewrite check and the agent's view of
    the buggy tree: made once, when first asked for, and let go when the case's last job is
    done. So rewriting overlaps other cases' executions, and a stage holds the trees of the
    cases in flight, not of every case."""

    def __init__(self, make: Callable[[], _Made], jobs: int, window: _Window) -> None:
        self._make: Callable[[], _Made] | None = make
        self._made: _Made | None = None
        self._jobs = jobs
        self.window = window
        self._lock = threading.Lock()

    def get(self) -> _Made:
        """The case's trees, check and view; made now when nobody asked before."""
        with self._lock:
            if self._made is None:
                if self._make is None:
                    raise RuntimeError("a case's trees were asked for after its last job")
                self._made = self._make()
                self.window.change(+1)
            return self._made

    def done(self) -> None:
        """One of the case's jobs is done; after the last, the trees are let go."""
        with self._lock:
            self._jobs -= 1
            if self._jobs > 0:
                return
            if self._made is not None:
                self.window.change(-1)
            self._made = self._make = None


@dataclass(frozen=True, slots=True)
class _Job:
    case: LoadedCase
    case_hash: str | None
    agent: AgentVersion
    work: _CaseWork
    report: BugReport | str | None = None
    """A report given directly (``verify_report``), instead of the agent's."""
    sample: int = 0
    """Which of the agent's samples on the case (``agent_samples``)."""

    @property
    def trees(self) -> CaseTrees:
        """The case's trees as shown and, when the run rewrites, rewritten."""
        return self.work.get()[0]

    @property
    def check(self) -> RewriteCheck | None:
        """Whether the case's rewrite keeps its suite's outcomes (asked only when needed)."""
        return self.work.get()[1]

    @property
    def view(self) -> Files:
        """The buggy tree as the agent sees it: the oracle held out."""
        return self.work.get()[2]


@dataclass(frozen=True, slots=True)
class _Env:
    """What every pair of one stage run shares."""

    run_id: str
    settings: SandboxSettings
    image: str
    image_id: str
    limits: Limits
    client: object
    executors: Mapping[str, tuple[Executor, str]]
    """Each target's executor for its suite and reproduction tests, with its image's id."""
    secrets: Mapping[str, Mapping[str, str]] = dataclasses.field(default_factory=dict)
    """Each command agent's secrets (its ``env``), by agent name: for its own container only."""
    scrubber: Scrubber = dataclasses.field(default_factory=Scrubber)
    """The run's scrubber: every command agent's secrets."""
    images: RunImages = dataclasses.field(default_factory=lambda: RunImages({}))
    """The run's environment images: targets' and agents' (docs/sandbox.md#agent-environments)."""
    gateways: Mapping[str, Gateway] = dataclasses.field(default_factory=dict)
    """Each networked agent's gateway for the run (docs/agents.md#network), by name."""


def _report_of(job: _Job, env: _Env) -> tuple[BugReport | str, AgentExecution | None]:
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
    execution = run_agent(
        job.agent,
        case_id=job.case.case_id,
        buggy=job.view,
        case=case_info,
        run_id=env.run_id,
        image=env.images.agent(job.agent.name, job.case.target) or env.image,
        timeout_s=env.settings.agent_timeout_s,
        limits=env.limits,
        client=env.client,
        secrets=env.secrets.get(job.agent.name, {}),
        scrubber=env.scrubber,
        gateway=env.gateways.get(job.agent.name),
    )
    return execution.got, execution


def _run_pair(job: _Job, env: _Env) -> PairResult:
    case_id, agent = job.case.case_id, job.agent
    trace: AgentTrace = {}
    agent_seconds: float | None = None
    try:
        got, execution = _report_of(job, env)
        trace = agent_trace(
            execution,
            run_id=env.run_id,
            case_id=case_id,
            case_hash=job.case_hash,
            agent=agent.name,
            sample=job.sample,
        )
        agent_seconds = execution.seconds if execution is not None else None
        if isinstance(got, str):
            return PairResult.failed(
                case_id,
                job.case_hash,
                agent,
                f"no usable report: {got}",
                unusable_reason=got,
                agent_seconds=agent_seconds,
                trace=trace,
                sample=job.sample,
            )
        executor, image_id = env.executors[job.case.target]
        timeout_s = env.settings.timeout_for(job.case.target)
        ids = PairIds(env.run_id, case_id, job.case_hash, agent.name, image_id, job.sample)
        test_hash, observations = reproduce(
            got,
            job.trees,
            executor=executor,
            ids=ids,
            repeats=env.settings.repeats,
            rewrite_repeats=env.settings.rewrites,
            timeout_s=timeout_s,
            seed=env.settings.seed,
        )
        outcome, reason = outcome_of(observations, timeout_s)
        if reason == FINGERPRINT_REASON and job.check is not None:
            problem = job.check.problem(executor)
            if problem is not None:  # our rewrite is at fault, not the test
                outcome, reason = ReproOutcome.ERROR, f"cannot check against a rewrite: {problem}"
    except (SandboxEngineError, SandboxRequestError) as exc:  # this pair's, not the stage's
        return PairResult.failed(
            case_id,
            job.case_hash,
            agent,
            f"sandbox engine failed: {exc.message}",
            agent_seconds=agent_seconds,
            trace=trace,
            sample=job.sample,
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
        **trace,
    )


def _jobs(
    corpus: Corpus,
    case_ids: Sequence[str],
    agents: Sequence[AgentVersion],
    case_hashes: dict[str, str],
    settings: SandboxSettings,
    contract: Mapping[str, ContractCheck] | None = None,
) -> tuple[list[_Job], list[PairResult]]:
    """One job per planned case × agent × sample; a case whose buggy tree cannot be made fails
    alone. ``contract`` (by case id, filled by the caller before any job's trees are made)
    holds each case's contract check: its rewrite level and its target's known failures."""
    cleans: dict[str, Files] = {}
    wanted = set(case_ids)
    window = _Window(ahead=max(4, 2 * pool_size(settings.workers)))
    jobs: list[_Job] = []
    failed: list[PairResult] = []
    for case in sorted(corpus.cases, key=lambda c: c.case_id):
        if case.case_id not in wanted:
            continue
        case_hash = case_hashes.get(case.case_id)
        target = corpus.target_of(case)
        if target.name not in cleans:
            cleans[target.name] = read_tree(target.path)
        clean = cleans[target.name]
        try:
            buggy = apply_patch(
                target.path, case.patch, file=corpus.relative(case.patch_path), base=clean
            )
        except Exception as exc:  # a bad case costs only itself (docs/architecture.md#bad-input)
            reason = getattr(exc, "message", str(exc))
            failed.extend(
                PairResult.failed(
                    case.case_id,
                    case_hash,
                    agent,
                    f"buggy tree could not be prepared: {reason}",
                    sample=sample,
                )
                for agent in agents
                for sample in range(settings.samples_of(agent))
            )
            continue
        make = functools.partial(_case_work, case, (buggy, clean), target, settings, contract or {})
        users = sum(settings.samples_of(agent) for agent in agents)
        work = _CaseWork(make, users, window)
        jobs.extend(
            _Job(case, case_hash, agent, work, sample=sample)
            for agent in agents
            for sample in range(settings.samples_of(agent))
        )
    return jobs, failed


@contextlib.contextmanager
def _rewriting_ahead(jobs: Sequence[_Job]) -> Iterator[None]:
    """While the block runs, a thread makes each case's trees in job order, ahead of the workers.

    Rewriting is Python work and executions mostly wait on containers, so the
    two overlap; a worker that reaches a case first makes it itself (once, under
    the case's lock). The thread keeps at most the window's ``ahead`` cases made
    and not yet done, so memory holds the cases in flight, not all of them. A
    case that fails to be made is left to its worker, whose pair reports it. On
    exit the thread stops after its current case.
    """
    stop = threading.Event()

    def ahead() -> None:
        for work in {id(job.work): job.work for job in jobs}.values():
            work.window.wait_for_room(stop)
            if stop.is_set():
                return
            with contextlib.suppress(Exception):  # the pair's worker meets it again and says so
                work.get()

    thread = threading.Thread(target=ahead, name="sandbox-rewrite", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        for window in {id(job.work.window): job.work.window for job in jobs}.values():
            window.wake()
        thread.join()


def _case_work(
    case: LoadedCase,
    shown: tuple[Files, Files],
    target: TargetConfig,
    settings: SandboxSettings,
    contract: Mapping[str, ContractCheck],
) -> _Made:
    buggy, clean = shown
    plan = rewrite_plan(contract.get(case.case_id), (buggy, clean), target)
    trees = case_trees(
        buggy,
        clean,
        seed=settings.seed,
        case_id=case.case_id,
        plan=plan if settings.rewrites > 0 else None,
    )
    view = agent_view(buggy, target.oracle, target.visible_tests)
    if trees.rewrite_seed is None:
        return trees, None, view
    check = RewriteCheck(
        trees, tuple(target.test_command), settings.suite_timeout_s, known=plan.known
    )
    return trees, check, view


def _contract(
    corpus: Corpus,
    case_ids: Sequence[str],
    case_hashes: Mapping[str, str],
    settings: SandboxSettings,
    client: Any,
    image: str,
    run_id: str,
    known: Mapping[str, ContractCheck],
    images: RunImages | None = None,
    executors: Executors | None = None,
) -> tuple[list[ContractCheck], dict[str, str], dict[str, ContractCheck]]:
    """New contract checks (each target's in its own image, on ``executors`` when given), the
    reason per case that breaks the contract, and every case's check (new or known)."""
    if not settings.check_contract:
        return [], {}, {}
    todo = [c for c in case_ids if not case_hashes.get(c) or case_hashes[c] not in known]
    new = _checks_in_images(
        corpus,
        todo,
        case_hashes,
        settings,
        client,
        image,
        images or RunImages({}),
        run_id,
        recorded=True,
        executors=executors,
    )
    by_case = {c.case_id: c for c in new}
    for case_id in case_ids:
        cached = known.get(case_hashes.get(case_id, ""))
        if case_id not in by_case and cached is not None:
            by_case[case_id] = cached
    broken = {
        case_id: f"the case breaks the corpus contract: {check.reason}"
        for case_id, check in by_case.items()
        if check.status is ContractStatus.BROKEN
    }
    return [c for c in new if c.case_hash], broken, by_case


def _checks_in_images(
    corpus: Corpus,
    case_ids: Sequence[str],
    case_hashes: Mapping[str, str],
    settings: SandboxSettings,
    client: Any,
    image: str,
    images: RunImages,
    run_id: str,
    *,
    recorded: bool,
    executors: Executors | None = None,
) -> list[ContractCheck]:
    """The contract checks of ``case_ids``, each target's suite in its own image (each check
    names ``run_id`` when ``recorded``: a run's, not ``bughunt corpus check``'s), on
    ``executors`` when given, else on executors of their own."""
    with contextlib.ExitStack() as stack:
        if executors is None:
            executors = _executors(stack, corpus, run_id, image, "", client, Limits(), images)
        return check_contract(
            corpus,
            case_ids,
            case_hashes,
            executor={name: runner for name, (runner, _id) in executors.items()},
            timeout_s=settings.suite_timeout_s,
            workers=pool_size(settings.workers),
            run_id=run_id if recorded else None,
        )


def _unbuilt_targets(corpus: Corpus, case_ids: Sequence[str], images: RunImages) -> dict[str, str]:
    """The reason per case whose target's environment could not be built."""
    wanted = set(case_ids)
    return {
        case.case_id: f"the environment of target {name} could not be built: {reason}"
        for name, reason in images.failed.items()
        for case in corpus.cases_of(name)
        if case.case_id in wanted
    }


def _stage_env(run_id: str, settings: SandboxSettings) -> tuple[Any, str, str, list[str]]:
    """Engine client, image tag and id (built if missing), and what the sweep removed."""
    client = connect()
    build = ensure_image(client) if settings.image is None else None
    image = settings.image or (build.tag if build else "")
    image_id = build.image_id if build else str(client.images.get(image).id)
    return client, image, image_id, sweep(client, run_id)


def _run_jobs(
    jobs: Sequence[_Job],
    *,
    run_id: str,
    settings: SandboxSettings,
    client: Any,
    image: str,
    image_id: str,
    progress: Callable[[int, int], None] | None = None,
    secrets: Mapping[str, Mapping[str, str]] | None = None,
    images: RunImages | None = None,
    model_keys: Mapping[str, str | None] | None = None,
    corpus: Corpus,
    executors: Executors | None = None,
) -> list[PairResult]:
    """Every job's pair, scrubbed of every agent's secrets (``secrets``, by agent name), on
    ``executors`` when given (made with ``Limits()``), else on executors of their own.

    Each agent with a network table gets one gateway for the stage, holding
    its model's key (``model_keys``, by agent name), removed when the stage ends.
    """
    workers = pool_size(settings.workers)
    limits = Limits()
    done = 0
    secrets = secrets or {}
    keys = {
        agent.network.api_key_env: key
        for agent in {job.agent.name: job.agent for job in jobs}.values()
        if agent.network is not None
        and agent.network.api_key_env
        and (key := (model_keys or {}).get(agent.name))
    }
    scrubber = Scrubber(
        [*(p for values in secrets.values() for p in values.items()), *keys.items()]
    )
    images = images or RunImages({})
    with contextlib.ExitStack() as stack:
        if executors is None:
            executors = _executors(stack, corpus, run_id, image, image_id, client, limits, images)
        gateways = _start_gateways(stack, jobs, run_id, client, image, model_keys or {})
        env = _Env(run_id, settings, image, image_id, limits, client, executors, secrets, scrubber)
        env = dataclasses.replace(env, images=images, gateways=gateways)

        def one(job: _Job) -> PairResult:
            nonlocal done
            try:
                result = scrubber.scrub_model(_run_pair(job, env))
            finally:
                job.work.done()
            done += 1
            if progress is not None:
                progress(done, len(jobs))
            return result

        return map_bounded(one, jobs, max_workers=workers)


def _executors(
    stack: contextlib.ExitStack,
    corpus: Corpus,
    run_id: str,
    image: str,
    image_id: str,
    client: Any,
    limits: Limits,
    images: RunImages,
) -> Executors:
    """One executor per target of ``corpus`` (one per distinct image), closed with ``stack``:
    a target with an environment runs in its image, the others in the base ``image``."""
    by_image: dict[str, tuple[Executor, str]] = {}
    out = {}
    for target in corpus.targets:
        built = images.target(target.name)
        tag, ident = (built.tag, built.image_id) if built is not None else (image, image_id)
        if tag not in by_image:
            runner = CellExecutor(run_id=run_id, image=tag, limits=limits, client=client)
            by_image[tag] = (stack.enter_context(runner), ident)
        out[target.name] = by_image[tag]
    return out


def _start_gateways(
    stack: contextlib.ExitStack,
    jobs: Sequence[_Job],
    run_id: str,
    client: Any,
    image: str,
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
            client=client,
            image=image,
        )
        gateways[agent.name] = stack.enter_context(gateway)
    return gateways


def run_sandbox(
    corpus: Corpus,
    *,
    case_ids: Sequence[str],
    agents: Sequence[AgentVersion],
    case_hashes: dict[str, str],
    run_id: str,
    settings: SandboxSettings,
    progress: Callable[[int, int], None] | None = None,
    known_checks: Mapping[str, ContractCheck] | None = None,
) -> SandboxResult:
    """Run every planned case × agent; builds the image if missing and sweeps crashed runs first.

    Each case's corpus contract is checked first (``known_checks``, by case
    hash, are reused); a case that breaks it, or whose patch does not apply,
    is an error for each agent with the reason, and nothing of it runs. A
    missing Docker engine raises :class:`SandboxUnavailable` (never a fallback).

    A command agent's secrets (its ``env``) are read first: a missing one
    raises :class:`~bughunt.errors.InputError` before anything runs. They
    reach that agent's container only, and every pair is scrubbed of all of
    them (docs/sandbox.md#secrets).
    """
    secrets = {a.name: agent_secrets(a, corpus=corpus) for a in agents}
    model_keys = {a.name: model_key(a, corpus=corpus) for a in agents}
    client, image, image_id, swept = _stage_env(run_id, settings)
    # Built before any container starts: a bad agent environment stops the stage here; a
    # target's costs that target's cases.
    images = ensure_corpus_images(corpus, agents, client=client, base=image, progress=announce)
    unbuilt = _unbuilt_targets(corpus, case_ids, images)
    contract: dict[str, ContractCheck] = {}  # each case's rewrite level and known failures
    jobs, failed = _jobs(corpus, case_ids, agents, case_hashes, settings, contract)
    with contextlib.ExitStack() as stack:
        # One set of cells for the contract and the pairs: a shard starts its cells once.
        executors = _executors(stack, corpus, run_id, image, image_id, client, Limits(), images)
        checks, broken, by_case = _contract(
            corpus,
            [c for c in case_ids if c not in unbuilt],
            case_hashes,
            settings,
            client,
            image,
            run_id,
            known_checks or {},
            images,
            executors,
        )
        contract.update(by_case)
        broken |= unbuilt
        failed += [
            PairResult.failed(
                job.case.case_id,
                job.case_hash,
                job.agent,
                broken[job.case.case_id],
                sample=job.sample,
            )
            for job in jobs
            if job.case.case_id in broken
        ]
        for job in jobs:
            if job.case.case_id in broken:
                job.work.done()  # never runs: its trees need not be kept
        jobs = [job for job in jobs if job.case.case_id not in broken]
        # Cases are rewritten (at their contract's level) while the pairs run.
        stack.enter_context(_rewriting_ahead(jobs))
        results = _run_jobs(
            jobs,
            run_id=run_id,
            settings=settings,
            client=client,
            image=image,
            image_id=image_id,
            progress=progress,
            secrets=secrets,
            images=images,
            model_keys=model_keys,
            corpus=corpus,
            executors=executors,
        )
    pairs = sorted([*results, *failed], key=pair_order)
    return SandboxResult(
        image=image,
        image_id=image_id,
        seed=settings.seed,
        swept=swept,
        pairs=pairs,
        checks=checks,
        contract=sorted(contract.values(), key=lambda c: c.case_id),
    )


def verify_report(
    corpus: Corpus, case_id: str, report_file: Path, *, run_id: str, settings: SandboxSettings
) -> PairResult:
    """One recorded report against one case, exactly as the stage would run it.

    ``report_file`` is read as a replay agent's report; an unusable report
    is the pair's ``error`` with its reason, like in a run, found before the
    engine is asked for anything (no image is built for a report that cannot run).
    """
    agent = AgentVersion(
        name="verify", family="unknown", mode=AgentMode.REPLAY, reports=str(report_file.parent)
    )
    data = read_input(report_file, limit=4 * AGENT_OUTPUT_CAP, what="a bug report")
    report = parse_report(data, source=str(report_file), agent=agent)
    jobs, failed = _jobs(corpus, [case_id], [agent], {}, settings)
    if failed:
        return failed[0]
    if isinstance(report, str):
        return PairResult.failed(
            case_id, jobs[0].case_hash, agent, f"no usable report: {report}", unusable_reason=report
        )
    client, image, image_id, _swept = _stage_env(run_id, settings)
    images = ensure_corpus_images(corpus, [], client=client, base=image, progress=announce)
    job = dataclasses.replace(jobs[0], report=report)
    return _run_jobs(
        [job],
        run_id=run_id,
        settings=settings,
        client=client,
        image=image,
        image_id=image_id,
        images=images,
        corpus=corpus,
    )[0]


def verify_agent(
    corpus: Corpus, case_id: str, agent: AgentVersion, *, run_id: str, settings: SandboxSettings
) -> PairResult:
    """One command agent on one case, exactly as a run would: its environment image, secrets,
    gateway (with its key), then its report's reproduction test; the pair keeps its transcript.

    A missing secret or key raises :class:`~bughunt.errors.InputError` before anything runs.
    """
    if agent.mode is not AgentMode.COMMAND:
        raise InputError(
            f"agent {agent.name} is a replay agent: give its report with --report",
            field="agent",
        )
    secrets = {agent.name: agent_secrets(agent, corpus=corpus)}
    keys = {agent.name: model_key(agent, corpus=corpus)}
    jobs, failed = _jobs(corpus, [case_id], [agent], {}, settings)
    if failed:
        return failed[0]
    client, image, image_id, _swept = _stage_env(run_id, settings)
    images = ensure_corpus_images(corpus, [agent], client=client, base=image, progress=announce)
    return _run_jobs(
        jobs,
        run_id=run_id,
        settings=settings,
        client=client,
        image=image,
        image_id=image_id,
        secrets=secrets,
        images=images,
        model_keys=keys,
        corpus=corpus,
    )[0]


def check_corpus(
    corpus: Corpus, case_hashes: Mapping[str, str], *, run_id: str, settings: SandboxSettings
) -> list[ContractCheck]:
    """The corpus contract of every loaded case, checked now (``bughunt corpus check``), each
    target's in its own image; a case whose target's environment cannot be built is broken."""
    client, image, _image_id, _swept = _stage_env(run_id, settings)
    images = ensure_corpus_images(corpus, [], client=client, base=image, progress=announce)
    unbuilt = _unbuilt_targets(corpus, [c.case_id for c in corpus.cases], images)
    todo = [c.case_id for c in corpus.cases if c.case_id not in unbuilt]
    checks = _checks_in_images(
        corpus, todo, case_hashes, settings, client, image, images, run_id, recorded=False
    )
    checks += [
        ContractCheck(
            case_hash=case_hashes.get(case_id, ""),
            case_id=case_id,
            corpus=corpus.name,
            status=ContractStatus.BROKEN,
            reason=reason,
        )
        for case_id, reason in unbuilt.items()
    ]
    return sorted(checks, key=lambda c: c.case_id)
