"""Intervals over pairs: Wilson and MOVER-Wilson (docs/judge-bias.md#metrics)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from judging.bias import Estimate, difference, net_bias, proportion


@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 60))
def test_net_bias_interval_holds_its_value(fav: int, oth: int, ties: int) -> None:
    """The interval contains the point value and stays within [−1, 1]."""
    n = fav + oth + ties
    e = net_bias(fav, oth, n)
    if n == 0:
        assert e == Estimate(None, None, 0)
        return
    assert e.value is not None and e.ci is not None
    assert -1 <= e.ci[0] <= e.value <= e.ci[1] <= 1


def test_net_bias_refuses_counts_that_do_not_fit() -> None:
    """More decisive pairs than pairs is a ValueError."""
    with pytest.raises(ValueError, match="do not fit"):
        net_bias(5, 6, 10)


def test_net_bias_interval_narrows_with_pairs() -> None:
    """Ten times the pairs, same shares: a narrower interval."""
    small, large = net_bias(6, 2, 20), net_bias(60, 20, 200)
    assert small.ci and large.ci
    assert large.ci[1] - large.ci[0] < small.ci[1] - small.ci[0]


def test_net_bias_interval_covers() -> None:
    """Over 400 simulated samples of 40 pairs, the 95% interval covers the truth ≥ 92% of times."""
    rng = np.random.default_rng(0)
    p = (0.45, 0.2, 0.35)
    truth = p[0] - p[1]
    hits = 0
    for counts in rng.multinomial(40, p, size=400):
        e = net_bias(int(counts[0]), int(counts[1]), 40)
        assert e.ci is not None
        hits += e.ci[0] <= truth <= e.ci[1]
    assert hits / 400 >= 0.92


def test_difference_of_two_proportions() -> None:
    """a − b with an interval that holds it; missing values give None."""
    d = difference(proportion(30, 40), proportion(20, 40))
    assert d.value == pytest.approx(0.25)
    assert d.ci is not None and d.ci[0] < 0.25 < d.ci[1]
    assert difference(proportion(0, 0), proportion(1, 2)).value is None
