"""The judge interface every backend implements (docs/judges.md).

A backend only turns a prompt into raw answer text, or raises one of the
transport errors below. Everything else — the prompt, parsing, retries, the
shared deadline, the circuit breaker, caching, ledger rows — is the call
contract's job (``judging/judges/_contract.py``), the same for every
backend.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from bughunt.models import BugReport, Order


class ReportFeatures(BaseModel):
    """What a judge may know about one report besides its text."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    agent_version: str
    """Agent version that wrote it."""
    family: str
    """That agent's model family (self-preference)."""
    words: int = Field(ge=1)
    """Word count of the report as shown to the judge."""
    quality: float = Field(ge=0.0, le=1.0)
    """Quality in [0, 1] from evidence (reproduction outcome, minimality, completeness).
    Real judges ignore it; the simulated judge scores with it (docs/judge-bias.md)."""


class JudgeRequest(BaseModel):
    """One ordered pair of reports, as one call sees it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    case_id: str
    """Case of the pair."""
    order: Order
    """Which agent's report is first."""
    first: BugReport
    """Report shown first."""
    second: BugReport
    """Report shown second."""
    first_features: ReportFeatures
    """Features of the first report."""
    second_features: ReportFeatures
    """Features of the second report."""
    sample_index: int = 0
    """Index among repeated samples of the same ordered pair."""
    agent_sample: int = 0
    """Which of the agents' samples on the case the two reports are (``--agent-samples``)."""


class JudgeError(Exception):
    """Base of the transport errors a backend raises; ``detail`` is safe to log (no keys).

    ``retry_after_s``: how long the judge asked to be left alone before the next
    request (HTTP ``Retry-After`` on a 429 or 503); the call contract waits at
    least that long, or stops when that would pass the call's deadline.
    """

    def __init__(self, detail: str, *, retry_after_s: float | None = None) -> None:
        self.detail = detail
        self.retry_after_s = retry_after_s
        super().__init__(detail)


class RateLimited(JudgeError):
    """HTTP 429 or the backend's equivalent: retried."""


class ServerError(JudgeError):
    """HTTP 5xx or the backend's equivalent: retried."""


class ConnectionFailed(JudgeError):
    """The judge could not be reached: retried."""


class JudgeTimeout(JudgeError):
    """No answer before the deadline: not retried (terminal ``timed_out``)."""


class ClientError(JudgeError):
    """HTTP 400 and other request errors: not retried (terminal ``failed_closed``)."""


class OverBudget(JudgeError):
    """Input over the judge's context budget: not retried (``over_budget``, or
    ``failed_closed`` when the judge is required)."""


@runtime_checkable
class Judge(Protocol):
    """A named judge of one model family, and what answers for it: a model at an endpoint.

    ``model`` and ``endpoint`` are part of every call's cache key
    (docs/judges.md#cache): an answer is reused only by the same judge name,
    model, endpoint and prompt template, so changing what stands behind a
    name never reuses the old answers.
    """

    name: str
    family: str
    required: bool

    @property
    def model(self) -> str:
        """The model that answers (for the simulated judge: its parameters and seed)."""
        ...

    @property
    def endpoint(self) -> str:
        """Where requests go: a base URL, a command line, or ``simulated``."""
        ...

    def complete(self, system: str, user: str, request: JudgeRequest, timeout_s: float) -> str:
        """Send one prompt and return the raw answer text.

        Raises a :class:`JudgeError` subclass on failure; must return or raise
        within ``timeout_s`` seconds (raising :class:`JudgeTimeout` when it
        runs out). Must not retry on its own.
        """
        ...
