"""Exact verdict probabilities of every strategy on the simulated judge.

Every vote combination of a plan is enumerated (3ⁿ for n calls: 729 for a
three-member jury, 59,049 for the flip rate of a 5-vote majority) and the
verdict rule of :mod:`._strategies` is applied to each, so the figures are
exact up to floating-point rounding.

Two runs of a strategy on one pair that differ only in which side leads share
every call they have in common (a call is keyed by member, order and sample,
as in the judge cache and the sim judge's seeded draws): that is what makes
``swap`` immune to flips and ``single`` not.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from judging.bias._sim_model import Features, SimParams, distribution
from judging.bias._strategies import (
    VOTE_A,
    VOTE_B,
    VOTE_TIE,
    CallKey,
    Plan,
    Side,
    StrategySpec,
    combine,
    plans,
)

DEFAULT_FAMILIES: tuple[str, ...] = ("sim-a", "sim-b", "sim-c")
"""Families of the default jury; member 0 is also the single judge."""


@dataclass(frozen=True, slots=True)
class SimPanel:
    """The simulated judges: shared parameters, one family per jury member."""

    params: SimParams
    families: tuple[str, ...] = DEFAULT_FAMILIES


@dataclass(frozen=True, slots=True)
class Outcome:
    """Probabilities of a verdict for side a, side b, or a tie."""

    a: float
    b: float
    tie: float

    def wins(self, side: Side) -> float:
        """P(``side`` wins)."""
        return self.a if side is Side.A else self.b


@lru_cache(maxsize=16)
def _combos(n: int) -> NDArray[np.int8]:
    """Every vote combination of ``n`` calls, shape ``(3**n, n)``."""
    return np.array(list(itertools.product(range(3), repeat=n)), dtype=np.int8).reshape(-1, n)


def call_outcome(
    a: Features, b: Features, key: CallKey, panel: SimPanel, *, length_control: bool = False
) -> Outcome:
    """Exact side probabilities of one call: member ``key.member``, ``key.first`` shown first."""
    family = panel.families[key.member]
    if key.first is Side.A:
        d = distribution(a, b, family, panel.params, length_control=length_control)
        return Outcome(d.first, d.second, d.tie)
    d = distribution(b, a, family, panel.params, length_control=length_control)
    return Outcome(d.second, d.first, d.tie)


def call_rows(
    a: Features, b: Features, keys: tuple[CallKey, ...], panel: SimPanel, *, lc: bool
) -> NDArray[np.float64]:
    """Side probabilities of each call, shape ``(len(keys), 3)`` in vote-code order."""
    outs = [call_outcome(a, b, k, panel, length_control=lc) for k in keys]
    return np.array([[o.a, o.b, o.tie] for o in outs], dtype=np.float64).reshape(-1, 3)


def _probabilities(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """P(every vote combination), in :func:`_combos` order (the first call varies slowest)."""
    probs = np.ones(1)
    for row in rows:
        probs = np.outer(probs, row).ravel()
    return probs


@lru_cache(maxsize=64)
def _verdicts(spec: StrategySpec, n: int) -> NDArray[np.int8]:
    """The verdict of every vote combination of ``n`` calls (the rule is fixed per strategy)."""
    return combine(spec, _combos(n))


def combine_distribution(spec: StrategySpec, rows: NDArray[np.float64]) -> Outcome:
    """Exact verdict distribution from per-call side probabilities ``(calls, 3)`` in plan order.

    Every combination of votes is enumerated and combined by the strategy's rule.
    """
    matrix = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    probs = _probabilities(matrix)
    p = np.bincount(_verdicts(spec, matrix.shape[0]), weights=probs, minlength=3)
    return Outcome(float(p[VOTE_A]), float(p[VOTE_B]), float(p[VOTE_TIE]))


def plan_outcome(
    spec: StrategySpec, plan: Plan, a: Features, b: Features, panel: SimPanel
) -> Outcome:
    """Exact verdict distribution of one plan."""
    return combine_distribution(spec, call_rows(a, b, plan.calls, panel, lc=spec.length_control))


def verdict_outcome(
    spec: StrategySpec, a: Features, b: Features, lead: Side, panel: SimPanel
) -> Outcome:
    """Exact verdict distribution of ``spec`` on the pair when ``lead`` leads."""
    pa = pb = pt = 0.0
    for plan in plans(spec, lead):
        o = plan_outcome(spec, plan, a, b, panel)
        pa, pb, pt = pa + plan.weight * o.a, pb + plan.weight * o.b, pt + plan.weight * o.tie
    return Outcome(pa, pb, pt)


def flip_probability(spec: StrategySpec, a: Features, b: Features, panel: SimPanel) -> float:
    """P(the verdict changes when the other side leads), calls shared by key.

    For ``random_order`` the same coin is used in both runs (it keeps or swaps
    whatever order it is given), so a verdict flips when the order matters.
    """
    total = 0.0
    for plan_a, plan_b in zip(plans(spec, Side.A), plans(spec, Side.B), strict=True):
        union, flips = _flip_mask(spec, plan_a.calls, plan_b.calls)
        probs = _probabilities(call_rows(a, b, union, panel, lc=spec.length_control))
        total += plan_a.weight * float(probs[flips].sum())
    return total


@lru_cache(maxsize=64)
def _flip_mask(
    spec: StrategySpec, calls_a: tuple[CallKey, ...], calls_b: tuple[CallKey, ...]
) -> tuple[tuple[CallKey, ...], NDArray[np.bool_]]:
    """The calls of both runs, and which of their vote combinations give different verdicts."""
    union = tuple(dict.fromkeys(calls_a + calls_b))
    combos = _combos(len(union))
    idx_a = [union.index(k) for k in calls_a]
    idx_b = [union.index(k) for k in calls_b]
    return union, combine(spec, combos[:, idx_a]) != combine(spec, combos[:, idx_b])


@dataclass(frozen=True, slots=True)
class FourWay:
    """The position table of one pair judged once in each order (fractions sum to 1)."""

    consistent: float
    biased_first: float
    biased_second: float
    one_tie_one_win: float


def four_way(a: Features, b: Features, panel: SimPanel, member: int = 0) -> FourWay:
    """Exact four-way table of one call with a first and one with b first."""
    x = call_outcome(a, b, CallKey(member, Side.A), panel)
    y = call_outcome(a, b, CallKey(member, Side.B), panel)
    return FourWay(
        consistent=x.a * y.a + x.b * y.b + x.tie * y.tie,
        biased_first=x.a * y.b,
        biased_second=x.b * y.a,
        one_tie_one_win=x.tie * (y.a + y.b) + y.tie * (x.a + x.b),
    )
