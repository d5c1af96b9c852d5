"""What each mitigation cures, measured exactly on the simulated judge."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from bughunt.models import Strategy
from judging.bias import (
    ProbeSetConfig,
    SimPanel,
    SimParams,
    SimulationConfig,
    SimulationReport,
    StrategySpec,
    build_probe_sets,
    check_correct,
    simulate,
    strategy_metrics,
)
from tests.judging.bias.strategies import params

SMALL = build_probe_sets(ProbeSetConfig(position=6, gap=6, verbosity=4, self_preference=4, seed=5))
SMALL_SETS = {
    "position": SMALL.position,
    "gap": SMALL.gap,
    "verbosity": SMALL.verbosity,
    "self": SMALL.self_preference,
}


@pytest.fixture(scope="module")
def report() -> SimulationReport:
    return simulate()


def test_output_has_the_documented_keys(report: SimulationReport) -> None:
    """position_table, strategies, identical_pair and monte_carlo carry the issue's keys."""
    data = report.model_dump(mode="json")
    assert set(data["position_table"]) == {"position", "gap"}
    assert set(data["position_table"]["gap"]) == {
        "consistent",
        "biased_first",
        "biased_second",
        "one_tie_one_win",
    }
    assert set(data["strategies"]) == {s.value for s in Strategy}
    assert set(data["strategies"]["swap"]) == {
        "calls",
        "position_net_bias",
        "swap_flip_rate",
        "correct",
        "reversed",
        "tie",
        "verbosity_net_bias",
        "self_net_bias",
        "self_share_of_decisive",
    }
    assert set(data["identical_pair"]) == {"single", "majority"}
    assert set(data["identical_pair"]["single"]) == {"a_first", "a_second"}
    assert {"seed", "draws", "strategies"} <= set(data["monte_carlo"])
    assert data["pair_sets"]["position"] == 40 and data["pair_sets"]["self"] == 40


@pytest.mark.parametrize(
    "strategy",
    [Strategy.RANDOM_ORDER, Strategy.SWAP, Strategy.SWAP_LC, Strategy.JURY, Strategy.JURY_LC],
)
def test_order_cures_position_bias(report: SimulationReport, strategy: Strategy) -> None:
    """random_order and every swapped strategy have a position net bias of 0 (to 1e-12)."""
    assert abs(report.strategies[strategy].position_net_bias) < 1e-12


@settings(max_examples=15, deadline=None)
@given(params)
def test_order_cures_position_bias_for_any_judge(p: SimParams) -> None:
    """For any parameters, random_order and swap leave no position net bias."""
    for s in (Strategy.RANDOM_ORDER, Strategy.SWAP):
        m = strategy_metrics(StrategySpec(s), SMALL_SETS, SimPanel(p))
        assert abs(m.position_net_bias) < 1e-12


def test_swap_cures_only_position_and_adds_ties(report: SimulationReport) -> None:
    """Swap: no position bias or flips, verbosity and self bias remain, more ties than single."""
    swap, single = report.strategies["swap"], report.strategies["single"]
    assert swap.swap_flip_rate == 0.0 and single.swap_flip_rate > 0.5
    assert swap.verbosity_net_bias > 0.2 and swap.self_net_bias > 0.1
    assert swap.tie > 2 * single.tie


def test_random_order_leaves_each_verdict_at_the_mercy_of_the_order(
    report: SimulationReport,
) -> None:
    """random_order: aggregate unbiased, yet as many flips as single."""
    ro, single = report.strategies["random_order"], report.strategies["single"]
    assert ro.swap_flip_rate == pytest.approx(single.swap_flip_rate)
    assert single.position_net_bias > 0.3


def test_swap_lc_cures_verbosity_exactly(report: SimulationReport) -> None:
    """swap_lc and jury_lc have a verbosity net bias of 0 on the sim judge."""
    assert abs(report.strategies["swap_lc"].verbosity_net_bias) < 1e-12
    assert abs(report.strategies["jury_lc"].verbosity_net_bias) < 1e-12
    assert report.strategies["swap_lc"].self_net_bias == pytest.approx(
        report.strategies["swap"].self_net_bias
    )


@settings(max_examples=15, deadline=None)
@given(params)
def test_swap_lc_cures_verbosity_for_any_judge(p: SimParams) -> None:
    """For any parameters, swap_lc's verbosity net bias is 0."""
    m = strategy_metrics(StrategySpec(Strategy.SWAP_LC), SMALL_SETS, SimPanel(p))
    assert abs(m.verbosity_net_bias) < 1e-12


def test_jury_dilutes_self_preference_not_verbosity(report: SimulationReport) -> None:
    """The jury cuts the self net bias well below swap's and leaves most of the verbosity bias."""
    jury, swap = report.strategies["jury"], report.strategies["swap"]
    assert jury.self_net_bias < 0.5 * swap.self_net_bias
    assert jury.verbosity_net_bias > 0.5 * swap.verbosity_net_bias > 0.1


def test_no_self_bias_means_no_self_net_bias() -> None:
    """With b_self = 0 the self set's mirrored quality gaps cancel exactly."""
    m = strategy_metrics(StrategySpec(Strategy.SINGLE), SMALL_SETS, SimPanel(SimParams(b_self=0.0)))
    assert abs(m.self_net_bias) < 1e-12


def test_same_order_majority_amplifies_position_bias(report: SimulationReport) -> None:
    """With the default parameters majority's position net bias exceeds single's."""
    assert (
        report.strategies["majority"].position_net_bias
        > report.strategies["single"].position_net_bias
    )


def test_identical_pair(report: SimulationReport) -> None:
    """Identical reports: single gives a 55% / 20% split by position; majority widens it."""
    single, majority = report.identical_pair["single"], report.identical_pair["majority"]
    assert single.a_first == pytest.approx(0.5498, abs=1e-4)
    assert single.a_second == pytest.approx(0.1978, abs=1e-4)
    assert majority.a_first - majority.a_second > single.a_first - single.a_second


def test_monte_carlo_agrees_with_exact(report: SimulationReport) -> None:
    """Every strategy's sampled `correct` is within 3 standard errors of the exact value."""
    for name, check in report.monte_carlo.strategies.items():
        assert abs(check.difference_se) < 3, name


@pytest.mark.parametrize("seed", [1, 2])
def test_monte_carlo_agrees_with_exact_for_other_seeds(seed: int) -> None:
    """Other seeds agree too (each stream is independent of the others)."""
    sets = build_probe_sets(ProbeSetConfig(seed=seed))
    for s in Strategy:
        check = check_correct(
            StrategySpec(s), sets.gap, SimPanel(SimParams()), seed=seed, draws=5000
        )
        assert abs(check.difference_se) < 3, s


def test_monte_carlo_is_reproducible() -> None:
    """Same seed, same sample."""
    sets = build_probe_sets()
    spec, panel = StrategySpec(Strategy.JURY), SimPanel(SimParams())
    first = check_correct(spec, sets.gap, panel, seed=9, draws=2000)
    assert first == check_correct(spec, sets.gap, panel, seed=9, draws=2000)


def test_simulation_records_what_reproduces_it() -> None:
    """The output carries the seed, the parameters and the pair-set config and hash."""
    r = simulate(SimulationConfig(seed=3, draws=100, params=SimParams(b_pos=0.0)))
    assert r.config.seed == 3 and r.config.params.b_pos == 0.0
    assert r.config.sizes is not None and r.config.sizes.seed == 3
    assert r.pair_sets["hash"] == build_probe_sets(r.config.sizes).content_hash()
    assert abs(r.strategies["single"].position_net_bias) < 1e-12
