"""``bughunt simulate gate``: the whole PR gate over seeded simulated PRs (docs/gate.md)."""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import ValidationError

from cli._common import JsonOpt, fail, guarded, print_json
from tasks.gate import load_gate_thresholds
from tasks.gate.simulation import (
    REPRO_MIX,
    ErrorRate,
    GateSimConfig,
    GateSimulation,
    Reproduction,
    Share,
    Verdicts,
    simulate_gate,
)

_HEADER = (
    f"  {'N':>4} {'fixed n':>7} {'score':>5}  {'pass [95% MC]':<22} {'regression [95% MC]':<22}"
    f" {'inconclusive':>12} {'mean cases':>10} {'p90':>4} {'/fixed':>6}"
    f" {'fixed pass':>10} {'fixed regr.':>11}"
    f" {'score tests alone':>17} {'score n':>7} {'/score n':>8}"
)


def _share(s: Share) -> str:
    return f"{s.share:.4f} [{s.low:.4f}, {s.high:.4f}]"


def _table(result: GateSimulation) -> list[str]:
    lines = [_HEADER]
    for corpus in result.corpora:
        for sc in corpus.scenarios:
            lines.append(
                f"  {corpus.size:>4} {corpus.fixed_cases:>7} {sc.true_score:>5.2f}  "
                f"{_share(sc.passed):<22} {_share(sc.regression):<22} "
                f"{sc.inconclusive.share:>12.4f} {sc.mean_cases:>10.1f} {sc.p90_cases:>4} "
                f"{sc.vs_fixed:>6.2f} {sc.fixed_passed.share:>10.4f} "
                f"{sc.fixed_regression.share:>11.4f} {sc.score_only_mean_cases:>17.1f} "
                f"{corpus.score_test_cases:>7} {sc.score_only_vs_fixed:>8.2f}"
            )
    return lines


def _claims(rates: list[ErrorRate], alpha: float, fixed: dict[int, int] | None = None) -> list[str]:
    """One line per claim; for the fixed design (``fixed``: its n per corpus size) with its n;
    a stochastic claim with its reproduction model."""
    width = max(len(e.claim) for e in rates) if rates else 0
    return [
        f"  {e.claim:<{width}} "
        + ("" if e.reproduction is Reproduction.FIXED else f"{e.reproduction:<9} ")
        + f"N={e.size:<4}"
        + (f" n={fixed[e.size]:<4}" if fixed else "")
        + f" {_share(e.rate)}  ≤ alpha {alpha:g}: {'holds' if e.holds else 'FAILS'}"
        for e in rates
    ]


def render(result: GateSimulation) -> str:
    """The human form: the setting, the table, the error-rate claims, the smallest corpus."""
    cfg, reach = result.config, result.reachable
    mix = ", ".join(f"{name.replace('_', ' ')} {share:.0%}" for name, share in REPRO_MIX.items())
    fewest = ", ".join(
        f"N={c.size}: {c.fewest_cases_to_pass if c.fewest_cases_to_pass else 'never'}"
        for c in result.corpora
    )
    verdicts = (
        "drawn afresh in every PR from its category's rates of wins, ties and losses "
        "(the expected corpus mean is the row's)"
        if cfg.verdicts is Verdicts.NOISY
        else "the corpus's own in every PR (a PR reorders the cases)"
    )
    unpowered = [c.size for c in result.corpora if not c.fixed_powered]
    short = (
        f"; on N={', '.join(map(str, unpowered))} no n reaches it, and n is the whole corpus"
        if unpowered
        else ""
    )
    lines = [
        f"PR gate simulation: {cfg.sims} simulated PRs per row, seed {cfg.seed}; "
        f"alpha {cfg.alpha:g}, margin {cfg.margin:g}, a look every {cfg.batch} cases; "
        f"verdicts {cfg.verdicts}",
        f"Corpora: {len(result.corpora[0].scenarios[0].categories)} categories with their own "
        f"score offsets and tie rates, mean pair score exactly the row's; reproduction {mix} "
        "(equal rates)",
        f"Pair scores: {verdicts}; reproduction outcomes: the corpus's own",
        "fixed n: the gate's decision rule with fixed-n normal intervals (with replacement, as "
        f"the gate's bounds), looked at once: pass if both lower bounds at alpha {cfg.alpha:g} clear their "
        "thresholds, regression if either upper bound at alpha/2 is below 0.5; the fewest "
        f"cases passing {cfg.power:.0%} of its simulated PRs at 0.5{short}. "
        "fixed pass, fixed regr.: its outcomes at that n",
        "score tests alone: mean cases on the same orders when the reproduction measure "
        "cannot hold a decision back; score n: a fixed-size test of the score alone "
        f"(mean ≥ {0.5 - cfg.margin:g} at alpha {cfg.alpha:g}, {cfg.power:.0%} power at 0.5, "
        "normal formula, at most N)",
        "",
        *_table(result),
        "",
        "Error rates (the Wilson interval must reach down to alpha or below):",
        *_claims(result.error_rates, cfg.alpha),
        "",
        "The fixed design's own error rates at its n (a normal approximation may exceed alpha):",
        *_claims(
            result.fixed_error_rates, cfg.alpha, {c.size: c.fixed_cases for c in result.corpora}
        ),
        "",
        "Stochastic agents (each PR draws every reproduction outcome afresh; equal: both "
        "versions reproduce a case with the same probability, 0.1, 0.5 or 0.9; differing: the "
        "candidate better by 0.4 on half the cases, worse by 0.4 on the other half): regression "
        f"at equal rates and a true score of 0.5; pass at a rate lower by {cfg.margin:g} when "
        "the candidate wins every pair:",
        *_claims(result.stochastic_error_rates, cfg.alpha),
        "",
        "Smallest corpus on which pass is reachable (every pair won, no reproduction changed): "
        f"{reach.every_pair_won or f'none up to {reach.searched_to}'} cases "
        f"(every pair tied: {reach.every_pair_tied or f'none up to {reach.searched_to}'})",
        f"Fewest cases after which that candidate passes: {fewest}",
    ]
    return "\n".join(lines)


def _sizes(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        fail(f"--sizes: expected comma-separated whole numbers, got {text!r}")


@guarded
def simulate_gate_cmd(  # noqa: PLR0913 - typer maps each parameter to a command-line option
    as_json: JsonOpt = False,
    sims: Annotated[
        int, typer.Option("--sims", help="Simulated PRs per corpus size and true score.", min=1)
    ] = 10_000,
    sizes: Annotated[
        str, typer.Option("--sizes", help="Corpus sizes, comma-separated.")
    ] = "30,60,120,250,500",
    batch: Annotated[
        int, typer.Option("--batch", help="Cases between two looks of the gate.", min=1)
    ] = 10,
    margin: Annotated[
        float | None,
        typer.Option(
            "--margin",
            help="The gate's margin (default: the margin of tool.bughunt.gate in pyproject.toml).",
        ),
    ] = None,
    alpha: Annotated[
        float | None,
        typer.Option(
            "--alpha",
            help="The gate's alpha (default: the alpha of tool.bughunt.gate in pyproject.toml).",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the simulated orders and draws.", min=0)
    ] = 0,
    verdicts: Annotated[
        Verdicts,
        typer.Option(
            "--verdicts",
            help="noisy: every PR draws each case's pair score afresh from its category's "
            "rates; fixed: every PR reorders the corpus's own scores.",
        ),
    ] = Verdicts.NOISY,
) -> None:
    """Simulate the whole PR gate over seeded random PRs on finite corpora of several sizes.

    For each corpus size and true mean pair score (0.3, 0.4, 0.5, 0.6 and
    0.5 − margin) it prints the share of simulated PRs the gate passes, calls a
    regression on, or leaves inconclusive, with Monte Carlo intervals; the
    cases it evaluated before deciding, beside a fixed-size design; and the
    smallest corpus on which pass is reachable. By default every PR draws its
    verdicts afresh (a judge's verdict is a noisy measurement); --verdicts
    fixed reorders fixed case scores instead. docs/gate.md explains it.
    """
    configured = load_gate_thresholds()
    try:
        config = GateSimConfig(
            sims=sims,
            sizes=_sizes(sizes),
            batch=batch,
            alpha=configured.alpha if alpha is None else alpha,
            margin=configured.margin if margin is None else margin,
            seed=seed,
            verdicts=verdicts,
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        message = str(err["msg"]).removeprefix("Value error, ")
        fail(f"--{where}: {message}" if where else message)
    result = simulate_gate(config)
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        typer.echo(render(result))
