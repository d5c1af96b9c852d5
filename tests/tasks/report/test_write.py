"""write_report's three files, and load_summary reading the report stage's payload from a real ledger."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bughunt.errors import TerminalError
from bughunt.models import StageOutput
from ledger import Ledger
from tasks.report import RECORD, RunSummary, load_summary, write_report
from tasks.report._render import render_html, render_markdown
from tasks.report._write import REPORT_STAGE, canonical, report_payload, summary_json
from tasks.report.runs import History
from tests.tasks.report.conftest import report_checkpoint


def store(ledger: Ledger, summary: RunSummary, at: datetime) -> None:
    """Write the report stage's checkpoint the way the flow does."""
    ledger.write([report_checkpoint(summary, at)])


def test_write_report_writes_three_files(
    summary: RunSummary, history: History, out_dir: Path
) -> None:
    """report.md, report.html and summary.json land in the folder (created), as rendered."""
    paths = write_report(summary, history, out_dir)
    assert (paths.md.name, paths.html.name, paths.json.name) == (
        "report.md",
        "report.html",
        "summary.json",
    )
    assert paths.md.read_text(encoding="utf-8") == render_markdown(summary, history)
    assert paths.html.read_text(encoding="utf-8") == render_html(summary, history)
    assert sorted(p.name for p in out_dir.iterdir()) == ["report.html", "report.md", "summary.json"]


def test_report_files_are_readable_by_everyone(
    summary: RunSummary, history: History, out_dir: Path
) -> None:
    """The three files are 0644, like the ledger: a report is for the team, not only its writer."""
    paths = write_report(summary, history, out_dir)
    for path in (paths.md, paths.html, paths.json):
        assert path.stat().st_mode & 0o777 == 0o644, path


def test_summary_json_is_the_model_dumped(
    summary: RunSummary, history: History, out_dir: Path
) -> None:
    """summary.json is the canonical model_dump_json(indent=2) and validates back to the summary."""
    text = write_report(summary, history, out_dir).json.read_text(encoding="utf-8")
    assert text == canonical(summary).model_dump_json(indent=2) + "\n"
    assert RunSummary.model_validate_json(text) == canonical(summary)
    assert list(json.loads(text)["health"]["calls_by_status"]) == ["aborted", "judged", "timed_out"]


def test_payload_is_what_the_flow_stores(summary: RunSummary) -> None:
    """report_payload equals the report stage's checkpoint payload."""
    assert report_payload(summary) == RECORD.payload(summary)


def test_ledger_round_trip_gives_the_same_summary_json(summary: RunSummary, ledger: Ledger) -> None:
    """A summary stored in stage_outputs and read back dumps to the same summary.json bytes."""
    store(ledger, summary, datetime(2026, 11, 30, 3, 0, tzinfo=UTC))
    loaded = load_summary(ledger, summary.run_id)
    assert summary_json(loaded) == summary_json(summary)
    assert loaded.model_dump_json(indent=2) + "\n" == summary_json(summary)


def test_load_summary_without_run_takes_the_latest(summary: RunSummary, ledger: Ledger) -> None:
    """With no run id, the run whose report was stored last is loaded."""
    older = summary.model_copy(update={"run_id": "nightly-older"})
    store(ledger, older, datetime(2026, 11, 29, 3, 0, tzinfo=UTC))
    store(ledger, summary, datetime(2026, 11, 30, 3, 0, tzinfo=UTC))
    assert load_summary(ledger).run_id == summary.run_id
    assert load_summary(ledger, "nightly-older").run_id == "nightly-older"


def test_missing_report_names_the_run(ledger: Ledger) -> None:
    """A run without a stored report is a TerminalError naming it."""
    with pytest.raises(TerminalError, match="no report stored for run 'nope'"):
        load_summary(ledger, "nope")
    with pytest.raises(TerminalError, match="no report stored for any run"):
        load_summary(ledger)


def test_invalid_payload_is_a_clear_error(ledger: Ledger) -> None:
    """A stored payload that is not a RunSummary is refused with the run id, not a traceback."""
    ledger.write(
        [StageOutput(run_id="r1", stage=REPORT_STAGE, inputs_hash="h", payload={"run_id": "r1"})]
    )
    with pytest.raises(TerminalError, match="stored report of run 'r1' is not a valid summary"):
        load_summary(ledger, "r1")


def test_rewriting_replaces_the_files(summary: RunSummary, history: History, out_dir: Path) -> None:
    """Writing twice leaves exactly the three files, with the new content and no temporaries."""
    write_report(summary, History(), out_dir)
    paths = write_report(summary, history, out_dir)
    assert "No history yet" not in paths.md.read_text(encoding="utf-8")
    assert sorted(p.name for p in out_dir.iterdir()) == ["report.html", "report.md", "summary.json"]
