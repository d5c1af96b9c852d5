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


def register(app: typer.Typer) -> None:
    app.command("sql")(sql)


@guarded
def sql(
    query: Annotated[
        str, typer.Argument(help="One read-only statement (SELECT, EXPLAIN, PRAGMA).")
    ],
    ledger: LedgerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a read-only SQL query on the ledger and print the rows; writes are refused."""
    rows = Ledger(ledger).user_query(query)
    if as_json:
        print_json(rows)
    else:
        print_rows(rows)
