"""The score stage's summary over real pairs (issue item 6, docs/judge-bias.md#metrics)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from bughunt.models import BugCategory, BugReport, Order, Strategy, Winner
from bughunt.stats import sign_test, wilson
from judging.judges import JudgeRequest, ReportFeatures
from judging.judges._sim import SimJudge
from tasks.score.pairs import (
    JudgeRef,
    PairCall,
    PairInput,
    StrategyConfig,
    plan_pair,
    score_pairs,
)
from tests.tasks.score.pairs.helpers import BF, CF, JUDGE, call, pair, swap_config

F, S, T = Winner.FIRST, Winner.SECOND, Winner.TIE


def mixed_pairs() -> list[PairInput]:
    """12 candidate wins, 5 baseline wins, 3 ties, 2 unscored, in two categories."""
    out = []
    for i in range(22):
        cat = BugCategory.OFF_BY_ONE if i % 2 else BugCategory.RETURN_VALUE
        if i < 12:
            calls = (call(CF, F), call(BF, S))
        elif i < 17:
            calls = (call(CF, S), call(BF, F))
        elif i < 20:
            calls = (call(CF, F), call(BF, F))
        else:
            calls = (call(CF, F), call(BF, None))
        out.append(pair(f"c{i:02d}", *calls, category=cat))
    return out


def test_win_rate_over_decisive_pairs() -> None:
    """Win rate = candidate wins / decisive, Wilson interval and sign test over decisive pairs."""
    s = score_pairs(mixed_pairs(), swap_config(), run_id="r").summary
    assert (s.candidate_wins, s.baseline_wins, s.ties, s.unscored) == (12, 5, 3, 2)
    assert s.decisive == 17 and s.pairs == 22
    assert s.win_rate == pytest.approx(12 / 17)
    assert s.win_rate_ci == wilson(12, 17)
    assert s.sign_test_p == sign_test(12, 5)
    assert s.flags == []


def test_unscored_pairs_are_listed_with_reasons() -> None:
    """Unscored pairs are shown with why, apart from ties."""
    s = score_pairs(mixed_pairs(), swap_config(), run_id="r").summary
    assert [(u.case_id, u.reason) for u in s.unscored_pairs] == [
        ("c20", "1 of 2 calls failed: timed_out"),
        ("c21", "1 of 2 calls failed: timed_out"),
    ]


def test_verdict_rows_one_per_pair() -> None:
    """One Verdict row per pair, with the strategy and the category."""
    result = score_pairs(mixed_pairs(), swap_config(), run_id="r")
    assert len(result.verdicts) == 22
    assert {v.strategy for v in result.verdicts} == {Strategy.SWAP}
    assert result.verdicts[1].category is BugCategory.OFF_BY_ONE


def test_per_category_breakdown_adds_up() -> None:
    """Each category gets the same figures; the counts add up to the whole."""
    s = score_pairs(mixed_pairs(), swap_config(), run_id="r").summary
    assert set(s.per_category) == {"off_by_one", "return_value"}
    assert sum(c.candidate_wins for c in s.per_category.values()) == s.candidate_wins
    assert sum(c.unscored for c in s.per_category.values()) == s.unscored
    assert all("few pairs" in c.flags for c in s.per_category.values())


def test_few_pairs_are_flagged_and_nothing_decisive_is_none() -> None:
    """No decisive pair: win rate, interval and p are None (never 0), flagged few pairs."""
    s = score_pairs([pair("c", call(CF, T), call(BF, T))], swap_config(), run_id="r").summary
    assert s.win_rate is None and s.win_rate_ci is None and s.sign_test_p is None
    assert s.flags == ["few pairs"]
    assert s.length_controlled.value is None


def test_each_case_is_one_pair() -> None:
    """The same case twice is refused: the pair is the unit."""
    with pytest.raises(ValueError, match="repeated: c"):
        score_pairs([pair("c"), pair("c")], swap_config(), run_id="r")


def test_repeated_calls_do_not_narrow_the_interval() -> None:
    """Extra samples of every call change nothing: n is the number of pairs."""
    base = mixed_pairs()
    repeated = [
        p.model_copy(
            update={
                "calls": p.calls
                + tuple(
                    c.model_copy(update={"sample_index": k}) for c in p.calls for k in (1, 2, 3)
                )
            }
        )
        for p in base
    ]
    a = score_pairs(base, swap_config(), run_id="r").summary
    b = score_pairs(repeated, swap_config(), run_id="r").summary
    assert a.win_rate_ci == b.win_rate_ci and a.decisive == b.decisive
    assert b.calls_recorded == 4 * a.calls_recorded and b.calls_used == a.calls_used


def test_majority_counts_pairs_not_votes() -> None:
    """Five votes per pair still give one decisive pair each in the interval."""
    cfg = StrategyConfig(strategy=Strategy.MAJORITY, judges=(JUDGE,), k=5)
    pairs = [pair(f"c{i}", *(call(CF, F, sample=k) for k in range(5))) for i in range(8)]
    s = score_pairs(pairs, cfg, run_id="r").summary
    assert s.decisive == 8 and s.win_rate_ci == wilson(8, 8) and s.calls_used == 40


def test_call_accounting() -> None:
    """calls_sent leaves out cached calls; requests add attempts."""
    p = pair("c", call(CF, F, cached=True), call(BF, S))
    s = score_pairs([p], swap_config(), run_id="r").summary
    assert (s.calls_recorded, s.calls_sent, s.requests, s.calls_used) == (2, 1, 1, 2)


def test_pair_order_does_not_matter() -> None:
    """Shuffling the pairs gives the same summary and the same verdicts."""
    pairs = mixed_pairs()
    shuffled = pairs[:]
    random.Random(3).shuffle(shuffled)
    a = score_pairs(pairs, swap_config(), run_id="r")
    b = score_pairs(shuffled, swap_config(), run_id="r")
    assert a.summary == b.summary
    assert [v.case_id for v in a.verdicts] == [v.case_id for v in b.verdicts]


def _report(case: str, agent: str) -> BugReport:
    return BugReport(case_id=case, agent_version=agent, title="t", repro_test="def test(): pass")


def sim_scored_pairs(n: int, judge: SimJudge, config: StrategyConfig) -> list[PairInput]:
    """Pairs of equal expected quality, the candidate usually longer, judged by the sim judge
    through the Judge protocol (strict JSON answers)."""
    rng = np.random.Generator(np.random.PCG64(11))
    pairs = []
    for i in range(n):
        case = f"case-{i:03d}"
        cand = ReportFeatures(
            agent_version="cand",
            family="fam-x",
            words=max(1, round(300 * 2 ** rng.uniform(-0.25, 1.5))),
            quality=float(rng.uniform(0.4, 0.6)),
        )
        base = ReportFeatures(
            agent_version="base", family="fam-y", words=300, quality=float(rng.uniform(0.4, 0.6))
        )
        calls = []
        for planned in plan_pair(config, case):
            cf = planned.order is Order.CANDIDATE_FIRST
            req = JudgeRequest(
                case_id=case,
                order=planned.order,
                first=_report(case, "cand" if cf else "base"),
                second=_report(case, "base" if cf else "cand"),
                first_features=cand if cf else base,
                second_features=base if cf else cand,
                sample_index=planned.sample_index,
            )
            answer = json.loads(judge.complete("system", "user", req, 90.0))
            calls.append(
                PairCall(
                    judge=judge.name,
                    family=judge.family,
                    order=planned.order,
                    sample_index=planned.sample_index,
                    status="judged",
                    winner=Winner(answer["winner"]),
                )
            )
        pairs.append(
            PairInput(
                case_id=case,
                candidate="cand",
                baseline="base",
                candidate_words=cand.words,
                baseline_words=base.words,
                calls=tuple(calls),
            )
        )
    return pairs


def test_length_control_reduces_verbosity_bias_on_the_sim_judge() -> None:
    """Equal quality, a verbose candidate: the raw win rate is inflated, the LC rate near ½."""
    judge = SimJudge(name="sim", family="fam-z")
    config = StrategyConfig(judges=(JudgeRef(name="sim", family="fam-z"),))
    s = score_pairs(sim_scored_pairs(400, judge, config), config, run_id="r", seed=1).summary
    lc = s.length_controlled
    assert s.win_rate is not None and s.win_rate > 0.7
    assert lc.value is not None and lc.ci is not None and lc.slope is not None
    assert abs(lc.value - 0.5) < abs(s.win_rate - 0.5) / 2
    assert lc.ci[0] < 0.5 < lc.ci[1]
    assert lc.slope > 0
