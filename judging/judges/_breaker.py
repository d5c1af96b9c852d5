"""The circuit breaker shared by the calls of one run (docs/judges.md#the-call-contract).

When a judge keeps failing, sending it the rest of the night's pairs only
costs money and time and yields nothing. After ``consecutive`` failed calls in
a row, or ``failures`` failed calls among the last ``window`` calls, the
breaker opens and stays open for the rest of the run: every call not yet sent
ends ``aborted`` without a request, and the run is reported degraded.

What counts: a call that ended ``timed_out`` or ``failed_closed`` because of
the judge is a failure; a ``judged`` call is a success. Calls stopped for an
oversized input (``over_budget``, whether or not the judge is required) say
nothing about the judge's health and are not counted; neither are cached or
aborted calls. Thread-safe: one breaker is shared by a whole batch.
"""

from __future__ import annotations

import threading
from collections import deque

DEFAULT_CONSECUTIVE = 5
DEFAULT_FAILURES = 10
DEFAULT_WINDOW = 20


class Breaker:
    """Opens after K consecutive failures or F failures among the last W calls."""

    def __init__(
        self,
        consecutive: int = DEFAULT_CONSECUTIVE,
        failures: int = DEFAULT_FAILURES,
        window: int = DEFAULT_WINDOW,
    ) -> None:
        if consecutive < 1:
            raise ValueError("consecutive must be at least 1")
        if not 1 <= failures <= window:
            raise ValueError("failures must be between 1 and window")
        self.consecutive = consecutive
        self.failures = failures
        self.window = window
        self._lock = threading.Lock()
        self._recent: deque[bool] = deque(maxlen=window)
        self._streak = 0
        self._reason: str | None = None

    def allow(self) -> bool:
        """Whether a call may still be sent (the breaker is closed)."""
        with self._lock:
            return self._reason is None

    def record(self, ok: bool) -> None:
        """Count one finished call: ``ok`` for judged, ``False`` for a judge failure."""
        with self._lock:
            self._recent.append(ok)
            self._streak = 0 if ok else self._streak + 1
            if self._reason is not None:
                return
            failed = sum(1 for r in self._recent if not r)
            if self._streak >= self.consecutive:
                self._reason = (
                    f"circuit breaker opened after {self._streak} consecutive failed judge calls"
                )
            elif failed >= self.failures:
                self._reason = (
                    f"circuit breaker opened after {failed} failed judge calls "
                    f"among the last {len(self._recent)}"
                )

    @property
    def degraded(self) -> bool:
        """True once the breaker has opened: some calls of the run were not sent."""
        return not self.allow()

    @property
    def reason(self) -> str | None:
        """Why the breaker opened, in plain words; ``None`` while closed."""
        with self._lock:
            return self._reason
