"""The model gateway: runs in its own container, the only way an agent reaches its model.

It is started once per (run, agent) by ``tasks/sandbox/engine/_gateway.py`` with
``/gw`` (a folder of the host) mounted, as ``python3 -m gateway.gateway`` in
``/gw`` (the package is shipped there), and serves:

- ``/gw/control.sock``: the host's control channel, one JSON request and one
  JSON answer per connection (``open`` an execution, ``close`` it and take
  its request log, ``stats``).
- ``/gw/x/<execution>/model.sock``: one listener per agent execution, the
  only socket that execution's container can see (its folder alone is
  mounted there). It speaks HTTP: a reverse proxy to the one configured
  upstream, which adds the API key itself (the agent never has it), refuses
  anything that is not a request for the upstream's API path, logs every
  request with the usage the upstream reports (or counts it), and holds
  each request's worst case against the run's budget (requests, tokens,
  cost) until its answer is counted (``budget.py``); a request still in
  flight when its execution closes is cut upstream and counted.
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

import contextlib
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

from gateway.budget import (
    Budget,
    Reservation,
    answer_limit,
    counted_usage,
    encoded,
    is_completion,
    json_object,
    prepared,
    prompt_estimate,
    usage_of,
)
from gateway.secrets import Scrubber
from gateway.tunnel import Tunnels, log_entry, start_squid

__all__ = ["Budget", "Gateway", "Upstream", "serve", "usage_of"]

KEY_VARIABLE = "BUGHUNT_GATEWAY_KEY"
"""The gateway container's variable holding the model's key (never the agent's)."""

SQUID_FOLDER = "/tmp/bughunt-squid"  # noqa: S108 - the gateway container's own tmpfs
"""Where squid's configuration is written (tunnels only)."""
MAX_BODY = 16 * 1024 * 1024
"""Largest request or response body relayed, in bytes."""
UPSTREAM_TIMEOUT_S = 600.0
SOCKET_MODE = 0o660
"""Sockets: the gateway's user (the agent's too) and the run's group; no other user."""
REFUSED_LOGGED = 100
"""Refused requests logged per execution; later ones are only counted, in one closing entry."""
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
        self.unlogged: dict[str, int] = {}
        self.refusals: dict[str, int] = {}
        self.live: dict[str, dict[int, _InFlight]] = {}
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
            self.unlogged.setdefault(execution, 0)
            self.refusals.setdefault(execution, 0)
            self.live.setdefault(execution, {})
        path = os.path.join(folder, "model.sock")
        servers: list[socketserver.BaseServer] = [_UnixHTTPServer(path, _handler(self, execution))]
        os.chmod(path, SOCKET_MODE)
        if self.tunnels is not None:
            path = os.path.join(folder, "connect.sock")
            servers.append(self.tunnels.server(execution, path))
            os.chmod(path, SOCKET_MODE)
        with self._lock:
            self.servers[execution] = servers
        for server in servers:
            threading.Thread(target=server.serve_forever, daemon=True).start()

    def refused(self, execution: str, entry: dict[str, Any]) -> None:
        """A refused request's entry leaves the log past :data:`REFUSED_LOGGED`; it is counted."""
        with self._lock:
            log = self.logs.get(execution)
            if log is None:
                return
            self.refusals[execution] += 1
            if self.refusals[execution] <= REFUSED_LOGGED:
                return
            for i in range(len(log) - 1, -1, -1):  # it started recently: near the end
                if log[i] is entry:
                    del log[i]
                    self.unlogged[execution] += 1
                    return

    def in_flight(self, execution: str, request: _InFlight) -> bool:
        """Note a request about to go upstream; False when its execution has ended (do not send)."""
        with self._lock:
            live = self.live.get(execution)
            if live is None:
                return False
            live[id(request)] = request
            return True

    def landed(self, execution: str, request: _InFlight) -> None:
        with self._lock:
            self.live.get(execution, {}).pop(id(request), None)

    def close(self, execution: str) -> list[dict[str, Any]]:
        """Stop ``execution``'s listeners, cancel its requests upstream, end its live tunnels,
        and hand back its log.

        A request still in flight has its upstream connection cut and is
        counted at its reservation: the upstream may have done the work.
        """
        with self._lock:
            servers = self.servers.pop(execution, [])
            live = list(self.live.pop(execution, {}).values())
        for server in servers:
            server.shutdown()
            server.server_close()
        for request in live:
            request.cancel(self.budget)
        if self.tunnels is not None:
            self.tunnels.end(execution)
        with self._lock:
            settled = [_settled(entry) for entry in self.logs.pop(execution, [])]
            unlogged = self.unlogged.pop(execution, 0)
            self.refusals.pop(execution, None)
        log, refusals = [], 0
        for entry in settled:  # tunnels' refusals too, bounded with the model's
            refusals += entry["refused"] is not None
            if entry["refused"] is not None and refusals > REFUSED_LOGGED:
                unlogged += 1
            else:
                log.append(entry)
        if unlogged:
            entry = log_entry("model")
            entry["refused"] = f"{unlogged} more refused requests, not logged one by one"
            entry["count"] = unlogged
            log.append(entry)
        return log


class _InFlight:
    """A request sent upstream: its connection (cut to cancel it), reservation and log entry."""

    def __init__(self, held: Reservation, entry: dict[str, Any]) -> None:
        self.held = held
        self.entry = entry
        self.connection: http.client.HTTPConnection | None = None
        self.cancelled = False
        self._lock = threading.Lock()

    def attach(self, connection: http.client.HTTPConnection) -> bool:
        """Hold the connection to cut; False if already cancelled (do not use it)."""
        with self._lock:
            self.connection = connection
            return not self.cancelled

    def cancel(self, budget: Budget) -> None:
        with self._lock:
            self.cancelled = True
            connection = self.connection
        if connection is not None and connection.sock is not None:
            with contextlib.suppress(OSError):  # already closed: nothing to cut
                connection.sock.shutdown(socket.SHUT_RDWR)
        cost = budget.settle(self.held, None, None)
        if self.entry["status"] is None:
            self.entry["refused"] = "cancelled upstream when the execution ended"
            self.entry["tokens_in"], self.entry["tokens_out"] = self.held.prompt, self.held.answer
            self.entry["cost"] = cost
            self.entry["usage"] = "reserved"


def _settled(entry: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``entry``; one that never got a status nor a refusal says it did not finish."""
    entry = dict(entry)
    if entry["status"] is None and entry["refused"] is None:
        entry["refused"] = "unfinished when the execution ended"
    return entry


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    request_queue_size = 128  # an agent's parallel requests; at the default 5, connects fail

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

    def log_message(self, format: str, *args: Any) -> None:  # noqa: ARG002 - http.server's signature
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
            if entry["refused"] is not None:
                self.gateway.refused(self.execution, entry)

    def _cancelled(self) -> None:
        """Tell the agent, if it is still there, and hang up (the execution's close counted it)."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self._refuse(503, "cancelled", "the agent's execution ended")

    def _shape_refused(self, entry: dict[str, Any], status: int, why: str) -> None:
        entry["refused"] = why
        entry["status"] = status
        self.gateway.budget.count_refused()

    def _relay_into(self, entry: dict[str, Any]) -> None:
        if self.headers.get("Transfer-Encoding"):
            self._shape_refused(entry, 411, "chunked request body")
            self._refuse(411, "length_required", "send a Content-Length body")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self._shape_refused(entry, 413, "bad or oversized body")
            self._refuse(413, "too_large", f"bodies up to {MAX_BODY} bytes")
            self.close_connection = True
            return
        body = self.rfile.read(length)
        entry["bytes_in"] = len(body)
        if not self.gateway.upstream.allows(self.path):
            self._shape_refused(entry, 403, "not the model's API")
            self._refuse(403, "forbidden", "only the model's API is reachable through this gateway")
            return
        doc = json_object(body)
        prompt = prompt_estimate(body)
        # A request with no body (GET /models) produces no answer tokens worth holding.
        wanted = answer_limit(doc) if body else 0
        lowerable = is_completion(doc) or answer_limit(doc) is not None
        held = self.gateway.budget.reserve(prompt, wanted, can_limit=lowerable)
        if isinstance(held, str):
            entry["refused"] = f"budget: {held}"
            entry["status"] = 429
            self._refuse(429, "budget_exceeded", f"the run's budget is spent ({held})")
            return
        if doc is not None and prepared(doc, held.limit):
            body = encoded(doc)
        request = _InFlight(held, entry)
        if not self.gateway.in_flight(self.execution, request):
            self.gateway.budget.settle(held, 0, 0)  # never sent
            entry["refused"] = "unfinished when the execution ended"
            return
        try:
            self._forward(request, body)
        finally:
            self.gateway.landed(self.execution, request)

    def _forward(self, request: _InFlight, body: bytes) -> None:
        entry, held = request.entry, request.held
        upstream = self.gateway.upstream
        headers = {name: value for name, value in self.headers.items() if name.lower() not in _HOP}
        headers["Host"] = upstream.host_header
        headers["Accept-Encoding"] = "identity"  # usage is read from the body
        if self.gateway.key:
            headers["Authorization"] = f"Bearer {self.gateway.key}"
        connection = upstream.connection()
        sent = False
        try:
            if not request.attach(connection):
                self._cancelled()
                return
            connection.request(self.command, self.path, body=body, headers=headers)
            sent = True
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
            if request.cancelled:
                self._cancelled()
                return
            # Once sent, the upstream may have done the work: counted at the reservation.
            entry["cost"] = self.gateway.budget.settle(
                held, None if sent else 0, None if sent else 0
            )
            entry["status"] = 502
            entry["refused"] = f"upstream unreachable: {type(exc).__name__}"
            self._refuse(502, "upstream_error", f"the model did not answer ({type(exc).__name__})")
            return
        finally:
            connection.close()
        if request.cancelled:
            self._cancelled()
            return
        usage = usage_of(data, content_type)
        entry.update(usage)
        entry["usage"] = "reported"
        if usage["tokens_in"] is None or usage["tokens_out"] is None:
            entry["usage"] = "counted"
            if usage["tokens_in"] is None:
                entry["tokens_in"] = held.prompt
            if usage["tokens_out"] is None:
                entry["tokens_out"] = counted_usage(data, content_type)
        entry["cost"] = self.gateway.budget.settle(held, entry["tokens_in"], entry["tokens_out"])
        if len(data) > MAX_BODY:
            entry["status"] = 502
            entry["refused"] = "upstream answer too large"
            self._refuse(502, "upstream_error", f"the answer is over {MAX_BODY} bytes")
            return
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
    # Sockets are the run's group's, never any user's: the host (in the group, or root)
    # removes them, and no other user of the host may connect.
    os.umask(0o007)
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
