"""History charts as inline SVG: matplotlib, no pyplot, no JavaScript, no external reference.

Each chart is drawn on its own ``Figure`` (no global pyplot state), saved as
SVG with text kept as text (``svg.fonttype = none``: no glyph paths, no font
files), a per-chart hash salt (so two charts in one page never share an
element id, and the same data gives the same SVG), and no date in the
metadata. :func:`~tasks.report._escape.sanitize_svg` then strips what an
inline SVG must not carry. A series without points gives no SVG: the report
says "no history yet" instead of drawing an empty plot.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from bughunt.models import RunKind
from tasks.report._escape import sanitize_svg
from tasks.report.runs import (
    ConsistencyPoint,
    FlakePoint,
    History,
    ReproPoint,
    WinRatePoint,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

PALETTE = ("#2563eb", "#d97706", "#059669", "#7c3aed", "#dc2626", "#0891b2")
"""Line colours, in series order (blue is the candidate's / the first series')."""

# Typed loosely: matplotlib types rc keys as a Literal union that a dict display cannot meet.
_RC: dict[Any, Any] = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#9ca3af",
    "axes.labelcolor": "#374151",
    "xtick.color": "#4b5563",
    "ytick.color": "#4b5563",
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#e5e7eb",
    "grid.linewidth": 0.8,
    "legend.frameon": False,
}


_STYLE = re.compile(r"<style[^>]*>[^<]*</style>")
_ID_REF = re.compile(r'(\bid="|href="#|url\(#)([^")]+)')


@dataclass(frozen=True, slots=True)
class Chart:
    """One history chart: its anchor, title, caption and SVG (``None`` with no history)."""

    key: str
    title: str
    caption: str
    svg: str | None


@dataclass(frozen=True, slots=True)
class _Series:
    label: str
    values: list[float | None]
    low: list[float | None]
    high: list[float | None]


def _nan(values: Sequence[float | None]) -> list[float]:
    return [math.nan if v is None else v for v in values]


def _tick_label(value: datetime | date) -> str:
    return value.strftime("%m-%d")


def run_labels(runs: Sequence[tuple[str, datetime]]) -> list[str]:
    """One x-axis label per run (run id, time): same-day runs never share one.

    ``11-30`` for a run alone on its day; ``11-30 02:00`` when its day has
    other runs; and the run id's last six characters after that
    (``11-30 02:00 1a2b3c``) when two of that day's runs share the minute
    (run ids end in a random part, ``new_run_id``).
    """
    days = Counter(at.date() for _, at in runs)
    labels = [
        at.strftime("%m-%d %H:%M") if days[at.date()] > 1 else _tick_label(at) for _, at in runs
    ]
    seen = Counter(labels)
    return [
        f"{label} {run_id[-6:]}" if seen[label] > 1 else label
        for label, (run_id, _) in zip(labels, runs, strict=True)
    ]


def _draw(
    key: str,
    xlabels: list[str],
    series: list[_Series],
    *,
    ylabel: str,
    ymax: float = 1.0,
    reference: tuple[float, str] | None = None,
) -> str:
    """One line chart with a 95% band per series over evenly spaced runs (or nights)."""
    # late: matplotlib is slow to import, and only a report draws charts
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    with matplotlib.rc_context({**_RC, "svg.hashsalt": f"bughunt-{key}"}):
        fig = Figure(figsize=(6.4, 2.5), layout="constrained")
        ax: Axes = fig.add_subplot()
        xs = list(range(len(xlabels)))
        for i, s in enumerate(series):
            colour = PALETTE[i % len(PALETTE)]
            ax.fill_between(
                xs, _nan(s.low), _nan(s.high), color=colour, alpha=0.15, linewidth=0, step=None
            )
            ax.plot(xs, _nan(s.values), color=colour, marker="o", markersize=3.5, label=s.label)
        if reference is not None:
            ax.axhline(reference[0], color="#6b7280", linestyle="--", linewidth=0.9)
            ax.annotate(
                reference[1],
                (0, reference[0]),
                xycoords=("axes fraction", "data"),
                xytext=(2, 2),
                textcoords="offset points",
                fontsize=8,
                color="#6b7280",
            )
        ax.set_ylim(0, ymax)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.set_ylabel(ylabel)
        step = max(1, math.ceil(len(xs) / 10))
        if any(len(label) > len("11-30") for label in xlabels):  # times or run ids: tilt them
            ax.set_xticks(xs[::step], xlabels[::step], rotation=30, ha="right")
        else:
            ax.set_xticks(xs[::step], xlabels[::step])
        ax.set_xlim(-0.5, len(xs) - 0.5)
        if len(series) > 1:
            ax.legend(loc="lower left", ncols=min(len(series), 4), fontsize=8)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = sanitize_svg(buf.getvalue())
    # Inline, a <style> in an SVG applies to the whole page: the page's CSS has this rule,
    # scoped. Ids such as figure_1 repeat in every chart: prefix every id and reference.
    svg = _STYLE.sub("", svg, count=1)
    return _ID_REF.sub(lambda m: f"{m.group(1)}{key}-{m.group(2)}", svg)


def win_rate_svg(points: Sequence[WinRatePoint]) -> str | None:
    """Candidate win rate per run with its Wilson band and the 50% line."""
    if not points:
        return None
    s = _Series(
        "candidate",
        [p.win_rate for p in points],
        [p.ci_low for p in points],
        [p.ci_high for p in points],
    )
    labels = run_labels([(p.run_id, p.run_at) for p in points])
    return _draw("win-rate", labels, [s], ylabel="win rate", reference=(0.5, "even"))


def repro_svg(points: Sequence[ReproPoint]) -> str | None:
    """Reproduction rate per run, one line and band per agent version."""
    if not points:
        return None
    runs: dict[str, datetime] = {}
    for p in points:
        runs.setdefault(p.run_id, p.run_at)
    order = sorted(runs, key=lambda r: (runs[r], r))
    versions = sorted({p.agent_version for p in points})
    by = {(p.run_id, p.agent_version): p for p in points}

    def col(v: str, f: Callable[[ReproPoint], float | None]) -> list[float | None]:
        return [f(by[(r, v)]) if (r, v) in by else None for r in order]

    series = [
        _Series(
            v, col(v, lambda p: p.rate), col(v, lambda p: p.ci_low), col(v, lambda p: p.ci_high)
        )
        for v in versions
    ]
    labels = run_labels([(r, runs[r]) for r in order])
    return _draw("repro", labels, series, ylabel="reproduced")


def flake_svg(points: Sequence[FlakePoint]) -> str | None:
    """Share of each night's executed test keys that are flaky, with its band."""
    if not points:
        return None
    s = _Series(
        "flaky keys",
        [p.flake_rate for p in points],
        [p.ci_low for p in points],
        [p.ci_high for p in points],
    )
    top = max([0.25, *(p.ci_high or p.flake_rate for p in points)])
    return _draw(
        "flakes",
        [_tick_label(p.night) for p in points],
        [s],
        ylabel="flaky keys",
        ymax=min(1.0, math.ceil(top * 1.1 * 20) / 20),
    )


def consistency_svg(points: Sequence[ConsistencyPoint]) -> str | None:
    """Share of position-probe pairs judged the same in both orders, per judge."""
    if not points:
        return None
    runs: dict[str, datetime] = {}
    for p in points:
        runs.setdefault(p.run_id, p.measured_at)
    order = sorted(runs, key=lambda r: (runs[r], r))
    judges = sorted({p.judge for p in points})
    by = {(p.run_id, p.judge): p for p in points}

    def col(j: str, f: Callable[[ConsistencyPoint], float | None]) -> list[float | None]:
        return [f(by[(r, j)]) if (r, j) in by else None for r in order]

    series = [
        _Series(
            j, col(j, lambda p: p.value), col(j, lambda p: p.ci_low), col(j, lambda p: p.ci_high)
        )
        for j in judges
    ]
    labels = run_labels([(r, runs[r]) for r in order])
    return _draw("consistency", labels, series, ylabel="consistent")


def charts(history: History) -> list[Chart]:
    """The four history charts, in report order (every point is of ``history.kind``)."""
    kind = history.kind
    runs = f"{'PR' if kind is RunKind.PR else kind.value} run"
    return [
        Chart(
            "chart-win-rate",
            "Candidate win rate",
            f"Per {runs}, over decisive pairs, with its Wilson 95% band; the dashed line is 50%.",
            win_rate_svg(history.win_rate),
        ),
        Chart(
            "chart-repro",
            "Reproduction rate",
            f"Per {runs} and agent version, over decided cases (flaky and errors left out), "
            "with Wilson 95% bands.",
            repro_svg(history.repro),
        ),
        Chart(
            "chart-flakes",
            "Flake rate",
            f"Per night, over the test keys its {runs}s executed: share in state flaky, "
            "with its Wilson 95% band.",
            flake_svg(history.flakes),
        ),
        Chart(
            "chart-consistency",
            "Judge position consistency",
            f"Per {runs}: share of near-identical pairs judged the same in both orders "
            "(position probe), with its 95% band.",
            consistency_svg(history.consistency),
        ),
    ]
