"""Scoring real report pairs (the score stage): verdicts and the candidate's win rate.

The unit of evidence is the pair (docs/judge-bias.md#metrics): each pair's calls are folded
into one verdict first, so repeating calls never narrows an interval.

Per pair set (and per bug category): candidate win rate over decisive pairs
with a Wilson interval, ties and unscored pairs beside it (never folded in),
a two-sided sign test over decisive pairs, and a length-controlled win rate
beside the raw one. A figure resting on fewer than ten decisive pairs carries
the flag ``few pairs``.

With several agent samples per case (``--agent-samples``) the *case* is the
unit: a case's share is the fraction of its decisive sample pairs the
candidate won, the win rate is the mean share over cases with a decisive
sample (:func:`~bughunt.stats.case_mean`), and the sign test counts a case
for the side that won most of its samples. k samples never narrow an
interval as k cases would. With one sample per case every figure is the
plain pair figure.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from bughunt.models import Strategy, Verdict, VerdictOutcome
from bughunt.stats import Interval, case_mean, holm, sign_test
from tasks.score.pairs._calls import PairInput, StrategyConfig
from tasks.score.pairs._fold import Folded, fold_pair, verdict_row
from tasks.score.pairs._lc import LengthControlled, length_controlled

FEW_PAIRS = 10
"""Fewer decisive pairs than this: the figures are flagged ``few pairs``."""


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class UnscoredPair(_Out):
    """A pair without a verdict, and why."""

    case_id: str
    """Case of the pair."""
    reason: str
    """Why, e.g. ``1 of 2 calls failed: timed_out``."""
    sample: int = 0
    """Which of the agents' samples on the case (``--agent-samples``)."""


class WinRate(_Out):
    """Candidate vs baseline over a set of pairs."""

    pairs: int
    """Pairs in the set."""
    candidate_wins: int
    """Pairs won by the candidate."""
    baseline_wins: int
    """Pairs won by the baseline."""
    ties: int
    """Pairs judged a tie (shown, not counted in the win rate)."""
    unscored: int
    """Pairs without a verdict (failed calls; never ties)."""
    decisive: int
    """Cases with a pair won by either side: the win rate's n (the decisive pairs, with
    one sample per case)."""
    win_rate: float | None
    """Mean over decisive cases of the share of their decisive pairs the candidate won
    (candidate_wins / decisive with one sample per case); ``None`` when none is decisive."""
    win_rate_ci: Interval | None
    """Wilson 95% interval over decisive cases (conservative for shares of samples)."""
    sign_test_p: float | None
    """Two-sided exact sign test over decisive cases (a case counts for the side that won
    most of its samples; an even split counts for neither)."""
    cases: int = 0
    """Cases in the set (``pairs`` counts every sample pair)."""
    holm_p: float | None = None
    """Per category only: the sign test's p adjusted by Holm over the run's categories (one
    of them shows p < 0.05 by chance far more often than 5% of the time); ``None`` overall."""
    length_controlled: LengthControlled
    """Win rate at equal length (a regression estimate that reduces, not removes, length bias)."""
    flags: list[str]
    """Warnings about how much the figures can bear (e.g. ``few pairs``)."""


class ScoreSummary(WinRate):
    """The score stage's summary of one run."""

    strategy: Strategy
    """Strategy of every verdict."""
    judges: list[str]
    """Judges whose calls count."""
    calls_used: int
    """Planned judge calls the verdicts rest on (including failed ones)."""
    calls_recorded: int
    """Every verdict call record given, planned or not (bias-probe calls are never here:
    the score stage's ``JudgeHealth`` counts both purposes apart)."""
    calls_sent: int
    """Verdict call records that reached a judge (not cached, at least one attempt)."""
    requests: int
    """Requests sent for verdict calls, over all attempts."""
    unscored_pairs: list[UnscoredPair]
    """Every unscored pair with its reason."""
    per_category: dict[str, WinRate]
    """The same figures per bug category (``uncategorised`` when unknown)."""


class ScoreResult(_Out):
    """Verdict rows for the ledger and the summary for the report."""

    verdicts: list[Verdict]
    """One per pair."""
    summary: ScoreSummary
    """Aggregated figures."""


def _log_ratio(pair: PairInput) -> float:
    return math.log2(pair.candidate_words / pair.baseline_words)


def win_rate(
    scored: Sequence[tuple[PairInput, Folded]], *, seed: int = 0, resamples: int = 1000
) -> WinRate:
    """Figures over folded pairs (one entry per pair; a case's samples are one unit)."""
    counts = Counter(f.outcome for _, f in scored)
    cw, bw = counts[VerdictOutcome.CANDIDATE], counts[VerdictOutcome.BASELINE]
    decisive = [
        (p, f)
        for p, f in scored
        if f.outcome in (VerdictOutcome.CANDIDATE, VerdictOutcome.BASELINE)
    ]
    won: dict[str, list[bool]] = {}
    for p, f in decisive:
        won.setdefault(p.case_id, []).append(f.outcome is VerdictOutcome.CANDIDATE)
    shares = [sum(w) / len(w) for w in won.values()]
    mean, interval = case_mean(shares)
    case_wins = sum(1 for s in shares if s > 0.5)
    case_losses = sum(1 for s in shares if s < 0.5)
    lc = length_controlled(
        [_log_ratio(p) for p, _ in decisive],
        [f.outcome is VerdictOutcome.CANDIDATE for _, f in decisive],
        seed=seed,
        resamples=resamples,
    )
    return WinRate(
        pairs=len(scored),
        candidate_wins=cw,
        baseline_wins=bw,
        ties=counts[VerdictOutcome.TIE],
        unscored=counts[VerdictOutcome.UNSCORED],
        decisive=len(shares),
        win_rate=mean,
        win_rate_ci=interval,
        sign_test_p=sign_test(case_wins, case_losses),
        length_controlled=lc,
        flags=["few pairs"] if len(shares) < FEW_PAIRS else [],
        cases=len({p.case_id for p, _ in scored}),
    )


def _refuse_repeated_samples(pairs: Sequence[PairInput]) -> None:
    """``ValueError`` naming every case sample given more than one pair."""
    seen = Counter((p.case_id, p.sample) for p in pairs)
    if repeated := sorted(
        f"{c}" + (f" sample {s}" if s else "") for (c, s), k in seen.items() if k > 1
    ):
        raise ValueError(f"each case sample is one pair; repeated: {', '.join(repeated)}")


def _category(pair: PairInput) -> str:
    """The pair's bug category, ``uncategorised`` when unknown."""
    return str(pair.category) if pair.category else "uncategorised"


def _per_category(
    folded: Sequence[tuple[PairInput, Folded]], *, seed: int, resamples: int
) -> dict[str, WinRate]:
    """:func:`win_rate` over each bug category's pairs, by category name."""
    cats = sorted({_category(p) for p, _ in folded})
    rates = [
        win_rate([(p, f) for p, f in folded if _category(p) == c], seed=seed, resamples=resamples)
        for c in cats
    ]
    adjusted = holm([r.sign_test_p for r in rates])
    return {
        c: r.model_copy(update={"holm_p": p}) for c, r, p in zip(cats, rates, adjusted, strict=True)
    }


def _unscored_pairs(folded: Sequence[tuple[PairInput, Folded]]) -> list[UnscoredPair]:
    """Every unscored pair with its reason."""
    return [
        UnscoredPair(case_id=p.case_id, reason=f.reason or "unscored", sample=p.sample)
        for p, f in folded
        if f.outcome is VerdictOutcome.UNSCORED
    ]


def score_pairs(
    pairs: Sequence[PairInput],
    config: StrategyConfig,
    *,
    run_id: str,
    seed: int = 0,
    resamples: int = 1000,
) -> ScoreResult:
    """Fold every pair under ``config`` and summarise; ``ValueError`` on a repeated case sample.

    ``seed`` and ``resamples`` drive the length-controlled bootstrap only.
    """
    _refuse_repeated_samples(pairs)
    folded = [(p, fold_pair(p, config)) for p in sorted(pairs, key=lambda p: (p.case_id, p.sample))]
    overall = win_rate(folded, seed=seed, resamples=resamples)
    calls = [c for p in pairs for c in p.calls]
    summary = ScoreSummary(
        **overall.model_dump(),
        strategy=config.strategy,
        judges=[j.name for j in config.judges[: config.spec().members]],
        calls_used=sum(f.calls for _, f in folded),
        calls_recorded=len(calls),
        calls_sent=sum(1 for c in calls if not c.cached and c.attempts > 0),
        requests=sum(c.attempts for c in calls),
        unscored_pairs=_unscored_pairs(folded),
        per_category=_per_category(folded, seed=seed, resamples=resamples),
    )
    verdicts = [verdict_row(p, f, config, run_id) for p, f in folded]
    return ScoreResult(verdicts=verdicts, summary=summary)
