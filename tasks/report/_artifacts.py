"""Prefect artifacts: the Markdown report and two tables, under keys that never change.

Prefect keeps every version of a keyed artifact, so the UI shows tonight's
report under its key and, one click away, every earlier night's. Keys are
``bughunt-<kind>-report``, ``bughunt-<kind>-categories`` and
``bughunt-<kind>-cases`` (``<kind>`` is ``nightly``, ``pr``, …).

Table artifacts are data (JSON cells the UI shows as text), so agent text
goes in as text, clipped; the Markdown artifact is the escaped report and
the descriptions are escaped Markdown too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from bughunt.models import RunKind
from tasks.report import _format as fmt
from tasks.report._escape import clip, md_escape
from tasks.report._model import RunSummary
from tasks.report._view import category_rows


@dataclass(frozen=True, slots=True)
class ArtifactKeys:
    """The stable keys of one run kind's artifacts."""

    report: str
    categories: str
    cases: str


def artifact_keys(kind: RunKind) -> ArtifactKeys:
    """``bughunt-nightly-report``, ``bughunt-nightly-categories``, ``bughunt-nightly-cases`` (per kind)."""
    prefix = f"bughunt-{kind.value}"
    return ArtifactKeys(f"{prefix}-report", f"{prefix}-categories", f"{prefix}-cases")


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


def case_table(summary: RunSummary) -> list[dict[str, Any]]:
    """One row per planned case: statuses, verdict and reasons (text clipped, not escaped)."""
    return [
        {
            "case": c.case_id + (f" · sample {c.sample}" if c.sample is not None else ""),
            "category": str(c.category) if c.category else "uncategorised",
            "baseline": str(c.baseline_status),
            "baseline_reason": clip(c.baseline_reason),
            "candidate": str(c.candidate_status),
            "candidate_reason": clip(c.candidate_reason),
            "verdict": c.verdict,
            "verdict_reason": clip(c.verdict_reason),
        }
        for c in summary.cases
    ]


def _id(created: object, key: str) -> UUID:
    # Prefect's creators are sync-compatible: inside an async flow they return a coroutine.
    if not isinstance(created, UUID):
        raise TypeError(f"artifact {key}: call publish_artifacts from a sync flow or task")
    return created


def publish_artifacts(summary: RunSummary, markdown: str) -> dict[str, UUID]:
    """Create the run's three artifacts; returns their ids by key.

    Call it inside a Prefect flow or task run, so each artifact is linked to
    the run that made it (outside one, Prefect stores them unlinked).
    ``markdown`` is :func:`~tasks.report.render_markdown`'s output.
    """
    # late: Prefect costs ~1 s to import, and only a run (or a re-rendered report) publishes
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
                description=f"Every planned case of run {run}",
            ),
            keys.cases,
        ),
    }
