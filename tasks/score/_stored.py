"""Outcome records already in the ledger: read back, disputed, unscored (read-only)."""

from __future__ import annotations

from typing import Any

from bughunt.models import Observation
from ledger import Ledger


def stored_records(
    ledger: Ledger, *, batch: str | None = None, run: str | None = None
) -> list[Observation]:
    """The outcome records of one ingest batch, one run, or (neither) all of them."""
    if batch is not None:
        return ledger.read(Observation, "WHERE batch_id = ?", [batch])
    if run is not None:
        return ledger.read(Observation, "WHERE run_id = ?", [run])
    return ledger.read(Observation)


def conflict_rows(ledger: Ledger) -> list[dict[str, Any]]:
    """Disputed identities over all history (the ``conflicts`` view), oldest dispute first."""
    return ledger.query("SELECT * FROM conflicts ORDER BY disputed_since, identity")


def unscored_rows(ledger: Ledger) -> list[dict[str, Any]]:
    """Unscored cases over all history (the ``unscored`` view), oldest first."""
    return ledger.query("SELECT * FROM unscored ORDER BY unscored_since, case_id")
