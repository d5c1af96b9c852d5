"""From a run's verdicts and reproduction outcomes to the gate's per-case values.

A case's pair score is 1 (candidate wins), ½ (tie) or 0; a case that could
not be judged or run counts as the worst value for the test it could pass and
the best for the one it could fail, so a missing result never helps either way.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from bughunt.models import ReproOutcome, Verdict, VerdictOutcome
from tasks.gate._sequences import PAIR_SCORE, Sequences

_DECIDED = {ReproOutcome.REPRODUCED, ReproOutcome.NOT_REPRODUCED}


def _repro_value(b: ReproOutcome | None, c: ReproOutcome | None) -> float | None:
    if b not in _DECIDED or c not in _DECIDED:
        return None
    won = float(c is ReproOutcome.REPRODUCED) - float(b is ReproOutcome.REPRODUCED)
    return (won + 1) / 2


VerdictSamples = VerdictOutcome | Sequence[VerdictOutcome]
"""A case's verdict, or one per agent sample (``--agent-samples``), in sample order."""
ReproSamples = ReproOutcome | Sequence[ReproOutcome]
"""A case's reproduction outcome of one version, or one per agent sample, in sample order."""


_E = TypeVar("_E", bound=StrEnum)
_T = TypeVar("_T")


def _listed(value: _E | Sequence[_E] | None) -> list[_E]:
    if value is None:
        return []
    return [value] if isinstance(value, StrEnum) else list(value)


def _sample(values: Sequence[ReproOutcome], i: int) -> ReproOutcome | None:
    """Sample ``i`` of one side; a side with one outcome (a replay agent) shows it in every sample."""
    return values[i] if i < len(values) else (values[0] if len(values) == 1 else None)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


class Evidence:
    """The evaluated cases in order, each with its pair score and reproduction measure.

    With several agent samples per case, the case stays the unit: its value
    is the mean over its samples, and a missing sample counts as 0 in the
    case's low value and 1 in its high one (as a missing case does), so the
    bounds' n is the number of cases, never of samples.
    """

    def __init__(
        self,
        order: Sequence[str],
        verdicts: Mapping[str, VerdictSamples],
        baseline: Mapping[str, ReproSamples],
        candidate: Mapping[str, ReproSamples],
        evaluated: int | None,
        split_ties: Collection[str | tuple[str, int]] = (),
    ) -> None:
        if evaluated is not None:
            self.cases = list(order[:evaluated])
        else:
            seen = set(verdicts) | set(baseline) | set(candidate)
            self.cases = [c for c in order if c in seen]
        # A tie only because the calls split between the sides is no evidence of equality:
        # the pair counts as unjudged, never as ½. A case id names all its samples.
        split = set(split_ties)
        self.split = 0.0
        self.ties = 0.0
        self.unjudged = 0.0
        self.score: list[float | None] = []
        self.score_low: list[float] = []
        self.score_high: list[float] = []
        for c in self.cases:
            outcomes = _listed(verdicts.get(c)) or [VerdictOutcome.UNSCORED]
            splits = [c in split or (c, i) in split for i in range(len(outcomes))]
            self.split += _mean([float(s) for s in splits])
            values = [
                None if s else PAIR_SCORE.get(o) for o, s in zip(outcomes, splits, strict=True)
            ]
            self.ties += _mean(
                [
                    float(o is VerdictOutcome.TIE and not s)
                    for o, s in zip(outcomes, splits, strict=True)
                ]
            )
            self._add(values, self.score, self.score_low, self.score_high)
            self.unjudged += _mean([float(v is None) for v in values])
        self.repro: list[float | None] = []
        self.repro_low: list[float] = []
        self.repro_high: list[float] = []
        for c in self.cases:
            b, k = _listed(baseline.get(c)), _listed(candidate.get(c))
            n = max(len(b), len(k), 1)
            values = [_repro_value(_sample(b, i), _sample(k, i)) for i in range(n)]
            self._add(values, self.repro, self.repro_low, self.repro_high)

    @staticmethod
    def _add(
        values: Sequence[float | None],
        known: list[float | None],
        low: list[float],
        high: list[float],
    ) -> None:
        """One case's samples: its value (None unless every sample is known), low and high."""
        known.append(None if None in values else _mean([v for v in values if v is not None]))
        low.append(_mean([0.0 if v is None else v for v in values]))
        high.append(_mean([1.0 if v is None else v for v in values]))

    def unrun(self, side: Mapping[str, ReproSamples], case: str) -> float:
        """Share of one version's samples on ``case`` that could not be run (1 when none ran)."""
        values = _listed(side.get(case))
        if not values:
            return 1.0
        return _mean([float(v is ReproOutcome.ERROR) for v in values])

    def sequences(self) -> Sequences:
        def array(values: list[float]) -> NDArray[np.float64]:
            return np.array(values, dtype=np.float64)

        return Sequences(
            score_low=array(self.score_low),
            score_high=array(self.score_high),
            repro_low=array(self.repro_low),
            repro_high=array(self.repro_high),
        )


def by_case(rows: Iterable[tuple[str, int, _T]]) -> dict[str, list[_T]]:
    """Each case's values in sample order, from (case, sample, value) triples."""
    out: dict[str, dict[int, _T]] = {}
    for case, sample, value in rows:
        out.setdefault(case, {})[sample] = value
    return {case: [v for _, v in sorted(samples.items())] for case, samples in out.items()}


def verdict_samples(verdicts: Iterable[Verdict]) -> dict[str, list[VerdictOutcome]]:
    """Each case's verdicts in sample order (one per agent sample)."""
    return by_case((v.case_id, v.sample, v.outcome) for v in verdicts)
