"""A local OpenAI-compatible chat-completions server whose answers each test scripts.

It speaks the real protocol over a real socket on 127.0.0.1 (port 0), so the
judge backends are tested through the same SDK and HTTP stack they use in
production. A test queues :class:`Reply` values (status, body, delay); each
``POST /v1/chat/completions`` takes the next one and is recorded. With the
queue empty, ``fallback`` answers (by default a 500 naming the problem, so an
unexpected request is visible in the count and in the call's failure).

Reusable: ``with OpenAIServer() as server: server.script(ok(...)); ...``.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP answer."""

    status: int = 200
    body: Any = None
    """JSON-able body, or ``str``/``bytes`` sent as is."""
    delay_s: float = 0.0
    """Seconds to wait before answering (cut short when the server stops)."""
    headers: dict[str, str] = field(default_factory=dict)
    hang_up: bool = False
    """Close the connection after answering, without saying so (no ``Connection: close``): a
    kept-alive connection the endpoint drops while the client holds it idle."""


def completion(
    content: str | None, *, model: str = "scripted", finish_reason: str = "stop"
) -> dict[str, Any]:
    """A chat.completion body whose single choice says ``content``."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def ok(content: str | None, *, delay_s: float = 0.0) -> Reply:
    """A 200 whose answer text is ``content``."""
    return Reply(200, completion(content), delay_s=delay_s)


def answer(winner: str, rationale: str = "scripted", *, delay_s: float = 0.0) -> Reply:
    """A 200 whose answer is strict JSON naming ``winner``."""
    return ok(json.dumps({"winner": winner, "rationale": rationale}), delay_s=delay_s)


def error(
    status: int,
    message: str = "scripted error",
    *,
    code: str | None = None,
    type_: str = "invalid_request_error",
    param: str | None = None,
) -> Reply:
    """An error in the OpenAI shape ``{"error": {...}}``."""
    return Reply(
        status, {"error": {"message": message, "type": type_, "param": param, "code": code}}
    )


@dataclass
class Seen:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: Any
    at: float = 0.0
    """When it arrived (``time.monotonic()``)."""
    peer: str = ""
    """The client's address and port: one per connection it came over."""


class OpenAIServer:
    """The scripted server; start with ``with`` or :meth:`start`, stop with :meth:`stop`."""

    def __init__(self, tls: tuple[str, str] | None = None) -> None:
        """``tls``: (certificate file, key file) to answer over HTTPS."""
        self._tls = tls
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self._stopping = threading.Event()
        self.requests: list[Seen] = []
        self.fallback: Reply | Callable[[Seen], Reply] = error(
            500, "test server: no scripted reply left", type_="server_error"
        )
        self.in_flight = 0
        self.max_in_flight = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting ---------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies, answered in order."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def count(self) -> int:
        """Chat-completion requests received so far."""
        with self._lock:
            return len(self.requests)

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"{'https' if self._tls else 'http'}://{host!s}:{port}/v1"

    def _next(self, seen: Seen) -> Reply:
        with self._lock:
            self.requests.append(seen)
            reply = self._queue.popleft() if self._queue else None
        if reply is not None:
            return reply
        fb = self.fallback
        return fb(seen) if callable(fb) else fb

    # --- lifecycle ---------------------------------------------------------

    def start(self) -> OpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path != CHAT_PATH:
                    self._send(Reply(404, {"error": {"message": f"no route {self.path}"}}))
                    return
                seen = Seen(
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    _parsed(raw),
                    at=time.monotonic(),
                    peer=f"{self.client_address[0]}:{self.client_address[1]}",
                )
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    reply = server._next(seen)
                    if reply.delay_s:
                        server._stopping.wait(reply.delay_s)
                    self._send(reply)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _send(self, reply: Reply) -> None:
                data = _encoded(reply.body)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                    if reply.hang_up:
                        self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to answer

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if self._tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self._tls)
            httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},  # a quick shutdown between tests
            name="openai-test-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve() -> Iterator[OpenAIServer]:
    """Generator form for a pytest fixture."""
    with OpenAIServer() as server:
        yield server


def _parsed(raw: bytes) -> Any:
    """A request body as JSON, or as text when it is not JSON."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _encoded(body: Any) -> bytes:
    """A reply body as bytes: bytes as they are, text as UTF-8, anything else as JSON."""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body).encode()
