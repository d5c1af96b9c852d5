"""Strict JSON: what Python's json module reads silently is refused, with where."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, strategies as st

from bughunt import jsontext
from bughunt.jsontext import MAX_DEPTH, JsonTextError


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"status": "pass", "status": "fail"}', "key 'status' is given twice"),
        ('[{"a": 1}, {"b": 1, "b": 1}]', "key 'b' is given twice"),
        ('{"x": NaN}', "NaN is not a JSON value"),
        ('{"x": -Infinity}', "-Infinity is not a JSON value"),
        ('{"case_id": "c\\ud800"}', "lone surrogate (U+D800)"),
        ('{"c\\udfff": 1}', "lone surrogate (U+DFFF)"),
        ("[" * 100_000 + "]" * 100_000, f"nested deeper than {MAX_DEPTH}"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"nested deeper than {MAX_DEPTH}"),
        ('{"a": 1} {"b": 2}', "extra data after the JSON value"),
        ('{"a": ', "Expecting value"),
        ("1" * 5000, "digits"),
    ],
)
def test_refused_with_a_reason(text: str, says: str) -> None:
    """Each kind of not-quite-JSON is a JsonTextError that says what is wrong."""
    with pytest.raises(JsonTextError, match=None) as caught:
        jsontext.loads(text)
    assert says in str(caught.value)


def test_syntax_errors_name_line_and_column() -> None:
    """A syntax error keeps the decoder's line and column."""
    with pytest.raises(JsonTextError) as caught:
        jsontext.loads('{\n  "a": 1,\n  "b": }')
    assert (caught.value.line, caught.value.column) == (3, 8)


def test_the_deepest_accepted_nesting() -> None:
    """Nesting up to MAX_DEPTH reads; the surrogate pair of a real character is text."""
    assert jsontext.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    assert jsontext.loads('"\\ud83d\\ude00"') == "\N{GRINNING FACE}"


JSON: Any = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)


@given(JSON)
def test_reads_what_json_writes(value: Any) -> None:
    """Any JSON value json.dumps writes (unique keys, finite, shallow) reads back equal."""
    assert jsontext.loads(json.dumps(value)) == value
