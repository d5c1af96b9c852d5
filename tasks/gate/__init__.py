"""The PR gate (docs/gate.md): its decision, the adaptive stopping rule, and its simulation.

The decision and the stopping rule are exported here; the seeded simulation behind
``bughunt simulate gate`` is :mod:`tasks.gate.simulation` (it imports scipy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.gate._decision import (
        GateDecision as GateDecision,
        GateOutcome as GateOutcome,
        GatePlan as GatePlan,
        decide_gate as decide_gate,
        gate_of_rows as gate_of_rows,
        more_cases_needed as more_cases_needed,
    )
    from tasks.gate._evidence import verdict_samples as verdict_samples
    from tasks.gate._run import RunEvidence as RunEvidence, gate_of_run as gate_of_run
    from tasks.gate._settings import (
        GateThresholds as GateThresholds,
        load_gate_thresholds as load_gate_thresholds,
    )
    from tasks.gate._stopping import (
        Evaluation as Evaluation,
        StopReason as StopReason,
        evaluation_order as evaluation_order,
        interval_decided as interval_decided,
        score_interval as score_interval,
    )


__getattr__ = lazy_names(globals())
