"""An async HTTP transport for judges behind HTTP endpoints: one event loop, one pool.

A batch sends up to ``max_in_flight`` calls at once, each from a thread of
its own (``judging/judges/_batch.py``), and each call's contract (deadline,
retries, breaker) stays plain synchronous code. The requests themselves are
not sent by those threads: each is handed to one event loop, on a thread of
this transport's own, where one ``httpx.AsyncClient`` with a connection pool
of ``max_connections`` (the concurrency) sends it, and the calling thread
waits for its answer. Connections are reused across calls and batches, and
no thread blocks on a socket or on another thread's connection-pool lock:
the client-side cost per call, which bounds calls per second
(``benchmarks/judge_throughput.py``), is one hand-off each way plus httpx's
own request handling.

Nothing here knows the OpenAI protocol: :meth:`AsyncTransport.post` returns
the status, the headers that matter and the body bytes, or raises
:class:`TransportTimeout` / :class:`TransportFailed`; the backend maps them
onto the judge errors.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
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


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    try:
        loop.run_forever()
    finally:
        loop.close()


class AsyncTransport:
    """POSTs JSON to one base URL from any thread, over one async client on a loop thread.

    Thread-safe. The loop and the client start on the first request and live
    as long as the transport (the loop thread is a daemon; :meth:`close`
    ends both). ``headers`` go with every request (the authorization header
    among them: it is never logged here).
    """

    def __init__(self, base_url: str, headers: Mapping[str, str], max_connections: int) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.base_url = base_url.rstrip("/")
        self._headers = dict(headers)
        self.max_connections = max_connections
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx.AsyncClient | None = None

    def __getstate__(self) -> dict[str, Any]:  # travels (to a Dask worker) without its loop
        state = self.__dict__.copy()
        state.update(_lock=None, _loop=None, _client=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(
                    target=_serve, args=(loop,), name="judge-http", daemon=True
                ).start()
                limits = httpx.Limits(
                    max_connections=self.max_connections,
                    max_keepalive_connections=self.max_connections,
                )

                async def make() -> httpx.AsyncClient:
                    return httpx.AsyncClient(
                        base_url=self.base_url, headers=self._headers, limits=limits
                    )

                self._client = asyncio.run_coroutine_threadsafe(make(), loop).result()
                self._loop = loop
            return self._loop

    async def _post(self, path: str, body: bytes, timeout_s: float) -> Response:
        assert self._client is not None
        try:
            # httpx times each phase; the call's time left is for the whole request.
            async with asyncio.timeout(timeout_s):
                answer = await self._client.post(
                    path,
                    content=body,
                    headers={"content-type": "application/json"},
                    timeout=httpx.Timeout(timeout_s),
                )
        except TimeoutError:
            raise TransportTimeout(f"no whole response in {timeout_s:.1f} s") from None
        except httpx.TimeoutException as exc:
            raise TransportTimeout(f"{type(exc).__name__}: {exc}") from None
        except httpx.TransportError as exc:
            raise TransportFailed(f"{type(exc).__name__}: {exc}") from None
        return Response(
            answer.status_code,
            answer.content,
            retry_after_seconds(answer.headers.get("retry-after")),
        )

    def post(self, path: str, body: bytes, timeout_s: float) -> Response:
        """POST ``body`` (JSON bytes) to ``path``; the response, within ``timeout_s``.

        Raises :class:`TransportTimeout` when no whole response came in time,
        :class:`TransportFailed` when the exchange broke.
        """
        timeout_s = max(timeout_s, 0.001)
        future = asyncio.run_coroutine_threadsafe(
            self._post(path, body, timeout_s), self._started()
        )
        try:
            # A safety net only: the request's own timeout above ends it first.
            return future.result(timeout=timeout_s + 1.0)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TransportTimeout(f"no response in {timeout_s:.1f} s") from None

    def close(self) -> None:
        """Close the client and stop the loop; the next request starts them again."""
        with self._lock:
            loop, client = self._loop, self._client
            self._loop = self._client = None
        if loop is None or client is None:
            return
        asyncio.run_coroutine_threadsafe(client.aclose(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
