"""Each case's trees made ahead of the workers that run its pairs, a bounded number at a time.

Rewriting a case's trees is Python work and its executions mostly wait on
containers, so a thread makes the next cases' trees while the workers run
the current ones (:func:`rewriting_ahead`). A case's trees are made once,
by whoever asks first, and let go when its last job is done
(:class:`CaseWork`); a :class:`Window` bounds how many are held at once.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple, Protocol

from tasks.sandbox.reproduction import CaseTrees, RewriteCheck
from tasks.sandbox.trees import Files


class PreparedCase(NamedTuple):
    """What a case's pairs run on, made once for all of them."""

    trees: CaseTrees
    """The case's trees as shown and, when the run rewrites, rewritten."""
    check: RewriteCheck | None
    """Whether the rewrite keeps the suite's outcomes; None when the case is not rewritten."""
    view: Files
    """The buggy tree as the agent sees it: the oracle held out."""


class Window:
    """How many cases' trees are held at once: what the thread that makes them ahead waits on."""

    def __init__(self, ahead: int) -> None:
        self.ahead = ahead
        self.held = 0
        self.cond = threading.Condition()

    def change(self, by: int) -> None:
        with self.cond:
            self.held += by
            self.cond.notify_all()

    def wait_for_room(self, stop: threading.Event) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.held < self.ahead or stop.is_set())

    def wake(self) -> None:
        """Have a waiter look at its stop event again."""
        self.change(0)


class CaseWork:
    """A case's trees (with this run's rewrites), their rewrite check and the agent's view of
    the buggy tree: made once, when first asked for, and let go when the case's last job is
    done. So rewriting overlaps other cases' executions, and a stage holds the trees of the
    cases in flight, not of every case."""

    def __init__(self, make: Callable[[], PreparedCase], jobs: int, window: Window) -> None:
        self._make: Callable[[], PreparedCase] | None = make
        self._made: PreparedCase | None = None
        self._jobs = jobs
        self.window = window
        self._lock = threading.Lock()

    def get(self) -> PreparedCase:
        """The case's trees, check and view; made now when nobody asked before."""
        with self._lock:
            if self._made is None:
                if self._make is None:
                    raise RuntimeError("a case's trees were asked for after its last job")
                self._made = self._make()
                self.window.change(+1)
            return self._made

    def done(self) -> None:
        """One of the case's jobs is done; after the last, the trees are let go."""
        with self._lock:
            self._jobs -= 1
            if self._jobs > 0:
                return
            if self._made is not None:
                self.window.change(-1)
            self._made = self._make = None


class HoldsWork(Protocol):
    """A job: it runs on its case's work."""

    @property
    def work(self) -> CaseWork: ...


@contextlib.contextmanager
def rewriting_ahead(jobs: Sequence[HoldsWork]) -> Iterator[None]:
    """While the block runs, a thread makes each case's trees in job order, ahead of the workers.

    Rewriting is Python work and executions mostly wait on containers, so the
    two overlap; a worker that reaches a case first makes it itself (once, under
    the case's lock). The thread keeps at most the window's ``ahead`` cases made
    and not yet done, so memory holds the cases in flight, not all of them. A
    case that fails to be made is left to its worker, whose pair reports it. On
    exit the thread stops after its current case.
    """
    stop = threading.Event()

    def ahead() -> None:
        for work in {id(job.work): job.work for job in jobs}.values():
            work.window.wait_for_room(stop)
            if stop.is_set():
                return
            with contextlib.suppress(Exception):  # the pair's worker meets it again and says so
                work.get()

    thread = threading.Thread(target=ahead, name="sandbox-rewrite", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        for window in {id(job.work.window): job.work.window for job in jobs}.values():
            window.wake()
        thread.join()
