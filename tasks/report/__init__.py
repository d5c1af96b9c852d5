"""Stage 6, report: Markdown, self-contained HTML with charts, summary.json, Prefect artifacts.

Rendering is pure (a RunSummary and a History in, text out); the shells are
:func:`write_report` (files), :func:`publish_artifacts` (Prefect) and the
ledger readers :func:`load_summary` and :func:`load_history`.
docs/report.md describes every section and the escaping rules.
"""

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
