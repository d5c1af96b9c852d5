"""What the score stage knows of each report: the report itself and its sandbox evidence.

A report's *quality* (what the simulated judge scores; real judges read the
text instead) comes from evidence, not from its prose: whether its
reproduction test reproduced the bug, how small that test is, and whether
the report says what was expected and what happened. Padding a report adds
words, never quality — which is exactly what the verbosity probe measures.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from bughunt.models import BugReport, ReproOutcome
from judging.bias import report_words

_BASE = {
    ReproOutcome.REPRODUCED: 0.65,
    ReproOutcome.FLAKY: 0.35,
    ReproOutcome.NOT_REPRODUCED: 0.25,
    ReproOutcome.ERROR: 0.10,
}


class ReportEvidence(BaseModel):
    """One agent version's report on one case, with what the sandbox showed."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    case_id: str
    """Case id."""
    agent_version: str
    """Agent version."""
    family: str
    """Its model family."""
    report: BugReport | None
    """The validated report; ``None`` when there is no usable report."""
    unusable_reason: str | None = None
    """Why there is no usable report (malformed JSON, missing field, agent crash)."""
    outcome: ReproOutcome
    """What its reproduction test showed."""
    reason: str | None = None
    """Why, for anything but a clean reproduction."""
    sample: int = 0
    """Which of the agent's samples on the case (``--agent-samples``)."""


def report_quality(evidence: ReportEvidence) -> float:
    """Quality in [0, 1] from evidence: reproduction outcome, test size, completeness.

    0.65 for a reproduced bug (0.35 flaky, 0.25 not reproduced, 0.10 error),
    up to +0.20 for a short reproduction test (≤ 10 non-blank lines gets it
    all, ≥ 60 nothing) and +0.05 for each of expected, actual and root cause
    stated. A missing report has quality 0.
    """
    report = evidence.report
    if report is None:
        return 0.0
    lines = sum(1 for line in report.repro_test.splitlines() if line.strip())
    minimal = 0.20 * min(1.0, max(0.0, (60 - lines) / 50))
    stated = 0.05 * sum(
        1 for text in (report.expected, report.actual, report.root_cause) if text.strip()
    )
    return round(min(1.0, _BASE[evidence.outcome] + minimal + stated), 6)


def words_of(evidence: ReportEvidence) -> int:
    """Words of the report as shown to a judge (at least 1)."""
    return max(1, report_words(evidence.report)) if evidence.report is not None else 1
