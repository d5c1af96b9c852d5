"""Judge calls answered from earlier calls (the cache's keys and rules, not its storage).

A call is cached by (judge name, model, endpoint, prompt template version,
prompt hash, order, sample index): an answer is reused only when the same
model behind the same endpoint was asked the same prompt of the same
template, so changing what stands behind a judge's name never reuses the old
answers (docs/judges.md#cache). Only calls that ended ``judged`` and were
themselves answered by the judge (not from the cache) are reused: a failure
is never an answer, so a re-run sends the failed pairs again, and an answer's
age is the age of the judge's own answer, however often it was reused.

Where earlier calls are kept is the caller's business: it passes a
:data:`CallLookup` (the score stage's reads the ledger in one query per
batch, and applies what the ledger says of the cache: cleared, pruned, too
old for ``--judge-cache-ttl``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bughunt.models import CallStatus, JudgeCall, Order
from judging.judges._prompt import TEMPLATE_VERSION, Prompt, build_prompt
from judging.judges._protocol import Judge, JudgeRequest


@dataclass(frozen=True, slots=True)
class CacheKey:
    """What makes two judge calls the same call."""

    judge: str
    """Judge name."""
    model: str
    """The model that answers for the judge (``Judge.model``)."""
    endpoint: str
    """Where its requests go (``Judge.endpoint``)."""
    template_version: int
    """Version of the prompt template (:data:`~judging.judges._prompt.TEMPLATE_VERSION`)."""
    prompt_hash: str
    """Hash of the exact prompt."""
    order: Order
    """Which agent's report was first."""
    sample_index: int
    """Index among repeated samples of the same ordered pair."""


def key_of(call: JudgeCall) -> CacheKey | None:
    """The cache key of a recorded call; ``None`` for a call recorded before the key had a
    model, an endpoint and a template version (such a call answers nothing)."""
    if call.model is None or call.endpoint is None or call.template_version is None:
        return None
    return CacheKey(
        call.judge,
        call.model,
        call.endpoint,
        call.template_version,
        call.prompt_hash,
        call.order,
        call.sample_index,
    )


def usable(call: JudgeCall) -> bool:
    """Whether a recorded call may answer for a new one: judged, with a winner, by the judge
    itself (a cached call repeats an older answer, which is the one to reuse or not)."""
    return call.status is CallStatus.JUDGED and call.winner is not None and not call.cached


CallLookup = Callable[[set[CacheKey]], dict[CacheKey, JudgeCall]]
"""Earlier calls for some keys: the latest usable recorded call of each key that has one."""


def latest_usable(calls: Iterable[JudgeCall], wanted: set[CacheKey]) -> dict[CacheKey, JudgeCall]:
    """Of ``calls`` (oldest first), the latest usable one for each wanted key."""
    found: dict[CacheKey, JudgeCall] = {}
    for call in calls:
        key = key_of(call)
        if key is not None and key in wanted and usable(call):
            found[key] = call  # oldest first: the latest wins
    return found


def prompt_key(judge: Judge, prompt: Prompt, request: JudgeRequest) -> CacheKey:
    """The cache key of a call of ``judge`` sending ``prompt`` (built from ``request``)."""
    return CacheKey(
        judge.name,
        judge.model,
        judge.endpoint,
        TEMPLATE_VERSION,
        prompt.prompt_hash,
        request.order,
        request.sample_index,
    )


def cache_key(judge: Judge, request: JudgeRequest) -> CacheKey:
    """The cache key a call of ``judge`` on ``request`` will have."""
    return prompt_key(judge, build_prompt(request), request)


def load_cache(
    lookup: CallLookup | None,
    judge: Judge,
    requests: Iterable[JudgeRequest],
    *,
    refresh: bool = False,
) -> dict[CacheKey, JudgeCall]:
    """The cached answers for ``judge`` on ``requests``: empty with ``refresh`` or no lookup.

    ``refresh`` is ``--refresh-judge``: every pair is sent again (the new
    answers become the cache of later runs). Whatever the lookup returns, only
    usable calls for the asked keys answer: a call of another model, endpoint
    or template never does.
    """
    if refresh or lookup is None:
        return {}
    wanted = {cache_key(judge, r) for r in requests}
    if not wanted:
        return {}
    return latest_usable(lookup(wanted).values(), wanted)
