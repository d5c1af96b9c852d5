"""What both report formats show, gathered once from a RunSummary and its History.

Rows here hold raw values (numbers, enums, and untrusted text as it came);
formatting and escaping are the templates' job, so one view serves Markdown,
HTML and the Prefect table artifacts alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from bughunt.models import BiasProbe, CallStatus, ProbeKind, ReproOutcome
from tasks.report._charts import Chart, charts
from tasks.report._format import FEW_CASES
from tasks.report._history import History
from tasks.report._model import CaseRow, RunSummary
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
    calls_by_status: list[tuple[str, int]]
    charts: list[Chart]
    verdicts: dict[str, int] = field(default_factory=dict)
    history_rows: int = HISTORY_ROWS
    few_cases: int = FEW_CASES


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


def status_counts(calls_by_status: dict[str, int]) -> list[tuple[str, int]]:
    """Every terminal status in the contract's order (zeros included), then any other key."""
    known = [(s, calls_by_status.get(s, 0)) for s in _STATUS_ORDER]
    return known + sorted((k, v) for k, v in calls_by_status.items() if k not in _STATUS_ORDER)


def build_view(summary: RunSummary, history: History, *, with_charts: bool) -> View:
    """The view of one run; charts are drawn only when the format embeds them (HTML)."""
    return View(
        s=summary,
        history=history,
        categories=category_rows(summary),
        probes=probe_rows(summary.probes),
        calls_by_status=status_counts(summary.health.calls_by_status),
        charts=charts(history) if with_charts else [],
        verdicts=dict(Counter(c.verdict for c in summary.cases)),
    )
