"""Past runs, read from the ledger: one row per run (``bughunt runs``), a run id resolved
from a prefix, the nightly before a run, and the series of past runs the report's charts draw
(docs/report.md#history)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.report.runs._history import (
        ConsistencyPoint as ConsistencyPoint,
        FlakePoint as FlakePoint,
        History as History,
        ReproPoint as ReproPoint,
        WinRatePoint as WinRatePoint,
        load_history as load_history,
    )
    from tasks.report.runs._runs import (
        RunRow as RunRow,
        list_runs as list_runs,
        previous_nightly as previous_nightly,
        resolve_run_id as resolve_run_id,
    )


__getattr__ = lazy_names(globals())
