"""What is remembered: the DuckDB ledger (docs/ledger.md).

The names below are imported on first use (PEP 562), so a command that only
opens the ledger and runs a query (``bughunt sql``) imports DuckDB alone, not
pyarrow or the row models behind the codec, the export and the stage records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from ledger._codec import arrow_to_rows, rows_to_arrow
    from ledger._export import ExportFormat, format_for, write_batches
    from ledger._migrate import current_version, known_migrations
    from ledger._record import RestoreRows, StageInputs, StageRecord
    from ledger._store import DEFAULT_PATH, Ledger, default_path, runs_folder

_WHERE = {
    "DEFAULT_PATH": "ledger._store",
    "ExportFormat": "ledger._export",
    "Ledger": "ledger._store",
    "RestoreRows": "ledger._record",
    "StageInputs": "ledger._record",
    "StageRecord": "ledger._record",
    "arrow_to_rows": "ledger._codec",
    "current_version": "ledger._migrate",
    "default_path": "ledger._store",
    "format_for": "ledger._export",
    "known_migrations": "ledger._migrate",
    "rows_to_arrow": "ledger._codec",
    "runs_folder": "ledger._store",
    "write_batches": "ledger._export",
}

__all__ = [
    "DEFAULT_PATH",
    "ExportFormat",
    "Ledger",
    "RestoreRows",
    "StageInputs",
    "StageRecord",
    "arrow_to_rows",
    "current_version",
    "default_path",
    "format_for",
    "known_migrations",
    "rows_to_arrow",
    "runs_folder",
    "write_batches",
]

__getattr__ = lazy_names(globals(), _WHERE)
