"""Pure rendering: a RunSummary and its History in, report text out (Markdown and HTML).

Two Jinja environments over ``templates/``:

- HTML: ``autoescape=True``. Every value is escaped; the only markup passed
  through is the charts' sanitised SVG (``| safe`` in one place).
- Markdown: Jinja has no Markdown autoescape, so the environment's
  ``finalize`` escapes every ``{{ value }}`` with
  :func:`~tasks.report._escape.md_escape` unless it is :class:`MdSafe`:
  text bughunt made from numbers with the formatting filters, and enum
  values (closed sets). Untrusted text cannot reach the output unescaped by
  forgetting a filter.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import Enum
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from bughunt.models import BiasProbe, RunKind
from bughunt.text import visible
from tasks.report import _format as fmt
from tasks.report._counts import NOT_JUDGED
from tasks.report._escape import MdSafe, clip, md_escape
from tasks.report._model import RunSummary
from tasks.report._view import ReproCount, View, build_view
from tasks.report.runs import History

MD_TEMPLATE = "report.md.j2"
HTML_TEMPLATE = "report.html.j2"


def _dt(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC")


def _kind(kind: RunKind) -> str:
    return "PR" if kind is RunKind.PR else str(kind.value)


def _repro_cell(count: ReproCount) -> str:
    return fmt.repro_cell(count.reproduced, count.decided)


def _metric(p: BiasProbe) -> str:
    return fmt.metric_value(p.metric, p.value, p.ci_low, p.ci_high, p.n)


def _rate(value: float | None, low: float | None, high: float | None, none: str = "—") -> str:
    ci = (low, high) if low is not None and high is not None else None
    return fmt.rate_ci(value, ci, none=none)


# Filters that build text from numbers and closed sets only: safe in Markdown as they are.
_TRUSTED: dict[str, Callable[..., str]] = {
    "pct": fmt.pct,
    "interval": fmt.interval,
    "rate_ci": fmt.rate_ci,
    "rate": _rate,
    "p_value": fmt.p_value,
    "significance": fmt.significance,
    "win_sentence": fmt.win_sentence,
    "calibration": fmt.calibration_sentence,
    "win_cell": fmt.win_cell,
    "lc_rate": fmt.lc_rate,
    "repro_sentence": fmt.repro_sentence,
    "repro_cell": _repro_cell,
    "metric": _metric,
    "plural": fmt.plural,
    "num": fmt.num,
    "unseparated": fmt.unseparated_sentence,
    "dt": _dt,
    "kind": _kind,
}


def _md_finalize(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, MdSafe):
        return value
    if isinstance(value, Enum):
        return MdSafe(str(value.value))
    if isinstance(value, bool | int | float):
        return MdSafe(str(value))
    return md_escape(value)


def _md_flag(flag: str) -> MdSafe:
    return MdSafe(fmt.FLAG_TEXT[flag]) if flag in fmt.FLAG_TEXT else md_escape(flag)


def _md_lines(value: object) -> MdSafe:
    """Multi-line untrusted text as a Markdown paragraph: each line escaped, hard breaks between."""
    lines = [md_escape(line) for line in str(value or "").splitlines()]
    return MdSafe("  \n".join(line for line in lines if line))


def _base(autoescape: bool) -> Environment:
    env = Environment(
        loader=PackageLoader("tasks.report", "templates"),
        # Markdown (False) has no autoescape in Jinja: its finalize escapes every value instead.
        autoescape=autoescape,  # noqa: S701
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals["PROBE_LEGEND"] = fmt.PROBE_LEGEND
    env.globals["NOT_JUDGED"] = NOT_JUDGED
    env.filters["clip"] = clip
    env.filters["short"] = lambda h: clip(h, 13)
    return env


@cache
def markdown_env() -> Environment:
    """The Markdown environment: every output escaped unless MdSafe."""
    env = _base(autoescape=False)
    env.finalize = _md_finalize
    for name, fn in _TRUSTED.items():
        env.filters[name] = _safe(fn)
    env.filters["md"] = md_escape
    env.filters["md_lines"] = _md_lines
    env.filters["flag"] = _md_flag
    env.globals["PROBE_LEGEND"] = MdSafe(fmt.PROBE_LEGEND)  # bughunt's own words
    env.globals["NOT_JUDGED"] = MdSafe(NOT_JUDGED)
    return env


def _html_finalize(value: Any) -> Any:
    """Text shows its control characters (as the command line shows them); markup passes."""
    if value is None:
        return ""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value)
    return value


@cache
def html_env() -> Environment:
    """The HTML environment: autoescape on for every template."""
    env = _base(autoescape=True)
    env.finalize = _html_finalize
    env.filters.update(_TRUSTED)
    env.filters["flag"] = fmt.flag_text
    env.filters["pos"] = lambda v: f"{100 * max(0.0, min(1.0, float(v))):.1f}"
    return env


def _safe(fn: Callable[..., str]) -> Callable[..., MdSafe]:
    def wrapped(*args: Any, **kwargs: Any) -> MdSafe:
        return MdSafe(fn(*args, **kwargs))

    return wrapped


def _context(view: View) -> dict[str, Any]:
    return {"v": view, "s": view.s, "h": view.s.headline, "history": view.history}


def render_markdown(summary: RunSummary, history: History) -> str:
    """The Markdown report: every section, the history as small tables (no images)."""
    view = build_view(summary, history, with_charts=False)
    return markdown_env().get_template(MD_TEMPLATE).render(_context(view))


def render_html(summary: RunSummary, history: History) -> str:
    """The self-contained HTML report: inline CSS and SVG charts, no script, no external URL."""
    view = build_view(summary, history, with_charts=True)
    return html_env().get_template(HTML_TEMPLATE).render(_context(view))
