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

from tasks.report import _format as fmt
from tasks.report._escape import md_escape
from tasks.report._model import RunSummary, VersionRepro


def _rate(value: float | None) -> str:
    return "—" if value is None else fmt.pct(value)


def _moved(label: str, before: float | None, now: float | None) -> str | None:
    if before is None and now is None:
        return None
    if before is not None and now is not None and round(before, 2) == round(now, 2):
        return f"{label} {_rate(now)} (unchanged)"
    return f"{label} {_rate(before)} → {_rate(now)}"


def _repro_of(summary: RunSummary, agent: str) -> VersionRepro | None:
    return next((r for r in summary.repro if r.agent_version == agent), None)


def _since(summary: RunSummary, nightly: RunSummary) -> str:
    """What moved between the last nightly and this run, in one line."""
    parts = []
    h, before = summary.headline, nightly.headline
    moved = _moved(
        "win rate", before.win_rate if before else None, h.win_rate if h is not None else None
    )
    if moved:
        parts.append(moved)
    for agent in (summary.candidate, summary.baseline):
        now, then = _repro_of(summary, agent), _repro_of(nightly, agent)
        line = _moved(
            f"{md_escape(agent)} reproduction",
            then.rate if then else None,
            now.rate if now else None,
        )
        if line:
            parts.append(line)
    when = nightly.started_at.strftime("%Y-%m-%d")
    head = f"Since the last nightly (run {md_escape(nightly.run_id)}, {when})"
    return f"{head}: " + ("; ".join(parts) if parts else "no figure to compare") + "."


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
