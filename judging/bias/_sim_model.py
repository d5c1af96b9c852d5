"""The simulated judge's scoring rule (docs/judge-bias.md): exact outcome probabilities.

For an ordered pair (first, second) judged by a judge of family ``F``::

    z = s·(q₁ − q₂) + b_pos + b_len·log₂(w₁/w₂) + b_self·(self₁ − self₂)
    P(first) = σ(z − m),  P(second) = σ(−z − m),  P(tie) = the rest

with ``self = 1`` when a report's family is ``F``. Length control removes the
``b_len`` term exactly (only possible because the term is known here).
Sampling is deterministic: a uniform number from a hash of the call's key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from bughunt.hashing import canonical_json, sha256_bytes
from bughunt.models import Winner


class SimParams(BaseModel):
    """Parameters of the simulated judge (defaults from docs/judge-bias.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    s: float = Field(default=12.0, ge=0.0)
    """Weight of the quality difference q₁ − q₂."""
    b_pos: float = 0.8
    """Bonus of the report shown first (position bias)."""
    b_len: float = 1.2
    """Bonus per doubling of the word count (verbosity bias)."""
    b_self: float = 0.6
    """Bonus of a report of the judge's own family (self-preference)."""
    m: float = Field(default=0.6, ge=0.0)
    """Tie half-width: a tie when the noisy score falls within ±m."""


class Features(Protocol):
    """What the simulated judge reads of a report (``ReportFeatures`` fits)."""

    @property
    def quality(self) -> float: ...
    @property
    def words(self) -> int: ...
    @property
    def family(self) -> str: ...


@dataclass(frozen=True, slots=True)
class SimReport:
    """A report as the simulated judge sees it: quality, word count, family."""

    quality: float
    words: int
    family: str


@dataclass(frozen=True, slots=True)
class Dist:
    """Probabilities of the three answers of one call, in call terms."""

    first: float
    second: float
    tie: float


def sigmoid(x: float) -> float:
    """The logistic function, without overflow for large ``|x|``."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def score(
    first: Features,
    second: Features,
    family: str,
    params: SimParams,
    *,
    length_control: bool = False,
) -> float:
    """The latent score ``z`` of the ordered pair; raises ``ValueError`` on a word count < 1."""
    if first.words < 1 or second.words < 1:
        raise ValueError(f"word counts must be >= 1, got {first.words} and {second.words}")
    z = params.s * (first.quality - second.quality) + params.b_pos
    if not length_control:
        z += params.b_len * math.log2(first.words / second.words)
    own = int(first.family == family) - int(second.family == family)
    return z + params.b_self * own


def distribution(
    first: Features,
    second: Features,
    family: str,
    params: SimParams,
    *,
    length_control: bool = False,
) -> Dist:
    """Exact P(first), P(second), P(tie) of one call by a judge of ``family``."""
    z = score(first, second, family, params, length_control=length_control)
    p_first = sigmoid(z - params.m)
    p_second = sigmoid(-z - params.m)
    return Dist(p_first, p_second, max(0.0, 1.0 - p_first - p_second))


def hashed_uniform(*key: str | int) -> float:
    """A uniform number in [0, 1) fixed by ``key`` (same key, same number, any machine)."""
    digest = sha256_bytes(canonical_json(list(key)))
    return int(digest[:16], 16) / 2.0**64


def draw(dist: Dist, u: float) -> Winner:
    """The answer a uniform number ``u`` picks from ``dist``."""
    if u < dist.first:
        return Winner.FIRST
    if u < dist.first + dist.second:
        return Winner.SECOND
    return Winner.TIE
