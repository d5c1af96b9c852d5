"""Builders of pairs and calls for the pairs tests."""

from __future__ import annotations

from bughunt.models import BugCategory, CallStatus, Order, Winner
from tasks.score.pairs import JudgeRef, PairCall, PairInput, StrategyConfig

CF, BF = Order.CANDIDATE_FIRST, Order.BASELINE_FIRST
JUDGE = JudgeRef(name="j1", family="fam-a")
JURY = (JUDGE, JudgeRef(name="j2", family="fam-b"), JudgeRef(name="j3", family="fam-c"))


def call(
    order: Order,
    winner: Winner | None,
    *,
    judge: str = "j1",
    sample: int = 0,
    status: CallStatus | None = None,
    cached: bool = False,
) -> PairCall:
    """A judged call (winner given) or a failed one (winner None, default status timed_out)."""
    st = status or (CallStatus.JUDGED if winner is not None else CallStatus.TIMED_OUT)
    return PairCall(
        judge=judge,
        family={"j1": "fam-a", "j2": "fam-b", "j3": "fam-c"}.get(judge, "fam-x"),
        order=order,
        sample_index=sample,
        status=st,
        winner=winner,
        failure_reason=None if winner else str(st),
        attempts=0 if cached else 1,
        cached=cached,
    )


def pair(
    case: str,
    *calls: PairCall,
    cand_words: int = 300,
    base_words: int = 300,
    category: BugCategory | None = None,
) -> PairInput:
    return PairInput(
        case_id=case,
        candidate="cand",
        baseline="base",
        candidate_words=cand_words,
        baseline_words=base_words,
        category=category,
        calls=calls,
    )


def swap_config() -> StrategyConfig:
    return StrategyConfig(judges=(JUDGE,))
