"""Untrusted text made fit to show: cut to a length, control characters made visible.

Titles, rationales, outputs, identities and file names come from agents,
judges, ingested files and the file system. Printed raw, their control
characters act on the reader's terminal (OSC 52 writes the clipboard, OSC 8
makes links, ``\\r`` and clear-screen sequences overwrite what was printed,
BEL rings) or reorder what is read (bidirectional overrides). :func:`visible`
shows each as a character instead; the command line (every line it prints),
the Markdown report and the HTML report all use it.
"""

from __future__ import annotations

import re

KEEP = "\n\t"
"""What :func:`visible` keeps by default: line breaks and tabs lay text out, they do no harm."""

# C0 and DEL, C1 (0x9b is a one-byte CSI to some terminals), the bidirectional formatting
# characters and line/paragraph separators (they reorder or break what is read), and lone
# surrogates (bytes that were not UTF-8, kept by Python's surrogateescape: unprintable).
CONTROL = r"\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
"""The characters :func:`visible` shows, as the inside of a regular expression's ``[…]``."""
_PATTERNS: dict[str, re.Pattern[str]] = {}


def _pattern(keep: str) -> re.Pattern[str]:
    found = _PATTERNS.get(keep)
    if found is None:
        kept = "".join(re.escape(c) for c in keep)
        found = re.compile(f"(?![{kept}])[{CONTROL}]" if kept else f"[{CONTROL}]")
        _PATTERNS[keep] = found
    return found


def _shown(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(value: object, keep: str = KEEP) -> str:
    """``value`` as text whose control characters are shown, not obeyed.

    C0 controls and DEL become their Control Pictures (``ESC`` → ``␛``, BEL →
    ``␇``, ``\\r`` → ``␍``); C1 controls, bidirectional formatting characters,
    line and paragraph separators and lone surrogates become ``\\x9b`` /
    ``\\u202e`` escapes. Characters in ``keep`` (default: line break and tab)
    stay. ``None`` becomes ``""``. Printable text, of any script, is unchanged.
    """
    if value is None:
        return ""
    return _pattern(keep).sub(_shown, str(value))


def clip(value: object, limit: int) -> str:
    """``value`` as text cut to ``limit`` characters with ``…``; ``None`` → ``""``."""
    if value is None:
        return ""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
