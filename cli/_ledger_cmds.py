"""Commands over the ledger and the models: ``export``, ``schema``, ``migrate`` (``sql`` is
in ``cli._sql``, which imports neither pyarrow nor the models)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bughunt.models import MODELS
from cli._common import LedgerOpt, console, fail, guarded, print_json
from ledger import (
    ExportFormat,
    Ledger,
    current_version,
    format_for,
    known_migrations,
    write_batches,
)


def register(app: typer.Typer) -> None:
    app.command("export")(export)
    app.command("schema")(schema)
    app.command("migrate")(migrate)


@guarded
def export(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="The file to write (replaced whole if it exists); a FIFO or device such as "
            "/dev/stdout is written into, never replaced.",
        ),
    ],
    table: Annotated[
        str | None, typer.Option("--table", help="A ledger table or view, exported whole.")
    ] = None,
    query: Annotated[
        str | None, typer.Option("--query", help="One read-only statement (as `bughunt sql`).")
    ] = None,
    fmt: Annotated[
        ExportFormat | None,
        typer.Option("--format", help="csv, parquet or jsonl (default: from the file's suffix)."),
    ] = None,
    ledger: LedgerOpt = None,
    timeout: Annotated[
        int | None,
        typer.Option(
            "--timeout",
            min=1,
            help="Stop after this many seconds (exit 2; default: no limit).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Write a ledger table or a read-only query's rows to a CSV, Parquet or JSON Lines file.

    The query runs read-only with DuckDB's external access off (it cannot
    write or attach files itself); the rows are streamed to the file, which
    appears whole or not at all. Ctrl-C or --timeout stops it, leaving no file.
    """
    if (table is None) == (query is None):
        fail("give exactly one of --table and --query")
    store = Ledger(ledger)
    fmt = format_for(out, fmt)
    if table is not None:
        known = store.relations()
        if table not in known:
            fail(f"no table or view {table!r} in the ledger; known: {', '.join(known)}")
        # The name is one the ledger's own catalog listed (checked above), quoted.
        query = f'SELECT * FROM "{table}"'  # noqa: S608
    assert query is not None
    rows = store.user_export(
        query, lambda reader: write_batches(reader, out, fmt), timeout_s=timeout
    )
    console.print(f"wrote {rows} row(s) to {out} ({fmt.value})", markup=False)


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
