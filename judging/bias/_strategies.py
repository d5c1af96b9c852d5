"""Strategies as plans of calls and one rule that combines the votes (docs/judge-bias.md#strategies).

A pair has two sides, ``a`` and ``b``. A strategy given a *lead* side (the side
a single-order strategy shows first) makes one or more **plans**: the calls to
make, each a (jury member, side shown first, sample index). ``random_order``
has two plans of weight ½ (the seeded coin keeps or swaps the order); every
other strategy has one.

Votes are coded ``0`` (side a wins), ``1`` (side b wins), ``2`` (tie), and
:func:`combine` turns an array of votes into verdicts, vectorised. The same
rule serves exact enumeration, Monte Carlo and real judge calls, so the three
cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray

from bughunt.models import Strategy

VOTE_A = 0
VOTE_B = 1
VOTE_TIE = 2

Votes = NDArray[np.int8]

LENGTH_CONTROLLED = frozenset({Strategy.SWAP_LC, Strategy.JURY_LC})
"""Strategies that remove (simulation) or regress out (real judges) the length effect."""


class Side(StrEnum):
    """One side of a pair."""

    A = "a"
    B = "b"

    @property
    def other(self) -> Side:
        """The opposite side."""
        return Side.B if self is Side.A else Side.A

    @property
    def vote(self) -> int:
        """This side's vote code."""
        return VOTE_A if self is Side.A else VOTE_B


@dataclass(frozen=True, slots=True)
class CallKey:
    """One call of a plan: which jury member, which side is shown first, which sample."""

    member: int
    first: Side
    sample: int = 0


@dataclass(frozen=True, slots=True)
class Plan:
    """The calls one verdict needs, and the probability this plan is the one made."""

    weight: float
    calls: tuple[CallKey, ...]


@dataclass(frozen=True, slots=True)
class StrategySpec:
    """A strategy with its sizes: ``k`` votes for ``majority``, ``members`` for a jury."""

    strategy: Strategy
    k: int = 5
    members: int = 3

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"majority needs k >= 1 votes, got {self.k}")
        if self.members < 1:
            raise ValueError(f"a jury needs at least one member, got {self.members}")

    @property
    def length_control(self) -> bool:
        """Whether the strategy controls for length."""
        return self.strategy in LENGTH_CONTROLLED

    @property
    def is_jury(self) -> bool:
        """Whether the strategy asks every jury member."""
        return self.strategy in (Strategy.JURY, Strategy.JURY_LC)

    @property
    def calls_per_pair(self) -> int:
        """Judge calls one verdict costs."""
        return len(plans(self, Side.A)[0].calls)


def plans(spec: StrategySpec, lead: Side) -> tuple[Plan, ...]:
    """The plans of ``spec`` when ``lead`` is the side a single-order strategy shows first.

    For ``random_order`` plan 0 keeps the order (lead first) and plan 1 swaps it.
    """
    other = lead.other
    match spec.strategy:
        case Strategy.SINGLE:
            return (Plan(1.0, (CallKey(0, lead),)),)
        case Strategy.RANDOM_ORDER:
            return (Plan(0.5, (CallKey(0, lead),)), Plan(0.5, (CallKey(0, other),)))
        case Strategy.MAJORITY:
            return (Plan(1.0, tuple(CallKey(0, lead, i) for i in range(spec.k))),)
        case Strategy.SWAP | Strategy.SWAP_LC:
            return (Plan(1.0, (CallKey(0, lead), CallKey(0, other))),)
        case Strategy.JURY | Strategy.JURY_LC:
            calls = tuple(CallKey(m, side) for m in range(spec.members) for side in (lead, other))
            return (Plan(1.0, calls),)
    raise ValueError(f"unknown strategy {spec.strategy!r}")  # pragma: no cover


def plurality(votes: Votes) -> Votes:
    """Plurality over the last axis; a tied top (or a top of ties) is a tie."""
    a = (votes == VOTE_A).sum(axis=-1)
    b = (votes == VOTE_B).sum(axis=-1)
    t = (votes == VOTE_TIE).sum(axis=-1)
    out = np.full(a.shape, VOTE_TIE, dtype=np.int8)
    out[(a > b) & (a > t)] = VOTE_A
    out[(b > a) & (b > t)] = VOTE_B
    return out


def agree(x: Votes, y: Votes) -> Votes:
    """Swap rule: a side wins only if it wins both votes; anything else is a tie."""
    return np.where(x == y, x, VOTE_TIE).astype(np.int8)


def combine(spec: StrategySpec, votes: Votes) -> Votes:
    """Verdicts from votes of shape ``(..., calls)`` in plan order; returns shape ``(...)``.

    Raises ``ValueError`` when the last axis is not the plan's number of calls.
    """
    if votes.shape[-1] != spec.calls_per_pair:
        raise ValueError(
            f"{spec.strategy} needs {spec.calls_per_pair} votes, got {votes.shape[-1]}"
        )
    match spec.strategy:
        case Strategy.SINGLE | Strategy.RANDOM_ORDER:
            return votes[..., 0].astype(np.int8)
        case Strategy.MAJORITY:
            return plurality(votes)
        case Strategy.SWAP | Strategy.SWAP_LC:
            return agree(votes[..., 0], votes[..., 1])
        case _:
            return plurality(agree(votes[..., 0::2], votes[..., 1::2]))
