"""The run's answer in one sentence: which version is better, by how much, and how sure.

Two measures over the run's cases, the case as the unit (a case's samples are
averaged), each with a two-sided anytime-valid 95% interval (the gate's bounds,
with replacement, 2.5% on each side):

- the **mean pair score**: 1 when the judge prefers the candidate's report,
  ½ for a tie, 0 for the baseline's, over the judged cases (a tie only because
  the calls split is no verdict, as for the gate); ½ is no difference;
- the **reproduction rate difference**: the candidate's rate minus the
  baseline's over the cases both versions decided (reproduced or not).

A measure whose interval excludes no difference says which version is better
on it. One that does and the other undecided, or both the same way: that
version is better. Both, opposite ways: the evidence conflicts, and the
sentence says so. Neither: the evidence does not decide, and the sentence says
about how many more cases would at the rates seen (the gate's estimate), or
that none would when a measure sits on no difference.

Pure: case rows in, a model out; nothing here is agent text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bughunt.models import ReproOutcome
from bughunt.sequential import WITH_REPLACEMENT, Side, bound
from bughunt.stats import wilson
from tasks.gate import more_cases_needed
from tasks.report._model import Answer, Better, CaseRow, Measure, Unseparated
from tasks.score.pairs import SPLIT_TIE

ALPHA = 0.05
"""The answer's intervals are 95%, split over the two sides."""

_SCORE = {"candidate": 1.0, "tie": 0.5, "baseline": 0.0}
_DECIDED = {ReproOutcome.REPRODUCED, ReproOutcome.NOT_REPRODUCED}


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _split(cases: Sequence[CaseRow]) -> int:
    """Rows whose tie comes only from the judge's calls splitting between the sides."""
    return sum(c.verdict == "tie" and c.verdict_reason == SPLIT_TIE for c in cases)


def _per_case(cases: Sequence[CaseRow]) -> tuple[list[float], list[float]]:
    """Each case's pair score and reproduction measure ((c − b + 1)/2), samples averaged;
    a case with no judged sample (or no sample decided by both) has none."""
    scores: dict[str, list[float]] = {}
    repro: dict[str, list[float]] = {}
    for c in cases:
        # A tie only because the calls split is no verdict (as for the gate): no value.
        if c.verdict in _SCORE and c.verdict_reason != SPLIT_TIE:
            scores.setdefault(c.case_id, []).append(_SCORE[c.verdict])
        if c.baseline_status in _DECIDED and c.candidate_status in _DECIDED:
            won = float(c.candidate_status is ReproOutcome.REPRODUCED) - float(
                c.baseline_status is ReproOutcome.REPRODUCED
            )
            repro.setdefault(c.case_id, []).append((won + 1) / 2)
    order = list(dict.fromkeys(c.case_id for c in cases))
    return (
        [_mean(scores[c]) for c in order if c in scores],
        [_mean(repro[c]) for c in order if c in repro],
    )


def _measure(values: Sequence[float]) -> Measure | None:
    if not values:
        return None
    return Measure(
        mean=_mean(values),
        low=bound(values, population=WITH_REPLACEMENT, alpha=ALPHA / 2, side=Side.ABOVE),
        high=bound(values, population=WITH_REPLACEMENT, alpha=ALPHA / 2, side=Side.BELOW),
        cases=len(values),
    )


def _difference(m: Measure) -> Measure:
    """A reproduction measure on the rate difference's scale (2x − 1)."""
    return Measure(mean=2 * m.mean - 1, low=2 * m.low - 1, high=2 * m.high - 1, cases=m.cases)


def _score_text(m: Measure, split: int) -> str:
    """The score's figures; the count says why it differs from the pairs counted elsewhere."""
    left_out = (
        f" ({split} {'tie' if split == 1 else 'ties'} only because the judge's calls split, "
        "no verdict)"
        if split
        else ""
    )
    return (
        f"mean pair score {m.mean:.2f} (95% interval {m.low:.2f}–{m.high:.2f}; 0.50 is no "
        f"difference) over {m.cases} judged cases{left_out}"
    )


def _repro_text(m: Measure) -> str:
    return (
        f"reproduction rate difference {m.mean:+.0%} (95% interval {m.low:+.0%} to {m.high:+.0%}) "
        f"over {m.cases} cases both versions decided"
    )


def _more(score: Measure | None, repro: Measure | None) -> int | None:
    """About how many more cases would bring either interval clear of no difference (``repro``
    on the measure's scale)."""
    needed = []
    for m in (score, repro):  # both on the measure's scale, where ½ is no difference
        if m is None:
            continue
        edge, side = (m.low, Side.ABOVE) if m.mean > 0.5 else (m.high, Side.BELOW)
        n = more_cases_needed(m.cases, m.mean, edge, 0.5, side)
        if n is not None:
            needed.append(max(1, math.ceil(n) - m.cases))
    return min(needed) if needed else None


def unseparated(cases: Sequence[CaseRow]) -> Unseparated | None:
    """The judge on the pairs where both versions reproduced the bug or neither did. Where one
    reproduced and the other did not, a judge that reads the reports mostly repeats the
    sandbox's finding; here it is the only evidence that tells the reports apart."""
    agree = [
        c
        for c in cases
        if c.baseline_status in _DECIDED
        and c.candidate_status in _DECIDED
        and c.baseline_status is c.candidate_status
    ]
    if not agree:
        return None
    wins = sum(c.verdict == "candidate" for c in agree)
    decisive = wins + sum(c.verdict == "baseline" for c in agree)
    return Unseparated(
        pairs=len(agree),
        candidate_wins=wins,
        decisive=decisive,
        win_rate=wins / decisive if decisive else None,
        win_rate_ci=wilson(wins, decisive),
    )


_VERDICT = {
    Better.CANDIDATE: "candidate better",
    Better.BASELINE: "baseline better",
    Better.UNDECIDED: "no decision",
    Better.CONFLICT: "judge and sandbox conflict",
    Better.NO_EVIDENCE: "no evidence",
}


def _short(a: Answer) -> str:
    """The verdict, then the measure that decided it (the score when none did)."""
    s, r = a.score, a.reproduction
    figure = None
    if r is not None and (s is None or (r.direction(0.0) and not s.direction(0.5))):
        figure = f"reproduction {r.mean:+.0%}, 95% {r.low:+.0%} to {r.high:+.0%}"
    elif s is not None:
        figure = f"pair score {s.mean:.2f}, 95% {s.low:.2f}–{s.high:.2f}"
    return _VERDICT[a.better] + (f" ({figure})" if figure else "")


def answer_of(cases: Sequence[CaseRow]) -> Answer:
    """The answer from the run's case rows (one per case, or per case and agent sample)."""
    answer = _answer(cases)
    return answer.model_copy(update={"unseparated": unseparated(cases), "short": _short(answer)})


def _answer(cases: Sequence[CaseRow]) -> Answer:
    values = _per_case(cases)
    score = _measure(values[0])
    repro_raw = _measure(values[1])
    repro = _difference(repro_raw) if repro_raw is not None else None
    texts = [
        t for t in (score and _score_text(score, _split(cases)), repro and _repro_text(repro)) if t
    ]
    if not texts:
        sentence = "No evidence: no pair was judged and no case was decided by both versions."
        return Answer(better=Better.NO_EVIDENCE, sentence=sentence, score=None, reproduction=None)
    s = score.direction(0.5) if score else 0
    r = repro.direction(0.0) if repro else 0
    evidence = "; ".join(texts)
    if s * r < 0:
        judge = "candidate" if s > 0 else "baseline"
        other = "candidate" if r > 0 else "baseline"
        return Answer(
            better=Better.CONFLICT,
            sentence=(
                f"The evidence conflicts: the judge prefers the {judge}'s reports, but the "
                f"{other} reproduces more bugs — {evidence}."
            ),
            score=score,
            reproduction=repro,
        )
    if s or r:
        who = Better.CANDIDATE if (s or r) > 0 else Better.BASELINE
        why = " and ".join(
            w
            for w, shown in (
                ("the judge prefers its reports", s != 0),
                ("it reproduces more bugs", r != 0),
            )
            if shown
        )
        return Answer(
            better=who,
            sentence=f"The {who.value} is better: {why} — {evidence}.",
            score=score,
            reproduction=repro,
        )
    more = _more(score, repro_raw)
    tail = (
        f"; about {more} more cases would show which is better at the rates seen"
        if more is not None
        else "; at the rates seen no number of further cases would show which is better"
    )
    return Answer(
        better=Better.UNDECIDED,
        sentence=f"The evidence does not decide which version is better: {evidence}{tail}.",
        score=score,
        reproduction=repro,
        more_cases=more,
    )
