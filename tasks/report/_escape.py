"""Escaping untrusted text for Markdown, and sanitising the charts' SVG for HTML.

Every title, reason, note, rationale and identity in a report came from an
agent, a judge, or an ingested file: it is data, and must show as the
characters it is. HTML gets that from Jinja's autoescape. Markdown has no
such thing, so :func:`md_escape` neutralises every construct that could turn
text into markup (docs/report.md, "Escaping", lists the rules):

- ``&``, ``<``, ``>`` become entities: no raw HTML, no ``<script>``, no
  ``<img onerror>``, no autolink ``<http://…>``, no block quote;
- Markdown punctuation is backslash-escaped: ``\\ ` * _ { } [ ] ( ) # + ! | ~ @``,
  so no link, image, emphasis, code span, heading or table cell break;
- a colon right after a letter or digit and before a non-space (``http:``,
  ``javascript:``) and the dot of ``www.`` are escaped, which stops GitHub's
  and marked's bare-URL autolinks;
- line breaks become `` ↵ ``, tabs a space, and the text is stripped, so
  nothing starts a new block (heading, list, code block) and a table cell
  stays one cell; a leading ``-``, ``=`` or ``1.`` is escaped too;
- every other control character (BEL, ESC, C1, bidirectional overrides) is
  shown as a character (:func:`bughunt.text.visible`), as the command line shows it.

The template environment applies this to every ``{{ value }}`` that is not
already :class:`MdSafe` (see ``_render.py``), so forgetting to escape cannot
happen silently; ``| md`` applies it explicitly.
"""

from __future__ import annotations

import re

from bughunt.text import CONTROL, clip as cut, visible

NEWLINE = " ↵ "
"""What a line break in untrusted text shows as in Markdown."""

CLIP = 240
"""Untrusted text in a table is cut to this many characters (with an ellipsis)."""


class MdSafe(str):
    """Text that is already safe to place in Markdown (escaped, or made by bughunt from numbers)."""

    __slots__ = ()


_TOKEN = re.compile(
    r"""
    (?P<nl>\r\n|\r|\n)
    | (?P<ws>[\t\v\f])
    | (?P<nul>\x00)
    | (?P<ctl>["""
    + CONTROL
    + r"""])
    | (?P<ent>[&<>])
    | (?P<colon>(?<=[A-Za-z0-9]):(?=\S))
    | (?P<www>(?<![A-Za-z0-9])(?i:www)\.)
    | (?P<punct>[\\`*_{}\[\]()\#+!|~@])
    """,
    re.VERBOSE,
)
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_LEADING = re.compile(r"^(?:[-=]|\d+[.)])")


def _token(m: re.Match[str]) -> str:
    kind, text = m.lastgroup, m.group()
    if kind == "nl":
        return NEWLINE
    if kind == "ws":
        return " "
    if kind == "nul":
        return "\ufffd"
    if kind == "ctl":
        return visible(text, keep="")
    if kind == "ent":
        return _ENTITIES[text]
    if kind == "www":
        return text[:-1] + "\\."
    return "\\" + text


def md_escape(value: object) -> MdSafe:
    """``value`` as Markdown text that renders as exactly its characters, on one line.

    ``None`` becomes the empty string; :class:`MdSafe` input is returned as is.
    """
    if isinstance(value, MdSafe):
        return value
    if value is None:
        return MdSafe("")
    text = str(value).strip()
    lead = _LEADING.match(text)
    prefix = ""
    if lead:
        # "-" or "1." at the start of a list item would nest a list; escape its marker.
        marker = lead.group()
        prefix, text = marker[:-1] + "\\" + marker[-1], text[len(marker) :]
    return MdSafe(prefix + _TOKEN.sub(_token, text))


def clip(value: object, limit: int = CLIP) -> str:
    """``value`` as text cut to ``limit`` characters with ``…`` (default :data:`CLIP`)."""
    return cut(value, limit)


# --- SVG ---------------------------------------------------------------------

_SVG_DROP = (
    re.compile(r"<\?xml[^>]*\?>\s*"),
    re.compile(r"<!DOCTYPE[^>]*>\s*", re.IGNORECASE),
    re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL),
    re.compile(r"\s+xmlns(?::\w+)?=\"[^\"]*\""),
)
_SVG_SIZE = re.compile(r"(<svg\b[^>]*?)\s+width=\"[^\"]*\"\s+height=\"[^\"]*\"")
_SVG_HREF = re.compile(r"\s(?:xlink:)?href=\"(?!#)[^\"]*\"")
_SVG_FORBIDDEN = re.compile(r"<script|<foreignObject|\son\w+\s*=|javascript:|url\((?!#)", re.I)
_EXTERNAL = re.compile(r"\b(?:https?|ftp|file|data):", re.IGNORECASE)


class UnsafeSvgError(ValueError):
    """A chart's SVG contains something that could run or fetch: it is not embedded."""


def sanitize_svg(svg: str) -> str:
    """Matplotlib's SVG made fit to inline in the report's HTML.

    Drops the XML declaration, the DOCTYPE (which names an external DTD), the
    metadata block (RDF with licence URLs), namespace declarations (the HTML
    parser supplies them) and the fixed width and height (CSS sizes it; the
    viewBox stays). Any ``href`` that is not a fragment (``#id``) is removed.
    Raises :class:`UnsafeSvgError` if a script, event handler, foreign object,
    ``javascript:`` or external ``url(…)``/scheme is left.
    """
    out = svg
    for pattern in _SVG_DROP:
        out = pattern.sub("", out)
    out = _SVG_SIZE.sub(r"\1", out, count=1)
    out = _SVG_HREF.sub("", out)
    bad = _SVG_FORBIDDEN.search(out) or _EXTERNAL.search(out)
    if bad:
        raise UnsafeSvgError(f"chart SVG contains {bad.group()!r}")
    return out.strip()
