"""The openai backend under the call contract, against a scripted server on a real socket.

Each test scripts the server's answers and checks both the call's terminal
status and how many requests the server actually received.
"""

from __future__ import annotations

import base64
import json
import socket
import time
from urllib.parse import quote

import pytest

from bughunt.models import CallStatus, JudgeCall, Winner
from judging.judges import Breaker, CallTiming, JudgeConfig, OpenAIJudge, call_judge, judge_batch
from tests.judging.judges.helpers import (
    assert_no_failure_carries_a_winner,
    request,
    requests,
)
from tests.judging.judges.openai_server import (
    OpenAIServer,
    Reply,
    answer,
    error,
    ok,
)
from tests.leaks import assert_no_leak

KEY = "sk-test-SECRET-0123456789"


def config_for(server: OpenAIServer, **kw: object) -> JudgeConfig:
    args: dict[str, object] = {
        "name": "local",
        "backend": "openai",
        "family": "test",
        "model": "m",
        "base_url": server.base_url,
        "api_key_env": "EXAMPLE_API_KEY",
    }
    return JudgeConfig.model_validate({**args, **kw})


def judge_for(server: OpenAIServer, **kw: object) -> OpenAIJudge:
    return OpenAIJudge(config_for(server, **kw), api_key=KEY)


def closed_endpoint(base_url: str) -> JudgeConfig:
    """A judge at ``base_url``, where no answer comes."""
    return JudgeConfig(name="j", backend="openai", family="f", model="m", base_url=base_url)


def call(server: OpenAIServer, deadline_s: float = 20.0, **kw: object) -> JudgeCall:
    result = call_judge(
        judge_for(server, **kw), request(), run_id="r1", timing=CallTiming(deadline_s=deadline_s)
    )
    assert_no_failure_carries_a_winner([result])
    assert_no_leak(KEY, result, "the call's row")
    return result


def test_strict_json_is_judged_in_one_request(server: OpenAIServer) -> None:
    """A strict JSON answer: judged after one request that asked for the answer's JSON schema."""
    server.script(answer("second", "clearer repro"))
    c = call(server)
    assert (c.status, c.winner, c.rationale, c.attempts, server.count) == (
        CallStatus.JUDGED,
        Winner.SECOND,
        "clearer repro",
        1,
        1,
    )
    sent = server.requests[0]
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["user-agent"].startswith("bughunt/")
    assert sent.body["model"] == "m"
    assert [m["role"] for m in sent.body["messages"]] == ["system", "user"]
    schema = sent.body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["winner"]["enum"] == ["first", "second", "tie"]


def test_json_wrapped_in_prose_is_judged(server: OpenAIServer) -> None:
    """An answer with prose around the JSON object is parsed from the first { to the last }."""
    server.script(ok('Sure! Here it is:\n```json\n{"winner": "first", "rationale": "ok"}\n```'))
    c = call(server)
    assert (c.status, c.winner, server.count) == (CallStatus.JUDGED, Winner.FIRST, 1)


def test_non_json_three_times_fails_closed_after_exactly_three_requests(
    server: OpenAIServer,
) -> None:
    """Three unparseable answers: failed_closed, three requests, the last raw answer kept."""
    server.script(ok("I think the first."), ok("Definitely the first one."), ok("first"))
    c = call(server)
    assert (c.status, c.attempts, server.count) == (CallStatus.FAILED_CLOSED, 3, 3)
    assert c.raw_answer == "first"
    assert c.failure_reason is not None and "unparseable answer" in c.failure_reason


def test_a_winner_outside_the_enum_is_never_a_verdict(server: OpenAIServer) -> None:
    """``"winner": "both"`` is a parse failure, retried, then failed_closed, not a tie."""
    server.script(*[ok('{"winner": "both", "rationale": "equal"}')] * 3)
    c = call(server)
    assert (c.status, c.winner, c.attempts, server.count) == (CallStatus.FAILED_CLOSED, None, 3, 3)
    assert c.failure_reason is not None and "not one of" in c.failure_reason


def test_rate_limit_then_success_is_judged_on_the_second_request(server: OpenAIServer) -> None:
    """A 429 is retried after the backoff; the retry's answer counts."""
    server.script(error(429, "slow down", type_="rate_limit_error"), answer("tie"))
    start = time.monotonic()
    c = call(server)
    assert (c.status, c.winner, c.attempts, server.count) == (CallStatus.JUDGED, Winner.TIE, 2, 2)
    assert time.monotonic() - start >= 0.18  # the 200 ms × jitter backoff was slept


def test_server_error_then_success_is_judged_on_the_second_request(server: OpenAIServer) -> None:
    """A 500 is retried; the retry's answer counts."""
    server.script(error(500, "boom", type_="server_error"), answer("first"))
    c = call(server)
    assert (c.status, c.winner, c.attempts, server.count) == (CallStatus.JUDGED, Winner.FIRST, 2, 2)


def test_bad_request_fails_closed_after_one_request(server: OpenAIServer) -> None:
    """A 400 (not about the input's size) is not retried: failed_closed after one request."""
    server.script(error(400, "model 'm' does not exist", code="model_not_found"))
    c = call(server)
    assert (c.status, c.attempts, server.count) == (CallStatus.FAILED_CLOSED, 1, 1)
    assert c.failure_reason is not None and "HTTP 400" in c.failure_reason


def test_a_slow_answer_times_out_and_is_not_retried(server: OpenAIServer) -> None:
    """An answer slower than the deadline: timed_out after one request, at about the deadline."""
    server.script(answer("first", delay_s=10.0))
    start = time.monotonic()
    c = call(server, deadline_s=1.0)
    elapsed = time.monotonic() - start
    assert (c.status, c.attempts, server.count) == (CallStatus.TIMED_OUT, 1, 1)
    assert 0.9 <= elapsed < 3.0
    assert c.latency_s is not None and c.latency_s < 3.0


def test_context_length_exceeded_is_over_budget(server: OpenAIServer) -> None:
    """A 400 with code context_length_exceeded: over_budget after one request."""
    server.script(
        error(
            400,
            "This model's maximum context length is 8192 tokens",
            code="context_length_exceeded",
        )
    )
    c = call(server)
    assert (c.status, c.attempts, server.count) == (CallStatus.OVER_BUDGET, 1, 1)


def test_context_length_exceeded_fails_closed_for_a_required_judge(server: OpenAIServer) -> None:
    """The same 400 for a required judge: failed_closed after one request."""
    server.script(error(400, "too long", code="context_length_exceeded"))
    c = call(server, required=True)
    assert (c.status, c.attempts, server.count) == (CallStatus.FAILED_CLOSED, 1, 1)


def test_breaker_opens_after_k_consecutive_failures_and_nothing_more_is_sent(
    server: OpenAIServer,
) -> None:
    """After K failed calls the server receives no further request; the rest are aborted."""
    server.fallback = error(503, "down", type_="server_error")
    breaker = Breaker(consecutive=2, failures=10, window=20)
    result = judge_batch(
        judge_for(server),
        requests(6),
        run_id="r1",
        max_in_flight=1,
        breaker=breaker,
        timing=CallTiming(
            sleep=lambda _s: None
        ),  # the schedule is tested elsewhere; keep this test quick
    )
    statuses = [c.status for c in result.calls]
    assert statuses == [CallStatus.FAILED_CLOSED] * 2 + [CallStatus.ABORTED] * 4
    assert [c.attempts for c in result.calls] == [3, 3, 0, 0, 0, 0]
    assert server.count == 6
    time.sleep(0.2)
    assert server.count == 6  # and nothing arrives later
    assert result.degraded and result.degraded_reason == breaker.reason
    assert_no_failure_carries_a_winner(result.calls)


def test_connection_refused_is_retried_then_fails_closed() -> None:
    """A judge nobody listens on: connection errors, three attempts, failed_closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens there
    judge = OpenAIJudge(closed_endpoint(f"http://127.0.0.1:{port}/v1"), api_key="k")
    c = call_judge(
        judge, request(), run_id="r", timing=CallTiming(deadline_s=10, sleep=lambda _s: None)
    )
    assert (c.status, c.attempts) == (CallStatus.FAILED_CLOSED, 3)
    assert c.failure_reason is not None and "connection failed" in c.failure_reason


@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
def test_a_connection_dropped_mid_exchange_is_retried_then_fails_closed(reset: bool) -> None:
    """An endpoint that reads each request and then hangs up (a clean close, or a TCP reset):
    a broken exchange, not a timeout and not an answer; three attempts, failed_closed."""
    import struct
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    seen: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _peer = listener.accept()
            except OSError:
                return
            with conn:
                seen.append(len(conn.recv(65536)))
                if reset:
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        judge = OpenAIJudge(closed_endpoint(f"http://127.0.0.1:{port}/v1"), api_key="k")
        c = call_judge(
            judge, request(), run_id="r", timing=CallTiming(deadline_s=10, sleep=lambda _s: None)
        )
    finally:
        listener.close()
    assert (c.status, c.attempts) == (CallStatus.FAILED_CLOSED, 3)
    assert c.failure_reason is not None and "connection failed" in c.failure_reason
    assert len(seen) == 3 and all(n > 0 for n in seen)


def test_a_success_body_that_is_not_json_is_a_retried_server_error(server: OpenAIServer) -> None:
    """A 200 whose body is not JSON is retried like a server error."""
    server.script(Reply(200, "<html>proxy error</html>"), answer("first"))
    c = call(server)
    assert (c.status, c.attempts, server.count) == (CallStatus.JUDGED, 2, 2)


def test_a_completion_without_text_is_a_parse_failure(server: OpenAIServer) -> None:
    """A choice with no content is retried as an unparseable answer."""
    server.script(ok(None), answer("second"))
    c = call(server)
    assert (c.status, c.winner, c.attempts) == (CallStatus.JUDGED, Winner.SECOND, 2)


def test_structured_output_falls_back_to_plain_once_refused(server: OpenAIServer) -> None:
    """A 400 naming response_format is re-sent once without it, and never asked again."""
    server.script(
        error(400, "response_format json_schema is not supported", param="response_format"),
        answer("first"),
        answer("second"),
    )
    judge = judge_for(server)
    first = call_judge(judge, request(), run_id="r", timing=CallTiming(deadline_s=10))
    second = call_judge(judge, request("c2"), run_id="r", timing=CallTiming(deadline_s=10))
    assert (first.status, first.attempts, second.status) == (
        CallStatus.JUDGED,
        1,
        CallStatus.JUDGED,
    )
    assert server.count == 3
    assert ["response_format" in r.body for r in server.requests] == [True, False, False]


def test_structured_on_never_falls_back(server: OpenAIServer) -> None:
    """With structured="on", a refused schema is a plain client error."""
    server.script(error(400, "response_format unsupported", param="response_format"))
    c = call(server, structured="on")
    assert (c.status, server.count) == (CallStatus.FAILED_CLOSED, 1)


def test_the_api_key_never_reaches_the_row(server: OpenAIServer) -> None:
    """A server echoing the key in an error message: the row names the key's variable instead."""
    server.script(error(401, f"invalid key {KEY}", code="invalid_api_key"))
    c = call(server)  # asserts no form of KEY is anywhere in the row
    assert (c.status, server.count) == (CallStatus.FAILED_CLOSED, 1)
    assert c.failure_reason is not None and "[secret:EXAMPLE_API_KEY]" in c.failure_reason
    assert_no_leak(KEY, repr(judge_for(server)))


@pytest.mark.parametrize(
    "echo",
    [
        KEY.upper(),
        quote(KEY, safe=""),
        json.dumps(KEY),
        KEY.encode().hex(),
        base64.b64encode(b"Bearer " + KEY.encode()).decode(),
        base64.urlsafe_b64encode(b"k:" + KEY.encode()).decode(),
    ],
)
def test_an_encoded_key_never_reaches_the_row(server: OpenAIServer, echo: str) -> None:
    """A server echoing the key encoded (case, URL, JSON, hex, base64 at any alignment), in an
    error or in the answer: no form of it reaches the row."""
    server.script(error(400, f"bad auth {echo}", code="invalid_request"))
    c = call(server)
    assert c.failure_reason is not None and "[secret:EXAMPLE_API_KEY]" in c.failure_reason
    server.script(answer("second", f"the key was {echo}"))
    c = call(server)
    assert c.status is CallStatus.JUDGED and "[secret:EXAMPLE_API_KEY]" in (c.rationale or "")


@pytest.mark.parametrize("status", [500, 502, 503])
def test_every_5xx_is_retried(server: OpenAIServer, status: int) -> None:
    """Any 5xx counts as a server error."""
    server.script(error(status, "x", type_="server_error"), answer("first"))
    assert call(server).attempts == 2


def test_the_request_timeout_is_the_time_left(server: OpenAIServer) -> None:
    """After a failed attempt and a backoff, the retry times out at the shared deadline."""
    server.script(error(500, "x", type_="server_error"), answer("first", delay_s=10.0))
    start = time.monotonic()
    c = call(server, deadline_s=1.5)
    assert (c.status, c.attempts, server.count) == (CallStatus.TIMED_OUT, 2, 2)
    assert time.monotonic() - start < 2.5


def test_every_request_asks_for_the_same_prompt(server: OpenAIServer) -> None:
    """Retries resend the identical prompt (what the prompt hash names)."""
    server.script(error(500, "x", type_="server_error"), answer("first"))
    call(server)
    a, b = (json.dumps(r.body["messages"]) for r in server.requests)
    assert a == b


def _with_retry_after(reply: Reply, value: str) -> Reply:
    return Reply(reply.status, reply.body, headers={**reply.headers, "Retry-After": value})


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_waited_before_the_next_request(server: OpenAIServer, status: int) -> None:
    """A 429 or 503 with Retry-After: 1 is asked again only after that second, not after the
    200 ms backoff."""
    server.script(
        _with_retry_after(error(status, "busy", type_="server_error"), "1"), answer("tie")
    )
    start = time.monotonic()
    c = call(server)
    assert (c.status, c.attempts, server.count) == (CallStatus.JUDGED, 2, 2)
    assert server.requests[1].at - server.requests[0].at >= 0.95
    assert time.monotonic() - start >= 1.0


def test_a_retry_after_past_the_deadline_ends_the_call_there(server: OpenAIServer) -> None:
    """A judge asking for 30 s on a call with 3 s left: one request, failed_closed at once (no
    early second request, no wait to the deadline), the reason naming the wait asked for."""
    server.script(_with_retry_after(error(429, "busy", type_="rate_limit_error"), "30"))
    start = time.monotonic()
    c = call(server, deadline_s=3.0)
    assert (c.status, c.attempts, server.count) == (CallStatus.FAILED_CLOSED, 1, 1)
    assert time.monotonic() - start < 2.0
    assert c.failure_reason is not None and "asked to wait 30 s (Retry-After)" in c.failure_reason


def test_a_retry_after_date_is_read_as_seconds_from_now() -> None:
    """Retry-After as an HTTP date is the seconds until then; unreadable or past is the backoff's."""
    from datetime import UTC, datetime

    from judging.judges._http import retry_after_seconds

    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("Tue, 01 Dec 2026 12:00:05 GMT", now) == 5.0
    assert retry_after_seconds("Tue, 01 Dec 2026 11:00:00 GMT", now) == 0.0
    assert retry_after_seconds("2.5", now) == 2.5
    assert retry_after_seconds("soon", now) is None and retry_after_seconds(None, now) is None


def test_calls_in_flight_share_one_pool_of_that_many_connections(server: OpenAIServer) -> None:
    """Eight calls at once through a judge whose pool is four: the server never sees more than
    four requests at a time, and the second wave reuses the first's connections."""
    server.script(*[answer("first", delay_s=0.3)] * 8)
    judge = OpenAIJudge(config_for(server), api_key=KEY, max_connections=4)
    result = judge_batch(judge, requests(8), run_id="r", max_in_flight=8)
    assert [c.status for c in result.calls] == [CallStatus.JUDGED] * 8
    assert server.max_in_flight == 4
    assert len({r.peer for r in server.requests}) == 4


def test_closing_a_judge_closes_its_connections_and_a_later_call_opens_them(
    server: OpenAIServer,
) -> None:
    """close() ends a judge's pooled connections (a score stage closes the judges it built, so
    shard after shard leaves none open); the next call opens a new one."""
    from judging.judges import close_judges

    judge = judge_for(server)
    server.script(answer("first"), answer("second"), answer("tie"))
    assert call_judge(judge, request(), run_id="r").status is CallStatus.JUDGED
    assert call_judge(judge, request("c2"), run_id="r").status is CallStatus.JUDGED
    close_judges([judge])
    assert call_judge(judge, request("c3"), run_id="r").status is CallStatus.JUDGED
    peers = [r.peer for r in server.requests]
    assert peers[0] == peers[1] != peers[2]  # kept alive until closed, then a new connection
    judge.close()
