"""A run's report as a short Markdown comment for its pull request (``bughunt report --format
pr-comment``): the gate, the headline with its interval, what moved since the last nightly,
and where the full report is.

Pure: a summary (and the latest nightly's before it, if any) in, Markdown out,
worded by the same functions as the full report (``tasks/report/_format.py``).
Every name an agent or a user chose (run ids, agent names, the gate's message)
is escaped Markdown, so a hostile name cannot close the comment's formatting
or inject a link.
"""

from __future__ import annotations

import re

from bughunt.models import ReproOutcome
from tasks.report import _format as fmt
from tasks.report._escape import md_escape
from tasks.report._model import CaseRow, RunSummary

_DECIDED = {ReproOutcome.REPRODUCED, ReproOutcome.NOT_REPRODUCED}


def _rate(value: float | None) -> str:
    return "—" if value is None else fmt.pct(value)


def _moved(label: str, before: float | None, now: float | None) -> str | None:
    if before is None and now is None:
        return None
    if before is not None and now is not None and round(before, 2) == round(now, 2):
        return f"{label} {_rate(now)} (unchanged)"
    return f"{label} {_rate(before)} → {_rate(now)}"


def _rows(summary: RunSummary, cases: set[str]) -> list[CaseRow]:
    return [c for c in summary.cases if c.case_id in cases]


def _win_rate(rows: list[CaseRow]) -> float | None:
    wins = sum(c.verdict == "candidate" for c in rows)
    decisive = wins + sum(c.verdict == "baseline" for c in rows)
    return wins / decisive if decisive else None


def _status(c: CaseRow, side: str) -> ReproOutcome:
    return c.candidate_status if side == "candidate" else c.baseline_status


def _repro_rate(rows: list[CaseRow], side: str) -> tuple[float | None, set[str]]:
    """The side's reproduction rate over ``rows`` and the cases it decided there."""
    decided = [c for c in rows if _status(c, side) in _DECIDED]
    reproduced = sum(_status(c, side) is ReproOutcome.REPRODUCED for c in decided)
    return (reproduced / len(decided) if decided else None), {c.case_id for c in decided}


def _since(summary: RunSummary, nightly: RunSummary) -> str:
    """What moved between the last nightly and this run, in one line, on the cases both ran:
    a one-case PR against a whole night compares that case, never the night's rates. A side
    that decided some of those cases in one run only (a flaky test, an error) says so."""
    when = nightly.started_at.strftime("%Y-%m-%d")
    head = f"Since the last nightly (run {md_escape(nightly.run_id)}, {when})"
    common = {c.case_id for c in summary.cases} & {c.case_id for c in nightly.cases}
    if not common:
        return f"{head}: no case in common with this run, nothing to compare."
    now, then = _rows(summary, common), _rows(nightly, common)
    parts = []
    moved = _moved("win rate", _win_rate(then), _win_rate(now))
    if moved:
        parts.append(moved)
    for side in ("candidate", "baseline"):
        before, decided_then = _repro_rate(then, side)
        after, decided_now = _repro_rate(now, side)
        names = dict.fromkeys((getattr(nightly, side), getattr(summary, side)))
        label = " → ".join(md_escape(n) for n in names)  # one name when both runs had it
        line = _moved(f"{label} reproduction", before, after)
        if line is None:
            continue
        changed = len(decided_then ^ decided_now)
        if changed:
            line += (
                f" ({fmt.plural(changed, 'case')} decided in one of the runs only: flaky or error)"
            )
        parts.append(line)
    scope = f"on the {fmt.plural(len(common), 'case')} both ran"
    return f"{head}, {scope}: " + ("; ".join(parts) if parts else "no figure to compare") + "."


def pr_comment(summary: RunSummary, nightly: RunSummary | None, report: str) -> str:
    """The comment: gate, headline, reproduction per agent, change since ``nightly``, link.

    ``report`` is where the full report is (a URL or a path), shown as given.
    """
    lines = []
    gate = summary.gate
    if gate is not None:
        lines.append(f"### bughunt PR gate: **{gate.outcome.value}** (exit {gate.exit_code})")
        lines += ["", md_escape(gate.message)]
    else:
        lines.append(f"### bughunt {summary.kind.value} run {md_escape(summary.run_id)}")
    if summary.answer is not None:
        lines += ["", f"**{md_escape(summary.answer.sentence)}**"]
    h = summary.headline
    who = f"{md_escape(summary.candidate)} vs {md_escape(summary.baseline)}"
    lines += ["", f"**{who}:** " + (fmt.win_sentence(h) if h is not None else "not judged") + "."]
    for r in summary.repro:
        lines.append(f"- {md_escape(r.agent_version)}: {fmt.repro_sentence(r)}")
    if summary.health.degraded:
        lines.append(f"- judge degraded: {md_escape(summary.health.degraded_reason or '')}")
    if nightly is not None:
        lines += ["", _since(summary, nightly)]
    lines += ["", f"Full report: {_link(report)}"]
    return "\n".join(lines) + "\n"


_URL = re.compile(r"https?://[^\s<>]+")


def _link(where: str) -> str:
    """An http(s) URL as an autolink; anything else (a path) as escaped text."""
    return f"<{where}>" if _URL.fullmatch(where) else md_escape(where)
