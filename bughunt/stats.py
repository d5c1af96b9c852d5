"""Statistics every stage shares: Wilson intervals and the paired sign test.

Both come from scipy (``binomtest``) rather than hand-written formulas; the
one exception, :func:`case_mean`, says why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Interval = tuple[float, float]


def wilson(successes: int, n: int, confidence: float = 0.95) -> Interval | None:
    """Wilson score interval for ``successes`` out of ``n``; ``None`` when ``n`` is 0.

    Raises ``ValueError`` when ``successes`` is outside ``[0, n]``.
    """
    if n == 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} outside [0, {n}]")
    # late: scipy is slow to import, and most commands never need it
    from scipy.stats import binomtest

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
    from scipy.stats import binomtest  # late, as in wilson()

    return float(binomtest(wins, n, 0.5, alternative="two-sided").pvalue)


def case_mean(
    values: Sequence[float], confidence: float = 0.95
) -> tuple[float | None, Interval | None]:
    """Mean of per-case fractions in [0, 1] (e.g. samples reproduced), with a 95% interval.

    The case is the unit: k samples of one case are one value, never k. When
    every value is 0 or 1 (one sample per case, or samples that agree) this
    is :func:`wilson` over the cases, exactly, with Wilson's coverage (near
    the level, not guaranteed at every rate). Otherwise it is the Wilson score
    formula with the sum of fractions as the successes: a variable in [0, 1]
    with mean p has variance at most p(1 - p), so the interval is at least as
    wide as Wilson's on the same mean, and conservative only with several
    samples per case (the fractions vary less than coins). scipy's
    ``binomtest`` takes whole successes only, hence the formula here.
    """
    n = len(values)
    if n == 0:
        return None, None
    if any(not 0.0 <= v <= 1.0 for v in values):
        raise ValueError("case fractions must lie in [0, 1]")
    total = math.fsum(values)
    if all(v in (0.0, 1.0) for v in values):
        return total / n, wilson(round(total), n, confidence)
    p = total / n
    from scipy.stats import norm  # late, as in wilson()

    z = float(norm.ppf(0.5 + confidence / 2))
    scale = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / scale
    half = z / scale * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return p, (max(0.0, centre - half), min(1.0, centre + half))


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of a family of p-values (``None`` stays ``None`` and is not
    counted in the family): reject where the adjusted p is below alpha and the family's error
    rate is at most alpha.

    Written out (eight lines) rather than taken from statsmodels, which bughunt does not
    otherwise need; scipy has Benjamini–Hochberg but not Holm.
    """
    known = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (len(known) - rank) * p))
        out[i] = running
    return out
