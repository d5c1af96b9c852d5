"""Outcome records from small alphabets, so identities collide often."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from bughunt.models import Observation
from tasks.outcomes import record_from_dict

_counter = itertools.count()
BASE = datetime(2026, 1, 1, tzinfo=UTC)

RAW = st.fixed_dictionaries(
    {},
    optional={
        "id": st.sampled_from(["A", "B", "C"]),
        "case_id": st.sampled_from(["c1", "c2", "c3"]),
        "run_id": st.sampled_from(["r1", "r2"]),
        "agent_version": st.sampled_from(["base", "cand"]),
        "kind": st.sampled_from(["repro:buggy"]),
        "test_hash": st.sampled_from(["h1", "h2"]),
        "status": st.sampled_from(["pass", "fail", "error", "timeout", "unknown"]),
        "note": st.sampled_from(["x", "y", "a much longer note"]),
        "extra": st.integers(0, 2),
    },
).filter(lambda d: "id" in d or "case_id" in d)


def make(raw: dict[str, Any], line: int | None = None) -> Observation:
    """An Observation as ingest would store it, with unique provenance."""
    n = next(_counter)
    rec = record_from_dict(
        raw,
        source="gen.jsonl",
        line=line if line is not None else n + 1,
        batch_id="b",
        ingested_at=BASE + timedelta(microseconds=n),
    )
    assert isinstance(rec, Observation)
    return rec


RECORDS = st.lists(RAW, max_size=14).map(lambda raws: [make(r) for r in raws])
