"""The PR gate and the nightly interval with several agent samples per case: the case is
the unit, a case's value the mean over its samples (docs/agents.md#samples)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import pytest

from bughunt.models import Reproduction, ReproOutcome, Strategy, Verdict, VerdictOutcome
from tasks.gate import (
    GateDecision,
    GatePlan,
    GateThresholds,
    decide_gate,
    gate_of_rows,
    score_interval,
    verdict_samples,
)
from tasks.gate._evidence import Evidence, ReproSamples, VerdictSamples, by_case
from tasks.score.pairs import SPLIT_TIE

R, N, E = ReproOutcome.REPRODUCED, ReproOutcome.NOT_REPRODUCED, ReproOutcome.ERROR
C, B, T, U = (
    VerdictOutcome.CANDIDATE,
    VerdictOutcome.BASELINE,
    VerdictOutcome.TIE,
    VerdictOutcome.UNSCORED,
)
OPEN = GateThresholds(max_unreviewed=1.0)
"""Thresholds that never fail the review, so the bounds are always shown."""


def cases(n: int) -> list[str]:
    return [f"c{i:03d}" for i in range(n)]


def gate(
    verdicts: Mapping[str, VerdictSamples],
    baseline: Mapping[str, ReproSamples] | None = None,
    candidate: Mapping[str, ReproSamples] | None = None,
    *,
    thresholds: GateThresholds = OPEN,
    split_ties: Sequence[str | tuple[str, int]] = (),
) -> GateDecision:
    """The gate over the cases of ``verdicts`` (in sorted order), reproductions all reproduced
    unless given."""
    order = sorted(verdicts)
    return decide_gate(
        GatePlan(len(order), order),
        verdicts=verdicts,
        baseline_repro=baseline if baseline is not None else dict.fromkeys(order, R),
        candidate_repro=candidate if candidate is not None else dict.fromkeys(order, R),
        judge_degraded=False,
        thresholds=thresholds,
        split_ties=split_ties,
    )


def evidence(
    verdicts: Mapping[str, VerdictSamples],
    baseline: Mapping[str, ReproSamples] | None = None,
    candidate: Mapping[str, ReproSamples] | None = None,
    split_ties: Sequence[str | tuple[str, int]] = (),
) -> Evidence:
    order = sorted({*verdicts, *(baseline or {}), *(candidate or {})})
    return Evidence(order, verdicts, baseline or {}, candidate or {}, None, split_ties)


def test_bounds_count_cases_not_samples() -> None:
    """Thirty cases of three samples each: the bounds' n is thirty (evaluated and known)."""
    v = {c: [C, B, C] for c in cases(30)}
    d = gate(v, {c: [R, R, R] for c in v}, {c: [R, N, R] for c in v})
    assert d.score is not None and d.reproduction is not None
    assert (d.score.evaluated, d.score.known, d.score.population) == (30, 30, 30)
    assert (d.reproduction.evaluated, d.reproduction.known) == (30, 30)
    assert d.score.mean == pytest.approx(2 / 3)
    assert d.reproduction.mean == pytest.approx(0.5 - 1 / 6)
    assert "over 30 of 30 evaluated cases" in d.message


def test_agreeing_samples_give_the_bounds_of_one_sample() -> None:
    """Cases whose samples agree give exactly the bounds one sample per case gives: k samples
    never narrow them as k cases would."""
    outcomes = [C] * 14 + [B] * 6 + [T] * 5
    one = dict(zip(cases(25), outcomes, strict=True))
    three = {c: [o, o, o] for c, o in one.items()}
    a, b = gate(one), gate(three, {c: [R] * 3 for c in one}, {c: [R] * 3 for c in one})
    assert a.score == b.score and a.reproduction == b.reproduction
    assert a.outcome is b.outcome and a.tie_share == b.tie_share
    thrice = gate({f"{c}/{i}": o for c, o in one.items() for i in range(3)})
    assert thrice.score is not None and a.score is not None
    assert thrice.score.lower > a.score.lower  # samples taken as cases would narrow the bounds


def test_a_case_score_is_the_mean_over_its_samples() -> None:
    """A case won on one sample and lost on the other scores ½, as a tie does; a case's
    reproduction measure is the mean of its samples' differences."""
    split = gate({c: [C, B] for c in cases(20)})
    ties = gate(dict.fromkeys(cases(20), T))
    assert split.score is not None and ties.score is not None
    assert (split.score.mean, split.score.lower, split.score.upper) == (
        ties.score.mean,
        ties.score.lower,
        ties.score.upper,
    )
    assert split.tie_share == 0.0 and ties.tie_share == 1.0
    ev = evidence({"a": [C, C, T, B]}, {"a": [R, R, N, N]}, {"a": [R, N, R, N]})
    assert ev.score == [pytest.approx(0.625)]
    assert ev.repro == [pytest.approx((0.5 + 0.0 + 1.0 + 0.5) / 4)]


def test_a_missing_sample_lowers_the_low_value_and_raises_the_high_one() -> None:
    """An unscored sample counts as 0 in the case's low value and 1 in its high one, and the
    case has no known score; a sample that could not be run does the same to reproduction."""
    ev = evidence({"a": [C, U], "b": [B, U, B, B]}, {"a": [R, R]}, {"a": [R, E]})
    assert ev.score == [None, None]
    assert ev.score_low == [0.5, 0.0]
    assert ev.score_high == [1.0, 0.25]
    assert ev.unjudged == pytest.approx(0.5 + 0.25)
    assert ev.repro[0] is None
    assert (ev.repro_low[0], ev.repro_high[0]) == (0.25, 0.75)


def test_missing_samples_never_help_the_gate() -> None:
    """Twenty cases won on both samples against the same with one sample of each unscored:
    the unscored samples lower the score's lower bound, raise its upper bound, and leave no
    case with a known score."""
    full = gate({c: [C, C] for c in cases(20)})
    half = gate({c: [C, U] for c in cases(20)})
    assert full.score is not None and half.score is not None
    assert half.score.lower < full.score.lower
    assert half.score.upper >= full.score.upper
    assert (half.score.known, half.score.evaluated, half.score.mean) == (0, 20, None)
    assert (
        "10 of 20 pairs could not be judged"
        in gate({c: [C, U] for c in cases(20)}, thresholds=GateThresholds()).message
    )


def test_a_single_outcome_stands_for_every_sample() -> None:
    """A replay side with one outcome per case is compared with each of the other side's
    samples; a side with fewer samples than the other (but more than one) is missing the rest."""
    replay = evidence({"a": [C, C]}, {"a": [R]}, {"a": [R, N]})
    both = evidence({"a": [C, C]}, {"a": [R, R]}, {"a": [R, N]})
    assert replay.repro == both.repro == [0.25]
    scalar = evidence({"a": [C, C]}, {"a": R}, {"a": [N, N, R]})
    assert scalar.repro == [pytest.approx((0.0 + 0.0 + 0.5) / 3)]
    short = evidence({"a": [C, C, C]}, {"a": [R, R]}, {"a": [R, R, R]})
    assert short.repro == [None]
    assert short.repro_low == pytest.approx([1 / 3]) and short.repro_high == pytest.approx([2 / 3])


def test_split_ties_name_a_sample_or_the_whole_case() -> None:
    """``(case, sample)`` makes that sample's tie unjudged; a bare case id all its samples."""
    one = evidence({"a": [T, T]}, split_ties=[("a", 1)])
    assert (one.score, one.score_low, one.score_high) == ([None], [0.25], [0.75])
    assert one.split > 0 and one.unjudged == 0.5 and one.ties == 0.5
    whole = evidence({"a": [T, T]}, split_ties=["a"])
    assert (whole.score_low, whole.score_high, whole.unjudged, whole.ties) == ([0.0], [1.0], 1, 0)
    other = evidence({"a": [T, T]}, split_ties=[("a", 2), ("b", 0)])
    assert other.score == [0.5] and other.split == 0


def test_split_sample_ties_fail_the_review_as_unjudged() -> None:
    """Forty cases whose second sample tied only because the calls split: half of every case
    unjudged, which fails the review at the default threshold."""
    v = {c: [C, T] for c in cases(40)}
    d = gate(v, thresholds=GateThresholds(), split_ties=[(c, 1) for c in v])
    assert d.outcome.value == "review_failed"
    assert "20 of 40 pairs could not be judged (" in d.message
    assert "tied only because the judge's calls split" in d.message
    assert gate(v, thresholds=GateThresholds()).outcome.value != "review_failed"


def test_unrun_samples_count_by_their_share() -> None:
    """A case's samples are one reproduction, counted by the share that could not be run."""
    v = {c: [C, C] for c in cases(10)}
    ok = gate(v, {c: [R] for c in v}, {c: [R, E] for c in v}, thresholds=GateThresholds())
    assert "could not be run" not in ok.message  # 5 of 20 is not over a quarter
    bad = gate(v, {c: [E] for c in v}, {c: [R, E] for c in v}, thresholds=GateThresholds())
    assert "15 of 20 reproductions could not be run" in bad.message


def _verdict(case: str, sample: int, outcome: VerdictOutcome, reason: str | None = None) -> Verdict:
    return Verdict(
        run_id="r",
        case_id=case,
        baseline="base",
        candidate="cand",
        strategy=Strategy.SWAP,
        outcome=outcome,
        reason=reason,
        sample=sample,
    )


def _repro(case: str, agent: str, sample: int, outcome: ReproOutcome) -> Reproduction:
    return Reproduction(
        run_id="r", case_id=case, agent_version=agent, outcome=outcome, sample=sample
    )


def test_gate_of_rows_groups_samples_by_case() -> None:
    """Verdict and reproduction rows with samples, in any order, give the gate of the
    per-case lists: n counts cases, the replay baseline's one row stands for every sample,
    and a split tie names its sample."""
    order = cases(24)
    wanted = {c: [C, B, C] if i % 3 else [T, C, C] for i, c in enumerate(order)}
    verdicts = [
        _verdict(c, s, o, SPLIT_TIE if (i == 0 and s == 0) else None)
        for i, (c, outs) in enumerate(wanted.items())
        for s, o in enumerate(outs)
    ]
    cand = {c: [R, N, R] for c in order}
    reproductions = [_repro(c, "base", 0, R) for c in order] + [
        _repro(c, "cand", s, o) for c, outs in cand.items() for s, o in enumerate(outs)
    ]
    rng = random.Random(5)
    rng.shuffle(verdicts)
    rng.shuffle(reproductions)
    d = gate_of_rows(
        GatePlan(24, order),
        verdicts=verdicts,
        reproductions=reproductions,
        baseline="base",
        candidate="cand",
        judge_degraded=False,
        thresholds=OPEN,
    )
    expected = decide_gate(
        GatePlan(24, order),
        verdicts=wanted,
        baseline_repro={c: [R] for c in order},
        candidate_repro=cand,
        judge_degraded=False,
        thresholds=OPEN,
        split_ties=[(order[0], 0)],
    )
    assert d == expected
    assert d.score is not None and d.score.evaluated == 24 and d.score.known == 23
    assert d.reproduction is not None and d.reproduction.known == 24


def test_rows_are_put_in_sample_order() -> None:
    """``by_case`` and ``verdict_samples`` list each case's values by sample, whatever the
    row order."""
    assert by_case([("a", 2, "z"), ("b", 0, "x"), ("a", 0, "x"), ("a", 1, "y")]) == {
        "a": ["x", "y", "z"],
        "b": ["x"],
    }
    rows = [_verdict("a", 1, B), _verdict("a", 0, C), _verdict("b", 0, T)]
    assert verdict_samples(rows) == {"a": [C, B], "b": [T]}


def test_score_interval_takes_the_case_mean() -> None:
    """The nightly interval: a case's score is its samples' mean (a split case is a tie),
    agreeing samples change nothing, and an unscored sample counts as 0 low and 1 high."""
    order = cases(30)
    ties = score_interval(order, {c: [T] for c in order}, 0.05)
    assert score_interval(order, {c: [C, B] for c in order}, 0.05) == ties
    one = score_interval(order, {c: [C] if i % 4 else [B] for i, c in enumerate(order)}, 0.05)
    three = score_interval(
        order, {c: [C] * 3 if i % 4 else [B] * 3 for i, c in enumerate(order)}, 0.05
    )
    assert one == three
    missing = score_interval(order, {c: [C, U] for c in order}, 0.05)
    assert missing[0] == ties[0]
    assert missing[1] == score_interval(order, {c: [C, C] for c in order}, 0.05)[1]


def test_tie_share_is_a_share_of_judged_pairs() -> None:
    """The tie share stays a share of judged sample pairs when some samples are unscored:
    three cases with a tie and an unscored sample and one won twice have 3 ties of 5 judged."""
    d = gate({"a": [T, U], "b": [T, U], "c": [T, U], "d": [C, C]})
    assert d.tie_share is not None and 0.0 <= d.tie_share <= 1.0
    assert d.tie_share == pytest.approx(3 / 5)


def test_split_ties_are_counted_in_the_unit_of_unjudged_pairs() -> None:
    """The split ties the review message names are a part of the unjudged pairs it counts."""
    v = {c: [C, T] for c in cases(40)}
    d = gate(v, thresholds=GateThresholds(), split_ties=[(c, 1) for c in v])
    assert "20 of 40 pairs could not be judged (20 of them tied only" in d.message
