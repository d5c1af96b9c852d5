"""Statistics every stage shares: Wilson intervals and the paired sign test.

Both come from scipy (``binomtest``) rather than hand-written formulas.
"""

from __future__ import annotations

from scipy.stats import binomtest

Interval = tuple[float, float]


def wilson(successes: int, n: int, confidence: float = 0.95) -> Interval | None:
    """Wilson score interval for ``successes`` out of ``n``; ``None`` when ``n`` is 0.

    Raises ``ValueError`` when ``successes`` is outside ``[0, n]``.
    """
    if n == 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} outside [0, {n}]")
    ci = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))


def rate(successes: int, n: int) -> float | None:
    """``successes / n``, or ``None`` (never 0) when ``n`` is 0."""
    return successes / n if n else None


def sign_test(wins: int, losses: int) -> float | None:
    """Two-sided exact sign test p-value over decisive pairs; ``None`` with no decisive pair."""
    n = wins + losses
    if n == 0:
        return None
    return float(binomtest(wins, n, 0.5, alternative="two-sided").pvalue)
