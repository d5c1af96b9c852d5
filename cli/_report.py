"""``report``: re-render a past run's report from the ledger alone; ``runs``: every run at a glance."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from bughunt.models import RunKind
from cli._common import JsonOpt, LedgerOpt, guarded, print_json, print_rows
from ledger import Ledger
from tasks.flakes import parse_since
from tasks.report import default_out_dir, load_summary, pr_comment, write_report
from tasks.report.runs import list_runs, load_history, previous_nightly, resolve_run_id


class ReportFormat(StrEnum):
    """What ``bughunt report`` writes."""

    FILES = "files"
    JSON = "json"
    PR_COMMENT = "pr-comment"


def register(app: typer.Typer) -> None:
    app.command("report")(report)
    app.command("runs")(runs)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


@guarded
def runs(
    kind: Annotated[
        RunKind | None, typer.Option("--kind", help="Only runs of this kind (nightly, pr, ...).")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only runs started within this span (30d, 12h).")
    ] = None,
    ledger: LedgerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List runs, newest first: kind, start, duration, corpus, agents, headline, gate, report.

    The headline is the candidate's win rate over decisive pairs with its
    Wilson 95% interval, as the run's report gives it; a run that never
    reached its report is listed with its status and no figures. Read-only.
    """
    found = list_runs(
        Ledger(ledger), kind=kind, since=parse_since(since) if since is not None else None
    )
    if as_json:
        print_json([r.model_dump(mode="json") for r in found])
        return
    print_rows(
        [
            {
                "run": r.run_id,
                "kind": r.kind.value,
                "status": r.status.value,
                "started (UTC)": r.started_at.strftime("%Y-%m-%d %H:%M"),
                "took": _duration(r.duration_s),
                "corpus": r.corpus or "",
                "candidate vs baseline": f"{r.candidate} vs {r.baseline}",
                "win rate [95%] of decisive": r.headline(),
                "gate": r.gate or "",
                "unscored": "" if r.unscored is None else r.unscored,
                "report": r.report or "",
            }
            for r in found
        ],
        title="runs",
    )


@guarded
def report(
    run: Annotated[
        str | None,
        typer.Option(
            "--run",
            "--run-id",
            help="Run id, or the start of one (default: the latest run with a stored report).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Output folder (default: <ledger name>.runs/<run id> beside the ledger file).",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        ReportFormat,
        typer.Option(
            "--format",
            help="files: write the three files and print their paths; json: write them and "
            "print the summary as JSON; pr-comment: print a short Markdown summary for the PR "
            "(gate, headline, change since the last nightly, link), writing nothing.",
        ),
    ] = ReportFormat.FILES,
    link: Annotated[
        str | None,
        typer.Option(
            "--link",
            help="pr-comment: where the full report is (a URL); default its report.html path.",
        ),
    ] = None,
    ledger: LedgerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write report.md, report.html and summary.json of a past run, from the ledger alone.

    Reads the summary the report stage stored for the run and the history
    up to that run (win rate, reproduction, flake rate, judge consistency),
    renders both reports again and prints the three paths. summary.json is
    byte for byte what the run wrote. The ledger is opened read-only.
    ``--json`` is ``--format json``.
    """
    store = Ledger(ledger)
    summary = load_summary(store, resolve_run_id(store, run) if run is not None else None)
    folder = out if out is not None else default_out_dir(store, summary.run_id)
    if fmt is ReportFormat.PR_COMMENT:
        where = link if link is not None else str(folder / "report.html")
        typer.echo(pr_comment(summary, previous_nightly(store, summary), where), nl=False)
        return
    history = load_history(store, until_run_id=summary.run_id)
    paths = write_report(summary, history, folder)
    if as_json or fmt is ReportFormat.JSON:
        print_json(
            {
                "run_id": summary.run_id,
                "paths": {"md": str(paths.md), "html": str(paths.html), "json": str(paths.json)},
                "summary": summary.model_dump(mode="json"),
            }
        )
        return
    typer.echo(f"report of run {summary.run_id}:")
    for path in (paths.md, paths.html, paths.json):
        typer.echo(f"  {path}")
