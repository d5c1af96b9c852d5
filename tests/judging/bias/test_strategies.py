"""Strategies: the vote rules and their exact distributions (docs/judge-bias.md#strategies)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bughunt.models import Strategy
from judging.bias import (
    Side,
    SimPanel,
    SimParams,
    SimReport,
    StrategySpec,
    combine,
    combine_distribution,
    flip_probability,
    four_way,
    plans,
    verdict_outcome,
)
from judging.bias._strategies import VOTE_A, VOTE_B, VOTE_TIE
from tests.judging.bias.strategies import params, reports

A, B, T = VOTE_A, VOTE_B, VOTE_TIE
strategies = st.sampled_from(list(Strategy))


def verdict(strategy: Strategy, votes: list[int], k: int = 5) -> int:
    return int(combine(StrategySpec(strategy, k=k), np.array([votes], dtype=np.int8))[0])


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        ([A, A, B, T, T], T),  # A and tie share the top
        ([A, A, A, B, B], A),
        ([A, A, B, B, T], T),  # tied top
        ([B, B, A, T, T], T),
        ([B, B, B, T, T], B),
        ([A, A, T, B, B], T),
        ([A, T, T, T, B], T),
    ],
)
def test_majority_is_plurality_with_tied_top_a_tie(votes: list[int], expected: int) -> None:
    """Majority: the unique most frequent answer, a tie when the top is shared."""
    assert verdict(Strategy.MAJORITY, votes) == expected


@pytest.mark.parametrize(
    ("votes", "expected"), [([A, A], A), ([B, B], B), ([A, B], T), ([A, T], T), ([T, T], T)]
)
def test_swap_needs_both_orders(votes: list[int], expected: int) -> None:
    """Swap: a side wins only if it wins in both orders, else tie."""
    assert verdict(Strategy.SWAP, votes) == expected


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        ([A, A, A, A, B, B], A),  # two members say a, one b
        ([A, A, B, B, A, B], T),  # a, b, tie: all tied
        ([A, A, A, T, T, T], T),  # a, tie, tie
        ([B, B, B, B, A, T], B),
    ],
)
def test_jury_is_plurality_of_swapped_members(votes: list[int], expected: int) -> None:
    """Jury: each member's swap verdict, then plurality across members."""
    assert verdict(Strategy.JURY, votes) == expected


def test_combine_refuses_the_wrong_number_of_votes() -> None:
    """A vote array that does not match the plan is a ValueError."""
    with pytest.raises(ValueError, match="needs 2 votes"):
        combine(StrategySpec(Strategy.SWAP), np.array([[A, A, A]], dtype=np.int8))


def test_calls_per_pair() -> None:
    """single 1, random_order 1, majority k, swap 2, jury 2 per member."""
    calls = {s: StrategySpec(s, k=5, members=3).calls_per_pair for s in Strategy}
    assert calls == {
        Strategy.SINGLE: 1,
        Strategy.RANDOM_ORDER: 1,
        Strategy.MAJORITY: 5,
        Strategy.SWAP: 2,
        Strategy.SWAP_LC: 2,
        Strategy.JURY: 6,
        Strategy.JURY_LC: 6,
    }


def test_random_order_has_two_coin_plans() -> None:
    """random_order keeps the order with probability ½ and swaps it otherwise."""
    ps = plans(StrategySpec(Strategy.RANDOM_ORDER), Side.A)
    assert [(p.weight, p.calls[0].first) for p in ps] == [(0.5, Side.A), (0.5, Side.B)]


@settings(max_examples=40, deadline=None)
@given(strategies, params, reports, reports, st.sampled_from([Side.A, Side.B]))
def test_exact_verdicts_sum_to_one(
    strategy: Strategy, p: SimParams, a: SimReport, b: SimReport, lead: Side
) -> None:
    """Every strategy's exact verdict distribution sums to 1."""
    o = verdict_outcome(StrategySpec(strategy), a, b, lead, SimPanel(p))
    assert min(o.a, o.b, o.tie) >= -1e-15
    assert o.a + o.b + o.tie == pytest.approx(1.0, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([Strategy.SWAP, Strategy.SWAP_LC, Strategy.JURY, Strategy.JURY_LC]),
    params,
    reports,
    reports,
)
def test_swap_is_symmetric_under_exchanging_the_reports(
    strategy: Strategy, p: SimParams, a: SimReport, b: SimReport
) -> None:
    """Exchanging the two reports mirrors the verdict, whichever side leads."""
    panel = SimPanel(p)
    o = verdict_outcome(StrategySpec(strategy), a, b, Side.A, panel)
    mirrored = verdict_outcome(StrategySpec(strategy), b, a, Side.A, panel)
    other_lead = verdict_outcome(StrategySpec(strategy), a, b, Side.B, panel)
    assert (o.a, o.b, o.tie) == pytest.approx((mirrored.b, mirrored.a, mirrored.tie), abs=1e-12)
    assert (o.a, o.b, o.tie) == pytest.approx(
        (other_lead.a, other_lead.b, other_lead.tie), abs=1e-12
    )


@settings(max_examples=30, deadline=None)
@given(params, reports, reports)
def test_majority_of_one_is_single(p: SimParams, a: SimReport, b: SimReport) -> None:
    """majority with k = 1 is exactly single."""
    panel = SimPanel(p)
    assert verdict_outcome(
        StrategySpec(Strategy.MAJORITY, k=1), a, b, Side.A, panel
    ) == verdict_outcome(StrategySpec(Strategy.SINGLE), a, b, Side.A, panel)


def test_majority_amplifies_a_biased_single_vote() -> None:
    """55% first / 20% second / 25% tie: 5-vote plurality pushes 'first' up and 'second' down."""
    single = (0.55, 0.20, 0.25)
    o = combine_distribution(StrategySpec(Strategy.MAJORITY, k=5), np.array([single] * 5))
    assert o.a - o.b > single[0] - single[1]


def test_majority_does_not_amplify_a_mostly_tie_vote() -> None:
    """0.20 / 0.15 / 0.65: the 5-vote plurality net bias is below 0.05 (the single vote's)."""
    o = combine_distribution(
        StrategySpec(Strategy.MAJORITY, k=5), np.array([(0.2, 0.15, 0.65)] * 5)
    )
    assert o.a - o.b < 0.05
    assert o.a + o.b + o.tie == pytest.approx(1.0)


def test_enumeration_matches_a_hand_count() -> None:
    """Swap of one call (0.5, 0.3, 0.2) each order: P(a) = 0.5·0.5 when a wins both."""
    rows = np.array([(0.5, 0.3, 0.2), (0.5, 0.3, 0.2)])
    o = combine_distribution(StrategySpec(Strategy.SWAP), rows)
    assert (o.a, o.b, o.tie) == pytest.approx((0.25, 0.09, 0.66))


def test_flip_rates() -> None:
    """Swap never flips (same calls either way); single flips unless both orders agree."""
    r = SimReport(0.5, 300, "other")
    panel = SimPanel(SimParams())
    assert flip_probability(StrategySpec(Strategy.SWAP), r, r, panel) == 0.0
    assert flip_probability(StrategySpec(Strategy.JURY), r, r, panel) == 0.0
    fw = four_way(r, r, panel)
    single = flip_probability(StrategySpec(Strategy.SINGLE), r, r, panel)
    assert single == pytest.approx(1 - fw.consistent)
    assert flip_probability(StrategySpec(Strategy.RANDOM_ORDER), r, r, panel) == pytest.approx(
        single
    )


@settings(max_examples=30, deadline=None)
@given(params, reports, reports)
def test_four_way_table_sums_to_one(p: SimParams, a: SimReport, b: SimReport) -> None:
    """consistent + biased_first + biased_second + one_tie_one_win = 1."""
    fw = four_way(a, b, SimPanel(p))
    total = fw.consistent + fw.biased_first + fw.biased_second + fw.one_tie_one_win
    assert total == pytest.approx(1.0)
