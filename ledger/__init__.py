"""What is remembered: the DuckDB ledger (docs/ledger.md).

The names below are imported on first use (PEP 562), so a command that only
opens the ledger and runs a query (``bughunt sql``) imports DuckDB alone, not
pyarrow or the row models behind the codec, the export and the stage records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from ledger._codec import arrow_to_rows as arrow_to_rows, rows_to_arrow as rows_to_arrow
    from ledger._export import (
        ExportFormat as ExportFormat,
        format_for as format_for,
        write_batches as write_batches,
    )
    from ledger._migrate import (
        current_version as current_version,
        known_migrations as known_migrations,
    )
    from ledger._record import (
        RestoreRows as RestoreRows,
        StageInputs as StageInputs,
        StageRecord as StageRecord,
    )
    from ledger._store import (
        DEFAULT_PATH as DEFAULT_PATH,
        Ledger as Ledger,
        default_path as default_path,
        runs_folder as runs_folder,
    )


__getattr__ = lazy_names(globals())
