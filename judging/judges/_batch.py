"""Judge a batch of ordered pairs with bounded concurrency (docs/architecture.md#the-stages, docs/judges.md#the-call-contract).

A stage works on a whole batch, never one task per call. Calls run on a
thread pool of at most ``max_in_flight`` workers (no unbounded fan-out), all
under one :class:`Breaker`, so once the judge is seen to be down the calls
not yet sent end ``aborted`` instead of queueing up against it. Results come
back in request order. Nothing is written here: the flow writes the rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from bughunt.models import CallStatus, JudgeCall
from judging.judges._breaker import Breaker
from judging.judges._cache import CacheKey
from judging.judges._config import DEFAULT_MAX_IN_FLIGHT
from judging.judges._contract import CallTiming, call_judge
from judging.judges._prompt import build_prompt
from judging.judges._protocol import Judge, JudgeRequest


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One judge's calls on a batch, in request order, and whether the run is degraded."""

    calls: list[JudgeCall]
    """One ledger row per request, failures included, in request order."""
    degraded: bool
    """The breaker opened: some calls were not sent (``aborted``)."""
    degraded_reason: str | None
    """Why the breaker opened, in plain words."""

    def count(self, status: CallStatus) -> int:
        """Calls that ended with ``status``."""
        return sum(1 for c in self.calls if c.status is status)


def judge_batch(
    judge: Judge,
    requests: Sequence[JudgeRequest],
    *,
    run_id: str,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    timing: CallTiming | None = None,
    breaker: Breaker | None = None,
    cache: Mapping[CacheKey, JudgeCall] | None = None,
) -> BatchResult:
    """Call ``judge`` on every request under the call contract; one row per request.

    ``timing`` is each call's (:class:`~judging.judges.CallTiming`). ``breaker`` defaults to a fresh one shared by this batch; pass one to
    share it across batches of the same run. ``cache`` (see
    :func:`~judging.judges.load_cache`) answers unchanged pairs without a
    request. Never raises for a judge failure.
    """
    if max_in_flight < 1:
        raise ValueError("max_in_flight must be at least 1")
    breaker = breaker if breaker is not None else Breaker()
    if not requests:
        return BatchResult([], breaker.degraded, breaker.reason)

    def one(request: JudgeRequest) -> JudgeCall:
        return call_judge(
            judge,
            request,
            run_id=run_id,
            timing=timing,
            breaker=breaker,
            cache=cache,
            prompt=build_prompt(request),
        )

    workers = min(max_in_flight, len(requests))
    if workers == 1:
        calls = [one(r) for r in requests]
    else:
        with ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix=f"judge-{judge.name}"
        ) as pool:
            calls = list(pool.map(one, requests))
    return BatchResult(calls, breaker.degraded, breaker.reason)
