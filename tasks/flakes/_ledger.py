"""The flake ledger's read side: current records, the stage's convenience, the CLI's queries.

Everything here only reads (docs/architecture.md#the-stages: the flow process writes the rows the
stage returns, in one bulk write).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

import pyarrow as pa

from bughunt.models import FlakeRecord, FlakeState, Observation, utcnow
from bughunt.spans import parse_span
from ledger import Ledger, arrow_to_rows
from tasks.flakes._config import FlakeThresholds
from tasks.flakes._fold import update_flakes

FLAKE_SCHEMA_VERSION = 4
"""The ledger migration that created the flake views."""

DISAGREED_STATES: tuple[FlakeState, ...] = (
    FlakeState.FLAKY,
    FlakeState.SUSPECTED,
    FlakeState.CLEARED,
)
"""What ``bughunt flakes`` lists by default: keys that have passed and failed."""


class TrendBy(StrEnum):
    """How ``bughunt flakes trend`` splits each night."""

    NIGHT = "night"
    CATEGORY = "category"
    AGENT = "agent"


_TREND_VIEWS: dict[TrendBy, tuple[str, str]] = {
    TrendBy.NIGHT: ("flake_nightly", "night"),
    TrendBy.CATEGORY: ("flake_nightly_by_category", "night, category"),
    TrendBy.AGENT: ("flake_nightly_by_agent", "night, agent_version"),
}


def _naive_utc(moment: datetime) -> datetime:
    """The ledger's TIMESTAMP columns hold naive UTC."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _query(ledger: Ledger, sql: str, params: Sequence[Any] = ()) -> pa.Table:
    return ledger.query_arrow(sql, params, needs=(FLAKE_SCHEMA_VERSION, "the flake views"))


def current_flakes(ledger: Ledger, case_hashes: Iterable[str] | None = None) -> list[FlakeRecord]:
    """The latest row of every key (view ``flake_current``), optionally only for ``case_hashes``.

    A ledger file that does not exist yet has no flake records.
    """
    if not ledger.path.exists():
        return []
    # Name the model's columns: a column another migration adds later cannot break the read.
    columns = ", ".join(f'"{name}"' for name in FlakeRecord.model_fields)
    sql = f"SELECT {columns} FROM flake_current"  # noqa: S608  (column names from the model)
    params: list[Any] = []
    if case_hashes is not None:
        sql += " WHERE list_contains(?, case_hash)"
        params.append(sorted(set(case_hashes)))
    sql += " ORDER BY case_hash, agent_version, test_hash, tree, image_id"
    return arrow_to_rows(FlakeRecord, _query(ledger, sql, params))


def flake_update(
    ledger_reader: Ledger,
    observations: Sequence[Observation],
    run_id: str,
    thresholds: FlakeThresholds,
    now: datetime | None = None,
) -> list[FlakeRecord]:
    """Stage 4: the flake ledger rows for one run's observations, for the flow to write.

    Reads the previous records of the keys concerned (read-only); writes
    nothing. ``now`` defaults to the current time. See :func:`update_flakes`.
    """
    hashes = {o.case_hash for o in observations if o.case_hash is not None}
    previous = current_flakes(ledger_reader, hashes) if hashes else []
    return update_flakes(
        previous,
        observations,
        run_id,
        thresholds,
        now if now is not None else utcnow(),
    )


def parse_since(text: str) -> timedelta:
    """``30d`` or ``12h`` as a time span; anything else raises :class:`InputError`."""
    return parse_span(text, field="--since")


def list_flakes(
    ledger: Ledger,
    states: Collection[FlakeState] | None = None,
    since: timedelta | None = None,
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """Current keys in ``states`` (default: flaky, suspected, cleared) seen within ``since``.

    Flaky first, then suspected, cleared, failing, passing; within a state,
    highest flake rate first. Each row carries the case's category.
    """
    wanted = sorted(states or DISAGREED_STATES)
    sql = (
        "SELECT f.case_id, coalesce(c.category, 'unknown') AS category, f.agent_version, "
        "f.tree, f.state, f.runs, f.passes, f.fails, f.undecided, f.flips, "
        "f.consecutive_consistent, f.flake_rate, f.ci_low, f.ci_high, f.last_decided, "
        "f.first_seen, f.last_seen, f.last_flip_at, f.case_hash, f.test_hash, f.image_id, "
        "f.run_id FROM flake_current f LEFT JOIN case_categories c USING (case_hash) "
        "WHERE list_contains(?, f.state)"
    )
    params: list[Any] = [[str(s) for s in wanted]]
    if since is not None:
        sql += " AND f.last_seen >= ?"
        params.append(_naive_utc((now or utcnow()) - since))
    sql += (
        " ORDER BY list_position(['flaky', 'suspected', 'cleared', 'failing', 'passing'], "
        "f.state), f.flake_rate DESC, f.case_id, f.agent_version, f.tree, f.case_hash, "
        "f.test_hash, f.image_id"
    )
    return list(_query(ledger, sql, params).to_pylist())


def flake_trend(
    ledger: Ledger,
    by: TrendBy = TrendBy.NIGHT,
    since: timedelta | None = None,
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """The series of view ``flake_nightly`` (or its ``_by_category`` / ``_by_agent`` form).

    One row per night (and category or agent), oldest first; with ``since``,
    only nights on or after the UTC date ``since`` ago.
    """
    view, order = _TREND_VIEWS[by]
    sql = f"SELECT * FROM {view}"  # noqa: S608  (view and order come from the closed map above)
    params: list[Any] = []
    if since is not None:
        sql += " WHERE night >= ?"
        params.append(_naive_utc((now or utcnow()) - since).date())
    sql += f" ORDER BY {order}"
    return list(_query(ledger, sql, params).to_pylist())
