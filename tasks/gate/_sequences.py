"""The gate's sequential core, shared by the gate and its simulation: the four score
sequences of a run's cases in evaluation order, and the tests on them after each case.

The two measures take different forms of the bound. A verdict is a noisy
measurement (the judge answers differently on another call), so the score's
bound is the with-replacement form, about the score the candidate would get
on cases like these; the without-replacement form, built from the observed
scores, is wrong under that noise (14% false passes measured at alpha 5%). A
case's reproduction outcome is already de-noised (repeated executions, the
flake ledger turns an unstable test into a missing result), so the
reproduction bound is the without-replacement form over the planned cases:
about this run's reports on this plan, and tighter near its end.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from bughunt.models import VerdictOutcome
from bughunt.sequential import WITH_REPLACEMENT, Side, rejected
from tasks.gate._settings import GateThresholds

REGRESSION_TESTS = 2
"""The regression family (score, reproduction) shares the gate's alpha (Bonferroni)."""

PAIR_SCORE: dict[VerdictOutcome, float] = {
    VerdictOutcome.CANDIDATE: 1.0,
    VerdictOutcome.TIE: 0.5,
    VerdictOutcome.BASELINE: 0.0,
}
"""A pair's score: 1 when the candidate wins, ½ for a tie, 0 when the baseline wins."""


class Sequences(BaseModel):
    """A run's cases in evaluation order, as the four score sequences the gate tests.

    ``*_low`` count a missing result as 0 (the pass tests), ``*_high`` as 1
    (the regression tests). Arrays of shape ``(..., T)``.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    score_low: NDArray[np.float64]
    score_high: NDArray[np.float64]
    repro_low: NDArray[np.float64]
    repro_high: NDArray[np.float64]


def regression_tests(
    seqs: Sequences, population: int, thresholds: GateThresholds
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """(score shown below ½, reproduction shown worse) after each case, each at alpha/2."""
    a = thresholds.alpha / REGRESSION_TESTS
    return (
        rejected(seqs.score_high, population=WITH_REPLACEMENT, m=0.5, alpha=a, side=Side.BELOW),
        rejected(seqs.repro_high, population=population, m=0.5, alpha=a, side=Side.BELOW),
    )


def pass_tests(
    seqs: Sequences, population: int, thresholds: GateThresholds
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """(score shown ≥ ½ − margin, reproduction shown within the margin) after each case, each
    at alpha (an intersection–union test needs no split)."""
    a, margin = thresholds.alpha, thresholds.margin
    return (
        rejected(
            seqs.score_low, population=WITH_REPLACEMENT, m=0.5 - margin, alpha=a, side=Side.ABOVE
        ),
        rejected(
            seqs.repro_low,
            population=population,
            m=0.5 - margin / 2,
            alpha=a,
            side=Side.ABOVE,
        ),
    )


def gate_steps(
    seqs: Sequences, population: int, thresholds: GateThresholds
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """(regression shown, pass shown) after each case, once shown staying shown.

    ``population`` is the plan's size: the reproduction bounds are without
    replacement from it, the score's with replacement (see the module's docstring).
    Regression: the score's upper bound < ½, or the reproduction measure's
    upper bound < ½, each at alpha/2. Pass: the score's lower bound ≥ ½ −
    margin and the reproduction rate not lower by more than the margin, each
    at alpha.
    """
    score_down, repro_down = regression_tests(seqs, population, thresholds)
    score_ok, repro_ok = pass_tests(seqs, population, thresholds)
    return score_down | repro_down, score_ok & repro_ok
