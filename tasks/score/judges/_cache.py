"""Judge calls answered from the ledger (DESIGN §6.1).

A call is cached by (judge, prompt hash, order, sample index). Only calls
that ended ``judged`` are reused: a failure is never an answer, so a re-run
sends the failed pairs again. The lookup is read-only and takes one query
per batch, however many keys it is asked about.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bughunt.models import CallStatus, JudgeCall, Order
from ledger import Ledger
from tasks.score.judges._prompt import build_prompt
from tasks.score.judges._protocol import JudgeRequest


@dataclass(frozen=True, slots=True)
class CacheKey:
    """What makes two judge calls the same call."""

    judge: str
    """Judge name."""
    prompt_hash: str
    """Hash of the exact prompt."""
    order: Order
    """Which agent's report was first."""
    sample_index: int
    """Index among repeated samples of the same ordered pair."""


def key_of(call: JudgeCall) -> CacheKey:
    """The cache key of a recorded call."""
    return CacheKey(call.judge, call.prompt_hash, call.order, call.sample_index)


def usable(call: JudgeCall) -> bool:
    """Whether a recorded call may answer for a new one: judged, with a winner."""
    return call.status is CallStatus.JUDGED and call.winner is not None


def cached_calls(ledger: Ledger, keys: Iterable[CacheKey]) -> dict[CacheKey, JudgeCall]:
    """The latest judged call recorded for each of ``keys`` that has one.

    One read-only query for all keys. A ledger file that does not exist yet
    has no cached call. Rows that are not usable (not ``judged``, or without
    a winner) are never returned.
    """
    wanted = set(keys)
    if not wanted or not ledger.path.exists():
        return {}
    judges = sorted({k.judge for k in wanted})
    hashes = sorted({k.prompt_hash for k in wanted})
    rows = ledger.read(
        JudgeCall,
        "WHERE status = 'judged' AND winner IS NOT NULL "
        "AND list_contains(?::VARCHAR[], judge) AND list_contains(?::VARCHAR[], prompt_hash) "
        "ORDER BY created_at",
        [judges, hashes],
    )
    found: dict[CacheKey, JudgeCall] = {}
    for row in rows:
        key = key_of(row)
        if key in wanted and usable(row):
            found[key] = row  # rows come oldest first: the latest wins
    return found


def cache_key(judge: str, request: JudgeRequest) -> CacheKey:
    """The cache key a call of ``judge`` on ``request`` will have."""
    prompt = build_prompt(request)
    return CacheKey(judge, prompt.prompt_hash, request.order, request.sample_index)


def load_cache(
    ledger: Ledger | None, judge: str, requests: Iterable[JudgeRequest], *, refresh: bool = False
) -> dict[CacheKey, JudgeCall]:
    """The cached answers for ``judge`` on ``requests``: empty with ``refresh`` or no ledger.

    ``refresh`` is ``--refresh-judge``: every pair is sent again (the new
    answers become the cache of later runs).
    """
    if refresh or ledger is None:
        return {}
    return cached_calls(ledger, [cache_key(judge, r) for r in requests])
