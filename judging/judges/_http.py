"""The HTTP transport of judges behind HTTP endpoints: one pooled httpx client per judge.

A batch sends up to ``max_in_flight`` calls at once, each from a thread of
its own (``judging/judges/_batch.py``), each call's contract (deadline,
retries, breaker) plain synchronous code. All of them share one
``httpx.Client`` whose connection pool holds ``max_connections`` (the
concurrency) connections, kept alive across calls and batches; each thread
does its own socket I/O with the interpreter lock released.

Why not an async client on an event loop of its own, with the threads handing
it their requests: measured here (``benchmarks/judge_throughput.py``, C = 32,
L = 50 ms, the other core busy), that design reached 52 calls/s where this one
reaches 169 and the OpenAI SDK 142: the loop's one thread needs the
interpreter lock for every response, and 32 threads building prompts and
parsing answers keep it from getting it (each wait up to Python's 5 ms switch
interval). The throughput comes from not building SDK request and response
models per call, and from one pool sized to the calls in flight.

Nothing here knows the OpenAI protocol: :meth:`HttpTransport.post` returns
the status, the ``Retry-After`` wait and the body bytes, or raises
:class:`TransportTimeout` / :class:`TransportFailed`; the backend maps them
onto the judge errors.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx


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


class HttpTransport:
    """POSTs JSON to one base URL from any thread, over one pooled client.

    Thread-safe. The client starts on the first request and lives as long as
    the transport (:meth:`close` ends it). ``headers`` go with every request
    (the authorization header among them: it is never logged here).
    """

    def __init__(self, base_url: str, headers: Mapping[str, str], max_connections: int) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.base_url = base_url.rstrip("/")
        self._headers = dict(headers)
        self.max_connections = max_connections
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None

    def __getstate__(self) -> dict[str, Any]:  # travels (to a Dask worker) without its client
        state = self.__dict__.copy()
        state.update(_lock=None, _client=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _started(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                limits = httpx.Limits(
                    max_connections=self.max_connections,
                    max_keepalive_connections=self.max_connections,
                )
                self._client = httpx.Client(
                    base_url=self.base_url, headers=self._headers, limits=limits
                )
            return self._client

    def post(self, path: str, body: bytes, timeout_s: float) -> Response:
        timeout_s = max(timeout_s, 0.001)
        client = self._started()
        try:
            answer = client.post(
                path,
                content=body,
                headers={"content-type": "application/json"},
                timeout=httpx.Timeout(timeout_s),
            )
        except httpx.TimeoutException as exc:
            raise TransportTimeout(f"{type(exc).__name__}: {exc}") from None
        except httpx.TransportError as exc:
            raise TransportFailed(f"{type(exc).__name__}: {exc}") from None
        return Response(
            answer.status_code,
            answer.content,
            retry_after_seconds(answer.headers.get("retry-after")),
        )

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
