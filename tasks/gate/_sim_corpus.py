"""Finite corpora for the gate's simulation, built so the true mean pair score is exact.

A corpus of N cases is split as evenly as possible over six bug categories.
Each category has its own offset from the corpus's mean score and its own
tie rate (the offsets average out); its wins, ties and losses are whole
counts, adjusted one half-point at a time until the corpus's mean pair score
is exactly the one asked for.

Each case also holds the probability that each version's test reproduces its
bug (:class:`Reproduction`). The ``fixed`` corpus has probabilities of 0 or 1
only, fixed outcomes in counts (60% both versions, 20% neither, 10% only the
candidate, 10% only the baseline): equal rates, spread evenly over the
categories. The stochastic ones are the agents this product exists for, an
LLM agent that writes another test on another run: ``equal`` (both versions
reproduce a case with the same probability, 0.1, 0.5 or 0.9) and
``differing`` (the candidate better on half the cases and worse on the
other half, equal on average). A stochastic corpus may also be shifted so
the candidate's rate is lower by a given amount (the pass test's boundary).

A simulated PR reads the corpus in one of two ways (:class:`Verdicts`): its
pair scores as they stand (``fixed``), or drawn afresh for every case from
its category's win, tie and loss rates (``noisy``, the default: a verdict is
a noisy measurement). Reproduction outcomes are drawn afresh in every PR
from the cases' probabilities (:func:`draw_repro`; fixed ones stay fixed).
"""

from __future__ import annotations

import dataclasses
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


class Reproduction(StrEnum):
    """How the versions' reproduction tests behave on a simulated corpus's cases."""

    FIXED = "fixed"
    """Each case's outcomes are fixed (:data:`REPRO_MIX`): every PR sees the same ones."""
    EQUAL = "equal"
    """Both versions reproduce a case with the same probability: 0.1 on 40% of the cases, 0.5
    on 20%, 0.9 on 40%; each PR draws each outcome afresh."""
    DIFFERING = "differing"
    """The candidate is better by 0.4 on half the cases and worse by 0.4 on the other half
    (candidate, baseline: 0.9, 0.5 and 0.5, 0.1 on a quarter each; 0.5, 0.9 and 0.1, 0.5 on a
    quarter each): equal on average, each PR draws each outcome afresh."""


_STOCHASTIC: dict[Reproduction, tuple[tuple[float, float, float], ...]] = {
    Reproduction.EQUAL: ((0.4, 0.1, 0.1), (0.2, 0.5, 0.5), (0.4, 0.9, 0.9)),
    Reproduction.DIFFERING: (
        (0.25, 0.9, 0.5),
        (0.25, 0.5, 0.1),
        (0.25, 0.5, 0.9),
        (0.25, 0.1, 0.5),
    ),
}
"""(share of cases, candidate's probability, baseline's) per group. Each table's groups are
symmetric (the candidate's mean equals the baseline's when the symmetric groups are as
large): :func:`_groups` keeps them so, whatever the corpus size."""

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
    """Cases by which versions reproduce the bug (a ``fixed`` corpus); the measure is
    (c − b + 1)/2 per case."""

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
    """A finite corpus: each case's pair score and each version's chance to reproduce it."""

    true_score: float
    scores: NDArray[np.float64]
    categories: tuple[CategoryMix, ...]
    reproduction: ReproMix
    """The fixed outcomes' counts (of a ``fixed`` corpus; a stochastic one's are all 0)."""
    candidate_p: NDArray[np.float64]
    """Each case's probability that the candidate's test reproduces the bug."""
    baseline_p: NDArray[np.float64]
    """Each case's probability that the baseline's test reproduces the bug."""

    @property
    def repro(self) -> NDArray[np.float64]:
        """Each case's expected reproduction measure, (p_c − p_b + 1)/2 (its value, when fixed)."""
        expected: NDArray[np.float64] = (self.candidate_p - self.baseline_p + 1.0) / 2
        return expected

    def stochastic(self) -> bool:
        """Whether some case's outcome is drawn (a probability strictly between 0 and 1)."""
        p = np.concatenate([self.candidate_p, self.baseline_p])
        return bool(((p > 0) & (p < 1)).any())

    def rate_gap(self) -> float:
        """The candidate's mean reproduction rate minus the baseline's."""
        return float(self.candidate_p.mean() - self.baseline_p.mean())


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


def _spread(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """``values`` placed at golden-ratio positions: spread evenly over the categories' blocks."""
    size = values.size
    spread = np.argsort((np.arange(size) * _GOLDEN) % 1.0, kind="stable")
    out = np.empty(size)
    out[spread] = values
    return out


def _fixed_reproduction(size: int) -> tuple[ReproMix, NDArray[np.float64], NDArray[np.float64]]:
    """Exact counts of REPRO_MIX (the discordant ones equal) and each version's outcome."""
    discordant = round(REPRO_MIX["candidate_only"] * size)
    both = round(REPRO_MIX["both"] * size)
    mix = ReproMix(
        both=both,
        neither=size - both - 2 * discordant,
        candidate_only=discordant,
        baseline_only=discordant,
    )
    # Candidate only, baseline only, then the agreeing cases (both first).
    candidate = [1.0] * discordant + [0.0] * discordant + [1.0] * both + [0.0] * mix.neither
    baseline = [0.0] * discordant + [1.0] * discordant + [1.0] * both + [0.0] * mix.neither
    return mix, _spread(np.array(candidate)), _spread(np.array(baseline))


def _groups(
    table: tuple[tuple[float, float, float], ...], size: int
) -> tuple[list[int], list[float], list[float]]:
    """Cases per group of a stochastic table and each group's two probabilities: near its
    shares, a group and its mirror (the two probabilities swapped) equally large, so the two
    versions' mean rates are equal; cases left over go to a group where the versions agree,
    or to one more group at 0.5 each when the table has none."""
    counts = [int(share * size) for share, _, _ in table]
    for i, (_, c, b) in enumerate(table):
        mirror = next(j for j, (_, c2, b2) in enumerate(table) if (c2, b2) == (b, c))
        counts[i] = counts[mirror] = min(counts[i], counts[mirror])
    candidate, baseline = [c for _, c, _ in table], [b for _, _, b in table]
    agreeing = next((i for i, (_, c, b) in enumerate(table) if c == b), None)
    if agreeing is None:
        counts, candidate, baseline = [*counts, 0], [*candidate, 0.5], [*baseline, 0.5]
        agreeing = len(counts) - 1
    counts[agreeing] += size - sum(counts)
    return counts, candidate, baseline


def with_reproduction(corpus: SimCorpus, model: Reproduction, *, gap: float = 0.0) -> SimCorpus:
    """``corpus`` with ``model``'s reproduction outcomes; with a ``gap`` (a stochastic model
    only), the candidate's mean rate lower than the baseline's by it, each of its
    probabilities scaled down by one factor."""
    size = corpus.scores.size
    if model is Reproduction.FIXED:
        if gap:
            raise ValueError("gap: a fixed corpus's reproduction rates stay equal")
        mix, candidate, baseline = _fixed_reproduction(size)
        return dataclasses.replace(
            corpus, reproduction=mix, candidate_p=candidate, baseline_p=baseline
        )
    counts, c, b = _groups(_STOCHASTIC[model], size)
    candidate, baseline = _spread(np.repeat(c, counts)), _spread(np.repeat(b, counts))
    target = float(baseline.mean()) - gap
    if gap < 0 or target <= 0:
        raise ValueError(f"gap: {gap:g} must be at least 0 and below {baseline.mean():g}")
    candidate = candidate * (target / candidate.mean())
    none = ReproMix(both=0, neither=0, candidate_only=0, baseline_only=0)
    return dataclasses.replace(
        corpus, reproduction=none, candidate_p=candidate, baseline_p=baseline
    )


def draw_repro(
    corpus: SimCorpus, order: NDArray[np.int64], rng: np.random.Generator
) -> NDArray[np.float64]:
    """The reproduction measures of the cases in ``order`` (any shape of case indices) as a PR
    sees them: each version's outcome drawn afresh from its probability, independently. A
    fixed corpus's are its own, and draw nothing from ``rng``."""
    if not corpus.stochastic():
        fixed: NDArray[np.float64] = corpus.repro[order]
        return fixed
    candidate = rng.random(order.shape) < corpus.candidate_p[order]
    baseline = rng.random(order.shape) < corpus.baseline_p[order]
    drawn: NDArray[np.float64] = (candidate.astype(np.float64) - baseline + 1.0) / 2
    return drawn


def build_corpus(size: int, score: float) -> SimCorpus:
    """A corpus of ``size`` cases with a mean pair score of exactly ``score`` and the fixed
    reproduction outcomes (:func:`with_reproduction` gives it others).

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
    reproduction, candidate, baseline = _fixed_reproduction(size)
    return SimCorpus(
        true_score=score,
        scores=scores,
        categories=mixes,
        reproduction=reproduction,
        candidate_p=candidate,
        baseline_p=baseline,
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
