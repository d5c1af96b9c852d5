"""What both report formats show, gathered once from a RunSummary and its History.

Rows here hold raw values (numbers, enums, and untrusted text as it came);
formatting and escaping are the templates' job, so one view serves Markdown,
HTML and the Prefect table artifacts alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bughunt.models import BiasProbe, CallStatus, ProbeKind, ReproOutcome
from tasks.report._charts import Chart, charts
from tasks.report._counts import CallRow, call_rows, count_lines, run_counts
from tasks.report._escape import MdSafe
from tasks.report._format import FEW_CASES
from tasks.report._model import CaseRow, RunSummary
from tasks.report.runs import History
from tasks.score.pairs import WinRate

UNCATEGORISED = "uncategorised"
"""Category shown for a case classify could not label (the score stage's word)."""

HISTORY_ROWS = 10
"""Rows of each history table in Markdown (the newest)."""

_PROBE_ORDER = {k: i for i, k in enumerate(ProbeKind)}
_METRIC_ORDER = {
    m: i
    for i, m in enumerate(
        (
            "consistent",
            "biased_first",
            "biased_second",
            "one_tie_one_win",
            "flip_rate",
            "correct",
            "reversed",
            "tie",
            "net_bias",
            "share_of_decisive",
            "own_family_win_rate",
            "neutral_own_family_win_rate",
            "self_preference",
        )
    )
}
_STATUS_ORDER = [s.value for s in CallStatus]


@dataclass(frozen=True, slots=True)
class ReproCount:
    """Reproduced cases out of decided ones (flaky and errors left out)."""

    reproduced: int = 0
    decided: int = 0


@dataclass(frozen=True, slots=True)
class CategoryRow:
    """One bug category: the judge's figures and each side's reproductions."""

    category: str
    cases: int
    win: WinRate | None
    baseline: ReproCount
    candidate: ReproCount


@dataclass(frozen=True, slots=True)
class ProbeRow:
    """One bias metric, with whether it rests on few pairs."""

    probe: BiasProbe
    few: bool


@dataclass(frozen=True, slots=True)
class View:
    """Everything a template needs, in display order."""

    s: RunSummary
    history: History
    categories: list[CategoryRow]
    probes: list[ProbeRow]
    counts: list[MdSafe]
    """The run's count lines (pairs, verdict, bias-probe and all judge calls), as every output says them."""
    calls: list[CallRow]
    """The judge's calls per purpose, for the Judge section's table."""
    call_statuses: list[str]
    """The call table's status columns."""
    charts: list[Chart]
    history_rows: int = HISTORY_ROWS


def _category(c: CaseRow) -> str:
    return str(c.category) if c.category else UNCATEGORISED


def _repro(cases: Sequence[CaseRow], side: str) -> ReproCount:
    statuses = [c.baseline_status if side == "baseline" else c.candidate_status for c in cases]
    reproduced = sum(s is ReproOutcome.REPRODUCED for s in statuses)
    decided = reproduced + sum(s is ReproOutcome.NOT_REPRODUCED for s in statuses)
    return ReproCount(reproduced, decided)


def category_rows(s: RunSummary) -> list[CategoryRow]:
    """One row per category seen by the judge or among the cases, alphabetically."""
    per_category = s.headline.per_category if s.headline else {}
    names = sorted({*per_category, *(_category(c) for c in s.cases)})
    rows = []
    for name in names:
        cases = [c for c in s.cases if _category(c) == name]
        rows.append(
            CategoryRow(
                category=name,
                cases=len(cases),
                win=per_category.get(name),
                baseline=_repro(cases, "baseline"),
                candidate=_repro(cases, "candidate"),
            )
        )
    return rows


def probe_rows(probes: Sequence[BiasProbe]) -> list[ProbeRow]:
    """Probes by judge, probe set (position, gap, verbosity, self), then metric as the probes list them."""
    ordered = sorted(
        probes,
        key=lambda p: (
            p.judge,
            _PROBE_ORDER.get(p.probe, 99),
            _METRIC_ORDER.get(p.metric, 99),
            p.metric,
            p.strategy,
        ),
    )
    return [ProbeRow(p, p.n < FEW_CASES) for p in ordered]


def status_columns(rows: Sequence[CallRow]) -> list[str]:
    """Every terminal status in the contract's order (zeros included), then any other key seen."""
    seen = {k for r in rows if r.counts for k in r.counts.by_status}
    return _STATUS_ORDER + sorted(seen - set(_STATUS_ORDER))


def build_view(summary: RunSummary, history: History, *, with_charts: bool) -> View:
    """The view of one run; charts are drawn only when the format embeds them (HTML)."""
    calls = call_rows(summary.health)
    return View(
        s=summary,
        history=history,
        categories=category_rows(summary),
        probes=probe_rows(summary.probes),
        # Numbers and fixed words only (tasks/report/_counts.py): nothing to escape in Markdown.
        counts=[MdSafe(line) for line in count_lines(run_counts(summary))],
        calls=calls,
        call_statuses=status_columns(calls),
        charts=charts(history) if with_charts else [],
    )
