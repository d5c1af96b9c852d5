"""Self-preference of real judges, from a cross-family jury.

Real pairs have no known quality, so a judge's preference for its own family
is measured against other judges on the same pairs: a member's win rate for
its own family minus that of the neutral members (whose family is on neither
side). Verdicts are swap verdicts, so position bias does not enter.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from bughunt.models import ProbeKind, Strategy
from judging.bias._intervals import Estimate, difference, proportion
from judging.bias._pairsets import ProbePair
from judging.bias._probe_calls import JuryMember, ProbeCaller, swap_vote
from judging.bias._probe_result import ProbeMetric, ProbeResult, metric_of
from judging.bias._strategies import VOTE_A, VOTE_B

_Verdicts = dict[tuple[str, str], int | None]
"""Each (member, pair id)'s swap verdict; None when its calls failed."""


def run_self_probe(
    members: Sequence[JuryMember],
    pairs: Sequence[ProbePair],
    *,
    samples: int = 1,
    seed: int | None = None,
) -> ProbeResult:
    """Self-preference of each member: own-family win rate minus the neutral members' rate.

    For member J of family F, the pairs are those with F on exactly one side;
    the neutral members are those whose family is on neither side of any of
    them (a member of the other side's family would pull the difference up).
    Only pairs every one of them judged count. Verdicts are swap verdicts.
    The reference interval averages the neutral members' Wilson bounds and the
    difference uses ρ = 0: both choices widen the interval, never narrow it.
    """
    if len({m.family for m in members}) != len(members):
        raise ValueError("a jury needs members of different families")
    callers = {m.name: ProbeCaller(m.judge_fn, samples) for m in members}
    verdict = _swap_verdicts(callers, members, pairs)
    metrics: list[ProbeMetric] = []
    unscored: Counter[str] = Counter()
    for judge in members:
        own, neutral = _own_pairs_and_neutral(judge, members, pairs)
        if not own or not neutral:
            continue
        scored = [p for p in own if _judged_by_all([judge, *neutral], p, verdict)]
        unscored[judge.name] = len(own) - len(scored)
        metrics += _self_metrics(verdict, judge, neutral, scored)
    return ProbeResult(
        metrics=tuple(metrics),
        calls=sum(c.calls for c in callers.values()),
        failed_calls=sum(c.failed for c in callers.values()),
        unscored=dict(unscored),
        seed=seed,
    )


def _swap_verdicts(
    callers: dict[str, ProbeCaller], members: Sequence[JuryMember], pairs: Sequence[ProbePair]
) -> _Verdicts:
    """Every member's swap verdict on every pair, asked pair by pair."""
    verdict: _Verdicts = {}
    for pair in pairs:
        for m in members:
            votes = callers[m.name].both(pair)
            verdict[(m.name, pair.pair_id)] = None if votes is None else swap_vote(*votes)
    return verdict


def _own_pairs_and_neutral(
    judge: JuryMember, members: Sequence[JuryMember], pairs: Sequence[ProbePair]
) -> tuple[list[ProbePair], list[JuryMember]]:
    """The pairs with ``judge``'s family on exactly one side, and the members whose family is
    on neither side of any of them."""
    own = [p for p in pairs if (p.a.family == judge.family) != (p.b.family == judge.family)]
    sides = {f for p in own for f in (p.a.family, p.b.family)}
    return own, [m for m in members if m.family not in sides]


def _judged_by_all(panel: Sequence[JuryMember], pair: ProbePair, verdict: _Verdicts) -> bool:
    """Every member of ``panel`` has a verdict on ``pair``."""
    return all(verdict[(m.name, pair.pair_id)] is not None for m in panel)


def _self_metrics(
    verdict: _Verdicts,
    judge: JuryMember,
    neutral: Sequence[JuryMember],
    scored: list[ProbePair],
) -> list[ProbeMetric]:
    """``judge``'s own-family win rate, the neutral members' rate for that family, and the
    difference, over the ``scored`` pairs."""
    n = len(scored)
    mine = proportion(_own_wins(verdict, judge.name, judge.family, scored), n)
    refs = [proportion(_own_wins(verdict, m.name, judge.family, scored), n) for m in neutral]
    ref = _average(refs, n)
    return [
        metric_of(judge.name, ProbeKind.SELF, "own_family_win_rate", Strategy.SWAP, mine),
        metric_of(judge.name, ProbeKind.SELF, "neutral_own_family_win_rate", Strategy.SWAP, ref),
        metric_of(
            judge.name, ProbeKind.SELF, "self_preference", Strategy.SWAP, difference(mine, ref)
        ),
    ]


def _own_wins(verdict: _Verdicts, member: str, family: str, pairs: list[ProbePair]) -> int:
    """Pairs where ``member``'s verdict went to the report of ``family``."""
    return sum(
        verdict[(member, p.pair_id)] == (VOTE_A if p.a.family == family else VOTE_B) for p in pairs
    )


def _average(estimates: Sequence[Estimate], n: int) -> Estimate:
    """Mean of proportions of the same pairs, with the mean of their bounds (conservative)."""
    if n == 0 or any(e.value is None or e.ci is None for e in estimates):
        return Estimate(None, None, n)
    k = len(estimates)
    value = sum(e.value or 0.0 for e in estimates) / k
    lo = sum(e.ci[0] for e in estimates if e.ci) / k
    hi = sum(e.ci[1] for e in estimates if e.ci) / k
    return Estimate(value, (lo, hi), n)
