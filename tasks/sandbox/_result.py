"""What the sandbox stage finds: each pair's report, executions and outcome, and the run's.

A pair is one agent version (one of its samples) on one case. Its agent's
execution, when it ran in the sandbox, is kept as an ``agent_runs`` row, a
transcript and the calls its gateway saw (:func:`agent_trace`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict

from bughunt.models import (
    AgentRun,
    AgentVersion,
    BugReport,
    ContractCheck,
    Observation,
    ReproOutcome,
    Symptom,
)
from tasks.sandbox._agents import AgentExecution
from tasks.sandbox.evidence import Localisation


@dataclass(frozen=True, slots=True)
class PairKey:
    """Which pair: the case (with its content hash), the agent version and its sample."""

    case_id: str
    case_hash: str | None
    agent: AgentVersion
    sample: int = 0
    """Which of the agent's samples on the case (``agent_samples``; 0-based)."""


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
    localisation: Localisation | None = None
    """How well the report's root cause names the bug's file and function (``None``: no
    report, or a bug the matcher cannot place)."""

    @classmethod
    def failed(
        cls,
        key: PairKey,
        reason: str,
        *,
        unusable_reason: str | None = None,
        agent_seconds: float | None = None,
        trace: AgentTrace | None = None,
    ) -> PairResult:
        """A pair that ended in ``error`` before any execution, with its reason."""
        return cls(
            case_id=key.case_id,
            case_hash=key.case_hash,
            agent_version=key.agent.name,
            family=key.agent.family,
            report=None,
            unusable_reason=unusable_reason,
            outcome=ReproOutcome.ERROR,
            reason=reason,
            test_hash=None,
            agent_seconds=agent_seconds,
            observations=[],
            sample=key.sample,
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


class _CallUsage(TypedDict):
    """An agent run's figures from its gateway's request log (the ``agent_runs`` row's fields)."""

    requests: int
    refused: int
    tunnels: int
    tokens_in: int | None
    tokens_out: int | None
    cost: float | None
    model: str | None


def _forwarded(call: dict[str, Any], kind: str) -> bool:
    """A request of ``kind`` the gateway let through; an entry without a kind is a model call.

    Tunnels (CONNECT, ``network.allow``) are counted apart: they carry no model usage.
    """
    return call.get("kind", "model") == kind and call.get("refused") is None


def _reported_sum(calls: Sequence[dict[str, Any]], key: str) -> Any:
    """``key`` summed over the calls that reported it; None when none did (absence is never zero)."""
    values = [c[key] for c in calls if c.get(key) is not None]
    return sum(values) if values else None


def _call_usage(calls: Sequence[dict[str, Any]]) -> _CallUsage:
    """Requests, refusals, tunnels, tokens, cost and last model of a gateway's request log.

    Usage figures are sums over the answers that reported them; None when
    none did, and no cost without any model call.
    """
    answered = [c for c in calls if _forwarded(c, "model")]
    models = [c["model"] for c in answered if c.get("model")]
    return {
        "requests": len(answered),
        # The gateway folds a long run of refusals into one entry with its ``count``.
        "refused": sum(int(c.get("count") or 1) for c in calls if c.get("refused") is not None),
        "tunnels": sum(1 for c in calls if _forwarded(c, "tunnel")),
        "tokens_in": _reported_sum(answered, "tokens_in"),
        "tokens_out": _reported_sum(answered, "tokens_out"),
        "cost": sum(float(c.get("cost") or 0.0) for c in answered) if answered else None,
        "model": models[-1] if models else None,
    }


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

    The row's usage figures are sums over the answers that reported them;
    None when none did (absence is never zero), and no cost without any
    model call (:func:`_call_usage`).
    """
    if execution is None:
        return {}
    got = execution.got
    row = AgentRun(
        run_id=run_id,
        case_id=case_id,
        case_hash=case_hash,
        agent_version=agent,
        seconds=execution.seconds,
        ended="report" if not isinstance(got, str) else got[:2_000],
        sample=sample,
        **_call_usage(execution.calls),
    )
    return {"agent_run": row, "transcript": execution.transcript, "calls": execution.calls}
