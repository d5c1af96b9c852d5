"""Flake ledger: ``flakes`` (current keys) and ``flakes trend`` (per night, category, agent)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import typer

from bughunt.models import FlakeState
from cli._common import JsonOpt, LedgerOpt, guarded, print_json, print_rows
from ledger import Ledger
from tasks.flakes import TrendBy, flake_trend, list_flakes, parse_since

SinceOpt = Annotated[
    str | None,
    typer.Option(
        "--since",
        help="Only what was seen in the last N days or hours, e.g. 30d or 12h.",
        show_default=False,
    ),
]

flakes_app = typer.Typer(no_args_is_help=False)


def register(app: typer.Typer) -> None:
    app.add_typer(flakes_app, name="flakes")


def _pct(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}%"


def _rate(row: dict[str, Any]) -> str:
    if row["flake_rate"] is None:
        return ""
    return f"{_pct(row['flake_rate'])} [{_pct(row['ci_low'])}, {_pct(row['ci_high'])}]"


def _day(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d")


@flakes_app.callback(invoke_without_command=True)
@guarded
def flakes(
    ctx: typer.Context,
    state: Annotated[
        list[FlakeState] | None,
        typer.Option(
            "--state",
            help="Only keys in this state (repeatable). Default: flaky, suspected, cleared.",
            show_default=False,
        ),
    ] = None,
    since: SinceOpt = None,
    ledger: LedgerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List test keys by flake state, with their evidence (runs, passes, fails, flips, rate).

    A key is (case hash, agent version, test hash, tree, image): a test that
    both passed and failed under one key is suspected, then flaky once the
    evidence threshold is met, and cleared after a quiet spell. Flaky first,
    highest flake rate first; --since keeps keys executed in that span.
    """
    if ctx.invoked_subcommand is not None:
        return
    span = parse_since(since) if since is not None else None
    rows = list_flakes(Ledger(ledger), state, span)
    if as_json:
        print_json(rows)
        return
    print_rows(
        [
            {
                "case": r["case_id"],
                "agent": r["agent_version"],
                "tree": r["tree"],
                "state": r["state"],
                "pass": r["passes"],
                "fail": r["fails"],
                "flips": r["flips"],
                "flake rate [95% CI]": _rate(r),
                "last seen": _day(r["last_seen"]),
                "test": str(r["test_hash"])[:8],
            }
            for r in rows
        ],
        title="test keys",
    )


@flakes_app.command("trend")
@guarded
def trend(
    by: Annotated[
        TrendBy,
        typer.Option("--by", help="One series per night, or per night and category / agent."),
    ] = TrendBy.NIGHT,
    since: SinceOpt = None,
    ledger: LedgerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Flake trend per night: keys executed, how many in each state, flake rate with its interval.

    The flake rate of a night is the share of the keys executed that night
    whose state is flaky. The same series are the views flake_nightly,
    flake_nightly_by_category and flake_nightly_by_agent (`bughunt sql`).
    """
    span = parse_since(since) if since is not None else None
    rows = flake_trend(Ledger(ledger), by, span)
    if as_json:
        print_json(rows)
        return
    group = {TrendBy.CATEGORY: "category", TrendBy.AGENT: "agent_version"}.get(by)
    print_rows(
        [
            {
                "night": r["night"].isoformat(),
                **({group: r[group]} if group else {}),
                "keys": r["keys"],
                "flaky": r["flaky"],
                "suspected": r["suspected"],
                "cleared": r["cleared"],
                "failing": r["failing"],
                "passing": r["passing"],
                "flipped": r["flipped"],
                "flake rate [95% CI]": _rate(r),
            }
            for r in rows
        ],
        title=f"flake trend by {by}",
    )
