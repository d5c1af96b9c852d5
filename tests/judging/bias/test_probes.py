"""Bias probes on any judge, here the simulated one (issue item 5)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bughunt.models import BiasProbe, ProbeKind, Strategy, Winner
from judging.bias import (
    JuryMember,
    OrderedPair,
    ProbeResult,
    ProbeSetConfig,
    SimPanel,
    SimParams,
    build_probe_sets,
    four_way,
    run_probes,
    run_self_probe,
    simulate,
)
from judging.judges._sim import SimJudge

SETS = build_probe_sets()


@pytest.fixture(scope="module")
def result() -> ProbeResult:
    return run_probes(SimJudge().probe_judge(), SETS.all(), judge="sim", seed=0)


def test_every_pair_is_judged_once_in_each_order(result: ProbeResult) -> None:
    """Two calls per pair, no failure, no unscored pair."""
    assert result.calls == 2 * len(SETS.all())
    assert result.failed_calls == 0 and result.unscored == {}


def test_four_way_table_adds_up(result: ProbeResult) -> None:
    """The four cells are counts over the same pairs and sum to 1."""
    for kind in (ProbeKind.POSITION, ProbeKind.GAP):
        cells = ("consistent", "biased_first", "biased_second", "one_tie_one_win")
        values = [result.get(kind, c).value for c in cells]
        assert sum(v or 0 for v in values) == pytest.approx(1.0)
        assert {result.get(kind, c).n for c in cells} == {len(getattr(SETS, kind.value))}


def test_flip_rate_is_the_share_of_inconsistent_pairs(result: ProbeResult) -> None:
    """flip_rate = 1 − consistent."""
    consistent = result.get(ProbeKind.POSITION, "consistent").value
    assert consistent is not None
    assert result.get(ProbeKind.POSITION, "flip_rate").value == pytest.approx(1 - consistent)


def test_probes_find_the_sim_judges_biases(result: ProbeResult) -> None:
    """Position and verbosity biases show with intervals above zero."""
    pos = result.get(ProbeKind.POSITION, "net_bias")
    verb = result.get(ProbeKind.VERBOSITY, "net_bias")
    assert pos.ci_low is not None and pos.ci_low > 0
    assert verb.ci_low is not None and verb.ci_low > 0
    assert result.get(ProbeKind.VERBOSITY, "share_of_decisive").strategy is Strategy.SWAP


def test_intervals_cover_the_exact_values_most_of_the_time() -> None:
    """Over 20 seeds, the Wilson interval of biased_first covers the exact share ≥ 17 times."""
    panel = SimPanel(SimParams())
    hits = 0
    for seed in range(20):
        sets = build_probe_sets(ProbeSetConfig(seed=seed, gap=0, verbosity=0, self_preference=0))
        exact = sum(
            four_way(p.a.features(), p.b.features(), panel).biased_first for p in sets.position
        )
        exact /= len(sets.position)
        m = run_probes(SimJudge(seed=seed).probe_judge(), sets.position).get(
            ProbeKind.POSITION, "biased_first"
        )
        assert m.ci_low is not None and m.ci_high is not None
        hits += m.ci_low <= exact <= m.ci_high
    assert hits >= 17


def test_swap_probe_estimates_match_simulate() -> None:
    """Over 30 seeds the mean probe verbosity net bias is near swap's exact value."""
    exact = simulate().strategies["swap"].verbosity_net_bias
    values = []
    for seed in range(30):
        sets = build_probe_sets(ProbeSetConfig(seed=seed, position=0, gap=0, self_preference=0))
        m = run_probes(SimJudge(seed=seed).probe_judge(), sets.verbosity)
        values.append(m.get(ProbeKind.VERBOSITY, "net_bias").value or 0.0)
    assert sum(values) / len(values) == pytest.approx(exact, abs=0.05)


def failing_on(pair_ids: set[str]) -> Callable[[OrderedPair], Winner | None]:
    sim = SimJudge().probe_judge()

    def judge(call: OrderedPair) -> Winner | None:
        return None if call.pair.pair_id in pair_ids else sim(call)

    return judge


def test_failed_calls_are_unscored_not_counted() -> None:
    """A pair with a failed call leaves the probe's n and is counted as unscored."""
    failing = {p.pair_id for p in SETS.position[:5]}
    r = run_probes(failing_on(failing), SETS.position)
    assert r.unscored == {"position": 5}
    assert r.failed_calls == 10
    assert r.get(ProbeKind.POSITION, "consistent").n == len(SETS.position) - 5


def test_repeated_samples_do_not_narrow_intervals() -> None:
    """Three samples per order: still n = pairs (folded by plurality first)."""
    one = run_probes(SimJudge().probe_judge(), SETS.verbosity)
    three = run_probes(SimJudge().probe_judge(), SETS.verbosity, samples=3)
    assert three.calls == 3 * one.calls
    m1, m3 = one.get(ProbeKind.VERBOSITY, "net_bias"), three.get(ProbeKind.VERBOSITY, "net_bias")
    assert m1.n == m3.n == len(SETS.verbosity)


def test_rows_for_the_ledger(result: ProbeResult) -> None:
    """One BiasProbe row per metric, with the run, judge and pair-set seed."""
    rows = result.rows("run-1")
    assert len(rows) == len(result.metrics)
    assert all(isinstance(r, BiasProbe) and r.run_id == "run-1" and r.seed == 0 for r in rows)
    assert {r.probe for r in rows} == set(ProbeKind)


def sim_jury(**params: float) -> list[JuryMember]:
    p = SimParams(**params)
    return [
        JuryMember(f, f, SimJudge(name=f, family=f, params=p).probe_judge())
        for f in ("sim-a", "sim-b", "sim-c")
    ]


def test_self_probe_finds_self_preference() -> None:
    """sim-a's own-family win rate exceeds the neutral members' on the self set."""
    r = run_self_probe(sim_jury(b_self=2.0), SETS.self_preference)
    m = r.get(ProbeKind.SELF, "self_preference", judge="sim-a")
    assert m.value is not None and m.ci_low is not None and m.ci_low > 0
    assert m.n == len(SETS.self_preference)
    assert r.calls == 3 * 2 * len(SETS.self_preference)


def test_self_probe_without_bias_is_near_zero() -> None:
    """With b_self = 0 the interval holds 0."""
    r = run_self_probe(sim_jury(b_self=0.0), SETS.self_preference)
    m = r.get(ProbeKind.SELF, "self_preference", judge="sim-a")
    assert m.ci_low is not None and m.ci_high is not None
    assert m.ci_low <= 0 <= m.ci_high


def test_self_probe_needs_distinct_families() -> None:
    """A jury of one family twice is refused."""
    j = SimJudge().probe_judge()
    with pytest.raises(ValueError, match="different families"):
        run_self_probe([JuryMember("x", "f", j), JuryMember("y", "f", j)], SETS.self_preference)
