"""Progress lines for a run's stages: where a run is, in its logs, at least every 30 s.

A stage says when it starts (with what it has to do) and when it ends (with
its duration, or that it was resumed from its checkpoint); while it runs, a
line at least every ``BUGHUNT_PROGRESS_S`` seconds (default 30) gives done /
total, the rate and the time left at that rate. The lines go to the run's
logger: inside a flow run that is Prefect's run logger, so they reach the run's
logs in the Prefect UI and, through Prefect's console handler, the terminal or
the CI log. On a terminal every stage also shows a bar (rich's, transient:
it is gone when the stage ends, and its lines stay).

A timer thread rather than a check on each finished unit: a shard of a
thousand executions finishes nothing for many minutes, and that is exactly
when a line is wanted.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from bughunt.errors import InputError

HEARTBEAT_S = 30.0
"""Seconds between lines while a stage runs, unless ``BUGHUNT_PROGRESS_S`` says otherwise."""


def heartbeat_s() -> float:
    """``BUGHUNT_PROGRESS_S`` (seconds, > 0), else 30."""
    raw = os.environ.get("BUGHUNT_PROGRESS_S")
    if not raw:
        return HEARTBEAT_S
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise InputError(
            f"BUGHUNT_PROGRESS_S must be a number of seconds above 0, not {raw!r}",
            field="BUGHUNT_PROGRESS_S",
        )
    return value


_BARS: Any | None = None
_BARS_LOCK = threading.Lock()


def terminal() -> Any | None:
    """The process's one set of bars (a rich Progress on standard error) when standard error is
    a terminal, else None (no bar in a log). One for all: a stage's bar and its shards' bars
    show together, where separate live displays on one terminal would overwrite each other."""
    global _BARS
    if not sys.stderr.isatty():
        return None
    with _BARS_LOCK:
        if _BARS is None:
            from rich.console import Console  # only a terminal pays for rich
            from rich.progress import Progress

            _BARS = Progress(console=Console(stderr=True), transient=True)
        return _BARS


def _span(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class StageProgress:
    """One stage's (or one shard's) progress lines; a context manager around its work."""

    def __init__(
        self,
        stage: str,
        unit: str,
        total: int | None,
        say: Callable[[str], None],
        *,
        interval_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        bars: Any | None = None,
    ) -> None:
        """``bars`` (a rich Progress, see :func:`terminal`) gets a bar for the stage beside its
        lines, removed when it ends."""
        self.stage, self.unit, self.total, self.say = stage, unit, total, say
        self.bars = bars
        self._bar: Any | None = None
        self.interval_s = interval_s if interval_s is not None else heartbeat_s()
        self.clock = clock
        self.done = 0
        self.skipped = 0
        """Units resumed from a checkpoint: counted done, not in the rate."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0

    def start(self, note: str = "") -> StageProgress:
        self._started = self.clock()
        whole = f"{self.total} {self.unit}" if self.total is not None else self.unit
        self.say(f"{self.stage}: started, {whole}{note}")
        if self.bars is not None:
            with _BARS_LOCK:
                self._bar = self.bars.add_task(self.stage, total=self.total)
                self.bars.start()  # a no-op while it shows another stage's bar
        self._thread = threading.Thread(
            target=self._beat, name=f"progress-{self.stage}", daemon=True
        )
        self._thread.start()
        return self

    def update(self, done: int, total: int | None = None) -> None:
        """``done`` units of ``total`` (unchanged when ``None``) are finished."""
        with self._lock:
            self.done = done
            if total is not None:
                self.total = total
        self._show()

    def advance(self, units: int = 1, *, resumed: bool = False) -> None:
        with self._lock:
            self.done += units
            if resumed:
                self.skipped += units
        self._show()

    def _show(self) -> None:
        if self.bars is not None and self._bar is not None:
            with self._lock:
                done, total = self.done, self.total
            self.bars.update(self._bar, completed=done, total=total)

    def line(self) -> str:
        """Done / total, the rate since the start and the time left at that rate."""
        with self._lock:
            done, total, skipped = self.done, self.total, self.skipped
        elapsed = max(self.clock() - self._started, 1e-9)
        rate = (done - skipped) / elapsed
        of = f"/{total}" if total is not None else ""
        text = f"{self.stage}: {done}{of} {self.unit} done after {_span(elapsed)}"
        if rate > 0:
            per = f"{rate * 60:.1f} a minute" if rate < 1 else f"{rate:.1f} a second"
            text += f", {per}"
            if total is not None and total > done:
                text += f", about {_span((total - done) / rate)} left"
        return text

    def _beat(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.say(self.line())

    def finish(self, *, failed: bool = False) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.bars is not None and self._bar is not None:
            with _BARS_LOCK:
                self.bars.remove_task(self._bar)
                if not self.bars.tasks:
                    self.bars.stop()
        took = _span(self.clock() - self._started)
        with self._lock:
            done, total, skipped = self.done, self.total, self.skipped
        of = f"/{total}" if total is not None else ""
        if failed:
            self.say(f"{self.stage}: failed after {took}, {done}{of} {self.unit} done")
            return
        resumed = f" ({skipped} resumed from checkpoints)" if skipped else ""
        self.say(f"{self.stage}: done in {took}, {done}{of} {self.unit}{resumed}")

    def __enter__(self) -> StageProgress:
        return self if self._thread is not None else self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.finish(failed=exc is not None)
