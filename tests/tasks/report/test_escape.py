"""Markdown escaping (md_escape, clip) and the charts' SVG sanitiser, against a real Markdown parser."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings, strategies as st
from markdown_it import MarkdownIt

from bughunt.text import visible
from tasks.report._escape import NEWLINE, MdSafe, UnsafeSvgError, clip, md_escape, sanitize_svg
from tests.tasks.report.conftest import hostile_strings

# CommonMark plus GFM tables and strikethrough: what GitHub and Prefect's UI add.
MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def shown(text: str) -> str:
    """What the escaped text must render as: its characters, on one line, HTML-escaped."""
    one_line = re.sub(r"\r\n|\r|\n", NEWLINE, text.strip())
    one_line = re.sub(r"[\t\v\f]", " ", one_line).replace("\x00", "\ufffd")
    one_line = visible(one_line, keep="")  # every other control shown, as the terminal shows it
    return html.escape(one_line, quote=False).replace('"', "&quot;")


def paragraph(text: str) -> str:
    """markdown-it's HTML for ``text`` as one paragraph."""
    out: str = MD.render(md_escape(text))
    return out


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "See the details: [click](javascript:alert(1))",
        "# Verdict",
        "![x](http://example.com/x.png)",
        "<http://example.com>",
        "`code` and **bold** and _em_ and ~~gone~~",
        "- item",
        "1. item",
        "> quoted",
        "    indented code",
        "---",
        "[ref]: http://example.com",
        "&lt;script&gt; &amp; &#60;",
        "a | b | c",
        "trailing backslash \\",
    ],
)
def test_markdown_constructs_render_as_their_text(text: str) -> None:
    """Links, images, HTML, headings, lists, code, emphasis, entities and pipes show as plain text."""
    assert paragraph(text) == f"<p>{shown(text)}</p>\n"


def test_hostile_report_strings_render_as_text() -> None:
    """Every hostile string of the demo's hostile report renders as a paragraph of its own text."""
    for text in hostile_strings():
        out = paragraph(text)
        assert out == f"<p>{shown(text)}</p>\n"
        assert "<script" not in out and "<img" not in out and "<a " not in out and "<h" not in out


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_any_text_renders_as_itself(text: str) -> None:
    """For any string, the escaped Markdown renders as exactly that string in one paragraph."""
    escaped = md_escape(text)
    assert "\n" not in escaped and "\r" not in escaped
    out = MD.render(escaped)
    expected = shown(text)
    assert out == (f"<p>{expected}</p>\n" if expected else "")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(), min_size=3, max_size=3))
def test_any_text_stays_in_its_table_cell(cells: list[str]) -> None:
    """Escaped text in a GFM table row gives exactly the row's cells, each with its own text."""
    row = "| " + " | ".join(md_escape(c) for c in cells) + " |"
    out = MD.render("| a | b | c |\n| --- | --- | --- |\n" + row + "\n")
    body = out.split("<tbody>")[1] if "<tbody>" in out else ""
    got = re.findall(r"<td>(.*?)</td>", body, flags=re.DOTALL)
    assert got == [shown(c) for c in cells]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("htpsfw.:/@ailoxm-1")), max_size=40))
def test_bare_urls_cannot_autolink(text: str) -> None:
    """No scheme followed by a colon, and no ``www.``, survives unescaped (GFM and marked autolinks)."""
    escaped = md_escape("x " + text)
    assert not re.search(r"(?i)(?:https?|ftp|mailto|xmpp|javascript):|www\.|\w@", escaped)


def test_escape_is_idempotent_on_safe_text() -> None:
    """MdSafe input is returned unchanged (no double escaping); None is empty."""
    once = md_escape("a_b")
    assert md_escape(once) is once and once == "a\\_b"
    assert md_escape(None) == MdSafe("")


def test_clip_cuts_long_text_with_an_ellipsis() -> None:
    """Text over the limit is cut to the limit with an ellipsis; short text and None pass."""
    assert clip("x" * 300, 10) == "x" * 9 + "…"
    assert clip("short", 10) == "short" and clip(None) == ""


SVG = """<?xml version="1.0" encoding="utf-8" standalone="no"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg xmlns:xlink="http://www.w3.org/1999/xlink" width="460pt" height="180pt" viewBox="0 0 460 180" xmlns="http://www.w3.org/2000/svg" version="1.1">
 <metadata><rdf:RDF xmlns:dc="http://purl.org/dc/elements/1.1/"></rdf:RDF></metadata>
 <use xlink:href="#m1" x="1"/><use xlink:href="http://evil.example/x.svg#a"/><a href="https://evil.example">x</a>
</svg>"""


def test_sanitize_svg_drops_external_references() -> None:
    """DOCTYPE, metadata, namespaces, size and every non-fragment href go; fragment refs stay."""
    out = sanitize_svg(SVG)
    assert out.startswith('<svg viewBox="0 0 460 180"')
    assert "http" not in out and "DOCTYPE" not in out and "metadata" not in out
    assert 'xlink:href="#m1"' in out and "width=" not in out


@pytest.mark.parametrize(
    "bad",
    [
        "<script>alert(1)</script>",
        '<g onload="x()"/>',
        "<foreignObject/>",
        'style="fill: url(http://x)"',
    ],
)
def test_sanitize_svg_refuses_active_content(bad: str) -> None:
    """A script, an event handler, a foreign object or an external url() is refused, not embedded."""
    with pytest.raises(UnsafeSvgError):
        sanitize_svg(f'<svg viewBox="0 0 1 1">{bad}</svg>')
