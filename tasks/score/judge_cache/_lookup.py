"""The judge cache's storage: earlier judge calls, from the ledger or handed in by the flow.

The ledger's view ``judge_cache`` (migration 0016) holds every answer the
cache may reuse: calls the judge itself answered, not cleared or pruned, each
under its full key (docs/judges.md#cache). Every read here goes through it;
``not_before`` (from ``--judge-cache-ttl``) leaves out answers recorded
earlier.

In a run, the flow reads the cache for each score stage (or shard) before it
is submitted, and hands the calls in (:func:`cached_calls`): a stage on a
Dask worker of another machine has no ledger to read, and a read beside the
flow's writes would race them. Other callers (``bughunt judge calibrate``,
the corpus probe) read the ledger directly (:func:`ledger_lookup`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime, timedelta

from bughunt.models import JudgeCall, utcnow
from judging.judges import CacheKey, CallLookup, latest_usable
from ledger import Ledger, arrow_to_rows, current_version

PROBE_PREFIX = "probe:"
"""Bias-probe calls' case ids start with this."""

CACHE_VIEW = "judge_cache"
"""The ledger view of the answers the cache may reuse."""
CACHE_SCHEMA_VERSION = 16
"""The ledger migration that gave the cache key a model, an endpoint and a template version."""


def cache_cutoff(ttl_s: float | None, now: datetime | None = None) -> datetime | None:
    """The oldest time a reused answer may have been recorded at, for a time to live of
    ``ttl_s`` seconds (``--judge-cache-ttl``); ``None`` without one (no limit)."""
    if ttl_s is None:
        return None
    return (now if now is not None else utcnow()) - timedelta(seconds=ttl_s)


def _read(ledger: Ledger, conditions: str, params: list[object]) -> list[JudgeCall]:
    """Answers the cache may reuse meeting ``conditions`` (SQL after ``AND``: code, never input;
    the values are ``params``), as calls: the view has judge_calls' columns.

    A ledger not yet migrated to :data:`CACHE_SCHEMA_VERSION` has none: its
    calls were recorded before the key had a model (a writer migrates it).
    """
    sql = f"SELECT * FROM {CACHE_VIEW} WHERE model IS NOT NULL AND {conditions}"  # noqa: S608
    with ledger.reader() as con:
        if current_version(con) < CACHE_SCHEMA_VERSION:
            return []
        table = con.sql(sql, params=params).to_arrow_table()
    return arrow_to_rows(JudgeCall, table)


def _since(not_before: datetime | None) -> tuple[str, list[object]]:
    """The condition (and its parameter) leaving out answers recorded before ``not_before``."""
    if not_before is None:
        return "", []
    return " AND created_at >= ?", [not_before]


def ledger_lookup(
    ledger: Ledger | None, *, not_before: datetime | None = None
) -> CallLookup | None:
    """A cache lookup reading ``ledger`` (read-only); ``None`` without a ledger.

    One query per lookup, however many keys. Answers recorded before
    ``not_before`` are not reused. A ledger file that does not exist yet has no
    cached call.
    """
    if ledger is None:
        return None
    store = ledger

    def lookup(wanted: set[CacheKey]) -> dict[CacheKey, JudgeCall]:
        if not wanted or not store.path.exists():
            return {}
        since, since_params = _since(not_before)
        rows = _read(
            store,
            "list_contains(?::VARCHAR[], judge) AND list_contains(?::VARCHAR[], prompt_hash)"
            f"{since} ORDER BY created_at",
            [
                sorted({k.judge for k in wanted}),
                sorted({k.prompt_hash for k in wanted}),
                *since_params,
            ],
        )
        return latest_usable(rows, wanted)

    return lookup


def calls_lookup(calls: Iterable[JudgeCall]) -> CallLookup:
    """A cache lookup over calls already read (oldest first), in memory."""
    kept = list(calls)

    def lookup(wanted: set[CacheKey]) -> dict[CacheKey, JudgeCall]:
        return latest_usable(kept, wanted)

    return lookup


def cached_calls(
    ledger: Ledger,
    judges: Collection[str],
    case_ids: Collection[str],
    *,
    probes: bool,
    not_before: datetime | None = None,
) -> dict[str, list[JudgeCall]]:
    """The cache a score stage on ``case_ids`` may use, by case id (``probe:…`` ids included
    when ``probes``): the latest answer of each cache key of ``judges`` recorded no earlier
    than ``not_before``, oldest first.

    One query, however many cases; the stage's requests pick from it by key. A
    ledger file that does not exist yet has no cached call.
    """
    if not judges or (not case_ids and not probes) or not ledger.path.exists():
        return {}
    since, since_params = _since(not_before)
    rows = _read(
        ledger,
        "list_contains(?::VARCHAR[], judge) "
        f"AND (list_contains(?::VARCHAR[], case_id) OR (? AND starts_with(case_id, ?))){since} "
        "QUALIFY row_number() OVER (PARTITION BY judge, model, endpoint, template_version, "
        'prompt_hash, "order", sample_index ORDER BY created_at DESC) = 1 ORDER BY created_at',
        [sorted(judges), sorted(case_ids), probes, PROBE_PREFIX, *since_params],
    )
    out: dict[str, list[JudgeCall]] = {}
    for call in rows:
        out.setdefault(call.case_id, []).append(call)
    return out
