"""What the judge cache holds, and the rows that clear, prune or adopt its answers (``bughunt cache``).

Everything here reads (the ledger's ``judge_cache`` view, migration 0016) or
builds rows; ``flows.ledger_writes`` writes them, one bulk write each. Clearing never
deletes a judge call: calls are history people query. It records a
:class:`~bughunt.models.JudgeCacheInvalidation`, and the view leaves out the
answers it names (docs/judges.md#clearing-and-pruning).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict

from bughunt.errors import InputError
from bughunt.models import (
    CacheInvalidation,
    JudgeCacheAdoption,
    JudgeCacheInvalidation,
    utcnow,
)
from judging.judges import JudgeConfig
from ledger import Ledger, arrow_to_rows, current_version
from tasks.score.judge_cache._lookup import CACHE_SCHEMA_VERSION


class CacheGroup(BaseModel):
    """The answers the cache holds for one judge, model and endpoint."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    judge: str
    """Judge name."""
    model: str | None
    """Model; ``None`` for calls recorded before the key had one that nobody adopted (never
    reused: ``bughunt cache adopt``)."""
    endpoint: str | None
    """Endpoint; ``None`` as for ``model``."""
    answers: int
    """Answers the cache may reuse (judged by the judge itself, not cleared or pruned)."""
    oldest: datetime
    """When the oldest of them was recorded."""
    newest: datetime
    """When the newest of them was recorded."""


def _rows(ledger: Ledger, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    """A read of the cache view; a ledger from before 0016 must be migrated first."""
    needs = (CACHE_SCHEMA_VERSION, "the judge cache's key and views")
    return list(ledger.query_arrow(sql, params, needs=needs).to_pylist())


def cache_stats(ledger: Ledger) -> list[CacheGroup]:
    """The answers the cache holds, per judge, model and endpoint (calls from before 0016 that
    nobody adopted last, with no model). One query; the ledger must exist."""
    rows = _rows(
        ledger,
        "SELECT judge, model, endpoint, count(*) AS answers, min(created_at) AS oldest, "
        "max(created_at) AS newest FROM judge_cache GROUP BY ALL "
        "ORDER BY judge, model NULLS LAST, endpoint",
        [],
    )
    return [CacheGroup.model_validate(r) for r in rows]


def invalidation(
    kind: CacheInvalidation,
    *,
    judge: str | None = None,
    model: str | None = None,
    older_than: timedelta | None = None,
    now: datetime | None = None,
) -> JudgeCacheInvalidation:
    """The row that stops the cache reusing answers of ``judge`` and ``model`` (each ``None``:
    all) recorded before ``now`` less ``older_than`` (``clear``: nothing less). An empty or
    blank name raises :class:`InputError` naming its option."""
    for field, value in (("--judge", judge), ("--model", model)):
        if value is not None and not value.strip():
            # An empty name is not "every one": omitting the option says that.
            raise InputError(
                f"give a name (got {value!r}); leave the option out to mean every one",
                field=field,
            )
    at = now if now is not None else utcnow()
    return JudgeCacheInvalidation(
        kind=kind,
        judge=judge,
        model=model,
        recorded_before=at - (older_than or timedelta(0)),
        recorded_at=at,
    )


def invalidated(ledger: Ledger, row: JudgeCacheInvalidation) -> int:
    """How many answers the cache holds now that ``row`` would stop it reusing."""
    found = _rows(
        ledger,
        "SELECT count(*) AS n FROM judge_cache WHERE created_at < ? "
        "AND (?::VARCHAR IS NULL OR judge = ?) AND (?::VARCHAR IS NULL OR model = ?)",
        [row.recorded_before, row.judge, row.judge, row.model, row.model],
    )
    return int(found[0]["n"])


def adoption_of(ledger: Ledger, judge: str) -> JudgeCacheAdoption | None:
    """The adoption of ``judge``'s calls from before 0016 that holds (its first), if any."""
    with ledger.reader() as con:
        if current_version(con) < CACHE_SCHEMA_VERSION:
            return None
        table = con.sql(
            "SELECT * FROM judge_cache_adoptions WHERE judge = ? ORDER BY recorded_at LIMIT 1",
            params=[judge],
        ).to_arrow_table()
    rows = arrow_to_rows(JudgeCacheAdoption, table)
    return rows[0] if rows else None


def adoptable(ledger: Ledger, judge: str) -> int:
    """How many of ``judge``'s answers were recorded before the key had a model and are not
    adopted (nor cleared): what ``bughunt cache adopt`` would let the cache reuse."""
    found = _rows(
        ledger,
        "SELECT count(*) AS n FROM judge_cache WHERE judge = ? AND model IS NULL",
        [judge],
    )
    return int(found[0]["n"])


def adoption(config: JudgeConfig, now: datetime | None = None) -> JudgeCacheAdoption:
    """The row that lets the cache reuse ``config``'s calls from before 0016 as answers of the
    model and endpoint it names now (:meth:`JudgeConfig.identity`; no key is read)."""
    who = config.identity()
    return JudgeCacheAdoption(
        judge=config.name,
        model=who.model,
        endpoint=who.endpoint,
        recorded_at=now if now is not None else utcnow(),
    )
