"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint.

The SDK's own retries are off (``max_retries=0``): the call contract is the
only retry policy, and each request gets the time left to the call's
deadline as its timeout. SDK errors map onto the transport errors of
``_protocol``:

=====================================================  =====================
SDK error                                              transport error
=====================================================  =====================
``APITimeoutError``                                    ``JudgeTimeout``
``APIConnectionError``                                 ``ConnectionFailed``
``RateLimitError`` (429)                               ``RateLimited``
``InternalServerError`` / any 5xx                      ``ServerError``
400 with code ``context_length_exceeded``, or 413       ``OverBudget``
any other 4xx                                          ``ClientError``
a 2xx whose body is not a chat completion              ``ServerError``
=====================================================  =====================

Structured output: with ``structured="auto"`` (the default) the first request
asks for a JSON-schema answer (``response_format``). If the endpoint refuses
that parameter with a 400 that names it, the same attempt is re-sent once
without it, and the judge sends plain requests from then on. This fallback is
safe because structured output is a convenience, never a trust boundary:
every answer goes through the same parser and enum check either way, so an
endpoint without it can produce a parse failure but never a verdict that
would not parse. Only a 400 naming ``response_format`` / ``json_schema``
triggers it; any other 400 is a client error and is not re-sent.
``structured="on"`` never falls back; ``"off"`` never asks.

The API key is read once by whoever builds the judge, sent only in the
``Authorization`` header, and scrubbed from every error detail and answer
text this backend hands back, raw or encoded (``[secret:<api_key_env>]``,
:class:`bughunt.secrets.Scrubber`), so it cannot reach a log or a ledger row.

Throughput: a batch sends up to ``max_in_flight`` calls at once from as many
threads, and the client-side cost of a call is CPU time under the
interpreter lock, so it bounds calls per second (``benchmarks/judge_throughput.py``).
Two things keep it small. Requests go through the SDK's documented
``client.post`` with the body built here, not ``chat.completions.create``,
which re-validates every argument against its typed schema on each call,
and the answer is read as plain JSON rather than built into response
models; errors, timeouts, auth and the base URL are the SDK's either way.
And each call in flight checks a client out of a small pool (created on
demand, so never more than the calls in flight, and reused across batches)
instead of all threads sharing one connection pool, whose lock they would
otherwise queue on for every request and response.
"""

from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING, Any, Literal

from bughunt.secrets import Scrubber
from judging.judges._answer import answer_schema
from judging.judges._protocol import (
    ClientError,
    ConnectionFailed,
    JudgeError,
    JudgeRequest,
    JudgeTimeout,
    OverBudget,
    RateLimited,
    ServerError,
)

if TYPE_CHECKING:
    import openai

Structured = Literal["auto", "on", "off"]
_DETAIL_LIMIT = 300
_OVER_BUDGET_CODES = {"context_length_exceeded", "string_above_max_length"}
_OVER_BUDGET_TEXT = ("maximum context length", "context length exceeded", "context_length_exceeded")


class OpenAIJudge:
    """A judge behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(
        self,
        *,
        name: str,
        family: str,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "api_key",
        required: bool = False,
        structured: Structured = "auto",
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.name = name
        self.family = family
        self.required = required
        self.model = model
        self.base_url = base_url
        self.structured: Structured = structured
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._secret = api_key or ""
        # Shown as [secret:<api_key_env>], raw or encoded (URL, JSON, hex, base64, any case).
        self._scrubber = Scrubber({api_key_env or "api_key": self._secret} if api_key else None)
        self._lock = threading.Lock()
        # Clients not in use, most recently used last (its connection is the likeliest alive).
        self._idle: queue.LifoQueue[openai.OpenAI] = queue.LifoQueue()

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIJudge(name={self.name!r}, model={self.model!r}, base_url={self.base_url!r})"

    # --- the Judge protocol -----------------------------------------------

    def complete(self, system: str, user: str, request: JudgeRequest, timeout_s: float) -> str:
        """One chat completion; the answer text, or a transport error."""
        import openai  # late: the SDK costs ~0.8 s to import, and only an openai judge needs it

        with self._lock:
            use_schema = self.structured != "off"
        try:
            return self._send(system, user, timeout_s, use_schema)
        except openai.BadRequestError as exc:
            if not (use_schema and self.structured == "auto" and _refuses_schema(exc)):
                raise self._map(exc) from exc
            with self._lock:
                self.structured = "off"  # remembered for the rest of this judge's life
        except openai.OpenAIError as exc:
            raise self._map(exc) from exc
        try:
            return self._send(system, user, timeout_s, use_schema=False)
        except openai.OpenAIError as exc:
            raise self._map(exc) from exc

    # --- internals -----------------------------------------------------------

    def _new_client(self) -> openai.OpenAI:
        import openai  # late, as in complete()

        return openai.OpenAI(
            base_url=self.base_url,
            # The SDK insists on some key; endpoints without auth ignore it.
            api_key=self._secret or "no-key",
            max_retries=0,
        )

    def _checkout(self) -> openai.OpenAI:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            return self._new_client()

    def _send(self, system: str, user: str, timeout_s: float, use_schema: bool) -> str:
        import openai  # late, as in complete()

        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        }
        if use_schema:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "judge_answer", "strict": True, "schema": answer_schema()},
            }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        client = self._checkout()
        try:
            response: object = client.post(
                "/chat/completions",
                body=body,
                cast_to=object,  # plain JSON: no response models built per call
                options={
                    "timeout": max(timeout_s, 0.001),
                    "security": {"bearer_auth": True},
                },
            )
        except openai.OpenAIError:
            raise
        except (ValueError, TypeError, KeyError) as exc:  # a 2xx body that is not JSON
            raise ServerError(self._scrub(f"malformed response body: {exc}")) from exc
        finally:
            self._idle.put(client)
        return self._scrub(_content_of(response))

    def _scrub(self, text: str) -> str:
        return self._scrubber.scrub(text)

    def _detail(self, exc: openai.OpenAIError) -> str:
        status = getattr(exc, "status_code", None)
        message = getattr(exc, "message", None) or str(exc)
        code = getattr(exc, "code", None)
        text = f"HTTP {status}: {message}" if status else str(message)
        if code:
            text += f" (code {code})"
        text = self._scrub(" ".join(text.split()))
        return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 3] + "..."

    def _map(self, exc: openai.OpenAIError) -> JudgeError:
        import openai  # late, as in complete()

        detail = self._detail(exc)
        if isinstance(exc, openai.APITimeoutError):
            return JudgeTimeout(f"no response from {self.model} in time: {detail}")
        if isinstance(exc, openai.APIConnectionError):
            return ConnectionFailed(f"could not reach {self._where()}: {detail}")
        if isinstance(exc, openai.RateLimitError):
            return RateLimited(detail)
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code >= 500:
                return ServerError(detail)
            if _is_over_budget(exc):
                return OverBudget(detail)
            return ClientError(detail)
        return ServerError(detail)

    def _where(self) -> str:
        return self.base_url or "the default OpenAI endpoint"


def _content_of(response: object) -> str:
    """The answer text of a chat completion body; ``ServerError`` when it is not one."""
    choices = response.get("choices") if isinstance(response, dict) else None
    if not isinstance(choices, list) or not choices:
        raise ServerError("the response has no choices")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise ServerError("the response's first choice has no message")
    content = message.get("content")
    if content is None:
        refusal = message.get("refusal")
        content = f"(no answer text; refusal: {refusal})" if refusal else ""
    if not isinstance(content, str):
        raise ServerError("the response's message content is not text")
    return content


def _text_of(exc: openai.APIStatusError) -> str:
    return f"{getattr(exc, 'message', '')} {exc.body if isinstance(exc.body, str) else ''}".lower()


def _is_over_budget(exc: openai.APIStatusError) -> bool:
    if exc.status_code == 413:  # request entity too large
        return True
    if exc.status_code != 400:
        return False
    if exc.code in _OVER_BUDGET_CODES:
        return True
    return any(t in _text_of(exc) for t in _OVER_BUDGET_TEXT)


def _refuses_schema(exc: openai.BadRequestError) -> bool:
    if exc.code in _OVER_BUDGET_CODES:
        return False
    if exc.param == "response_format":
        return True
    text = _text_of(exc)
    return "response_format" in text or "json_schema" in text
