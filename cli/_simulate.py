"""``bughunt simulate``: every judging strategy on the simulated judge, exact and sampled.

``bughunt simulate gate`` (cli/_simulate_gate.py) simulates the PR gate instead.
"""

from __future__ import annotations

from typing import Annotated

import typer

from cli import _simulate_gate
from cli._common import JsonOpt, guarded, print_json
from judging.bias import SimParams, SimulationConfig, SimulationReport, simulate

EXPLAIN: tuple[tuple[str, str], ...] = (
    ("calls", "judge calls per pair"),
    (
        "position_net_bias",
        "P(lead side wins) − P(other side wins) on near-identical pairs, both leads averaged;"
        " the lead is the side a single-order strategy shows first (0 = no position bias)",
    ),
    (
        "swap_flip_rate",
        "P(the verdict changes when the other side leads), near-identical pairs"
        " (calls shared by judge, order and sample, as in the cache)",
    ),
    ("correct", "P(the better report wins), gap set, both orders equally"),
    ("reversed", "P(the worse report wins), gap set"),
    ("tie", "P(tie), gap set"),
    ("verbosity_net_bias", "P(padded report wins) − P(original wins): same information, 2× words"),
    ("self_net_bias", "P(judge's own-family report wins) − P(other family's wins)"),
    (
        "self_share_of_decisive",
        "P(own family wins) / P(either wins): shown beside the net bias, never instead of it",
    ),
)
"""Each strategy metric and the line that explains it."""

FOUR_WAY: tuple[tuple[str, str], ...] = (
    ("consistent", "same verdict in both orders"),
    ("biased_first", "whichever report was first won, both times"),
    ("biased_second", "whichever report was second won, both times"),
    ("one_tie_one_win", "a tie in one order, a win in the other"),
)


def register(app: typer.Typer) -> None:
    # A group whose own options keep `bughunt simulate [options]` the judge simulation.
    group = typer.Typer(invoke_without_command=True, no_args_is_help=False)
    group.callback(invoke_without_command=True)(simulate_cmd)
    group.command("gate")(_simulate_gate.simulate_gate_cmd)
    app.add_typer(group, name="simulate")


def _num(value: float | int | None, signed: bool = False) -> str:
    if value is None:
        return "—"
    if isinstance(value, int):
        return str(value)
    text = f"{value:+.3f}" if signed else f"{value:.3f}"
    return "+0.000" if text == "-0.000" else text


def render(report: SimulationReport) -> str:
    """The human form: position table, strategy table, identical pair, Monte Carlo check."""
    cfg, p = report.config, report.config.params
    sets = report.pair_sets
    lines = [
        f"Simulated judge: s={p.s:g} b_pos={p.b_pos:g} b_len={p.b_len:g} b_self={p.b_self:g} "
        f"m={p.m:g}; jury {', '.join(cfg.families)}; majority k={cfg.k}",
        f"Pair sets (seed {cfg.seed}): position {sets['position']}, gap {sets['gap']}, "
        f"verbosity {sets['verbosity']}, self {sets['self']}; hash {str(sets['hash'])[:16]}",
        "",
        "Position table — one call in each order, fractions of pairs:",
        f"  {'set':<10}" + "".join(f"{name:>17}" for name, _ in FOUR_WAY),
    ]
    for set_name, row in report.position_table.items():
        values = row.model_dump()
        lines.append(f"  {set_name:<10}" + "".join(f"{_num(values[n]):>17}" for n, _ in FOUR_WAY))
    lines += [f"  {name:<17} {text}" for name, text in FOUR_WAY]
    names = list(report.strategies)
    lines += ["", "Strategies — exact:", f"  {'metric':<24}" + "".join(f"{n:>13}" for n in names)]
    for metric, _ in EXPLAIN:
        signed = metric.endswith("net_bias")
        cells = [_num(report.strategies[n].model_dump()[metric], signed) for n in names]
        lines.append(f"  {metric:<24}" + "".join(f"{c:>13}" for c in cells))
    lines.append("  net bias = P(favoured side wins) − P(other side wins); ties count for neither.")
    lines += [f"  {metric:<24}{text}" for metric, text in EXPLAIN]
    lines += ["", "Identical pair — P(report a wins):"]
    for name, ip in report.identical_pair.items():
        lines.append(f"  {name:<10} a first {_num(ip.a_first)}   a second {_num(ip.a_second)}")
    mc = report.monte_carlo
    lines += [
        "",
        f"Monte Carlo — correct on the gap set, seed {mc.seed}, {mc.draws} draws per strategy:",
        f"  {'strategy':<14}{'sampled':>10}{'exact':>10}{'diff (SE)':>11}",
    ]
    for name, check in mc.strategies.items():
        lines.append(
            f"  {name:<14}{check.sampled_correct:>10.4f}{check.exact_correct:>10.4f}"
            f"{check.difference_se:>+11.2f}"
        )
    return "\n".join(lines)


@guarded
def simulate_cmd(  # noqa: PLR0913 - typer maps each parameter to a command-line option
    ctx: typer.Context,
    as_json: JsonOpt = False,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the pair sets and of the Monte Carlo.")
    ] = 0,
    s: Annotated[float, typer.Option("--s", help="Weight of the quality difference.")] = 12.0,
    b_pos: Annotated[float, typer.Option("--b-pos", help="Bonus of the first position.")] = 0.8,
    b_len: Annotated[float, typer.Option("--b-len", help="Bonus per doubling of the words.")] = 1.2,
    b_self: Annotated[
        float, typer.Option("--b-self", help="Bonus of the judge's own family.")
    ] = 0.6,
    m: Annotated[float, typer.Option("--m", help="Tie half-width (>= 0).", min=0.0)] = 0.6,
    draws: Annotated[
        int, typer.Option("--draws", help="Monte Carlo draws per strategy.", min=1)
    ] = 20_000,
    k: Annotated[int, typer.Option("--k", help="Votes of the majority strategy.", min=1)] = 5,
) -> None:
    """Compute every judging strategy on the simulated judge, exactly and by seeded Monte Carlo.

    The simulated judge has known position, verbosity and self-preference
    biases (docs/judge-bias.md). The table shows what each strategy cures and what it
    costs, on probe pair sets built by construction; docs/judge-bias.md
    explains every metric. The options apply to this simulation;
    `bughunt simulate gate` simulates the PR gate instead (docs/gate.md).
    """
    if ctx.invoked_subcommand is not None:
        return
    params = SimParams(s=s, b_pos=b_pos, b_len=b_len, b_self=b_self, m=m)
    report = simulate(SimulationConfig(params=params, seed=seed, draws=draws, k=k))
    if as_json:
        print_json(report.model_dump(mode="json"))
    else:
        typer.echo(render(report))
