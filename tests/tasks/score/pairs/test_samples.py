"""Several agent samples per case in the pair summary: the case is the unit
(docs/agents.md#samples)."""

from __future__ import annotations

import random

import pytest

from bughunt.models import BugCategory, Order, Strategy, VerdictOutcome, Winner
from bughunt.stats import case_mean, sign_test, wilson
from tasks.score.pairs import PairCall, PairInput, StrategyConfig, plan_pair, score_pairs
from tests.tasks.score.pairs.helpers import BF, CF, JUDGE, call, pair, swap_config
from tests.tasks.score.pairs.test_summary import mixed_pairs

F, S = Winner.FIRST, Winner.SECOND

# Under swap: the calls that fold to each outcome ("U": one call timed out).
SWAP_CALLS: dict[str, tuple[PairCall, ...]] = {
    "C": (call(CF, F), call(BF, S)),
    "B": (call(CF, S), call(BF, F)),
    "T": (call(CF, Winner.TIE), call(BF, Winner.TIE)),
    "U": (call(CF, F), call(BF, None)),
}


def sampled(case: str, outcomes: str, category: BugCategory | None = None) -> list[PairInput]:
    """One pair per sample of ``case``, sample i folding to ``outcomes[i]`` under swap."""
    return [
        pair(case, *SWAP_CALLS[o], category=category).model_copy(update={"sample": i})
        for i, o in enumerate(outcomes)
    ]


def run(*cases: list[PairInput]) -> list[PairInput]:
    return [p for c in cases for p in c]


def test_win_rate_is_the_mean_share_over_decisive_cases() -> None:
    """Case shares 1, ½ and 0 (ties left out of a share, an undecided case out of the
    mean): win rate ½ over 3 decisive cases, not 3 wins of 5 decisive pairs."""
    pairs = run(sampled("a", "CC"), sampled("b", "CB"), sampled("c", "BT"), sampled("d", "TU"))
    s = score_pairs(pairs, swap_config(), run_id="r").summary
    assert (s.candidate_wins, s.baseline_wins, s.ties, s.unscored) == (3, 2, 2, 1)
    assert s.pairs == 8 and s.cases == 4
    assert s.decisive == 3
    assert s.win_rate == pytest.approx(0.5)
    assert s.win_rate_ci == case_mean([1.0, 0.5, 0.0])[1]
    assert s.flags == ["few pairs"]


def test_sign_test_counts_a_case_for_the_side_that_won_most_samples() -> None:
    """Three cases won on every sample and one lost: the sign test is over 3 vs 1 cases,
    not over 9 vs 1 sample pairs."""
    pairs = run(*(sampled(f"w{i}", "CCC") for i in range(3)), sampled("l", "B"))
    s = score_pairs(pairs, swap_config(), run_id="r").summary
    assert s.sign_test_p == sign_test(3, 1)
    assert s.sign_test_p != sign_test(9, 1)
    assert s.decisive == 4 and s.win_rate == pytest.approx(0.75)


def test_a_case_won_on_most_samples_counts_for_that_side() -> None:
    """Two of three decisive samples won (a tie beside them) is a case win; one of three a loss."""
    pairs = run(sampled("a", "CCBT"), sampled("b", "BBC"), sampled("c", "CCB"))
    s = score_pairs(pairs, swap_config(), run_id="r").summary
    assert s.sign_test_p == sign_test(2, 1)
    assert s.win_rate == pytest.approx((2 / 3 + 1 / 3 + 2 / 3) / 3)


def test_an_even_split_counts_for_neither_side() -> None:
    """A case whose decisive samples split evenly is decisive for the win rate (share ½) but
    counts for neither side in the sign test."""
    s = score_pairs(sampled("a", "CB"), swap_config(), run_id="r").summary
    assert s.decisive == 1 and s.win_rate == 0.5
    assert s.sign_test_p is None
    s = score_pairs(run(sampled("a", "CBCB"), sampled("b", "C")), swap_config(), run_id="r").summary
    assert s.sign_test_p == sign_test(1, 0)
    assert s.win_rate == pytest.approx(0.75)


def test_agreeing_samples_never_narrow_the_interval() -> None:
    """Ten cases won or lost on all of their three samples give the interval of ten cases,
    never Wilson's over thirty pairs."""
    outcomes = "CCCCCCCBBB"
    one = run(*(sampled(f"c{i}", o) for i, o in enumerate(outcomes)))
    three = run(*(sampled(f"c{i}", o * 3) for i, o in enumerate(outcomes)))
    a = score_pairs(one, swap_config(), run_id="r").summary
    b = score_pairs(three, swap_config(), run_id="r").summary
    assert b.pairs == 30 and b.cases == 10 and b.candidate_wins == 21
    assert (b.decisive, b.win_rate, b.win_rate_ci, b.sign_test_p) == (
        a.decisive,
        a.win_rate,
        a.win_rate_ci,
        a.sign_test_p,
    )
    assert b.win_rate_ci == wilson(7, 10) != wilson(21, 30)


def test_one_sample_per_case_is_the_pair_figure() -> None:
    """With one sample per case every figure is the pair figure: wins / decisive, Wilson,
    the sign test over pairs, and as many cases as pairs."""
    s = score_pairs(mixed_pairs(), swap_config(), run_id="r").summary
    assert s.decisive == 17 and s.win_rate == 12 / 17
    assert s.win_rate_ci == wilson(12, 17)
    assert s.sign_test_p == sign_test(12, 5)
    assert s.cases == s.pairs == 22
    for c in s.per_category.values():
        assert c.cases == c.pairs
        assert c.win_rate_ci == wilson(c.candidate_wins, c.decisive)


def test_a_repeated_case_sample_is_refused() -> None:
    """Two pairs for the same case and sample raise ValueError naming the sample; the same
    case under different samples is fine."""
    pairs = sampled("a", "CB")
    with pytest.raises(ValueError, match="a sample 1"):
        score_pairs([*pairs, pairs[1]], swap_config(), run_id="r")
    with pytest.raises(ValueError, match=r"repeated: a$"):
        score_pairs([*pairs, pairs[0]], swap_config(), run_id="r")
    assert score_pairs(pairs, swap_config(), run_id="r").summary.pairs == 2


def test_verdicts_and_unscored_pairs_carry_their_sample() -> None:
    """Each verdict row says which sample it compares (sorted by case, then sample); an
    unscored pair is listed with its sample."""
    pairs = run(sampled("b", "BUC"), sampled("a", "TC"))
    random.Random(3).shuffle(pairs)
    result = score_pairs(pairs, swap_config(), run_id="r")
    assert [(v.case_id, v.sample, v.outcome) for v in result.verdicts] == [
        ("a", 0, VerdictOutcome.TIE),
        ("a", 1, VerdictOutcome.CANDIDATE),
        ("b", 0, VerdictOutcome.BASELINE),
        ("b", 1, VerdictOutcome.UNSCORED),
        ("b", 2, VerdictOutcome.CANDIDATE),
    ]
    assert [(u.case_id, u.sample) for u in result.summary.unscored_pairs] == [("b", 1)]
    assert result.summary.unscored_pairs[0].reason == "1 of 2 calls failed: timed_out"


def test_sample_order_does_not_matter() -> None:
    """Shuffling the pairs of several samples changes no figure."""
    pairs = run(sampled("a", "CCB"), sampled("b", "BBT"), sampled("c", "CUC"), sampled("d", "B"))
    first = score_pairs(pairs, swap_config(), run_id="r")
    shuffled = list(pairs)
    random.Random(7).shuffle(shuffled)
    again = score_pairs(shuffled, swap_config(), run_id="r")
    assert again.summary == first.summary
    assert [(v.case_id, v.sample, v.outcome) for v in again.verdicts] == [
        (v.case_id, v.sample, v.outcome) for v in first.verdicts
    ]


def test_per_category_takes_the_case_as_the_unit() -> None:
    """Each category's win rate is its cases' mean share and counts its cases."""
    off, ret = BugCategory.OFF_BY_ONE, BugCategory.RETURN_VALUE
    pairs = run(sampled("a", "CB", off), sampled("b", "CC", off), sampled("c", "BBB", ret))
    s = score_pairs(pairs, swap_config(), run_id="r").summary
    by = s.per_category
    assert (by["off_by_one"].cases, by["off_by_one"].pairs, by["off_by_one"].decisive) == (2, 4, 2)
    assert by["off_by_one"].win_rate == pytest.approx(0.75)
    assert by["off_by_one"].win_rate_ci == case_mean([0.5, 1.0])[1]
    assert (by["return_value"].cases, by["return_value"].win_rate) == (1, 0.0)
    assert s.win_rate == pytest.approx(0.5) and s.decisive == 3


def test_each_sample_folds_under_its_own_order_coin() -> None:
    """Under random_order sample i tosses its own coin: a later sample's verdict rests on the
    call in its own order, and a call in sample 0's order leaves it unscored."""
    config = StrategyConfig(strategy=Strategy.RANDOM_ORDER, judges=(JUDGE,))
    case = next(
        f"c{i}"
        for i in range(100)
        if plan_pair(config, f"c{i}", 0)[0].order is not plan_pair(config, f"c{i}", 1)[0].order
    )
    own = plan_pair(config, case, 1)[0].order
    other = plan_pair(config, case, 0)[0].order
    won = F if own is CF else S  # the candidate wins in the call's terms

    def one(order: Order, winner: Winner) -> VerdictOutcome:
        p = pair(case, call(order, winner)).model_copy(update={"sample": 1})
        return score_pairs([p], config, run_id="r").verdicts[0].outcome

    assert one(own, won) is VerdictOutcome.CANDIDATE
    assert one(other, won) is VerdictOutcome.UNSCORED
