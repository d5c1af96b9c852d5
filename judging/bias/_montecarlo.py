"""Seeded Monte Carlo of every strategy, checked against the exact figures.

Each draw picks a gap pair and a lead side uniformly (and, for
``random_order``, the coin), samples every call of the plan from its exact
per-call distribution, and applies the same verdict rule as the exact
computation. The sampled share of correct verdicts is then a Bernoulli mean
whose expectation is the exact ``correct``, so their difference in standard
errors should be small (|z| < 3 nearly always).

Streams are ``PCG64(SeedSequence([seed, i]))`` with ``i`` the strategy's
place in :class:`~bughunt.models.Strategy`, so one strategy's sample does not
depend on which others are run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from bughunt.models import Strategy
from judging.bias._exact import SimPanel, call_rows, verdict_outcome
from judging.bias._pairsets import ProbePair
from judging.bias._strategies import Side, StrategySpec, combine, plans


class MonteCarloCheck(BaseModel):
    """Sampled vs exact share of correct verdicts on the gap set, for one strategy."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    sampled_correct: float
    """Share of sampled verdicts that chose the better report."""
    exact_correct: float
    """The exact probability (enumeration)."""
    difference_se: float
    """(sampled − exact) / standard error of the sampled share."""


def generator(seed: int, stream: int) -> np.random.Generator:
    """The PCG64 generator of one stream of one seed."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, stream])))


def check_correct(
    spec: StrategySpec,
    pairs: Sequence[ProbePair],
    panel: SimPanel,
    *,
    seed: int,
    draws: int,
) -> MonteCarloCheck:
    """Sample ``draws`` verdicts of ``spec`` on ``pairs`` (each with a known better side)."""
    if draws < 1 or not pairs:
        raise ValueError("Monte Carlo needs at least one draw and one pair")
    if any(p.better is None for p in pairs):
        raise ValueError("every pair of the Monte Carlo check needs a known better side")
    leads = (Side.A, Side.B)
    n_plans = len(plans(spec, Side.A))
    weights = np.array([p.weight for p in plans(spec, Side.A)])
    # rows[pair, lead, plan] = per-call side probabilities, shape (calls, 3)
    rows = np.array(
        [
            [
                [
                    call_rows(a, b, plan.calls, panel, lc=spec.length_control)
                    for plan in plans(spec, lead)
                ]
                for lead in leads
            ]
            for a, b in ((pair.a.features(), pair.b.features()) for pair in pairs)
        ]
    )
    better = np.array([p.better_side.vote for p in pairs], dtype=np.int8)
    rng = generator(seed, list(Strategy).index(spec.strategy))
    pick = rng.integers(0, len(pairs), size=draws)
    lead = rng.integers(0, 2, size=draws)
    plan = rng.choice(n_plans, size=draws, p=weights)
    probs = rows[pick, lead, plan]  # (draws, calls, 3)
    u = rng.random(probs.shape[:2])
    # u below P(a) votes a, below P(a) + P(b) votes b, else tie
    votes = (u >= probs[..., 0]).astype(np.int8) + (u >= probs[..., 0] + probs[..., 1])
    sampled = float((combine(spec, votes) == better[pick]).mean())

    exact = math.fsum(
        verdict_outcome(spec, p.a.features(), p.b.features(), ld, panel).wins(p.better_side)
        for p in pairs
        for ld in leads
    ) / (2 * len(pairs))
    se = math.sqrt(exact * (1.0 - exact) / draws)
    diff = (sampled - exact) / se if se > 0 else (0.0 if sampled == exact else math.inf)
    return MonteCarloCheck(sampled_correct=sampled, exact_correct=exact, difference_se=diff)
