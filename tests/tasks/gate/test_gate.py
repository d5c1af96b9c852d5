"""The PR gate: each outcome from evidence built for it, checked in its order."""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict, Unpack

import pytest

from bughunt.errors import InputError
from bughunt.models import ReproOutcome, Strategy, VerdictOutcome
from tasks.gate import (
    GateDecision,
    GateOutcome,
    GatePlan,
    GateThresholds,
    decide_gate,
    load_gate_thresholds,
)
from tasks.score.pairs import ScoreSummary
from tasks.score.pairs._lc import LengthControlled

R, N, E = ReproOutcome.REPRODUCED, ReproOutcome.NOT_REPRODUCED, ReproOutcome.ERROR
C, B, T, U = (
    VerdictOutcome.CANDIDATE,
    VerdictOutcome.BASELINE,
    VerdictOutcome.TIE,
    VerdictOutcome.UNSCORED,
)


def cases(n: int) -> list[str]:
    return [f"c{i:03d}" for i in range(n)]


def verdicts(wins: int, losses: int, ties: int = 0, unscored: int = 0) -> dict[str, VerdictOutcome]:
    outcomes = [C] * wins + [B] * losses + [T] * ties + [U] * unscored
    return dict(zip(cases(len(outcomes)), outcomes, strict=True))


def summary(v: Mapping[str, VerdictOutcome]) -> ScoreSummary:
    from bughunt.stats import sign_test

    cand = sum(1 for o in v.values() if o is C)
    base = sum(1 for o in v.values() if o is B)
    return ScoreSummary(
        pairs=len(v),
        candidate_wins=cand,
        baseline_wins=base,
        ties=sum(1 for o in v.values() if o is T),
        unscored=sum(1 for o in v.values() if o is U),
        decisive=cand + base,
        win_rate=cand / (cand + base) if cand + base else None,
        win_rate_ci=None,
        sign_test_p=sign_test(cand, base),
        length_controlled=LengthControlled(value=None, ci=None, slope=None, note="test"),
        flags=[],
        strategy=Strategy.SWAP,
        judges=["sim"],
        calls_used=0,
        calls_recorded=0,
        calls_sent=0,
        requests=0,
        unscored_pairs=[],
        per_category={},
    )


def same(n: int, outcome: ReproOutcome = R) -> dict[str, ReproOutcome]:
    return dict.fromkeys(cases(n), outcome)


class GateArgs(TypedDict, total=False):
    """Keyword arguments of decide_gate; a test overrides some of them."""

    planned_cases: int
    verdicts: Mapping[str, VerdictOutcome]
    baseline_repro: Mapping[str, ReproOutcome]
    candidate_repro: Mapping[str, ReproOutcome]
    judge_degraded: bool
    thresholds: GateThresholds


def gate(seed: int = 0, **kw: Unpack[GateArgs]) -> GateDecision:
    """The gate over every planned case, taken in a seeded random order."""
    v = kw.get("verdicts", verdicts(8, 7, 5))
    n = kw.get("planned_cases", len(v))
    order = cases(n)
    random.Random(seed).shuffle(order)
    return decide_gate(
        GatePlan(n, order),
        verdicts=v,
        baseline_repro=kw.get("baseline_repro", same(n)),
        candidate_repro=kw.get("candidate_repro", same(n)),
        judge_degraded=kw.get("judge_degraded", False),
        thresholds=kw.get("thresholds", GateThresholds()),
    )


def test_two_of_eleven_is_never_a_pass() -> None:
    """The case that once passed green: 2 of 11 decisive pairs won. Whatever the order, its
    bounds leave it inconclusive (exit 4), saying what the run could have shown — never pass."""
    outcomes = {gate(seed, verdicts=verdicts(2, 9)).outcome for seed in range(20)}
    assert outcomes == {GateOutcome.INCONCLUSIVE}
    d = gate(verdicts=verdicts(2, 9))
    assert d.exit_code == 4 and d.score is not None and d.score.upper > 0.5
    assert "could have shown a regression only if the score were below about" in d.message


def test_a_clear_loss_is_a_regression() -> None:
    """Three wins in 25 decisive pairs: the score's upper bound is below ½ (exit 1)."""
    d = gate(verdicts=verdicts(3, 22))
    assert d.outcome is GateOutcome.REGRESSION and d.exit_code == 1
    assert d.score is not None and d.score.upper < 0.5 and "upper bound" in d.message


def test_ties_from_split_calls_are_no_evidence() -> None:
    """A judge that always prefers one position ties every pair under swap (the orders
    disagree): those ties count as unjudged, never as ½, so they cannot carry a pass."""
    v = verdicts(30, 8, 22)
    assert gate(verdicts=v).outcome is GateOutcome.PASS
    ties = [c for c, o in v.items() if o is T]
    d = decide_gate(
        GatePlan(60, cases(60)),
        verdicts=v,
        baseline_repro=same(60),
        candidate_repro=same(60),
        judge_degraded=False,
        thresholds=GateThresholds(),
        split_ties=ties,
    )
    assert d.outcome is GateOutcome.REVIEW_FAILED
    assert "22 of them tied only because the judge's calls split" in d.message
    everything = dict.fromkeys(cases(60), T)
    d = decide_gate(
        GatePlan(60, cases(60)),
        verdicts=everything,
        baseline_repro=same(60),
        candidate_repro=same(60),
        judge_degraded=False,
        thresholds=GateThresholds(max_unreviewed=1.0),
        split_ties=list(everything),
    )
    assert d.outcome is not GateOutcome.PASS


def test_an_even_small_run_is_inconclusive_and_says_what_it_would_take() -> None:
    """Eleven pairs split evenly show nothing either way: inconclusive (exit 4), with the
    smallest regression the run could have shown and how many more cases would decide."""
    d = gate(verdicts=verdicts(5, 5, 1))
    assert d.outcome is GateOutcome.INCONCLUSIVE and d.exit_code == 4
    assert "could have shown a regression only if the score were below about" in d.message
    assert "more cases (pairs) would decide" in d.message
    assert d.tie_share == pytest.approx(1 / 11)


def test_pass_needs_evidence_on_both_measures() -> None:
    """Sixty cases, the candidate ahead and no reproduction lost: the lower bounds clear
    ½ − margin and −margin, so the gate passes (exit 0) and shows the tie share."""
    d = gate(verdicts=verdicts(30, 8, 22))
    assert d.outcome is GateOutcome.PASS and d.exit_code == 0
    assert d.score is not None and d.score.lower >= 0.4
    assert d.reproduction is not None and 2 * d.reproduction.lower - 1 >= -0.1
    assert "37% ties" in d.message


def test_no_reproduction_changed_passes_only_on_enough_cases() -> None:
    """Both versions reproduce the same bugs and the candidate wins every pair. The
    reproduction bound is about the rates on cases like these (an agent's test may reproduce
    on one run and not the next), so agreement on a few cases cannot show the candidate's
    rate is within the margin: 55 such cases are inconclusive, 56 pass."""
    assert gate(verdicts=verdicts(55, 0)).outcome is GateOutcome.INCONCLUSIVE
    assert gate(verdicts=verdicts(56, 0)).outcome is GateOutcome.PASS


def test_a_good_score_without_reproduction_evidence_is_not_a_pass() -> None:
    """Seven wins and two ties: the score clears the margin but nine cases cannot show
    reproduction is within it, so the gate does not pass."""
    d = gate(verdicts=verdicts(7, 0, 2))
    assert d.score is not None and d.score.lower >= 0.4
    assert d.outcome is GateOutcome.INCONCLUSIVE


def test_regression_when_reproduction_drops() -> None:
    """An even judge, but the candidate stops reproducing 10 of 20 bugs: regression (exit 1)."""
    cand = {**same(20), **dict.fromkeys(cases(10), N)}
    d = gate(verdicts=verdicts(8, 7, 5), candidate_repro=cand)
    assert d.outcome is GateOutcome.REGRESSION
    assert "reproduces fewer bugs" in d.message


def test_missing_results_never_help() -> None:
    """The passing run with a fifth of its pairs unjudged (under max_unreviewed) no longer
    passes: an unjudged pair counts as a loss for the pass test and a win for regression."""
    assert gate(verdicts=verdicts(29, 8, 23)).outcome is GateOutcome.PASS
    d = gate(verdicts=verdicts(17, 8, 23, unscored=12))  # the same, twelve wins left unjudged
    assert d.outcome is GateOutcome.INCONCLUSIVE
    lost = gate(verdicts=verdicts(0, 12, 0, unscored=3)).score
    all_lost = gate(verdicts=verdicts(0, 15)).score
    assert lost is not None and all_lost is not None
    assert lost.upper > all_lost.upper  # the unjudged count as wins for the regression test


def test_review_failed_when_judge_cannot_answer() -> None:
    """Half the pairs unjudged is a failure to review (exit 3), never a regression."""
    d = gate(verdicts=verdicts(1, 9, 0, unscored=10))
    assert d.outcome is GateOutcome.REVIEW_FAILED and d.exit_code == 3
    assert "not a finding that the change regresses" in d.message


def test_review_failed_when_breaker_opened() -> None:
    """An opened breaker fails the review even when few pairs are unscored."""
    assert gate(judge_degraded=True).outcome is GateOutcome.REVIEW_FAILED


def test_review_failed_when_sandbox_could_not_run() -> None:
    """Too many reproductions without a result fail the review."""
    d = gate(candidate_repro=same(20, E), baseline_repro=same(20, E))
    assert d.outcome is GateOutcome.REVIEW_FAILED and "could not be run" in d.message


def test_nothing_to_evaluate() -> None:
    """A plan with no case is nothing to evaluate (exit 0)."""
    d = gate(planned_cases=0, verdicts={}, baseline_repro={}, candidate_repro={})
    assert d.outcome is GateOutcome.NOTHING_TO_EVALUATE and d.exit_code == 0


def test_bounds_do_not_depend_on_the_plan_s_size() -> None:
    """Twelve of 200 planned cases evaluated, or a plan of twelve: the bounds are about cases
    like these (with replacement: verdicts and agents' tests are noisy), so both show the same;
    only the plan's size is reported."""
    v = verdicts(12, 0)
    small = gate(verdicts=v)
    partial = gate(planned_cases=200, verdicts=v, baseline_repro=same(12), candidate_repro=same(12))
    assert small.reproduction is not None and partial.reproduction is not None
    assert partial.reproduction.evaluated == 12 and partial.reproduction.population == 200
    assert partial.reproduction.lower == small.reproduction.lower
    assert small.score is not None and partial.score is not None
    assert partial.score.lower == small.score.lower


def test_fail_on_gate_semantics() -> None:
    """fail_on_gate fails the flow on regression, review_failed and inconclusive, unless the
    team accepts inconclusive (``inconclusive = "pass"``)."""
    assert gate(verdicts=verdicts(2, 9)).fails_flow()
    assert gate(judge_degraded=True).fails_flow()
    assert not gate(verdicts=verdicts(30, 8, 22)).fails_flow()
    assert gate(verdicts=verdicts(5, 5, 1)).fails_flow()
    accepting = GateThresholds(inconclusive="pass")
    assert not gate(verdicts=verdicts(5, 5, 1), thresholds=accepting).fails_flow()


def test_thresholds_from_pyproject(tmp_path: Path) -> None:
    """[tool.bughunt.gate] sets the thresholds; a bad value names file and field."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.bughunt.gate]\nalpha = 0.01\nmargin = 0.2\ninconclusive = "pass"\n'
    )
    t = load_gate_thresholds(tmp_path)
    assert (t.alpha, t.margin, t.inconclusive) == (0.01, 0.2, "pass")
    (tmp_path / "pyproject.toml").write_text('[tool.bughunt.gate]\ninconclusive = "maybe"\n')
    with pytest.raises(InputError) as info:
        load_gate_thresholds(tmp_path)
    assert "tool.bughunt.gate.inconclusive" in str(info.value)
    (tmp_path / "pyproject.toml").write_text("[tool.bughunt.gate]\nalpha = 2\n")
    with pytest.raises(InputError) as info:
        load_gate_thresholds(tmp_path)
    assert "tool.bughunt.gate.alpha" in str(info.value) and "pyproject.toml" in str(info.value)
