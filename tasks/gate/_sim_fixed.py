"""The fixed-size design the gate's simulation compares against (docs/gate.md#the-simulation).

It is the gate's own decision rule with fixed-n intervals in place of the
confidence sequences, looked at once: n cases drawn without replacement from
the corpus; **regression** when the pair score's or the reproduction
measure's upper bound at alpha/2 each (Bonferroni, as the gate) is below ½;
otherwise **pass** when the pair score's lower bound at alpha is above
½ − margin *and* the reproduction measure's lower bound at alpha is above
½ − margin/2 (an intersection–union test, as the gate); otherwise
inconclusive. Each bound is the normal approximation

    mean ± z · SE,   SE² = s²/n,

``s²`` the sample variance (divisor n − 1), so a design needs at least two
cases. The form is the gate's: with replacement (a verdict and a
reproduction are noisy measurements, so even all N cases leave the expected
values uncertain). A bound must clear its threshold strictly.

The first n cases of a uniformly random order are a uniform sample without
replacement, so one order per run gives every n at once (running sums). The
pair scores are drawn as the gate's runs draw them
(:func:`tasks.gate._sim_corpus.draw_scores`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from tasks.gate._sequences import REGRESSION_TESTS
from tasks.gate._settings import GateThresholds
from tasks.gate._sim_corpus import SimCorpus, Verdicts, draw_repro, draw_scores

MIN_CASES = 2
"""Fewest cases of a fixed design: the sample variance needs two."""

CHUNK_ELEMENTS = 50_000
"""Simulated cases handled at once (runs × corpus size): small enough to stay in cache."""

_TOLERANCE = 1e-9
"""A bound within this of its threshold does not clear it (the sums are exact; a mean is
one rounding from its true value)."""


def _bounds(
    sums: NDArray[np.float64], squares: NDArray[np.float64], n: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Mean and fixed-n standard error (sample variance)."""
    mean = sums / n
    variance = np.maximum(squares - sums * mean, 0.0) / np.maximum(n - 1, 1)
    return mean, np.sqrt(variance / n)


def _decide(
    x: NDArray[np.float64], y: NDArray[np.float64], thresholds: GateThresholds
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """(regression, pass) of a fixed design on the first n cases, for every n = 1..T.

    ``x`` and ``y`` are the pair scores and reproduction measures of runs in
    their drawn order, shape ``(runs, T)``. Regression is checked first, so a
    run never both passes and regresses; n = 1 decides nothing.
    """
    from scipy.stats import norm  # late: scipy is slow to import; only simulations need it

    n = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
    z_pass = float(norm.ppf(1 - thresholds.alpha))
    z_regression = float(norm.ppf(1 - thresholds.alpha / REGRESSION_TESTS))
    regression = np.zeros(x.shape, dtype=bool)
    passed = np.ones(x.shape, dtype=bool)
    for values, pass_at in ((x, 0.5 - thresholds.margin), (y, 0.5 - thresholds.margin / 2)):
        mean, se = _bounds(np.cumsum(values, axis=-1), np.cumsum(values * values, axis=-1), n)
        regression |= mean + z_regression * se < 0.5 - _TOLERANCE
        passed &= mean - z_pass * se > pass_at + _TOLERANCE
    too_few = n < MIN_CASES
    regression[..., too_few] = False
    passed &= ~regression
    passed[..., too_few] = False
    return regression, passed


def fixed_counts(
    corpus: SimCorpus,
    sims: int,
    rng: np.random.Generator,
    thresholds: GateThresholds,
    verdicts: Verdicts,
    upto: int | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Of ``sims`` seeded runs, how many the fixed design of n cases calls a regression and
    how many it passes, for every n = 1..``upto`` (default: the whole corpus), index n − 1.

    Every n uses the first n cases of the same random orders, and of the same draws of
    their pair scores (common random numbers), so the counts are smooth in n.
    """
    size = corpus.scores.size
    upto = size if upto is None else upto
    if not 1 <= upto <= size:
        raise ValueError(f"upto: a fixed design of {upto} cases from a corpus of {size}")
    regression = np.zeros(upto, dtype=np.int64)
    passed = np.zeros(upto, dtype=np.int64)
    chunk = max(1, CHUNK_ELEMENTS // size)
    for start in range(0, sims, chunk):
        rows = min(chunk, sims - start)
        order = rng.permuted(np.tile(np.arange(size), (rows, 1)), axis=1)[:, :upto]
        scores = draw_scores(corpus, order, rng, verdicts)
        reg, pas = _decide(scores, draw_repro(corpus, order, rng), thresholds)
        regression += reg.sum(axis=0)
        passed += pas.sum(axis=0)
    return regression, passed


def smallest_powered(passed: NDArray[np.int64], sims: int, power: float) -> int:
    """The smallest n whose pass count reaches ``power`` of ``sims``; if none does, every case
    of the corpus: the design that has its power nowhere uses all it has. (The n passing most
    would do worse: with a normal interval on a handful of cases, a lucky spread passes, and
    such a design errs far above its level.)"""
    reached = np.flatnonzero(passed >= power * sims)
    return int(reached[0]) + 1 if reached.size else int(passed.size)
