"""Stage 6, report: Markdown, self-contained HTML with charts, summary.json, Prefect artifacts.

Rendering is pure (a RunSummary and a History in, text out); the shells are
:func:`write_report` (files), :func:`publish_artifacts` (Prefect) and the
ledger reader :func:`load_summary`. The past runs in the ledger (one row per run, the
series the charts draw) are :mod:`tasks.report.runs`.
docs/report.md describes every section and the escaping rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.report._comment import pr_comment as pr_comment
    from tasks.report._counts import headline_lines as headline_lines, run_counts as run_counts
    from tasks.report._entry import (
        RECORD as RECORD,
        ReportInputs as ReportInputs,
        ReportSettings as ReportSettings,
        closing_message as closing_message,
        publish as publish,
        run as run,
    )
    from tasks.report._model import RunSummary as RunSummary
    from tasks.report._write import (
        default_out_dir as default_out_dir,
        find_summary as find_summary,
        load_summary as load_summary,
        write_report as write_report,
        write_transcripts as write_transcripts,
    )


__getattr__ = lazy_names(globals())
