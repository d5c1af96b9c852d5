"""One probe call and how a pair's calls fold into votes.

``judge_fn`` is any callable from an :class:`OrderedPair` to a winner in call
terms, or ``None`` when the call failed (a failure is never counted). Each
pair is judged in both orders, ``samples`` calls per order folded by
plurality into one vote per order: the unit of evidence is the pair.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bughunt.models import Winner
from judging.bias._pairsets import ProbeItem, ProbePair
from judging.bias._strategies import VOTE_TIE, Side, agree, plurality


@dataclass(frozen=True, slots=True)
class OrderedPair:
    """One call to make: a pair, the side shown first, the sample index."""

    pair: ProbePair
    first: Side
    sample_index: int = 0

    @property
    def first_item(self) -> ProbeItem:
        """The report shown first."""
        return self.pair.item(self.first)

    @property
    def second_item(self) -> ProbeItem:
        """The report shown second."""
        return self.pair.item(self.first.other)


JudgeFn = Callable[[OrderedPair], Winner | None]
"""One judge call: the winner in call terms, or ``None`` when the call failed."""


@dataclass(frozen=True, slots=True)
class JuryMember:
    """A named judge of one family, as a probe sees it."""

    name: str
    family: str
    judge_fn: JudgeFn


class ProbeCaller:
    """Calls ``judge_fn`` and counts calls and failures."""

    def __init__(self, judge_fn: JudgeFn, samples: int) -> None:
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        self.judge_fn, self.samples = judge_fn, samples
        self.calls = self.failed = 0

    def vote(self, pair: ProbePair, first: Side) -> int | None:
        """One vote (side code) for the pair in one order; ``None`` if any sample failed."""
        votes: list[int] = []
        for i in range(self.samples):
            self.calls += 1
            w = self.judge_fn(OrderedPair(pair, first, i))
            if w is None:
                self.failed += 1
                continue
            votes.append(
                {Winner.FIRST: first.vote, Winner.SECOND: first.other.vote}.get(w, VOTE_TIE)
            )
        if len(votes) < self.samples:
            return None
        return int(plurality(np.array(votes, dtype=np.int8)))

    def both(self, pair: ProbePair) -> tuple[int, int] | None:
        """Votes with a first and with b first, or ``None`` when a call failed."""
        va, vb = self.vote(pair, Side.A), self.vote(pair, Side.B)
        return None if va is None or vb is None else (va, vb)


def swap_vote(va: int, vb: int) -> int:
    """The swap verdict of the two orders' votes (the same rule as the strategy's)."""
    return int(agree(np.array([va], dtype=np.int8), np.array([vb], dtype=np.int8))[0])
