"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint.

Requests go through :class:`~judging.judges._http.HttpTransport`: one
urllib3 pool of connections the size of the judge's concurrency
(``max_in_flight``), shared by every call in flight. The body is built here and the answer read as plain JSON
(no SDK models are built per call; the SDK's client-side cost per request is
what held calls per second below what the endpoint allowed). There are no
retries here: the call contract is the only retry policy, and each request
gets the time left to the call's deadline as its timeout. Responses map onto
the transport errors of ``_protocol``:

=====================================================  =====================
response                                               transport error
=====================================================  =====================
none in time                                           ``JudgeTimeout``
connection refused, reset, broken exchange             ``ConnectionFailed``
429                                                    ``RateLimited``
any 5xx                                                ``ServerError``
400 with code ``context_length_exceeded``, or 413      ``OverBudget``
any other 4xx                                          ``ClientError``
a 2xx whose body is not a chat completion              ``ServerError``
=====================================================  =====================

A 429 or 503 with ``Retry-After`` (seconds, or an HTTP date) carries it on
the error: the call contract waits at least that long before its next
attempt, and stops instead when the wait would pass the call's deadline.

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
:class:`gateway.secrets.Scrubber`), so it cannot reach a log or a ledger row.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from bughunt import __version__
from gateway.secrets import Scrubber
from judging.judges._answer import answer_schema
from judging.judges._http import HttpTransport, Response, TransportFailed, TransportTimeout
from judging.judges._identity import openai_endpoint
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
    from judging.judges._config import JudgeConfig

Structured = Literal["auto", "on", "off"]
_DETAIL_LIMIT = 300
_OVER_BUDGET_CODES = {"context_length_exceeded", "string_above_max_length"}
_OVER_BUDGET_TEXT = ("maximum context length", "context length exceeded", "context_length_exceeded")
_RETRY_AFTER_STATUSES = {429, 503}


@dataclass(frozen=True, slots=True)
class _Refusal:
    """A non-2xx answer, read once: its status, the error's message, code and param."""

    status: int
    message: str
    code: str | None
    param: str | None
    retry_after_s: float | None

    @classmethod
    def of(cls, response: Response) -> _Refusal:
        text = response.body.decode("utf-8", errors="replace")
        message, code, param = text, None, None
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        error = doc.get("error") if isinstance(doc, dict) else None
        if isinstance(error, dict):
            message = str(error.get("message") or text)
            code = str(error["code"]) if error.get("code") is not None else None
            param = str(error["param"]) if error.get("param") is not None else None
        elif isinstance(error, str):
            message = error
        retry = response.retry_after_s if response.status in _RETRY_AFTER_STATUSES else None
        return cls(response.status, message, code, param, retry)

    def text(self) -> str:
        return self.message.lower()

    def over_budget(self) -> bool:
        if self.status == 413:  # request entity too large
            return True
        if self.status != 400:
            return False
        return self.code in _OVER_BUDGET_CODES or any(t in self.text() for t in _OVER_BUDGET_TEXT)

    def refuses_schema(self) -> bool:
        if self.status != 400 or self.code in _OVER_BUDGET_CODES:
            return False
        if self.param == "response_format":
            return True
        return "response_format" in self.text() or "json_schema" in self.text()


class _Refused(Exception):
    """A non-2xx answer on its way to being mapped (or re-sent without the schema)."""

    def __init__(self, refusal: _Refusal) -> None:
        self.refusal = refusal
        super().__init__(refusal.message)


class OpenAIJudge:
    """A judge behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(
        self, config: JudgeConfig, *, api_key: str | None = None, max_connections: int = 64
    ) -> None:
        """A judge as ``config`` describes it (its name, family, model, endpoint and request
        options); ``api_key`` is the key read from ``config.api_key_env``. ``max_connections``:
        the pool of connections to the endpoint; give it the judge's ``max_in_flight`` (more
        is never used, fewer would queue the calls in flight). A config without ``model``
        raises ``ValueError``."""
        if not config.model:
            raise ValueError("an openai judge needs 'model'")
        self.name = config.name
        self.family = config.family
        self.required = config.required
        self.model = config.model
        self.base_url = config.base_url
        self.structured: Structured = config.structured
        self.temperature = config.temperature
        self.max_tokens = config.max_tokens
        self._secret = api_key or ""
        # Shown as [secret:<api_key_env>], raw or encoded (URL, JSON, hex, base64, any case).
        label = config.api_key_env or "api_key"
        self._scrubber = Scrubber({label: self._secret} if api_key else None)
        self._lock = threading.Lock()
        # A user agent of its own: http.client sends none, and some gateways refuse that.
        headers = {"accept": "application/json", "user-agent": f"bughunt/{__version__}"}
        if self._secret:
            headers["authorization"] = f"Bearer {self._secret}"
        # Where requests go, and part of the cache key: base_url, OPENAI_BASE_URL or the API.
        self.endpoint = openai_endpoint(self.base_url)
        self._transport = HttpTransport(self.endpoint, headers, max_connections)

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIJudge(name={self.name!r}, model={self.model!r}, base_url={self.base_url!r})"

    def __getstate__(self) -> dict[str, Any]:  # a judge built here may travel; its lock may not
        state = self.__dict__.copy()
        state["_lock"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the judge's connections (a later call opens them again)."""
        self._transport.close()

    # --- the Judge protocol -----------------------------------------------

    def complete(
        self,
        system: str,
        user: str,
        request: JudgeRequest,  # noqa: ARG002 - the Judge protocol's signature
        timeout_s: float,
    ) -> str:
        """One chat completion; the answer text, or a transport error."""
        with self._lock:
            use_schema = self.structured != "off"
        try:
            return self._send(system, user, timeout_s, use_schema)
        except _Refused as exc:
            refusal = exc.refusal
            if not (use_schema and self.structured == "auto" and refusal.refuses_schema()):
                raise self._map(refusal) from None
            with self._lock:
                self.structured = "off"  # remembered for the rest of this judge's life
        try:
            return self._send(system, user, timeout_s, use_schema=False)
        except _Refused as exc:
            raise self._map(exc.refusal) from None

    # --- internals -----------------------------------------------------------

    def _send(self, system: str, user: str, timeout_s: float, use_schema: bool) -> str:
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
        try:
            response = self._transport.post(
                "/chat/completions", json.dumps(body).encode(), timeout_s
            )
        except TransportTimeout as exc:
            raise JudgeTimeout(
                self._scrub(f"no response from {self.model} in time: {exc}")
            ) from None
        except TransportFailed as exc:
            raise ConnectionFailed(self._scrub(f"could not reach {self._where()}: {exc}")) from None
        if not 200 <= response.status < 300:
            raise _Refused(_Refusal.of(response))
        try:
            parsed: object = json.loads(response.body)
        except ValueError as exc:  # a 2xx body that is not JSON
            raise ServerError(self._scrub(f"malformed response body: {exc}")) from None
        return self._scrub(_content_of(parsed))

    def _scrub(self, text: str) -> str:
        return self._scrubber.scrub(text)

    def _detail(self, refusal: _Refusal) -> str:
        text = f"HTTP {refusal.status}: {refusal.message}"
        if refusal.code:
            text += f" (code {refusal.code})"
        text = self._scrub(" ".join(text.split()))
        return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 3] + "..."

    def _map(self, refusal: _Refusal) -> JudgeError:
        detail = self._detail(refusal)
        if refusal.status == 429:
            return RateLimited(detail, retry_after_s=refusal.retry_after_s)
        if refusal.status >= 500:
            return ServerError(detail, retry_after_s=refusal.retry_after_s)
        if refusal.over_budget():
            return OverBudget(detail)
        return ClientError(detail)

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
