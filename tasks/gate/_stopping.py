"""Adaptive evaluation: the planned cases in seeded random batches, until the evidence decides.

A PR run stops as soon as its gate decides (regression or pass); a nightly
run with ``--until-decided`` once the candidate's score interval excludes ½
or is narrower than the width asked for. Either also stops when the plan is
exhausted or a budget (judge calls, sandbox seconds) would be overrun. The
bounds looked at are confidence sequences (:mod:`bughunt.sequential`), valid
however often they are looked at, so stopping early costs no error rate.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from bughunt.models import VerdictOutcome
from bughunt.sequential import WITH_REPLACEMENT, Side, bound
from tasks.gate._sequences import PAIR_SCORE


class StopReason(StrEnum):
    """Why an evaluation stopped where it did."""

    DECIDED = "decided"
    EXHAUSTED = "plan exhausted"
    JUDGE_BUDGET = "judge-call budget"
    SANDBOX_BUDGET = "sandbox-time budget"
    JUDGE_DEGRADED = "the judge's circuit breaker opened"


class Evaluation(BaseModel):
    """How much of its plan a run evaluated, in what order, and why it stopped there."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    adaptive: bool
    """Evaluated in batches with a stopping rule (a PR run; a nightly with --until-decided)."""
    rule: str
    """What decides: the PR gate, or the nightly's score interval."""
    order_seed: int
    """Seed of the uniformly random order the cases were evaluated in."""
    batch_size: int
    """Cases per batch."""
    planned: int
    """Cases in the plan."""
    evaluated: int
    """Cases evaluated before it stopped."""
    batches: int
    """Batches run."""
    stop: StopReason
    """Why it stopped."""
    judge_calls_sent: int
    """Judge calls that reached a judge (verdict calls; cached ones are free)."""
    sandbox_seconds: float
    """Wall-clock seconds of the sandbox stages run in this attempt."""
    score_interval: tuple[float, float] | None = None
    """A nightly's anytime-valid interval on the mean pair score when it stopped (its
    stopping rule's; a PR run's bounds are the gate's)."""

    def line(self) -> str:
        """One line for the CLI and the report."""
        share = self.evaluated / self.planned if self.planned else 0.0
        how = f"in {self.batches} batches of up to {self.batch_size}" if self.adaptive else ""
        interval = ""
        if self.score_interval is not None:
            low, high = self.score_interval
            interval = f"; mean pair score interval [{low:.2f}, {high:.2f}]"
        return (
            f"evaluated {self.evaluated} of {self.planned} planned cases ({share:.0%}) {how}"
            f" — stopped: {self.stop.value}{interval}; {self.judge_calls_sent} judge calls "
            f"sent, {self.sandbox_seconds:.0f} s in the sandbox"
        ).replace("  ", " ")


def evaluation_order(case_ids: Sequence[str], seed: int) -> list[str]:
    """The cases in a uniformly random order drawn from ``seed`` (independent of their results)."""
    order = sorted(case_ids)
    # Reproducible from the recorded seed by design; nothing here is a secret.
    random.Random(f"bughunt-evaluation-order:{seed}").shuffle(order)  # noqa: S311
    return order


def score_interval(
    order: Sequence[str],
    verdicts: Mapping[str, Sequence[VerdictOutcome]],
    alpha: float,
) -> tuple[float, float]:
    """A two-sided anytime-valid interval (alpha/2 each side) on the mean pair score.

    ``verdicts`` holds each case's verdicts, one per agent sample: a case's
    score is their mean (the case is the unit). Samples without a verdict
    count as 0 for the lower and 1 for the upper bound.
    """
    evaluated = [c for c in order if verdicts.get(c)]

    def mean(case: str, missing: float) -> float:
        values = [PAIR_SCORE.get(v, missing) for v in verdicts[case]]
        return sum(values) / len(values)

    low = [mean(c, 0.0) for c in evaluated]
    high = [mean(c, 1.0) for c in evaluated]
    return (
        bound(low, population=WITH_REPLACEMENT, alpha=alpha / 2, side=Side.ABOVE),
        bound(high, population=WITH_REPLACEMENT, alpha=alpha / 2, side=Side.BELOW),
    )


def interval_decided(interval: tuple[float, float], width: float | None) -> bool:
    """A nightly's stopping rule: the interval excludes ½, or is narrower than ``width``."""
    low, high = interval
    return low > 0.5 or high < 0.5 or (width is not None and high - low < width)
