"""Judge strategies, bias probes and their statistics (docs/judge-bias.md#strategies, docs/judge-bias.md).

Exact strategy math and Monte Carlo on the simulated judge, probe pair sets
built by construction, and a probe runner that works on any judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from judging.bias._exact import (
        Outcome as Outcome,
        SimPanel as SimPanel,
        combine_distribution as combine_distribution,
        flip_probability as flip_probability,
        four_way as four_way,
        verdict_outcome as verdict_outcome,
    )
    from judging.bias._intervals import (
        Estimate as Estimate,
        difference as difference,
        mover as mover,
        net_bias as net_bias,
        proportion as proportion,
    )
    from judging.bias._montecarlo import (
        MonteCarloCheck as MonteCarloCheck,
        check_correct as check_correct,
    )
    from judging.bias._pairsets import (
        ProbeItem as ProbeItem,
        ProbePair as ProbePair,
        ProbeSetConfig as ProbeSetConfig,
        ProbeSets as ProbeSets,
        build_probe_sets as build_probe_sets,
    )
    from judging.bias._probe_calls import (
        JudgeFn as JudgeFn,
        JuryMember as JuryMember,
        OrderedPair as OrderedPair,
    )
    from judging.bias._probe_result import ProbeMetric as ProbeMetric, ProbeResult as ProbeResult
    from judging.bias._probes import four_way_counts as four_way_counts, run_probes as run_probes
    from judging.bias._self_probe import run_self_probe as run_self_probe
    from judging.bias._sim_model import (
        Dist as Dist,
        Features as Features,
        SimParams as SimParams,
        SimReport as SimReport,
        distribution as distribution,
        draw as draw,
        hashed_uniform as hashed_uniform,
    )
    from judging.bias._simulate import (
        SimulationConfig as SimulationConfig,
        SimulationReport as SimulationReport,
        StrategyMetrics as StrategyMetrics,
        simulate as simulate,
        strategy_metrics as strategy_metrics,
    )
    from judging.bias._strategies import (
        VOTE_A as VOTE_A,
        VOTE_B as VOTE_B,
        VOTE_TIE as VOTE_TIE,
        Side as Side,
        StrategySpec as StrategySpec,
        combine as combine,
        plans as plans,
    )
    from judging.bias._text_pairs import (
        cross_family_pairs as cross_family_pairs,
        neutral_variant as neutral_variant,
        pad_report as pad_report,
        position_pairs as position_pairs,
        report_words as report_words,
        verbosity_pairs as verbosity_pairs,
    )


__getattr__ = lazy_names(globals())
