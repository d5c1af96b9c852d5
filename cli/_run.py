"""``bughunt run``: the flows in this process, on Prefect's local ephemeral API."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli._common import JsonOpt, guarded, print_json
from cli._params import with_model_options
from flows import RunParams
from tasks.classify import changed_paths

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


def _print(result: RunResult) -> None:
    s = result.summary
    typer.echo(f"run {result.run_id} ({result.kind.value}) → {result.ledger}")
    if result.stages_resumed:
        typer.echo("resumed (already finished): " + ", ".join(result.stages_resumed))
    typer.echo("stages run: " + (", ".join(result.stages_run) or "none"))
    if result.stages_skipped:
        typer.echo("stages not needed by the plan: " + ", ".join(result.stages_skipped))
    h = s.headline
    if h is not None:
        rate = (
            f"{h.win_rate:.0%} (95% CI {h.win_rate_ci[0]:.0%}–{h.win_rate_ci[1]:.0%})"
            if h.win_rate is not None and h.win_rate_ci
            else "no decisive pair"
        )
        p = f"sign test p = {h.sign_test_p:.3g}" if h.sign_test_p is not None else "no sign test"
        flags = f" [{', '.join(h.flags)}]" if h.flags else ""
        typer.echo(
            f"{s.candidate} vs {s.baseline}: candidate wins {h.candidate_wins} of {h.decisive} "
            f"decisive pairs = {rate}; {h.ties} ties, {h.unscored} unscored; {p}{flags}"
        )
        lc = h.length_controlled
        typer.echo(
            f"length-controlled win rate: {lc.value:.0%}"
            if lc.value is not None
            else f"length-controlled win rate: none — {lc.note}"
        )
    for v in s.repro:
        rate = f"{v.rate:.0%}" if v.rate is not None else "none"
        ci = f" (95% CI {v.rate_ci[0]:.0%}–{v.rate_ci[1]:.0%})" if v.rate_ci else ""
        bounds = f", bounds {v.rate_bounds[0]:.0%}–{v.rate_bounds[1]:.0%}" if v.rate_bounds else ""
        typer.echo(
            f"{v.agent_version}: reproduced {v.reproduced} of {v.reproduced + v.not_reproduced} "
            f"decided = {rate}{ci}{bounds}; {v.flaky} flaky, {v.error} error"
        )
    typer.echo(
        f"judge: {s.health.calls_sent} calls sent, {s.health.cache_hits} from cache"
        + (f"; DEGRADED: {s.health.degraded_reason}" if s.health.degraded else "")
    )
    if s.gate is not None:
        typer.echo(f"gate: {s.gate.outcome.value} (exit {s.gate.exit_code}) — {s.gate.message}")
    if result.report_dir:
        typer.echo(f"report: {Path(result.report_dir) / 'report.html'}")


@run_app.command("nightly")
@guarded
@with_model_options(RunParams)
def nightly(*, params: RunParams, as_json: JsonOpt = False) -> None:
    """Run the nightly comparison on a corpus; print the headline figures and the report's path."""
    _local_prefect()
    from flows.nightly import nightly_flow  # imported late: Prefect reads settings at import

    result = nightly_flow(params=params)
    if as_json:
        print_json(result.model_dump(mode="json", exclude={"summary"}))
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
    """Gate a PR; exit 0 pass or nothing to evaluate, 1 regression, 3 review failed."""
    changed_paths(diff.read_bytes(), file=str(diff))  # bad input: exit 2 before Prefect starts
    _local_prefect()
    from flows.pr import pr_flow

    result = pr_flow(diff=str(diff), params=params)
    if as_json:
        print_json(
            result.model_dump(mode="json", exclude={"summary"})
            | {"gate": result.summary.gate.model_dump(mode="json") if result.summary.gate else None}
        )
    else:
        _print(result)
    gate = result.summary.gate
    if gate is not None and gate.exit_code:
        raise typer.Exit(gate.exit_code)
