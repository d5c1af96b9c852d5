"""The PR gate: each outcome from evidence built for it; failures to review come first."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict, Unpack

import pytest

from bughunt.errors import InputError
from bughunt.models import ReproOutcome, Strategy
from tasks.score import (
    GateDecision,
    GateOutcome,
    GateThresholds,
    decide_gate,
    load_gate_thresholds,
)
from tasks.score.pairs import ScoreSummary
from tasks.score.pairs._lc import LengthControlled

R, N, E = ReproOutcome.REPRODUCED, ReproOutcome.NOT_REPRODUCED, ReproOutcome.ERROR


def summary(
    cand: int, base: int, ties: int = 0, unscored: int = 0, p: float | None = None
) -> ScoreSummary:
    from bughunt.stats import sign_test

    return ScoreSummary(
        pairs=cand + base + ties + unscored,
        candidate_wins=cand,
        baseline_wins=base,
        ties=ties,
        unscored=unscored,
        decisive=cand + base,
        win_rate=cand / (cand + base) if cand + base else None,
        win_rate_ci=None,
        sign_test_p=p if p is not None else sign_test(cand, base),
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
    return {f"c{i}": outcome for i in range(n)}


class GateArgs(TypedDict, total=False):
    """Keyword arguments of decide_gate; a test overrides some of them."""

    planned_cases: int
    score: ScoreSummary | None
    baseline_repro: Mapping[str, ReproOutcome]
    candidate_repro: Mapping[str, ReproOutcome]
    judge_degraded: bool
    thresholds: GateThresholds


def gate(**kw: Unpack[GateArgs]) -> GateDecision:
    args: GateArgs = {
        "planned_cases": 20,
        "score": summary(8, 7, 5),
        "baseline_repro": same(20),
        "candidate_repro": same(20),
        "judge_degraded": False,
        "thresholds": GateThresholds(),
    }
    args.update(kw)
    return decide_gate(**args)


def test_pass_when_nothing_is_significant() -> None:
    """Close results pass with exit 0 and say what they rest on."""
    d = gate()
    assert d.outcome is GateOutcome.PASS and d.exit_code == 0
    assert "8 of 15 decisive pairs" in d.message


def test_regression_when_the_judge_prefers_the_baseline_significantly() -> None:
    """The candidate losing 2 of 16 decisive pairs is a regression (exit 1)."""
    d = gate(score=summary(2, 14, 4))
    assert d.outcome is GateOutcome.REGRESSION and d.exit_code == 1
    assert "sign test" in d.message


def test_regression_when_reproduction_drops_significantly() -> None:
    """Losing 8 reproductions and gaining none is a regression even with an even judge."""
    cand = {**same(20), **{f"c{i}": N for i in range(8)}}
    d = gate(candidate_repro=cand)
    assert d.outcome is GateOutcome.REGRESSION and "stops reproducing 8 bugs" in d.message


def test_review_failed_when_judge_cannot_answer() -> None:
    """Half the pairs unjudged is a failure to review (exit 3), never a regression."""
    d = gate(score=summary(1, 9, 0, unscored=10))
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
    d = gate(planned_cases=0, score=None, baseline_repro={}, candidate_repro={})
    assert d.outcome is GateOutcome.NOTHING_TO_EVALUATE and d.exit_code == 0


def test_thresholds_from_pyproject(tmp_path: Path) -> None:
    """[tool.bughunt.gate] sets the thresholds; a bad value names file and field."""
    (tmp_path / "pyproject.toml").write_text("[tool.bughunt.gate]\nalpha = 0.01\n")
    assert load_gate_thresholds(tmp_path).alpha == 0.01
    (tmp_path / "pyproject.toml").write_text("[tool.bughunt.gate]\nalpha = 2\n")
    with pytest.raises(InputError) as info:
        load_gate_thresholds(tmp_path)
    assert "tool.bughunt.gate.alpha" in str(info.value) and "pyproject.toml" in str(info.value)
