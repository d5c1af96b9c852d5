"""What is remembered: the DuckDB ledger (docs/ledger.md)."""

from ledger._codec import arrow_to_rows, rows_to_arrow
from ledger._export import ExportFormat, format_for, write_batches
from ledger._migrate import current_version, known_migrations
from ledger._record import RestoreRows, StageInputs, StageRecord
from ledger._store import DEFAULT_PATH, Ledger, default_path, runs_folder

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
