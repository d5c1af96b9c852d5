"""``report``: re-render a past run's report from the ledger alone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli._common import LedgerOpt, guarded
from ledger import Ledger
from tasks.report import default_out_dir, load_history, load_summary, write_report


def register(app: typer.Typer) -> None:
    app.command("report")(report)


@guarded
def report(
    run: Annotated[
        str | None,
        typer.Option(
            "--run",
            help="Run id (default: the latest run with a stored report).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Output folder (default: runs/<run id> beside the ledger file).",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
    ledger: LedgerOpt = None,
) -> None:
    """Write report.md, report.html and summary.json of a past run, from the ledger alone.

    Reads the summary the report stage stored for the run and the history
    up to that run (win rate, reproduction, flake rate, judge consistency),
    renders both reports again and prints the three paths. summary.json is
    byte for byte what the run wrote. The ledger is opened read-only.
    """
    store = Ledger(ledger)
    summary = load_summary(store, run)
    history = load_history(store, until_run_id=summary.run_id)
    paths = write_report(
        summary, history, out if out is not None else default_out_dir(store, summary.run_id)
    )
    typer.echo(f"report of run {summary.run_id}:")
    for path in (paths.md, paths.html, paths.json):
        typer.echo(f"  {path}")
