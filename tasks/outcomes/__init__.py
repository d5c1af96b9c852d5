"""The outcome contract (docs/outcome-contract.md): outcome records read strictly, summarised
per case by identity, shown as text, and read back from the ledger."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.outcomes._records import (
        BadLine,
        ReadResult,
        new_batch_id,
        read_records,
        record_from_dict,
    )
    from tasks.outcomes._stored import (
        conflict_rows,
        run_observations,
        stored_records,
        unscored_rows,
    )
    from tasks.outcomes._summary import CaseState, OutcomeSummary, identity_of, summarize
    from tasks.outcomes._text import render_summary

_WHERE = {
    "BadLine": "tasks.outcomes._records",
    "ReadResult": "tasks.outcomes._records",
    "new_batch_id": "tasks.outcomes._records",
    "read_records": "tasks.outcomes._records",
    "record_from_dict": "tasks.outcomes._records",
    "conflict_rows": "tasks.outcomes._stored",
    "run_observations": "tasks.outcomes._stored",
    "stored_records": "tasks.outcomes._stored",
    "unscored_rows": "tasks.outcomes._stored",
    "CaseState": "tasks.outcomes._summary",
    "OutcomeSummary": "tasks.outcomes._summary",
    "identity_of": "tasks.outcomes._summary",
    "summarize": "tasks.outcomes._summary",
    "render_summary": "tasks.outcomes._text",
}
"""Each exported name → the module defining it, imported on first use."""

__all__ = [
    "BadLine",
    "CaseState",
    "OutcomeSummary",
    "ReadResult",
    "conflict_rows",
    "identity_of",
    "new_batch_id",
    "read_records",
    "record_from_dict",
    "render_summary",
    "run_observations",
    "stored_records",
    "summarize",
    "unscored_rows",
]

__getattr__ = lazy_names(globals(), _WHERE)
