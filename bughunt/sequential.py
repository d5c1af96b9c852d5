"""Anytime-valid bounds on a bounded mean, for cases drawn without replacement.

The gate looks at its evidence after every batch, so a fixed-n interval
recomputed each time would be wrong far more often than its level says. These
bounds come from betting (Waudby-Smith & Ramdas, "Estimating means of bounded
random variables by betting", and "Confidence sequences for sampling without
replacement"): for a hypothesised corpus mean ``m``, a gambler bets a
predictable fraction ``λ_t`` of her wealth on the next case's score landing
above (or below) the mean of the cases not yet drawn,

    μ_t(m) = (N·m − Σ_{i<t} x_i) / (N − t),

which is that case's expected score when cases come in a uniformly random
order and the corpus mean is ``m``. Her wealth is then a non-negative
martingale under ``m``; by Ville's inequality it ever reaches ``1/α`` with
probability at most ``α``, however often it is looked at. The bound is every
``m`` whose wealth never got there.

Choices, each keeping validity:

- ``λ_t`` is the predictable plug-in ``√(2 log(1/α) / (σ̂²_{t-1} t log(1+t)))``
  capped so that no single case can cost more than ``BET_CAP`` < 1 of the
  wealth (``λ_t ≤ BET_CAP / μ_t(m)`` betting above, ``BET_CAP / (1 − μ_t(m))``
  betting below), so wealth never reaches zero.
- One-sided tests at a boundary. The wealth for H0 "mean ≤ m" does not grow
  with ``m`` (each factor ``1 + λ_t(m)(x_t − μ_t(m))`` falls as ``m`` rises,
  capped or not; ``μ_t(m)`` is clipped to [0, 1], which only makes the bet
  more cautious), so rejecting the boundary rejects the whole composite
  null, and the bound is where the wealth crosses ``1/α``.
- Two forms: without replacement (``population=N``), as above, and with
  replacement (``population=None``: ``μ_t(m) = m``), which the gate uses for
  both its measures because verdicts and agents are noisy
  (:data:`WITH_REPLACEMENT`). Neither collapses
  onto the observed mean when the corpus is exhausted, so a plan of a few
  cases can still be inconclusive.

Written with numpy rather than a library: ``confseq`` (the authors' package)
needs a C++ build and its own Boost, and the gate's simulation needs these
processes vectorised over thousands of simulated runs at once.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

WITH_REPLACEMENT = None
"""``population=None``: the with-replacement form, which the gate uses.

The without-replacement form is exact for a corpus of fixed scores, and
tighter near the corpus's end; but a verdict is a noisy measurement of a
case (the judge, the agents), and so is a reproduction (an LLM agent writes
another test on another run). With that noise the form's conditional mean —
built from the *observed* values — is wrong: measured with verdicts drawn
around an expected score of 0.4, "mean ≤ 0.4" was rejected in 14% of runs at
alpha 5%. The with-replacement form holds in both worlds: fixed values
shuffled (it is conservative there) and noisy ones (tests/test_sequential.py,
tests/tasks/gate/test_gate_stochastic.py)."""

BET_CAP = 0.5
"""Largest share of its wealth the gambler may lose on one case (the authors use ½ or ¾; ¾
bets too hard on the first few cases and loses power on realistic corpora, measured with
`bughunt simulate gate`)."""


class Side(StrEnum):
    """Which way the gambler bets: the null she tries to reject."""

    ABOVE = "above"
    """Bets the mean is above ``m`` (rejects "mean ≤ m": a lower bound)."""
    BELOW = "below"
    """Bets the mean is below ``m`` (rejects "mean ≥ m": an upper bound)."""


def _plug_in(x: NDArray[np.float64], alpha: float) -> NDArray[np.float64]:
    """The predictable plug-in bet for each step, from ``x_0..x_{t-1}`` only (before capping)."""
    t_len = x.shape[-1]
    count = np.arange(1, t_len + 1, dtype=np.float64)  # 1..T: cases seen after step i
    mu_hat = (0.5 + np.cumsum(x, axis=-1)) / (count + 1)
    sig2 = (0.25 + np.cumsum((x - mu_hat) ** 2, axis=-1)) / (count + 1)
    prev = np.concatenate([np.full((*x.shape[:-1], 1), 0.25), sig2[..., :-1]], axis=-1)
    lam: NDArray[np.float64] = np.sqrt(2 * np.log(1 / alpha) / (prev * count * np.log(1 + count)))
    return lam


def log_wealth(
    scores: ArrayLike, *, population: int | None, m: float, alpha: float, side: Side
) -> NDArray[np.float64]:
    """The gambler's log wealth after each case, for the hypothesised mean ``m``.

    ``scores`` holds case scores in [0, 1] in the order they were drawn
    (shape ``(..., T)``: leading axes are independent sequences, e.g.
    simulated runs); ``population`` is the corpus size ``N ≥ T`` for the
    without-replacement form, or ``None`` for the with-replacement form
    (every case's expected score is ``m``; see :data:`WITH_REPLACEMENT`).
    """
    x = np.asarray(scores, dtype=np.float64)
    t_len = x.shape[-1]
    if population is not None and t_len > population:
        raise ValueError(f"{t_len} scores drawn from a corpus of {population}")
    if t_len == 0:
        return np.zeros(x.shape, dtype=np.float64)
    if population is None:
        mu = np.full(x.shape, min(max(m, 0.0), 1.0))
    else:
        drawn_before = np.cumsum(x, axis=-1) - x
        remaining = population - np.arange(t_len, dtype=np.float64)
        mu = np.clip((population * m - drawn_before) / remaining, 0.0, 1.0)
    # The most that can be lost on one case is λ·μ (betting above) or λ·(1 − μ) (below):
    # capping λ at BET_CAP over it keeps every factor at least 1 − BET_CAP.
    at_risk = mu if side is Side.ABOVE else 1.0 - mu
    with np.errstate(divide="ignore"):
        cap = np.where(at_risk > 0, BET_CAP / np.maximum(at_risk, 1e-300), np.inf)
    lam = np.minimum(_plug_in(x, alpha), cap)
    sign = 1.0 if side is Side.ABOVE else -1.0
    factors = 1.0 + sign * lam * (x - mu)
    wealth: NDArray[np.float64] = np.cumsum(np.log(factors), axis=-1)
    return wealth


def rejected(
    scores: ArrayLike, *, population: int | None, m: float, alpha: float, side: Side
) -> NDArray[np.bool_]:
    """Whether the null (``mean ≤ m`` for ABOVE, ``mean ≥ m`` for BELOW) is rejected by each step.

    Once rejected it stays rejected (the wealth's running maximum is what counts).
    """
    wealth = log_wealth(scores, population=population, m=m, alpha=alpha, side=side)
    shown: NDArray[np.bool_] = np.maximum.accumulate(wealth, axis=-1) >= np.log(1 / alpha)
    return shown


def bound(scores: ArrayLike, *, population: int | None, alpha: float, side: Side) -> float:
    """The anytime-valid bound after the last score: lower for ABOVE, upper for BELOW.

    With no score the bound is the trivial 0 (lower) or 1 (upper). Found by
    bisection on ``m`` (the wealth is monotone in it) to 1e-4.
    """
    x = np.asarray(scores, dtype=np.float64)
    lo, hi = 0.0, 1.0
    if x.size == 0:
        return lo if side is Side.ABOVE else hi
    for _ in range(17):
        mid = (lo + hi) / 2
        hit = bool(rejected(x, population=population, m=mid, alpha=alpha, side=side)[-1])
        # ABOVE rejects every m at or below the lower bound; BELOW every m at or above the upper.
        if hit == (side is Side.ABOVE):
            lo = mid
        else:
            hi = mid
    return lo if side is Side.ABOVE else hi
