"""Prefect artifacts: the report in brief, two tables and the case details, under keys that never change.

Prefect keeps every version of a keyed artifact, so the UI shows tonight's
report under its key and, one click away, every earlier night's. Keys are
``bughunt-<kind>-report``, ``bughunt-<kind>-categories``,
``bughunt-<kind>-cases`` and ``bughunt-<kind>-case-details`` (``<kind>`` is
``nightly``, ``pr``, …).

Prefect's UI renders every table cell as Markdown, on one line that never
wraps: a cell holding agent text could show an image from anywhere, and a
reason of a few hundred characters makes the table wider than a screen. So
the tables hold bughunt's own values only (case ids, categories, statuses,
numbers), a case id clipped to :data:`CASE_CELL` characters; the reasons and
the judge's rationale go to the case-details Markdown artifact, escaped like
the report (:func:`~tasks.report.md_escape`), where text wraps. The
descriptions are escaped Markdown too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from bughunt.models import RunKind
from tasks.report import _format as fmt
from tasks.report._escape import clip, md_escape
from tasks.report._model import CaseRow, RunSummary
from tasks.report._view import category_rows

CASE_CELL = 48
"""A case id longer than this (ids may have 120 characters) is clipped in the cases table;
the case details show it whole. 48 keeps the widest table within 1,400 px in Prefect's UI."""


@dataclass(frozen=True, slots=True)
class ArtifactKeys:
    """The stable keys of one run kind's artifacts."""

    report: str
    categories: str
    cases: str
    details: str


def artifact_keys(kind: RunKind) -> ArtifactKeys:
    """``bughunt-nightly-report``, ``-categories``, ``-cases``, ``-case-details`` (per kind)."""
    prefix = f"bughunt-{kind.value}"
    return ArtifactKeys(
        f"{prefix}-report", f"{prefix}-categories", f"{prefix}-cases", f"{prefix}-case-details"
    )


def category_table(summary: RunSummary) -> list[dict[str, Any]]:
    """One row per bug category: pairs, wins, ties, unscored, win rate, reproductions."""
    out = []
    for row in category_rows(summary):
        w = row.win
        out.append(
            {
                "category": row.category,
                "cases": row.cases,
                "pairs": w.pairs if w else 0,
                "candidate_wins": w.candidate_wins if w else 0,
                "baseline_wins": w.baseline_wins if w else 0,
                "ties": w.ties if w else 0,
                "unscored": w.unscored if w else 0,
                "win_rate": fmt.win_cell(w) if w else "not judged",
                "baseline_reproduced": fmt.repro_cell(
                    row.baseline.reproduced, row.baseline.decided
                ),
                "candidate_reproduced": fmt.repro_cell(
                    row.candidate.reproduced, row.candidate.decided
                ),
                "flags": ", ".join(w.flags) if w else "",
            }
        )
    return out


def _sample(c: CaseRow) -> str:
    return f" · sample {c.sample}" if c.sample is not None else ""


def case_table(summary: RunSummary) -> list[dict[str, Any]]:
    """One row per planned case: its id (clipped to :data:`CASE_CELL`), category, both
    statuses and the verdict. No agent or judge text: that is in :func:`case_details`."""
    return [
        {
            "case": clip(c.case_id, CASE_CELL) + _sample(c),
            "category": str(c.category) if c.category else "uncategorised",
            "baseline": str(c.baseline_status),
            "candidate": str(c.candidate_status),
            "verdict": c.verdict,
        }
        for c in summary.cases
    ]


def _why(text: str | None) -> str:
    return f": {md_escape(clip(text))}" if text else ""


def case_details(summary: RunSummary) -> str:
    """Markdown: one list item per planned case, its whole id, each side's status and why, the
    verdict and why, the judge's rationale. Agent and judge text is clipped and escaped, so
    it shows as the characters it is; a run without cases says so."""
    run = md_escape(summary.run_id)
    if not summary.cases:
        return f"Run {run} planned no case.\n"
    lines = [
        f"Why each case of run {run} came out as it did (agent and judge text, clipped).",
        "",
    ]
    for c in summary.cases:
        category = md_escape(c.category or "uncategorised")
        rationale = c.verdict_rationale
        judge = f" — the judge: “{md_escape(clip(rationale))}”" if rationale else ""
        lines.append(
            f"- **{md_escape(c.case_id)}**{_sample(c)} ({category}) — "
            f"baseline {md_escape(c.baseline_status)}{_why(c.baseline_reason)}; "
            f"candidate {md_escape(c.candidate_status)}{_why(c.candidate_reason)}; "
            f"verdict {md_escape(c.verdict)}{_why(c.verdict_reason)}{judge}"
        )
    return "\n".join(lines) + "\n"


def _id(created: object, key: str) -> UUID:
    # Prefect's creators are sync-compatible: inside an async flow they return a coroutine.
    if not isinstance(created, UUID):
        raise TypeError(f"artifact {key}: call publish_artifacts from a sync flow or task")
    return created


def publish_artifacts(summary: RunSummary, markdown: str) -> dict[str, UUID]:
    """Create the run's four artifacts; returns their ids by key.

    Call it inside a Prefect flow or task run, so each artifact is linked to
    the run that made it (outside one, Prefect stores them unlinked).
    ``markdown`` is the report artifact's text: the flow publishes the run's brief
    (:func:`~tasks.report.pr_comment`: gate, headline, reproduction, change since the last
    nightly, where the report is), which fits the UI where the whole report would not.
    """
    # late: Prefect is slow to import, and only a run (or a re-rendered report) publishes
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    keys = artifact_keys(summary.kind)
    run = md_escape(summary.run_id)
    return {
        keys.report: _id(
            create_markdown_artifact(
                markdown=markdown, key=keys.report, description=f"bughunt report of run {run}"
            ),
            keys.report,
        ),
        keys.categories: _id(
            create_table_artifact(
                table=category_table(summary),
                key=keys.categories,
                description=f"Candidate vs baseline per bug category, run {run}",
            ),
            keys.categories,
        ),
        keys.cases: _id(
            create_table_artifact(
                table=case_table(summary),
                key=keys.cases,
                description=f"Every planned case of run {run}; why each came out as it did "
                f"is in {keys.details}",
            ),
            keys.cases,
        ),
        keys.details: _id(
            create_markdown_artifact(
                markdown=case_details(summary),
                key=keys.details,
                description=f"Reasons and judge rationales per case, run {run}",
            ),
            keys.details,
        ),
    }
