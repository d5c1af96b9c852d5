"""The call contract (docs/judges.md#the-call-contract) with in-process scripted judges and an injected clock."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from bughunt.models import CallStatus, JudgeCall, Winner
from judging.judges import (
    DEFAULT_RATIONALE,
    MAX_ATTEMPTS,
    TEMPLATE_VERSION,
    Breaker,
    CacheKey,
    CallTiming,
    ClientError,
    ConnectionFailed,
    JudgeRequest,
    OverBudget,
    RateLimited,
    ServerError,
    backoff_s,
    build_prompt,
    call_judge,
)
from tests.judging.judges.helpers import (
    JUDGE_TIMEOUT,
    FakeClock,
    ScriptedJudge,
    assert_no_failure_carries_a_winner,
    request,
)

GOOD = '{"winner": "first", "rationale": "r"}'


class Rng:
    """Returns the given floats in turn."""

    def __init__(self, *values: float) -> None:
        self.values = list(values)

    def __call__(self) -> float:
        return self.values.pop(0)


def run(
    judge: ScriptedJudge,
    clock: FakeClock | None = None,
    rng: Rng | None = None,
    deadline_s: float = 90.0,
    **kw: object,
) -> JudgeCall:
    clock = clock or judge.clock or FakeClock()
    return call_judge(
        judge,
        request(),
        run_id="r1",
        timing=CallTiming(
            deadline_s=deadline_s, clock=clock, sleep=clock.sleep, rng=rng or Rng(0.5, 0.5, 0.5)
        ),
        **kw,  # type: ignore[arg-type]
    )


def test_a_valid_answer_is_judged_in_one_attempt() -> None:
    """The first valid answer ends the call: judged, one attempt, no sleep."""
    clock = FakeClock()
    judge = ScriptedJudge([GOOD], clock=clock, latency=1.5)
    call = run(judge, clock)
    assert (call.status, call.winner, call.rationale, call.attempts) == (
        CallStatus.JUDGED,
        Winner.FIRST,
        "r",
        1,
    )
    assert call.latency_s == 1.5 and clock.sleeps == []
    assert (call.judge, call.family, call.raw_answer, call.cached) == (
        "scripted",
        "scripted-fam",
        GOOD,
        False,
    )
    assert call.prompt_hash == build_prompt(request()).prompt_hash


def test_backoff_schedule_is_200ms_doubling_with_jitter() -> None:
    """Sleeps are 0.2·j1 then 0.4·j2 with j = 0.9 + 0.2·rng(), and each request gets the time left."""
    clock = FakeClock()
    judge = ScriptedJudge([ServerError("a"), RateLimited("b"), GOOD], clock=clock, latency=1.0)
    call = run(judge, clock, Rng(0.25, 0.75), deadline_s=30.0)
    j1, j2 = 0.9 + 0.2 * 0.25, 0.9 + 0.2 * 0.75
    assert clock.sleeps == [0.2 * j1, 0.4 * j2]
    assert judge.timeouts == pytest.approx(
        [30.0, 30.0 - 1.0 - 0.2 * j1, 30.0 - 2.0 - 0.2 * j1 - 0.4 * j2]
    )
    assert (call.status, call.attempts) == (CallStatus.JUDGED, 3)
    assert call.latency_s == pytest.approx(3.0 + 0.2 * j1 + 0.4 * j2)


@pytest.mark.parametrize("r,low", [(0.0, True), (0.999999, False)])
def test_jitter_stays_within_0_9_and_1_1(r: float, low: bool) -> None:
    """The jitter spans [0.9, 1.1): rng 0 gives 0.9, rng just under 1 stays under 1.1."""
    assert backoff_s(1, lambda: r) == (
        pytest.approx(0.18) if low else pytest.approx(0.22, abs=1e-6)
    )
    assert 0.18 <= backoff_s(1, lambda: r) < 0.22
    assert 0.36 <= backoff_s(2, lambda: r) < 0.44


@pytest.mark.parametrize(
    "error",
    [RateLimited("429"), ServerError("503"), ConnectionFailed("refused"), "not json"],
    ids=["rate-limit", "server-error", "connection", "parse-failure"],
)
def test_retryable_failures_get_three_attempts_then_fail_closed(error: object) -> None:
    """429, 5xx, connection errors and parse failures are retried, then end failed_closed."""
    judge = ScriptedJudge([error, error, error, GOOD])
    call = run(judge)
    assert (call.status, call.attempts, judge.count) == (CallStatus.FAILED_CLOSED, MAX_ATTEMPTS, 3)
    assert call.failure_reason is not None and "failed after 3 attempts" in call.failure_reason
    assert "attempt 3:" in call.failure_reason
    assert_no_failure_carries_a_winner([call])


@pytest.mark.parametrize(
    "step,status",
    [
        (JUDGE_TIMEOUT, CallStatus.TIMED_OUT),
        (ClientError("HTTP 400: bad model"), CallStatus.FAILED_CLOSED),
        (OverBudget("context_length_exceeded"), CallStatus.OVER_BUDGET),
        (RuntimeError("bug in a backend"), CallStatus.FAILED_CLOSED),
    ],
    ids=["timeout", "client-error", "over-budget", "backend-bug"],
)
def test_terminal_failures_are_not_retried(step: object, status: CallStatus) -> None:
    """Timeouts, client errors, oversized input and backend bugs stop after one request."""
    clock = FakeClock()
    judge = ScriptedJudge([step, GOOD], clock=clock)
    call = run(judge, clock)
    assert (call.status, call.attempts, judge.count, clock.sleeps) == (status, 1, 1, [])
    assert_no_failure_carries_a_winner([call])


def test_over_budget_fails_closed_when_the_judge_is_required() -> None:
    """A required judge that cannot take the input fails closed instead of leaving it over_budget."""
    call = run(ScriptedJudge([OverBudget("too long")], required=True))
    assert (call.status, call.attempts) == (CallStatus.FAILED_CLOSED, 1)
    assert call.failure_reason is not None and "required" in call.failure_reason


def test_a_backoff_that_would_reach_the_deadline_is_not_slept() -> None:
    """With too little time left for the backoff, the call stops with the failure, unslept."""
    clock = FakeClock()
    judge = ScriptedJudge([ServerError("503"), GOOD], clock=clock, latency=0.35)
    call = run(judge, clock, Rng(0.5), deadline_s=0.5)
    assert (call.status, call.attempts, judge.count, clock.sleeps) == (
        CallStatus.FAILED_CLOSED,
        1,
        1,
        [],
    )
    assert call.failure_reason is not None and "deadline" in call.failure_reason


def test_the_deadline_is_shared_by_all_attempts() -> None:
    """The second attempt gets only what the first and the backoff left of the deadline."""
    clock = FakeClock()
    judge = ScriptedJudge([ServerError("503"), JUDGE_TIMEOUT], clock=clock, latency=4.0)
    call = run(judge, clock, Rng(0.5), deadline_s=10.0)
    assert judge.timeouts == pytest.approx([10.0, 10.0 - 4.0 - 0.2])
    assert (call.status, call.attempts) == (CallStatus.TIMED_OUT, 2)
    assert clock.now - 1_000.0 <= 10.0 + 4.0  # the backend's own latency is its only overrun


def test_a_missing_rationale_gets_the_default_text() -> None:
    """``{"winner": "tie"}`` is judged, with the fixed default rationale."""
    call = run(ScriptedJudge(['{"winner": "tie"}']))
    assert (call.status, call.winner, call.rationale) == (
        CallStatus.JUDGED,
        Winner.TIE,
        DEFAULT_RATIONALE,
    )


def test_raw_answers_are_truncated() -> None:
    """A huge answer is stored cut to 4000 characters."""
    call = run(ScriptedJudge(['{"winner": "first"}' + " " * 10_000]))
    assert call.status is CallStatus.JUDGED
    assert call.raw_answer is not None and len(call.raw_answer) == 4_000


# --- breaker ---------------------------------------------------------------------


def test_breaker_opens_after_k_consecutive_failures_and_aborts_without_sending() -> None:
    """After K failed calls in a row, later calls end aborted with zero attempts."""
    breaker = Breaker(consecutive=2, failures=10, window=20)
    judge = ScriptedJudge([ClientError("400")] * 2 + [GOOD] * 5)
    calls = [run(judge, breaker=breaker) for _ in range(4)]
    assert [c.status for c in calls] == [CallStatus.FAILED_CLOSED] * 2 + [CallStatus.ABORTED] * 2
    assert [c.attempts for c in calls] == [1, 1, 0, 0]
    assert judge.count == 2
    assert breaker.degraded and breaker.reason is not None
    assert calls[3].failure_reason == f"not sent: {breaker.reason}"
    assert_no_failure_carries_a_winner(calls)


def test_breaker_opens_on_f_failures_among_the_last_w() -> None:
    """F failures in the window open the breaker even when successes interleave."""
    breaker = Breaker(consecutive=10, failures=3, window=5)
    for ok in (False, True, False, True):
        breaker.record(ok)
    assert breaker.allow()
    breaker.record(False)
    assert not breaker.allow()
    assert breaker.reason == "circuit breaker opened after 3 failed judge calls among the last 5"


def test_breaker_window_forgets_old_failures() -> None:
    """Failures that slid out of the window no longer count."""
    breaker = Breaker(consecutive=10, failures=2, window=3)
    for ok in (False, True, True, True, False):
        breaker.record(ok)
    assert breaker.allow()


def test_successes_reset_the_consecutive_count() -> None:
    """A judged call in between restarts the consecutive count."""
    breaker = Breaker(consecutive=2, failures=10, window=20)
    judge = ScriptedJudge([ClientError("x"), GOOD, ClientError("y"), GOOD])
    calls = [run(judge, breaker=breaker) for _ in range(4)]
    assert [c.status for c in calls] == [
        CallStatus.FAILED_CLOSED,
        CallStatus.JUDGED,
        CallStatus.FAILED_CLOSED,
        CallStatus.JUDGED,
    ]
    assert breaker.allow()


def test_over_budget_calls_do_not_trip_the_breaker() -> None:
    """Oversized inputs say nothing about the judge's health."""
    breaker = Breaker(consecutive=1, failures=1, window=1)
    judge = ScriptedJudge([OverBudget("big")] * 3)
    assert all(run(judge, breaker=breaker).status is CallStatus.OVER_BUDGET for _ in range(3))
    assert breaker.allow()


def test_an_open_breaker_stops_retries_of_a_call_in_flight() -> None:
    """A call already failing does not retry once the breaker has opened (by other calls)."""
    breaker = Breaker(consecutive=1, failures=1, window=1)

    class OthersFailMeanwhile(ScriptedJudge):
        def complete(self, system: str, user: str, request: JudgeRequest, timeout_s: float) -> str:
            breaker.record(False)  # another call of the batch failed while this one ran
            return super().complete(system, user, request, timeout_s)

    judge = OthersFailMeanwhile([ServerError("503"), GOOD])
    call = run(judge, breaker=breaker)
    assert (call.status, call.attempts, judge.count) == (CallStatus.FAILED_CLOSED, 1, 1)
    assert call.failure_reason is not None and "circuit breaker" in call.failure_reason


def test_breaker_rejects_nonsense_settings() -> None:
    """K < 1, or F outside [1, W], is refused."""
    for kwargs in ({"consecutive": 0}, {"failures": 0}, {"failures": 5, "window": 4}):
        with pytest.raises(ValueError):
            Breaker(**kwargs)


# --- cache ----------------------------------------------------------------------------


def _cached(
    status: CallStatus = CallStatus.JUDGED, winner: Winner | None = Winner.SECOND
) -> dict[CacheKey, JudgeCall]:
    req = request()
    prompt = build_prompt(req)
    old = JudgeCall(
        call_id="old",
        run_id="r0",
        case_id=req.case_id,
        judge="scripted",
        family="scripted-fam",
        model="scripted-model",
        endpoint="scripted",
        template_version=TEMPLATE_VERSION,
        order=req.order,
        prompt_hash=prompt.prompt_hash,
        attempts=1,
        status=status,
        winner=winner,
        rationale="cached reason" if winner else None,
        raw_answer="raw",
    )
    key = CacheKey(
        "scripted", "scripted-model", "scripted", TEMPLATE_VERSION, prompt.prompt_hash, req.order, 0
    )
    return {key: old}


def test_a_cached_judged_call_answers_without_a_request() -> None:
    """A cache hit copies the verdict, with cached=True and zero attempts, and sends nothing."""
    judge = ScriptedJudge([GOOD])
    call = run(judge, cache=_cached())
    assert judge.count == 0
    assert (call.status, call.winner, call.rationale, call.cached, call.attempts, call.run_id) == (
        CallStatus.JUDGED,
        Winner.SECOND,
        "cached reason",
        True,
        0,
        "r1",
    )
    assert call.call_id != "old"


def test_a_cache_hit_is_served_even_with_the_breaker_open() -> None:
    """The cache costs no request, so an open breaker does not abort it."""
    breaker = Breaker(consecutive=1, failures=1, window=1)
    breaker.record(False)
    assert run(ScriptedJudge([]), cache=_cached(), breaker=breaker).cached


def test_a_cached_entry_without_a_verdict_is_ignored() -> None:
    """An entry that did not end judged never answers: the pair is sent."""
    judge = ScriptedJudge([GOOD])
    call = run(judge, cache=_cached(CallStatus.FAILED_CLOSED, None))
    assert (call.cached, judge.count, call.winner) == (False, 1, Winner.FIRST)


def test_a_different_sample_index_is_a_different_call() -> None:
    """The cache key includes the sample index."""
    judge = ScriptedJudge([GOOD])
    clock = FakeClock()
    call = call_judge(
        judge,
        request(sample_index=1),
        run_id="r",
        cache=_cached(),
        timing=CallTiming(clock=clock, sleep=clock.sleep),
    )
    assert (call.cached, judge.count, call.sample_index) == (False, 1, 1)


def test_deadline_must_be_positive() -> None:
    """A zero or negative deadline is a programming error, refused loudly."""
    with pytest.raises(ValueError):
        run(ScriptedJudge([GOOD]), deadline_s=0)


# --- the invariant --------------------------------------------------------------------

_STEPS = st.sampled_from(
    [
        GOOD,
        '{"winner": "tie"}',
        "prose only",
        '{"winner": "maybe"}',
        RateLimited("429"),
        ServerError("500"),
        ConnectionFailed("down"),
        ClientError("400"),
        OverBudget("big"),
        JUDGE_TIMEOUT,
        ValueError("bug"),
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(_STEPS, min_size=0, max_size=4),
    required=st.booleans(),
    deadline=st.floats(0.1, 5.0),
    latency=st.floats(0.0, 2.0),
)
def test_only_judged_calls_carry_a_winner(
    steps: list[object], required: bool, deadline: float, latency: float
) -> None:
    """Whatever the judge does, a call is judged with a winner or failed with a reason, never both."""
    clock = FakeClock()
    judge = ScriptedJudge(
        list(steps), clock=clock, latency=latency, required=required, fallback="garbage"
    )
    start = clock.now
    call = run(judge, clock, Rng(0.1, 0.9, 0.5), deadline_s=deadline)
    assert_no_failure_carries_a_winner([call])
    assert all(end < start + deadline for end in clock.sleep_ends)  # never slept past it
    assert call.attempts == judge.count <= MAX_ATTEMPTS
    assert all(s >= 0 and clock.now >= 0 for s in clock.sleeps)
    assert call.status is not CallStatus.ABORTED
    if call.status is CallStatus.OVER_BUDGET:
        assert not required


def test_a_backend_returning_no_text_fails_the_call_not_the_batch() -> None:
    """A backend bug that returns None instead of text ends failed_closed after one request."""

    class ReturnsNone(ScriptedJudge):
        def complete(self, system: str, user: str, request: JudgeRequest, timeout_s: float) -> str:
            super().complete(system, user, request, timeout_s)
            return None  # type: ignore[return-value]

    call = run(ReturnsNone([GOOD]))
    assert (call.status, call.attempts, call.raw_answer) == (CallStatus.FAILED_CLOSED, 1, None)
