"""The PR gate (docs/gate.md): nothing_to_evaluate, review_failed, regression, pass, inconclusive.

It keeps three things apart: a *finding* (the candidate is worse, with an
anytime-valid bound to show it), *evidence of no harm* (the candidate is not
worse by more than the margin, again shown by a bound), and everything in
between, which is ``inconclusive`` — never a pass. A *failure to review*
(too many pairs could not be judged or run) fails closed with its own exit
code and never claims the change regresses.

The bounds are confidence sequences (:mod:`bughunt.sequential`) over the
cases in the run's seeded random order, so they stay valid when an adaptive
run looks after every batch. A case's pair score is 1 (candidate wins), ½
(tie) or 0; a case that could not be judged or run counts as the worst value
for the test it could pass and the best for the one it could fail, so a
missing result never helps either way. Which form of the bound each measure
takes, and why, is :mod:`tasks.gate._sequences`'s docstring.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from bughunt.models import Reproduction, ReproOutcome, Verdict
from bughunt.sequential import WITH_REPLACEMENT, Side, bound
from tasks.gate._evidence import Evidence, ReproSamples, VerdictSamples, by_case, verdict_samples
from tasks.gate._sequences import REGRESSION_TESTS, pass_tests, regression_tests
from tasks.gate._settings import GateThresholds
from tasks.score.pairs import SPLIT_TIE


class GateOutcome(StrEnum):
    PASS = "pass"  # noqa: S105  (a gate outcome, not a password)
    REGRESSION = "regression"
    REVIEW_FAILED = "review_failed"
    NOTHING_TO_EVALUATE = "nothing_to_evaluate"
    INCONCLUSIVE = "inconclusive"


EXIT_CODES: dict[GateOutcome, int] = {
    GateOutcome.PASS: 0,
    GateOutcome.REGRESSION: 1,
    GateOutcome.REVIEW_FAILED: 3,
    GateOutcome.NOTHING_TO_EVALUATE: 0,
    GateOutcome.INCONCLUSIVE: 4,
}


class GateBounds(BaseModel):
    """One gate measure over the cases evaluated so far, with its anytime-valid bounds."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    mean: float | None
    """Mean over the cases with a result (``None`` when none has one)."""
    lower: float
    """Lower bound at the pass test's level (missing results counted as 0)."""
    upper: float
    """Upper bound at the regression test's level (missing results counted as 1)."""
    known: int
    """Cases with a result."""
    evaluated: int
    """Cases evaluated (with or without a result)."""
    population: int
    """Cases the plan holds. The bounds are about cases like these (with replacement), so
    evaluating the whole plan does not narrow them beyond what that many cases give."""


class GateDecision(BaseModel):
    """The PR gate's decision and what a reviewer reads."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    outcome: GateOutcome
    """pass, regression, review_failed, nothing_to_evaluate or inconclusive."""
    exit_code: int
    """0 (pass, nothing to evaluate), 1 (regression), 3 (review failed), 4 (inconclusive)."""
    message: str
    """What a reviewer reads: the decision and the evidence for it."""
    score: GateBounds | None = None
    """The candidate's mean pair score (win 1, tie ½, loss 0) with its bounds."""
    tie_share: float | None = None
    """Share of judged pairs that were ties (ties pull the score towards ½)."""
    reproduction: GateBounds | None = None
    """½ + (candidate's − baseline's reproduction rate) / 2 over cases, with its bounds."""
    thresholds: GateThresholds | None = None
    """The thresholds it was decided with."""

    def fails_flow(self) -> bool:
        """Whether ``fail_on_gate`` ends the flow run Failed on this outcome."""
        if self.outcome is GateOutcome.INCONCLUSIVE:
            return self.thresholds is None or self.thresholds.inconclusive == "fail"
        return self.exit_code != 0


def _decide(outcome: GateOutcome, message: str, **evidence: object) -> GateDecision:
    return GateDecision.model_validate(
        {"outcome": outcome, "exit_code": EXIT_CODES[outcome], "message": message, **evidence}
    )


def _bounds(
    values: list[float | None],
    low: NDArray[np.float64],
    high: NDArray[np.float64],
    population: int,
    thresholds: GateThresholds,
) -> GateBounds:
    known = [v for v in values if v is not None]
    return GateBounds(
        mean=sum(known) / len(known) if known else None,
        lower=bound(low, population=WITH_REPLACEMENT, alpha=thresholds.alpha, side=Side.ABOVE),
        upper=bound(
            high,
            population=WITH_REPLACEMENT,
            alpha=thresholds.alpha / REGRESSION_TESTS,
            side=Side.BELOW,
        ),
        known=len(known),
        evaluated=len(values),
        population=population,
    )


# ---- failures to review --------------------------------------------------------------------------


def _unrun_problem(
    ev: Evidence,
    baseline: Mapping[str, ReproSamples],
    candidate: Mapping[str, ReproSamples],
    thresholds: GateThresholds,
) -> str | None:
    """Why the review failed on reproductions, when too many could not be run (a case's
    samples count as one reproduction, by the share that could not be run)."""
    cases = max(1, len(ev.cases))
    unrun = sum(ev.unrun(side, c) for c in ev.cases for side in (baseline, candidate))
    if unrun / (2 * cases) > thresholds.max_unreviewed:
        return f"{unrun:.4g} of {2 * cases} reproductions could not be run or had no usable report"
    return None


def _unjudged_problem(ev: Evidence, judge_degraded: bool, thresholds: GateThresholds) -> str | None:
    """Why the review failed on judging: too many pairs unjudged, the breaker opened, or none judged."""
    if not ev.cases:
        return "no pair was judged" if judge_degraded else None
    unjudged = ev.unjudged
    total = len(ev.cases)
    if not (unjudged / total > thresholds.max_unreviewed or judge_degraded or unjudged == total):
        return None
    split = (
        f" ({ev.split:.4g} of them tied only because the judge's calls split between the sides)"
        if ev.split
        else ""
    )
    why = [f"{unjudged:.4g} of {total} pairs could not be judged{split}"]
    if judge_degraded:
        why.append("the judge's circuit breaker opened")
    return " and ".join(why)


# ---- what a reviewer reads -----------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{x:.0%}"


def _score_text(b: GateBounds, tie_share: float | None) -> str:
    mean = f"{b.mean:.2f}" if b.mean is not None else "n/a"
    ties = f", {_pct(tie_share)} ties" if tie_share is not None else ""
    return (
        f"mean pair score {mean} over {b.known} of {b.evaluated} evaluated cases "
        f"(of {b.population} planned{ties}); bounds [{b.lower:.2f}, {b.upper:.2f}]"
    )


def _repro_text(b: GateBounds) -> str:
    if b.mean is None:
        return "reproduction: no case decided by both versions"
    diff = 2 * b.mean - 1
    return (
        f"reproduction rate difference {diff:+.2f} over {b.known} cases decided by both; "
        f"bounds [{2 * b.lower - 1:+.2f}, {2 * b.upper - 1:+.2f}]"
    )


def _regression_findings(
    shown: tuple[bool, bool], score: GateBounds, repro: GateBounds
) -> list[str]:
    """The regression tests that fired, with their bounds (as bisected, to 3 decimals)."""
    out = []
    if shown[0]:
        out.append(f"the score's upper bound {score.upper:.3f} is below 0.5")
    if shown[1]:
        out.append(
            f"the candidate reproduces fewer bugs: the difference's upper bound is "
            f"{2 * repro.upper - 1:+.3f}"
        )
    return out


def more_cases_needed(
    known: int, mean: float, edge: float, threshold: float, towards: Side
) -> float | None:
    """Cases (in all) a measure of ``known`` cases would need for its bound to clear
    ``threshold`` at its observed ``mean``: ``edge`` is its lower bound (``towards`` ABOVE)
    or upper bound (BELOW).

    A bound's half-width shrinks about as 1/√n, so n·(width / gap)² cases
    would bring it to the threshold; ``None`` when the observed mean is on
    the wrong side of it, or on it (that decision is out of reach at this rate).
    """
    if known == 0:
        return None
    if towards is Side.ABOVE:
        gap, width = mean - threshold, mean - edge
    else:
        gap, width = threshold - mean, edge - mean
    return known * (width / gap) ** 2 if gap > 0 else None


def _needed(b: GateBounds, threshold: float, towards: Side) -> float | None:
    """:func:`more_cases_needed` of one of the gate's measures."""
    if b.mean is None:
        return None
    edge = b.lower if towards is Side.ABOVE else b.upper
    return more_cases_needed(b.known, b.mean, edge, threshold, towards)


def _inconclusive_text(score: GateBounds, repro: GateBounds, thresholds: GateThresholds) -> str:
    """The smallest regression this run could have shown, and how many more cases would decide."""
    detectable = max(score.upper - (score.mean if score.mean is not None else 0.5), 0.0)
    parts = [
        f"this run could have shown a regression only if the score were below about "
        f"{max(0.5 - detectable, 0.0):.2f}"
    ]
    to_pass = [
        _needed(score, 0.5 - thresholds.margin, Side.ABOVE),
        _needed(repro, 0.5 - thresholds.margin / 2, Side.ABOVE),
    ]
    to_fail = [_needed(b, 0.5, Side.BELOW) for b in (score, repro)]
    options = [n for n in to_fail if n is not None]
    if all(n is not None for n in to_pass):
        options.append(max(n for n in to_pass if n is not None))
    if options:
        more = max(1, math.ceil(min(options)) - score.evaluated)
        left = score.population - score.evaluated
        tail = "" if more <= left else f", more than the {left} planned cases left"
        parts.append(f"at the observed rates about {more} more cases (pairs) would decide{tail}")
    else:
        parts.append("at the observed rates no number of further cases would decide")
    return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class GatePlan:
    """The cases a gate is decided over: how many the plan holds, in what order, how far it got."""

    planned: int
    """Cases the plan holds."""
    order: Sequence[str]
    """The run's seeded random order of its planned cases."""
    evaluated: int | None = None
    """The first ``evaluated`` of ``order`` were evaluated (a case among them without a verdict
    or a reproduction counts as missing); ``None``: the cases of ``order`` with any result."""


def decide_gate(
    plan: GatePlan,
    *,
    verdicts: Mapping[str, VerdictSamples],
    baseline_repro: Mapping[str, ReproSamples],
    candidate_repro: Mapping[str, ReproSamples],
    judge_degraded: bool,
    thresholds: GateThresholds,
    split_ties: Collection[str | tuple[str, int]] = (),
) -> GateDecision:
    """The gate from the run's evidence, in order: failures to review, regression, pass, inconclusive.

    ``plan`` names the cases evaluated, in the run's order. ``split_ties`` are
    cases (or ``(case, sample)``) whose tie comes only from the judge's calls
    splitting between the sides: unjudged for the gate. A case's value may be
    one per agent sample: the case stays the unit (its mean over samples).
    """
    planned_cases = plan.planned
    if planned_cases == 0:
        return _decide(
            GateOutcome.NOTHING_TO_EVALUATE, "Nothing to evaluate: the plan selects no case."
        )
    ev = Evidence(plan.order, verdicts, baseline_repro, candidate_repro, plan.evaluated, split_ties)
    seqs = ev.sequences()
    score_b = _bounds(ev.score, seqs.score_low, seqs.score_high, planned_cases, thresholds)
    repro_b = _bounds(ev.repro, seqs.repro_low, seqs.repro_high, planned_cases, thresholds)
    # Ties over judged pairs (a case's samples by their share), never over fully judged cases.
    judged = len(ev.cases) - ev.unjudged
    tie_share = ev.ties / judged if judged > 0 else None
    evidence = {
        "score": score_b,
        "tie_share": tie_share,
        "reproduction": repro_b,
        "thresholds": thresholds,
    }
    problems = [
        p
        for p in (
            _unrun_problem(ev, baseline_repro, candidate_repro, thresholds),
            _unjudged_problem(ev, judge_degraded, thresholds),
        )
        if p is not None
    ]
    if problems:
        return _decide(
            GateOutcome.REVIEW_FAILED,
            "REVIEW FAILED — this is a failure to review, not a finding that the change "
            "regresses: "
            + "; ".join(problems)
            + ". Re-run when the judge and sandbox are healthy.",
            **evidence,
        )
    shown = _score_text(score_b, tie_share) + "; " + _repro_text(repro_b)
    score_down, repro_down = regression_tests(seqs, thresholds)
    down = (bool(score_down[-1]), bool(repro_down[-1])) if ev.cases else (False, False)
    ok = all(bool(t[-1]) for t in pass_tests(seqs, thresholds)) and bool(ev.cases)
    if any(down):
        findings = _regression_findings(down, score_b, repro_b)
        return _decide(
            GateOutcome.REGRESSION,
            "REGRESSION: " + "; ".join(findings) + f" — {shown}.",
            **evidence,
        )
    if ok:
        return _decide(
            GateOutcome.PASS,
            f"PASS: the candidate is not worse than the baseline by more than the margin "
            f"{thresholds.margin:g} (score lower bound {score_b.lower:.2f} ≥ "
            f"{0.5 - thresholds.margin:.2f}, reproduction not lower by more than "
            f"{thresholds.margin:g}) — {shown}.",
            **evidence,
        )
    return _decide(
        GateOutcome.INCONCLUSIVE,
        "INCONCLUSIVE: the evidence shows neither a regression nor that the candidate is within "
        f"the margin {thresholds.margin:g} — {shown}; {_inconclusive_text(score_b, repro_b, thresholds)}.",
        **evidence,
    )


def gate_of_rows(
    plan: GatePlan,
    *,
    verdicts: Sequence[Verdict],
    reproductions: Sequence[Reproduction],
    baseline: str,
    candidate: str,
    judge_degraded: bool,
    thresholds: GateThresholds,
) -> GateDecision:
    """The gate from a run's verdict and reproduction rows (after each batch, and at the end)."""

    def outcomes(agent: str) -> dict[str, list[ReproOutcome]]:
        return by_case(
            (r.case_id, r.sample, r.outcome) for r in reproductions if r.agent_version == agent
        )

    return decide_gate(
        plan,
        verdicts=verdict_samples(verdicts),
        baseline_repro=outcomes(baseline),
        candidate_repro=outcomes(candidate),
        judge_degraded=judge_degraded,
        thresholds=thresholds,
        split_ties=[(v.case_id, v.sample) for v in verdicts if v.reason == SPLIT_TIE],
    )
