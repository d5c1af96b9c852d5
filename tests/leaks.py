"""Leak checks: no form of a secret value in a text, bytes or structure.

The forms are computed here independently of ``gateway.secrets`` (the
base64 forms by comparing encodings under different neighbours, not by
bit arithmetic), so a mistake there cannot hide in both.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, quote_plus

from pydantic import BaseModel

FRAGMENT = 12
"""A run of this many characters of the raw value anywhere is a leak too (a cut secret)."""


def _stable_run(encodings: list[str]) -> str:
    """The longest run of positions where every encoding agrees (the value's own characters)."""
    size = min(len(e) for e in encodings)
    best, start = (0, 0), None
    for i in range(size + 1):
        same = i < size and len({e[i] for e in encodings}) == 1
        if same and start is None:
            start = i
        elif not same and start is not None:
            best = max(best, (i - start, start))
            start = None
    length, at = best
    return encodings[0][at : at + length]


def base64_forms(value: str) -> list[str]:
    """The base64 characters of ``value`` at each byte alignment, standard and URL-safe."""
    data = value.encode("utf-8")
    forms = []
    for offset in (0, 1, 2):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encodings = [
                encode(bytes([fill]) * offset + data + bytes([fill]) * 3).decode()
                for fill in (0x00, 0xFF, 0x55, 0xAA)
            ]
            forms.append(_stable_run(encodings))
    return forms


def case_insensitive_forms(value: str) -> list[str]:
    """The value, URL-encoded, JSON-escaped and hex: a leak in any letter case."""
    return [
        value,
        quote(value, safe=""),
        quote(value),
        quote_plus(value),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        value.encode("utf-8").hex(),
    ]


def _texts(where: Any) -> Iterator[str]:
    """Every string in ``where`` (text, bytes, models, containers), and the JSON of the whole."""
    if isinstance(where, BaseModel):
        yield where.model_dump_json()
        yield from _texts(where.model_dump(mode="json"))
        return
    if isinstance(where, bytes):
        yield where.decode("utf-8", "replace")
        return
    if isinstance(where, str):
        yield where
        return
    if isinstance(where, dict):
        for key, item in where.items():
            yield from _texts(key)
            yield from _texts(item)
        yield json.dumps(where, default=str)
        return
    if isinstance(where, list | tuple | set):
        for item in where:
            yield from _texts(item)
        return
    yield str(where)


def leaks(value: str, where: Any) -> list[str]:
    """The forms of ``value`` found in ``where`` (empty when none), each named."""
    found = []
    for text in _texts(where):
        folded = text.casefold()
        for form in case_insensitive_forms(value):
            if form.casefold() in folded:
                found.append(f"{form!r} (any case)")
        for form in base64_forms(value):
            if form in text:
                found.append(f"base64 {form!r}")
        for i in range(0, max(len(value) - FRAGMENT + 1, 0)):
            if value[i : i + FRAGMENT].casefold() in folded:
                found.append(f"fragment {value[i : i + FRAGMENT]!r}")
                break
    return sorted(set(found))


def assert_no_leak(value: str, where: Any, what: str = "") -> None:
    """Fail naming every form of ``value`` (raw, encoded, cut) still in ``where``."""
    found = leaks(value, where)
    assert not found, f"secret leaked{' into ' + what if what else ''}: {', '.join(found)}"
