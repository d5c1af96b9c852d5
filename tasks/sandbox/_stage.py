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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from bughunt.models import AgentVersion, ContractCheck
from corpus import Corpus, agent_secrets, model_key
from tasks.sandbox._contract_checks import contract_checks, unbuilt_targets
from tasks.sandbox._jobs import make_jobs
from tasks.sandbox._lookahead import rewriting_ahead
from tasks.sandbox._pairs import AgentAccess, run_jobs
from tasks.sandbox._result import PairResult, SandboxResult, pair_order
from tasks.sandbox._settings import SandboxSettings
from tasks.sandbox._stage_engine import stage_engine


@dataclass(frozen=True, slots=True)
class SandboxCases:
    """The cases a sandbox stage runs, with what is known of them already."""

    ids: Sequence[str]
    """The planned cases' ids."""
    hashes: dict[str, str]
    """Case id → case hash (from hash-corpus)."""
    known_checks: Mapping[str, ContractCheck] = field(default_factory=dict)
    """Contract checks of earlier runs, by case hash: reused, not run again."""


def run_sandbox(
    corpus: Corpus,
    *,
    cases: SandboxCases,
    agents: Sequence[AgentVersion],
    run_id: str,
    settings: SandboxSettings,
    progress: Callable[[int, int], None] | None = None,
) -> SandboxResult:
    """Run every planned case × agent; builds the image if missing and sweeps crashed runs first.

    Each case's corpus contract is checked first (``cases.known_checks``, by
    case hash, are reused); a case that breaks it, or whose patch does not apply,
    is an error for each agent with the reason, and nothing of it runs. A
    missing Docker engine raises :class:`SandboxUnavailable` (never a fallback).

    A command agent's secrets (its ``env``) are read first: a missing one
    raises :class:`~bughunt.errors.InputError` before anything runs. They
    reach that agent's container only, and every pair is scrubbed of all of
    them (docs/sandbox.md#secrets).
    """
    access = AgentAccess(
        secrets={a.name: agent_secrets(a, corpus=corpus) for a in agents},
        model_keys={a.name: model_key(a, corpus=corpus) for a in agents},
    )
    # One engine for the contract and the pairs: a shard starts its cells once.
    case_ids, case_hashes = cases.ids, cases.hashes
    with stage_engine(corpus, agents, run_id=run_id, settings=settings) as engine:
        unbuilt = unbuilt_targets(corpus, case_ids, engine.images)
        contract: dict[str, ContractCheck] = {}  # each case's rewrite level and known failures
        jobs, failed = make_jobs(corpus, case_ids, agents, case_hashes, settings, contract)
        checks, broken, by_case = contract_checks(
            corpus,
            [c for c in case_ids if c not in unbuilt],
            case_hashes,
            engine=engine,
            run_id=run_id,
            settings=settings,
            known=cases.known_checks,
        )
        contract.update(by_case)
        broken |= unbuilt
        failed += [
            PairResult.failed(job.key, broken[job.case.case_id])
            for job in jobs
            if job.case.case_id in broken
        ]
        for job in jobs:
            if job.case.case_id in broken:
                job.work.done()  # never runs: its trees need not be kept
        jobs = [job for job in jobs if job.case.case_id not in broken]
        # Cases are rewritten (at their contract's level) while the pairs run.
        with rewriting_ahead(jobs):
            results = run_jobs(
                jobs, engine, run_id=run_id, settings=settings, access=access, progress=progress
            )
    pairs = sorted([*results, *failed], key=pair_order)
    return SandboxResult(
        image=engine.image,
        image_id=engine.image_id,
        seed=settings.seed,
        swept=list(engine.swept),
        pairs=pairs,
        checks=checks,
        contract=sorted(contract.values(), key=lambda c: c.case_id),
    )
