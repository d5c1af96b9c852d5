"""Stage 3, sandbox run: every planned case × agent version, in hardened containers.

For each pair (case, agent version): obtain the report (run the agent in the
sandbox, or take the recorded one), validate it, then run its reproduction
test against the buggy tree and the clean tree ``repeats`` times each, every
repeat in a fresh copy of the workspace, all in one container per pair.
Every execution is an :class:`~bughunt.models.Observation`; the pair gets a
:class:`~bughunt.models.ReproOutcome` with its reason.

Nothing is written here: the flow writes the rows.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from bughunt.hashing import sha256_bytes
from bughunt.models import (
    AgentMode,
    AgentVersion,
    BugReport,
    Observation,
    ReproOutcome,
    Status,
    Tree,
    utcnow,
)
from corpus import Corpus, LoadedCase
from tasks.sandbox._agents import recorded_report, run_agent
from tasks.sandbox._container import Limits, RunResult
from tasks.sandbox._engine import connect
from tasks.sandbox._errors import SandboxEngineError
from tasks.sandbox._image import ensure_image
from tasks.sandbox._pool import map_bounded
from tasks.sandbox._session import SandboxSession
from tasks.sandbox._sweep import sweep
from tasks.sandbox._trees import Files, apply_patch, prefixed, read_tree

TEST_FILE = "test_bughunt_repro.py"
"""Name the reproduction test is written under, at the root of each tree."""

_PYTEST = f"exec python3 -m pytest -q -p no:cacheprovider {TEST_FILE}"
_PYTEST_EXIT = {
    2: "pytest was interrupted (often a collection error: the test does not import)",
    3: "pytest internal error",
    4: "pytest usage error",
    5: "no test was collected from the reproduction file",
}


class SandboxSettings(BaseModel):
    """How the sandbox stage runs (the run's parameters)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    repeats: int = 3
    """Executions per tree (buggy and clean) of each reproduction test."""
    test_timeout_s: float = 10.0
    """Wall-clock deadline of one test execution."""
    agent_timeout_s: float = 180.0
    """Wall-clock deadline of one agent run."""
    workers: int | None = None
    """Pairs run at once (default: the CPU count)."""
    image: str | None = None
    """Sandbox image (default: the locally built bughunt image)."""


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
    observations: list[Observation]
    """Every execution of the reproduction test."""

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
        )


class SandboxResult(BaseModel):
    """The sandbox stage's output for one run."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    image: str
    """Image tag used."""
    image_id: str
    """Image id (part of every flake key)."""
    swept: list[str]
    """Containers of crashed runs removed at the start."""
    pairs: list[PairResult]
    """One per planned case × agent version, sorted."""

    def observations(self) -> list[Observation]:
        """Every execution of the run."""
        return [o for p in self.pairs for o in p.observations]


def execution_status(result: RunResult, timeout_s: float) -> tuple[Status, str | None]:
    """pytest's exit → pass (0) / fail (1); anything else is error or timeout, with the reason."""
    if result.timed_out:
        return Status.TIMEOUT, f"killed at its {timeout_s:.0f} s deadline"
    if result.oom_killed:
        return Status.ERROR, "killed for exceeding the memory limit"
    if result.error:
        return Status.ERROR, result.error
    if result.exit_code == 0:
        return Status.PASS, None
    if result.exit_code == 1:
        return Status.FAIL, None
    return Status.ERROR, _PYTEST_EXIT.get(result.exit_code or -1, f"exit code {result.exit_code}")


def _count(statuses: Sequence[Status]) -> str:
    counts: dict[str, int] = {}
    for s in statuses:
        counts[s.value] = counts.get(s.value, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))


def decide_outcome(
    buggy: Sequence[Status], clean: Sequence[Status]
) -> tuple[ReproOutcome, str | None]:
    """The pair's outcome from its executions (order: flaky, error, reproduced, not_reproduced).

    Flaky: a tree both passed and failed (identical content, both outcomes).
    Error: any execution did not decide (error, timeout). Reproduced: every
    buggy execution failed and every clean one passed. Otherwise not reproduced.
    """
    for name, statuses in (("buggy", buggy), ("clean", clean)):
        if Status.PASS in statuses and Status.FAIL in statuses:
            return ReproOutcome.FLAKY, f"{name} tree: {_count(statuses)}"
    undecided = [s for s in (*buggy, *clean) if s not in (Status.PASS, Status.FAIL)]
    if undecided or not buggy or not clean:
        return ReproOutcome.ERROR, f"buggy tree: {_count(buggy)}; clean tree: {_count(clean)}"
    if all(s is Status.FAIL for s in buggy) and all(s is Status.PASS for s in clean):
        return ReproOutcome.REPRODUCED, None
    if all(s is Status.PASS for s in buggy):
        return ReproOutcome.NOT_REPRODUCED, "the test passes on the buggy tree"
    return ReproOutcome.NOT_REPRODUCED, "the test fails on the clean tree too"


@dataclass(frozen=True, slots=True)
class _Job:
    case: LoadedCase
    case_hash: str | None
    agent: AgentVersion
    buggy: Files
    clean: Files


def reproduce(
    report: BugReport,
    *,
    buggy: Files,
    clean: Files,
    repeats: int,
    timeout_s: float,
    run_id: str,
    image: str,
    image_id: str,
    limits: Limits,
    client: object,
    case_id: str,
    case_hash: str | None,
    agent: str,
) -> tuple[str, list[Observation]]:
    """Run ``report``'s test on the buggy and the clean tree ``repeats`` times each, in one
    container, each repeat in a fresh copy; the test's hash and one observation per execution."""
    test = report.repro_test.encode("utf-8")
    test_hash = sha256_bytes(test)
    workspace = {**prefixed(buggy, "buggy"), **prefixed(clean, "clean")}
    workspace[f"buggy/{TEST_FILE}"] = test
    workspace[f"clean/{TEST_FILE}"] = test
    observations: list[Observation] = []
    with SandboxSession(
        run_id=run_id, workspace=workspace, image=image, limits=limits, client=client
    ) as session:
        for tree in (Tree.BUGGY, Tree.CLEAN):
            for repeat in range(repeats):
                result = session.exec(
                    ["sh", "-c", f"cd {tree.value} && {_PYTEST}"], timeout_s=timeout_s
                )
                observations.append(
                    _observation(
                        case_id,
                        case_hash,
                        agent,
                        run_id,
                        tree,
                        repeat,
                        result,
                        test_hash,
                        image_id,
                        timeout_s,
                    )
                )
    return test_hash, observations


def _observation(
    case_id: str,
    case_hash: str | None,
    agent: str,
    run_id: str,
    tree: Tree,
    repeat: int,
    result: RunResult,
    test_hash: str,
    image_id: str,
    timeout_s: float,
) -> Observation:
    status, why = execution_status(result, timeout_s)
    annotations: dict[str, object] = {"output_truncated_bytes": result.output_truncated_bytes}
    if why:
        annotations["reason"] = why
    return Observation(
        observation_id=uuid.uuid4().hex,
        record_id=f"{run_id}/{case_id}/{agent}/{tree.value}/{repeat}",
        case_id=case_id,
        run_id=run_id,
        agent_version=agent,
        kind=f"repro:{tree.value}",
        status=status,
        case_hash=case_hash,
        annotations=annotations,
        source="sandbox",
        batch_id=run_id,
        ingested_at=utcnow(),
        tree=tree,
        repeat=repeat,
        exit_code=result.exit_code,
        duration_s=round(result.duration_s, 6),
        output=result.output,
        test_hash=test_hash,
        image_id=image_id,
    )


def _run_pair(
    job: _Job,
    *,
    run_id: str,
    settings: SandboxSettings,
    image: str,
    image_id: str,
    limits: Limits,
    client: object,
) -> PairResult:
    base = {
        "case_id": job.case.case_id,
        "case_hash": job.case_hash,
        "agent_version": job.agent.name,
        "family": job.agent.family,
    }
    agent_seconds: float | None = None
    try:
        if job.agent.mode is AgentMode.REPLAY:
            got: BugReport | str = recorded_report(job.agent, job.case.case_id)
        else:
            case_info: dict[str, object] = {
                "id": job.case.case_id,
                "title": job.case.case.title,
                "hints": job.case.case.hints,
            }
            got, agent_seconds = run_agent(
                job.agent,
                case_id=job.case.case_id,
                buggy=job.buggy,
                case=case_info,
                run_id=run_id,
                image=image,
                timeout_s=settings.agent_timeout_s,
                limits=limits,
                client=client,
            )
        if isinstance(got, str):
            return PairResult.failed(
                job.case.case_id,
                job.case_hash,
                job.agent,
                f"no usable report: {got}",
                unusable_reason=got,
                agent_seconds=agent_seconds,
            )
        report = got
        test_hash, observations = reproduce(
            report,
            buggy=job.buggy,
            clean=job.clean,
            repeats=settings.repeats,
            timeout_s=settings.test_timeout_s,
            run_id=run_id,
            image=image,
            image_id=image_id,
            limits=limits,
            client=client,
            case_id=job.case.case_id,
            case_hash=job.case_hash,
            agent=job.agent.name,
        )
    except SandboxEngineError as exc:
        return PairResult.failed(
            job.case.case_id,
            job.case_hash,
            job.agent,
            f"sandbox engine failed: {exc.message}",
            agent_seconds=agent_seconds,
        )
    outcome, reason = decide_outcome(
        [o.status for o in observations if o.tree is Tree.BUGGY],
        [o.status for o in observations if o.tree is Tree.CLEAN],
    )
    return PairResult(
        **base,
        report=report,
        unusable_reason=None,
        outcome=outcome,
        reason=reason,
        test_hash=test_hash,
        agent_seconds=agent_seconds,
        observations=observations,
    )


def run_sandbox(
    corpus: Corpus,
    *,
    case_ids: Sequence[str],
    agents: Sequence[AgentVersion],
    case_hashes: dict[str, str],
    run_id: str,
    settings: SandboxSettings,
    progress: Callable[[int, int], None] | None = None,
) -> SandboxResult:
    """Run every planned case × agent; builds the image if missing and sweeps crashed runs first.

    A case whose patch does not apply is an error for each agent (reason kept);
    a missing Docker engine raises :class:`SandboxUnavailable` (never a fallback).
    """
    client = connect()
    build = ensure_image(client) if settings.image is None else None
    image = settings.image or (build.tag if build else "")
    image_id = build.image_id if build else str(client.images.get(image).id)
    swept = sweep(client, run_id)
    clean = read_tree(corpus.config.target)
    wanted = set(case_ids)
    jobs: list[_Job] = []
    failed: list[PairResult] = []
    for case in sorted(corpus.cases, key=lambda c: c.case_id):
        if case.case_id not in wanted:
            continue
        try:
            buggy = apply_patch(
                corpus.config.target, case.patch, file=corpus.relative(case.patch_path)
            )
        except Exception as exc:  # a bad case costs only itself (DESIGN §8)
            reason = getattr(exc, "message", str(exc))
            for agent in agents:
                failed.append(
                    PairResult.failed(
                        case.case_id,
                        case_hashes.get(case.case_id),
                        agent,
                        f"buggy tree could not be prepared: {reason}",
                    )
                )
            continue
        for agent in agents:
            jobs.append(_Job(case, case_hashes.get(case.case_id), agent, buggy, clean))

    limits = Limits()
    done = 0

    def one(job: _Job) -> PairResult:
        nonlocal done
        result = _run_pair(
            job,
            run_id=run_id,
            settings=settings,
            image=image,
            image_id=image_id,
            limits=limits,
            client=client,
        )
        done += 1
        if progress is not None:
            progress(done, len(jobs))
        return result

    results = map_bounded(one, jobs, max_workers=settings.workers)
    pairs = sorted([*results, *failed], key=lambda p: (p.case_id, p.agent_version))
    return SandboxResult(image=image, image_id=image_id, swept=swept, pairs=pairs)
