"""The judge cache in the ledger (docs/judges.md#cache): the earlier answers a score stage may
reuse, and the rows that clear, prune or adopt them (``bughunt cache``)."""

from tasks.score.judge_cache._admin import (
    CacheGroup,
    adoptable,
    adoption,
    adoption_of,
    cache_stats,
    invalidated,
    invalidation,
)
from tasks.score.judge_cache._lookup import (
    cache_cutoff,
    cached_calls,
    calls_lookup,
    ledger_lookup,
)

__all__ = [
    "CacheGroup",
    "adoptable",
    "adoption",
    "adoption_of",
    "cache_cutoff",
    "cache_stats",
    "cached_calls",
    "calls_lookup",
    "invalidated",
    "invalidation",
    "ledger_lookup",
]
