"""``bughunt sql``: a read-only query on the ledger.

Kept apart from the other ledger commands so that it imports DuckDB and
nothing heavier: no pyarrow, no row models (about a quarter of a second of a
command that should answer at once).
"""

from __future__ import annotations

from typing import Annotated

import typer

from cli._common import JsonOpt, LedgerOpt, guarded, print_json, print_rows
from ledger import Ledger

DEFAULT_TIMEOUT_S = 60
"""A query still running after this many seconds is stopped (``--timeout`` raises it)."""

DEFAULT_MAX_ROWS = 10_000
"""Rows printed at most (``--max-rows`` raises it; ``bughunt export`` writes any number)."""


def register(app: typer.Typer) -> None:
    app.command("sql")(sql)


@guarded
def sql(
    query: Annotated[
        str, typer.Argument(help="One read-only statement (SELECT, EXPLAIN, PRAGMA).")
    ],
    ledger: LedgerOpt = None,
    as_json: JsonOpt = False,
    timeout: Annotated[
        int,
        typer.Option("--timeout", min=1, help="Stop the query after this many seconds (exit 2)."),
    ] = DEFAULT_TIMEOUT_S,
    max_rows: Annotated[
        int,
        typer.Option(
            "--max-rows",
            min=1,
            help="Print at most this many rows; with more, exit 1 and say so on stderr.",
        ),
    ] = DEFAULT_MAX_ROWS,
) -> None:
    """Run a read-only SQL query on the ledger and print the rows; writes are refused.

    The query is stopped after --timeout seconds, or on Ctrl-C; at most
    --max-rows rows are fetched and printed (`bughunt export` writes any
    number to a file).
    """
    rows = Ledger(ledger).user_query(query, timeout_s=timeout, max_rows=max_rows)
    more = len(rows) > max_rows
    rows = rows[:max_rows]
    if as_json:
        print_json(rows)
    else:
        print_rows(rows)
    if more:
        typer.echo(
            f"only the first {max_rows} rows are shown: raise --max-rows, or write them all "
            "with `bughunt export --query`",
            err=True,
        )
        raise typer.Exit(1)
