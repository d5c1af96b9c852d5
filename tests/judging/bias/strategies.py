"""Hypothesis strategies shared by the bias and pairs tests."""

from __future__ import annotations

from hypothesis import strategies as st

from judging.bias import SimParams, SimReport

params = st.builds(
    SimParams,
    s=st.floats(0, 20),
    b_pos=st.floats(-2, 2),
    b_len=st.floats(-2, 2),
    b_self=st.floats(-2, 2),
    m=st.floats(0, 2),
)
"""Any simulated judge."""

reports = st.builds(
    SimReport,
    quality=st.floats(0, 1),
    words=st.integers(1, 5000),
    family=st.sampled_from(["sim-a", "sim-b", "sim-c", "other"]),
)
"""Any report the simulated judge can score."""
