"""Anytime-valid bounds by betting, with and without replacement (bughunt/sequential.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from numpy.typing import NDArray

from bughunt.sequential import Side, bound, log_wealth, rejected

ALPHA = 0.05


def population(n: int, mean: float, ties: float = 0.3) -> NDArray[np.float64]:
    """A finite corpus of pair scores in {0, ½, 1} whose mean is exactly ``mean``."""
    tie = round(n * ties)
    wins = round(n * mean - tie / 2)
    losses = n - tie - wins
    assert wins >= 0 and losses >= 0 and (wins + tie / 2) / n == pytest.approx(mean)
    return np.array([1.0] * wins + [0.5] * tie + [0.0] * losses)


def permutations(values: NDArray[np.float64], sims: int, seed: int = 7) -> NDArray[np.float64]:
    rng = np.random.default_rng(seed)
    return np.array([rng.permutation(values) for _ in range(sims)])


def naive_lower(x: NDArray[np.float64], z: float = 1.645) -> NDArray[np.float64]:
    """A fixed-n normal lower bound recomputed after every case (what the gate must not use)."""
    t = np.arange(1, x.shape[-1] + 1)
    mean = np.cumsum(x, axis=-1) / t
    var = np.cumsum(x**2, axis=-1) / t - mean**2
    low: NDArray[np.float64] = mean - z * np.sqrt(np.maximum(var, 1e-12) / t)
    return low


def test_monitored_after_every_case_the_error_rate_stays_below_alpha() -> None:
    """A corpus whose mean is exactly 0.4, looked at after every case of 4,000 random orders:
    "mean ≤ 0.4" is rejected in at most alpha of them; a fixed-n bound recomputed each time is
    wrong far more often (which is why the gate cannot use one)."""
    corpus = population(80, 0.4)
    runs = permutations(corpus, 4000)
    shown = rejected(runs, population=80, m=0.4, alpha=ALPHA, side=Side.ABOVE)[:, -1]
    se = np.sqrt(ALPHA * (1 - ALPHA) / len(runs))
    assert shown.mean() <= ALPHA + 3 * se
    naive = (naive_lower(runs)[:, 5:] > 0.4).any(axis=-1)  # from the 6th case on
    assert naive.mean() > 2 * ALPHA


def test_the_upper_side_is_valid_too() -> None:
    """ "mean ≥ 0.5" on a corpus of mean exactly 0.5 is rejected in at most alpha of the runs."""
    runs = permutations(population(60, 0.5, ties=0.5), 4000, seed=3)
    shown = rejected(runs, population=60, m=0.5, alpha=ALPHA, side=Side.BELOW)[:, -1]
    assert shown.mean() <= ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / len(runs))


def test_a_clear_difference_is_found_before_the_corpus_is_exhausted() -> None:
    """A corpus of mean 0.8 shows "mean > 0.5" in every run, on average well before its end."""
    runs = permutations(population(200, 0.8, ties=0.2), 500, seed=5)
    shown = rejected(runs, population=200, m=0.5, alpha=ALPHA, side=Side.ABOVE)
    assert shown[:, -1].all()
    first = shown.argmax(axis=-1) + 1
    assert first.mean() < 60


def test_bound_is_where_the_test_turns() -> None:
    """The bisected bound agrees with the boundary test: rejected just below it, not just above."""
    rng = np.random.default_rng(11)
    x = rng.choice([0.0, 0.5, 1.0], size=70, p=[0.2, 0.3, 0.5])
    low = bound(x, population=150, alpha=ALPHA, side=Side.ABOVE)
    assert rejected(x, population=150, m=low - 1e-3, alpha=ALPHA, side=Side.ABOVE)[-1]
    assert not rejected(x, population=150, m=low + 1e-3, alpha=ALPHA, side=Side.ABOVE)[-1]
    high = bound(x, population=150, alpha=ALPHA, side=Side.BELOW)
    assert rejected(x, population=150, m=high + 1e-3, alpha=ALPHA, side=Side.BELOW)[-1]
    assert not rejected(x, population=150, m=high - 1e-3, alpha=ALPHA, side=Side.BELOW)[-1]
    assert low < x.mean() < high


def test_wealth_is_monotone_in_the_hypothesised_mean() -> None:
    """Rejecting the boundary of a one-sided null rejects all of it: wealth moves one way in m."""
    x = np.random.default_rng(2).choice([0.0, 0.5, 1.0], size=40)
    grid = np.linspace(0.05, 0.95, 19)
    above = [log_wealth(x, population=60, m=m, alpha=ALPHA, side=Side.ABOVE) for m in grid]
    below = [log_wealth(x, population=60, m=m, alpha=ALPHA, side=Side.BELOW) for m in grid]
    assert all((a >= b - 1e-12).all() for a, b in itertools.pairwise(above))
    assert all((a <= b + 1e-12).all() for a, b in itertools.pairwise(below))


def test_few_cases_never_decide() -> None:
    """Two wins of two is not evidence enough to move the bound past ½ − 0.1, and nine
    unchanged reproductions cannot show a difference above −0.1 (fifteen can)."""
    assert bound(np.ones(2), population=2, alpha=ALPHA, side=Side.ABOVE) < 0.4
    assert bound(np.ones(5), population=5, alpha=ALPHA, side=Side.ABOVE) > 0.4
    assert bound(np.full(9, 0.5), population=9, alpha=ALPHA, side=Side.ABOVE) < 0.45
    assert bound(np.full(15, 0.5), population=15, alpha=ALPHA, side=Side.ABOVE) > 0.45


def test_bad_input() -> None:
    """More scores than the corpus holds is an error; no score gives the trivial bounds."""
    with pytest.raises(ValueError, match="corpus of 3"):
        log_wealth(np.ones(4), population=3, m=0.5, alpha=ALPHA, side=Side.ABOVE)
    assert bound([], population=10, alpha=ALPHA, side=Side.ABOVE) == 0.0
    assert bound([], population=10, alpha=ALPHA, side=Side.BELOW) == 1.0


def test_noisy_verdicts_need_the_with_replacement_form() -> None:
    """Verdicts drawn around an expected score of 0.4 (a judge answers differently on another
    call): the with-replacement form rejects "mean ≤ 0.4" in at most alpha of the runs, the
    without-replacement form — built from the observed scores — far more often. So the gate's
    score bound is the with-replacement one."""
    rng = np.random.default_rng(9)
    runs = rng.choice([1.0, 0.5, 0.0], size=(4000, 60), p=[0.3, 0.2, 0.5])
    se = np.sqrt(ALPHA * (1 - ALPHA) / len(runs))
    with_replacement = rejected(runs, population=None, m=0.4, alpha=ALPHA, side=Side.ABOVE)
    assert with_replacement[:, -1].mean() <= ALPHA + 3 * se
    without = rejected(runs, population=60, m=0.4, alpha=ALPHA, side=Side.ABOVE)
    assert without[:, -1].mean() > 2 * ALPHA
    # and on a fixed corpus, shuffled, the with-replacement form holds too
    fixed = permutations(population(60, 0.4), 4000, seed=4)
    shown = rejected(fixed, population=None, m=0.4, alpha=ALPHA, side=Side.ABOVE)[:, -1]
    assert shown.mean() <= ALPHA + 3 * se


def scalar_log_wealth(x: list[float], m: float, alpha: float, side: Side) -> list[float]:
    """The with-replacement capital process written out one case at a time, from the
    construction's definition (the gate's form): the predictable plug-in bet
    λ_t = √(2 log(1/α) / (σ̂²_{t−1} · t · log(1 + t))), with μ̂_t = (½ + Σ x) / (t + 1),
    σ̂²_t = (¼ + Σ (x_i − μ̂_i)²) / (t + 1) and σ̂²_0 = ¼; capped so one case costs at most half
    the wealth; each factor 1 ± λ_t (x_t − m)."""
    out, wealth, total, spread, previous = [], 0.0, 0.0, 0.0, 0.25
    at_risk = m if side is Side.ABOVE else 1.0 - m
    for t, value in enumerate(x, start=1):
        lam = min(
            math.sqrt(2 * math.log(1 / alpha) / (previous * t * math.log(1 + t))),
            0.5 / at_risk,
        )
        wealth += math.log(1 + (1 if side is Side.ABOVE else -1) * lam * (value - m))
        out.append(wealth)
        total += value
        mean = (0.5 + total) / (t + 1)
        spread += (value - mean) ** 2
        previous = (0.25 + spread) / (t + 1)
    return out


# Forty reproduction measures in {0, ½, 1} (seed 25 of numpy's PCG64; a third of the cases
# differ) and the gate's bounds on them, pinned: a change to the construction moves them.
PINNED = np.random.default_rng(25).choice([0.0, 0.5, 1.0], size=40, p=[0.15, 0.65, 0.2])
PINNED_BOUNDS = {
    (10, Side.ABOVE, 0.05): 0.16495,
    (40, Side.ABOVE, 0.05): 0.32217,
    (40, Side.BELOW, 0.025): 0.53648,
}


def test_the_with_replacement_form_is_the_construction_written_out() -> None:
    """The vectorised capital process equals the one written out case by case, on both sides
    and at several hypothesised means."""
    for m, side in itertools.product((0.3, 0.45, 0.5, 0.62), Side):
        got = log_wealth(PINNED, population=None, m=m, alpha=ALPHA, side=side)
        want = scalar_log_wealth(PINNED.tolist(), m, ALPHA, side)
        assert got.tolist() == pytest.approx(want, rel=1e-12, abs=1e-12), (m, side)


def test_the_gate_s_bounds_are_pinned() -> None:
    """The bounds the gate reports on a fixed sequence, to 1e-4 (bisection's resolution)."""
    for (n, side, alpha), want in PINNED_BOUNDS.items():
        got = bound(PINNED[:n], population=None, alpha=alpha, side=side)
        assert got == pytest.approx(want, abs=1e-4), (n, side, alpha)
