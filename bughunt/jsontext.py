"""Strict JSON for text a user or an agent wrote (docs/architecture.md#bad-input).

Python's :mod:`json` reads more than JSON, and some of it silently:

- a key given twice keeps its last value (``{"status": "pass", "status":
  "fail"}`` reads as a fail), so one record can say two things;
- ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON;
- a ``\\ud800`` escape decodes to a lone surrogate, which no UTF-8 column,
  file or prompt can hold, so it fails later, far from the line that holds it;
- nesting a few thousand deep raises :class:`RecursionError` (not a
  :class:`ValueError`), and a value nested hundreds deep that does decode
  breaks whatever recurses over it next.

:func:`loads` refuses each of these with a
:class:`JsonTextError` that names the line and column where known. Every
reader of user or agent JSON goes through them; bughunt's own stored JSON
does not need to.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted (records and reports need a handful)."""

__all__ = ["MAX_DEPTH", "DuplicateKeyError", "JsonTextError", "loads"]


class JsonTextError(ValueError):
    """Text that is not strict JSON; ``line`` and ``column`` are 1-based when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        where = f" (line {line}, column {column})" if line is not None and column else ""
        super().__init__(message + where)


class DuplicateKeyError(JsonTextError):
    """An object gives one key twice: it says two things, so it is refused, not read as the last."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"key {key!r} is given twice in one object")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def _constant(name: str) -> NoReturn:
    raise JsonTextError(f"{name} is not a JSON value")


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant)


def _check(value: Any) -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH` and strings holding lone surrogates."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item)
        elif isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                raise JsonTextError(f"arrays and objects nested deeper than {MAX_DEPTH}")
            if isinstance(item, dict):
                for key in item:
                    _check_text(key)
                stack.extend((child, depth + 1) for child in item.values())
            else:
                stack.extend((child, depth + 1) for child in item)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JsonTextError(
            f"a string holds a lone surrogate (U+{ord(text[exc.start]):04X}), which is not text"
        ) from None


def _decode(text: str, pos: int) -> tuple[Any, int]:
    try:
        value, end = _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise JsonTextError(exc.msg, exc.lineno, exc.colno) from None
    except RecursionError:
        raise JsonTextError(f"arrays and objects nested deeper than {MAX_DEPTH}") from None
    except JsonTextError:
        raise
    except ValueError as exc:  # e.g. an integer longer than Python converts
        raise JsonTextError(str(exc)) from None
    _check(value)
    return value, end


def loads(text: str) -> Any:
    """The one JSON value ``text`` holds (whitespace around it allowed), strictly.

    Raises :class:`JsonTextError` on invalid JSON, a duplicated key, a
    non-finite number, a lone surrogate or nesting deeper than :data:`MAX_DEPTH`.
    """
    start = len(text) - len(text.lstrip(" \t\n\r"))
    value, end = _decode(text, start)
    rest = len(text) - len(text[end:].lstrip(" \t\n\r"))
    if rest != len(text):
        line = text.count("\n", 0, rest) + 1
        column = rest - (text.rfind("\n", 0, rest) + 1) + 1
        raise JsonTextError("extra data after the JSON value", line, column)
    return value
