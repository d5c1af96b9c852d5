"""Rows ↔ Arrow: the one conversion between pydantic rows and ledger tables.

JSON columns (``dict``/``list`` fields) are stored as JSON text; enums as
their values; timestamps as UTC microseconds. The Arrow schema comes from the
table's own column types, so a model and its migration cannot drift apart
silently: a missing column fails the insert by name.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Sequence
from datetime import UTC
from functools import cache
from typing import Any, TypeVar

import pyarrow as pa
from pydantic import BaseModel, TypeAdapter

from bughunt.models import Row

R = TypeVar("R", bound=Row)

_DUCK_TO_ARROW: dict[str, pa.DataType] = {
    "VARCHAR": pa.string(),
    "JSON": pa.string(),
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMP": pa.timestamp("us"),
    "DATE": pa.date32(),
}


def arrow_type(duck_type: str) -> pa.DataType:
    """Arrow type for a DuckDB column type name (the ledger uses a small set)."""
    try:
        return _DUCK_TO_ARROW[duck_type.upper()]
    except KeyError:
        raise ValueError(f"ledger column type {duck_type!r} has no Arrow mapping") from None


@cache
def json_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """Fields of ``model`` stored as JSON text (dicts and lists)."""
    out = []
    for name, info in model.model_fields.items():
        origin = typing.get_origin(info.annotation) or info.annotation
        if origin in (dict, list):
            out.append(name)
    return tuple(out)


@cache
def _adapter(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]  # model is a runtime class


def rows_to_arrow(model: type[R], rows: Sequence[R], schema: pa.Schema) -> pa.Table:
    """Dump ``rows`` of one model into an Arrow table with ``schema`` (bulk, no per-row SQL)."""
    dicts: list[dict[str, Any]] = _adapter(model).dump_python(list(rows), mode="python")
    for field in json_fields(model):
        for d in dicts:
            d[field] = json.dumps(d[field], sort_keys=True, default=str)
    columns = {f.name: _column([d.get(f.name) for d in dicts], f.type) for f in schema}
    return pa.table(columns, schema=schema)


def _column(values: list[Any], type_: pa.DataType) -> pa.Array:
    if pa.types.is_timestamp(type_):
        # Aware datetimes become naive UTC; the ledger's TIMESTAMP columns hold UTC.
        return pa.array(values, pa.timestamp("us", tz="UTC")).cast(type_)
    return pa.array(values, type=type_)


def arrow_to_rows(model: type[R], table: pa.Table) -> list[R]:
    """Validate every row of ``table`` back into ``model`` instances."""
    fields = json_fields(model)
    stamps = [f.name for f in table.schema if pa.types.is_timestamp(f.type) and f.type.tz is None]
    out: list[R] = []
    for d in table.to_pylist():
        for field in fields:
            if isinstance(d.get(field), str):
                d[field] = json.loads(d[field])
        for field in stamps:
            if d.get(field) is not None:
                d[field] = d[field].replace(tzinfo=UTC)
        out.append(model.model_validate(d))
    return out
