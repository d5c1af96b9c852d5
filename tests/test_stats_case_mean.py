"""``case_mean``: the mean of per-case fractions with a Wilson-type interval over cases
(docs/agents.md#samples)."""

from __future__ import annotations

import pytest

from bughunt.stats import case_mean, wilson


def _width(interval: tuple[float, float] | None) -> float:
    assert interval is not None
    return interval[1] - interval[0]


def test_no_case_is_none() -> None:
    """No case: neither a mean nor an interval (never 0)."""
    assert case_mean([]) == (None, None)


@pytest.mark.parametrize("bad", [-0.01, 1.01, 2.0, float("nan")])
def test_a_value_outside_the_unit_interval_is_refused(bad: float) -> None:
    """A case fraction outside [0, 1] (or NaN) raises ValueError."""
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        case_mean([0.5, bad])


@pytest.mark.parametrize(
    "values",
    [[1.0], [0.0], [1, 0, 1, 1, 0], [1] * 12, [0] * 7, [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]],
)
def test_zero_one_values_are_wilson_over_the_cases_exactly(values: list[float]) -> None:
    """With every value 0 or 1 the mean is successes / n and the interval is ``wilson`` exactly."""
    mean, interval = case_mean(values)
    successes, n = sum(values), len(values)
    assert mean == successes / n
    assert interval == wilson(int(successes), n)


def test_confidence_is_passed_on() -> None:
    """The confidence level reaches the interval: 0/1 values match ``wilson`` at that level,
    and a higher level widens a fractional interval."""
    values = [1.0, 0.0, 1.0, 1.0]
    assert case_mean(values, confidence=0.8)[1] == wilson(3, 4, confidence=0.8)
    fractions = [0.5, 0.25, 1.0, 0.75]
    assert _width(case_mean(fractions, confidence=0.99)[1]) > _width(case_mean(fractions)[1])


@pytest.mark.parametrize(
    "values",
    [[0.5], [0.5, 0.5], [1.0, 0.5, 0.0], [0.25, 0.75, 1.0, 1.0, 0.5], [0.1] * 30, [0.9, 1.0]],
)
def test_fractional_mean_lies_inside_an_interval_within_zero_and_one(
    values: list[float],
) -> None:
    """With fractional values the mean is their mean and the interval holds it, inside [0, 1]."""
    mean, interval = case_mean(values)
    assert mean == pytest.approx(sum(values) / len(values))
    assert interval is not None and mean is not None
    low, high = interval
    assert 0.0 <= low <= mean <= high <= 1.0


def test_fractions_are_the_wilson_formula_with_the_sum_as_successes() -> None:
    """Fractions summing to a whole number give Wilson's interval at that many successes: two
    half-reproduced cases are one success in two cases, as one reproduced and one not."""
    mean, interval = case_mean([0.5, 0.5])
    assert mean == 0.5
    expected = wilson(1, 2)
    assert interval is not None and expected is not None
    assert interval == pytest.approx(expected, abs=1e-12)
    mean, interval = case_mean([0.25, 0.75, 1.0, 0.0, 0.5, 0.5])
    expected = wilson(3, 6)
    assert interval is not None and expected is not None
    assert interval == pytest.approx(expected, abs=1e-12)


def test_samples_never_narrow_the_interval_as_cases_would() -> None:
    """Ten cases of four samples each: the interval over cases is wider than Wilson over all
    forty samples pooled (which would treat samples as cases)."""
    per_case = [[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 0, 0]] * 2
    shares = [sum(s) / len(s) for s in per_case]
    pooled_successes = sum(sum(s) for s in per_case)
    pooled_n = sum(len(s) for s in per_case)
    mean, interval = case_mean(shares)
    assert mean == pytest.approx(pooled_successes / pooled_n)
    assert _width(interval) > _width(wilson(pooled_successes, pooled_n))


def test_agreeing_samples_count_as_one_value_per_case() -> None:
    """Samples that agree add nothing: cases whose samples all reproduce or all fail give the
    same interval as one sample per case, never the narrower one of k times as many cases."""
    one_sample = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    agreeing = [sum(s) / 3 for s in ([int(v)] * 3 for v in one_sample)]
    assert case_mean(agreeing) == case_mean(one_sample)
    assert _width(case_mean(agreeing)[1]) > _width(wilson(12, 18))


def test_fractional_interval_at_least_as_wide_as_wilson_at_the_same_mean() -> None:
    """A fractional set's interval is as wide as Wilson's at the same mean and n (here the
    sum is whole, so they coincide), and wider than Wilson at the same mean with more cases."""
    fractions = [0.5, 0.5, 0.5, 0.5]  # mean 0.5, sum 2 over four cases
    zero_one = [1.0, 0.0, 1.0, 0.0]
    assert _width(case_mean(fractions)[1]) == pytest.approx(_width(case_mean(zero_one)[1]))
    assert _width(case_mean(fractions)[1]) > _width(wilson(4, 8))
