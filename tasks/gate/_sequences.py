"""The gate's sequential core, shared by the gate and its simulation: the four score
sequences of a run's cases in evaluation order, and the tests on them after each case.

Both measures take the with-replacement form of the bound: their bounds are
about the score and the reproduction rates the two versions would get on cases
like these, not about the values this run happened to draw. A verdict is a
noisy measurement (the judge answers differently on another call), and so is a
reproduction: an LLM agent writes another test on another run, which may
reproduce the bug where this one did not. The without-replacement form, built
from the observed values as if they were fixed, is wrong under that noise
(14% false passes on noisy verdicts; 14–19% false regressions on agents that
reproduce each case with the same probability, both at alpha 5%).
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
    seqs: Sequences, thresholds: GateThresholds
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """(score shown below ½, reproduction shown worse) after each case, each at alpha/2."""
    a = thresholds.alpha / REGRESSION_TESTS
    return (
        rejected(seqs.score_high, population=WITH_REPLACEMENT, m=0.5, alpha=a, side=Side.BELOW),
        rejected(seqs.repro_high, population=WITH_REPLACEMENT, m=0.5, alpha=a, side=Side.BELOW),
    )


def pass_tests(
    seqs: Sequences, thresholds: GateThresholds
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
            population=WITH_REPLACEMENT,
            m=0.5 - margin / 2,
            alpha=a,
            side=Side.ABOVE,
        ),
    )


def gate_steps(
    seqs: Sequences, thresholds: GateThresholds
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """(regression shown, pass shown) after each case, once shown staying shown.

    Every bound is with replacement (see the module's docstring). Regression: the score's upper bound < ½, or the reproduction measure's
    upper bound < ½, each at alpha/2. Pass: the score's lower bound ≥ ½ −
    margin and the reproduction rate not lower by more than the margin, each
    at alpha.
    """
    score_down, repro_down = regression_tests(seqs, thresholds)
    score_ok, repro_ok = pass_tests(seqs, thresholds)
    return score_down | repro_down, score_ok & repro_ok
