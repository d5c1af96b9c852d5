"""``--judge-cache-ttl``: a cached judge answer older than the time to live is not reused
(the score stage over the demo's recorded reports, the simulated judge, a real ledger file)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bughunt.models import JudgeCall, Strategy, utcnow
from judging.judges import SimJudge
from ledger import Ledger
from tasks.score import Matchup, ScoreResult, ScoreSettings, score_stage
from tasks.score.judge_cache import cache_cutoff, cached_calls
from tests.tasks.score.test_score_stage import cache_in, evidence

DAY = 86_400.0


def run(ledger: Ledger, ttl_s: float | None) -> ScoreResult:
    return score_stage(
        evidence(),
        Matchup("r", "baseline", "candidate"),
        categories={},
        judges=[SimJudge(name="sim", family="sim")],
        settings=ScoreSettings(strategy=Strategy.SWAP, probe_pairs=0, cache_ttl_s=ttl_s),
        cached=cache_in(ledger, ttl_s),
    )


def aged(calls: list[JudgeCall], days: float) -> list[JudgeCall]:
    return [c.model_copy(update={"created_at": utcnow() - timedelta(days=days)}) for c in calls]


def test_answers_older_than_the_ttl_are_sent_again(ledger: Ledger) -> None:
    """Answers 10 days old: reused under a 30-day time to live, and under none; sent again,
    every one, under a 7-day one."""
    first = run(ledger, None)
    assert first.calls and first.health.cache_hits == 0
    ledger.write(aged(first.calls, 10))
    month = run(ledger, 30 * DAY)
    assert month.health.requests == 0 and month.health.cache_hits == len(first.calls)
    assert run(ledger, None).health.cache_hits == len(first.calls)
    week = run(ledger, 7 * DAY)
    assert week.health.cache_hits == 0 and week.health.requests == len(first.calls)


def test_the_flow_s_cache_read_leaves_out_answers_recorded_before_the_cutoff(
    ledger: Ledger,
) -> None:
    """What the flow hands a score stage (``cached_calls``) holds no answer older than the
    cutoff: the 10-day-old answers are there for 30 days, gone for 7."""
    calls = run(ledger, None).calls
    ledger.write(aged(calls, 10))
    cases = sorted({c.case_id for c in calls})

    def held(ttl_s: float | None) -> int:
        found = cached_calls(ledger, ["sim"], cases, probes=False, not_before=cache_cutoff(ttl_s))
        return sum(len(v) for v in found.values())

    assert held(None) == held(30 * DAY) == len(calls)
    assert held(7 * DAY) == 0


def test_the_cutoff_is_now_less_the_ttl() -> None:
    """No time to live, no cutoff; else now less the time to live."""
    now = datetime(2026, 12, 1, tzinfo=UTC)
    assert cache_cutoff(None, now) is None
    assert cache_cutoff(DAY / 2, now) == datetime(2026, 11, 30, 12, tzinfo=UTC)


def test_the_ttl_is_not_part_of_the_stage_s_identity() -> None:
    """A run resumed with another time to live finds its finished score stages: the TTL says
    which answers a stage still to run may reuse, not what a finished one computed."""
    assert ScoreSettings(cache_ttl_s=7 * DAY).model_dump() == ScoreSettings().model_dump()
