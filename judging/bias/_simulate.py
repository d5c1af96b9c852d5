"""``bughunt simulate``: every strategy on the simulated judge, exactly and by Monte Carlo.

Metric definitions (docs/judge-bias.md has the worked example):

- ``position_net_bias``: on the position set, P(lead side wins) − P(other side
  wins), averaged over both choices of lead; the *lead* is the side a
  single-order strategy shows first.
- ``swap_flip_rate``: on the position set, P(the verdict changes when the
  other side leads), calls shared by (member, order, sample).
- ``correct`` / ``reversed`` / ``tie``: on the gap set, both leads equally.
- ``verbosity_net_bias``: P(padded wins) − P(original wins).
- ``self_net_bias``: P(own-family report wins) − P(other wins);
  ``self_share_of_decisive``: P(own wins) / P(a side wins), shown beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from bughunt.models import Strategy
from judging.bias._exact import (
    DEFAULT_FAMILIES,
    Outcome,
    SimPanel,
    flip_probability,
    four_way,
    verdict_outcome,
)
from judging.bias._montecarlo import MonteCarloCheck, check_correct
from judging.bias._pairsets import ProbePair, ProbeSetConfig, build_probe_sets
from judging.bias._sim_model import SimParams, SimReport
from judging.bias._strategies import Side, StrategySpec


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class SimulationConfig(_Out):
    """Everything a simulation depends on; recorded in its output."""

    params: SimParams = SimParams()
    """The simulated judge's parameters (shared by every jury member)."""
    seed: int = 0
    """Seed of the probe sets and of the Monte Carlo streams."""
    draws: int = Field(default=20_000, ge=1)
    """Monte Carlo draws per strategy."""
    k: int = Field(default=5, ge=1)
    """Votes of ``majority``."""
    families: tuple[str, ...] = DEFAULT_FAMILIES
    """Jury families; the first is the single judge's."""
    sizes: ProbeSetConfig | None = None
    """Probe set config; ``None`` means the defaults with ``seed``."""


class FourWayRow(_Out):
    """Fractions of pairs by what one call in each order said (they sum to 1)."""

    consistent: float
    """Same verdict in both orders (a, b or tie)."""
    biased_first: float
    """Whichever report was first won, in both orders."""
    biased_second: float
    """Whichever report was second won, in both orders."""
    one_tie_one_win: float
    """A tie in one order, a win in the other."""


class StrategyMetrics(_Out):
    """Exact figures of one strategy on the probe sets."""

    calls: int
    """Judge calls per pair."""
    position_net_bias: float
    """P(lead wins) − P(other wins) on near-identical pairs."""
    swap_flip_rate: float
    """P(verdict changes when the other side leads) on near-identical pairs."""
    correct: float
    """P(the better report wins) on the gap set."""
    reversed: float
    """P(the worse report wins) on the gap set."""
    tie: float
    """P(tie) on the gap set."""
    verbosity_net_bias: float
    """P(padded wins) − P(original wins)."""
    self_net_bias: float
    """P(own-family report wins) − P(other-family report wins)."""
    self_share_of_decisive: float | None
    """P(own wins) / P(own or other wins); ``None`` when nothing is decisive."""


class IdenticalPair(_Out):
    """P(report a wins) for two identical reports."""

    a_first: float
    """With a shown first."""
    a_second: float
    """With a shown second."""


class MonteCarloReport(_Out):
    """Sampled vs exact ``correct`` for every strategy."""

    seed: int
    """Seed of every stream."""
    draws: int
    """Draws per strategy."""
    strategies: dict[str, MonteCarloCheck]
    """By strategy name."""


class SimulationReport(_Out):
    """Output of ``bughunt simulate``."""

    config: SimulationConfig
    """What was simulated."""
    pair_sets: dict[str, int | str]
    """Size of each probe set and their content hash."""
    position_table: dict[str, FourWayRow]
    """Four-way position table of the single judge, for the position and gap sets."""
    strategies: dict[str, StrategyMetrics]
    """Exact figures by strategy name."""
    identical_pair: dict[str, IdenticalPair]
    """``single`` and ``majority`` on two identical reports."""
    monte_carlo: MonteCarloReport
    """Seeded Monte Carlo check of ``correct``."""


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


Judged = list[tuple[ProbePair, Side, Outcome]]


def _judge_all(spec: StrategySpec, pairs: Sequence[ProbePair], panel: SimPanel) -> Judged:
    """Exact verdicts of every pair with each side leading."""
    return [
        (p, lead, verdict_outcome(spec, p.a.features(), p.b.features(), lead, panel))
        for p in pairs
        for lead in (Side.A, Side.B)
    ]


def _avg(judged: Judged, f: Callable[[ProbePair, Side, Outcome], float]) -> float:
    """Mean of ``f`` over pairs and both leads."""
    return _mean([f(p, lead, o) for p, lead, o in judged])


def _net(side: Side, o: Outcome) -> float:
    return o.wins(side) - o.wins(side.other)


def strategy_metrics(
    spec: StrategySpec, sets_: Mapping[str, Sequence[ProbePair]], panel: SimPanel
) -> StrategyMetrics:
    """Exact metrics of one strategy on the four probe sets (keys position/gap/verbosity/self)."""
    pos = _judge_all(spec, sets_["position"], panel)
    gap = _judge_all(spec, sets_["gap"], panel)
    verb = _judge_all(spec, sets_["verbosity"], panel)
    selfp = _judge_all(spec, sets_["self"], panel)
    fav_self = _avg(selfp, lambda p, _, o: o.wins(p.favoured_side))
    oth_self = _avg(selfp, lambda p, _, o: o.wins(p.favoured_side.other))
    decisive = fav_self + oth_self
    flips = [
        flip_probability(spec, p.a.features(), p.b.features(), panel) for p in sets_["position"]
    ]
    return StrategyMetrics(
        calls=spec.calls_per_pair,
        position_net_bias=_avg(pos, lambda _, lead, o: _net(lead, o)),
        swap_flip_rate=_mean(flips),
        correct=_avg(gap, lambda p, _, o: o.wins(p.better_side)),
        reversed=_avg(gap, lambda p, _, o: o.wins(p.better_side.other)),
        tie=_avg(gap, lambda _p, _l, o: o.tie),
        verbosity_net_bias=_avg(verb, lambda p, _, o: _net(p.favoured_side, o)),
        self_net_bias=fav_self - oth_self,
        self_share_of_decisive=fav_self / decisive if decisive > 0 else None,
    )


def _four_way_row(pairs: Sequence[ProbePair], panel: SimPanel) -> FourWayRow:
    rows = [four_way(p.a.features(), p.b.features(), panel) for p in pairs]
    return FourWayRow(
        consistent=_mean([r.consistent for r in rows]),
        biased_first=_mean([r.biased_first for r in rows]),
        biased_second=_mean([r.biased_second for r in rows]),
        one_tie_one_win=_mean([r.one_tie_one_win for r in rows]),
    )


def identical_pair(spec: StrategySpec, panel: SimPanel) -> IdenticalPair:
    """P(a wins) for identical reports (quality 0.5, 300 words, a non-judge family)."""
    r = SimReport(0.5, 300, "other")
    return IdenticalPair(
        a_first=verdict_outcome(spec, r, r, Side.A, panel).a,
        a_second=verdict_outcome(spec, r, r, Side.B, panel).a,
    )


def simulate(config: SimulationConfig | None = None) -> SimulationReport:
    """Every strategy on the probe sets: exact figures and the Monte Carlo check."""
    cfg = config or SimulationConfig()
    sizes = cfg.sizes or ProbeSetConfig(seed=cfg.seed, judge_family=cfg.families[0])
    sets = build_probe_sets(sizes)
    panel = SimPanel(cfg.params, cfg.families)
    by_name: dict[str, Sequence[ProbePair]] = {
        "position": sets.position,
        "gap": sets.gap,
        "verbosity": sets.verbosity,
        "self": sets.self_preference,
    }
    specs = [StrategySpec(s, k=cfg.k, members=len(cfg.families)) for s in Strategy]
    return SimulationReport(
        config=cfg.model_copy(update={"sizes": sizes}),
        pair_sets={**{name: len(p) for name, p in by_name.items()}, "hash": sets.content_hash()},
        position_table={
            "position": _four_way_row(sets.position, panel),
            "gap": _four_way_row(sets.gap, panel),
        },
        strategies={str(spec.strategy): strategy_metrics(spec, by_name, panel) for spec in specs},
        identical_pair={
            str(s): identical_pair(StrategySpec(s, k=cfg.k), panel)
            for s in (Strategy.SINGLE, Strategy.MAJORITY)
        },
        monte_carlo=MonteCarloReport(
            seed=cfg.seed,
            draws=cfg.draws,
            strategies={
                str(spec.strategy): check_correct(
                    spec, sets.gap, panel, seed=cfg.seed, draws=cfg.draws
                )
                for spec in specs
            },
        ),
    )
