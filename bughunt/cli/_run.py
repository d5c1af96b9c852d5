"""``bughunt run``: the flows on Prefect's local ephemeral API."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from bughunt.cli._common import JsonOpt, LedgerOpt, console, guarded, print_json

run_app = typer.Typer(
    help="Run a flow in this process on Prefect's local API.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(run_app, name="run")


def _local_prefect() -> None:
    """Keep Prefect's local state under .bughunt/ unless the user points elsewhere."""
    if "PREFECT_API_URL" not in os.environ and "PREFECT_HOME" not in os.environ:
        home = Path(".bughunt/prefect").resolve()
        home.mkdir(parents=True, exist_ok=True)
        os.environ["PREFECT_HOME"] = str(home)
    # Offline machines: no usage analytics (its heartbeat only logs errors here).
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_UI_ENABLED", "false")


@run_app.command("nightly")
@guarded
def nightly(
    corpus: Annotated[Path, typer.Option(help="Corpus folder.")] = Path("corpus/demo"),
    ledger: LedgerOpt = None,
    run_id: Annotated[str | None, typer.Option(help="Run id (default: a new one).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the nightly comparison flow on a corpus and print where its outputs are."""
    _local_prefect()
    from flows.nightly import nightly_flow  # imported late: Prefect reads settings at import

    result = nightly_flow(corpus=str(corpus), ledger=str(ledger) if ledger else None, run_id=run_id)
    if as_json:
        print_json(result.model_dump(mode="json"))
        return
    console.print(f"run {result.run_id} recorded in {result.ledger}", markup=False)
    if result.stages_run:
        console.print("stages run: " + ", ".join(result.stages_run), markup=False)
    if result.stages_not_built:
        console.print(
            "stages NOT BUILT YET (nothing was produced for them): "
            + ", ".join(result.stages_not_built),
            markup=False,
        )
    if result.report_path:
        console.print(f"report: {result.report_path}", markup=False)
    else:
        console.print("report: none (the report stage is not built yet)", markup=False)
