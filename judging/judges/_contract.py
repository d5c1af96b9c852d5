"""One judge call under the gate contract (docs/judges.md#the-call-contract).

The contract keeps "the judge said no" apart from "the judge could not
answer". Every call ends in exactly one terminal status, and only
``judged`` carries a winner:

============================  ===========  =========================================
what happened                 retried?     terminal status
============================  ===========  =========================================
valid answer                  —            ``judged``
unparseable answer            yes          ``failed_closed`` once out of attempts
rate limit (429)              yes          ``failed_closed`` once out of attempts
server error (5xx)            yes          ``failed_closed`` once out of attempts
connection error              yes          ``failed_closed`` once out of attempts
timeout                       no           ``timed_out``
client error (400, 401, ...)  no           ``failed_closed``
input over the judge budget   no           ``over_budget`` (``failed_closed`` if required)
backend bug (any other error) no           ``failed_closed``
breaker open before sending   —            ``aborted`` (0 attempts)
============================  ===========  =========================================

At most :data:`MAX_ATTEMPTS` requests share one deadline. The first is sent
at once; before retry *n* (attempt *n + 1*) the call sleeps
``0.2 s × 2^(n−1) × jitter``, jitter in [0.9, 1.1): 0.2 s then 0.4 s. A
backoff that would reach the deadline is not slept: the call stops there with
the last failure. A judge that answers 429 or 503 with ``Retry-After`` is
left alone at least that long (and the call stops instead when that would
pass the deadline). Retryable failures that run out of attempts or time end
``failed_closed``, not ``timed_out``: the judge did answer, just not usefully,
and the reason names each attempt's failure. Each request gets the time left
to the deadline as its own timeout.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bughunt.models import CallStatus, JudgeCall, utcnow
from judging.judges._answer import JudgeAnswer, ParseFailure, parse_answer, truncate
from judging.judges._breaker import Breaker
from judging.judges._cache import CacheKey, prompt_key, usable
from judging.judges._prompt import TEMPLATE_VERSION, Prompt, build_prompt
from judging.judges._protocol import (
    ClientError,
    ConnectionFailed,
    Judge,
    JudgeError,
    JudgeRequest,
    JudgeTimeout,
    OverBudget,
    RateLimited,
    ServerError,
)

MAX_ATTEMPTS = 3
"""Requests one call may send."""
DEFAULT_DEADLINE_S = 90.0
"""Seconds one call may take over all its attempts and backoffs."""
BACKOFF_BASE_S = 0.2
"""Backoff before the first retry, before jitter."""
_REASON_LIMIT = 1_000

Clock = Callable[[], float]
Sleep = Callable[[float], None]
Rng = Callable[[], float]


@dataclass(frozen=True, slots=True)
class CallTiming:
    """How long one call may take and how it keeps time (inject the last three to test the
    schedule)."""

    deadline_s: float = DEFAULT_DEADLINE_S
    """Seconds the call may take over all its attempts and backoffs."""
    clock: Clock = time.monotonic
    """Monotonic seconds."""
    sleep: Sleep = time.sleep
    """Waits so many seconds."""
    rng: Rng = random.random
    """Floats in [0, 1) for the backoff's jitter."""


_RETRIED: dict[type[JudgeError], str] = {
    RateLimited: "rate limited",
    ServerError: "server error",
    ConnectionFailed: "connection failed",
}


def backoff_s(retry: int, rng: Rng) -> float:
    """Seconds to wait before retry ``retry`` (1-based): 0.2 × 2^(retry−1) × [0.9, 1.1)."""
    return BACKOFF_BASE_S * float(2 ** (retry - 1)) * (0.9 + 0.2 * rng())


@dataclass(slots=True)
class _Outcome:
    status: CallStatus
    reason: str | None = None
    answer: JudgeAnswer | None = None
    judge_failed: bool = False
    """Counts as a failure for the breaker (the judge's fault, not the input's)."""


def _failure_text(attempt_reasons: list[str], stop: str) -> str:
    if not attempt_reasons:
        return stop
    if len(attempt_reasons) == 1:
        text = f"{attempt_reasons[0]}; {stop}"
    else:
        listed = "; ".join(f"attempt {i}: {r}" for i, r in enumerate(attempt_reasons, 1))
        text = f"{stop}: {listed}"
    return truncate(text, _REASON_LIMIT) or text


def _stop(
    status: CallStatus, reasons: list[str], stop: str, *, judge_failed: bool = False
) -> _Outcome:
    return _Outcome(status, _failure_text(reasons, stop), judge_failed=judge_failed)


def call_judge(
    judge: Judge,
    request: JudgeRequest,
    *,
    run_id: str,
    timing: CallTiming | None = None,
    breaker: Breaker | None = None,
    cache: Mapping[CacheKey, JudgeCall] | None = None,
    prompt: Prompt | None = None,
) -> JudgeCall:
    """Judge one ordered pair and return its ledger row; never raises for a judge failure.

    ``timing`` holds the call's deadline (default :data:`DEFAULT_DEADLINE_S`), its clock,
    its sleep and the jitter's random numbers (inject them to test the schedule). A usable
    entry in ``cache`` under the call's key (judge, model, endpoint, template,
    prompt, order, sample) answers without a request (``cached``, 0 attempts);
    an open ``breaker`` ends the call ``aborted`` without a request.
    """
    timing = timing or CallTiming()
    if not timing.deadline_s > 0:
        raise ValueError(f"deadline_s must be positive, not {timing.deadline_s!r}")
    prompt = prompt or build_prompt(request)
    key = prompt_key(judge, prompt, request)

    def row(**fields: object) -> JudgeCall:
        base: dict[str, object] = {
            "call_id": uuid.uuid4().hex,
            "run_id": run_id,
            "case_id": request.case_id,
            "judge": judge.name,
            "family": judge.family,
            "model": key.model,
            "endpoint": key.endpoint,
            "template_version": TEMPLATE_VERSION,
            "order": request.order,
            "sample_index": request.sample_index,
            "agent_sample": request.agent_sample,
            "prompt_hash": prompt.prompt_hash,
        }
        return JudgeCall.model_validate({**base, **fields})

    hit = cache.get(key) if cache is not None else None
    if hit is not None and usable(hit):
        return row(
            attempts=0,
            status=CallStatus.JUDGED,
            winner=hit.winner,
            rationale=hit.rationale,
            latency_s=0.0,
            raw_answer=hit.raw_answer,
            cached=True,
        )
    if breaker is not None and not breaker.allow():
        return row(
            attempts=0,
            status=CallStatus.ABORTED,
            failure_reason=f"not sent: {breaker.reason}",
        )

    start = timing.clock()
    attempts, raw, result = _attempt_loop(judge, prompt, request, timing, start, breaker)
    if breaker is not None:
        if result.status is CallStatus.JUDGED:
            breaker.record(True)
        elif result.judge_failed:
            breaker.record(False)
    answer = result.answer
    return row(
        attempts=attempts,
        status=result.status,
        winner=answer.winner if answer is not None else None,
        rationale=answer.rationale if answer is not None else None,
        failure_reason=result.reason,
        latency_s=max(0.0, timing.clock() - start),
        raw_answer=truncate(raw),
        created_at=utcnow(),
    )


def _on_error(exc: Exception, judge: Judge, attempt: int, reasons: list[str]) -> _Outcome | None:
    """Note why a request failed; the outcome that ends the call, or None to retry."""
    if isinstance(exc, JudgeTimeout):
        reasons.append(f"timed out ({exc.detail})")
        stop = f"not retried: no answer before the deadline (attempt {attempt})"
        return _stop(CallStatus.TIMED_OUT, reasons, stop, judge_failed=True)
    if isinstance(exc, OverBudget):
        reasons.append(f"input over the judge's budget ({exc.detail})")
        if judge.required:
            stop = "not retried; the judge is required, so the call fails closed"
            return _stop(CallStatus.FAILED_CLOSED, reasons, stop)
        stop = "not retried; the pair is left for a person"
        return _stop(CallStatus.OVER_BUDGET, reasons, stop)
    if isinstance(exc, ClientError):
        reasons.append(f"request refused ({exc.detail})")
        stop = "not retried: a client error gives the same answer every time"
        return _stop(CallStatus.FAILED_CLOSED, reasons, stop, judge_failed=True)
    if isinstance(exc, JudgeError):
        label = next((t for cls, t in _RETRIED.items() if isinstance(exc, cls)), "judge error")
        reasons.append(f"{label} ({exc.detail})")
        return None
    reasons.append(f"judge backend raised {type(exc).__name__}: {exc}")
    stop = "not retried: unexpected error in the judge backend"
    return _stop(CallStatus.FAILED_CLOSED, reasons, stop, judge_failed=True)


def _on_answer(raw: object, reasons: list[str]) -> tuple[str | None, _Outcome | None]:
    """The raw answer to keep (None if not text) and the call's outcome, or None to retry."""
    if not isinstance(raw, str):  # a backend bug: fail the call, not the batch
        reasons.append(f"judge backend returned {type(raw).__name__}, not text")
        stop = "not retried: unexpected answer type from the judge backend"
        return None, _stop(CallStatus.FAILED_CLOSED, reasons, stop, judge_failed=True)
    parsed = parse_answer(raw)
    if not isinstance(parsed, ParseFailure):
        return raw, _Outcome(CallStatus.JUDGED, answer=parsed)
    reasons.append(f"unparseable answer: {parsed.reason}")
    return raw, None


def _backoff_or_stop(
    attempt: int,
    deadline: float,
    clock: Clock,
    rng: Rng,
    breaker: Breaker | None,
    reasons: list[str],
    retry_after_s: float | None = None,
) -> float | _Outcome:
    """Seconds to sleep before the next attempt, or the outcome that ends the call instead.

    A judge that asked for a pause (``retry_after_s``, from HTTP ``Retry-After``)
    gets at least that long; when the pause would pass the deadline the call
    stops there rather than ask again early.
    """
    if attempt >= MAX_ATTEMPTS:
        stop = f"failed after {attempt} attempts"
        return _stop(CallStatus.FAILED_CLOSED, reasons, stop, judge_failed=True)
    delay = backoff_s(attempt, rng)
    if retry_after_s is not None and retry_after_s > delay:
        delay = retry_after_s
        if clock() + delay >= deadline:
            stop = (
                f"stopped after {attempt} attempt(s): the judge asked to wait {retry_after_s:g} s "
                "(Retry-After), past the deadline"
            )
            return _stop(CallStatus.FAILED_CLOSED, reasons, stop, judge_failed=True)
    if clock() + delay >= deadline:
        stop = f"stopped after {attempt} attempt(s): the backoff would reach the deadline"
        return _stop(CallStatus.FAILED_CLOSED, reasons, stop, judge_failed=True)
    if breaker is not None and not breaker.allow():
        stop = f"not retried after {attempt} attempt(s): {breaker.reason}"
        return _stop(CallStatus.FAILED_CLOSED, reasons, stop, judge_failed=True)
    return delay


def _attempt_loop(
    judge: Judge,
    prompt: Prompt,
    request: JudgeRequest,
    timing: CallTiming,
    start: float,
    breaker: Breaker | None,
) -> tuple[int, str | None, _Outcome]:
    """Send up to MAX_ATTEMPTS requests from ``start`` (on ``timing``'s clock) until its
    deadline; return (attempts, last raw answer, outcome)."""
    clock, deadline = timing.clock, start + timing.deadline_s
    reasons: list[str] = []
    raw: str | None = None
    attempt = 0
    while True:
        attempt += 1
        remaining = deadline - clock()
        if remaining <= 0:  # only reachable if a backend overran its timeout
            stop = "no time left before the deadline for another attempt"
            return (
                attempt - 1,
                raw,
                _stop(CallStatus.FAILED_CLOSED, reasons, stop, judge_failed=True),
            )
        # A failed request keeps the raw answer of the one before it.
        retry_after: float | None = None
        try:
            answer = judge.complete(prompt.system, prompt.user, request, remaining)
        except Exception as exc:  # a backend bug must fail the call, never the batch
            outcome = _on_error(exc, judge, attempt, reasons)
            retry_after = exc.retry_after_s if isinstance(exc, JudgeError) else None
        else:
            raw, outcome = _on_answer(answer, reasons)
        if outcome is not None:
            return attempt, raw, outcome

        # A retryable failure: retry if attempts, time and the breaker allow.
        step = _backoff_or_stop(attempt, deadline, clock, timing.rng, breaker, reasons, retry_after)
        if isinstance(step, _Outcome):
            return attempt, raw, step
        timing.sleep(step)
