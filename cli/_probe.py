"""``bughunt probe``: measure a judge's (or jury's) biases on pairs built from the corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bughunt.models import AgentMode, BugReport, ReproOutcome, RunInfo, RunKind, RunStatus, Strategy
from cli._common import JsonOpt, LedgerOpt, fail, guarded, print_json, print_rows


def register(app: typer.Typer) -> None:
    app.command("probe")(probe)


@guarded
def probe(
    judge: Annotated[
        str, typer.Option(help="Judge or jury name (a jury adds self-preference).")
    ] = "sim",
    corpus: Annotated[
        Path, typer.Option(help="Corpus whose recorded reports make the pairs.")
    ] = Path("corpus/demo"),
    pairs: Annotated[
        int, typer.Option(min=1, help="Reports per probe (position, verbosity).")
    ] = 20,
    judges_config: Annotated[
        Path | None,
        typer.Option(help="TOML with [judges.*] / [juries.*] (default ./pyproject.toml)."),
    ] = None,
    refresh_judge: Annotated[
        bool, typer.Option("--refresh-judge", help="Bypass the judge cache.")
    ] = False,
    ledger: LedgerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Position consistency and the four-way table on near-identical pairs (both orders), the
    verbosity padding attack, and — for a jury — self-preference; Wilson intervals over pairs.

    The pairs come from the corpus's recorded (replay) reports. The results and
    every judge call are stored in the ledger as an ad-hoc run.
    """
    from corpus import load_corpus
    from flows import new_run_id
    from judging.judges import build_judge, load_judges
    from ledger import Ledger
    from tasks.sandbox._agents import recorded_report
    from tasks.score import ReportEvidence, ScoreSettings, report_quality
    from tasks.score._probe_stage import ProbeContext, probe_judge, probe_self_preference

    loaded = load_corpus(corpus)
    configs = load_judges(judges_config).resolve(judge)
    members = [build_judge(c) for c in configs]
    store = Ledger(ledger)
    known: dict[tuple[str, str], ReproOutcome] = {}
    if store.path.exists():
        rows = store.query(
            "SELECT case_id, agent_version, arg_max(outcome, created_at) AS outcome "
            "FROM reproductions GROUP BY ALL"
        )
        known = {(r["case_id"], r["agent_version"]): ReproOutcome(r["outcome"]) for r in rows}
    reports: list[BugReport] = []
    quality: dict[tuple[str, str], float] = {}
    families: dict[str, str] = {}
    for agent in loaded.config.agents:
        if agent.mode is not AgentMode.REPLAY:
            continue
        families[agent.name] = agent.family
        for case in loaded.cases:
            got = recorded_report(agent, case.case_id)
            if isinstance(got, str):
                continue
            reports.append(got)
            outcome = known.get((case.case_id, agent.name))
            if outcome is not None:
                quality[(case.case_id, agent.name)] = report_quality(
                    ReportEvidence(
                        case_id=case.case_id,
                        agent_version=agent.name,
                        family=agent.family,
                        report=got,
                        outcome=outcome,
                    )
                )
    if not reports:
        fail(f"no recorded report in {loaded.root}: probes need replay agents' reports")
    run_id = new_run_id("probe")
    settings = ScoreSettings(probe_pairs=pairs, refresh=refresh_judge)
    ctx = ProbeContext(
        families=families,
        quality=quality,
        run_id=run_id,
        settings=settings,
        ledger=store,
    )
    calls, rows_out = [], []
    for member in members:
        c, r = probe_judge(member, reports, ctx)
        calls += c
        rows_out += r
    if len(members) > 1:
        c, r = probe_self_preference(members, reports, ctx)
        calls += c
        rows_out += r
    info = {"run_id": run_id, "kind": RunKind.ADHOC, "corpus": loaded.name, "judge": judge}
    store.write(
        [
            RunInfo(
                status=RunStatus.COMPLETED, strategy=Strategy.SWAP, message="bias probes", **info
            ),
            *calls,
            *rows_out,
        ]
    )
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
    if len(members) == 1:
        typer.echo("self-preference needs a cross-family jury: give --judge <jury name>")
