"""Finite corpora for the gate's simulation, built so the true mean pair score is exact.

A corpus of N cases is split as evenly as possible over six bug categories.
Each category has its own offset from the corpus's mean score and its own
tie rate (the offsets average out); its wins, ties and losses are whole
counts, adjusted one half-point at a time until the corpus's mean pair score
is exactly the one asked for. Reproduction outcomes are fixed counts (60%
both versions, 20% neither, 10% only the candidate, 10% only the baseline),
so the two reproduction rates are equal, spread evenly over the categories.

A simulated PR reads the corpus in one of two ways (:class:`Verdicts`): its
pair scores as they stand (``fixed``), or drawn afresh for every case from
its category's win, tie and loss rates (``noisy``, the default: a verdict is
a noisy measurement). Reproduction outcomes are the corpus's in both.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from bughunt.models import BugCategory


class Verdicts(StrEnum):
    """How a simulated PR's pair scores come from its corpus."""

    NOISY = "noisy"
    """Each case's pair score drawn afresh in every PR from its category's rates of wins, ties
    and losses (the corpus's counts over its cases): the expected corpus mean is exactly the
    true score, a PR's observed mean varies around it."""
    FIXED = "fixed"
    """Each case's pair score is the corpus's: a PR only reorders the cases."""


@dataclass(frozen=True, slots=True)
class Category:
    """A category's departure from the corpus mean and its share of ties."""

    name: BugCategory
    offset: float
    tie_rate: float


CATEGORIES: tuple[Category, ...] = (
    Category(BugCategory.COMPARISON_OPERATOR, -0.15, 0.10),
    Category(BugCategory.OFF_BY_ONE, -0.09, 0.30),
    Category(BugCategory.CONDITION_REMOVED, -0.03, 0.50),
    Category(BugCategory.EXCEPTION_HANDLING, +0.03, 0.40),
    Category(BugCategory.RETURN_VALUE, +0.09, 0.25),
    Category(BugCategory.STATE_MUTATION, +0.15, 0.15),
)
"""Offsets sum to 0; a corpus's mean is then met exactly by the adjustment."""

REPRO_MIX = {"both": 0.6, "neither": 0.2, "candidate_only": 0.1, "baseline_only": 0.1}
"""Shares of cases by which versions reproduce the bug (the rates are equal: 70% each)."""

_GOLDEN = (5**0.5 - 1) / 2


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class CategoryMix(_Out):
    """One category's pairs in a simulated corpus."""

    category: BugCategory
    """The bug category."""
    cases: int
    """Cases in it."""
    wins: int
    """Pairs the candidate wins (score 1)."""
    ties: int
    """Tied pairs (score ½)."""
    losses: int
    """Pairs the baseline wins (score 0)."""


class ReproMix(_Out):
    """Cases by which versions reproduce the bug; the measure is (c − b + 1)/2 per case."""

    both: int
    """Both versions reproduce it (measure ½)."""
    neither: int
    """Neither does (measure ½)."""
    candidate_only: int
    """Only the candidate does (measure 1)."""
    baseline_only: int
    """Only the baseline does (measure 0)."""


@dataclass(frozen=True, slots=True)
class SimCorpus:
    """A finite corpus: each case's pair score and reproduction measure."""

    true_score: float
    scores: NDArray[np.float64]
    repro: NDArray[np.float64]
    categories: tuple[CategoryMix, ...]
    reproduction: ReproMix


def exact_score(score: float, size: int) -> int | None:
    """``2·score·size`` (the corpus's total in half points) when whole, else ``None``."""
    half_points = 2 * score * size
    whole = round(half_points)
    return whole if abs(half_points - whole) < 1e-9 and 0 <= whole <= 2 * size else None


def _category_sizes(size: int) -> list[int]:
    base, extra = divmod(size, len(CATEGORIES))
    return [base + (i < extra) for i in range(len(CATEGORIES))]


def _half_points(sizes: list[int], score: float, target: int) -> list[int]:
    """Each category's total in half points: near its offset mean, summing to ``target``."""
    points = [
        min(2 * n, max(0, round(2 * (score + c.offset) * n)))
        for n, c in zip(sizes, CATEGORIES, strict=True)
    ]
    gap, i = target - sum(points), 0
    while gap:  # one half point at a time, round robin; always ends since 0 ≤ target ≤ 2N
        k, step = i % len(points), 1 if gap > 0 else -1
        if 0 <= points[k] + step <= 2 * sizes[k]:
            points[k] += step
            gap -= step
        i += 1
    return points


def _mix(category: Category, cases: int, points: int) -> CategoryMix:
    """Wins, ties and losses with ``points`` half points, ties near the category's rate."""
    room = min(cases, points, 2 * cases - points)  # more ties would need negative wins or losses
    ties = min(round(category.tie_rate * cases), room)
    if (points - ties) % 2:  # wins are whole: ties share the parity of the half points
        ties += 1 if ties < room else -1
    wins = (points - ties) // 2
    return CategoryMix(
        category=category.name, cases=cases, wins=wins, ties=ties, losses=cases - ties - wins
    )


def _reproduction(size: int) -> tuple[ReproMix, NDArray[np.float64]]:
    """Exact counts of REPRO_MIX (the discordant ones equal) and each case's measure."""
    discordant = round(REPRO_MIX["candidate_only"] * size)
    both = round(REPRO_MIX["both"] * size)
    mix = ReproMix(
        both=both,
        neither=size - both - 2 * discordant,
        candidate_only=discordant,
        baseline_only=discordant,
    )
    values = np.array([1.0] * discordant + [0.0] * discordant + [0.5] * (size - 2 * discordant))
    # Golden-ratio positions spread the discordant cases over the categories' blocks.
    spread = np.argsort((np.arange(size) * _GOLDEN) % 1.0, kind="stable")
    measure = np.empty(size)
    measure[spread] = values
    return mix, measure


def build_corpus(size: int, score: float) -> SimCorpus:
    """A corpus of ``size`` cases with a mean pair score of exactly ``score``.

    Raises ``ValueError`` when no such corpus exists (``2·score·size`` not
    whole) or ``size`` is smaller than the number of categories.
    """
    target = exact_score(score, size)
    if target is None or size < len(CATEGORIES):
        raise ValueError(f"no corpus of {size} cases has a mean pair score of exactly {score:g}")
    sizes = _category_sizes(size)
    points = _half_points(sizes, score, target)
    mixes = tuple(_mix(c, n, p) for c, n, p in zip(CATEGORIES, sizes, points, strict=True))
    scores = np.concatenate([np.repeat([1.0, 0.5, 0.0], [m.wins, m.ties, m.losses]) for m in mixes])
    reproduction, measure = _reproduction(size)
    return SimCorpus(
        true_score=score,
        scores=scores,
        repro=measure,
        categories=mixes,
        reproduction=reproduction,
    )


def _category_blocks(corpus: SimCorpus) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """For every case, where its category's block of scores starts and how long it is."""
    sizes = np.array([m.cases for m in corpus.categories], dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    return np.repeat(starts, sizes), np.repeat(sizes, sizes)


def draw_scores(
    corpus: SimCorpus, order: NDArray[np.int64], rng: np.random.Generator, verdicts: Verdicts
) -> NDArray[np.float64]:
    """The pair scores of the cases in ``order`` (any shape of case indices) as a PR sees them.

    ``fixed``: the corpus's own. ``noisy``: each one drawn afresh, independently, from
    its category's wins, ties and losses: a uniformly chosen score of the category's
    block (the corpus holds its categories' scores in blocks, in order), so a case
    scores 1, ½ or 0 with its category's shares. Only ``noisy`` uses ``rng``.
    """
    if verdicts is Verdicts.FIXED:
        scores: NDArray[np.float64] = corpus.scores[order]
        return scores
    starts, sizes = _category_blocks(corpus)
    within = (rng.random(order.shape) * sizes[order]).astype(np.int64)
    picks = starts[order] + np.minimum(within, sizes[order] - 1)  # u·n may round up to n
    drawn: NDArray[np.float64] = corpus.scores[picks]
    return drawn
