"""Hypothesis strategies that build any ledger row model from its field types."""

from __future__ import annotations

import types
import typing
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel

# Text the ledger must keep exactly: any Unicode scalar value, NUL excluded
# (DuckDB strings are NUL-terminated at the C API).
TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=40)
JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
DATETIMES = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)


_SCALARS: dict[Any, st.SearchStrategy[Any]] = {
    type(None): st.none(),
    bool: st.booleans(),
    int: st.integers(-(2**63), 2**63 - 1),
    float: st.floats(allow_nan=False, allow_infinity=False),
    str: TEXT,
    datetime: DATETIMES,
}


def for_type(tp: Any) -> st.SearchStrategy[Any]:
    """A strategy for one field annotation (the subset the row models use)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(for_type(a) for a in typing.get_args(tp)))
    if origin is dict:
        return st.dictionaries(TEXT, JSON, max_size=4)
    if origin is list:
        return st.lists(for_type(typing.get_args(tp)[0]), max_size=4)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return st.sampled_from(list(tp))
    if tp in _SCALARS:
        return _SCALARS[tp]
    raise TypeError(f"no strategy for {tp!r}")


def rows(model: type[BaseModel]) -> st.SearchStrategy[BaseModel]:
    """Any valid instance of ``model``."""
    fields = {name: for_type(info.annotation) for name, info in model.model_fields.items()}
    return st.fixed_dictionaries(fields).map(lambda d: model.model_validate(d))
