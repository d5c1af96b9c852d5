"""The bounded pool: input order, every item run, the first failure raised. No engine."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from bughunt.errors import InputError
from tasks.sandbox._lookahead import CaseWork, Window, rewriting_ahead
from tasks.sandbox.engine import map_bounded


@pytest.mark.parametrize("workers", [1, 3])
def test_results_come_back_in_input_order(workers: int) -> None:
    """Items finishing out of order still come back in input order."""

    def slow_first(n: int) -> int:
        time.sleep(0.05 if n == 0 else 0)
        return n * n

    assert map_bounded(slow_first, range(6), max_workers=workers) == [0, 1, 4, 9, 16, 25]


@pytest.mark.parametrize("workers", [1, 2])
def test_every_item_runs_before_the_first_failure_is_raised(workers: int) -> None:
    """One failing item neither stops the others nor hides its error."""
    seen: list[int] = []

    def fail_on_one(n: int) -> int:
        seen.append(n)
        if n == 1:
            raise RuntimeError("item 1 failed")
        return n

    with pytest.raises(RuntimeError, match="item 1 failed"):
        map_bounded(fail_on_one, range(4), max_workers=workers)
    assert sorted(seen) == [0, 1, 2, 3]


def test_concurrency_never_exceeds_the_bound() -> None:
    """At most max_workers items run at once."""
    lock = threading.Lock()
    running = peak = 0

    def track(_n: int) -> None:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.02)
        with lock:
            running -= 1

    map_bounded(track, range(12), max_workers=3)
    assert peak == 3


def test_a_bound_below_one_is_refused() -> None:
    """max_workers=0 raises InputError naming the field."""
    with pytest.raises(InputError) as info:
        map_bounded(str, [1], max_workers=0)
    assert info.value.field == "max_workers"


def test_a_dask_worker_s_slots_bound_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a Dask worker the pool is the worker's BUGHUNT_SLOTS (default 1), at most what a run
    asks for; in any other process it is what the run asks for, or the CPU count."""
    import os

    from distributed import Client, LocalCluster

    from tasks.sandbox.engine._pool import pool_size

    assert pool_size(None) == (os.cpu_count() or 1) and pool_size(3) == 3
    with (
        LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        asked = [None, 2, 8]
        monkeypatch.delenv("BUGHUNT_SLOTS", raising=False)
        assert client.gather(client.map(pool_size, asked, pure=False)) == [1, 1, 1]
        monkeypatch.setenv("BUGHUNT_SLOTS", "4")
        assert client.gather(client.map(pool_size, asked, pure=False)) == [4, 2, 4]
        monkeypatch.setenv("BUGHUNT_SLOTS", "many")
        with pytest.raises(InputError, match="BUGHUNT_SLOTS must be a positive integer"):
            client.submit(pool_size, None, pure=False).result()


def test_a_cases_trees_are_made_once_whoever_asks_first() -> None:
    """Eight threads asking for a case's trees at once get the one result, made once."""
    made: list[int] = []

    def make() -> Any:
        made.append(1)
        time.sleep(0.05)
        return object(), None, {}

    work = CaseWork(make, 8, Window(4))
    got = map_bounded(lambda _i: work.get()[0], list(range(8)), max_workers=8)
    assert len(made) == 1 and all(g is got[0] for g in got)


class _FakeJob:
    def __init__(self, work: CaseWork) -> None:
        self.work = work


def test_trees_made_ahead_stay_within_the_window_and_go_with_the_last_job() -> None:
    """The thread that rewrites ahead holds at most `ahead` cases; a done case is let go."""
    window = Window(ahead=3)
    made: Any = lambda: (object(), None, {})  # noqa: E731 -- trees stand-in: only identity matters
    works = [CaseWork(made, 2, window) for _ in range(10)]
    jobs: list[Any] = [_FakeJob(w) for w in works for _agent in range(2)]
    with rewriting_ahead(jobs):
        deadline = time.monotonic() + 5
        while window.held < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # were the window not a bound, more would be made by now
        assert window.held == 3
        for job in jobs[:2]:  # both jobs of the first case
            job.work.done()
        while window.held < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert window.held == 3  # one let go, the next made
    assert [w._made is not None for w in works] == [False, True, True, True] + [False] * 6
    with pytest.raises(RuntimeError, match="after its last job"):
        works[0].get()
