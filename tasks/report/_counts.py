"""A run's counts, gathered once and said once: the lines every output prints as they are.

``bughunt run nightly|pr``, ``bughunt summary --run``, ``report.md`` and
``report.html`` all print :func:`count_lines`; ``summary.json`` holds the
fields they are read from. Nothing here counts anything: pairs, wins, ties
and unscored pairs are the score stage's ``ScoreSummary`` (``headline``),
judge calls are its ``JudgeHealth`` (``health``), which counts the verdict
calls and the bias-probe calls apart. Pure: numbers and fixed words only,
so the lines need no escaping in any format.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from bughunt.models import RunKind
from tasks.report import _format as fmt
from tasks.report._model import RunSummary
from tasks.score import CallCounts, JudgeHealth

NOT_APART = "not counted apart in this summary (it was stored by an earlier bughunt)"
"""What a call line says for a summary stored before the split."""


class RunCounts(BaseModel):
    """Every count a run's outputs show, read from its summary (``bughunt summary --run --json``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    run_id: str
    """Run."""
    kind: RunKind
    """Nightly, PR, …"""
    judged: bool
    """The score stage judged this run (else every pair count is 0)."""
    pairs: int
    """Candidate/baseline pairs (``headline.pairs``)."""
    decisive: int
    """Pairs won by either side: the win rate's n (``headline.decisive``)."""
    candidate_wins: int
    """Pairs the candidate won (``headline.candidate_wins``)."""
    baseline_wins: int
    """Pairs the baseline won (``headline.baseline_wins``)."""
    ties: int
    """Pairs judged a tie (``headline.ties``)."""
    unscored: int
    """Pairs without a verdict (``headline.unscored``); not the outcome contract's unscored cases."""
    calls_used: int
    """Verdict calls the verdicts rest on (``headline.calls_used``)."""
    verdict_calls: CallCounts | None
    """Calls on the pairs (``health.verdict_calls``); ``None`` when not counted apart."""
    probe_calls: CallCounts | None
    """Bias-probe calls (``health.probe_calls``); ``None`` when not counted apart."""
    all_calls: CallCounts
    """Every judge call, both purposes (``health``'s totals)."""


def run_counts(summary: RunSummary) -> RunCounts:
    """The counts of one run, each read from the one summary field that holds it."""
    h, health = summary.headline, summary.health
    return RunCounts(
        run_id=summary.run_id,
        kind=summary.kind,
        judged=h is not None,
        pairs=h.pairs if h else 0,
        decisive=h.decisive if h else 0,
        candidate_wins=h.candidate_wins if h else 0,
        baseline_wins=h.baseline_wins if h else 0,
        ties=h.ties if h else 0,
        unscored=h.unscored if h else 0,
        calls_used=h.calls_used if h else 0,
        verdict_calls=health.verdict_calls,
        probe_calls=health.probe_calls,
        all_calls=health.all_calls(),
    )


def _calls(label: str, counts: CallCounts | None, used: int | None = None) -> str:
    if counts is None:
        return f"{label}: {NOT_APART}"
    rest = f"sent {counts.sent}, from cache {counts.cache_hits}, requests {counts.requests}"
    if used is not None:
        rest = f"used by the verdicts {used}, {rest}"
    return f"{label}: {counts.calls} — {rest}"


def count_lines(counts: RunCounts) -> list[str]:
    """``Pairs: …``, ``Verdict judge calls: …``, ``Bias-probe judge calls: …``, ``All judge calls: …``.

    Every output prints these lines unchanged, so a count reads the same
    wherever it is shown.
    """
    c = counts
    if c.judged:
        pairs = (
            f"Pairs: {c.pairs} — decisive {c.decisive} (candidate wins {c.candidate_wins}, "
            f"baseline wins {c.baseline_wins}), ties {c.ties}, unscored {c.unscored}"
        )
    else:
        pairs = "Pairs: 0 — the judge did not score this run"
    return [
        pairs,
        _calls("Verdict judge calls", c.verdict_calls, c.calls_used),
        _calls("Bias-probe judge calls", c.probe_calls),
        _calls("All judge calls", c.all_calls),
    ]


NOT_JUDGED = "The judge did not score this run: there is no win rate"
"""The headline of a run without a judged pair."""


def headline_lines(summary: RunSummary) -> list[str]:
    """The run in plain text, worded as its report words it (``bughunt run``, ``bughunt summary``).

    The answer (which version is better, by how much, how sure), the win-rate
    sentence, the length-controlled win rate, :func:`count_lines` and each
    version's reproduction sentence: the same functions the reports render with.
    """
    h = summary.headline
    lines = [summary.answer.sentence] if summary.answer else []
    lines.append(
        f"{summary.candidate} vs {summary.baseline}: {fmt.win_sentence(h) if h else NOT_JUDGED}"
    )
    if h is not None:
        lc = h.length_controlled
        lines.append(f"length-controlled win rate: {fmt.lc_rate(lc, h.win_rate)} — {lc.note}")
    if summary.answer is not None and summary.answer.unseparated is not None:
        lines.append(fmt.unseparated_sentence(summary.answer.unseparated))
    lines += count_lines(run_counts(summary))
    lines += [f"{r.agent_version}: {fmt.repro_sentence(r)}" for r in summary.repro]
    return lines


@dataclass(frozen=True, slots=True)
class CallRow:
    """One row of the judge's call table: a purpose and its counts (``None``: not counted apart)."""

    label: str
    counts: CallCounts | None


def call_rows(health: JudgeHealth) -> list[CallRow]:
    """Verdict calls, bias-probe calls, then all calls (the table in the Judge section)."""
    return [
        CallRow("verdict calls", health.verdict_calls),
        CallRow("bias-probe calls", health.probe_calls),
        CallRow("all calls", health.all_calls()),
    ]
