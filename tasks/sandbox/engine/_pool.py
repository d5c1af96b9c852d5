"""Many executions in parallel on a bounded pool of threads.

Each worker mostly waits on the engine, so threads suffice; the bound keeps
the machine from being swamped (the default is one worker per core).
Results come back in input order, so serial and parallel runs give the
same list.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from bughunt.errors import InputError

T = TypeVar("T")
R = TypeVar("R")


def map_bounded(
    fn: Callable[[T], R], items: Sequence[T], *, max_workers: int | None = None
) -> list[R]:
    """``[fn(item) for item in items]`` on at most ``max_workers`` threads, in input order.

    ``max_workers`` defaults to ``os.cpu_count()``; 1 runs serially in this
    thread. Every item is run even when one raises; then the first
    exception (in input order) is raised. A ``max_workers`` below 1 raises
    :class:`InputError`.
    """
    workers = max_workers if max_workers is not None else (os.cpu_count() or 1)
    if workers < 1:
        raise InputError(f"max_workers must be at least 1, got {workers}", field="max_workers")
    if workers == 1 or len(items) <= 1:
        results: list[R] = []
        first: Exception | None = None
        for item in items:
            try:
                results.append(fn(item))
            except Exception as exc:  # run the rest, as the pool does, then raise
                first = first or exc
        if first is not None:
            raise first
        return results
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sandbox") as pool:
        futures = [pool.submit(fn, item) for item in items]
        for future in futures:
            future.exception()  # wait for all before raising any
        return [future.result() for future in futures]


SLOTS_ENV = "BUGHUNT_SLOTS"
"""A Dask worker's environment variable: how many pairs a shard runs at once there."""


def pool_size(requested: int | None, environ: Mapping[str, str] | None = None) -> int:
    """How many executions a stage runs at once in this process.

    On a Dask worker, the worker's slots (``BUGHUNT_SLOTS`` in its environment,
    default 1; at most ``requested`` when a run asks for fewer): the cluster's
    workers, not a pool inside each shard, set a run's parallelism, and each
    host says what it can take. Elsewhere ``requested``, or the CPU count.
    A bad ``BUGHUNT_SLOTS`` raises :class:`InputError` naming it.
    """
    if not on_dask_worker():
        return requested or os.cpu_count() or 1
    env = os.environ if environ is None else environ
    raw = env.get(SLOTS_ENV, "").strip() or "1"
    if not raw.isdigit() or int(raw) < 1:
        raise InputError(f"{SLOTS_ENV} must be a positive integer, not {raw!r}", field=SLOTS_ENV)
    return min(int(raw), requested) if requested else int(raw)


def on_dask_worker() -> bool:
    """True in a Dask worker's task thread: a shard running on a cluster."""
    # Only a Dask worker process has imported distributed and runs tasks in a worker thread.
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return False
    try:
        distributed.get_worker()
    except ValueError:
        return False
    return True
