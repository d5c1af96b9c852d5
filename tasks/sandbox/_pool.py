"""Many executions in parallel on a bounded pool of threads.

Each worker mostly waits on the engine, so threads suffice; the bound keeps
the machine from being swamped (the default is one worker per core).
Results come back in input order, so serial and parallel runs give the
same list.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
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
