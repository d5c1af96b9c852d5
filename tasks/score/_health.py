"""How the judge fared in one run: its calls counted once, per purpose and in all.

A run's judge calls serve two purposes: the **verdict calls** on the run's
candidate/baseline pairs (the verdicts rest on them) and the **bias-probe
calls** that measure the judge. Every count of calls is made here, by
:func:`call_counts`, so the report, ``summary.json`` and the CLI can only
show the same numbers (docs/report.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from bughunt.models import JudgeCall


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class CallCounts(_Out):
    """Judge calls of one purpose (or all of them), by what became of each."""

    calls: int
    """Call records, failed and cached ones included."""
    by_status: dict[str, int]
    """Calls by terminal status (judged, timed_out, failed_closed, over_budget, aborted)."""
    sent: int
    """Calls that reached the judge: not from the cache, at least one attempt."""
    cache_hits: int
    """Calls answered from the cache (no request)."""
    requests: int
    """Requests (or command runs) over all attempts."""


def call_counts(calls: Iterable[JudgeCall]) -> CallCounts:
    """The counts of ``calls`` (any purpose); statuses in key order, zeros left out."""
    listed = list(calls)
    statuses: dict[str, int] = {}
    for call in listed:
        statuses[call.status.value] = statuses.get(call.status.value, 0) + 1
    return CallCounts(
        calls=len(listed),
        by_status=dict(sorted(statuses.items())),
        sent=sum(1 for c in listed if not c.cached and c.attempts > 0),
        cache_hits=sum(1 for c in listed if c.cached),
        requests=sum(c.attempts for c in listed),
    )


class JudgeHealth(_Out):
    """How the judge fared this run.

    The four totals count **every** call, verdict and bias-probe alike;
    ``verdict_calls`` and ``probe_calls`` split them by purpose (the totals are
    their sums).
    """

    calls_by_status: dict[str, int]
    """All judge calls (verdict and bias-probe) by terminal status (judged, timed_out,
    failed_closed, over_budget, aborted)."""
    cache_hits: int
    """All calls answered from the cache (no request)."""
    calls_sent: int
    """All calls that reached the judge."""
    requests: int
    """Requests (or command runs) over all attempts of all calls."""
    degraded: bool
    """A circuit breaker opened: the rest of that judge's calls were aborted."""
    degraded_reason: str | None
    """What opened it."""
    verdict_calls: CallCounts | None = None
    """The calls on the run's candidate/baseline pairs, which the verdicts rest on
    (``None`` in a summary stored before calls were counted per purpose)."""
    probe_calls: CallCounts | None = None
    """The bias probes' calls (``None`` in a summary stored before calls were counted
    per purpose)."""

    def all_calls(self) -> CallCounts:
        """The totals as one :class:`CallCounts` (verdict and bias-probe calls together)."""
        return CallCounts(
            calls=sum(self.calls_by_status.values()),
            by_status=self.calls_by_status,
            sent=self.calls_sent,
            cache_hits=self.cache_hits,
            requests=self.requests,
        )


def judge_health(
    verdict_calls: Sequence[JudgeCall],
    probe_calls: Sequence[JudgeCall],
    *,
    degraded: bool,
    degraded_reason: str | None,
) -> JudgeHealth:
    """The health of one run's judging: every count from :func:`call_counts`."""
    total = call_counts([*verdict_calls, *probe_calls])
    return JudgeHealth(
        calls_by_status=total.by_status,
        cache_hits=total.cache_hits,
        calls_sent=total.sent,
        requests=total.requests,
        degraded=degraded,
        degraded_reason=degraded_reason,
        verdict_calls=call_counts(verdict_calls),
        probe_calls=call_counts(probe_calls),
    )
