"""How to judge: the score stage's settings, apart from the stage so that the run's parameters
(``flows.params``) and a run's input checks import them without the judges and the statistics."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

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
