"""The judge cache's storage: earlier judge calls, from the ledger or handed in by the flow.

In a run, the flow reads the cache for each score stage (or shard) before it
is submitted, and hands the calls in (:func:`cached_calls`): a stage on a
Dask worker of another machine has no ledger to read, and a read beside the
flow's writes would race them. Other callers (``bughunt judge calibrate``,
the corpus probe) read the ledger directly (:func:`ledger_lookup`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from bughunt.models import JudgeCall
from judging.judges import CacheKey, CallLookup, latest_usable
from ledger import Ledger

PROBE_PREFIX = "probe:"
"""Bias-probe calls' case ids start with this."""


def ledger_lookup(ledger: Ledger | None) -> CallLookup | None:
    """A cache lookup reading ``ledger`` (read-only); ``None`` without a ledger.

    One query per lookup, however many keys. A ledger file that does not
    exist yet has no cached call.
    """
    if ledger is None:
        return None
    store = ledger

    def lookup(wanted: set[CacheKey]) -> dict[CacheKey, JudgeCall]:
        if not wanted or not store.path.exists():
            return {}
        rows = store.read(
            JudgeCall,
            "WHERE status = 'judged' AND winner IS NOT NULL "
            "AND list_contains(?::VARCHAR[], judge) AND list_contains(?::VARCHAR[], prompt_hash) "
            "ORDER BY created_at",
            [sorted({k.judge for k in wanted}), sorted({k.prompt_hash for k in wanted})],
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
    ledger: Ledger, judges: Collection[str], case_ids: Collection[str], *, probes: bool
) -> dict[str, list[JudgeCall]]:
    """The cache a score stage on ``case_ids`` may use, by case id (``probe:…`` ids included
    when ``probes``): the latest usable call of each cache key of ``judges``, oldest first.

    One query, however many cases; the stage's requests pick from it by key. A
    ledger file that does not exist yet has no cached call.
    """
    if not judges or (not case_ids and not probes) or not ledger.path.exists():
        return {}
    rows = ledger.read(
        JudgeCall,
        "WHERE status = 'judged' AND winner IS NOT NULL AND list_contains(?::VARCHAR[], judge) "
        "AND (list_contains(?::VARCHAR[], case_id) OR (? AND starts_with(case_id, ?))) "
        'QUALIFY row_number() OVER (PARTITION BY judge, prompt_hash, "order", sample_index '
        "ORDER BY created_at DESC) = 1 ORDER BY created_at",
        [sorted(judges), sorted(case_ids), probes, PROBE_PREFIX],
    )
    out: dict[str, list[JudgeCall]] = {}
    for call in rows:
        out.setdefault(call.case_id, []).append(call)
    return out
