"""The score stage over one run's batch: judge every pair, fold verdicts, probe the judge.

Tasks return data: the judge calls, verdicts and probe rows come back for the
flow to write. One circuit breaker per judge per run. Calls on unchanged
pairs are answered from the judge cache the caller read unless refreshed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from bughunt.models import (
    BiasProbe,
    BugCategory,
    JudgeCall,
    Order,
    Verdict,
)
from judging.judges import (
    Breaker,
    CallLookup,
    CallTiming,
    Judge,
    JudgeRequest,
    ReportFeatures,
    judge_batch,
    load_cache,
)
from tasks.score._evidence import ReportEvidence, report_quality, words_of
from tasks.score._health import JudgeHealth, judge_health
from tasks.score._probe_stage import ProbeContext, probe_judge
from tasks.score._settings import ScoreSettings
from tasks.score.judge_cache import calls_lookup
from tasks.score.pairs import (
    JudgeRef,
    PairCall,
    PairInput,
    ScoreSummary,
    StrategyConfig,
    plan_pair,
    score_pairs,
)


class ScoreResult(BaseModel):
    """Everything the score stage produced for one run."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    calls: list[JudgeCall]
    """Every judge call, pairs and probes, failures included."""
    verdicts: list[Verdict]
    """One verdict per pair."""
    summary: ScoreSummary
    """Candidate vs baseline figures."""
    probes: list[BiasProbe]
    """The judge's bias probes on this run's reports."""
    health: JudgeHealth
    """Calls by status, cache hits, breaker."""

    @classmethod
    def merge(cls, parts: Sequence[ScoreResult]) -> ScoreResult:
        """One result from an adaptive run's batches, in order (each holds its own calls and
        verdicts; the last one's summary covers every pair)."""
        if not parts:
            raise ValueError("nothing to merge")
        calls = [c for p in parts for c in p.calls]
        probe_ids = {c.call_id for p in parts for c in _probe_calls(p)}
        reasons = [p.health.degraded_reason for p in parts if p.health.degraded_reason]
        return cls(
            calls=calls,
            verdicts=[v for p in parts for v in p.verdicts],
            summary=parts[-1].summary,
            probes=[b for p in parts for b in p.probes],
            health=judge_health(
                [c for c in calls if c.call_id not in probe_ids],
                [c for c in calls if c.call_id in probe_ids],
                degraded=any(p.health.degraded for p in parts),
                degraded_reason="; ".join(reasons) or None,
            ),
        )


def _probe_calls(result: ScoreResult) -> list[JudgeCall]:
    """The bias-probe calls among a result's calls (they follow its verdict calls)."""
    counts = result.health.probe_calls
    n = counts.calls if counts is not None else 0
    return result.calls[len(result.calls) - n :] if n else []


def _features(ev: ReportEvidence) -> ReportFeatures:
    return ReportFeatures(
        agent_version=ev.agent_version,
        family=ev.family,
        words=words_of(ev),
        quality=report_quality(ev),
    )


def pair_requests(
    config: StrategyConfig,
    case_id: str,
    candidate: ReportEvidence,
    baseline: ReportEvidence,
    sample: int = 0,
) -> list[tuple[str, JudgeRequest]]:
    """The (judge name, request) of every call the strategy plans for one pair (of the
    agents' ``sample`` on the case)."""
    assert candidate.report is not None and baseline.report is not None
    cf, bf = _features(candidate), _features(baseline)
    out = []
    for planned in plan_pair(config, case_id, sample):
        cand_first = planned.order is Order.CANDIDATE_FIRST
        out.append(
            (
                planned.judge,
                JudgeRequest(
                    case_id=case_id,
                    order=planned.order,
                    first=candidate.report if cand_first else baseline.report,
                    second=baseline.report if cand_first else candidate.report,
                    first_features=cf if cand_first else bf,
                    second_features=bf if cand_first else cf,
                    sample_index=planned.sample_index,
                    agent_sample=sample,
                ),
            )
        )
    return out


def _sample_of(samples: Mapping[int, ReportEvidence], sample: int) -> ReportEvidence | None:
    """An agent's report for one sample; an agent with one report only (a replay agent, one
    recorded report per case) shows that report in every sample."""
    if sample in samples:
        return samples[sample]
    return samples[0] if set(samples) == {0} else None


def _unusable(candidate: ReportEvidence | None, baseline: ReportEvidence | None) -> str | None:
    reasons = []
    for side, ev in (("candidate", candidate), ("baseline", baseline)):
        if ev is None:
            reasons.append(f"{side} has no report for this case")
        elif ev.report is None:
            reasons.append(f"{side} report unusable: {ev.unusable_reason or 'no report'}")
    return "; ".join(reasons) or None


def _plan(
    evidence: Sequence[ReportEvidence],
    config: StrategyConfig,
    *,
    baseline: str,
    candidate: str,
    categories: Mapping[str, BugCategory | None],
    done: Collection[tuple[str, int]],
) -> tuple[dict[tuple[str, int], PairInput], dict[str, list[JudgeRequest]]]:
    """Each case sample's pair, and the requests of the pairs not judged already (``done``),
    by judge. Sample i of the candidate meets sample i of the baseline."""
    by_case: dict[str, dict[str, dict[int, ReportEvidence]]] = {}
    for ev in evidence:
        by_case.setdefault(ev.case_id, {}).setdefault(ev.agent_version, {})[ev.sample] = ev
    requests: dict[str, list[JudgeRequest]] = {j.name: [] for j in config.judges}
    pending: dict[tuple[str, int], PairInput] = {}
    for case_id in sorted(by_case):
        sides = by_case[case_id]
        cands, bases = sides.get(candidate, {}), sides.get(baseline, {})
        for sample in sorted({*cands, *bases} or {0}):
            cand, base = _sample_of(cands, sample), _sample_of(bases, sample)
            pair = PairInput(
                case_id=case_id,
                candidate=candidate,
                baseline=baseline,
                candidate_words=words_of(cand) if cand else 1,
                baseline_words=words_of(base) if base else 1,
                category=categories.get(case_id),
                unscored_reason=_unusable(cand, base),
                sample=sample,
            )
            pending[case_id, sample] = pair
            if pair.unscored_reason is None and (case_id, sample) not in done:
                assert cand is not None and base is not None
                for name, request in pair_requests(config, case_id, cand, base, sample):
                    requests[name].append(request)
    return pending, requests


@dataclass(frozen=True, slots=True)
class Matchup:
    """The run, and the two agents it compares: the candidate's reports against the baseline's."""

    run_id: str
    baseline: str
    candidate: str


def score_stage(
    evidence: Sequence[ReportEvidence],
    matchup: Matchup,
    *,
    categories: Mapping[str, BugCategory | None],
    judges: Sequence[Judge],
    settings: ScoreSettings,
    cached: Sequence[JudgeCall],
    earlier: ScoreResult | None = None,
) -> ScoreResult:
    """Judge every candidate/baseline pair of the batch and measure the judge's biases.

    ``judges`` is one judge, or a jury's members for ``jury``/``jury_lc``. A
    pair whose reports are missing or unusable is unscored with the reason and
    costs no call. Judge failures are failures to judge: unscored, never ties.
    Unchanged calls are answered from ``cached`` (the earlier calls the caller read, with the
    settings' time to live: :func:`tasks.score.judge_cache.cached_calls` or
    :func:`~tasks.score.judge_cache.ledger_lookup`) unless ``settings.refresh``; the stage
    reads no ledger. One circuit breaker per judge for the whole stage (a sharded stage:
    per shard, each shard's failures its own).

    ``earlier`` is what the earlier batches of an adaptive run scored: their
    pairs (in ``evidence`` too) are not judged again — their calls are reused
    and their verdicts not repeated — while the summary covers every pair.
    The result holds this batch's calls and verdicts only.
    """
    breakers: dict[str, Breaker] = {}
    config = StrategyConfig(
        strategy=settings.strategy,
        judges=tuple(JudgeRef(name=j.name, family=j.family) for j in judges),
        k=settings.k,
        seed=settings.seed,
    )
    done = {(v.case_id, v.sample) for v in earlier.verdicts} if earlier else set()
    pending, requests = _plan(
        evidence,
        config,
        baseline=matchup.baseline,
        candidate=matchup.candidate,
        categories=categories,
        done=done,
    )
    how = _Calling(matchup.run_id, settings, breakers, calls_lookup(cached))
    judged = _judge_all(requests, {j.name: j for j in judges}, how)
    answered = [c for c in earlier.calls if (c.case_id, c.agent_sample) in done] if earlier else []
    per_pair: dict[tuple[str, int], list[PairCall]] = {}
    for call in [*answered, *judged.calls]:
        per_pair.setdefault((call.case_id, call.agent_sample), []).append(
            PairCall.from_judge_call(call)
        )
    pairs = [p.model_copy(update={"calls": tuple(per_pair.get(k, ()))}) for k, p in pending.items()]
    scored = score_pairs(pairs, config, run_id=matchup.run_id, seed=settings.seed)
    probe_calls, probes = _probes(evidence, judges[0], how)
    health = judge_health(
        judged.calls,
        probe_calls,
        degraded=any(b.degraded for b in breakers.values()),
        degraded_reason="; ".join(judged.degraded_reasons) or None,
    )
    return ScoreResult(
        calls=[*judged.calls, *probe_calls],
        verdicts=[v for v in scored.verdicts if (v.case_id, v.sample) not in done],
        summary=scored.summary,
        probes=probes,
        health=health,
    )


@dataclass(frozen=True, slots=True)
class _Calling:
    """How a stage calls its judges: for which run, with which settings, through one circuit
    breaker per judge (shared by the pairs' calls and the probes'), answered from which cache."""

    run_id: str
    settings: ScoreSettings
    breakers: dict[str, Breaker]
    cache: CallLookup


@dataclass(frozen=True, slots=True)
class _Judged:
    calls: list[JudgeCall]
    degraded_reasons: list[str]


def _judge_all(
    requests: Mapping[str, Sequence[JudgeRequest]], by_name: Mapping[str, Judge], how: _Calling
) -> _Judged:
    """Each judge's requests, in one batch a judge, through that judge's breaker."""
    calls: list[JudgeCall] = []
    degraded_reasons: list[str] = []
    for name, batch in requests.items():
        breaker = how.breakers.setdefault(name, Breaker())
        result = judge_batch(
            by_name[name],
            batch,
            run_id=how.run_id,
            max_in_flight=how.settings.max_in_flight,
            breaker=breaker,
            cache=load_cache(how.cache, by_name[name], batch, refresh=how.settings.refresh),
            timing=CallTiming(deadline_s=how.settings.deadline_s),
        )
        calls.extend(result.calls)
        if result.degraded:
            degraded_reasons.append(f"{name}: {result.degraded_reason}")
    return _Judged(calls, degraded_reasons)


def _probes(
    evidence: Sequence[ReportEvidence], judge: Judge, how: _Calling
) -> tuple[list[JudgeCall], list[BiasProbe]]:
    """The bias probes of the first judge over the batch's usable reports (none when
    ``probe_pairs`` is 0)."""
    if how.settings.probe_pairs <= 0:
        return [], []
    usable = [ev for ev in evidence if ev.report is not None]
    return probe_judge(
        judge,
        [ev.report for ev in usable if ev.report is not None],
        ProbeContext(
            families={ev.agent_version: ev.family for ev in usable},
            quality={(ev.case_id, ev.agent_version): report_quality(ev) for ev in usable},
            run_id=how.run_id,
            settings=how.settings,
            breakers=how.breakers,
            cache=how.cache,
        ),
    )
