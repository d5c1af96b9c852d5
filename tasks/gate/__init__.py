"""The PR gate (docs/gate.md): its decision, the adaptive stopping rule, and its simulation.

The decision and the stopping rule are exported here; the seeded simulation behind
``bughunt simulate gate`` is :mod:`tasks.gate.simulation` (it imports scipy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.gate._decision import GateDecision, GateOutcome, decide_gate, gate_of_rows
    from tasks.gate._evidence import verdict_samples
    from tasks.gate._run import RunEvidence, gate_of_run
    from tasks.gate._settings import GateThresholds, load_gate_thresholds
    from tasks.gate._stopping import (
        Evaluation,
        StopReason,
        evaluation_order,
        interval_decided,
        score_interval,
    )

_WHERE = {
    "GateDecision": "tasks.gate._decision",
    "GateOutcome": "tasks.gate._decision",
    "decide_gate": "tasks.gate._decision",
    "gate_of_rows": "tasks.gate._decision",
    "verdict_samples": "tasks.gate._evidence",
    "RunEvidence": "tasks.gate._run",
    "gate_of_run": "tasks.gate._run",
    "GateThresholds": "tasks.gate._settings",
    "load_gate_thresholds": "tasks.gate._settings",
    "Evaluation": "tasks.gate._stopping",
    "StopReason": "tasks.gate._stopping",
    "evaluation_order": "tasks.gate._stopping",
    "interval_decided": "tasks.gate._stopping",
    "score_interval": "tasks.gate._stopping",
}
"""Each exported name → the module defining it, imported on first use."""

__all__ = [
    "Evaluation",
    "GateDecision",
    "GateOutcome",
    "GateThresholds",
    "RunEvidence",
    "StopReason",
    "decide_gate",
    "evaluation_order",
    "gate_of_rows",
    "gate_of_run",
    "interval_decided",
    "load_gate_thresholds",
    "score_interval",
    "verdict_samples",
]

__getattr__ = lazy_names(globals(), _WHERE)
