"""A judge under a strategy measured against human labels (docs/judges.md#calibration).

Every labelled pair is judged as a real pair is: the strategy's plan
(``plan_pair``) says which calls its verdict needs, the call contract makes
them (``judge_batch``, with the ledger's cache unless refreshed), and the fold
(``fold_pair``) turns them into one verdict. The labels file's first report is
side a — the side a single-order strategy shows first — and its second report
side b. Besides the plan, one call in each order per judge (sample 0) is made
when the plan lacks it, so position consistency is measured for every
strategy; those extra calls never enter the verdict. Nothing is written here:
the calls and the calibration row come back for the caller to store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from bughunt.models import (
    BugReport,
    CallStatus,
    JudgeCalibration,
    JudgeCall,
    Order,
    Strategy,
    VerdictOutcome,
    Winner,
)
from judging.bias import report_words
from judging.calibration import (
    CalibrationFigures,
    LabelledPair,
    LabelSet,
    PairOutcome,
    calibration_figures,
)
from judging.judges import (
    Breaker,
    CallTiming,
    Judge,
    JudgeRequest,
    ReportFeatures,
    judge_batch,
    load_cache,
)
from ledger import Ledger
from tasks.score._probe_stage import DEFAULT_QUALITY
from tasks.score.judge_cache import cache_cutoff, ledger_lookup
from tasks.score.pairs import (
    JudgeRef,
    PairCall,
    PairInput,
    StrategyConfig,
    fold_pair,
    plan_pair,
    side_vote,
)

LABELLED_FAMILY = "labelled"
"""Family given to both reports of a labelled pair: equal families add no self-preference."""

_WINNER = {
    VerdictOutcome.CANDIDATE: Winner.FIRST,
    VerdictOutcome.BASELINE: Winner.SECOND,
    VerdictOutcome.TIE: Winner.TIE,
}
_BOTH_ORDERS = (Order.CANDIDATE_FIRST, Order.BASELINE_FIRST)

CallKey = tuple[str, Order, int]


class CalibrationSettings(BaseModel):
    """How the labelled pairs are judged."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    strategy: Strategy = Strategy.SWAP
    """Strategy whose verdicts are compared with the labels."""
    k: int = Field(default=5, ge=1)
    """Votes of ``majority``."""
    seed: int = Field(default=0, ge=0)
    """Seed of the ``random_order`` coin and of the kappa bootstrap."""
    deadline_s: float = Field(default=90.0, gt=0)
    """Deadline of one judge call (all attempts)."""
    max_in_flight: int = Field(default=8, ge=1)
    """Judge requests in flight at once."""
    refresh: bool = False
    """Send every call again instead of answering from the ledger's cache."""
    cache_ttl_s: float | None = Field(default=None, ge=0)
    """Cached answers older than this many seconds are not reused (``--judge-cache-ttl``);
    ``None``: no limit."""


@dataclass(frozen=True, slots=True)
class CalibrationRun:
    """What one calibration made and found: its calls, each pair's outcome, the figures, the row."""

    calls: list[JudgeCall]
    """Every judge call, failures included, in request order per judge."""
    outcomes: list[PairOutcome]
    """One per labelled pair, in file order."""
    figures: CalibrationFigures
    """Accuracy, agreement, kappa and consistency with their intervals."""
    row: JudgeCalibration
    """The ledger row summing it up."""
    degraded_reason: str | None
    """Why a judge's circuit breaker opened, if one did (its remaining calls were aborted)."""


def _features(report: BugReport) -> ReportFeatures:
    # Labelled reports carry no sandbox evidence: every report gets the default quality.
    return ReportFeatures(
        agent_version=report.agent_version,
        family=LABELLED_FAMILY,
        words=report_words(report),
        quality=DEFAULT_QUALITY,
    )


def _case_id(pair: LabelledPair) -> str:
    return f"label:{pair.id}"


def _keys(config: StrategyConfig, case_id: str) -> list[CallKey]:
    """The plan's calls, then one call in each order per judge of the plan (no repeats)."""
    planned = [(p.judge, p.order, p.sample_index) for p in plan_pair(config, case_id)]
    judges = dict.fromkeys(key[0] for key in planned)
    extra = [(judge, order, 0) for judge in judges for order in _BOTH_ORDERS]
    return list(dict.fromkeys([*planned, *extra]))


def _request(pair: LabelledPair, key: CallKey) -> JudgeRequest:
    _judge, order, sample = key
    first_leads = order is Order.CANDIDATE_FIRST
    shown = (pair.first, pair.second) if first_leads else (pair.second, pair.first)
    return JudgeRequest(
        case_id=_case_id(pair),
        order=order,
        first=shown[0],
        second=shown[1],
        first_features=_features(shown[0]),
        second_features=_features(shown[1]),
        sample_index=sample,
    )


def _consistent(calls: Sequence[PairCall], judges: Sequence[str]) -> bool | None:
    """Whether every judge's sample-0 verdicts in the two orders pick the same side."""
    votes: dict[CallKey, int] = {}
    for c in calls:
        if c.status is CallStatus.JUDGED and c.winner is not None and c.sample_index == 0:
            votes.setdefault((c.judge, c.order, 0), side_vote(c.order, c.winner))
    same = True
    for judge in judges:
        first, second = (votes.get((judge, order, 0)) for order in _BOTH_ORDERS)
        if first is None or second is None:
            return None
        same = same and first == second
    return same


def _outcome(pair: LabelledPair, calls: Sequence[PairCall], config: StrategyConfig) -> PairOutcome:
    case_id = _case_id(pair)
    folded = fold_pair(
        PairInput(
            case_id=case_id,
            candidate="first",
            baseline="second",
            candidate_words=report_words(pair.first),
            baseline_words=report_words(pair.second),
            calls=tuple(calls),
        ),
        config,
    )
    judges = list(dict.fromkeys(p.judge for p in plan_pair(config, case_id)))
    return PairOutcome(
        id=pair.id,
        label=pair.better,
        verdict=_WINNER.get(folded.outcome),
        reason=folded.reason,
        consistent=_consistent(calls, judges),
    )


def _judge_all(
    labels: LabelSet,
    members: Sequence[Judge],
    config: StrategyConfig,
    run_id: str,
    settings: CalibrationSettings,
    ledger: Ledger | None,
) -> tuple[list[JudgeCall], list[str]]:
    """Every call the pairs need, judge by judge; and each opened breaker's reason."""
    requests: dict[str, list[JudgeRequest]] = {m.name: [] for m in members}
    for pair in labels.pairs:
        for key in _keys(config, _case_id(pair)):
            requests[key[0]].append(_request(pair, key))
    calls: list[JudgeCall] = []
    degraded: list[str] = []
    lookup = ledger_lookup(ledger, not_before=cache_cutoff(settings.cache_ttl_s))
    for member in members:
        batch = requests[member.name]
        result = judge_batch(
            member,
            batch,
            run_id=run_id,
            max_in_flight=settings.max_in_flight,
            breaker=Breaker(),
            cache=load_cache(lookup, member, batch, refresh=settings.refresh),
            timing=CallTiming(deadline_s=settings.deadline_s),
        )
        calls.extend(result.calls)
        if result.degraded:
            degraded.append(f"{member.name}: {result.degraded_reason}")
    return calls, degraded


def calibrate_judge(
    labels: LabelSet,
    members: Sequence[Judge],
    *,
    judge: str,
    run_id: str,
    settings: CalibrationSettings,
    ledger: Ledger | None = None,
) -> CalibrationRun:
    """Judge every labelled pair under ``settings.strategy`` and compare the verdicts with the labels.

    ``members`` is one judge, or a jury's members; ``judge`` is the name the
    row is stored under. ``ledger`` (read only) answers unchanged calls from
    the cache unless ``settings.refresh``. A failed call leaves its pair
    unscored, never a tie or a wrong answer. Never raises for a judge failure.
    """
    config = StrategyConfig(
        strategy=settings.strategy,
        judges=tuple(JudgeRef(name=m.name, family=m.family) for m in members),
        k=settings.k,
        seed=settings.seed,
    )
    calls, degraded = _judge_all(labels, members, config, run_id, settings, ledger)
    by_case: dict[str, list[PairCall]] = {}
    for call in calls:
        by_case.setdefault(call.case_id, []).append(PairCall.from_judge_call(call))
    outcomes = [_outcome(p, by_case.get(_case_id(p), []), config) for p in labels.pairs]
    figures = calibration_figures(outcomes, seed=settings.seed)
    row = calibration_row(figures, labels, judge=judge, run_id=run_id, settings=settings)
    return CalibrationRun(calls, outcomes, figures, row, "; ".join(degraded) or None)


def calibration_row(
    figures: CalibrationFigures,
    labels: LabelSet,
    *,
    judge: str,
    run_id: str,
    settings: CalibrationSettings,
) -> JudgeCalibration:
    """The ledger row of one calibration's figures."""
    acc, agr, kap, con = figures.accuracy, figures.agreement, figures.kappa, figures.consistency
    return JudgeCalibration(
        run_id=run_id,
        judge=judge,
        strategy=settings.strategy,
        k=settings.k,
        seed=settings.seed,
        labels_file=labels.source,
        labels_hash=labels.sha256,
        n=figures.n,
        scored=figures.scored,
        unscored=figures.unscored,
        label_ties=figures.label_ties,
        judge_ties=figures.judge_ties,
        accuracy=acc.value,
        accuracy_low=acc.ci[0] if acc.ci else None,
        accuracy_high=acc.ci[1] if acc.ci else None,
        accuracy_n=acc.n,
        agreement=agr.value,
        agreement_low=agr.ci[0] if agr.ci else None,
        agreement_high=agr.ci[1] if agr.ci else None,
        kappa=kap.value,
        kappa_low=kap.ci[0] if kap.ci else None,
        kappa_high=kap.ci[1] if kap.ci else None,
        consistency=con.value,
        consistency_low=con.ci[0] if con.ci else None,
        consistency_high=con.ci[1] if con.ci else None,
        consistency_n=con.n,
    )


def last_calibration(ledger: Ledger, judge: str, strategy: Strategy) -> JudgeCalibration | None:
    """The latest stored calibration of ``judge`` under ``strategy`` (read-only), or ``None``.

    ``None`` too when the ledger file does not exist or predates the
    ``judge_calibrations`` table (schema version 10).
    """
    if not ledger.path.exists():
        return None
    tables = ledger.query(
        "SELECT count(*) AS n FROM information_schema.tables WHERE table_name = ?",
        [JudgeCalibration.__table__],
    )
    if not tables[0]["n"]:
        return None
    rows = ledger.read(
        JudgeCalibration,
        "WHERE judge = ? AND strategy = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
        [judge, strategy.value],
    )
    return rows[0] if rows else None
