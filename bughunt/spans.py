"""Spans of time as people type them: ``30d`` (days) or ``12h`` (hours)."""

from __future__ import annotations

import re
from datetime import timedelta

from bughunt.errors import InputError

_SPAN = re.compile(r"^\s*(\d+)\s*([dh])\s*$")

MAX_SPAN_HOURS = 1000 * 365 * 24
"""The longest span taken: a thousand years."""


def parse_span(text: str, *, field: str) -> timedelta:
    """``30d`` or ``12h`` as a time span; anything else, or a span over a thousand years,
    raises :class:`InputError` naming ``field`` (the option it was given to)."""
    match = _SPAN.match(text)
    if not match:
        raise InputError(
            f"give a number of days or hours, like 30d or 12h (got {text!r})", field=field
        )
    amount = int(match[1])
    hours = amount * 24 if match[2] == "d" else amount
    if hours > MAX_SPAN_HOURS:
        # Larger spans overflow a date (datetime.min is the year 1).
        raise InputError(
            f"at most {MAX_SPAN_HOURS // 24}d, a thousand years (got {text.strip()!r})",
            field=field,
        )
    return timedelta(hours=hours)


TTL_FIELD = "--judge-cache-ttl"
"""The option a judge cache TTL is given as, named in its errors."""


def ttl_seconds(ttl: str | None) -> float | None:
    """A judge cache TTL (``30d``, ``12h``) in seconds; ``None`` without one. A bad span raises
    :class:`InputError` naming ``--judge-cache-ttl``."""
    return None if ttl is None else parse_span(ttl, field=TTL_FIELD).total_seconds()
