"""The HTTP transport of judges behind HTTP endpoints: one pooled urllib3 pool per judge.

A batch sends up to ``max_in_flight`` calls at once, each from a thread of
its own (``judging/judges/_batch.py``), each call's contract (deadline,
retries, breaker) plain synchronous code. All of them share one
``urllib3.PoolManager`` whose pools hold ``max_connections`` (the
concurrency) connections, kept alive across calls and batches; each thread
does its own socket I/O with the interpreter lock released.

The calls in flight share one interpreter lock, so what bounds calls per
second is the client's own CPU per call. Measured here (one thread, an
endpoint answering at once, CPU time per request): httpx 0.41 ms, urllib3
0.23 ms, the OpenAI SDK more than either. So requests go through urllib3 (the
pool the docker SDK already uses) rather than httpx. With that and each
report rendered once (``_prompt.render_report``), ``benchmarks/judge_throughput.py``
(C = 32, L = 50 ms, a quiet machine) went from 548 to 579–587 calls/s, 0.86 to
0.90–0.92 of C / L.

Why not an async client on an event loop of its own, with the threads handing
it their requests: measured here (``benchmarks/judge_throughput.py``, C = 32,
L = 50 ms, the other core busy), that design reached 52 calls/s where pooled
threads reached 169 and the OpenAI SDK 142: the loop's one thread needs the
interpreter lock for every response, and 32 threads building prompts and
parsing answers keep it from getting it (each wait up to Python's 5 ms switch
interval).

Nothing here knows the OpenAI protocol: :meth:`HttpTransport.post` returns
the status, the ``Retry-After`` wait and the body bytes, or raises
:class:`TransportTimeout` / :class:`TransportFailed`; the backend maps them
onto the judge errors. urllib3 never retries here (``retries=False``): the
call contract is the only retry policy.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import urllib3
from urllib3.exceptions import EmptyPoolError, HTTPError, NewConnectionError
from urllib3.exceptions import TimeoutError as Urllib3Timeout


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
    """POSTs JSON to one base URL from any thread, over one pool of connections.

    Thread-safe. The pool starts on the first request and lives as long as
    the transport (:meth:`close` ends it). ``headers`` go with every request
    (the authorization header among them: it is never logged here).
    """

    def __init__(self, base_url: str, headers: Mapping[str, str], max_connections: int) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.base_url = base_url.rstrip("/")
        self._headers = {**headers, "content-type": "application/json"}
        self.max_connections = max_connections
        self._lock = threading.Lock()
        self._pool: urllib3.PoolManager | None = None

    def __getstate__(self) -> dict[str, Any]:  # travels (to a Dask worker) without its pool
        state = self.__dict__.copy()
        state.update(_lock=None, _pool=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _started(self) -> urllib3.PoolManager:
        with self._lock:
            if self._pool is None:
                # block=True: never more than max_connections open; a thread waits for one
                self._pool = urllib3.PoolManager(
                    maxsize=self.max_connections, block=True, retries=False
                )
            return self._pool

    def post(self, path: str, body: bytes, timeout_s: float) -> Response:
        timeout_s = max(timeout_s, 0.001)
        pool = self._started()
        try:
            answer = pool.request(
                "POST",
                self.base_url + path,
                body=body,
                headers=self._headers,
                timeout=urllib3.Timeout(connect=timeout_s, read=timeout_s),
                pool_timeout=timeout_s,
                retries=False,
                redirect=False,
            )
        except NewConnectionError as exc:  # a ConnectTimeoutError to urllib3, refused to us
            raise TransportFailed(f"{type(exc).__name__}: {exc}") from None
        except (Urllib3Timeout, EmptyPoolError) as exc:
            raise TransportTimeout(f"{type(exc).__name__}: {exc}") from None
        except (HTTPError, OSError) as exc:
            raise TransportFailed(f"{type(exc).__name__}: {exc}") from None
        return Response(
            answer.status,
            answer.data,
            retry_after_seconds(answer.headers.get("retry-after")),
        )

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.clear()
