"""``bughunt probe``: measure a judge's (or jury's) biases on pairs built from the corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bughunt.spans import ttl_seconds
from cli._common import (
    JsonOpt,
    JudgeCacheTtlOpt,
    JudgesConfigOpt,
    LedgerOpt,
    RefreshJudgeOpt,
    guarded,
    print_json,
    print_rows,
)


def register(app: typer.Typer) -> None:
    app.command("probe")(probe)


@guarded
def probe(  # noqa: PLR0913 - typer maps each parameter to a command-line option
    judge: Annotated[
        str, typer.Option(help="Judge or jury name (a jury adds self-preference).")
    ] = "sim",
    corpus: Annotated[
        Path, typer.Option(help="Corpus whose recorded reports make the pairs.")
    ] = Path("corpus/demo"),
    pairs: Annotated[
        int, typer.Option(min=1, help="Reports per probe (position, verbosity).")
    ] = 20,
    judges_config: JudgesConfigOpt = None,
    refresh_judge: RefreshJudgeOpt = False,
    judge_cache_ttl: JudgeCacheTtlOpt = None,
    ledger: LedgerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Position consistency and the four-way table on near-identical pairs (both orders), the
    verbosity padding attack, and — for a jury — self-preference; Wilson intervals over pairs.

    The pairs come from the corpus's recorded (replay) reports. The results and
    every judge call are stored in the ledger as an ad-hoc run.
    """
    from corpus import load_corpus
    from flows.ledger_writes import probe_judges
    from ledger import Ledger

    store = Ledger(ledger)
    done = probe_judges(
        load_corpus(corpus),
        judge,
        pairs=pairs,
        ledger=store,
        judges_config=judges_config,
        refresh=refresh_judge,
        cache_ttl_s=ttl_seconds(judge_cache_ttl),
    )
    run_id, calls, rows_out = done.run_id, done.calls, done.probes
    table = [
        {
            "judge": p.judge,
            "probe": p.probe.value,
            "metric": p.metric,
            "value": None if p.value is None else round(p.value, 4),
            "ci_low": None if p.ci_low is None else round(p.ci_low, 4),
            "ci_high": None if p.ci_high is None else round(p.ci_high, 4),
            "n": p.n,
        }
        for p in rows_out
    ]
    failed = sum(1 for c in calls if c.status.value != "judged")
    if as_json:
        print_json({"run_id": run_id, "calls": len(calls), "failed_calls": failed, "probes": table})
        return
    print_rows(table, title=f"bias probes of {judge} (run {run_id})")
    typer.echo(
        "net bias = P(favoured side wins) − P(other side wins); intervals are Wilson 95% over pairs."
    )
    typer.echo(f"{len(calls)} judge calls, {failed} failed (never counted); stored in {store.path}")
    if done.judges == 1:
        typer.echo("self-preference needs a cross-family jury: give --judge <jury name>")
