"""Real report pairs as the score stage sees them: the strategy config, the calls, the plan.

Side a of every pair is the **candidate**, side b the **baseline**. A
strategy's plan (:func:`plan_pair`) says exactly which calls one verdict
needs — judge, order, sample index — so the call contract makes those and
the fold uses those, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bughunt.models import BugCategory, CallStatus, JudgeCall, Order, Strategy, Winner
from judging.bias import Side, StrategySpec, hashed_uniform, plans


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class JudgeRef(_Frozen):
    """A judge as a strategy names it."""

    name: str = Field(min_length=1)
    """Judge name (the key of its calls)."""
    family: str = Field(min_length=1)
    """Its model family."""


class StrategyConfig(_Frozen):
    """How real pairs are judged (docs/judge-bias.md#strategies); the default is ``swap``."""

    strategy: Strategy = Strategy.SWAP
    """Strategy of every pair."""
    judges: tuple[JudgeRef, ...] = Field(min_length=1)
    """The judge (first one) or, for ``jury``/``jury_lc``, every member."""
    k: int = Field(default=5, ge=1)
    """Votes of ``majority``."""
    seed: int = 0
    """Seed of the ``random_order`` coin (per case)."""
    single_order: Order = Order.CANDIDATE_FIRST
    """Order of ``single`` and ``majority`` (a position bias then favours that side everywhere)."""

    @model_validator(mode="after")
    def _distinct_jury(self) -> Self:
        if self.spec().is_jury and len({j.family for j in self.judges}) != len(self.judges):
            raise ValueError("a jury needs judges of different families")
        return self

    def spec(self) -> StrategySpec:
        """The strategy's plan shape."""
        jury = self.strategy in (Strategy.JURY, Strategy.JURY_LC)
        return StrategySpec(self.strategy, k=self.k, members=len(self.judges) if jury else 1)


class PairCall(_Frozen):
    """One judge call on one ordered pair, as the fold needs it (a ``JudgeCall`` fits)."""

    judge: str
    """Judge name."""
    family: str
    """Judge's model family."""
    order: Order
    """Which report was first."""
    sample_index: int = Field(default=0, ge=0)
    """Index among repeated samples of the same ordered pair."""
    status: CallStatus
    """Terminal status; only ``judged`` carries a winner."""
    winner: Winner | None = None
    """Winner in call terms (``judged`` only)."""
    failure_reason: str | None = None
    """Why the call did not end ``judged``."""
    attempts: int = Field(default=1, ge=0)
    """Requests sent for this call (0 when cached or aborted)."""
    cached: bool = False
    """Answered from the cache."""
    rationale: str | None = None
    """The judge's rationale (``judged`` only; untrusted)."""

    @model_validator(mode="after")
    def _winner_iff_judged(self) -> Self:
        if (self.status is CallStatus.JUDGED) != (self.winner is not None):
            raise ValueError("a call carries a winner exactly when its status is judged")
        return self

    @classmethod
    def from_judge_call(cls, call: JudgeCall) -> PairCall:
        """The fold's view of a ledger ``JudgeCall`` row."""
        return cls(
            judge=call.judge,
            family=call.family,
            order=call.order,
            sample_index=call.sample_index,
            status=call.status,
            winner=call.winner,
            failure_reason=call.failure_reason,
            attempts=call.attempts,
            cached=call.cached,
            rationale=call.rationale,
        )


class PairInput(_Frozen):
    """One candidate-vs-baseline pair of one case, with every call made on it."""

    case_id: str
    """Case of the pair."""
    candidate: str
    """Candidate agent version."""
    baseline: str
    """Baseline agent version."""
    candidate_words: int = Field(ge=1)
    """Words of the candidate's report as shown to the judge."""
    baseline_words: int = Field(ge=1)
    """Words of the baseline's report as shown to the judge."""
    category: BugCategory | None = None
    """Bug category of the case."""
    calls: tuple[PairCall, ...] = ()
    """Every call made on this pair (any order, duplicates allowed)."""
    sample: int = Field(default=0, ge=0)
    """Which of the agents' samples on the case the pair compares (``--agent-samples``):
    sample i of the candidate against sample i of the baseline. Samples of one case are
    one unit in every aggregate (docs/agents.md#samples)."""
    unscored_reason: str | None = None
    """Set when the pair cannot be judged at all (e.g. a report is missing or malformed):
    the pair is ``unscored`` with this reason and no call is planned or counted."""


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """One call a verdict needs."""

    judge: str
    order: Order
    sample_index: int


def coin_keeps(seed: int, case_id: str) -> bool:
    """The ``random_order`` coin of one case: keep the configured order, or swap it."""
    return hashed_uniform("random_order", seed, case_id) < 0.5


def order_of(first: Side) -> Order:
    """The ``Order`` that shows ``first`` first (a = candidate)."""
    return Order.CANDIDATE_FIRST if first is Side.A else Order.BASELINE_FIRST


def plan_pair(config: StrategyConfig, case_id: str, sample: int = 0) -> tuple[PlannedCall, ...]:
    """The calls a verdict on ``case_id`` (its agents' ``sample``) needs under ``config``, in
    the strategy's vote order. Each sample tosses its own ``random_order`` coin."""
    spec = config.spec()
    lead = Side.A if config.single_order is Order.CANDIDATE_FIRST else Side.B
    options = plans(spec, lead)
    coin = case_id if sample == 0 else f"{case_id}#sample{sample}"
    plan = options[0] if len(options) == 1 or coin_keeps(config.seed, coin) else options[1]
    return tuple(
        PlannedCall(config.judges[key.member].name, order_of(key.first), key.sample)
        for key in plan.calls
    )
