"""The HTML report: well-formed, self-contained (no script, no external URL), hostile text escaped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest
from markupsafe import escape

from tasks.outcomes import summarize
from tasks.report import RunSummary
from tasks.report._charts import charts, run_labels
from tasks.report._escape import clip
from tasks.report._render import render_html, render_markdown
from tasks.report.runs import History
from tasks.score import JudgeHealth
from tests.tasks.report.conftest import hostile_strings

VOID = {"meta", "link", "br", "hr", "img", "input", "col", "area", "base", "wbr", "source"}
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
URL = re.compile(r"(?i)\b(?:https?|ftp|file|data|javascript)\s*:|//[a-z0-9]")


@dataclass
class Page(HTMLParser):
    """A strict walk over the document: every end tag must close the innermost open element."""

    tags: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    stack: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    styles: list[str] = field(default_factory=list)
    _in_style: bool = False

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        if tag not in VOID:
            self.stack.append(tag)
        self._in_style = tag == "style"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()
        self._in_style = False

    def handle_data(self, data: str) -> None:
        (self.styles if self._in_style else self.text).append(data)


def parse(text: str) -> Page:
    """The document, walked."""
    page = Page()
    page.feed(text)
    page.close()
    return page


def test_html_is_well_formed(rendered_html: str) -> None:
    """Every element is closed in order, and the document is one <html> with head and body."""
    page = parse(rendered_html)
    assert page.errors == [] and page.stack == []
    assert rendered_html.startswith("<!doctype html>")
    names = [t for t, _ in page.tags]
    assert names[:2] == ["html", "head"] and "body" in names


def test_html_has_a_strict_csp_and_no_script(rendered_html: str) -> None:
    """The CSP meta forbids everything but inline styles and data images; no script, no handler."""
    page = parse(rendered_html)
    metas = [
        a for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert [m["content"] for m in metas] == [CSP]
    assert all(
        t not in ("script", "iframe", "object", "embed", "link", "img", "foreignobject")
        for t, _ in page.tags
    )
    assert not [(t, k) for t, a in page.tags for k in a if k.lower().startswith("on")]
    assert "<script" not in rendered_html.lower()


def test_html_has_no_external_url(rendered_html: str) -> None:
    """No attribute and no CSS names a URL; links are in-page fragments only."""
    page = parse(rendered_html)
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            if name in ("href", "xlink:href", "src"):
                assert value.startswith("#"), (tag, name, value)
            assert not URL.search(value) or name == "content", (tag, name, value)
    css = "".join(page.styles)
    assert "@import" not in css and not re.search(r"url\((?!#)", css) and not URL.search(css)


def test_hostile_strings_appear_escaped(rendered_html: str) -> None:
    """Each hostile string shows as its text (entity-escaped in the source), never as markup."""
    page = parse(rendered_html)
    shown = "".join(page.text)
    for s in hostile_strings():
        cut = clip(s)
        assert str(escape(cut)) in rendered_html or str(escape(clip(s, 160))) in rendered_html, s
        assert cut in shown or clip(s, 160) in shown, s
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered_html
    assert "&lt;img src=x onerror=alert(1)&gt;" in rendered_html


def test_every_chart_is_an_inline_svg(rendered_html: str) -> None:
    """The four history charts are figures holding an inline <svg> with a viewBox."""
    page = parse(rendered_html)
    ids = [a.get("id") for t, a in page.tags if t == "figure"]
    assert ids == ["chart-win-rate", "chart-repro", "chart-flakes", "chart-consistency"]
    svgs = [a for t, a in page.tags if t == "svg"]
    assert len(svgs) == 4 and all("viewBox" in a or "viewbox" in a for a in svgs)


def test_element_ids_are_unique(rendered_html: str) -> None:
    """No two elements share an id (the charts' ids are prefixed per chart)."""
    ids = [a["id"] for _, a in parse(rendered_html).tags if "id" in a]
    assert len(ids) == len(set(ids))


def test_empty_history_shows_no_history_yet(summary: RunSummary) -> None:
    """Without history each chart says 'No history yet' and no SVG is drawn."""
    text = render_html(summary, History())
    assert text.count("No history yet") == 4 and "<svg" not in text


def test_charts_are_deterministic(history: History) -> None:
    """The same history draws the same SVG bytes (fixed hash salt, no date)."""
    first, second = charts(history), charts(history)
    assert [c.svg for c in first] == [c.svg for c in second]


@pytest.mark.parametrize("field", ["win_rate", "repro", "flakes", "consistency"])
def test_one_empty_series_leaves_the_others(history: History, field: str) -> None:
    """An empty series is 'no history yet' while the other charts are still drawn."""
    drawn = [c.svg is not None for c in charts(history.model_copy(update={field: []}))]
    assert drawn.count(False) == 1


def test_a_run_with_nothing_renders(summary: RunSummary) -> None:
    """A run with no verdict, case, record, flaky test or probe renders both formats, saying so."""
    bare = summary.model_copy(
        update={
            "headline": None,
            "repro": [],
            "cases": [],
            "rejected_cases": [],
            "outcomes": summarize([]),
            "flaky": [],
            "probes": [],
            "health": JudgeHealth(
                calls_by_status={},
                cache_hits=0,
                calls_sent=0,
                requests=0,
                degraded=False,
                degraded_reason=None,
            ),
        }
    )
    page = render_html(bare, History())
    assert parse(page).errors == []
    assert "The judge did not score this run" in page and "No bias probe was measured" in page
    text = render_markdown(bare, History())
    assert "no rate — no case passed or failed outright" in text
    assert "Circuit breaker: closed" in text and "None: no test touched by this run" in text


def test_same_day_runs_have_distinct_labels(history: History) -> None:
    """Two runs on one day get date-and-time x labels (and the run id's end when the minute
    is shared too); a day with one run keeps its short date."""
    last = history.win_rate[-1]
    later = last.model_copy(
        update={"run_id": "nightly-20261130T140000Z-b0b0b0", "run_at": last.run_at.replace(hour=14)}
    )
    same_minute = last.model_copy(update={"run_id": "nightly-20261130T020000Z-c1c1c1"})
    points = [(p.run_id, p.run_at) for p in (*history.win_rate, later, same_minute)]
    labels = run_labels(points)
    assert len(set(labels)) == len(labels)
    assert labels[-3:] == ["11-30 02:00 1a2b3c", "11-30 14:00", "11-30 02:00 c1c1c1"]
    assert labels[-4] == "11-29"
    svg = charts(history.model_copy(update={"win_rate": [*history.win_rate, later]}))[0].svg
    assert svg is not None
    assert ">11-30 02:00<" in svg and ">11-30 14:00<" in svg
