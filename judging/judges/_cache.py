"""Judge calls answered from earlier calls (the cache's keys and rules, not its storage).

A call is cached by (judge, prompt hash, order, sample index). Only calls
that ended ``judged`` are reused: a failure is never an answer, so a re-run
sends the failed pairs again. Where earlier calls are kept is the caller's
business: it passes a :data:`CallLookup` (the score stage's reads the ledger
in one query per batch).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bughunt.models import CallStatus, JudgeCall, Order
from judging.judges._prompt import build_prompt
from judging.judges._protocol import JudgeRequest


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


CallLookup = Callable[[set[CacheKey]], dict[CacheKey, JudgeCall]]
"""Earlier calls for some keys: the latest usable recorded call of each key that has one."""


def latest_usable(calls: Iterable[JudgeCall], wanted: set[CacheKey]) -> dict[CacheKey, JudgeCall]:
    """Of ``calls`` (oldest first), the latest usable one for each wanted key."""
    found: dict[CacheKey, JudgeCall] = {}
    for call in calls:
        key = key_of(call)
        if key in wanted and usable(call):
            found[key] = call  # oldest first: the latest wins
    return found


def cache_key(judge: str, request: JudgeRequest) -> CacheKey:
    """The cache key a call of ``judge`` on ``request`` will have."""
    prompt = build_prompt(request)
    return CacheKey(judge, prompt.prompt_hash, request.order, request.sample_index)


def load_cache(
    lookup: CallLookup | None,
    judge: str,
    requests: Iterable[JudgeRequest],
    *,
    refresh: bool = False,
) -> dict[CacheKey, JudgeCall]:
    """The cached answers for ``judge`` on ``requests``: empty with ``refresh`` or no lookup.

    ``refresh`` is ``--refresh-judge``: every pair is sent again (the new
    answers become the cache of later runs). Whatever the lookup returns, only
    usable calls for the asked keys answer.
    """
    if refresh or lookup is None:
        return {}
    wanted = {cache_key(judge, r) for r in requests}
    if not wanted:
        return {}
    return latest_usable(lookup(wanted).values(), wanted)
