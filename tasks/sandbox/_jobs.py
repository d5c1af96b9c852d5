"""The stage's jobs: one per planned case × agent version × sample, on the case's shared work.

A case's buggy tree is made when its jobs are; its rewritten trees, rewrite
check and the agent's view are made later, once, for all its jobs
(:class:`~tasks.sandbox._lookahead.CaseWork`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bughunt.models import AgentVersion, BugReport, ContractCheck
from corpus import Corpus, LoadedCase, TargetConfig, agent_view
from tasks.sandbox._lookahead import CaseWork, PreparedCase, Window
from tasks.sandbox._result import PairKey, PairResult
from tasks.sandbox._settings import SandboxSettings
from tasks.sandbox.engine import pool_size
from tasks.sandbox.reproduction import CaseTrees, RewriteCheck, case_trees, rewrite_plan
from tasks.sandbox.trees import Files, apply_patch, read_tree


@dataclass(frozen=True, slots=True)
class Job:
    """One pair to run: an agent version (one of its samples) on a case."""

    case: LoadedCase
    case_hash: str | None
    agent: AgentVersion
    work: CaseWork
    report: BugReport | str | None = None
    """A report given directly (``verify_report``), instead of the agent's."""
    sample: int = 0
    """Which of the agent's samples on the case (``agent_samples``)."""

    @property
    def key(self) -> PairKey:
        """Which pair the job is."""
        return PairKey(self.case.case_id, self.case_hash, self.agent, self.sample)

    @property
    def trees(self) -> CaseTrees:
        """The case's trees as shown and, when the run rewrites, rewritten."""
        return self.work.get().trees

    @property
    def check(self) -> RewriteCheck | None:
        """Whether the case's rewrite keeps its suite's outcomes (asked only when needed)."""
        return self.work.get().check

    @property
    def view(self) -> Files:
        """The buggy tree as the agent sees it: the oracle held out."""
        return self.work.get().view


def make_jobs(
    corpus: Corpus,
    case_ids: Sequence[str],
    agents: Sequence[AgentVersion],
    case_hashes: dict[str, str],
    settings: SandboxSettings,
    contract: Mapping[str, ContractCheck] | None = None,
) -> tuple[list[Job], list[PairResult]]:
    """One job per planned case × agent × sample; a case whose buggy tree cannot be made fails
    alone. ``contract`` (by case id, filled by the caller before any job's trees are made)
    holds each case's contract check: its rewrite level and its target's known failures."""
    cleans: dict[str, Files] = {}
    wanted = set(case_ids)
    window = Window(ahead=max(4, 2 * pool_size(settings.workers)))
    jobs: list[Job] = []
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
                    PairKey(case.case_id, case_hash, agent, sample),
                    f"buggy tree could not be prepared: {reason}",
                )
                for agent in agents
                for sample in range(settings.samples_of(agent))
            )
            continue
        make = functools.partial(_prepare, case, (buggy, clean), target, settings, contract or {})
        users = sum(settings.samples_of(agent) for agent in agents)
        work = CaseWork(make, users, window)
        jobs.extend(
            Job(case, case_hash, agent, work, sample=sample)
            for agent in agents
            for sample in range(settings.samples_of(agent))
        )
    return jobs, failed


def _prepare(
    case: LoadedCase,
    shown: tuple[Files, Files],
    target: TargetConfig,
    settings: SandboxSettings,
    contract: Mapping[str, ContractCheck],
) -> PreparedCase:
    """The case's trees (rewritten at its contract's level when the run rewrites), the
    rewrite's check, and the agent's view of the buggy tree."""
    buggy, clean = shown
    plan = rewrite_plan(contract.get(case.case_id), (buggy, clean), target)
    trees = case_trees(
        buggy,
        clean,
        seed=settings.seed,
        case_id=case.case_id,
        plan=plan if settings.rewrite_repeats > 0 else None,
    )
    view = agent_view(buggy, target.oracle, target.visible_tests)
    if trees.rewrite_seed is None:
        return PreparedCase(trees, None, view)
    check = RewriteCheck(
        trees, tuple(target.test_command), settings.suite_timeout_s, known=plan.known
    )
    return PreparedCase(trees, check, view)
