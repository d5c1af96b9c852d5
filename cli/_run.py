"""``bughunt run``: the flows in this process, on Prefect's local ephemeral API."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bughunt.models import RunKind
from bughunt.safeio import read_input
from cli._common import JsonOpt, guarded, print_json
from cli._params import with_model_options
from flows import RunParams, evaluates_nothing, handed_over, prepare

if TYPE_CHECKING:
    from flows import RunResult

run_app = typer.Typer(
    help="Run a flow in this process on Prefect's local API.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(run_app, name="run")


def _local_prefect() -> None:
    """Make Prefect's local state folder (its place is chosen in ``cli`` at import)."""
    if "PREFECT_HOME" in os.environ:
        Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)
    # The ephemeral server's shutdown can log CancelledError noise; it is not the user's concern.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)


def _sweep_leftovers(run_id: str | None) -> None:
    """Claim ``run_id`` and sweep what killed runs left (``tasks.sandbox.engine.claim_and_sweep``);
    the docker SDK is imported here, once the inputs are known to be good."""
    from tasks.sandbox.engine import claim_and_sweep

    claim_and_sweep(run_id)


def _print(result: RunResult) -> None:
    """The run's headline and counts, worded as its report words them (tasks/report/_counts.py)."""
    from tasks.report import headline_lines  # after the run: a typo's answer does not wait on it

    s = result.summary
    typer.echo(f"run {result.run_id} ({result.kind.value}) → {result.ledger}")
    if result.stages_resumed:
        typer.echo("resumed (already finished): " + ", ".join(result.stages_resumed))
    typer.echo("stages run: " + (", ".join(result.stages_run) or "none"))
    if result.stages_skipped:
        typer.echo("stages not needed by the plan: " + ", ".join(result.stages_skipped))
    for line in headline_lines(s):
        typer.echo(line)
    if s.health.degraded:
        typer.echo(f"judge DEGRADED: {s.health.degraded_reason}")
    if s.evaluation is not None and s.evaluation.adaptive:
        typer.echo(f"adaptive evaluation: {s.evaluation.line()}")
    if s.gate is not None:
        typer.echo(f"gate: {s.gate.outcome.value} (exit {s.gate.exit_code}) — {s.gate.message}")
    if result.report_dir:
        typer.echo(f"report: {Path(result.report_dir) / 'report.html'}")


def _as_json(result: RunResult) -> dict[str, Any]:
    """The run's result without its summary, with the counts every output shows (``counts``)."""
    from tasks.report import run_counts

    return result.model_dump(mode="json", exclude={"summary"}) | {
        "counts": run_counts(result.summary).model_dump(mode="json")
    }


@run_app.command("nightly")
@guarded
@with_model_options(RunParams)
def nightly(*, params: RunParams, as_json: JsonOpt = False) -> None:
    """Run the nightly comparison on a corpus; print the headline figures and the report's path."""
    prepared = prepare(params, RunKind.NIGHTLY)  # bad input: exit 2 before Prefect starts
    _sweep_leftovers(params.run_id)  # before Prefect's server: a killed run's leftovers go
    _local_prefect()
    from flows.nightly import nightly_flow  # imported late: Prefect reads settings at import

    with handed_over(prepared):  # the flow runs what was prepared here, not prepared again
        result = nightly_flow(params=params)
    if as_json:
        print_json(_as_json(result))
    else:
        _print(result)


@run_app.command("pr")
@guarded
@with_model_options(RunParams)
def pr(
    *,
    diff: Annotated[
        Path,
        typer.Option(
            help="The PR's unified diff (git diff base...head).", exists=True, dir_okay=False
        ),
    ],
    params: RunParams,
    as_json: JsonOpt = False,
) -> None:
    """Gate a PR; exit 0 pass or nothing to evaluate, 1 regression, 3 review failed, 4 inconclusive.

    Inconclusive exits 0 where ``[tool.bughunt.gate] inconclusive = "pass"`` accepts it.
    """
    raw = read_input(diff, what="a PR diff")
    # bad input (not a diff at all, first): exit 2 before Prefect starts, nothing stored
    prepared = prepare(params, RunKind.PR, raw, diff_file=str(diff))
    if evaluates_nothing(prepared):
        # The plan runs no case: the run is recorded and reported here, with no flow run and
        # no Prefect server (nothing would be orchestrated).
        from flows import run_pipeline

        result = run_pipeline(prepared, orchestrated=False)
    else:
        _sweep_leftovers(params.run_id)  # before Prefect's server: a killed run's leftovers go
        _local_prefect()
        from flows.pr import pr_flow

        with handed_over(prepared):  # the flow runs what was prepared here, not prepared again
            result = pr_flow(diff=str(diff), params=params)
    if as_json:
        print_json(
            _as_json(result)
            | {"gate": result.summary.gate.model_dump(mode="json") if result.summary.gate else None}
        )
    else:
        _print(result)
    gate = result.summary.gate
    if gate is not None and gate.fails_flow():
        raise typer.Exit(gate.exit_code)
