"""Commands over the ledger and the models: ``sql``, ``schema``, ``migrate``."""

from __future__ import annotations

from typing import Annotated

import typer

from bughunt.models import MODELS
from cli._common import JsonOpt, LedgerOpt, console, fail, guarded, print_json, print_rows
from ledger import Ledger, current_version, known_migrations


def register(app: typer.Typer) -> None:
    app.command("sql")(sql)
    app.command("schema")(schema)
    app.command("migrate")(migrate)


@guarded
def sql(
    query: Annotated[
        str, typer.Argument(help="One read-only statement (SELECT, EXPLAIN, PRAGMA).")
    ],
    ledger: LedgerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a read-only SQL query on the ledger and print the rows; writes are refused."""
    table = Ledger(ledger).user_query(query)
    rows = table.to_pylist()
    if as_json:
        print_json(rows)
    else:
        print_rows(rows)


@guarded
def schema(
    model: Annotated[str, typer.Argument(help=f"One of: {', '.join(MODELS)}.")],
) -> None:
    """Print the JSON schema of a domain model."""
    if model not in MODELS:
        fail(f"unknown model {model!r}; choose one of: {', '.join(MODELS)}")
    print_json(MODELS[model].model_json_schema())


@guarded
def migrate(ledger: LedgerOpt = None) -> None:
    """Create the ledger file if needed and apply every missing schema migration."""
    store = Ledger(ledger)
    store.migrate()
    with store.reader() as con:
        version = current_version(con)
    console.print(
        f"ledger {store.path} is at schema version {version} "
        f"(this bughunt knows {len(known_migrations())})",
        markup=False,
    )
