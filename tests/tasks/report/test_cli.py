"""``bughunt report``: re-render a past run from a real ledger file alone."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import typer
from typer.testing import CliRunner

from cli._report import register
from ledger import Ledger, runs_folder
from tasks.report import RunSummary, write_report
from tasks.report.runs import History, load_history
from tests.tasks.report.conftest import report_checkpoint
from tests.tasks.report.test_history import night

runner = CliRunner()


def cli() -> typer.Typer:
    """An app with the report command registered, as cli does."""
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """bughunt (test)"""

    register(app)
    return app


def stored(ledger: Ledger, summary: RunSummary, at: datetime) -> None:
    """Write the report stage's checkpoint the way the flow does."""
    ledger.write([report_checkpoint(summary, at)])


def test_rerender_gives_the_same_summary_json(
    summary: RunSummary, history: History, ledger: Ledger, tmp_path: Path
) -> None:
    """The CLI's summary.json is byte for byte what write_report wrote for the run's summary."""
    written = write_report(summary, history, tmp_path / "run")
    stored(ledger, summary, datetime(2026, 11, 30, 3, 0, tzinfo=UTC))
    out = tmp_path / "again"
    result = runner.invoke(
        cli(), ["report", "--run", summary.run_id, "--out", str(out), "--ledger", str(ledger.path)]
    )
    assert result.exit_code == 0, result.output
    assert (out / "summary.json").read_bytes() == written.json.read_bytes()
    for name in ("report.md", "report.html", "summary.json"):
        assert str(out / name) in result.output


def test_rerender_uses_the_ledger_history(
    summary: RunSummary, ledger: Ledger, tmp_path: Path
) -> None:
    """The re-rendered report.md is the summary rendered with the ledger's history up to the run."""
    ledger.write([row for i in range(2) for row in night(i, 3, 1)])
    stored(ledger, summary, datetime(2026, 11, 30, 3, 0, tzinfo=UTC))
    result = runner.invoke(
        cli(), ["report", "--out", str(tmp_path / "o"), "--ledger", str(ledger.path)]
    )
    assert result.exit_code == 0, result.output
    history = load_history(ledger, until_run_id=summary.run_id)
    assert [p.run_id for p in history.win_rate] == ["run-0", "run-1"]
    expected = write_report(summary, history, tmp_path / "expected")
    assert (tmp_path / "o" / "report.md").read_text() == expected.md.read_text()


def test_default_folder_is_beside_the_ledger(summary: RunSummary, ledger: Ledger) -> None:
    """Without --out the files go to runs/<run id>/ next to the ledger file."""
    stored(ledger, summary, datetime(2026, 11, 30, 3, 0, tzinfo=UTC))
    result = runner.invoke(cli(), ["report", "--ledger", str(ledger.path)])
    assert result.exit_code == 0, result.output
    folder = runs_folder(ledger.path) / summary.run_id
    assert sorted(p.name for p in folder.iterdir()) == ["report.html", "report.md", "summary.json"]


def test_unknown_run_exits_2_with_a_message(ledger: Ledger) -> None:
    """A run without a stored report exits 2 and says which run."""
    result = runner.invoke(cli(), ["report", "--run", "nope", "--ledger", str(ledger.path)])
    assert result.exit_code == 2
    assert "no report stored for run 'nope'" in result.output


def test_missing_ledger_exits_2(tmp_path: Path) -> None:
    """A ledger path that does not exist is a one-line error, not a traceback."""
    result = runner.invoke(cli(), ["report", "--ledger", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 2 and "no ledger here yet" in result.output
