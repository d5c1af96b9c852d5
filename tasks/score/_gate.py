"""The PR gate (docs/operations.md, issue [8]): pass, regression, review_failed, nothing_to_evaluate.

It keeps two things apart: a *finding* (the candidate is judged worse, or
reproduces fewer bugs, with significance) and a *failure to review* (too many
pairs could not be judged or run). The second fails closed with its own exit
code and never claims the change regresses.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bughunt.config import load_section
from bughunt.models import ReproOutcome
from bughunt.stats import sign_test
from tasks.score.pairs import ScoreSummary


class GateOutcome(StrEnum):
    PASS = "pass"  # noqa: S105  (a gate outcome, not a password)
    REGRESSION = "regression"
    REVIEW_FAILED = "review_failed"
    NOTHING_TO_EVALUATE = "nothing_to_evaluate"


EXIT_CODES: dict[GateOutcome, int] = {
    GateOutcome.PASS: 0,
    GateOutcome.REGRESSION: 1,
    GateOutcome.REVIEW_FAILED: 3,
    GateOutcome.NOTHING_TO_EVALUATE: 0,
}


class GateThresholds(BaseModel):
    """``[tool.bughunt.gate]``: when a difference is a finding, when a review failed."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    alpha: float = Field(default=0.05, gt=0, lt=1)
    """Significance level of the sign test (judged pairs) and of the reproduction test."""
    max_unreviewed: float = Field(default=0.25, ge=0, le=1)
    """Largest share of pairs (or of cases) that may go unjudged (or unrun) before the review fails."""


def load_gate_thresholds(path: str | Path | None = None) -> GateThresholds:
    """Gate thresholds from ``[tool.bughunt.gate]``; defaults where unset."""
    return load_section(GateThresholds, "gate", path)


class GateDecision(BaseModel):
    """The PR gate's decision and what a reviewer reads."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    outcome: GateOutcome
    """pass, regression, review_failed or nothing_to_evaluate."""
    exit_code: int
    """0 (pass, nothing to evaluate), 1 (regression), 3 (review failed)."""
    message: str
    """What a reviewer reads: the decision and the evidence for it."""


def _decide(outcome: GateOutcome, message: str) -> GateDecision:
    return GateDecision(outcome=outcome, exit_code=EXIT_CODES[outcome], message=message)


def reproduction_test(
    baseline: Mapping[str, ReproOutcome], candidate: Mapping[str, ReproOutcome]
) -> tuple[int, int, float | None]:
    """Paired exact test on cases both versions decided (McNemar's, as a sign test).

    Returns (cases only the baseline reproduced, cases only the candidate
    reproduced, two-sided p). Flaky and error cases are left out on both sides.
    """
    decided = {ReproOutcome.REPRODUCED, ReproOutcome.NOT_REPRODUCED}
    lost = won = 0
    for case, b in baseline.items():
        c = candidate.get(case)
        if b not in decided or c not in decided:
            continue
        if b is ReproOutcome.REPRODUCED and c is ReproOutcome.NOT_REPRODUCED:
            lost += 1
        elif c is ReproOutcome.REPRODUCED and b is ReproOutcome.NOT_REPRODUCED:
            won += 1
    return lost, won, sign_test(won, lost)


def _unrun_problem(
    baseline_repro: Mapping[str, ReproOutcome],
    candidate_repro: Mapping[str, ReproOutcome],
    thresholds: GateThresholds,
) -> str | None:
    """Why the review failed on reproductions, when too many could not be run."""
    cases = max(1, len(candidate_repro))
    unrun = sum(1 for o in candidate_repro.values() if o is ReproOutcome.ERROR)
    unrun += sum(1 for o in baseline_repro.values() if o is ReproOutcome.ERROR)
    if unrun / (2 * cases) > thresholds.max_unreviewed:
        return f"{unrun} of {2 * cases} reproductions could not be run or had no usable report"
    return None


def _unjudged_problem(
    score: ScoreSummary | None, judge_degraded: bool, thresholds: GateThresholds
) -> str | None:
    """Why the review failed on judging, when too many pairs went unjudged or the breaker opened."""
    if score is None or not score.pairs:
        return None
    share = score.unscored / score.pairs
    if not (share > thresholds.max_unreviewed or judge_degraded):
        return None
    why = [f"{score.unscored} of {score.pairs} pairs could not be judged"]
    if judge_degraded:
        why.append("the judge's circuit breaker opened")
    return " and ".join(why)


def _judge_finding(score: ScoreSummary | None, thresholds: GateThresholds) -> str | None:
    """The finding that the judge prefers the baseline with significance, when it does."""
    if score is None or score.sign_test_p is None:
        return None
    if not (score.baseline_wins > score.candidate_wins and score.sign_test_p < thresholds.alpha):
        return None
    return (
        f"the judge prefers the baseline in {score.baseline_wins} of {score.decisive} "
        f"decisive pairs (sign test p = {score.sign_test_p:.3g} < {thresholds.alpha})"
    )


def _repro_finding(lost: int, won: int, p: float | None, thresholds: GateThresholds) -> str | None:
    """The finding that the candidate reproduces fewer bugs with significance, when it does."""
    if p is not None and lost > won and p < thresholds.alpha:
        return (
            f"the candidate stops reproducing {lost} bugs the baseline reproduces and gains {won} "
            f"(paired exact test p = {p:.3g} < {thresholds.alpha})"
        )
    return None


def _pass_message(score: ScoreSummary | None, won: int, lost: int) -> str:
    """What a reviewer reads when the gate passes: wins, ties and reproductions."""
    parts = []
    if score is not None:
        rate = f"{score.win_rate:.0%}" if score.win_rate is not None else "no decisive pair"
        parts.append(
            f"candidate wins {score.candidate_wins} of {score.decisive} decisive pairs ({rate}), "
            f"{score.ties} ties, {score.unscored} unscored"
        )
    parts.append(f"reproduction: {won} cases gained, {lost} lost")
    return "PASS: no significant regression — " + "; ".join(parts) + "."


def decide_gate(
    *,
    planned_cases: int,
    score: ScoreSummary | None,
    baseline_repro: Mapping[str, ReproOutcome],
    candidate_repro: Mapping[str, ReproOutcome],
    judge_degraded: bool,
    thresholds: GateThresholds,
) -> GateDecision:
    """The gate from the run's evidence. Failures to review are checked before findings."""
    if planned_cases == 0:
        return _decide(
            GateOutcome.NOTHING_TO_EVALUATE, "Nothing to evaluate: the plan selects no case."
        )
    problems = [
        problem
        for problem in (
            _unrun_problem(baseline_repro, candidate_repro, thresholds),
            _unjudged_problem(score, judge_degraded, thresholds),
        )
        if problem is not None
    ]
    if problems:
        return _decide(
            GateOutcome.REVIEW_FAILED,
            "REVIEW FAILED — this is a failure to review, not a finding that the change "
            "regresses: "
            + "; ".join(problems)
            + ". Re-run when the judge and sandbox are healthy.",
        )
    lost, won, p = reproduction_test(baseline_repro, candidate_repro)
    findings = [
        finding
        for finding in (_judge_finding(score, thresholds), _repro_finding(lost, won, p, thresholds))
        if finding is not None
    ]
    if findings:
        return _decide(GateOutcome.REGRESSION, "REGRESSION: " + "; ".join(findings) + ".")
    return _decide(GateOutcome.PASS, _pass_message(score, won, lost))
