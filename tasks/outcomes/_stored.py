"""Outcome records already in the ledger: read back, disputed, unscored (read-only)."""

from __future__ import annotations

from typing import Any

from bughunt.models import Observation
from ledger import Ledger

_FROM_RUNS = "coalesce(source = 'sandbox' AND run_id IN (SELECT run_id FROM runs), false)"
"""An observation a nightly or PR run's sandbox stage made (not an ingested record)."""
_RUN_COUNTS = (
    "SELECT count(*) AS observations, count(DISTINCT run_id) AS runs, "
    "max_by(run_id, ingested_at) AS latest_run FROM observations WHERE "
    "coalesce(source = 'sandbox' AND run_id IN (SELECT run_id FROM runs), false)"
)


def stored_records(
    ledger: Ledger, *, batch: str | None = None, run: str | None = None, ingested: bool = False
) -> list[Observation]:
    """The outcome records of one ingest batch, one run, or (neither) all of them; with
    ``ingested``, all of them but the ones runs' sandbox stages made (:func:`run_observations`)."""
    if batch is not None:
        return ledger.read(Observation, "WHERE batch_id = ?", [batch])
    if run is not None:
        return ledger.read(Observation, "WHERE run_id = ?", [run])
    return ledger.read(Observation, f"WHERE NOT {_FROM_RUNS}" if ingested else "")


def run_observations(ledger: Ledger) -> dict[str, Any]:
    """How many observations the runs' sandbox stages made, over how many runs, and the latest
    run's id: executions of reproduction tests on both trees, which an outcome summary over
    cases would read as mixed by design (a test should fail on one tree and pass on the other)."""
    row = ledger.query(_RUN_COUNTS)[0]
    return {k: row[k] for k in ("observations", "runs", "latest_run")}


def conflict_rows(ledger: Ledger) -> list[dict[str, Any]]:
    """Disputed identities over all history (the ``conflicts`` view), oldest dispute first."""
    return ledger.query("SELECT * FROM conflicts ORDER BY disputed_since, identity")


def unscored_rows(ledger: Ledger) -> list[dict[str, Any]]:
    """Unscored cases over all history (the ``unscored`` view), oldest first."""
    return ledger.query("SELECT * FROM unscored ORDER BY unscored_since, case_id")
