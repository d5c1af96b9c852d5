"""Fold one pair's judge calls into one verdict (the unit of evidence is the pair).

Only the calls of the strategy's plan count. For each planned call, the
recorded calls with its key (judge, order, sample index) are looked up:
a judged answer counts (judged duplicates that disagree make the pair
unscored — no side is picked); no judged answer is a failure. A pair with any
failure is ``unscored`` with the reason, e.g. ``1 of 2 calls failed:
timed_out`` — never a tie.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from bughunt.models import RATIONALE_CAP, CallStatus, Order, Verdict, VerdictOutcome, Winner
from bughunt.text import clip
from judging.bias import VOTE_A, VOTE_B, VOTE_TIE, combine
from tasks.score.pairs._calls import (
    PairCall,
    PairInput,
    PlannedCall,
    StrategyConfig,
    plan_pair,
)

_OUTCOME = {
    VOTE_A: VerdictOutcome.CANDIDATE,
    VOTE_B: VerdictOutcome.BASELINE,
    VOTE_TIE: VerdictOutcome.TIE,
}


@dataclass(frozen=True, slots=True)
class Folded:
    """A pair's verdict, why it is unscored (if it is), and the calls it rests on."""

    outcome: VerdictOutcome
    reason: str | None
    calls: int
    rationale: str | None = None
    """The judged calls' rationales, labelled and capped (:func:`rationale_of`)."""


def rationale_of(labelled: list[tuple[str, str]], cap: int = RATIONALE_CAP) -> str | None:
    """``judge (order): rationale`` for each judged call with one, joined, cut to ``cap``
    characters (with an ellipsis); one call's rationale alone is given without its label."""
    said = [(label, " ".join(text.split())) for label, text in labelled if text and text.strip()]
    if not said:
        return None
    text = said[0][1] if len(said) == 1 else " | ".join(f"{lab}: {t}" for lab, t in said)
    return clip(text, cap)


def side_vote(order: Order, winner: Winner) -> int:
    """The vote code (a = candidate) of a winner given in call terms."""
    if winner is Winner.TIE:
        return VOTE_TIE
    candidate_won = (winner is Winner.FIRST) == (order is Order.CANDIDATE_FIRST)
    return VOTE_A if candidate_won else VOTE_B


SPLIT_TIE = "a tie only because the calls split between the sides (no call judged them equal)"
"""Why a tie carries no evidence that the reports are equal (e.g. ``swap`` with the two
orders disagreeing, as a judge that always prefers one position does): the gate counts such a
pair as unjudged, never as ½."""


@dataclass(slots=True)
class _Tally:
    """What a pair's planned calls gave: votes and rationales, failures, judged disagreements."""

    votes: list[int] = field(default_factory=list)
    said: list[tuple[str, str]] = field(default_factory=list)
    """``(judge (order), rationale)`` of each vote that came with one."""
    failures: Counter[str] = field(default_factory=Counter)
    """How many planned calls ended without a judged answer, by their last status."""
    conflicts: list[str] = field(default_factory=list)
    """The planned calls whose judged duplicates disagree."""

    def add(self, planned: PlannedCall, found: Sequence[PairCall]) -> None:
        """Count one planned call from the recorded calls with its key (``found``)."""
        answers = {
            c.winner for c in found if c.status is CallStatus.JUDGED and c.winner is not None
        }
        if len(answers) > 1:
            self.conflicts.append(f"{planned.judge} {planned.order} #{planned.sample_index}")
        elif answers:
            winner = answers.pop()
            self.votes.append(side_vote(planned.order, winner))
            why = next((c.rationale for c in found if c.winner is winner and c.rationale), None)
            if why:
                self.said.append((f"{planned.judge} ({planned.order})", why))
        elif found:
            self.failures.update({str(found[-1].status)})
        else:
            self.failures.update({"missing"})

    def unscored_reason(self, n: int) -> str | None:
        """Why the pair cannot be scored (disagreeing duplicates first, then failed calls out
        of ``n`` planned); None when every planned call gave one answer."""
        if self.conflicts:
            return f"judged duplicates disagree: {', '.join(self.conflicts)}"
        if self.failures:
            what = ", ".join(s if k == 1 else f"{s} ×{k}" for s, k in sorted(self.failures.items()))
            return f"{self.failures.total()} of {n} calls failed: {what}"
        return None


def _tally(planned: Sequence[PlannedCall], calls: Sequence[PairCall]) -> _Tally:
    """The planned calls counted from the recorded ones, matched by (judge, order, sample index)."""
    by_key: dict[tuple[str, Order, int], list[PairCall]] = defaultdict(list)
    for c in calls:
        by_key[(c.judge, c.order, c.sample_index)].append(c)
    tally = _Tally()
    for p in planned:
        tally.add(p, by_key.get((p.judge, p.order, p.sample_index), []))
    return tally


def _split_tie(verdict: int, votes: Sequence[int]) -> bool:
    """A tie with the calls on both sides and none judging the reports equal (:data:`SPLIT_TIE`)."""
    return verdict == VOTE_TIE and VOTE_TIE not in votes and len(set(votes)) > 1


def fold_pair(pair: PairInput, config: StrategyConfig) -> Folded:
    """The verdict of ``pair`` under ``config`` from its recorded calls."""
    if pair.unscored_reason is not None:
        return Folded(VerdictOutcome.UNSCORED, pair.unscored_reason, 0)
    planned = plan_pair(config, pair.case_id, pair.sample)
    tally = _tally(planned, pair.calls)
    n = len(planned)
    reason = tally.unscored_reason(n)
    if reason is not None:
        return Folded(VerdictOutcome.UNSCORED, reason, n)
    verdict = int(combine(config.spec(), np.array([tally.votes], dtype=np.int8))[0])
    split = _split_tie(verdict, tally.votes)
    return Folded(_OUTCOME[verdict], SPLIT_TIE if split else None, n, rationale_of(tally.said))


def verdict_row(pair: PairInput, folded: Folded, config: StrategyConfig, run_id: str) -> Verdict:
    """The ledger row of one folded pair."""
    return Verdict(
        run_id=run_id,
        case_id=pair.case_id,
        baseline=pair.baseline,
        candidate=pair.candidate,
        strategy=config.strategy,
        outcome=folded.outcome,
        reason=folded.reason,
        calls=folded.calls,
        category=pair.category,
        sample=pair.sample,
        rationale=folded.rationale,
    )
