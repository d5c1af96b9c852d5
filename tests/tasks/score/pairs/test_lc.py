"""The length-controlled win rate: a regression estimate (AlpacaEval-style)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from tasks.score.pairs import fit_logistic, length_controlled


def synthetic(
    n: int, b0: float, b1: float, seed: int = 0
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """n pairs with log ratios in [−0.5, 1.5] and outcomes drawn from σ(b0 + b1·x)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    x = rng.uniform(-0.5, 1.5, n)
    y = rng.random(n) < 1 / (1 + np.exp(-(b0 + b1 * x)))
    return x, y


def test_fit_recovers_known_coefficients() -> None:
    """On 20,000 synthetic pairs the fit is within 0.1 of the true coefficients."""
    x, y = synthetic(20_000, -0.3, 1.2)
    fit = fit_logistic(x, y.astype(float))[0]
    assert fit.converged
    assert fit.intercept == pytest.approx(-0.3, abs=0.1)
    assert fit.slope == pytest.approx(1.2, abs=0.1)


def test_lc_rate_is_the_rate_at_equal_length() -> None:
    """A length effect inflates the raw rate; the LC rate is near σ(intercept)."""
    x, y = synthetic(2000, 0.0, 1.5)
    lc = length_controlled(x, y, resamples=200)
    assert y.mean() > 0.6
    assert lc.value == pytest.approx(0.5, abs=0.05)
    assert lc.ci is not None and lc.ci[0] < 0.5 < lc.ci[1]


def test_without_length_effect_lc_is_near_raw() -> None:
    """When length does not matter the LC rate and the raw rate agree."""
    x, y = synthetic(2000, 0.8, 0.0)
    lc = length_controlled(x, y, resamples=200)
    assert lc.value == pytest.approx(float(y.mean()), abs=0.04)


def test_few_pairs_give_no_estimate() -> None:
    """Fewer than 10 decisive pairs: no value, and the note says why."""
    lc = length_controlled([0.1] * 5 + [0.2] * 4, [True] * 5 + [False] * 4)
    assert lc.value is None and "at least 10" in lc.note


def test_constant_length_ratio_gives_no_estimate() -> None:
    """Every pair with the same nonzero ratio: the length effect cannot be separated."""
    lc = length_controlled([1.0] * 12, [True] * 6 + [False] * 6)
    assert lc.value is None and "same length ratio" in lc.note


def test_equal_lengths_give_the_raw_rate() -> None:
    """Every pair of equal length: the LC rate is the raw rate."""
    lc = length_controlled([0.0] * 20, [True] * 14 + [False] * 6, resamples=200)
    assert lc.value == pytest.approx(0.7, abs=1e-3)


def test_separation_gives_no_estimate() -> None:
    """When length alone separates wins from losses there is no finite fit."""
    lc = length_controlled([-1.0] * 6 + [1.0] * 6, [False] * 6 + [True] * 6)
    assert lc.value is None and "separates" in lc.note


def test_all_one_way_is_the_raw_rate() -> None:
    """Every decisive pair won by the candidate: LC = raw = 1, no interval."""
    lc = length_controlled(list(np.linspace(-1, 1, 15)), [True] * 15)
    assert lc.value == 1.0 and lc.ci is None


def test_bootstrap_is_seeded() -> None:
    """Same seed, same interval."""
    x, y = synthetic(200, 0.2, 0.8)
    assert length_controlled(x, y, seed=4).ci == length_controlled(x, y, seed=4).ci


def test_mismatched_inputs_are_refused() -> None:
    """x and y of different lengths are a ValueError."""
    with pytest.raises(ValueError, match="differ in length"):
        length_controlled([0.0, 1.0], [True])
