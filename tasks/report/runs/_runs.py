"""Runs at a glance (``bughunt runs``): one row per run, from the ledger alone.

Each run's events (``runs``: its start, its closing row) give its kind, when
it started, how long it took and how it ended; the summary its report stage
stored gives the headline (the candidate's win rate with its interval), the
gate and the unscored pairs. A run that never reached its report has none of
those, and says so with empty fields, never zeros. Read-only.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from bughunt.errors import InputError
from bughunt.models import RunKind, RunStatus
from ledger import Ledger
from tasks.report import RunSummary, default_out_dir
from tasks.report._write import REPORT_STAGE


class RunRow(BaseModel):
    """One run, as ``bughunt runs`` lists it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    run_id: str
    """The run's id."""
    kind: RunKind
    """Nightly, PR, ..."""
    status: RunStatus
    """Its latest event: running (or killed before it closed), completed, failed."""
    started_at: datetime
    """Its first event (UTC)."""
    duration_s: float | None
    """From its first event to its closing one; ``None`` while it has not closed."""
    corpus: str | None
    """The corpus it evaluated."""
    baseline: str | None
    """The baseline agent."""
    candidate: str | None
    """The candidate agent."""
    judged: bool | None
    """Whether its pairs were judged; ``None``: it has no report (yet)."""
    win_rate: float | None
    """The candidate's win rate over decisive pairs; ``None``: none decisive, or not judged."""
    win_rate_ci: tuple[float, float] | None
    """Its Wilson 95% interval."""
    decisive: int | None
    """Decisive pairs behind the win rate."""
    gate: str | None
    """The PR gate's outcome (a PR run), else ``None``."""
    unscored: int | None
    """Pairs left unscored (``bughunt unscored --run``); ``None``: no report yet."""
    report: str | None
    """Its ``report.html`` where the run left it beside the ledger; ``None`` when not there."""

    def headline(self) -> str:
        """``0.62 [0.41, 0.80] of 13`` or a word for why there is none."""
        if self.judged is None:
            return "no report"
        if not self.judged:
            return "not judged"
        if self.win_rate is None:
            return "no decisive pair"
        low, high = self.win_rate_ci or (None, None)
        interval = f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else ""
        return f"{self.win_rate:.2f}{interval} of {self.decisive}"


_EVENTS = """
SELECT run_id, min(recorded_at) AS started_at,
       arg_max(status, recorded_at) AS status,
       max(recorded_at) FILTER (WHERE status <> 'running') AS closed_at,
       arg_max(kind, recorded_at) AS kind,
       arg_max(corpus, recorded_at) AS corpus,
       arg_max(baseline, recorded_at) AS baseline,
       arg_max(candidate, recorded_at) AS candidate
FROM runs
GROUP BY run_id
"""


def list_runs(
    ledger: Ledger,
    *,
    kind: RunKind | None = None,
    since: timedelta | None = None,
    now: datetime | None = None,
) -> list[RunRow]:
    """Every run (of ``kind``; started within ``since``), newest first."""
    sql = f"SELECT * FROM ({_EVENTS}) WHERE TRUE"  # noqa: S608  (a constant, no input in it)
    params: list[Any] = []
    if kind is not None:
        sql += " AND kind = ?"
        params.append(kind.value)
    if since is not None:
        start = (now or datetime.now(UTC)) - since
        sql += " AND started_at >= ?"
        params.append(start.replace(tzinfo=None))
    events = ledger.query(sql + " ORDER BY started_at DESC, run_id", params)
    summaries = _summaries(ledger, [e["run_id"] for e in events])
    return [_row(ledger, e, summaries.get(e["run_id"])) for e in events]


def _summaries(ledger: Ledger, run_ids: list[str]) -> dict[str, RunSummary]:
    """The latest stored summary of each run that has one (one query for them all)."""
    if not run_ids:
        return {}
    rows = ledger.query(
        "SELECT run_id, arg_max(payload, recorded_at) AS payload FROM stage_outputs "
        "WHERE stage = ? AND list_contains(?, run_id) GROUP BY run_id",
        [REPORT_STAGE, run_ids],
    )
    out = {}
    for row in rows:
        payload = row["payload"]
        try:
            out[row["run_id"]] = RunSummary.model_validate(
                json.loads(payload) if isinstance(payload, str) else payload
            )
        except ValueError:
            continue  # an unreadable summary: the run is listed without one (`report` says why)
    return out


def _row(ledger: Ledger, event: dict[str, Any], summary: RunSummary | None) -> RunRow:
    started, closed = event["started_at"], event["closed_at"]
    h = summary.headline if summary is not None else None
    gate = summary.gate.outcome.value if summary is not None and summary.gate else None
    unscored = (h.unscored if h is not None else 0) if summary is not None else None
    return RunRow(
        run_id=event["run_id"],
        kind=RunKind(event["kind"]),
        status=RunStatus(event["status"]),
        started_at=started.replace(tzinfo=UTC),
        duration_s=(closed - started).total_seconds() if closed is not None else None,
        corpus=event["corpus"],
        baseline=event["baseline"],
        candidate=event["candidate"],
        judged=(h is not None) if summary is not None else None,
        win_rate=h.win_rate if h is not None else None,
        win_rate_ci=h.win_rate_ci if h is not None else None,
        decisive=h.decisive if h is not None else None,
        gate=gate,
        unscored=unscored,
        report=_report_path(ledger, event["run_id"]),
    )


def _report_path(ledger: Ledger, run_id: str) -> str | None:
    try:
        path = default_out_dir(ledger, run_id) / "report.html"
    except InputError:  # an id ingested from outside that is no folder name
        return None
    return str(path) if Path(path).is_file() else None


def resolve_run_id(ledger: Ledger, given: str) -> str:
    """The run ``given`` names: itself, or the one run whose id starts with it.

    Runs are those with events or a stored report. Raises :class:`InputError`
    naming the candidates when several start with it, or the nearest ids when
    none does but some are close; otherwise ``given`` as it is (the caller
    then says there is no such run).
    """
    rows = ledger.query(
        "SELECT run_id FROM runs UNION SELECT run_id FROM stage_outputs WHERE stage = ? ORDER BY 1",
        [REPORT_STAGE],
    )
    ids = [str(r["run_id"]) for r in rows]
    if given in ids:
        return given
    starting = [i for i in ids if i.startswith(given)]
    if len(starting) == 1:
        return starting[0]
    if starting:
        shown = ", ".join(starting[:8]) + (" …" if len(starting) > 8 else "")
        raise InputError(
            f"{len(starting)} runs start with {given!r}: {shown}; give more of the id",
            field="run",
        )
    # difflib rather than a library: the ids are a short list and a close match is all it takes
    import difflib

    near = difflib.get_close_matches(given, ids, n=5, cutoff=0.6)
    if near:
        raise InputError(
            f"no run {given!r} in the ledger; the nearest: {', '.join(near)}", field="run"
        )
    return given


def previous_nightly(ledger: Ledger, summary: RunSummary) -> RunSummary | None:
    """The summary of the latest nightly that started before ``summary``'s run, if any."""
    from tasks.report import find_summary

    rows = ledger.query(
        f"SELECT run_id FROM ({_EVENTS}) WHERE kind = 'nightly' AND run_id <> ? "  # noqa: S608
        "AND started_at < ? AND run_id IN (SELECT run_id FROM stage_outputs WHERE stage = ?) "
        "ORDER BY started_at DESC LIMIT 1",
        [summary.run_id, summary.started_at.astimezone(UTC).replace(tzinfo=None), REPORT_STAGE],
    )
    return find_summary(ledger, rows[0]["run_id"]) if rows else None
