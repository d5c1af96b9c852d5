"""The HTTP transport of judges behind HTTP endpoints: one pool of kept-alive connections per judge.

A batch sends up to ``max_in_flight`` calls at once, each from a thread of
its own (``judging/judges/_batch.py``), each call's contract (deadline,
retries, breaker) plain synchronous code. All of them share one pool of at
most ``max_connections`` (the concurrency) connections, kept alive across
calls and batches; each thread does its own socket I/O with the interpreter
lock released.

The calls in flight share one interpreter lock, so what bounds calls per
second is the client's own CPU per call: the longer one thread holds the lock
to build a request or read an answer, the longer the others' answers wait to
be read. The standard library's ``http.client`` spends about half the CPU
per request that httpx or urllib3 do (``benchmarks/judge_throughput.py``;
its figures are in ``benchmarks/results.md``). So the pool is written here,
over ``http.client`` connections (a list of idle ones under a condition
variable, about forty lines), rather than taken from urllib3: urllib3's
request, response and header objects are the half of its cost that a judge
does not need.

Why not an async client on an event loop of its own, with the threads handing
it their requests: the loop's one thread needs the interpreter lock for every
response, and the many threads building prompts and parsing answers keep it
from getting it (each wait up to Python's switch interval), so that design
sends far fewer calls a second than pooled threads
(``benchmarks/judge_throughput.py``).

Nothing here knows the OpenAI protocol: :meth:`HttpTransport.post` returns
the status, the ``Retry-After`` wait and the body bytes, or raises
:class:`TransportTimeout` / :class:`TransportFailed`; the backend maps them
onto the judge errors. Nothing is retried here: the call contract is the only
retry policy. The one thing done before a request is to drop an idle
connection the endpoint has closed meanwhile (it would otherwise fail the
request for no fault of the endpoint's), as urllib3 does.
"""

from __future__ import annotations

import http.client
import select
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True, slots=True)
class Response:
    """What came back from one request."""

    status: int
    body: bytes
    retry_after_s: float | None
    """The ``Retry-After`` header as seconds (a number, or an HTTP date from now), if any."""


class TransportTimeout(Exception):
    """No complete response before the request's timeout."""


class TransportFailed(Exception):
    """The endpoint could not be reached or the exchange broke (connection, protocol)."""


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds from ``now``: delta-seconds or an HTTP date; None if absent or
    unreadable (then the caller's own backoff applies), never negative."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _dropped(conn: http.client.HTTPConnection) -> bool:
    """An idle kept-alive connection that can no longer carry a request: the endpoint closed
    it (readable at EOF) or sent something unasked (readable too)."""
    sock = conn.sock
    if sock is None:
        return False  # never opened, or closed: the next request opens it
    poller = select.poll()  # not select.select: a descriptor may be above 1024
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


class HttpTransport:
    """POSTs JSON to one base URL from any thread, over one pool of connections.

    Thread-safe. At most ``max_connections`` connections exist at once; a
    request that finds none free waits for one within its own timeout.
    Connections open on first use and live as long as the transport
    (:meth:`close` ends the idle ones; a later request opens them again).
    ``headers`` go with every request (the authorization header among them:
    it is never logged here).
    """

    def __init__(self, base_url: str, headers: Mapping[str, str], max_connections: int) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the judge's base_url must be an http(s) URL, not {base_url!r}")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path
        self._headers = {**headers, "content-type": "application/json"}
        self.max_connections = max_connections
        self._start_pool()

    def _start_pool(self) -> None:
        self._free = threading.Condition()
        self._idle: list[http.client.HTTPConnection] = []
        self._made = 0
        self._tls: ssl.SSLContext | None = None

    def __getstate__(self) -> dict[str, Any]:  # travels (to a Dask worker) without its pool
        state = self.__dict__.copy()
        for name in ("_free", "_idle", "_made", "_tls"):
            state.pop(name)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._start_pool()

    def _connection(self, timeout_s: float) -> http.client.HTTPConnection:
        """A free connection (idle, or new while fewer than the limit exist) within ``timeout_s``."""
        give_up = time.monotonic() + timeout_s
        with self._free:
            while not self._idle and self._made >= self.max_connections:
                left = give_up - time.monotonic()
                if left <= 0 or not self._free.wait(left):
                    raise TransportTimeout(
                        f"no free connection among {self.max_connections} in {timeout_s:.3g} s"
                    )
            if self._idle:
                conn = self._idle.pop()  # the most recently used: the likeliest to be alive
            else:
                self._made += 1
                conn = self._new()
        if _dropped(conn):
            conn.close()  # the request below opens it again
        return conn

    def _new(self) -> http.client.HTTPConnection:
        if not self._https:
            return http.client.HTTPConnection(self._host, self._port)
        if self._tls is None:
            self._tls = ssl.create_default_context()  # verifies the certificate and the name
        return http.client.HTTPSConnection(self._host, self._port, context=self._tls)

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._free:
            self._idle.append(conn)
            self._free.notify()

    def post(self, path: str, body: bytes, timeout_s: float) -> Response:
        timeout_s = max(timeout_s, 0.001)
        conn = self._connection(timeout_s)
        try:
            conn.timeout = timeout_s  # connecting, and each read and write after it
            if conn.sock is not None:
                conn.sock.settimeout(timeout_s)
            conn.request("POST", self._prefix + path, body=body, headers=self._headers)
            answer = conn.getresponse()
            data = answer.read()
            if answer.will_close:
                conn.close()
            return Response(
                answer.status, data, retry_after_seconds(answer.getheader("retry-after"))
            )
        except TimeoutError as exc:  # socket.timeout, connecting or reading
            conn.close()
            raise TransportTimeout(f"{type(exc).__name__}: {exc or 'timed out'}") from None
        except (http.client.HTTPException, OSError) as exc:  # refused, reset, not HTTP, TLS
            conn.close()
            raise TransportFailed(f"{type(exc).__name__}: {exc}") from None
        except BaseException:
            conn.close()
            raise
        finally:
            self._give_back(conn)

    def close(self) -> None:
        with self._free:
            idle, self._idle = self._idle, []
            self._made -= len(idle)
        for conn in idle:
            conn.close()
