"""The nightly flow on Prefect (test harness)."""

from __future__ import annotations

import pytest

from flows.nightly import STAGES, nightly_flow
from ledger import Ledger
from tests.conftest import ROOT


@pytest.mark.usefixtures("prefect_harness")
def test_nightly_records_run_and_names_missing_stages(ledger: Ledger) -> None:
    """A nightly run writes running → completed rows and lists every stage it did not run."""
    result = nightly_flow(corpus=str(ROOT / "corpus" / "demo"), ledger=str(ledger.path))
    assert result.stages_run + result.stages_not_built == [
        s for s in STAGES if s in result.stages_run or s in result.stages_not_built
    ]
    assert set(result.stages_run) | set(result.stages_not_built) == set(STAGES)
    rows = ledger.query(
        "SELECT status, message FROM runs WHERE run_id = ? ORDER BY recorded_at", [result.run_id]
    )
    assert [r["status"] for r in rows] == ["running", "completed"]
    for stage in result.stages_not_built:
        assert stage in rows[-1]["message"]
