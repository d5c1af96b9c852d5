"""The simulated judge's scoring rule (docs/judge-bias.md)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from bughunt.models import Winner
from judging.bias import SimParams, SimReport, distribution, draw, hashed_uniform
from tests.judging.bias.strategies import params, reports

EQUAL = SimReport(0.5, 300, "other")


def sig(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def test_defaults_are_the_design_values() -> None:
    """s=12, b_pos=0.8, b_len=1.2, b_self=0.6, m=0.6."""
    assert SimParams().model_dump() == {
        "s": 12.0,
        "b_pos": 0.8,
        "b_len": 1.2,
        "b_self": 0.6,
        "m": 0.6,
    }


def test_identical_reports_give_the_position_bonus_only() -> None:
    """Two identical reports: P(first)=σ(b_pos−m), P(second)=σ(−b_pos−m) (55% / 20% / 25%)."""
    d = distribution(EQUAL, EQUAL, "sim-a", SimParams())
    assert d.first == pytest.approx(sig(0.2))
    assert d.second == pytest.approx(sig(-1.4))
    assert (round(d.first, 2), round(d.tie, 2)) == (0.55, 0.25)


def test_every_term_enters_the_score() -> None:
    """Quality, length and family each shift z by their coefficient."""
    first = SimReport(0.6, 600, "sim-a")
    second = SimReport(0.5, 300, "other")
    z = 12 * 0.1 + 0.8 + 1.2 * 1 + 0.6 * 1
    d = distribution(first, second, "sim-a", SimParams())
    assert d.first == pytest.approx(sig(z - 0.6))
    assert d.second == pytest.approx(sig(-z - 0.6))


@given(params, reports, reports, st.sampled_from(["sim-a", "sim-b", "other"]))
def test_distribution_is_a_distribution(p: SimParams, a: SimReport, b: SimReport, fam: str) -> None:
    """The three probabilities are in [0, 1] and sum to 1."""
    d = distribution(a, b, fam, p)
    assert min(d.first, d.second, d.tie) >= 0
    assert d.first + d.second + d.tie == pytest.approx(1.0, abs=1e-12)


@given(params, reports, reports)
def test_length_control_removes_exactly_the_length_term(
    p: SimParams, a: SimReport, b: SimReport
) -> None:
    """Length control equals a judge with b_len = 0."""
    lc = distribution(a, b, "sim-a", p, length_control=True)
    no_len = distribution(a, b, "sim-a", p.model_copy(update={"b_len": 0.0}))
    assert lc == no_len


def test_self_term_needs_the_judges_family() -> None:
    """The family bonus applies only to a report of the judge's own family."""
    own, other = SimReport(0.5, 300, "sim-a"), SimReport(0.5, 300, "other")
    assert distribution(own, other, "sim-b", SimParams()) == distribution(
        EQUAL, EQUAL, "sim-b", SimParams()
    )
    assert (
        distribution(own, other, "sim-a", SimParams()).first
        > distribution(EQUAL, EQUAL, "sim-a", SimParams()).first
    )


def test_zero_words_are_refused() -> None:
    """A word count below 1 is a ValueError, not a log of zero."""
    with pytest.raises(ValueError, match="word counts"):
        distribution(SimReport(0.5, 0, "x"), EQUAL, "sim-a", SimParams())


def test_hashed_uniform_is_fixed_by_its_key() -> None:
    """Same key, same number in [0, 1); another key, another number."""
    u = hashed_uniform("sim", "judge", "case", "candidate_first", 0, 7)
    assert u == hashed_uniform("sim", "judge", "case", "candidate_first", 0, 7)
    assert 0 <= u < 1
    assert u != hashed_uniform("sim", "judge", "case", "candidate_first", 1, 7)


def test_draw_splits_the_unit_interval() -> None:
    """u below P(first) is first, then second, then tie."""
    d = distribution(EQUAL, EQUAL, "x", SimParams())
    assert draw(d, 0.0) is Winner.FIRST
    assert draw(d, d.first + 1e-9) is Winner.SECOND
    assert draw(d, 0.999) is Winner.TIE
