"""The judge cache's storage: earlier judge calls, read from the ledger in one query per batch."""

from __future__ import annotations

from bughunt.models import JudgeCall
from judging.judges import CacheKey, CallLookup, latest_usable
from ledger import Ledger


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
