"""Bias probes on any judge, through the same call contract and cache as real pairs.

Position and verbosity probes use one judge on pairs built from real reports
(a report vs its near-identical copy; a report vs itself padded to twice the
words). Self-preference needs a cross-family jury: each member's win rate for
its own family minus the other members' on the same pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bughunt.models import BiasProbe, BugReport, CallStatus, JudgeCall, Order, Winner
from judging.bias import (
    JuryMember,
    OrderedPair,
    ProbeItem,
    ProbePair,
    Side,
    cross_family_pairs,
    position_pairs,
    run_probes,
    run_self_probe,
    verbosity_pairs,
)
from judging.judges import (
    Breaker,
    CallLookup,
    CallTiming,
    Judge,
    JudgeRequest,
    ReportFeatures,
    build_prompt,
    call_judge,
    load_cache,
)

if TYPE_CHECKING:
    from tasks.score._settings import ScoreSettings


@dataclass(frozen=True, slots=True)
class ProbeContext:
    """What every probe call of a run shares: report metadata, the run, cache and settings."""

    families: Mapping[str, str]
    quality: Mapping[tuple[str, str], float]
    run_id: str
    settings: ScoreSettings
    breakers: dict[str, Breaker] = field(default_factory=dict)
    """One circuit breaker per judge, shared with the stage's pair calls."""
    cache: CallLookup | None = None
    """Earlier calls that may answer probe calls (``None``: none)."""


DEFAULT_QUALITY = 0.5
"""Quality of a report with no sandbox evidence (only the simulated judge reads it)."""


def _request(
    first: ProbeItem,
    second: ProbeItem,
    pair_id: str,
    first_side: Side,
    quality: Mapping[tuple[str, str], float],
) -> JudgeRequest:
    """One probe call; both items keep the quality of the report they were made from."""

    def feats(item: ProbeItem) -> ReportFeatures:
        assert item.report is not None
        q = quality.get((item.report.case_id, item.report.agent_version), DEFAULT_QUALITY)
        return ReportFeatures(
            agent_version=item.report.agent_version, family=item.family, words=item.words, quality=q
        )

    assert first.report is not None and second.report is not None
    return JudgeRequest(
        case_id=f"probe:{pair_id}",
        order=Order.CANDIDATE_FIRST if first_side is Side.A else Order.BASELINE_FIRST,
        first=first.report,
        second=second.report,
        first_features=feats(first),
        second_features=feats(second),
    )


def _judge_fn(
    judge: Judge, pairs: Sequence[ProbePair], ctx: ProbeContext, made: list[JudgeCall]
) -> Callable[[OrderedPair], Winner | None]:
    """A probe judge function over the call contract; every call is appended to ``made``."""
    requests = {
        (p.pair_id, side): _request(p.item(side), p.item(side.other), p.pair_id, side, ctx.quality)
        for p in pairs
        for side in (Side.A, Side.B)
    }
    cache = load_cache(ctx.cache, judge, list(requests.values()), refresh=ctx.settings.refresh)
    breaker = ctx.breakers.setdefault(judge.name, Breaker())

    def judge_fn(op: OrderedPair) -> Winner | None:
        request = requests[(op.pair.pair_id, op.first)]
        if op.sample_index:
            request = request.model_copy(update={"sample_index": op.sample_index})
        call = call_judge(
            judge,
            request,
            run_id=ctx.run_id,
            breaker=breaker,
            cache=cache,
            prompt=build_prompt(request),
            timing=CallTiming(deadline_s=ctx.settings.deadline_s),
        )
        made.append(call)
        return call.winner if call.status is CallStatus.JUDGED else None

    return judge_fn


def probe_judge(
    judge: Judge, reports: Sequence[BugReport], ctx: ProbeContext
) -> tuple[list[JudgeCall], list[BiasProbe]]:
    """Position and verbosity probes of ``judge`` on up to ``probe_pairs`` reports each."""
    n = ctx.settings.probe_pairs
    if not reports or n <= 0:
        return [], []
    seed = ctx.settings.seed
    pairs = [
        *position_pairs(reports, ctx.families, n=n, seed=seed),
        *verbosity_pairs(reports, ctx.families, n=n, seed=seed),
    ]
    made: list[JudgeCall] = []
    result = run_probes(_judge_fn(judge, pairs, ctx, made), pairs, judge=judge.name, seed=seed)
    return made, result.rows(ctx.run_id)


def probe_self_preference(
    members: Sequence[Judge], reports: Sequence[BugReport], ctx: ProbeContext
) -> tuple[list[JudgeCall], list[BiasProbe]]:
    """Self-preference of each jury member on every cross-family pair of the reports."""
    pairs = cross_family_pairs(reports, ctx.families)
    if not pairs:
        return [], []
    made: list[JudgeCall] = []
    jury = [JuryMember(m.name, m.family, _judge_fn(m, pairs, ctx, made)) for m in members]
    result = run_self_probe(jury, pairs, seed=ctx.settings.seed)
    return made, result.rows(ctx.run_id)
