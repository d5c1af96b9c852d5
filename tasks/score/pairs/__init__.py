"""Scoring real candidate-vs-baseline report pairs (docs/judge-bias.md#strategies, docs/judge-bias.md#metrics).

Pure functions: the calls each verdict needs, the fold of a pair's calls into
one verdict, and the summary (win rate over decisive pairs with a Wilson
interval, sign test, length-controlled win rate, per category).
"""

from tasks.score.pairs._calls import (
    JudgeRef,
    PairCall,
    PairInput,
    PlannedCall,
    StrategyConfig,
    coin_keeps,
    plan_pair,
)
from tasks.score.pairs._fold import SPLIT_TIE, Folded, fold_pair, side_vote, verdict_row
from tasks.score.pairs._lc import LengthControlled, fit_logistic, length_controlled
from tasks.score.pairs._summary import (
    FEW_PAIRS,
    ScoreResult,
    ScoreSummary,
    UnscoredPair,
    WinRate,
    score_pairs,
    win_rate,
)

__all__ = [
    "FEW_PAIRS",
    "SPLIT_TIE",
    "Folded",
    "JudgeRef",
    "LengthControlled",
    "PairCall",
    "PairInput",
    "PlannedCall",
    "ScoreResult",
    "ScoreSummary",
    "StrategyConfig",
    "UnscoredPair",
    "WinRate",
    "coin_keeps",
    "fit_logistic",
    "fold_pair",
    "length_controlled",
    "plan_pair",
    "score_pairs",
    "side_vote",
    "verdict_row",
    "win_rate",
]
