"""Batches (bounded concurrency, order, one breaker) and the ledger cache, over real sockets."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bughunt.models import CallStatus, JudgeCall, Order, Winner
from judging.judges import (
    CallTiming,
    JudgeConfig,
    JudgeRequest,
    OpenAIJudge,
    cache_key,
    judge_batch,
    load_cache,
)
from ledger import Ledger
from tasks.score.judge_cache import ledger_lookup
from tests.judging.judges.helpers import (
    ScriptedJudge,
    assert_no_failure_carries_a_winner,
    request,
    requests,
)
from tests.judging.judges.openai_server import OpenAIServer, Reply, Seen, answer, error


def judge_for(server: OpenAIServer) -> OpenAIJudge:
    config = JudgeConfig(
        name="local", backend="openai", family="test", model="m", base_url=server.base_url
    )
    return OpenAIJudge(config, api_key="k")


def test_concurrency_is_bounded_by_max_in_flight(server: OpenAIServer) -> None:
    """Twelve slow calls with max_in_flight=3 never have more than three requests open."""
    server.fallback = answer("first", delay_s=0.15)
    result = judge_batch(judge_for(server), requests(12), run_id="r", max_in_flight=3)
    assert server.count == 12
    assert 2 <= server.max_in_flight <= 3
    assert all(c.status is CallStatus.JUDGED for c in result.calls)
    assert not result.degraded


def test_results_come_back_in_request_order(server: OpenAIServer) -> None:
    """Whatever order answers arrive in, row i belongs to request i."""

    def reply(seen: Seen) -> Reply:
        user = seen.body["messages"][1]["content"]
        slow = "SLOW" in user
        return answer("first" if slow else "second", delay_s=0.3 if slow else 0.0)

    server.fallback = reply
    reqs = [request(f"c{i}") for i in range(4)]
    reqs[0] = request("c0", first=reqs[0].first.model_copy(update={"title": "SLOW"}))
    result = judge_batch(judge_for(server), reqs, run_id="r", max_in_flight=4)
    assert [c.case_id for c in result.calls] == ["c0", "c1", "c2", "c3"]
    assert [c.winner for c in result.calls] == [Winner.FIRST] + [Winner.SECOND] * 3


def test_an_empty_batch_sends_nothing() -> None:
    """No requests, no calls, not degraded."""
    result = judge_batch(ScriptedJudge([]), [], run_id="r")
    assert result.calls == [] and not result.degraded


def test_one_breaker_is_shared_by_concurrent_calls(server: OpenAIServer) -> None:
    """With the judge down, concurrent calls open the breaker and most of the batch is not sent."""
    server.fallback = error(400, "bad model")
    result = judge_batch(judge_for(server), requests(40), run_id="r", max_in_flight=4)
    assert result.degraded
    assert result.count(CallStatus.ABORTED) >= 40 - 5 - 4  # K=5 failures, ≤ 4 already in flight
    assert server.count == 40 - result.count(CallStatus.ABORTED)
    assert_no_failure_carries_a_winner(result.calls)


def test_a_rerun_with_unchanged_pairs_sends_no_request(
    server: OpenAIServer, ledger: Ledger
) -> None:
    """Judged calls written to the ledger answer the next run; failed ones are sent again."""
    server.script(answer("first"), error(400, "nope"), answer("second"))
    reqs = requests(3)
    judge = judge_for(server)
    first = judge_batch(judge, reqs, run_id="night-1", max_in_flight=1)
    assert [c.status for c in first.calls] == [
        CallStatus.JUDGED,
        CallStatus.FAILED_CLOSED,
        CallStatus.JUDGED,
    ]
    ledger.write(first.calls)

    server.script(answer("tie"))
    cache = load_cache(ledger_lookup(ledger), judge, reqs)
    assert len(cache) == 2
    second = judge_batch(judge, reqs, run_id="night-2", max_in_flight=1, cache=cache)
    assert server.count == 4  # only the failed pair was sent again
    assert [(c.cached, c.attempts, c.winner) for c in second.calls] == [
        (True, 0, Winner.FIRST),
        (False, 1, Winner.TIE),
        (True, 0, Winner.SECOND),
    ]
    assert {c.run_id for c in second.calls} == {"night-2"}
    ledger.write(second.calls)
    rows = ledger.query("SELECT run_id, cached, attempts FROM judge_calls ORDER BY created_at")
    assert len(rows) == 6


def test_refresh_judge_bypasses_the_cache(server: OpenAIServer, ledger: Ledger) -> None:
    """``--refresh-judge`` (refresh=True) sends every pair again."""
    reqs = requests(2)
    server.script(answer("first"), answer("first"))
    judge = judge_for(server)
    ledger.write(judge_batch(judge, reqs, run_id="n1").calls)
    assert load_cache(ledger_lookup(ledger), judge, reqs, refresh=True) == {}
    server.script(answer("second"), answer("second"))
    again = judge_batch(judge, reqs, run_id="n2", cache={})
    assert server.count == 4 and not any(c.cached for c in again.calls)


def test_cache_key_separates_judge_order_and_sample(ledger: Ledger) -> None:
    """A cached call answers only the same judge, order and sample index."""
    req = request()
    judge = ScriptedJudge(['{"winner": "first"}'])
    judged = judge_batch(judge, [req], run_id="n1").calls
    ledger.write(judged)
    other_order = req.model_copy(update={"order": Order.BASELINE_FIRST})
    other_sample = req.model_copy(update={"sample_index": 1})
    keys = [
        cache_key(judge, req),
        cache_key(ScriptedJudge([], name="other-judge"), req),
        cache_key(judge, other_order),
        cache_key(judge, other_sample),
    ]
    lookup = ledger_lookup(ledger)
    assert lookup is not None
    found = lookup(set(keys))
    assert list(found) == [keys[0]]


def test_the_cache_lookup_is_one_query(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    """Looking up many keys opens the ledger once."""
    reqs = requests(30)
    judge = ScriptedJudge([])
    ledger.write(judge_batch(judge, reqs, run_id="n1").calls)
    reads: list[Path] = []
    original = Ledger.reader

    def counting(self: Ledger) -> Any:
        reads.append(self.path)
        return original(self)

    monkeypatch.setattr(Ledger, "reader", counting)
    found = load_cache(ledger_lookup(ledger), judge, reqs)
    assert len(found) == 30 and len(reads) == 1


def test_no_ledger_file_means_no_cache(tmp_path: Path) -> None:
    """A first night (no ledger file yet) has nothing cached and creates no file."""
    store = Ledger(tmp_path / "none.duckdb")
    assert load_cache(ledger_lookup(store), ScriptedJudge([]), requests(2)) == {}
    assert not store.path.exists()


def test_failed_calls_round_trip_through_the_ledger(ledger: Ledger, server: OpenAIServer) -> None:
    """Every call is a row, failures included, with status, reason, attempts and latency."""
    server.script(error(400, "bad"), answer("first", delay_s=5.0))
    judge = judge_for(server)
    calls = [
        judge_batch(judge, [request("a")], run_id="n").calls[0],
        judge_batch(judge, [request("b")], run_id="n", timing=CallTiming(deadline_s=0.5)).calls[0],
    ]
    ledger.write(calls)
    back = ledger.read(JudgeCall, "ORDER BY case_id")
    assert [(c.status, c.attempts, c.winner) for c in back] == [
        (CallStatus.FAILED_CLOSED, 1, None),
        (CallStatus.TIMED_OUT, 1, None),
    ]
    assert all(c.failure_reason and c.latency_s is not None for c in back)
    assert json.loads(back[0].model_dump_json())["family"] == "test"


def test_batch_uses_threads_only_up_to_the_bound() -> None:
    """A scripted judge sees at most max_in_flight concurrent calls."""
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    class Slow(ScriptedJudge):
        def complete(self, system: str, user: str, request: JudgeRequest, timeout_s: float) -> str:
            with lock:
                state["now"] += 1
                state["max"] = max(state["max"], state["now"])
            time.sleep(0.02)
            with lock:
                state["now"] -= 1
            return super().complete(system, user, request, timeout_s)

    judge_batch(Slow([]), requests(20), run_id="r", max_in_flight=2)
    assert state["max"] <= 2
