"""A run's gate from its stages' results: the one place the gate's evidence is assembled, for
the adaptive loop after each batch (``flows._adaptive``) and for the report stage at the end."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tasks.gate._decision import GateDecision, GatePlan, gate_of_rows
from tasks.gate._settings import GateThresholds

if TYPE_CHECKING:
    from tasks.flakes import FlakeResult
    from tasks.score import ScoreResult


@dataclass(frozen=True, slots=True)
class RunEvidence:
    """What a run's gate is decided on: its plan, how far it got, and its stages' results."""

    planned: int
    """Cases the plan holds."""
    order: Sequence[str]
    """The seeded random order of the planned cases."""
    evaluated: int | None
    """How many of ``order`` were evaluated; ``None``: the cases of ``order`` with any result."""
    baseline: str
    """The baseline agent's name."""
    candidate: str
    """The candidate agent's name."""
    scores: Sequence[ScoreResult] = ()
    """The score stages run so far (or their merged result)."""
    flakes: Sequence[FlakeResult] = ()
    """The flake-update stages run so far (or their merged result)."""


def gate_of_run(evidence: RunEvidence, thresholds: GateThresholds) -> GateDecision:
    """The gate from every verdict and reproduction the stages found; the review failed when
    any score stage's judge was degraded (its circuit breaker opened)."""
    return gate_of_rows(
        GatePlan(evidence.planned, evidence.order, evidence.evaluated),
        verdicts=[v for s in evidence.scores for v in s.verdicts],
        reproductions=[r for f in evidence.flakes for r in f.reproductions],
        baseline=evidence.baseline,
        candidate=evidence.candidate,
        judge_degraded=any(s.health.degraded for s in evidence.scores),
        thresholds=thresholds,
    )
