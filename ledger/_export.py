"""Write a read-only query's Arrow result to a file a user names: CSV, Parquet or JSON Lines.

The query runs on a read-only connection with DuckDB's external access off
(:meth:`ledger.Ledger.user_export`), so DuckDB itself writes nothing; the
batches are written here, by pyarrow, one at a time (memory stays at one
batch, whatever the result's size), into a temporary file beside the target
that is renamed over it only once complete: a failed export leaves no half
file.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Any, BinaryIO

import orjson
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


def _json_default(value: Any) -> Any:
    """What orjson does not write itself: exact numbers, spans, bytes."""
    if isinstance(value, Decimal):
        # HUGEINT and DECIMAL: a JSON number of exactly these digits (never a float's rounding).
        return orjson.Fragment(str(value).encode()) if value.is_finite() else None
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, pa.MonthDayNano):
        return {"months": value.months, "days": value.days, "nanoseconds": value.nanoseconds}
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"cannot write a {type(value).__name__} as JSON")


def json_text(value: Any) -> bytes:
    """One value as JSON: valid JSON always (NaN and infinities are ``null``, as orjson writes
    them), decimals as exact numbers, times as ISO 8601, spans in seconds, bytes in hex."""
    return orjson.dumps(value, default=_json_default)


def _jsonl(reader: pa.RecordBatchReader, out: BinaryIO) -> int:
    # pyarrow writes no JSON, and DuckDB's COPY would need the external access the read-only
    # connection keeps off: orjson, one row at a time.
    rows = 0
    for batch in reader:
        for row in batch.to_pylist():
            out.write(json_text(row) + b"\n")
            rows += 1
    return rows


def _as_text(kind: pa.DataType) -> bool:
    """Types a CSV cell cannot hold as they are: lists, structs, maps, unions, intervals, bytes."""
    return bool(
        pa.types.is_nested(kind)
        or pa.types.is_interval(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
        or pa.types.is_fixed_size_binary(kind)
    )


def _csv_cell(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.hex()
    return json_text(value).decode()


def _csv_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with every column CSV cannot hold written as JSON text (bytes as hex)."""
    columns = [
        pa.array([_csv_cell(v) for v in column.to_pylist()], pa.string())
        if _as_text(column.type)
        else column
        for column in batch.columns
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _csv(reader: pa.RecordBatchReader, out: BinaryIO) -> int:
    schema = pa.schema(
        [pa.field(f.name, pa.string()) if _as_text(f.type) else f for f in reader.schema]
    )
    rows = 0
    with pa_csv.CSVWriter(out, schema) as writer:
        for batch in reader:
            writer.write_batch(_csv_batch(batch, schema))
            rows += batch.num_rows
    return rows


def _written(writer: Any, reader: pa.RecordBatchReader) -> int:
    """Every batch through an Arrow file writer (Parquet), closed at the end."""
    rows = 0
    with writer:
        for batch in reader:
            writer.write_batch(batch)
            rows += batch.num_rows
    return rows


def _unique_names(schema: pa.Schema) -> None:
    """Refuse rows with two columns of one name: JSON would keep one silently, CSV and Parquet
    would hand readers an ambiguous file."""
    seen: set[str] = set()
    for name in schema.names:
        if name in seen:
            raise InputError(
                f"the rows have two columns named {name!r}; name them apart (… AS other_name)",
                field="query",
            )
        seen.add(name)


_WRITERS: dict[ExportFormat, Callable[[pa.RecordBatchReader, BinaryIO], int]] = {
    ExportFormat.CSV: _csv,
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
    :class:`InputError` naming it; so are rows with two columns of one name.

    Values: JSON Lines is valid JSON (NaN and infinities ``null``), with
    HUGEINT and DECIMAL as exact numbers; in CSV, lists, structs, maps and
    intervals are cells of JSON text and bytes are hex.
    """
    _unique_names(reader.schema)
    return write_output(path, lambda out: _WRITERS[fmt](reader, out), field="out", stream=True)
