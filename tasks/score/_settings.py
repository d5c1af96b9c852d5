"""How to judge and how to gate: the score stage's settings and the gate's thresholds, apart
from the stage so that the run's parameters (``flows.params``) and a run's input checks import
them without the judges and the statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bughunt.config import load_section
from bughunt.models import Strategy


class ScoreSettings(BaseModel):
    """How to judge (from the run's parameters)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    strategy: Strategy = Strategy.SWAP
    """Judging strategy."""
    k: int = 5
    """Samples per order of the sampling strategies."""
    seed: int = 0
    """Seed of strategy plans and probe pair sets."""
    deadline_s: float = Field(default=90.0, exclude=True)
    """Deadline of one judge call (all attempts). How a call is made, not what it asks:
    not part of the stage's checkpoint identity."""
    max_in_flight: int = Field(default=8, exclude=True)
    """Judge requests in flight at once (not part of the stage's checkpoint identity)."""
    probe_pairs: int = 20
    """Reports used for each of the position and verbosity probes (0: no probes)."""
    refresh: bool = False
    """Send every call again instead of answering from the cache (``--refresh-judge``)."""
    cache_ttl_s: float | None = Field(default=None, ge=0, exclude=True)
    """Cached answers older than this many seconds are not reused (``--judge-cache-ttl``);
    ``None``: no limit. Which answers a stage still to run may reuse, never what a finished
    one computed: not part of the stage's checkpoint identity, like the cache it reads."""


class GateThresholds(BaseModel):
    """``[tool.bughunt.gate]``: the margin, the error rate, and when a review failed."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    """Error rate of the whole gate: of passing a candidate whose score is ½ − margin, and of
    calling a regression on one whose score is ½ (split over the regression tests)."""
    margin: float = Field(default=0.10, gt=0, lt=0.5)
    """How much worse than the baseline a candidate may be and still pass (in mean pair score;
    in reproduction rate, the same share of cases)."""
    max_unreviewed: float = Field(default=0.25, ge=0, le=1)
    """Largest share of pairs (or of cases) that may go unjudged (or unrun) before the review
    fails."""
    inconclusive: Literal["fail", "pass"] = "fail"
    """How ``fail_on_gate`` treats an inconclusive gate: fail the flow run (default) or accept it."""


def load_gate_thresholds(path: str | Path | None = None) -> GateThresholds:
    """Gate thresholds from ``[tool.bughunt.gate]``; defaults where unset."""
    return load_section(GateThresholds, "gate", path)
