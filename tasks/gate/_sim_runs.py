"""The gate's simulated runs: orders of a corpus through the gate, decided at its looks.

A run is one uniformly random order of a corpus, its pair scores as the
corpus holds them or drawn afresh (:class:`~tasks.gate._sim_corpus.Verdicts`),
its reproduction measures drawn from the cases' probabilities (fixed outcomes
stay as they are). The gate's core
(:func:`tasks.gate._sequences.gate_steps`, or a stand-in a test injects) says
after every case whether regression or pass is shown; only the looks after
each batch count, and the first look where either holds decides.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from tasks.gate._sequences import Sequences, gate_steps
from tasks.gate._settings import GateThresholds
from tasks.gate._sim_corpus import SimCorpus, Verdicts, draw_repro, draw_scores

Steps = Callable[[Sequences, GateThresholds], tuple[NDArray[np.bool_], NDArray[np.bool_]]]
"""The gate's sequential core: (regression shown, pass shown) after each case."""

ELEMENTS_PER_CHUNK = 1_000_000
"""Simulated cases handled at once (runs × corpus size): bounds the memory of one chunk."""

REGRESSION, PASS, INCONCLUSIVE = 0, 1, 2


def look_points(size: int, batch: int) -> NDArray[np.int64]:
    """Cases evaluated at each look: batch, 2·batch, …, and always the whole corpus last."""
    points = np.arange(batch, size + 1, batch, dtype=np.int64)
    if points.size == 0 or points[-1] != size:
        points = np.append(points, size)
    return points


def decide_runs(
    regression: NDArray[np.bool_], passed: NDArray[np.bool_], looks: NDArray[np.int64]
) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """Each run's outcome (REGRESSION, PASS, INCONCLUSIVE) and the cases it evaluated.

    ``regression`` and ``passed`` are the gate's ``(runs, T)`` arrays; only the
    looks count. At the first look where either holds, regression wins; a run
    no look decides is inconclusive after every case.
    """
    reg, pas = regression[:, looks - 1], passed[:, looks - 1]
    decided = reg | pas
    first = np.argmax(decided, axis=1)
    rows = np.arange(reg.shape[0])
    outcome = np.where(reg[rows, first], REGRESSION, PASS).astype(np.int8)
    any_decided = decided.any(axis=1)
    outcome[~any_decided] = INCONCLUSIVE
    cases = np.where(any_decided, looks[first], looks[-1])
    return outcome, cases


def _horizons(looks: NDArray[np.int64]) -> list[int]:
    """Prefixes to run the gate on: 4, 8, 16, … looks, then every look."""
    counts = [4]
    while counts[-1] < looks.size:
        counts.append(counts[-1] * 2)
    return [int(looks[min(c, looks.size) - 1]) for c in counts]


def _decide_chunk(
    scores: NDArray[np.float64],
    repro: NDArray[np.float64],
    looks: NDArray[np.int64],
    thresholds: GateThresholds,
    steps: Steps,
) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """The runs of one chunk (their pair scores and reproduction measures in drawn order,
    shape ``(runs, N)``), on ever longer prefixes until each is decided.

    The gate is causal (its state after case t depends on the first t cases
    only), so a run decided on a prefix is decided the same on the whole
    order; only the undecided runs go on to the next, longer prefix.
    """
    runs, size = scores.shape
    outcome = np.full(runs, INCONCLUSIVE, dtype=np.int8)
    cases = np.full(runs, size, dtype=np.int64)
    pending = np.arange(runs)
    for horizon in _horizons(looks):
        score, rep = scores[pending, :horizon], repro[pending, :horizon]
        seqs = Sequences(score_low=score, score_high=score, repro_low=rep, repro_high=rep)
        o, c = decide_runs(*steps(seqs, thresholds), looks[looks <= horizon])
        done = o != INCONCLUSIVE
        outcome[pending[done]], cases[pending[done]] = o[done], c[done]
        pending = pending[~done]
        if pending.size == 0:
            break
    return outcome, cases


def run_orders(
    corpus: SimCorpus,
    sims: int,
    rng: np.random.Generator,
    looks: NDArray[np.int64],
    thresholds: GateThresholds,
    steps: Steps,
    verdicts: Verdicts,
) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """``sims`` random orders of the corpus through the gate, in chunks of bounded memory.

    Each chunk draws its orders, then (``noisy``) its pair scores, then (a stochastic
    corpus) its reproduction outcomes, from ``rng``: two runs from the same seed see the
    same orders and the same draws.
    """
    size = corpus.scores.size
    chunk = max(1, ELEMENTS_PER_CHUNK // size)
    outcomes, cases = [], []
    for start in range(0, sims, chunk):
        order = rng.permuted(np.tile(np.arange(size), (min(chunk, sims - start), 1)), axis=1)
        scores = draw_scores(corpus, order, rng, verdicts)
        repro = draw_repro(corpus, order, rng)
        o, c = _decide_chunk(scores, repro, looks, thresholds, steps)
        outcomes.append(o)
        cases.append(c)
    return np.concatenate(outcomes), np.concatenate(cases)


def best_case_pass(
    size: int, thresholds: GateThresholds, batch: int, score: float = 1.0
) -> int | None:
    """Cases after which a corpus of ``size`` identical cases (pair score ``score``, no
    reproduction changed) passes, or ``None`` if it never does.

    Every order of identical cases is the same, so one run is exact.
    """
    x, y = np.full((1, size), score), np.full((1, size), 0.5)
    regression, passed = gate_steps(
        Sequences(score_low=x, score_high=x, repro_low=y, repro_high=y), thresholds
    )
    outcome, cases = decide_runs(regression, passed, look_points(size, batch))
    return int(cases[0]) if outcome[0] == PASS else None


def smallest_passing_corpus(
    thresholds: GateThresholds, batch: int, *, score: float, limit: int = 2_000
) -> int | None:
    """Smallest N on which a candidate with pair score ``score`` on every case and no
    reproduction changed passes (``None`` if none up to ``limit`` does)."""
    sizes = range(1, limit + 1)
    return next((n for n in sizes if best_case_pass(n, thresholds, batch, score) is not None), None)
