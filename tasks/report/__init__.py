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
        ArtifactKeys as ArtifactKeys,
        artifact_keys as artifact_keys,
        case_details as case_details,
        case_table as case_table,
        category_table as category_table,
        publish_artifacts as publish_artifacts,
    )
    from tasks.report._comment import pr_comment as pr_comment
    from tasks.report._counts import (
        RunCounts as RunCounts,
        count_lines as count_lines,
        headline_lines as headline_lines,
        run_counts as run_counts,
    )
    from tasks.report._entry import (
        RECORD as RECORD,
        ReportInputs as ReportInputs,
        ReportSettings as ReportSettings,
        closing_message as closing_message,
        gate_of as gate_of,
        publish as publish,
        run as run,
    )
    from tasks.report._escape import (
        MdSafe as MdSafe,
        UnsafeSvgError as UnsafeSvgError,
        md_escape as md_escape,
        sanitize_svg as sanitize_svg,
    )
    from tasks.report._history import (
        ConsistencyPoint as ConsistencyPoint,
        FlakePoint as FlakePoint,
        History as History,
        ReproPoint as ReproPoint,
        WinRatePoint as WinRatePoint,
        load_history as load_history,
    )
    from tasks.report._model import (
        CaseRow as CaseRow,
        RunSummary as RunSummary,
        VersionRepro as VersionRepro,
    )
    from tasks.report._render import render_html as render_html, render_markdown as render_markdown
    from tasks.report._runs import (
        RunRow as RunRow,
        list_runs as list_runs,
        previous_nightly as previous_nightly,
        resolve_run_id as resolve_run_id,
    )
    from tasks.report._summary import build_summary as build_summary
    from tasks.report._write import (
        REPORT_STAGE as REPORT_STAGE,
        ReportPaths as ReportPaths,
        canonical as canonical,
        default_out_dir as default_out_dir,
        find_summary as find_summary,
        load_summary as load_summary,
        report_payload as report_payload,
        summary_json as summary_json,
        write_outputs as write_outputs,
        write_report as write_report,
        write_transcripts as write_transcripts,
    )


__getattr__ = lazy_names(globals())
