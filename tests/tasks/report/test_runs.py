"""`bughunt runs`: every run at a glance, from the ledger's run events and stored summaries."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bughunt.models import ReproOutcome, RunInfo, RunKind, RunStatus, StageOutput
from cli import app
from ledger import Ledger
from tasks.report import RunSummary, default_out_dir, write_report
from tasks.report.runs import History, list_runs
from tests.tasks.report.conftest import report_checkpoint

T0 = datetime(2026, 11, 30, 2, 0)


def _events(ledger: Ledger, summary: RunSummary, *, closed_after_s: float | None) -> None:
    """A run's start event, and its closing event ``closed_after_s`` later (or none: killed)."""
    common = {
        "run_id": summary.run_id,
        "kind": summary.kind,
        "corpus": summary.corpus,
        "baseline": summary.baseline,
        "candidate": summary.candidate,
    }
    rows: list[RunInfo | StageOutput] = [
        RunInfo(**common, status=RunStatus.RUNNING, recorded_at=T0)
    ]
    if closed_after_s is not None:
        at = T0 + timedelta(seconds=closed_after_s)
        rows.append(RunInfo(**common, status=RunStatus.COMPLETED, recorded_at=at))
        rows.append(report_checkpoint(summary, at))
    ledger.write(rows)


def test_a_finished_run_shows_its_headline_gate_and_report(
    ledger: Ledger, summary: RunSummary, history: History
) -> None:
    """The stored summary's win rate with its interval and decisive pairs, its unscored pairs, the
    time from its first to its closing event, and its report where the run left it."""
    _events(ledger, summary, closed_after_s=317)
    write_report(summary, history, default_out_dir(ledger, summary.run_id))
    [row] = list_runs(ledger)
    h = summary.headline
    assert h is not None and h.win_rate is not None and h.win_rate_ci is not None
    assert (row.run_id, row.kind, row.status) == (summary.run_id, summary.kind, RunStatus.COMPLETED)
    assert row.duration_s == 317
    assert (row.win_rate, row.win_rate_ci, row.decisive) == (h.win_rate, h.win_rate_ci, h.decisive)
    assert row.unscored == h.unscored
    low, high = h.win_rate_ci
    assert row.headline() == f"{h.win_rate:.2f} [{low:.2f}, {high:.2f}] of {h.decisive}"
    assert row.report is not None and row.report.endswith(f"{summary.run_id}/report.html")


def test_a_run_killed_before_its_report_has_no_figures(ledger: Ledger, summary: RunSummary) -> None:
    """A run with only its start event: still running (or killed), no duration, and no figures
    (never zeros: an unreported run is not a run that found nothing)."""
    _events(ledger, summary, closed_after_s=None)
    [row] = list_runs(ledger)
    assert row.status is RunStatus.RUNNING and row.duration_s is None
    assert (row.judged, row.win_rate, row.unscored, row.gate, row.report) == (
        None,
        None,
        None,
        None,
        None,
    )
    assert row.headline() == "no report"


def test_kind_and_since_choose_the_runs(ledger: Ledger, summary: RunSummary) -> None:
    """--kind keeps one kind; --since keeps runs started within the span; newest first."""
    _events(ledger, summary, closed_after_s=60)
    pr = summary.model_copy(update={"run_id": "pr-1", "kind": RunKind.PR})
    _events(ledger, pr, closed_after_s=30)
    assert [r.run_id for r in list_runs(ledger, kind=RunKind.PR)] == ["pr-1"]
    now = T0.replace(tzinfo=UTC) + timedelta(days=3)
    assert list_runs(ledger, since=timedelta(days=2), now=now) == []
    assert len(list_runs(ledger, since=timedelta(days=4), now=now)) == 2


@pytest.mark.parametrize("args", [["runs", "--json"], ["runs", "--kind", "nightly", "--json"]])
def test_the_command_prints_every_run(ledger: Ledger, summary: RunSummary, args: list[str]) -> None:
    """`bughunt runs --json` gives the rows; a bad --since is one line, exit 2."""
    _events(ledger, summary, closed_after_s=10)
    result = CliRunner().invoke(app, [*args, "--ledger", str(ledger.path)])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert row["run_id"] == summary.run_id and row["duration_s"] == 10
    bad = CliRunner().invoke(app, ["runs", "--since", "soon", "--ledger", str(ledger.path)])
    assert bad.exit_code == 2 and "30d or 12h" in bad.output


def test_a_run_is_named_by_a_unique_start_of_its_id(ledger: Ledger, summary: RunSummary) -> None:
    """`report --run` takes a unique prefix; several starting alike, or none, are named."""
    from bughunt.errors import InputError
    from tasks.report.runs import resolve_run_id

    for run_id in ("nightly-a1", "nightly-a2", "pr-b1"):
        _events(ledger, summary.model_copy(update={"run_id": run_id}), closed_after_s=1)
    assert resolve_run_id(ledger, "pr-") == "pr-b1"
    assert resolve_run_id(ledger, "nightly-a2") == "nightly-a2"
    with pytest.raises(InputError, match="2 runs start with 'nightly-a': nightly-a1, nightly-a2"):
        resolve_run_id(ledger, "nightly-a")
    with pytest.raises(
        InputError, match="no run 'nightly-a9' in the ledger; the nearest: nightly-a"
    ):
        resolve_run_id(ledger, "nightly-a9")
    result = CliRunner().invoke(app, ["report", "--run", "zzz", "--ledger", str(ledger.path)])
    assert result.exit_code == 2 and "no report stored for run 'zzz'" in result.output


def _pr_run() -> RunSummary:
    from tasks.gate import GateDecision, GateOutcome
    from tests.tasks.report.conftest import make_summary

    gate = GateDecision(
        outcome=GateOutcome.PASS, exit_code=0, message="PASS — [click](http://evil.example) *"
    )
    pr = make_summary(kind=RunKind.PR, gate=gate)
    return pr.model_copy(update={"started_at": pr.started_at + timedelta(days=1)})


def test_the_pr_comment_has_the_gate_the_headline_the_change_and_the_link(
    summary: RunSummary,
) -> None:
    """Gate and its (escaped) message, the headline sentence with its interval, each agent's
    reproduction, what moved since the last nightly, and the full report as an autolink."""
    from tasks.report import _format as fmt, pr_comment

    pr = _pr_run()
    assert summary.headline is not None and pr.headline is not None
    lost = {"verdict": "baseline"}
    nightly = summary.model_copy(
        update={"cases": [c.model_copy(update=lost) for c in summary.cases[:4]] + summary.cases[4:]}
    )
    text = pr_comment(pr, nightly, "https://ci.example/runs/42/report.html")
    assert text.startswith("### bughunt PR gate: **pass** (exit 0)\n")
    assert "\\[click\\]" in text and "](http://evil.example)" not in text
    assert fmt.win_sentence(pr.headline) in text
    for r in pr.repro:
        assert f"- {r.agent_version}: {fmt.repro_sentence(r)}" in text
    since = f"Since the last nightly (run {summary.run_id}, 2026-11-30), on the 18 cases both ran: "
    assert since + "win rate " in text
    assert text.rstrip().endswith("Full report: <https://ci.example/runs/42/report.html>")
    assert "Since the last nightly" not in pr_comment(pr, None, "out/report.html")


def test_the_last_nightly_is_the_latest_one_started_before_the_run(
    ledger: Ledger, summary: RunSummary
) -> None:
    """Of the nightlies with a report, the latest that started before the PR run; none later."""
    from tasks.report.runs import previous_nightly

    pr = _pr_run()
    _events(ledger, summary, closed_after_s=5)
    later = summary.model_copy(update={"run_id": "nightly-later"})
    ledger.write(
        [
            RunInfo(
                run_id="nightly-later",
                kind=RunKind.NIGHTLY,
                status=RunStatus.COMPLETED,
                recorded_at=T0 + timedelta(days=3),
            ),
            report_checkpoint(later, T0 + timedelta(days=3)),
        ]
    )
    found = previous_nightly(ledger, pr)
    assert found is not None and found.run_id == summary.run_id
    assert previous_nightly(ledger, summary) is None


def test_report_format_pr_comment_prints_and_writes_nothing(
    ledger: Ledger, summary: RunSummary, tmp_path: Path
) -> None:
    """`report --format pr-comment --link URL` prints the comment; no report file is written."""
    _events(ledger, summary, closed_after_s=5)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "report",
            "--format",
            "pr-comment",
            "--link",
            "https://ci.example/r.html",
            "--out",
            str(out),
            "--ledger",
            str(ledger.path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"### bughunt nightly run {summary.run_id}")
    assert "Full report: <https://ci.example/r.html>" in result.output
    assert not out.exists()


def test_since_the_last_nightly_compares_the_same_cases_only(summary: RunSummary) -> None:
    """A one-case PR against a whole night compares that case's figures in both runs, never the
    night's rates; a case one side decided in one run only (flaky there) is said; a PR sharing
    no case with the night compares nothing."""
    from tasks.report import pr_comment

    pr = _pr_run()
    one = pr.model_copy(update={"cases": [c for c in pr.cases if c.case_id == "obo-top-expenses"]})
    text = pr_comment(one, summary, "r.html")
    assert "on the 1 case both ran: " in text
    row = one.cases[0]
    assert row.verdict in ("candidate", "baseline")  # the fixture's verdict on that case
    win = "100%" if row.verdict == "candidate" else "0%"
    assert f"win rate {win} (unchanged)" in text
    flaky = summary.model_copy(
        update={
            "cases": [
                c.model_copy(update={"baseline_status": ReproOutcome.FLAKY})
                if c.case_id == row.case_id
                else c
                for c in summary.cases
            ]
        }
    )
    text = pr_comment(one, flaky, "r.html")
    assert "baseline reproduction — → 0% (1 case decided in one of the runs only" in text
    other = pr.model_copy(
        update={"cases": [c.model_copy(update={"case_id": "new-case"}) for c in pr.cases[:1]]}
    )
    assert "no case in common with this run, nothing to compare." in pr_comment(
        other, summary, "r.html"
    )
