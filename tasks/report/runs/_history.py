"""Past runs of one kind, read from the ledger's views for the report's charts (docs/report.md#history).

One read-only query per series, each over a view that carries the run's kind
(migration 0011): ``win_rate_history``, ``repro_history``,
``flake_nightly_by_kind`` and ``judge_bias_history`` (probe ``position``,
metric ``consistent``: the share of near-identical pairs judged the same in
both orders). A series holds runs of one kind only, nightly by default: a PR
run is never a point of the nightly trend.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from bughunt.errors import TerminalError
from bughunt.models import RunKind
from ledger import Ledger

DEFAULT_LIMIT = 30
"""Runs (or nights) per series."""


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class WinRatePoint(_Out):
    """Candidate win rate of one run (view ``win_rate_history``)."""

    run_id: str
    """Run."""
    run_at: datetime
    """Its first verdict's time (UTC)."""
    kind: RunKind
    """The run's kind."""
    baseline: str | None
    """Baseline agent version."""
    candidate: str | None
    """Candidate agent version."""
    pairs: int
    """Pairs judged."""
    decisive: int
    """Pairs won by either side (the rate's n)."""
    candidate_wins: int
    """Pairs the candidate won."""
    ties: int
    """Ties."""
    unscored: int
    """Unscored pairs."""
    win_rate: float | None
    """candidate_wins / decisive; null with no decisive pair."""
    ci_low: float | None
    """Wilson 95% lower bound."""
    ci_high: float | None
    """Wilson 95% upper bound."""


class ReproPoint(_Out):
    """Reproduction rate of one agent version in one run (view ``repro_history``)."""

    run_id: str
    """Run."""
    run_at: datetime
    """Its first reproduction row's time (UTC)."""
    kind: RunKind
    """The run's kind."""
    agent_version: str
    """Agent version."""
    cases: int
    """Cases."""
    reproduced: int
    """Reproduced."""
    decided: int
    """Reproduced or not (flaky and error left out): the rate's n."""
    rate: float | None
    """reproduced / decided; null when nothing was decided."""
    ci_low: float | None
    """Wilson 95% lower bound."""
    ci_high: float | None
    """Wilson 95% upper bound."""


class FlakePoint(_Out):
    """Share of the test keys a night's runs of one kind executed that are flaky
    (view ``flake_nightly_by_kind``)."""

    night: date
    """Night (UTC date)."""
    kind: RunKind
    """Kind of the runs counted."""
    keys: int
    """Test keys executed that night."""
    flaky: int
    """Keys in state flaky."""
    suspected: int
    """Keys in state suspected."""
    flake_rate: float
    """flaky / keys."""
    ci_low: float | None
    """Wilson 95% lower bound."""
    ci_high: float | None
    """Wilson 95% upper bound."""


class ConsistencyPoint(_Out):
    """A judge's position consistency in one run (view ``judge_bias_history``)."""

    run_id: str
    """Run."""
    measured_at: datetime
    """When it was measured (UTC)."""
    kind: RunKind
    """The run's kind."""
    judge: str
    """Judge or jury."""
    value: float | None
    """Share of position-probe pairs judged the same in both orders; null with none decided."""
    ci_low: float | None
    """Wilson 95% lower bound."""
    ci_high: float | None
    """Wilson 95% upper bound."""
    n: int
    """Probe pairs."""


class History(_Out):
    """The series the report charts, oldest first. Empty lists: no history yet."""

    win_rate: list[WinRatePoint] = []
    """Candidate win rate per run."""
    repro: list[ReproPoint] = []
    """Reproduction rate per run and agent version."""
    flakes: list[FlakePoint] = []
    """Flake rate per night."""
    consistency: list[ConsistencyPoint] = []
    """Judge position consistency per run."""
    kind: RunKind = RunKind.NIGHTLY
    """The kind of run every point is of (the nightly trend by default)."""
    until_run_id: str | None = None
    """The run the history ends at (``None``: everything in the ledger)."""
    limit: int = DEFAULT_LIMIT
    """Runs or nights kept per series."""

    @model_validator(mode="after")
    def _one_kind(self) -> History:
        """Every point is of ``kind``: a PR run can never be a point of the nightly trend."""
        points: list[WinRatePoint | ReproPoint | FlakePoint | ConsistencyPoint] = [
            *self.win_rate,
            *self.repro,
            *self.flakes,
            *self.consistency,
        ]
        other = sorted({p.kind.value for p in points if p.kind is not self.kind})
        if other:
            raise ValueError(
                f"a {self.kind.value} history holds points of other kinds: {', '.join(other)}"
            )
        return self

    def is_empty(self) -> bool:
        """True when no series has a point."""
        return not (self.win_rate or self.repro or self.flakes or self.consistency)


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# The latest time any row of the run was written: verdicts, reproductions,
# probes and flake folds. Its `runs` and `stage_outputs` rows count only through
# their earliest time: a resumed run appends them later, which would pull later
# runs in. Parameters: the run id, six times.
_CUTOFF = """
SELECT max(t) AS cutoff, count(t) AS found FROM (
    SELECT created_at AS t FROM verdicts WHERE run_id = ?
    UNION ALL SELECT created_at FROM reproductions WHERE run_id = ?
    UNION ALL SELECT created_at FROM bias_probes WHERE run_id = ?
    UNION ALL SELECT updated_at FROM flake_ledger WHERE run_id = ?
    UNION ALL SELECT min(recorded_at) FROM runs WHERE run_id = ? HAVING count(*) > 0
    UNION ALL SELECT min(recorded_at) FROM stage_outputs WHERE run_id = ? HAVING count(*) > 0
)
"""

# Every series query takes (cutoff, run id, kind, limit), the first three through
# the CTE `p`; a null cutoff means the whole ledger. Only rows of runs of that kind
# count (a run without a `runs` row has no kind, and counts for none).
_WIN_RATE = """
WITH p AS (
    SELECT CAST(? AS TIMESTAMP) AS cutoff, CAST(? AS VARCHAR) AS run, CAST(? AS VARCHAR) AS kind
)
SELECT run_id, run_at, win_rate_history.kind, baseline, candidate, pairs, decisive,
       candidate_wins, ties, unscored, win_rate, ci_low, ci_high
FROM win_rate_history, p
WHERE win_rate_history.kind = p.kind
  AND (p.cutoff IS NULL OR run_at <= p.cutoff OR run_id = p.run)
ORDER BY run_at DESC, run_id DESC
LIMIT ?
"""

_REPRO = """
WITH p AS (
    SELECT CAST(? AS TIMESTAMP) AS cutoff, CAST(? AS VARCHAR) AS run, CAST(? AS VARCHAR) AS kind
),
h AS (
    SELECT repro_history.* FROM repro_history, p
    WHERE repro_history.kind = p.kind
      AND (p.cutoff IS NULL OR run_at <= p.cutoff OR run_id = p.run)
),
recent AS (
    SELECT run_id FROM h GROUP BY run_id ORDER BY min(run_at) DESC, run_id DESC LIMIT ?
)
SELECT run_id, run_at, kind, agent_version, cases, reproduced,
       reproduced + not_reproduced AS decided, rate, ci_low, ci_high
FROM h WHERE run_id IN (SELECT run_id FROM recent)
ORDER BY run_at DESC, run_id DESC, agent_version DESC
"""

_FLAKES = """
WITH p AS (
    SELECT CAST(? AS TIMESTAMP) AS cutoff, CAST(? AS VARCHAR) AS run, CAST(? AS VARCHAR) AS kind
)
SELECT night, flake_nightly_by_kind.kind, keys, flaky, suspected, flake_rate, ci_low, ci_high
FROM flake_nightly_by_kind, p
WHERE flake_nightly_by_kind.kind = p.kind
  AND (p.cutoff IS NULL OR night <= CAST(p.cutoff AS DATE))
ORDER BY night DESC
LIMIT ?
"""

_CONSISTENCY = """
WITH p AS (
    SELECT CAST(? AS TIMESTAMP) AS cutoff, CAST(? AS VARCHAR) AS run, CAST(? AS VARCHAR) AS kind
),
h AS (
    SELECT judge_bias_history.* FROM judge_bias_history, p
    WHERE probe = 'position' AND metric = 'consistent' AND strategy = 'single'
      AND judge_bias_history.kind = p.kind
      AND (p.cutoff IS NULL OR measured_at <= p.cutoff OR run_id = p.run)
),
recent AS (
    SELECT run_id FROM h GROUP BY run_id ORDER BY min(measured_at) DESC, run_id DESC LIMIT ?
)
SELECT run_id, measured_at, kind, judge, value, ci_low, ci_high, n
FROM h WHERE run_id IN (SELECT run_id FROM recent)
ORDER BY measured_at DESC, run_id DESC, judge DESC
"""


def _rows(store: Ledger, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    return store.query(sql, params)


def load_history(
    ledger: Ledger,
    *,
    until_run_id: str | None = None,
    limit: int = DEFAULT_LIMIT,
    kind: RunKind = RunKind.NIGHTLY,
) -> History:
    """The last ``limit`` runs (nights for flakes) of ``kind`` in every series, oldest first.

    Only runs of ``kind`` are points (nightly by default: a PR run, ad-hoc
    probe or ingest is never in the nightly trend). With ``until_run_id``,
    only what the ledger knew when that run finished: rows no later than the
    run's latest verdict, reproduction, probe or flake row (and the run's own
    rows, when it is of ``kind``). Raises ``TerminalError`` when the run has
    no row at all, or when the ledger file does not exist. Read-only.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    cutoff: datetime | None = None
    if until_run_id is not None:
        found = _rows(ledger, _CUTOFF, [until_run_id] * 6)[0]
        if not found["found"]:
            raise TerminalError(f"no run {until_run_id!r} in the ledger", file=str(ledger.path))
        cutoff = found["cutoff"]
    params = [cutoff, until_run_id, kind.value, limit]
    win = _rows(ledger, _WIN_RATE, params)
    repro = _rows(ledger, _REPRO, params)
    flakes = _rows(ledger, _FLAKES, params)
    consistency = _rows(ledger, _CONSISTENCY, params)
    return History(
        win_rate=[WinRatePoint(**{**r, "run_at": _utc(r["run_at"])}) for r in reversed(win)],
        repro=[ReproPoint(**{**r, "run_at": _utc(r["run_at"])}) for r in reversed(repro)],
        flakes=[FlakePoint(**r) for r in reversed(flakes)],
        consistency=[
            ConsistencyPoint(**{**r, "measured_at": _utc(r["measured_at"])})
            for r in reversed(consistency)
        ],
        kind=kind,
        until_run_id=until_run_id,
        limit=limit,
    )
