"""An agent run's row from its gateway log: requests, refusals (folded ones by their count), tunnels."""

from __future__ import annotations

from typing import Any

from tasks.sandbox._agents import AgentExecution
from tasks.sandbox._result import agent_trace


def test_folded_refusals_count_by_their_count_and_refused_tunnels_count_too() -> None:
    """The gateway folds refusals past its log's bound into one entry with a count: the row
    counts every refusal it stands for, a refused tunnel among them."""
    calls: list[dict[str, Any]] = [
        {"kind": "model", "tokens_in": 10, "tokens_out": 5, "cost": 0.01, "model": "m"},
        {"kind": "model", "refused": "over budget"},
        {"kind": "model", "refused": "bad path", "count": 1_900},
        {"kind": "tunnel"},
        {"kind": "tunnel", "refused": "not allowed"},
    ]
    execution = AgentExecution(got="no report", seconds=1.0, transcript="", calls=calls)
    trace = agent_trace(execution, run_id="r", case_id="c", case_hash=None, agent="a")
    row = trace["agent_run"]
    assert row is not None
    assert (row.requests, row.refused, row.tunnels) == (1, 1 + 1_900 + 1, 1)
    assert (row.tokens_in, row.tokens_out) == (10, 5)
