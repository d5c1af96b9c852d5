"""Write a read-only query's Arrow result to a file a user names: CSV, Parquet or JSON Lines.

The query runs on a read-only connection with DuckDB's external access off
(:meth:`ledger.Ledger.user_batches`), so DuckDB itself writes nothing; the
batches are written here, by pyarrow, one at a time (memory stays at one
batch, whatever the result's size), into a temporary file beside the target
that is renamed over it only once complete: a failed export leaves no half
file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Any, BinaryIO
from uuid import UUID

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pa_parquet

from bughunt.errors import InputError
from bughunt.outfile import write_output


class ExportFormat(StrEnum):
    """The file formats ``bughunt export`` writes."""

    CSV = "csv"
    PARQUET = "parquet"
    JSONL = "jsonl"


SUFFIXES = {
    ".csv": ExportFormat.CSV,
    ".parquet": ExportFormat.PARQUET,
    ".jsonl": ExportFormat.JSONL,
}
"""The format a file name's suffix implies when none is given."""


def format_for(path: Path, given: ExportFormat | None) -> ExportFormat:
    """``given``, else the one ``path``'s suffix names; :class:`InputError` when neither says."""
    if given is not None:
        return given
    found = SUFFIXES.get(path.suffix.lower())
    if found is None:
        known = ", ".join(SUFFIXES)
        raise InputError(
            f"say --format (csv, parquet, jsonl): the name does not end in one of {known}",
            file=str(path),
            field="format",
        )
    return found


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal | UUID):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"cannot write a {type(value).__name__} as JSON")


def _jsonl(reader: pa.RecordBatchReader, out: BinaryIO) -> int:
    # By hand: pyarrow writes no JSON, and DuckDB's COPY would need the external access the
    # read-only connection keeps off.
    rows = 0
    for batch in reader:
        for row in batch.to_pylist():
            out.write(json.dumps(row, default=_json_value, ensure_ascii=False).encode() + b"\n")
            rows += 1
    return rows


def _written(writer: Any, reader: pa.RecordBatchReader) -> int:
    """Every batch through an Arrow file writer (CSV or Parquet), closed at the end."""
    rows = 0
    with writer:
        for batch in reader:
            writer.write_batch(batch)
            rows += batch.num_rows
    return rows


_WRITERS: dict[ExportFormat, Callable[[pa.RecordBatchReader, BinaryIO], int]] = {
    ExportFormat.CSV: lambda reader, out: _written(pa_csv.CSVWriter(out, reader.schema), reader),
    ExportFormat.PARQUET: lambda reader, out: _written(
        pa_parquet.ParquetWriter(out, reader.schema), reader
    ),
    ExportFormat.JSONL: _jsonl,
}


def write_batches(reader: pa.RecordBatchReader, path: Path, fmt: ExportFormat) -> int:
    """Write every batch of ``reader`` to ``path`` in ``fmt``; the rows written.

    A regular file appears whole or not at all (written beside it, then
    renamed), readable by everyone (0644, like a report); a symlink's target
    is written, the link kept; a FIFO or character device (``/dev/stdout``, a
    pipe) is written as a stream, never replaced (:func:`bughunt.outfile.write_output`).
    A folder, a socket, a block device or a missing parent folder is an
    :class:`InputError` naming it.
    """
    return write_output(path, lambda out: _WRITERS[fmt](reader, out), field="out", stream=True)
