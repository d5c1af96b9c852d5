"""Outcome records: ``ingest``, ``summarize``, ``summary``, ``conflicts``, ``unscored``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from bughunt.models import Observation, VerdictOutcome
from cli._common import (
    JsonOpt,
    LedgerOpt,
    fail,
    guarded,
    print_json,
    print_rows,
)
from flows.ledger_writes import ingest_records
from ledger import Ledger
from tasks.outcomes import (
    BadLine,
    OutcomeSummary,
    ReadResult,
    conflict_rows,
    new_batch_id,
    read_records,
    render_summary,
    run_observations,
    stored_records,
    summarize,
    unscored_rows,
)
from tasks.report import RunSummary, find_summary, headline_lines, load_summary, run_counts
from tasks.report.runs import resolve_run_id

FilesArg = Annotated[
    list[Path],
    typer.Argument(
        help="JSON Lines or JSON array files of outcome records.",
        exists=True,
        dir_okay=False,
        readable=True,
    ),
]


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
    app.command("summarize")(summarize_files)
    app.command("summary")(summary)
    app.command("conflicts")(conflicts)
    app.command("unscored")(unscored)


def _read_all(files: list[Path], batch_id: str) -> list[ReadResult]:
    results = [read_records(f, batch_id=batch_id) for f in files]
    for r in results:
        for b in r.bad:
            typer.echo(f"bad line: {b.describe()}", err=True)
    return results


def _emit(summary: OutcomeSummary, bad: list[BadLine], as_json: bool) -> None:
    if as_json:
        data: dict[str, Any] = summary.model_dump(mode="json", by_alias=True)
        data["bad_lines"] = [{"source": b.source, "line": b.line, "reason": b.reason} for b in bad]
        print_json(data)
    else:
        typer.echo(render_summary(summary))
        if bad:
            typer.echo(f"\n{len(bad)} bad line(s) were not counted (listed on stderr)")


@guarded
def ingest(
    files: FilesArg,
    ledger: LedgerOpt = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Store nothing at all if any line of any file is bad.")
    ] = False,
) -> None:
    """Store outcome records in the ledger with their provenance (file, line, time, batch).

    By default a bad line is reported (file:line and why) and the other lines
    are stored; the exit code is then 1. With --strict nothing is stored when
    any line is bad, and the exit code is 2. Ingesting the same file again stores replays, which the
    summary counts once.
    """
    batch_id = new_batch_id()
    results = _read_all(files, batch_id)
    bad = [b for r in results for b in r.bad]
    rows: list[Observation] = [rec for r in results for rec in r.records]
    if bad and strict:
        fail(f"{len(bad)} bad line(s); --strict: nothing was stored")
    store = Ledger(ledger)
    ingest_records(rows, store)
    for r in results:
        typer.echo(f"{r.source}: {len(r.records)} records stored, {len(r.bad)} bad lines")
    typer.echo(f"batch {batch_id} → {store.path}")
    if bad:
        raise typer.Exit(1)


@guarded
def summarize_files(files: FilesArg, as_json: JsonOpt = False) -> None:
    """Summarise outcome records from files, without touching the ledger.

    Bad lines are listed on stderr (and under ``bad_lines`` in JSON) and not
    counted; the exit code is then 1.
    """
    results = _read_all(files, new_batch_id())
    bad = [b for r in results for b in r.bad]
    _emit(summarize(rec for r in results for rec in r.records), bad, as_json)
    if bad:
        raise typer.Exit(1)


def _emit_run(run: RunSummary, as_json: bool) -> None:
    """A run with a stored report: its counts and outcome records, worded as its report words them."""
    if as_json:
        data: dict[str, Any] = run.outcomes.model_dump(mode="json", by_alias=True)
        data["bad_lines"] = []
        data["run"] = run_counts(run).model_dump(mode="json")
        print_json(data)
        return
    typer.echo(f"run {run.run_id} ({run.kind.value}), from its stored report:")
    for line in headline_lines(run):
        typer.echo(line)
    typer.echo("")
    typer.echo("outcome records (one per case and version: pass = reproduced), as in its report:")
    typer.echo(render_summary(run.outcomes))


@guarded
def summary(
    ledger: LedgerOpt = None,
    batch: Annotated[str | None, typer.Option(help="Only this ingest batch.")] = None,
    run: Annotated[
        str | None, typer.Option("--run", "--run-id", help="Only records of this run id.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Summarise outcome records stored in the ledger (all, one batch, or one run).

    All of them means the ingested records: the observations nightly and PR
    runs made are counted apart, with a pointer to each run's figures. For a run with a stored report (a nightly or PR run), --run prints what
    its report says, in the same words: the headline, the pairs and judge
    calls (verdict and bias-probe calls apart), each version's reproductions
    and the outcome records of its cases (under "run" in JSON).
    """
    if batch and run:
        fail("give --batch or --run, not both")
    store = Ledger(ledger)
    stored = find_summary(store, run) if run else None
    if stored is not None:
        _emit_run(stored, as_json)
        return
    if batch or run:
        rows = stored_records(store, batch=batch, run=run)
        if not rows:
            fail(f"no records for {'batch ' + batch if batch else 'run ' + str(run)}")
        _emit(summarize(rows), [], as_json)
        return
    # All of them: the ingested records. What runs' sandbox stages made is counted apart and
    # pointed to, since over cases it reads as mixed by design.
    rows, runs = stored_records(store, ingested=True), run_observations(store)
    if as_json:
        data: dict[str, Any] = summarize(rows).model_dump(mode="json", by_alias=True)
        data["bad_lines"] = []
        data["run_observations"] = runs
        print_json(data)
        return
    if rows or not runs["observations"]:
        _emit(summarize(rows), [], as_json=False)
    if runs["observations"]:
        typer.echo(
            f"{'' if not rows else chr(10)}{runs['observations']} observations from "
            f"{runs['runs']} nightly or PR run(s) are not summarised here: a run executes each "
            "reproduction test on the buggy tree (where it should fail) and on the fixed tree "
            "(where it should pass), so over cases they read as mixed by design. Each run's "
            f"figures: `bughunt runs`, `bughunt summary --run {runs['latest_run']}` (the latest)."
        )


@guarded
def conflicts(ledger: LedgerOpt = None, as_json: JsonOpt = False) -> None:
    """Disputed identities over all history: which, since when, from which sources."""
    rows = conflict_rows(Ledger(ledger))
    if as_json:
        print_json(rows)
        return
    table = [
        {
            "identity": r["identity"],
            "cases": ", ".join(r["case_ids"]),
            "statuses": " / ".join(r["statuses"]),
            "sources": ", ".join(r["sources"]),
            "disputed_since": _when(r["disputed_since"]),
        }
        for r in rows
    ]
    print_rows(table, title="disputed identities")


@guarded
def unscored(
    ledger: LedgerOpt = None,
    run: Annotated[
        str | None,
        typer.Option(
            "--run",
            "--run-id",
            help="Instead: the pairs this run left without a verdict, from its stored report "
            "(an id or the start of one), as `bughunt runs` counts them.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Unscored cases over all history: which, why, since when, from which sources.

    With --run, the pairs that run left without a verdict instead (case, sample,
    why, and both versions' reproduction outcomes): the same pairs as the
    run's report, `bughunt runs` and `bughunt summary --run` count as unscored.
    """
    if run is not None:
        _run_unscored(Ledger(ledger), run, as_json)
        return
    rows = unscored_rows(Ledger(ledger))
    if as_json:
        print_json(rows)
        return
    table = [
        {
            "case_id": r["case_id"],
            "reason": r["reason"],
            "sources": ", ".join(r["sources"]),
            "unscored_since": _when(r["unscored_since"]),
        }
        for r in rows
    ]
    print_rows(table, title="unscored cases")


def _run_unscored(store: Ledger, given: str, as_json: bool) -> None:
    run_id = resolve_run_id(store, given)
    summary = load_summary(store, run_id)
    pairs = [
        {
            "case_id": row.case_id,
            "sample": row.sample,
            "reason": row.verdict_reason,
            "baseline": row.baseline_status.value,
            "candidate": row.candidate_status.value,
        }
        for row in summary.cases
        if row.verdict == VerdictOutcome.UNSCORED.value
    ]
    if as_json:
        print_json({"run_id": summary.run_id, "pairs": len(summary.cases), "unscored": pairs})
        return
    typer.echo(f"run {summary.run_id}: {len(pairs)} of {len(summary.cases)} pairs unscored")
    print_rows(pairs, title="unscored pairs")


def _when(moment: datetime | None) -> str | None:
    """A timestamp as the tables show it (UTC, to the second)."""
    if moment is None:
        return None
    # The ledger stores UTC in naive TIMESTAMP columns: a naive value is UTC, not local time.
    utc = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%d %H:%M:%S")
