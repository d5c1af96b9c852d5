"""Small builders shared by the judge tests: reports, requests, a scripted judge, a fake clock."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from bughunt.models import BugReport, CallStatus, JudgeCall, Order
from judging.judges import JudgeError, JudgeRequest, ReportFeatures

JUDGE_TIMEOUT = object()
"""Script marker: the scripted judge raises JudgeTimeout after advancing the clock."""


def report(agent: str = "baseline", **fields: object) -> BugReport:
    base: dict[str, object] = {
        "case_id": "c1",
        "agent_version": agent,
        "title": f"{agent}: clamp returns high for value == low",
        "summary": "clamp compares with > instead of >=.",
        "steps": ["call clamp(0, 0, 10)"],
        "expected": "0",
        "actual": "10",
        "root_cause": "clamp(): `value > low` should be `value >= low`",
        "repro_test": "def test_it():\n    assert clamp(0, 0, 10) == 0\n",
    }
    return BugReport.model_validate({**base, **fields})


def features(r: BugReport, family: str = "fam", quality: float = 0.5) -> ReportFeatures:
    return ReportFeatures(agent_version=r.agent_version, family=family, words=20, quality=quality)


def request(
    case_id: str = "c1",
    *,
    first: BugReport | None = None,
    second: BugReport | None = None,
    order: Order = Order.CANDIDATE_FIRST,
    sample_index: int = 0,
) -> JudgeRequest:
    # The case id is in the titles so that distinct cases have distinct prompts.
    first = first or report("candidate", case_id=case_id, title=f"{case_id}: clamp keeps high")
    second = second or report("baseline", case_id=case_id, title=f"{case_id}: clamp is wrong")
    return JudgeRequest(
        case_id=case_id,
        order=order,
        first=first,
        second=second,
        first_features=features(first),
        second_features=features(second),
        sample_index=sample_index,
    )


def requests(n: int) -> list[JudgeRequest]:
    """``n`` distinct pairs (distinct prompts), cases c0 … c{n-1}."""
    return [request(f"c{i}") for i in range(n)]


@dataclass
class FakeClock:
    """Monotonic seconds that only move when slept on or advanced."""

    now: float = 1_000.0
    sleeps: list[float] = field(default_factory=list)
    sleep_ends: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        self.sleep_ends.append(self.now)


Step = str | JudgeError | Exception | object


@dataclass
class ScriptedJudge:
    """An in-process judge answering from a script; counts its requests.

    Each step is answer text, an exception to raise, or :data:`JUDGE_TIMEOUT`.
    ``latency`` seconds are added to ``clock`` per request when one is given.
    """

    script: list[Step]
    name: str = "scripted"
    family: str = "scripted-fam"
    required: bool = False
    model: str = "scripted-model"
    endpoint: str = "scripted"
    clock: FakeClock | None = None
    latency: float = 0.0
    fallback: Step = '{"winner": "tie"}'
    timeouts: list[float] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def count(self) -> int:
        return len(self.timeouts)

    def complete(
        self,
        system: str,  # noqa: ARG002 - the Judge protocol's signature
        user: str,  # noqa: ARG002 - the Judge protocol's signature
        request: JudgeRequest,  # noqa: ARG002 - the Judge protocol's signature
        timeout_s: float,
    ) -> str:
        with self._lock:
            self.timeouts.append(timeout_s)
            step = self.script.pop(0) if self.script else self.fallback
        if self.clock is not None:
            self.clock.now += self.latency
        if step is JUDGE_TIMEOUT:
            from judging.judges import JudgeTimeout

            if self.clock is not None:
                self.clock.now += timeout_s
            raise JudgeTimeout("scripted timeout")
        if isinstance(step, BaseException):
            raise step
        assert isinstance(step, str)
        return step


def assert_no_failure_carries_a_winner(calls: Iterable[JudgeCall]) -> None:
    """A call that did not end judged carries neither a winner (nor a tie) nor a rationale."""
    for call in calls:
        if call.status is CallStatus.JUDGED:
            assert call.winner is not None
        else:
            assert call.winner is None, call
            assert call.rationale is None, call
            assert call.failure_reason, call
