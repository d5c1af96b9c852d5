"""Judge strategies, bias probes and their statistics (docs/judge-bias.md#strategies, docs/judge-bias.md).

Exact strategy math and Monte Carlo on the simulated judge, probe pair sets
built by construction, and a probe runner that works on any judge.
"""

from judging.bias._exact import (
    Outcome,
    SimPanel,
    combine_distribution,
    flip_probability,
    four_way,
    verdict_outcome,
)
from judging.bias._intervals import Estimate, difference, mover, net_bias, proportion
from judging.bias._montecarlo import MonteCarloCheck, check_correct
from judging.bias._pairsets import (
    ProbeItem,
    ProbePair,
    ProbeSetConfig,
    ProbeSets,
    build_probe_sets,
)
from judging.bias._probe_calls import JudgeFn, JuryMember, OrderedPair
from judging.bias._probe_result import ProbeMetric, ProbeResult
from judging.bias._probes import four_way_counts, run_probes
from judging.bias._self_probe import run_self_probe
from judging.bias._sim_model import (
    Dist,
    Features,
    SimParams,
    SimReport,
    distribution,
    draw,
    hashed_uniform,
)
from judging.bias._simulate import (
    SimulationConfig,
    SimulationReport,
    StrategyMetrics,
    simulate,
    strategy_metrics,
)
from judging.bias._strategies import (
    VOTE_A,
    VOTE_B,
    VOTE_TIE,
    Side,
    StrategySpec,
    combine,
    plans,
)
from judging.bias._text_pairs import (
    cross_family_pairs,
    neutral_variant,
    pad_report,
    position_pairs,
    report_words,
    verbosity_pairs,
)

__all__ = [
    "VOTE_A",
    "VOTE_B",
    "VOTE_TIE",
    "Dist",
    "Estimate",
    "Features",
    "JudgeFn",
    "JuryMember",
    "MonteCarloCheck",
    "OrderedPair",
    "Outcome",
    "ProbeItem",
    "ProbeMetric",
    "ProbePair",
    "ProbeResult",
    "ProbeSetConfig",
    "ProbeSets",
    "Side",
    "SimPanel",
    "SimParams",
    "SimReport",
    "SimulationConfig",
    "SimulationReport",
    "StrategyMetrics",
    "StrategySpec",
    "build_probe_sets",
    "check_correct",
    "combine",
    "combine_distribution",
    "cross_family_pairs",
    "difference",
    "distribution",
    "draw",
    "flip_probability",
    "four_way",
    "four_way_counts",
    "hashed_uniform",
    "mover",
    "net_bias",
    "neutral_variant",
    "pad_report",
    "plans",
    "position_pairs",
    "proportion",
    "report_words",
    "run_probes",
    "run_self_probe",
    "simulate",
    "strategy_metrics",
    "verbosity_pairs",
    "verdict_outcome",
]
