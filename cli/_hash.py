"""``bughunt hash``: content hashes of a corpus and what changed since the last manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli._common import JsonOpt, LedgerOpt, guarded, print_json
from corpus import load_corpus
from flows.ledger_writes import record_manifest
from ledger import Ledger
from tasks.hash_corpus import hash_loaded_corpus, previous_manifest


def register(app: typer.Typer) -> None:
    app.command("hash")(hash_command)


@guarded
def hash_command(
    corpus: Annotated[Path, typer.Option(help="Corpus folder.")] = Path("corpus/demo"),
    ledger: LedgerOpt = None,
    record: Annotated[
        bool,
        typer.Option("--record", help="Also store this manifest in the ledger (an ad-hoc run)."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Print every case's content hash and the corpus hash, and what changed since the
    latest manifest of this corpus in the ledger (new / changed / removed)."""
    loaded = load_corpus(corpus)
    store = Ledger(ledger)
    prev_run, prev = previous_manifest(store, loaded.name)
    result = hash_loaded_corpus(loaded, prev, prev_run)
    run_id = record_manifest(loaded, result, store) if record else None
    if as_json:
        data = result.model_dump(mode="json")
        data["rejected"] = [r.model_dump(mode="json") for r in loaded.rejected]
        data["recorded_run_id"] = run_id
        print_json(data)
        return
    typer.echo(f"corpus {result.corpus}: {result.corpus_hash}")
    typer.echo(f"target tree: {result.target_hash}")
    for c in result.cases:
        typer.echo(f"  {c.case_hash[:16]}  {c.case_id}")
    for r in loaded.rejected:
        typer.echo(f"  not hashed (rejected): {r.case_id}: {r.describe()}")
    d = result.diff
    if d.previous_run_id is None:
        typer.echo("no previous manifest of this corpus in the ledger: every case is new")
    else:
        typer.echo(
            f"against {d.previous_run_id}: {len(d.new)} new, {len(d.changed)} changed, "
            f"{len(d.removed)} removed, {len(d.unchanged)} unchanged"
        )
        for label, ids in (("new", d.new), ("changed", d.changed), ("removed", d.removed)):
            for case_id in ids:
                typer.echo(f"  {label}: {case_id}")
    if run_id:
        typer.echo(f"manifest recorded as run {run_id} in {store.path}")
