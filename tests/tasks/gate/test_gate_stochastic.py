"""The gate with stochastic agents: each version's test reproduces a case with a probability of
its own, drawn afresh in every simulated PR (docs/gate.md#stochastic-agents)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from numpy.typing import NDArray

from bughunt.sequential import WITH_REPLACEMENT, Side, rejected
from tasks.gate import GateThresholds
from tasks.gate._sequences import REGRESSION_TESTS, Sequences, gate_steps
from tasks.gate._sim_corpus import Reproduction, build_corpus, draw_repro, with_reproduction
from tasks.gate.simulation import GateSimConfig, stochastic_error_rates

SIMS = 4_000
ALPHA = GateSimConfig().alpha
ALLOWED = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / SIMS)
MODELS = (Reproduction.EQUAL, Reproduction.DIFFERING)

Steps = Callable[[Sequences, GateThresholds], tuple[NDArray[np.bool_], NDArray[np.bool_]]]


@pytest.mark.parametrize("size", [30, 60, 61, 125, 500])
@pytest.mark.parametrize("model", MODELS, ids=str)
def test_stochastic_corpora_have_the_stated_rates(model: Reproduction, size: int) -> None:
    """Equal mean rates (exactly); with a gap, the candidate's lower by exactly it; every
    probability in [0, 1]; equal: the two versions alike on every case, a fifth of the cases
    at 0.5; differing: the candidate better by 0.4 on about half the cases, worse on as many."""
    score = 0.5 if size % 2 == 0 else 1.0  # 2·score·N must be whole
    corpus = with_reproduction(build_corpus(size, score), model)
    c, b = corpus.candidate_p, corpus.baseline_p
    assert corpus.stochastic() and c.size == b.size == size
    assert corpus.rate_gap() == pytest.approx(0.0, abs=1e-12)
    if model is Reproduction.EQUAL:
        assert np.array_equal(c, b)
        assert abs((c == 0.5).mean() - 0.2) <= 2 / size
    else:
        better, worse = int((c - b > 0.39).sum()), int((b - c > 0.39).sum())
        assert better == worse and better >= size // 2 - 2
    lower = with_reproduction(build_corpus(size, score), model, gap=0.1)
    assert lower.rate_gap() == pytest.approx(-0.1, abs=1e-12)
    assert np.array_equal(lower.baseline_p, b)
    for p in (lower.candidate_p, lower.baseline_p):
        assert ((p >= 0) & (p <= 1)).all()


def test_a_gap_needs_a_stochastic_model_and_room() -> None:
    """A fixed corpus cannot be shifted; a gap at or past the baseline's rate is refused."""
    corpus = build_corpus(60, 0.5)
    with pytest.raises(ValueError, match="fixed"):
        with_reproduction(corpus, Reproduction.FIXED, gap=0.1)
    with pytest.raises(ValueError, match="gap"):
        with_reproduction(corpus, Reproduction.EQUAL, gap=0.5)


def test_draws_follow_each_case_s_probabilities() -> None:
    """Every PR draws each version's outcome afresh: over many PRs a case's mean measure is its
    expected one, ((p_c − p_b) + 1)/2. A fixed corpus's outcomes are its own, and it draws
    nothing from the generator."""
    corpus = with_reproduction(build_corpus(60, 0.5), Reproduction.DIFFERING)
    runs = 20_000
    order = np.tile(np.arange(60), (runs, 1))
    drawn = draw_repro(corpus, order, np.random.default_rng(1))
    assert set(np.unique(drawn).tolist()) == {0.0, 0.5, 1.0}
    se = 0.5 / math.sqrt(runs)
    assert drawn.mean(axis=0) == pytest.approx(corpus.repro, abs=4 * se)
    fixed = build_corpus(60, 0.5)
    rng = np.random.default_rng(2)
    state = rng.bit_generator.state
    assert np.array_equal(draw_repro(fixed, order[:5], rng), fixed.repro[order[:5]])
    assert rng.bit_generator.state == state


def without_replacement(population: int) -> Steps:
    """The gate as it was: its reproduction tests without replacement from the plan's
    ``population`` cases, treating this run's outcomes as fixed."""

    def steps(
        seqs: Sequences, thresholds: GateThresholds
    ) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        a, margin = thresholds.alpha, thresholds.margin
        regression = rejected(
            seqs.score_high, population=WITH_REPLACEMENT, m=0.5, alpha=a / 2, side=Side.BELOW
        ) | rejected(
            seqs.repro_high,
            population=population,
            m=0.5,
            alpha=a / REGRESSION_TESTS,
            side=Side.BELOW,
        )
        passed = rejected(
            seqs.score_low, population=WITH_REPLACEMENT, m=0.5 - margin, alpha=a, side=Side.ABOVE
        ) & rejected(
            seqs.repro_low, population=population, m=0.5 - margin / 2, alpha=a, side=Side.ABOVE
        )
        return regression, passed

    return steps


@pytest.mark.slow
def test_the_gate_holds_alpha_with_stochastic_agents() -> None:
    """On 60 and 120 cases, both models: a regression at equal rates and a pass at a rate
    lower by the margin each stay within alpha (± 3 Monte Carlo SE), and are reported as
    holding."""
    config = GateSimConfig(sims=SIMS, sizes=(60, 120))
    rates = stochastic_error_rates(config)
    assert {(e.claim, e.reproduction, e.size) for e in rates} == {
        (claim, model, size)
        for claim in ("regression at equal rates", "pass at a rate lower by the margin")
        for model in MODELS
        for size in (60, 120)
    }
    for e in rates:
        assert e.rate.share <= ALLOWED and e.holds, e


@pytest.mark.slow
def test_the_without_replacement_form_breaks_with_stochastic_agents() -> None:
    """The reproduction tests without replacement (the run's outcomes taken as fixed) err on
    far more than alpha of these PRs (measured 12–20% at alpha 5%): the test above tells the
    two forms apart."""
    config = GateSimConfig(sims=SIMS, sizes=(120,))
    for e in stochastic_error_rates(config, without_replacement(120)):
        assert e.rate.share > ALLOWED + 0.04, e
    assert all(e.holds for e in stochastic_error_rates(config, gate_steps))
