"""Stage 6, report: Markdown, self-contained HTML with charts, summary.json, Prefect artifacts.

Rendering is pure (a RunSummary and a History in, text out); the shells are
:func:`write_report` (files), :func:`publish_artifacts` (Prefect) and the
ledger readers :func:`load_summary` and :func:`load_history`.
docs/report.md describes every section and the escaping rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.report._artifacts import (
        ArtifactKeys,
        artifact_keys,
        case_details,
        case_table,
        category_table,
        publish_artifacts,
    )
    from tasks.report._comment import pr_comment
    from tasks.report._counts import RunCounts, count_lines, headline_lines, run_counts
    from tasks.report._entry import (
        RECORD,
        ReportInputs,
        ReportSettings,
        closing_message,
        gate_of,
        publish,
        run,
    )
    from tasks.report._escape import MdSafe, UnsafeSvgError, md_escape, sanitize_svg
    from tasks.report._history import (
        ConsistencyPoint,
        FlakePoint,
        History,
        ReproPoint,
        WinRatePoint,
        load_history,
    )
    from tasks.report._model import CaseRow, RunSummary, VersionRepro
    from tasks.report._render import render_html, render_markdown
    from tasks.report._runs import RunRow, list_runs, previous_nightly, resolve_run_id
    from tasks.report._summary import build_summary
    from tasks.report._write import (
        REPORT_STAGE,
        ReportPaths,
        canonical,
        default_out_dir,
        find_summary,
        load_summary,
        report_payload,
        summary_json,
        write_outputs,
        write_report,
        write_transcripts,
    )

_WHERE = {
    "ArtifactKeys": "tasks.report._artifacts",
    "artifact_keys": "tasks.report._artifacts",
    "case_details": "tasks.report._artifacts",
    "case_table": "tasks.report._artifacts",
    "category_table": "tasks.report._artifacts",
    "publish_artifacts": "tasks.report._artifacts",
    "pr_comment": "tasks.report._comment",
    "RunCounts": "tasks.report._counts",
    "count_lines": "tasks.report._counts",
    "headline_lines": "tasks.report._counts",
    "run_counts": "tasks.report._counts",
    "RECORD": "tasks.report._entry",
    "ReportInputs": "tasks.report._entry",
    "ReportSettings": "tasks.report._entry",
    "closing_message": "tasks.report._entry",
    "gate_of": "tasks.report._entry",
    "publish": "tasks.report._entry",
    "run": "tasks.report._entry",
    "MdSafe": "tasks.report._escape",
    "UnsafeSvgError": "tasks.report._escape",
    "md_escape": "tasks.report._escape",
    "sanitize_svg": "tasks.report._escape",
    "ConsistencyPoint": "tasks.report._history",
    "FlakePoint": "tasks.report._history",
    "History": "tasks.report._history",
    "ReproPoint": "tasks.report._history",
    "WinRatePoint": "tasks.report._history",
    "load_history": "tasks.report._history",
    "CaseRow": "tasks.report._model",
    "RunSummary": "tasks.report._model",
    "VersionRepro": "tasks.report._model",
    "render_html": "tasks.report._render",
    "render_markdown": "tasks.report._render",
    "RunRow": "tasks.report._runs",
    "list_runs": "tasks.report._runs",
    "previous_nightly": "tasks.report._runs",
    "resolve_run_id": "tasks.report._runs",
    "build_summary": "tasks.report._summary",
    "REPORT_STAGE": "tasks.report._write",
    "ReportPaths": "tasks.report._write",
    "canonical": "tasks.report._write",
    "default_out_dir": "tasks.report._write",
    "find_summary": "tasks.report._write",
    "load_summary": "tasks.report._write",
    "report_payload": "tasks.report._write",
    "summary_json": "tasks.report._write",
    "write_outputs": "tasks.report._write",
    "write_report": "tasks.report._write",
    "write_transcripts": "tasks.report._write",
}
"""Each exported name → the module defining it, imported on first use."""

__all__ = [
    "RECORD",
    "REPORT_STAGE",
    "ArtifactKeys",
    "CaseRow",
    "ConsistencyPoint",
    "FlakePoint",
    "History",
    "MdSafe",
    "ReportInputs",
    "ReportPaths",
    "ReportSettings",
    "ReproPoint",
    "RunCounts",
    "RunRow",
    "RunSummary",
    "UnsafeSvgError",
    "VersionRepro",
    "WinRatePoint",
    "artifact_keys",
    "build_summary",
    "canonical",
    "case_details",
    "case_table",
    "category_table",
    "closing_message",
    "count_lines",
    "default_out_dir",
    "find_summary",
    "gate_of",
    "headline_lines",
    "list_runs",
    "load_history",
    "load_summary",
    "md_escape",
    "pr_comment",
    "previous_nightly",
    "publish",
    "publish_artifacts",
    "render_html",
    "render_markdown",
    "report_payload",
    "resolve_run_id",
    "run",
    "run_counts",
    "sanitize_svg",
    "summary_json",
    "write_outputs",
    "write_report",
    "write_transcripts",
]

__getattr__ = lazy_names(globals(), _WHERE)
