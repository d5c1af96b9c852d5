"""The gate's thresholds, apart from the gate so that the run's parameters and a run's input
checks (``flows._inputs``) import them without the statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bughunt.config import load_section


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
