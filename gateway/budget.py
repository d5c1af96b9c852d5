"""The gateway's budget: a request's worst case is reserved before it is sent, settled after.

Checking only what was spent before a request is sent lets requests in
flight together overspend (ten at once used 6.7 times ``max_tokens``), so
each model request first reserves its worst case under one lock:

- its prompt, estimated from the body (:data:`PROMPT_BYTES_PER_TOKEN` bytes a
  token: the JSON around the messages makes this an overestimate);
- its answer: the request's own ``max_completion_tokens``, ``max_tokens`` or
  ``max_output_tokens``, else :data:`DEFAULT_ANSWER_TOKENS`;
- the cost of both at the configured prices.

A request whose worst case does not fit in what is left, after what is spent
and what the requests in flight hold, gets the answer limit that fits (its
body's limit rewritten, or ``max_tokens`` added to a completion request), or
is refused when not even its prompt fits. When the answer is in, the
reservation is released and the usage the upstream reports is counted; an
answer that reports none is counted here (:func:`counted_usage`), never as
zero; a request cancelled or cut off after it was sent is counted at its
reservation, since the upstream may have done the work.

Every request the gateway refuses for its shape (not the model's API, a bad
body) counts against ``max_requests`` like an answered one: refusals cost the
gateway and the run's log, if not the model.

Standard library only: it runs in the gateway's container.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from typing import Any

DEFAULT_ANSWER_TOKENS = 4096
"""Answer tokens reserved for a request that names no limit of its own."""
PROMPT_BYTES_PER_TOKEN = 4
"""Body bytes counted as one prompt token when reserving (and when the upstream reports none)."""
REWRITE_MARGIN = 64
"""Bytes a rewritten body may grow by (``stream_options`` and an answer limit added), counted
in its prompt estimate: an upstream that counts the bytes it gets must not find more."""
ANSWER_LIMITS = ("max_completion_tokens", "max_tokens", "max_output_tokens")
"""Request fields that bound the answer's tokens, in the order they are read."""


@dataclass(slots=True)
class Reservation:
    """What one request holds of the budget until it is settled."""

    prompt: int
    """Prompt tokens reserved (the estimate from the body)."""
    answer: int
    """Answer tokens reserved."""
    cost: float
    """Cost of both at the configured prices."""
    limit: int | None = None
    """The answer limit the request must be sent with, when it had to be lowered to fit."""
    settled: bool = False

    @property
    def tokens(self) -> int:
        return self.prompt + self.answer


def prompt_estimate(body: bytes) -> int:
    """Prompt tokens reserved for a request body: one per :data:`PROMPT_BYTES_PER_TOKEN` bytes,
    room for what :func:`prepared` may add included."""
    return math.ceil((len(body) + REWRITE_MARGIN) / PROMPT_BYTES_PER_TOKEN)


def answer_limit(doc: dict[str, Any] | None) -> int | None:
    """The request's own bound on its answer's tokens, None when it names none."""
    for name in ANSWER_LIMITS:
        value = (doc or {}).get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def is_completion(doc: dict[str, Any] | None) -> bool:
    """A chat completion or completion request (``messages`` or ``prompt``), whose fields are known."""
    return doc is not None and ("messages" in doc or "prompt" in doc)


def prepared(doc: dict[str, Any], limit: int | None) -> bool:
    """Make ``doc`` what is sent: usage asked for on a stream, the answer limit lowered; changed?

    A streamed completion gets ``stream_options.include_usage`` (else the
    upstream reports no usage on a stream); a reservation that had to lower the
    answer limit writes it into every limit field the request has, or
    ``max_tokens`` when it has none.
    """
    changed = False
    if is_completion(doc) and doc.get("stream") is True:
        options = doc.get("stream_options")
        options = dict(options) if isinstance(options, dict) else {}
        if options.get("include_usage") is not True:
            options["include_usage"] = True
            doc["stream_options"] = options
            changed = True
    if limit is not None:
        fields = [name for name in ANSWER_LIMITS if name in doc] or ["max_tokens"]
        for name in fields:
            doc[name] = limit
        changed = True
    return changed


def encoded(doc: dict[str, Any]) -> bytes:
    """A rewritten body, compact: never longer than the client's encoding plus what was added."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def json_object(body: bytes) -> dict[str, Any] | None:
    """The body as a JSON object, or None (not JSON, or not an object)."""
    if not body:
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def documents(body: bytes, content_type: str) -> list[Any]:
    """The JSON documents of an answer: the body, or each ``data:`` line of an event stream."""
    text = body.decode("utf-8", "replace")
    if "event-stream" not in content_type:
        lines = [text]
    else:
        lines = [
            line[5:]
            for line in text.splitlines()
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]")
        ]
    found = []
    for line in lines:
        try:
            found.append(json.loads(line))
        except ValueError:
            continue
    return found


def _count(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if ok else None


_USAGE_NAMES = (
    ("tokens_in", ("prompt_tokens", "input_tokens")),
    ("tokens_out", ("completion_tokens", "output_tokens")),
)


def usage_of(body: bytes, content_type: str) -> dict[str, Any]:
    """``model``, ``tokens_in`` and ``tokens_out`` as the upstream reports them (JSON or SSE).

    Chat Completions' ``usage`` and the Responses API's (``input_tokens``,
    also inside a ``response`` event) are read. Missing figures are None: a
    response that reports no usage is logged as such, never as zero.
    """
    found: dict[str, Any] = {"model": None, "tokens_in": None, "tokens_out": None}
    for doc in documents(body, content_type):
        if not isinstance(doc, dict):
            continue
        for part in (doc, doc.get("response")):
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("model"), str):
                found["model"] = part["model"][:200]
            usage = part.get("usage")
            if not isinstance(usage, dict):
                continue
            for key, names in _USAGE_NAMES:
                for name in names:
                    if (value := _count(usage.get(name))) is not None:
                        found[key] = value
    return found


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    return []


def counted_usage(body: bytes, content_type: str) -> int:
    """Answer tokens counted here, for an answer whose upstream reported none.

    Each stream event is at least one token; the text in an answer's
    ``choices`` (or ``output``) is one token per :data:`PROMPT_BYTES_PER_TOKEN`
    bytes, rounded up, whichever is more.
    """
    total = 0
    for doc in documents(body, content_type):
        if not isinstance(doc, dict):
            continue
        text = "".join(_texts(doc.get("choices")) + _texts(doc.get("output")))
        total += max(1, math.ceil(len(text.encode()) / PROMPT_BYTES_PER_TOKEN))
    return total


class Budget:
    """The run's spending for this agent, shared by every execution; thread-safe."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.max_requests: int | None = config.get("max_requests")
        self.max_tokens: int | None = config.get("max_tokens")
        self.max_cost: float | None = config.get("max_cost")
        self.price_in = float(config.get("price_in") or 0.0)
        self.price_out = float(config.get("price_out") or 0.0)
        self.requests = 0
        self.refused = 0
        self.tokens = 0
        self.cost = 0.0
        self.held_tokens = 0
        self.held_cost = 0.0
        self._lock = threading.Lock()

    def _price(self, prompt: int, answer: int) -> float:
        return (prompt * self.price_in + answer * self.price_out) / 1_000_000

    def _spent(self) -> str | None:
        """Which limit is spent, counting what requests in flight hold; None if none."""
        if self.max_requests is not None and self.requests >= self.max_requests:
            return f"max_requests={self.max_requests} spent"
        held = f", {self.held_tokens} held by requests in flight" if self.held_tokens else ""
        if self.max_tokens is not None and self.tokens + self.held_tokens >= self.max_tokens:
            return f"max_tokens={self.max_tokens} spent ({self.tokens} used{held})"
        if self.max_cost is not None and self.cost + self.held_cost >= self.max_cost:
            return f"max_cost={self.max_cost:g} spent ({self.cost:.6f} used{held})"
        return None

    def _room(self, prompt: int) -> float:
        """Answer tokens that still fit beside a prompt of ``prompt`` tokens (may be < 1)."""
        room = math.inf
        if self.max_tokens is not None:
            room = self.max_tokens - self.tokens - self.held_tokens - prompt
        if self.max_cost is not None:
            left = self.max_cost - self.cost - self.held_cost - self._price(prompt, 0)
            if left < 0:
                return 0
            if self.price_out > 0:
                room = min(room, math.floor(left * 1_000_000 / self.price_out))
        return room

    def reserve(
        self, prompt: int, answer: int | None, *, can_limit: bool = False
    ) -> Reservation | str:
        """Hold a request's worst case and count it, or say why it is refused (and hold nothing).

        ``answer`` is the request's own limit (None: :data:`DEFAULT_ANSWER_TOKENS`).
        When it does not fit, a request that ``can_limit`` (its body can be
        rewritten) gets a lower limit in :attr:`Reservation.limit`; another is refused.
        """
        wanted = DEFAULT_ANSWER_TOKENS if answer is None else answer
        with self._lock:
            if (spent := self._spent()) is not None:
                self.refused += 1
                return spent
            room = self._room(prompt)
            limit = None
            if wanted > room:
                if room < 1 or not can_limit:
                    self.refused += 1
                    return (
                        f"this request's worst case (about {prompt} prompt tokens and {wanted} "
                        f"answer tokens) is more than is left; ask for fewer answer tokens"
                        if room >= 1
                        else f"what is left does not cover this request's prompt (about {prompt} tokens)"
                    )
                wanted = limit = int(room)
            held = Reservation(prompt, wanted, self._price(prompt, wanted), limit)
            self.requests += 1
            self.held_tokens += held.tokens
            self.held_cost += held.cost
            return held

    def settle(self, held: Reservation, tokens_in: int | None, tokens_out: int | None) -> float:
        """Release ``held`` and count the usage (None: the reserved figure); its cost.

        Settling twice counts once (a request cancelled by its execution's end,
        whose handler ends later): the second call returns 0.
        """
        t_in = held.prompt if tokens_in is None else tokens_in
        t_out = held.answer if tokens_out is None else tokens_out
        cost = self._price(t_in, t_out)
        with self._lock:
            if held.settled:
                return 0.0
            held.settled = True
            self.held_tokens -= held.tokens
            self.held_cost -= held.cost
            self.tokens += t_in + t_out
            self.cost += cost
        return cost

    def count_refused(self) -> None:
        """A request refused for its shape: it counts against ``max_requests``."""
        with self._lock:
            self.requests += 1
            self.refused += 1

    def take(self) -> str | None:
        """Count one request that holds nothing, or say which limit is spent (counting nothing)."""
        got = self.reserve(0, 0)
        return got if isinstance(got, str) else None

    def spend(self, tokens_in: int | None, tokens_out: int | None) -> float:
        """Count a response's usage outside any reservation; its cost at the configured prices."""
        return self.settle(Reservation(0, 0, 0.0), tokens_in or 0, tokens_out or 0)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": self.requests,
                "refused": self.refused,
                "tokens": self.tokens,
                "cost": self.cost,
                "held_tokens": self.held_tokens,
            }
