"""Length-controlled win rate on real judges, in the spirit of AlpacaEval's.

A logistic regression of the decisive outcome (1 = the candidate won) on the
length difference x = log₂(candidate words / baseline words), with an
intercept, fitted by Newton's method with a weakly informative penalty (a
normal prior of standard deviation 2.5 on the slope, per doubling of the
length ratio, and 10 on the intercept, as Gelman et al. recommend for
logistic regression): the objective is then strictly concave, so every fit,
every bootstrap resample's included, has one finite optimum and converges.
The length-controlled rate is the model's prediction at x = 0 averaged over
the pairs — σ(intercept) with these terms.

It is an estimate: it removes the part of the length effect that this
straight-line-in-log-ratio model captures, and only on average. It reduces
the verbosity bias; it cannot promise to remove it (a judge that rewards
length in a way the model does not capture, or length that truly tracks
quality, is not separated). The interval is a percentile bootstrap over
decisive pairs with a fixed seed: pairs are the unit, never calls. Every
resample counts: one whose fit did not converge withholds the interval
rather than being dropped (dropping them biases it).

A figure that cannot be trusted is withheld (``value`` None, ``withheld``, the
note says why): fewer than :data:`MIN_SIDE` decisive pairs on either side of equal
length (the prediction at equal length would rest on a handful of pairs), or
an interval as wide as :data:`MAX_WIDTH` or wider.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from bughunt.stats import Interval

MIN_PAIRS = 10
"""Fewer decisive pairs than this: no length-controlled rate."""
PENALTY_INTERCEPT = 1 / 10**2
"""L2 penalty on the intercept: a normal prior of standard deviation 10."""
PENALTY_SLOPE = 1 / 2.5**2
"""L2 penalty on the slope: a normal prior of standard deviation 2.5 per doubling."""
MIN_SIDE = 5
"""Fewer decisive pairs than this with the candidate's report no longer than the baseline's,
or no shorter: the rate at equal length is withheld."""
MAX_WIDTH = 0.5
"""An interval this wide or wider: the rate is withheld (it would say little more than
"somewhere in [0, 1]")."""


@dataclass(frozen=True, slots=True)
class LogitFit:
    """Fitted coefficients of P(candidate wins) = σ(intercept + slope·x)."""

    intercept: float
    slope: float
    converged: bool


class LengthControlled(BaseModel):
    """The length-controlled win rate, its interval, and what limits it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    value: float | None
    """Predicted win rate at equal length; ``None`` when it cannot be estimated."""
    ci: Interval | None
    """95% percentile bootstrap interval over decisive pairs."""
    slope: float | None
    """Change in log-odds of a candidate win per doubling of its relative length."""
    note: str
    """How it was obtained, or why it is missing."""
    withheld: bool = False
    """Estimated, but not shown: too few pairs on a side of equal length, a bootstrap fit
    that did not converge, or an interval too wide to say anything (the note says which)."""


def _sig(z: NDArray[np.float64]) -> NDArray[np.float64]:
    out: NDArray[np.float64] = 0.5 * (1.0 + np.tanh(0.5 * z))  # overflow-free logistic
    return out


def fit_logistic(
    x: NDArray[np.float64], y: NDArray[np.float64], *, max_iter: int = 100
) -> list[LogitFit]:
    """Penalised maximum likelihood of σ(b₀ + b₁x), one fit per row of ``x`` and ``y``.

    ``x`` and ``y`` have shape ``(fits, pairs)`` (or ``(pairs,)`` for one fit).
    Newton's method with step halving, vectorised over fits.
    """
    x2, y2 = np.atleast_2d(x), np.atleast_2d(y)
    fits = x2.shape[0]
    b0, b1 = np.zeros(fits), np.zeros(fits)

    def objective(c0: NDArray[np.float64], c1: NDArray[np.float64]) -> NDArray[np.float64]:
        z = c0[:, None] + c1[:, None] * x2
        ll: NDArray[np.float64] = np.sum(y2 * z - np.logaddexp(0.0, z), axis=1)
        return ll - 0.5 * (PENALTY_INTERCEPT * c0**2 + PENALTY_SLOPE * c1**2)

    current = objective(b0, b1)
    converged = np.zeros(fits, dtype=bool)
    for _ in range(max_iter):
        p = _sig(b0[:, None] + b1[:, None] * x2)
        r, w = y2 - p, p * (1 - p)
        g0 = r.sum(axis=1) - PENALTY_INTERCEPT * b0
        g1 = (r * x2).sum(axis=1) - PENALTY_SLOPE * b1
        h00, h01 = w.sum(axis=1) + PENALTY_INTERCEPT, (w * x2).sum(axis=1)
        h11 = (w * x2 * x2).sum(axis=1) + PENALTY_SLOPE
        det = h00 * h11 - h01 * h01
        s0, s1 = (h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det
        t = np.ones(fits)
        trial = objective(b0 + s0, b1 + s1)
        for _ in range(40):  # halve the step where it does not improve
            worse = trial < current - 1e-12
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
            trial = np.where(worse, objective(b0 + t * s0, b1 + t * s1), trial)
        b0, b1 = b0 + t * s0, b1 + t * s1
        gain, current = trial - current, trial
        scale = max(1, x2.shape[1])
        converged = (np.abs(gain) < 1e-10) & (np.maximum(np.abs(g0), np.abs(g1)) < 1e-6 * scale)
        if converged.all():
            break
    return [
        LogitFit(float(c0), float(c1), bool(ok))
        for c0, c1, ok in zip(b0, b1, converged, strict=True)
    ]


def _predict_at_zero(fit: LogitFit, n: int) -> float:
    # average over pairs of σ(b₀ + b₁·0): every pair predicts the same here
    return float(np.mean(_sig(np.full(n, fit.intercept))))


def _refusal(x: NDArray[np.float64], y: NDArray[np.float64]) -> LengthControlled | None:
    """What to say instead of fitting, when the pairs cannot carry a fit (or need none)."""
    n = len(x)
    if n < MIN_PAIRS:
        return LengthControlled(
            value=None,
            ci=None,
            slope=None,
            note=f"needs at least {MIN_PAIRS} decisive pairs, has {n}",
        )
    if np.ptp(x) == 0 and x[0] != 0:
        note = "every pair has the same length ratio: its effect cannot be separated from the intercept"
        return LengthControlled(value=None, ci=None, slope=None, note=note)
    if y.min() == y.max():
        raw = float(y[0])
        note = "every decisive pair went one way: the length-controlled rate equals the raw rate"
        return LengthControlled(value=raw, ci=None, slope=None, note=note)
    if x.min() > 0 or x.max() < 0:
        side = "longer" if x.min() > 0 else "shorter"
        note = (
            f"the candidate's report is {side} in every decisive pair: predicting at equal "
            "length would extrapolate beyond the data, so no length-controlled rate is given"
        )
        return LengthControlled(value=None, ci=None, slope=None, note=note)
    won, lost = x[y == 1], x[y == 0]
    if won.min() > lost.max() or won.max() < lost.min():
        note = (
            "length separates wins from losses perfectly: the rate at equal length would come "
            "from the prior, not the pairs"
        )
        return LengthControlled(value=None, ci=None, slope=None, note=note)
    shorter, longer = int((x <= 0).sum()), int((x >= 0).sum())
    if min(shorter, longer) < MIN_SIDE:
        few = min(shorter, longer)
        note = (
            f"{few} decisive {'pair' if few == 1 else 'pairs'} with the candidate's report "
            f"{'no longer' if shorter < longer else 'no shorter'} than the baseline's (needs "
            f"{MIN_SIDE} on each side of equal length)"
        )
        return LengthControlled(value=None, ci=None, slope=None, note=note, withheld=True)
    return None


def length_controlled(
    log_ratio: Sequence[float] | NDArray[np.float64],
    candidate_won: Sequence[bool] | NDArray[np.bool_],
    *,
    seed: int = 0,
    resamples: int = 1000,
) -> LengthControlled:
    """Length-controlled candidate win rate over decisive pairs.

    ``log_ratio[i]`` is log₂(candidate words / baseline words) of pair i.
    Returns ``value=None`` with a note when there are fewer than
    :data:`MIN_PAIRS` pairs, when every pair has the same nonzero length ratio
    (length and intercept cannot be told apart), when equal length lies outside
    the observed ratios (no extrapolation), when length alone separates
    wins from losses, or when the fit fails. When every pair went one way the
    rate is the raw rate (0 or 1) with no interval.
    """
    x = np.asarray(log_ratio, dtype=np.float64)
    y = np.asarray(candidate_won, dtype=np.float64)
    n = len(x)
    if n != len(y):
        raise ValueError("log_ratio and candidate_won differ in length")
    refused = _refusal(x, y)
    if refused is not None:
        return refused
    fit = fit_logistic(x, y)[0]
    if not fit.converged or not math.isfinite(fit.intercept):
        return LengthControlled(
            value=None, ci=None, slope=None, note="the regression did not converge"
        )
    rng = np.random.Generator(np.random.PCG64(seed))
    idx = rng.integers(0, n, size=(resamples, n))
    fits = fit_logistic(x[idx], y[idx])
    failed = sum(1 for f in fits if not f.converged)
    method = (
        "logistic regression on log2 word ratio, predicted at equal length; "
        f"bootstrap over {n} pairs, seed {seed}"
    )
    if failed:
        note = f"{failed} of {resamples} bootstrap fits did not converge; {method}"
        return LengthControlled(value=None, ci=None, slope=fit.slope, note=note, withheld=True)
    lo, hi = np.percentile([_predict_at_zero(f, n) for f in fits], [2.5, 97.5])
    if hi - lo >= MAX_WIDTH:
        note = f"its 95% interval {lo:.0%}–{hi:.0%} is {MAX_WIDTH:.0%} wide or more; {method}"
        return LengthControlled(value=None, ci=None, slope=fit.slope, note=note, withheld=True)
    ci: Interval = (float(lo), float(hi))
    return LengthControlled(value=_predict_at_zero(fit, n), ci=ci, slope=fit.slope, note=method)
