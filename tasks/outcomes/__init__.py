"""The outcome contract (docs/outcome-contract.md): outcome records read strictly, summarised
per case by identity, shown as text, and read back from the ledger."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.outcomes._records import (
        BadLine as BadLine,
        ReadResult as ReadResult,
        new_batch_id as new_batch_id,
        read_records as read_records,
        record_from_dict as record_from_dict,
    )
    from tasks.outcomes._stored import (
        conflict_rows as conflict_rows,
        run_observations as run_observations,
        stored_records as stored_records,
        unscored_rows as unscored_rows,
    )
    from tasks.outcomes._summary import (
        CaseState as CaseState,
        OutcomeSummary as OutcomeSummary,
        identity_of as identity_of,
        summarize as summarize,
    )
    from tasks.outcomes._text import render_summary as render_summary


__getattr__ = lazy_names(globals())
