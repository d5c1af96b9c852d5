"""Cutting untrusted text to a length: the report's table cells and a verdict's rationale."""

from __future__ import annotations


def clip(value: object, limit: int) -> str:
    """``value`` as text cut to ``limit`` characters with ``…``; ``None`` → ``""``."""
    if value is None:
        return ""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
