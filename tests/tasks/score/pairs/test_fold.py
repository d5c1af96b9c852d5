"""Folding one pair's calls into one verdict (issue item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from bughunt.models import RATIONALE_CAP, CallStatus, Order, Strategy, VerdictOutcome, Winner
from ledger import Ledger
from tasks.score.pairs import (
    SPLIT_TIE,
    PairCall,
    StrategyConfig,
    coin_keeps,
    fold_pair,
    plan_pair,
    side_vote,
    verdict_row,
)
from tests.tasks.score.pairs.helpers import BF, CF, JUDGE, JURY, call, pair, swap_config

F, S, T = Winner.FIRST, Winner.SECOND, Winner.TIE


def test_side_vote_maps_call_terms_to_candidate_terms() -> None:
    """'first' with the candidate first is a candidate vote; with the baseline first, a baseline vote."""
    assert side_vote(CF, F) == side_vote(BF, S) == 0
    assert side_vote(CF, S) == side_vote(BF, F) == 1
    assert side_vote(CF, T) == side_vote(BF, T) == 2


def test_default_strategy_is_swap() -> None:
    """The score stage judges with swap unless told otherwise."""
    assert StrategyConfig(judges=(JUDGE,)).strategy is Strategy.SWAP


@pytest.mark.parametrize(
    ("cf", "bf", "expected", "reason"),
    [
        (F, S, VerdictOutcome.CANDIDATE, None),
        (S, F, VerdictOutcome.BASELINE, None),
        (F, F, VerdictOutcome.TIE, SPLIT_TIE),  # position bias: each order's first won
        (T, S, VerdictOutcome.TIE, None),  # one call judged them equal
    ],
)
def test_swap_verdicts(
    cf: Winner, bf: Winner, expected: VerdictOutcome, reason: str | None
) -> None:
    """Swap: a side wins only when it wins in both orders; a tie from orders that picked
    opposite sides says so (it is no evidence the reports are equal)."""
    folded = fold_pair(pair("c", call(CF, cf), call(BF, bf)), swap_config())
    assert folded.outcome is expected and folded.reason == reason and folded.calls == 2


def test_a_failed_call_leaves_the_pair_unscored() -> None:
    """One of two calls timed out: unscored with the reason, never a tie."""
    folded = fold_pair(pair("c", call(CF, F), call(BF, None)), swap_config())
    assert folded.outcome is VerdictOutcome.UNSCORED
    assert folded.reason == "1 of 2 calls failed: timed_out"


def test_a_missing_call_leaves_the_pair_unscored() -> None:
    """A planned call with no record is a failure named 'missing'."""
    folded = fold_pair(pair("c", call(CF, F)), swap_config())
    assert folded.reason == "1 of 2 calls failed: missing"


def test_failures_are_counted_by_status() -> None:
    """Several failures list each status once, with a count."""
    cfg = StrategyConfig(strategy=Strategy.JURY, judges=JURY)
    calls = [
        call(CF, None, judge="j1"),
        call(BF, None, judge="j1", status=CallStatus.ABORTED),
        call(CF, None, judge="j2", status=CallStatus.ABORTED),
        call(BF, S, judge="j2"),
    ]
    folded = fold_pair(pair("c", *calls), cfg)
    assert folded.reason == "5 of 6 calls failed: aborted ×2, missing ×2, timed_out"


def test_disagreeing_judged_duplicates_pick_no_side() -> None:
    """Two judged records of one call that disagree: unscored, not first-wins."""
    folded = fold_pair(pair("c", call(CF, F), call(CF, S), call(BF, S)), swap_config())
    assert folded.outcome is VerdictOutcome.UNSCORED
    assert folded.reason is not None and "disagree" in folded.reason


def test_a_retried_call_that_succeeded_counts() -> None:
    """A failed record and a judged record of the same call: the judged answer counts."""
    folded = fold_pair(pair("c", call(CF, None), call(CF, F), call(BF, S)), swap_config())
    assert folded.outcome is VerdictOutcome.CANDIDATE


def test_calls_outside_the_plan_are_ignored() -> None:
    """Extra samples and other judges' calls do not change a swap verdict."""
    extra = [call(CF, S, sample=1), call(BF, F, judge="j2")]
    folded = fold_pair(pair("c", call(CF, F), call(BF, S), *extra), swap_config())
    assert folded.outcome is VerdictOutcome.CANDIDATE and folded.calls == 2


def test_majority_plans_k_samples_in_one_order() -> None:
    """majority: k samples in the configured order, plurality, tied top a tie."""
    cfg = StrategyConfig(strategy=Strategy.MAJORITY, judges=(JUDGE,), k=3)
    assert [(p.order, p.sample_index) for p in plan_pair(cfg, "c")] == [(CF, 0), (CF, 1), (CF, 2)]
    votes = [call(CF, F, sample=0), call(CF, F, sample=1), call(CF, S, sample=2)]
    assert fold_pair(pair("c", *votes), cfg).outcome is VerdictOutcome.CANDIDATE
    votes = [call(CF, F, sample=0), call(CF, T, sample=1), call(CF, S, sample=2)]
    assert fold_pair(pair("c", *votes), cfg).outcome is VerdictOutcome.TIE


def test_single_uses_the_configured_order() -> None:
    """single shows the candidate first by default, the baseline first when configured."""
    cfg = StrategyConfig(strategy=Strategy.SINGLE, judges=(JUDGE,))
    assert [p.order for p in plan_pair(cfg, "c")] == [CF]
    other = cfg.model_copy(update={"single_order": BF})
    assert [p.order for p in plan_pair(other, "c")] == [BF]


def test_random_order_follows_a_seeded_coin() -> None:
    """random_order's order per case comes from the seeded coin, about half each way."""
    cfg = StrategyConfig(strategy=Strategy.RANDOM_ORDER, judges=(JUDGE,), seed=7)
    orders = [plan_pair(cfg, f"case-{i}")[0].order for i in range(400)]
    assert 150 < orders.count(CF) < 250
    for i in range(20):
        expected = CF if coin_keeps(7, f"case-{i}") else BF
        assert plan_pair(cfg, f"case-{i}")[0].order is expected


def test_random_order_needs_the_coins_call() -> None:
    """A call in the other order does not stand in for the planned one."""
    cfg = StrategyConfig(strategy=Strategy.RANDOM_ORDER, judges=(JUDGE,), seed=7)
    planned = plan_pair(cfg, "c")[0].order
    other = BF if planned is CF else CF
    assert fold_pair(pair("c", call(other, F)), cfg).outcome is VerdictOutcome.UNSCORED


def test_jury_is_plurality_of_swapped_members() -> None:
    """Two members prefer the candidate in both orders, one ties: candidate."""
    cfg = StrategyConfig(strategy=Strategy.JURY, judges=JURY)
    calls = [
        *(call(CF, F, judge=j) for j in ("j1", "j2", "j3")),
        call(BF, S, judge="j1"),
        call(BF, S, judge="j2"),
        call(BF, F, judge="j3"),
    ]
    folded = fold_pair(pair("c", *calls), cfg)
    assert folded.outcome is VerdictOutcome.CANDIDATE and folded.calls == 6


def test_jury_needs_distinct_families() -> None:
    """A jury of two judges of one family is refused."""
    with pytest.raises(ValueError, match="different families"):
        StrategyConfig(
            strategy=Strategy.JURY, judges=(JUDGE, JUDGE.model_copy(update={"name": "x"}))
        )


def test_a_winner_needs_a_judged_status() -> None:
    """A timed-out call carrying a winner is refused."""
    with pytest.raises(ValueError, match="exactly when"):
        PairCall(judge="j", family="f", order=CF, status=CallStatus.TIMED_OUT, winner=F)


@given(st.permutations(range(4)))
def test_call_order_does_not_matter(perm: list[int]) -> None:
    """The verdict does not depend on the order the calls are listed in."""
    calls = [call(CF, F), call(BF, S), call(CF, T, sample=1), call(BF, F, judge="j2")]
    cfg = swap_config()
    assert fold_pair(pair("c", *calls), cfg) == fold_pair(pair("c", *(calls[i] for i in perm)), cfg)


def test_verdict_row() -> None:
    """The ledger row carries the pair, strategy, outcome, reason and calls."""
    p = pair("c", call(CF, F))
    row = verdict_row(p, fold_pair(p, swap_config()), swap_config(), "run-1")
    assert (row.run_id, row.case_id, row.candidate, row.baseline) == ("run-1", "c", "cand", "base")
    assert row.outcome is VerdictOutcome.UNSCORED and row.calls == 2
    assert row.strategy is Strategy.SWAP and row.reason == "1 of 2 calls failed: missing"


def test_from_judge_call() -> None:
    """A ledger JudgeCall converts to the fold's PairCall."""
    from bughunt.models import JudgeCall

    jc = JudgeCall(
        call_id="x",
        run_id="r",
        case_id="c",
        judge="j1",
        family="fam-a",
        order=Order.BASELINE_FIRST,
        prompt_hash="h",
        attempts=2,
        status=CallStatus.JUDGED,
        winner=Winner.SECOND,
    )
    pc = PairCall.from_judge_call(jc)
    assert (pc.judge, pc.order, pc.winner, pc.attempts) == ("j1", BF, S, 2)


def _said(c: PairCall, rationale: str) -> PairCall:
    return c.model_copy(update={"rationale": rationale})


def test_a_verdict_keeps_the_judges_words_on_the_calls_it_rests_on(tmp_path: Path) -> None:
    """Each judged call's rationale, labelled with its judge and order, whitespace folded, kept
    with the verdict and stored in the ledger (so `bughunt sql` shows it); one call's alone."""
    two = pair(
        "c",
        _said(call(CF, F), "precise\n repro"),
        _said(call(BF, S), "names the line"),
    )
    folded = fold_pair(two, swap_config())
    assert folded.outcome is VerdictOutcome.CANDIDATE
    assert folded.rationale == (
        "j1 (candidate_first): precise repro | j1 (baseline_first): names the line"
    )
    single = StrategyConfig(strategy=Strategy.SINGLE, judges=(JUDGE,))
    [only] = plan_pair(single, "c", 0)
    alone = fold_pair(pair("c", _said(call(only.order, F), "clear root cause")), single)
    assert alone.rationale == "clear root cause"
    row = verdict_row(two, folded, swap_config(), "r1")
    store = Ledger(tmp_path / "l.duckdb")
    store.write([row])
    assert store.query("SELECT rationale FROM verdicts") == [{"rationale": folded.rationale}]


def test_the_rationale_is_capped_and_failed_calls_say_nothing() -> None:
    """A long rationale is cut to the cap with an ellipsis; an unscored pair keeps none, though
    its judged call had words (the verdict does not rest on them)."""
    long = fold_pair(
        pair("c", _said(call(CF, F), "x" * 2000), _said(call(BF, S), "y")), swap_config()
    )
    assert long.rationale is not None and len(long.rationale) == RATIONALE_CAP
    assert long.rationale.endswith("…")
    failed = fold_pair(pair("c", _said(call(CF, F), "good"), call(BF, None)), swap_config())
    assert failed.outcome is VerdictOutcome.UNSCORED and failed.rationale is None
