"""Bias probes on any judge: a ``judge_fn`` per ordered pair, metrics with intervals over pairs.

Each pair is judged in both orders (``samples`` calls per order, folded by
plurality into one vote per order: the unit of evidence is the pair, so more
samples never narrow an interval). A pair with any failed call (``judge_fn``
returned ``None``) is left out of that probe and counted as unscored — never
as a tie.

- position / gap: the four-way table of the two orders (``single``);
- gap: correct / reversed / tie of the swap verdict (``swap``);
- verbosity, self: net bias and share of decisive of the swap verdict, with
  the padded / own-family side as the favoured one (``swap``).

:func:`run_self_probe` estimates self-preference on real pairs, whose quality
is unknown, from a cross-family jury: a member's win rate for its own family
minus that of the neutral members (families on neither side) on the same pairs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from bughunt.models import ProbeKind, Strategy
from judging.bias._intervals import net_bias, proportion
from judging.bias._pairsets import ProbePair
from judging.bias._probe_calls import JudgeFn, ProbeCaller, swap_vote
from judging.bias._probe_result import ProbeMetric, ProbeResult, metric_of
from judging.bias._strategies import VOTE_A, VOTE_B, VOTE_TIE, Side


def four_way_counts(votes: Iterable[tuple[int, int]]) -> Counter[str]:
    """Classify (vote with a first, vote with b first) pairs into the four-way table."""
    out: Counter[str] = Counter()
    for va, vb in votes:
        if va == vb:
            out["consistent"] += 1
        elif (va, vb) == (VOTE_A, VOTE_B):
            out["biased_first"] += 1
        elif (va, vb) == (VOTE_B, VOTE_A):
            out["biased_second"] += 1
        else:
            out["one_tie_one_win"] += 1
    return out


def _table(judge: str, probe: ProbeKind, votes: list[tuple[int, int]]) -> list[ProbeMetric]:
    n, c = len(votes), four_way_counts(votes)
    cells = ("consistent", "biased_first", "biased_second", "one_tie_one_win")
    out = [metric_of(judge, probe, k, Strategy.SINGLE, proportion(c[k], n)) for k in cells]
    out.append(
        metric_of(judge, probe, "flip_rate", Strategy.SINGLE, proportion(n - c["consistent"], n))
    )
    out.append(
        metric_of(
            judge,
            probe,
            "net_bias",
            Strategy.SINGLE,
            net_bias(c["biased_first"], c["biased_second"], n),
        )
    )
    return out


def _favoured(judge: str, probe: ProbeKind, verdicts: list[tuple[int, Side]]) -> list[ProbeMetric]:
    """Net bias and share of decisive for swap verdicts paired with their favoured side."""
    n = len(verdicts)
    fav = sum(v == side.vote for v, side in verdicts)
    oth = sum(v == side.other.vote for v, side in verdicts)
    return [
        metric_of(judge, probe, "net_bias", Strategy.SWAP, net_bias(fav, oth, n)),
        metric_of(judge, probe, "share_of_decisive", Strategy.SWAP, proportion(fav, fav + oth)),
        metric_of(judge, probe, "tie", Strategy.SWAP, proportion(n - fav - oth, n)),
    ]


def run_probes(
    judge_fn: JudgeFn,
    pairs: Sequence[ProbePair],
    *,
    judge: str = "judge",
    samples: int = 1,
    seed: int | None = None,
) -> ProbeResult:
    """Judge every pair in both orders and measure position, gap, verbosity and self probes.

    Sets with no pair give no metric. Self pairs are measured directly (net
    bias toward the own-family side), which is sound only when quality is
    balanced by construction; for real pairs use :func:`run_self_probe`.
    """
    caller = ProbeCaller(judge_fn, samples)
    by_kind: dict[ProbeKind, list[tuple[ProbePair, tuple[int, int]]]] = {k: [] for k in ProbeKind}
    unscored: Counter[str] = Counter()
    for pair in pairs:
        votes = caller.both(pair)
        if votes is None:
            unscored[str(pair.kind)] += 1
        else:
            by_kind[pair.kind].append((pair, votes))

    metrics: list[ProbeMetric] = []
    for kind in (ProbeKind.POSITION, ProbeKind.GAP):
        if by_kind[kind]:
            metrics += _table(judge, kind, [v for _, v in by_kind[kind]])
    gap = [
        (p.better_side, swap_vote(*v)) for p, v in by_kind[ProbeKind.GAP] if p.better is not None
    ]
    if gap:
        counts = {
            "correct": sum(v == better.vote for better, v in gap),
            "reversed": sum(v == better.other.vote for better, v in gap),
            "tie": sum(v == VOTE_TIE for _, v in gap),
        }
        for name, count in counts.items():
            metrics.append(
                metric_of(judge, ProbeKind.GAP, name, Strategy.SWAP, proportion(count, len(gap)))
            )
    for kind in (ProbeKind.VERBOSITY, ProbeKind.SELF):
        fav = [(swap_vote(*v), p.favoured_side) for p, v in by_kind[kind] if p.favoured is not None]
        if fav:
            metrics += _favoured(judge, kind, fav)
    return ProbeResult(
        metrics=tuple(metrics),
        calls=caller.calls,
        failed_calls=caller.failed,
        unscored=dict(unscored),
        seed=seed,
    )
