"""Intervals over pairs: Wilson for proportions, MOVER-Wilson for differences.

A net bias is a difference of two proportions. Its interval is built from the
two Wilson intervals by the MOVER method (Newcombe 1998; Zou & Donner 2008):

    L = d − √((p₁ − l₁)² + (u₂ − p₂)² − 2ρ(p₁ − l₁)(u₂ − p₂))
    U = d + √((u₁ − p₁)² + (p₂ − l₂)² − 2ρ(u₁ − p₁)(p₂ − l₂))

with ρ the correlation of the two estimates: −√(p₁p₂ / ((1 − p₁)(1 − p₂)))
when both come from one multinomial sample (favoured / other / tie of the same
pairs), and 0 where the correlation is unknown but positive (two judges on the
same pairs), which makes the interval wider than it need be, never narrower.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bughunt.stats import Interval, rate, wilson


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point value with its 95% interval over ``n`` pairs (``None`` when ``n`` is 0)."""

    value: float | None
    ci: Interval | None
    n: int


def proportion(count: int, n: int) -> Estimate:
    """``count / n`` with its Wilson interval."""
    return Estimate(rate(count, n), wilson(count, n), n)


def mover(p1: float, ci1: Interval, p2: float, ci2: Interval, rho: float = 0.0) -> Interval:
    """MOVER interval of ``p1 − p2`` from the two intervals and their correlation ``rho``."""
    (l1, u1), (l2, u2) = ci1, ci2
    d = p1 - p2
    lo = d - math.sqrt(max(0.0, (p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * rho * (p1 - l1) * (u2 - p2)))
    hi = d + math.sqrt(max(0.0, (u1 - p1) ** 2 + (p2 - l2) ** 2 - 2 * rho * (u1 - p1) * (p2 - l2)))
    return (max(-1.0, lo), min(1.0, hi))


def net_bias(favoured: int, other: int, n: int) -> Estimate:
    """(favoured − other) / n over ``n`` pairs (the rest ties), with its MOVER-Wilson interval.

    Raises ``ValueError`` when ``favoured + other > n`` or a count is negative.
    """
    if favoured < 0 or other < 0 or favoured + other > n:
        raise ValueError(f"counts {favoured} + {other} do not fit in {n} pairs")
    if n == 0:
        return Estimate(None, None, 0)
    p1, p2 = favoured / n, other / n
    ci1, ci2 = wilson(favoured, n), wilson(other, n)
    if ci1 is None or ci2 is None:  # pragma: no cover  (only when n == 0, handled above)
        return Estimate(None, None, n)
    denom = (1 - p1) * (1 - p2)
    rho = -math.sqrt(p1 * p2 / denom) if denom > 0 else 0.0
    return Estimate(p1 - p2, mover(p1, ci1, p2, ci2, rho), n)


def difference(a: Estimate, b: Estimate) -> Estimate:
    """``a − b`` for two proportions of the same pairs, ρ = 0 (conservative when ρ > 0)."""
    if a.value is None or b.value is None or a.ci is None or b.ci is None:
        return Estimate(None, None, min(a.n, b.n))
    return Estimate(a.value - b.value, mover(a.value, a.ci, b.value, b.ci), min(a.n, b.n))
