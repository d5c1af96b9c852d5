"""A seeded simulation of the whole PR gate (docs/gate.md#the-simulation).

Each simulated PR is a uniformly random order of a finite corpus whose true
mean pair score is known exactly. By default (``verdicts="noisy"``) every
case's pair score is drawn afresh in each PR from its category's rates of
wins, ties and losses, so the corpus's *expected* mean is the true score and
a PR's observed mean varies around it, as a judge's verdicts do; with
``verdicts="fixed"`` the case scores are the corpus's own and a PR only
reorders them. Reproduction outcomes are the corpus's fixed ones in both.
The gate (:func:`gate_steps`, the code the real gate runs) looks after every
batch of cases and the first look where regression or pass holds decides,
else the run ends inconclusive. Over many PRs this measures the gate's error
rates — ``pass`` at a true score of ½ − margin, ``regression`` at ½ — and
how many cases it needs, beside a fixed-size design: the same decision rule
with fixed-n intervals, at the same alpha, sized (by simulation, on the same
kind of draws) for 80% power to pass at ½ (or, when no n on the corpus
reaches it, with its highest power).

Then the same two errors with stochastic agents, whose tests reproduce each
case with a probability of its own, drawn afresh in every PR
(:class:`Reproduction`): ``regression`` when both versions' rates are equal
(a true score of ½), ``pass`` when the candidate's rate is lower by the
margin and it wins every pair (so only the reproduction test can hold the
pass back).

Pure and seeded: the same configuration gives the same numbers. The corpora
come from :mod:`tasks.gate._sim_corpus`, the runs from :mod:`tasks.gate._sim_runs`,
the fixed-size design from :mod:`tasks.gate._sim_fixed`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from bughunt.stats import wilson
from tasks.gate._sequences import gate_steps
from tasks.gate._settings import GateThresholds
from tasks.gate._sim_corpus import (
    CATEGORIES,
    REPRO_MIX,
    CategoryMix,
    Reproduction,
    ReproMix,
    SimCorpus,
    Verdicts,
    build_corpus,
    draw_repro,
    draw_scores,
    exact_score,
    with_reproduction,
)
from tasks.gate._sim_fixed import fixed_counts, smallest_powered
from tasks.gate._sim_runs import (
    INCONCLUSIVE,
    PASS,
    REGRESSION,
    Steps,
    best_case_pass,
    decide_runs,
    look_points,
    run_orders,
    smallest_passing_corpus,
)

TRUE_SCORES = (0.3, 0.4, 0.5, 0.6)
"""True scores at which the cases needed are compared (½ − margin is always added)."""


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class GateSimConfig(_Out):
    """Everything a gate simulation depends on; recorded in its output."""

    sims: int = Field(default=10_000, ge=1)
    """Simulated PRs per corpus size and true score."""
    sizes: tuple[int, ...] = (30, 60, 120, 250, 500)
    """Corpus sizes (cases); each must let every true score be met exactly (2·score·N whole)."""
    batch: int = Field(default=10, ge=1)
    """Cases evaluated between two looks of the gate."""
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    """The gate's alpha (``[tool.bughunt.gate] alpha``)."""
    margin: float = Field(default=0.10, gt=0, lt=0.5)
    """The gate's margin (``[tool.bughunt.gate] margin``)."""
    seed: int = Field(default=0, ge=0)
    """Seed of every simulated order and draw (each corpus size and score has its own stream)."""
    power: float = Field(default=0.8, gt=0, lt=1)
    """Simulated power of the fixed-size design to pass at a true score of ½."""
    verdicts: Verdicts = Verdicts.NOISY
    """``noisy``: each PR draws every case's pair score afresh from its category's rates;
    ``fixed``: each PR reorders the corpus's own scores. Reproduction outcomes are fixed in
    both, except in the stochastic scenarios (:class:`Reproduction`)."""

    @model_validator(mode="after")
    def _exact_corpora(self) -> GateSimConfig:
        if not self.sizes:
            raise ValueError("sizes: give at least one corpus size")
        small = [n for n in self.sizes if n < len(CATEGORIES)]
        if small:
            raise ValueError(f"sizes: a corpus needs at least {len(CATEGORIES)} cases, got {small}")
        for n in self.sizes:
            for score in self.true_scores():
                if exact_score(score, n) is None:
                    raise ValueError(
                        f"sizes: no corpus of {n} cases has a mean pair score of exactly "
                        f"{score:g} (2·score·N must be whole)"
                    )
        return self

    def thresholds(self) -> GateThresholds:
        """The gate thresholds simulated (``max_unreviewed`` plays no part: nothing is missing)."""
        return GateThresholds(alpha=self.alpha, margin=self.margin)

    def true_scores(self) -> tuple[float, ...]:
        """½ − margin (claim a), ½ (claim b) and :data:`TRUE_SCORES`, ascending, no repeats."""
        scores = {round(s, 10) for s in (*TRUE_SCORES, 0.5 - self.margin)}
        return tuple(sorted(scores))


class Share(_Out):
    """A share of the simulated PRs, with its 95% Monte Carlo (Wilson) interval."""

    count: int
    """Simulated PRs with this outcome."""
    share: float
    """``count / sims``."""
    low: float
    """Wilson 95% lower bound."""
    high: float
    """Wilson 95% upper bound."""


class ScenarioResult(_Out):
    """The gate over many simulated PRs on one corpus of one true score."""

    true_score: float
    """The corpus's mean pair score, exactly."""
    categories: list[CategoryMix]
    """Wins, ties and losses per category."""
    passed: Share
    """PRs the gate passed."""
    regression: Share
    """PRs the gate called a regression."""
    inconclusive: Share
    """PRs left inconclusive after every case."""
    mean_cases: float
    """Mean cases evaluated to the decision (an inconclusive PR counts every case)."""
    p90_cases: int
    """90th percentile of the cases evaluated (an observed value)."""
    vs_fixed: float
    """``mean_cases`` / the fixed-size design's cases (``CorpusResult.fixed_cases``)."""
    fixed_passed: Share
    """PRs the fixed-size design passes (its own seeded samples of ``fixed_cases`` cases)."""
    fixed_regression: Share
    """PRs the fixed-size design calls a regression."""
    score_only_mean_cases: float
    """Mean cases to a decision when the reproduction measure cannot hold it back (every case
    a reproduction only the candidate made, shown within 5 cases): the score's tests alone.
    The same orders as the whole gate's."""
    score_only_vs_fixed: float
    """``score_only_mean_cases`` / ``CorpusResult.score_test_cases``."""


class ErrorRate(_Out):
    """One error-rate claim (of the gate, or of the fixed-size design) on one corpus size."""

    claim: str
    """``pass at ½ − margin`` or ``regression at ½`` (fixed reproduction outcomes);
    ``regression at equal rates`` or ``pass at a rate lower by the margin`` (stochastic)."""
    reproduction: Reproduction = Reproduction.FIXED
    """How the versions' tests reproduced the cases (:class:`Reproduction`)."""
    size: int
    """Cases in the corpus."""
    rate: Share
    """Share of simulated PRs that made the error."""
    holds: bool
    """Whether ``alpha`` is within the Monte Carlo interval or above it (rate.low ≤ alpha)."""


class CorpusResult(_Out):
    """One corpus size: its fixed-size design and the gate at each true score."""

    size: int
    """Cases in the corpus."""
    reproduction: ReproMix
    """Reproduction outcomes per case, the same at every true score."""
    score_variance: float
    """Variance of the case scores at a true score of ½ (population form, divisor N)."""
    fixed_cases: int
    """n of the fixed-size design (docs/gate.md#the-simulation): the gate's decision rule with
    fixed-n normal intervals (with replacement, as the gate's bounds), looked at once after n
    cases; the smallest n (at least 2) whose simulated pass share at a true score of ½
    reaches ``config.power``; when none up to ``size`` does, the whole corpus (then its
    ``fixed_passed`` at ½ is below the power)."""
    fixed_powered: bool
    """Whether some n up to ``size`` reaches ``config.power``."""
    score_test_cases: int
    """Cases of the score's pass test alone for the same power, by formula
    (:func:`score_test_cases`), at most ``size``: the design the score tests alone compare
    with."""
    fewest_cases_to_pass: int | None
    """Cases after which a candidate that wins every pair and changes no reproduction passes
    (``None``: it never does): no PR passes sooner."""
    scenarios: list[ScenarioResult]
    """One per true score, ascending."""


class Reachability(_Out):
    """The smallest corpus on which the gate can pass at all (docs/gate.md#smallest-corpus)."""

    every_pair_won: int | None
    """Smallest N passing when the candidate wins every pair and changes no reproduction."""
    every_pair_tied: int | None
    """Smallest N passing when every pair is a tie and no reproduction changes."""
    searched_to: int
    """Largest N tried (``None`` above means no N up to it passes)."""


class GateSimulation(_Out):
    """The simulation's result: per corpus size, per true score; the claims; reachability."""

    config: GateSimConfig
    """What was simulated."""
    corpora: list[CorpusResult]
    """One per corpus size, in the order given."""
    error_rates: list[ErrorRate]
    """The gate's claims (a) and (b) on every corpus size."""
    fixed_error_rates: list[ErrorRate]
    """The same two error rates of the fixed-size design at its n, for comparison (a normal
    approximation may exceed alpha)."""
    stochastic_error_rates: list[ErrorRate]
    """The gate's two error rates with stochastic agents, per reproduction model and corpus
    size (:func:`stochastic_error_rates`)."""
    reachable: Reachability
    """The smallest corpus on which pass is reachable."""


def _share(count: int, sims: int) -> Share:
    interval = wilson(count, sims)
    assert interval is not None  # sims ≥ 1
    return Share(count=count, share=count / sims, low=interval[0], high=interval[1])


_FIXED_STREAM = 1
"""Tags the fixed design's seeds apart from the gate's orders of the same corpus."""


def _seed(config: GateSimConfig, corpus: SimCorpus, *stream: int) -> list[int]:
    """The seed of one corpus's runs: (seed, N, true score in millionths[, stream])."""
    return [config.seed, corpus.scores.size, round(corpus.true_score * 1_000_000), *stream]


def simulate_scenario(
    corpus: SimCorpus,
    config: GateSimConfig,
    fixed_cases: int,
    score_cases: int,
    steps: Steps = gate_steps,
) -> ScenarioResult:
    """The gate over ``config.sims`` seeded random orders of ``corpus`` (with fresh pair
    scores when ``config.verdicts`` is noisy), its score tests alone over the same orders
    and draws, and the fixed-size design of ``fixed_cases`` cases over orders and draws of
    its own. ``score_cases`` is the score test alone's fixed n."""
    seed = _seed(config, corpus)
    looks = look_points(corpus.scores.size, config.batch)
    run = functools.partial(
        run_orders,
        sims=config.sims,
        looks=looks,
        thresholds=config.thresholds(),
        verdicts=config.verdicts,
    )
    outcome, cases = run(corpus, rng=np.random.default_rng(seed), steps=steps)
    size = corpus.scores.size
    score_only = dataclasses.replace(corpus, candidate_p=np.ones(size), baseline_p=np.zeros(size))
    _, score_only_cases = run(score_only, rng=np.random.default_rng(seed), steps=steps)
    counts = np.bincount(outcome, minlength=3)
    mean_cases, score_mean = float(cases.mean()), float(score_only_cases.mean())
    fixed_rng = np.random.default_rng(_seed(config, corpus, _FIXED_STREAM))
    fixed_regression, fixed_passed = fixed_counts(
        corpus, config.sims, fixed_rng, config.thresholds(), config.verdicts, upto=fixed_cases
    )
    return ScenarioResult(
        true_score=corpus.true_score,
        categories=list(corpus.categories),
        passed=_share(int(counts[PASS]), config.sims),
        regression=_share(int(counts[REGRESSION]), config.sims),
        inconclusive=_share(int(counts[INCONCLUSIVE]), config.sims),
        mean_cases=mean_cases,
        p90_cases=int(np.quantile(cases, 0.9, method="inverted_cdf")),
        vs_fixed=mean_cases / fixed_cases,
        fixed_passed=_share(int(fixed_passed[-1]), config.sims),
        fixed_regression=_share(int(fixed_regression[-1]), config.sims),
        score_only_mean_cases=score_mean,
        score_only_vs_fixed=score_mean / score_cases,
    )


# ---- the fixed-size designs and reachability ---------------------------------------------------


def score_test_cases(
    variance: float, population: int, *, margin: float, alpha: float, power: float
) -> int:
    """Smallest n whose one-sided fixed-n test of "mean ≥ ½ − margin" at ``alpha`` passes a
    true mean of ½ with probability ``power`` (normal approximation), at most ``population``:
    the score's pass test alone, with no reproduction test.

    The test's form is the gate's score bound's, with replacement (no finite
    population correction): with ``σ²`` the variance of a case's pair score
    (the corpus's scores, divisor N, which is also a noisy draw's variance),
    ``n = ⌈σ² (z₁₋α + z_power)² / margin²⌉``. When that exceeds the corpus,
    the corpus: no n on it has the power.
    """
    from scipy.stats import norm  # late: scipy is slow to import; only simulations need it

    z = float(norm.ppf(1 - alpha) + norm.ppf(power))
    n = math.ceil(variance * z * z / (margin * margin) - 1e-9)
    return min(max(n, 1), population)


def fixed_design_cases(at_half: SimCorpus, config: GateSimConfig) -> tuple[int, bool]:
    """n of the whole gate's fixed-size design on ``at_half`` (the corpus of true score ½):
    the smallest n ≥ 2 whose seeded simulated pass share (on ``config.verdicts``'s draws)
    reaches ``config.power`` (:mod:`tasks.gate._sim_fixed`), else the whole corpus; and
    whether it reached the power."""
    rng = np.random.default_rng(_seed(config, at_half, _FIXED_STREAM))
    _, passed = fixed_counts(at_half, config.sims, rng, config.thresholds(), config.verdicts)
    n = smallest_powered(passed, config.sims, config.power)
    return n, bool(passed[n - 1] >= config.power * config.sims)


def reachability(thresholds: GateThresholds, batch: int, limit: int = 2_000) -> Reachability:
    """The smallest passing corpus for the all-win and the all-tie candidate."""
    return Reachability(
        every_pair_won=smallest_passing_corpus(thresholds, batch, score=1.0, limit=limit),
        every_pair_tied=smallest_passing_corpus(thresholds, batch, score=0.5, limit=limit),
        searched_to=limit,
    )


# ---- the whole simulation ----------------------------------------------------------------------


def simulate_corpus(size: int, config: GateSimConfig, steps: Steps = gate_steps) -> CorpusResult:
    """Every true score on a corpus of ``size`` cases."""
    at_half = build_corpus(size, 0.5)
    variance = float(at_half.scores.var())
    fixed, powered = fixed_design_cases(at_half, config)
    score_cases = score_test_cases(
        variance, size, margin=config.margin, alpha=config.alpha, power=config.power
    )
    scenarios = [
        simulate_scenario(build_corpus(size, s), config, fixed, score_cases, steps)
        for s in config.true_scores()
    ]
    return CorpusResult(
        size=size,
        reproduction=at_half.reproduction,
        score_variance=variance,
        fixed_cases=fixed,
        fixed_powered=powered,
        score_test_cases=score_cases,
        fewest_cases_to_pass=best_case_pass(size, config.thresholds(), config.batch),
        scenarios=scenarios,
    )


def error_rates(
    corpora: Sequence[CorpusResult], config: GateSimConfig, *, fixed: bool = False
) -> list[ErrorRate]:
    """Claim (a), pass at ½ − margin, and (b), regression at ½, on every corpus size: of the
    gate, or (``fixed``) of the fixed-size design at its n."""
    out = []
    prefix = "fixed_" if fixed else ""
    for corpus in corpora:
        at = {round(s.true_score, 10): s for s in corpus.scenarios}
        for claim, scenario, rate in (
            ("pass at ½ − margin", at[round(0.5 - config.margin, 10)], "passed"),
            ("regression at ½", at[0.5], "regression"),
        ):
            share: Share = getattr(scenario, prefix + rate)
            out.append(
                ErrorRate(
                    claim=claim, size=corpus.size, rate=share, holds=share.low <= config.alpha
                )
            )
    return out


_STOCHASTIC_STREAM = 2
"""Tags the stochastic scenarios' seeds apart from the other runs of a corpus size."""

STOCHASTIC_MODELS = (Reproduction.EQUAL, Reproduction.DIFFERING)
"""The reproduction models of the stochastic scenarios."""


def _error_share(
    corpus: SimCorpus, config: GateSimConfig, steps: Steps, stream: int, outcome: int
) -> Share:
    """The share of ``config.sims`` seeded PRs on ``corpus`` that end in ``outcome``."""
    rng = np.random.default_rng(_seed(config, corpus, _STOCHASTIC_STREAM, stream))
    outcomes, _ = run_orders(
        corpus,
        sims=config.sims,
        rng=rng,
        looks=look_points(corpus.scores.size, config.batch),
        thresholds=config.thresholds(),
        steps=steps,
        verdicts=config.verdicts,
    )
    return _share(int((outcomes == outcome).sum()), config.sims)


def stochastic_error_rates(config: GateSimConfig, steps: Steps = gate_steps) -> list[ErrorRate]:
    """The gate's errors with stochastic agents, on every corpus size and model of
    :data:`STOCHASTIC_MODELS`: regression when the two versions' rates are equal (true score
    ½, verdicts as configured), pass when the candidate's rate is lower by the margin though
    it wins every pair (the reproduction test alone can stop it)."""
    out = []
    for size in config.sizes:
        for i, model in enumerate(STOCHASTIC_MODELS):
            equal = with_reproduction(build_corpus(size, 0.5), model)
            lower = with_reproduction(build_corpus(size, 1.0), model, gap=config.margin)
            for claim, corpus, outcome in (
                ("regression at equal rates", equal, REGRESSION),
                ("pass at a rate lower by the margin", lower, PASS),
            ):
                share = _error_share(corpus, config, steps, i, outcome)
                out.append(
                    ErrorRate(
                        claim=claim,
                        reproduction=model,
                        size=size,
                        rate=share,
                        holds=share.low <= config.alpha,
                    )
                )
    return out


def simulate_gate(config: GateSimConfig | None = None, steps: Steps = gate_steps) -> GateSimulation:
    """The whole simulation. ``steps`` is the gate's core (a test swaps in a naive one)."""
    config = config or GateSimConfig()
    corpora = [simulate_corpus(n, config, steps) for n in config.sizes]
    return GateSimulation(
        config=config,
        corpora=corpora,
        error_rates=error_rates(corpora, config),
        fixed_error_rates=error_rates(corpora, config, fixed=True),
        stochastic_error_rates=stochastic_error_rates(config, steps),
        reachable=reachability(config.thresholds(), config.batch),
    )


__all__ = [
    "INCONCLUSIVE",
    "PASS",
    "REGRESSION",
    "REPRO_MIX",
    "STOCHASTIC_MODELS",
    "TRUE_SCORES",
    "CorpusResult",
    "ErrorRate",
    "GateSimConfig",
    "GateSimulation",
    "Reachability",
    "Reproduction",
    "ScenarioResult",
    "Share",
    "Steps",
    "Verdicts",
    "best_case_pass",
    "build_corpus",
    "decide_runs",
    "draw_repro",
    "draw_scores",
    "fixed_counts",
    "fixed_design_cases",
    "look_points",
    "reachability",
    "score_test_cases",
    "simulate_corpus",
    "simulate_gate",
    "simulate_scenario",
    "smallest_passing_corpus",
    "stochastic_error_rates",
    "with_reproduction",
]
