"""The gateway's budget holds: requests in flight, streams and cancelled requests are counted.

The gateway's own code (the ``gateway`` package) runs here on the host: its
execution listener is a real Unix socket in a temporary folder, and its
upstream a real HTTP server on 127.0.0.1 speaking the OpenAI protocol
(JSON and event-stream chat completions), which this module starts. Nothing
else is contacted.
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gateway.budget import DEFAULT_ANSWER_TOKENS, Budget, counted_usage, prepared
from gateway.gateway import REFUSED_LOGGED, Gateway
from tasks.sandbox.engine._gateway import gateway_files

PROMPT_TOKENS = 10


@dataclass
class Upstream:
    """What the scripted upstream saw and how it behaves."""

    url: str = ""
    bodies: list[dict[str, Any]] = field(default_factory=list)
    delay_s: float = 0.0
    usage_on_streams: bool = True
    """Whether a stream asking for it gets a usage chunk (some servers never send one)."""
    hold: threading.Event = field(default_factory=threading.Event)
    """Set to let held requests (path ``.../hold``) answer."""
    got_held: threading.Event = field(default_factory=threading.Event)
    client_left: threading.Event = field(default_factory=threading.Event)


def _handler(state: Upstream) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: ARG002 - http.server's signature: silence its log
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            state.bodies.append(body)
            if self.path.endswith("/hold"):
                state.got_held.set()
                # Wait for the gateway to cut the connection (or the test to let it go).
                self.connection.settimeout(0.05)
                while not state.hold.is_set():
                    try:
                        if self.connection.recv(1) == b"":
                            state.client_left.set()
                            return
                    except TimeoutError:
                        continue
                    except OSError:
                        state.client_left.set()
                        return
            time.sleep(state.delay_s)
            # An upstream that honours the answer limit, and answers long without one.
            answer = min(body.get("max_tokens") or 1000, 1000)
            usage = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": answer}
            if body.get("stream"):
                words = ["word"] * 20
                events: list[dict[str, Any]] = [
                    {"model": "m", "choices": [{"index": 0, "delta": {"content": w + " "}}]}
                    for w in words
                ]
                asked = (body.get("stream_options") or {}).get("include_usage")
                if asked and state.usage_on_streams:
                    events.append({"model": "m", "choices": [], "usage": usage})
                data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
                data += b"data: [DONE]\n\n"
                kind = "text/event-stream"
            else:
                data = json.dumps(
                    {
                        "model": "m",
                        "choices": [{"index": 0, "message": {"content": "ok"}}],
                        "usage": usage,
                    }
                ).encode()
                kind = "application/json"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    state = Upstream()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.hold.set()
        server.shutdown()
        server.server_close()


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("gateway", timeout=30)
        self._path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(self._path)


def _post(folder: Path, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
    connection = _UnixConnection(folder / "model.sock")
    try:
        data = json.dumps(body).encode()
        connection.request("POST", path, body=data, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _chat(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], **extra}


@pytest.fixture
def gateway_for(upstream: Upstream, tmp_path: Path) -> Iterator[Any]:
    made: list[tuple[Gateway, str]] = []

    def make(**config: Any) -> tuple[Gateway, Path]:
        gateway = Gateway({"model": upstream.url, **config}, None)
        folder = tmp_path / f"x{len(made)}"
        folder.mkdir()
        gateway.open("e", str(folder))
        made.append((gateway, "e"))
        return gateway, folder

    yield make
    for gateway, execution in made:
        gateway.close(execution)


def test_requests_in_flight_together_stay_within_max_tokens(
    upstream: Upstream, gateway_for: Any
) -> None:
    """Ten requests at once: each reserves its worst case first, so their total fits the budget."""
    upstream.delay_s = 0.5
    gateway, folder = gateway_for(max_tokens=300)
    results: list[int] = []

    def one() -> None:
        results.append(_post(folder, "/v1/chat/completions", _chat(max_tokens=50))[0])

    threads = [threading.Thread(target=one) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    stats = gateway.budget.stats()
    assert len(results) == 10 and 200 in results and 429 in results, results
    assert stats["tokens"] <= 300, stats
    # Each answered request used at most its worst case; the last may have had its limit lowered.
    assert stats["tokens"] <= results.count(200) * (PROMPT_TOKENS + 50)
    assert all(body["max_tokens"] <= 50 for body in upstream.bodies)
    assert stats["held_tokens"] == 0


def test_a_request_past_what_is_left_gets_a_lower_answer_limit(
    upstream: Upstream, gateway_for: Any
) -> None:
    """Without an answer limit of its own, the last request is sent with the limit that fits."""
    gateway, folder = gateway_for(max_tokens=200)
    status, _ = _post(folder, "/v1/chat/completions", _chat())
    assert status == 200
    sent = upstream.bodies[-1]
    assert 0 < sent["max_tokens"] < 200 and sent["max_tokens"] < DEFAULT_ANSWER_TOKENS
    assert gateway.budget.stats()["tokens"] <= 200
    status, body = _post(folder, "/v1/chat/completions", _chat())
    assert status == 429 and b"budget" in body


def test_a_stream_asks_for_usage_and_its_usage_is_counted(
    upstream: Upstream, gateway_for: Any
) -> None:
    """A streamed request is sent with ``include_usage``; the usage chunk is what counts."""
    gateway, folder = gateway_for(price_in=1.0, price_out=1.0)
    status, data = _post(folder, "/v1/chat/completions", _chat(stream=True, max_tokens=40))
    assert status == 200 and b"[DONE]" in data
    assert upstream.bodies[-1]["stream_options"] == {"include_usage": True}
    log = gateway.close("e")
    assert (log[0]["tokens_in"], log[0]["tokens_out"], log[0]["usage"]) == (
        PROMPT_TOKENS,
        40,
        "reported",
    )
    assert gateway.budget.stats()["tokens"] == PROMPT_TOKENS + 40


def test_a_stream_without_usage_is_counted_not_free(upstream: Upstream, gateway_for: Any) -> None:
    """An upstream that reports no usage on a stream: the answer is counted here, never as 0."""
    upstream.usage_on_streams = False
    gateway, folder = gateway_for(price_in=1.0, price_out=2.0, max_cost=1.0)
    status, _ = _post(folder, "/v1/chat/completions", _chat(stream=True))
    assert status == 200
    log = gateway.close("e")
    assert log[0]["usage"] == "counted" and log[0]["tokens_out"] >= 20 and log[0]["tokens_in"] > 0
    stats = gateway.budget.stats()
    assert stats["tokens"] > 20 and stats["cost"] > 0 and log[0]["cost"] == stats["cost"]


def test_closing_an_execution_cancels_its_requests_upstream_and_counts_them(
    upstream: Upstream, gateway_for: Any
) -> None:
    """A request in flight when the agent's execution ends is cut upstream and counted."""
    gateway, folder = gateway_for(max_tokens=100_000)
    answers: list[int] = []
    worker = threading.Thread(
        target=lambda: answers.append(
            _post(folder, "/v1/chat/completions/hold", _chat(max_tokens=500))[0]
        ),
        daemon=True,
    )
    worker.start()
    assert upstream.got_held.wait(10)
    log = gateway.close("e")
    assert upstream.client_left.wait(5), "the upstream request was not cancelled"
    worker.join(5)
    assert answers == [503]  # the agent, were it still there, hears why at once
    entry = log[0]
    assert entry["refused"] == "cancelled upstream when the execution ended"
    assert entry["tokens_out"] == 500 and entry["usage"] == "reserved"
    stats = gateway.budget.stats()
    assert stats["tokens"] == entry["tokens_in"] + 500 and stats["held_tokens"] == 0


def test_refused_requests_count_against_max_requests(gateway_for: Any) -> None:
    """Requests refused for their shape spend the request budget like answered ones."""
    _, folder = gateway_for(max_requests=3)
    for _ in range(3):
        assert _post(folder, "/admin", {})[0] == 403
    status, body = _post(folder, "/v1/chat/completions", _chat())
    assert status == 429 and b"max_requests=3" in body


def test_the_request_log_is_bounded_however_many_requests_are_refused(
    gateway_for: Any,
) -> None:
    """2,000 refused requests: the log keeps the first ones and counts the rest in one entry."""
    gateway, folder = gateway_for()
    connection = _UnixConnection(folder / "model.sock")
    try:
        for _ in range(2000):
            connection.request("POST", "/admin", body=b"{}")
            response = connection.getresponse()
            response.read()
            assert response.status == 403
    finally:
        connection.close()
    log = gateway.close("e")
    assert len(log) == REFUSED_LOGGED + 1
    assert log[-1]["count"] == 2000 - REFUSED_LOGGED
    assert len(json.dumps(log)) < 100_000


def test_budget_settles_once_and_releases_what_it_held() -> None:
    """A reservation settled twice (cancelled, then its handler ends) counts once."""
    budget = Budget({"max_tokens": 1000})
    held = budget.reserve(10, 100)
    assert not isinstance(held, str)
    assert budget.stats()["held_tokens"] == 110
    budget.settle(held, 10, 5)
    budget.settle(held, 10, 100)
    assert budget.stats()["tokens"] == 15 and budget.stats()["held_tokens"] == 0
    assert (
        budget.reserve(2000, 1)
        == "what is left does not cover this request's prompt (about 2000 tokens)"
    )


def test_counted_usage_counts_stream_events_and_text() -> None:
    """Each event at least one token; long text one token per four bytes."""
    stream = b"".join(
        b'data: {"choices": [{"delta": {"content": "' + b"x" * n + b'"}}]}\n\n' for n in (1, 1, 40)
    )
    assert counted_usage(stream, "text/event-stream") == 1 + 1 + 10
    assert (
        counted_usage(b'{"choices": [{"message": {"content": "abcdefgh"}}]}', "application/json")
        == 2
    )


def test_the_shipped_gateway_runs_on_the_standard_library_alone(tmp_path: Path) -> None:
    """The package shipped into the gateway's folder imports, from there, without any other
    package of the project or any installed package."""
    for name, data in gateway_files().items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(data)
    assert {"gateway/gateway.py", "gateway/secrets.py", "gateway/hostport.py"} <= set(
        gateway_files()
    )
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import gateway.gateway, gateway.secrets; "
        "assert gateway.__file__.startswith(sys.argv[1]), gateway.__file__; "
        "others = {'bughunt', 'cli', 'flows', 'tasks', 'judging', 'corpus', 'ledger', 'pydantic'}; "
        "assert not others & set(sys.modules), others & set(sys.modules); "
        "s = gateway.gateway.Gateway({'model': 'http://m/v1'}, 'sk-shipped-key-1234').scrubber; "
        "print(s.scrub('%73%6B-shipped-key-1234'))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[secret:API_KEY]"


def test_max_cost_holds_the_worst_case_cost_of_requests_in_flight() -> None:
    """Cost is reserved like tokens: a lowered answer limit that fits, then nothing while held."""
    budget = Budget({"max_cost": 0.001, "price_in": 1.0, "price_out": 10.0})
    first = budget.reserve(100, 1000, can_limit=True)
    assert not isinstance(first, str)
    assert first.limit == 90 and first.cost == pytest.approx(0.001)
    assert isinstance(budget.reserve(1, 1, can_limit=True), str)
    budget.settle(first, 100, 20)
    assert budget.stats()["cost"] == pytest.approx((100 + 200) / 1e6)
    assert not isinstance(budget.reserve(1, 1), str)


def test_only_the_fields_a_request_has_are_lowered_and_streams_ask_for_usage() -> None:
    """A Responses API limit is lowered in place; ``max_tokens`` is added to completions only."""
    responses: dict[str, Any] = {"input": "x", "max_output_tokens": 500, "stream": True}
    assert prepared(responses, 90)
    assert responses == {"input": "x", "max_output_tokens": 90, "stream": True}
    chat = _chat(stream=True, stream_options={"include_usage": False})
    assert prepared(chat, 7)
    assert chat["max_tokens"] == 7 and chat["stream_options"] == {"include_usage": True}
    plain = _chat()
    assert not prepared(plain, None) and "max_tokens" not in plain
