"""The model gateway: runs in its own container, the only way an agent reaches its model.

It is started once per (run, agent) by ``tasks/sandbox/_gateway.py`` with
``/gw`` (a folder of the host) mounted, and serves:

- ``/gw/control.sock``: the host's control channel, one JSON request and one
  JSON answer per connection (``open`` an execution, ``close`` it and take
  its request log, ``stats``).
- ``/gw/x/<execution>/model.sock``: one listener per agent execution, the
  only socket that execution's container can see (its folder alone is
  mounted there). It speaks HTTP: a reverse proxy to the one configured
  upstream, which adds the API key itself (the agent never has it), refuses
  anything that is not a request for the upstream's API path, logs every
  request with the usage the upstream reports, and refuses further calls
  once the run's budget (requests, tokens, cost) is spent.
- ``/gw/x/<execution>/connect.sock``: only for an agent with ``allow``
  entries, a CONNECT proxy to exactly those ``host:port`` pairs, through
  squid on the container's loopback (``tunnel.py``); each tunnel is logged
  beside the model requests (``kind = "tunnel"``).

Why hand-written on the standard library: it runs inside the sandbox base
image, which holds Debian's Python and nothing else, and it must not depend
on anything the agent's environment installs. It is small on purpose: no
routing, no client-chosen upstream, no forward-proxy mode on the model's
socket (tunnels have a socket of their own).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import socketserver
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler
from typing import Any

try:  # on the host (tests) the package; in the container the file shipped beside this one
    from bughunt.secrets import Scrubber
except ImportError:  # pragma: no cover - the container's layout
    from bughunt_secrets import Scrubber  # type: ignore[import-not-found,no-redef]
try:  # on the host (tests) the package; in the container the file shipped beside this one
    from tasks.sandbox.gateway.tunnel import Tunnels, log_entry, start_squid
except ImportError:  # pragma: no cover - the container's layout
    from tunnel import Tunnels, log_entry, start_squid  # type: ignore[import-not-found,no-redef]

KEY_VARIABLE = "BUGHUNT_GATEWAY_KEY"
"""The gateway container's variable holding the model's key (never the agent's)."""

SQUID_FOLDER = "/tmp/bughunt-squid"  # noqa: S108 - the gateway container's own tmpfs
"""Where squid's configuration is written (tunnels only)."""
MAX_BODY = 16 * 1024 * 1024
"""Largest request or response body relayed, in bytes."""
UPSTREAM_TIMEOUT_S = 600.0
_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    "authorization",
    "accept-encoding",
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
}


def _documents(body: bytes, content_type: str) -> list[Any]:
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
    documents = []
    for line in lines:
        try:
            documents.append(json.loads(line))
        except ValueError:
            continue
    return documents


def _count(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if ok else None


def usage_of(body: bytes, content_type: str) -> dict[str, Any]:
    """``model``, ``tokens_in`` and ``tokens_out`` as the upstream reports them (JSON or SSE).

    Missing figures are None: a response that reports no usage is logged as such,
    never as zero.
    """
    found: dict[str, Any] = {"model": None, "tokens_in": None, "tokens_out": None}
    for doc in _documents(body, content_type):
        if not isinstance(doc, dict):
            continue
        if isinstance(doc.get("model"), str):
            found["model"] = doc["model"][:200]
        usage = doc.get("usage")
        if isinstance(usage, dict):
            for key, name in (("tokens_in", "prompt_tokens"), ("tokens_out", "completion_tokens")):
                if (value := _count(usage.get(name))) is not None:
                    found[key] = value
    return found


class Budget:
    """The run's spending for this agent, shared by every execution; thread-safe."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.max_requests: int | None = config.get("max_requests")
        self.max_tokens: int | None = config.get("max_tokens")
        self.max_cost: float | None = config.get("max_cost")
        self.price_in = float(config.get("price_in") or 0.0)
        self.price_out = float(config.get("price_out") or 0.0)
        self.requests = 0
        self.tokens = 0
        self.cost = 0.0
        self._lock = threading.Lock()

    def take(self) -> str | None:
        """Count one request now, or say which limit is spent (and count nothing)."""
        with self._lock:
            if self.max_requests is not None and self.requests >= self.max_requests:
                return f"max_requests={self.max_requests} spent"
            if self.max_tokens is not None and self.tokens >= self.max_tokens:
                return f"max_tokens={self.max_tokens} spent ({self.tokens} used)"
            if self.max_cost is not None and self.cost >= self.max_cost:
                return f"max_cost={self.max_cost:g} spent ({self.cost:.6f} used)"
            self.requests += 1
            return None

    def spend(self, tokens_in: int | None, tokens_out: int | None) -> float:
        """Add a response's usage; its cost at the configured prices."""
        t_in, t_out = tokens_in or 0, tokens_out or 0
        cost = (t_in * self.price_in + t_out * self.price_out) / 1_000_000
        with self._lock:
            self.tokens += t_in + t_out
            self.cost += cost
        return cost

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {"requests": self.requests, "tokens": self.tokens, "cost": self.cost}


class Upstream:
    """The one place requests go: scheme, host, port and the API's base path."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.base_path = parts.path.rstrip("/")
        default = (self.scheme == "https" and self.port == 443) or (
            self.scheme == "http" and self.port == 80
        )
        self.host_header = self.host if default else f"{self.host}:{self.port}"

    def connection(self) -> http.client.HTTPConnection:
        if self.scheme == "https":
            return http.client.HTTPSConnection(
                self.host,
                self.port,
                timeout=UPSTREAM_TIMEOUT_S,
                context=ssl.create_default_context(),
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=UPSTREAM_TIMEOUT_S)

    def allows(self, path: str) -> bool:
        """A request path (origin form) inside the API's base path; nothing else is forwarded."""
        if not path.startswith("/") or path.startswith("//"):
            return False
        clean = urllib.parse.urlsplit(path).path
        segments = clean.split("/")
        if ".." in segments or "." in segments or "%2e" in clean.lower() or "\\" in clean:
            return False
        return (
            not self.base_path or clean == self.base_path or clean.startswith(self.base_path + "/")
        )


class Gateway:
    """State shared by the listeners: upstream, key, budget, scrubber and the request logs."""

    def __init__(self, config: dict[str, Any], key: str | None) -> None:
        self.upstream = Upstream(config["model"])
        self.key = key or None
        name = config.get("api_key_env") or "API_KEY"
        self.scrubber = Scrubber({name: key} if key else {})
        self.budget = Budget(config)
        self.logs: dict[str, list[dict[str, Any]]] = {}
        self.servers: dict[str, list[socketserver.BaseServer]] = {}
        self._lock = threading.Lock()
        allow = config.get("allow") or []
        self.tunnels = Tunnels(allow, record=self.record) if allow else None

    def record(self, execution: str, entry: dict[str, Any]) -> None:
        """Put ``entry`` in an open execution's log as its request starts; it is filled in place.

        So the log is in the order requests started, whichever ends first.
        """
        with self._lock:
            if execution in self.logs:
                self.logs[execution].append(entry)

    def open(self, execution: str, folder: str) -> None:
        """Listen for ``execution``: ``model.sock``, and ``connect.sock`` when tunnels are allowed."""
        with self._lock:
            if execution in self.servers:
                return
            self.logs.setdefault(execution, [])
        path = os.path.join(folder, "model.sock")
        servers: list[socketserver.BaseServer] = [_UnixHTTPServer(path, _handler(self, execution))]
        os.chmod(path, 0o777)  # noqa: S103 - the agent's user connects; only its folder is mounted
        if self.tunnels is not None:
            path = os.path.join(folder, "connect.sock")
            servers.append(self.tunnels.server(execution, path))
            os.chmod(path, 0o777)  # noqa: S103 - as above
        with self._lock:
            self.servers[execution] = servers
        for server in servers:
            threading.Thread(target=server.serve_forever, daemon=True).start()

    def close(self, execution: str) -> list[dict[str, Any]]:
        """Stop ``execution``'s listeners, end its live tunnels, and hand back its log."""
        with self._lock:
            servers = self.servers.pop(execution, [])
        for server in servers:
            server.shutdown()
            server.server_close()
        if self.tunnels is not None:
            self.tunnels.end(execution)
        with self._lock:
            return [_settled(entry) for entry in self.logs.pop(execution, [])]


def _settled(entry: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``entry``; one that never got a status nor a refusal says it did not finish."""
    entry = dict(entry)
    if entry["status"] is None and entry["refused"] is None:
        entry["refused"] = "unfinished when the execution ended"
    return entry


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, handler: type[BaseHTTPRequestHandler]) -> None:
        if os.path.exists(path):
            os.unlink(path)
        super().__init__(path, handler)


class _ModelHandler(BaseHTTPRequestHandler):
    """One agent execution's requests to its model (its listener's handler)."""

    gateway: Gateway
    execution: str

    protocol_version = "HTTP/1.1"
    server_version = "bughunt-gateway"
    sys_version = ""

    def address_string(self) -> str:
        return "agent"

    def log_message(self, format: str, *args: Any) -> None:
        return  # every request is logged as a record, not as text

    def do_GET(self) -> None:
        self._relay()

    do_POST = do_GET
    do_PUT = do_GET
    do_DELETE = do_GET
    do_PATCH = do_GET

    def _refuse(self, status: int, kind: str, message: str) -> None:
        body = json.dumps({"error": {"message": f"bughunt gateway: {message}", "type": kind}})
        self._answer(status, body.encode(), "application/json", [])

    def _answer(
        self, status: int, body: bytes, content_type: str, headers: list[tuple[str, str]]
    ) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _relay(self) -> None:
        started = time.monotonic()
        entry = log_entry("model", self.command, self.gateway.scrubber.scrub(self.path[:500]))
        self.gateway.record(self.execution, entry)
        try:
            self._relay_into(entry)
        finally:
            entry["seconds"] = round(time.monotonic() - started, 3)

    def _relay_into(self, entry: dict[str, Any]) -> None:
        if self.headers.get("Transfer-Encoding"):
            entry["refused"] = "chunked request body"
            entry["status"] = 411
            self._refuse(411, "length_required", "send a Content-Length body")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            entry["refused"] = "bad or oversized body"
            entry["status"] = 413
            self._refuse(413, "too_large", f"bodies up to {MAX_BODY} bytes")
            self.close_connection = True
            return
        body = self.rfile.read(length)
        entry["bytes_in"] = len(body)
        if not self.gateway.upstream.allows(self.path):
            entry["refused"] = "not the model's API"
            entry["status"] = 403
            self._refuse(403, "forbidden", "only the model's API is reachable through this gateway")
            return
        spent = self.gateway.budget.take()
        if spent is not None:
            entry["refused"] = f"budget: {spent}"
            entry["status"] = 429
            self._refuse(429, "budget_exceeded", f"the run's budget is spent ({spent})")
            return
        self._forward(entry, body)

    def _forward(self, entry: dict[str, Any], body: bytes) -> None:
        upstream = self.gateway.upstream
        headers = {name: value for name, value in self.headers.items() if name.lower() not in _HOP}
        headers["Host"] = upstream.host_header
        headers["Accept-Encoding"] = "identity"  # usage is read from the body
        if self.gateway.key:
            headers["Authorization"] = f"Bearer {self.gateway.key}"
        connection = upstream.connection()
        try:
            connection.request(self.command, self.path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read(MAX_BODY + 1)
            answer_headers = [
                (name, value)
                for name, value in response.getheaders()
                if name.lower() not in _HOP and name.lower() != "content-type"
            ]
            status = response.status
            content_type = response.getheader("Content-Type") or "application/octet-stream"
        except (OSError, http.client.HTTPException) as exc:
            entry["status"] = 502
            entry["refused"] = f"upstream unreachable: {type(exc).__name__}"
            self._refuse(502, "upstream_error", f"the model did not answer ({type(exc).__name__})")
            return
        finally:
            connection.close()
        if len(data) > MAX_BODY:
            entry["status"] = 502
            entry["refused"] = "upstream answer too large"
            self._refuse(502, "upstream_error", f"the answer is over {MAX_BODY} bytes")
            return
        usage = usage_of(data, content_type)
        entry.update(usage)
        entry["cost"] = self.gateway.budget.spend(usage["tokens_in"], usage["tokens_out"])
        entry["status"] = status
        # An upstream may echo the key (an error naming it): the agent never sees it.
        data = self.gateway.scrubber.scrub_bytes(data)
        answer_headers = [(n, self.gateway.scrubber.scrub(v)) for n, v in answer_headers]
        entry["bytes_out"] = len(data)
        self._answer(status, data, content_type, answer_headers)


def _handler(gateway: Gateway, execution: str) -> type[BaseHTTPRequestHandler]:
    """The handler class of one execution's listener."""
    return type("Handler", (_ModelHandler,), {"gateway": gateway, "execution": execution})


class _ControlHandler(socketserver.StreamRequestHandler):
    gateway: Gateway

    def handle(self) -> None:
        try:
            request = json.loads(self.rfile.readline(1_000_000))
            answer = self._do(request)
        except Exception as exc:
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        self.wfile.write(json.dumps(answer).encode() + b"\n")

    def _do(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "open":
            self.gateway.open(str(request["execution"]), str(request["folder"]))
            return {"ok": True}
        if op == "close":
            return {"ok": True, "log": self.gateway.close(str(request["execution"]))}
        if op == "stats":
            return {"ok": True, **self.gateway.budget.stats()}
        return {"ok": False, "error": f"unknown op {op!r}"}


class _ControlServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def serve(config_path: str, control_path: str) -> None:
    """Serve the control socket until killed."""
    os.umask(0)  # the host (another user) removes what this leaves in its folder
    with open(config_path, encoding="utf-8") as handle:
        config = json.load(handle)
    gateway = Gateway(config, os.environ.get(KEY_VARIABLE))
    if gateway.tunnels is not None:
        # squid never gets the key; it only resolves names and opens connections.
        env = {name: value for name, value in os.environ.items() if name != KEY_VARIABLE}
        start_squid(gateway.tunnels.allowed, folder=SQUID_FOLDER, env=env)
    handler = type("Control", (_ControlHandler,), {"gateway": gateway})
    if os.path.exists(control_path):
        os.unlink(control_path)
    server = _ControlServer(control_path, handler)
    print("bughunt gateway ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":  # pragma: no cover - run in the gateway container
    socket.setdefaulttimeout(UPSTREAM_TIMEOUT_S)
    serve(sys.argv[1], sys.argv[2])
