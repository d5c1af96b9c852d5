"""Judge strategies, bias probes and their statistics (docs/judge-bias.md#strategies, docs/judge-bias.md).

Exact strategy math and Monte Carlo on the simulated judge, probe pair sets
built by construction, and a probe runner that works on any judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
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

_WHERE = {
    "Outcome": "judging.bias._exact",
    "SimPanel": "judging.bias._exact",
    "combine_distribution": "judging.bias._exact",
    "flip_probability": "judging.bias._exact",
    "four_way": "judging.bias._exact",
    "verdict_outcome": "judging.bias._exact",
    "Estimate": "judging.bias._intervals",
    "difference": "judging.bias._intervals",
    "mover": "judging.bias._intervals",
    "net_bias": "judging.bias._intervals",
    "proportion": "judging.bias._intervals",
    "MonteCarloCheck": "judging.bias._montecarlo",
    "check_correct": "judging.bias._montecarlo",
    "ProbeItem": "judging.bias._pairsets",
    "ProbePair": "judging.bias._pairsets",
    "ProbeSetConfig": "judging.bias._pairsets",
    "ProbeSets": "judging.bias._pairsets",
    "build_probe_sets": "judging.bias._pairsets",
    "JudgeFn": "judging.bias._probe_calls",
    "JuryMember": "judging.bias._probe_calls",
    "OrderedPair": "judging.bias._probe_calls",
    "ProbeMetric": "judging.bias._probe_result",
    "ProbeResult": "judging.bias._probe_result",
    "four_way_counts": "judging.bias._probes",
    "run_probes": "judging.bias._probes",
    "run_self_probe": "judging.bias._self_probe",
    "Dist": "judging.bias._sim_model",
    "Features": "judging.bias._sim_model",
    "SimParams": "judging.bias._sim_model",
    "SimReport": "judging.bias._sim_model",
    "distribution": "judging.bias._sim_model",
    "draw": "judging.bias._sim_model",
    "hashed_uniform": "judging.bias._sim_model",
    "SimulationConfig": "judging.bias._simulate",
    "SimulationReport": "judging.bias._simulate",
    "StrategyMetrics": "judging.bias._simulate",
    "simulate": "judging.bias._simulate",
    "strategy_metrics": "judging.bias._simulate",
    "VOTE_A": "judging.bias._strategies",
    "VOTE_B": "judging.bias._strategies",
    "VOTE_TIE": "judging.bias._strategies",
    "Side": "judging.bias._strategies",
    "StrategySpec": "judging.bias._strategies",
    "combine": "judging.bias._strategies",
    "plans": "judging.bias._strategies",
    "cross_family_pairs": "judging.bias._text_pairs",
    "neutral_variant": "judging.bias._text_pairs",
    "pad_report": "judging.bias._text_pairs",
    "position_pairs": "judging.bias._text_pairs",
    "report_words": "judging.bias._text_pairs",
    "verbosity_pairs": "judging.bias._text_pairs",
}
"""Each exported name → the module defining it, imported on first use."""

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

__getattr__ = lazy_names(globals(), _WHERE)
