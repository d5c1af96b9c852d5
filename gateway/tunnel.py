"""The gateway's CONNECT tunnels: exactly the agent's ``network.allow`` pairs, through squid.

An agent with ``allow`` entries gets, beside its model socket, a second
socket per execution, ``connect.sock`` (its loopback port 3128, the
``HTTPS_PROXY`` of its container). Each connection on it is one tunnel:

1. the request head is read (8 KiB at most); anything but ``CONNECT
   host:port`` is refused (405), and so is a target that is not exactly one
   of the listed pairs in canonical form (403);
2. a fresh, canonical ``CONNECT`` (no header of the agent's) goes to squid on
   the gateway's loopback, which allows exactly the same pairs and nothing
   else (Debian's squid, started by the gateway with :func:`squid_config`):
   the gateway checks, squid checks again and makes the connection;
3. squid's answer is the tunnel's status; on 200 bytes are spliced both ways
   until both sides have ended (or nothing moves for ten minutes, or the
   execution closes);
4. its entry in the execution's log (put there once the head is read, in
   the order tunnels and model requests started) is shaped like a model
   request's, with ``kind = "tunnel"``: target, status, bytes each way,
   seconds, and the reason when refused.

Why squid behind a check of our own: squid resolves names and makes the
connections (with its timeouts and its decades of CONNECT handling), while
the gateway attributes each tunnel to the execution it came from and keeps
one log for everything an execution did. Standard library only, like the
rest of the gateway.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import socketserver
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from gateway.hostport import HostPort, parse_host_port

SQUID = "/usr/sbin/squid"
"""Debian's squid, in the gateway's image when an agent has ``allow`` entries."""
SQUID_PORT = 3128
"""squid's port on the gateway container's loopback (nothing else can reach it)."""
HEAD_LIMIT = 8 * 1024
"""Largest CONNECT request head read from an agent, in bytes."""
HEAD_TIMEOUT_S = 30.0
"""How long an agent may take to send its request head."""
ANSWER_TIMEOUT_S = 90.0
"""How long squid may take to answer a CONNECT (its own DNS and connect timeouts are 30 s)."""
IDLE_TIMEOUT_S = 600.0
"""A tunnel in which nothing moves either way this long is closed."""
READY_S = 15.0
"""How long squid may take to listen."""

_REASONS = {
    400: "Bad Request",
    403: "Forbidden",
    405: "Method Not Allowed",
    431: "Request Header Fields Too Large",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def squid_config(allowed: Iterable[HostPort], *, port: int = SQUID_PORT) -> str:
    """squid's whole configuration: CONNECT to exactly ``allowed``, everything else denied.

    One ``acl`` pair and one ``http_access allow CONNECT`` line per pair (a
    name matched as written, never through a reverse lookup; an IP as an
    address), then ``deny all``. It listens on the loopback only, caches
    nothing, writes no file (no pid file, logs on stdio), so it runs as the
    sandbox user on a read-only root.
    """
    lines = [
        "# Written by the bughunt gateway: CONNECT to exactly these host:port pairs.",
        f"http_port 127.0.0.1:{port}",
        "pid_filename none",
        "cache deny all",
        "cache_mem 0 MB",
        "cache_store_log none",
        "digest_generation off",
        "netdb_filename none",
        "pinger_enable off",
        "logfile_rotate 0",
        "coredump_dir none",
        "cache_log /dev/stderr",
        "access_log stdio:/dev/stdout squid",
        "shutdown_lifetime 0 seconds",
        "visible_hostname bughunt-gateway",
        "httpd_suppress_version_string on",
        "connect_timeout 30 seconds",
        "dns_timeout 30 seconds",
        "acl CONNECT method CONNECT",
    ]
    for i, pair in enumerate(sorted(set(allowed), key=str)):
        match = f"dstdomain -n {pair.host}" if pair.ip == 0 else f"dst {pair.host}"
        lines += [
            f"acl host{i} {match}",
            f"acl port{i} port {pair.port}",
            f"http_access allow CONNECT host{i} port{i}",
        ]
    lines.append("http_access deny all")
    return "\n".join(lines) + "\n"


def start_squid(
    allowed: Iterable[HostPort], *, folder: str, env: dict[str, str], port: int = SQUID_PORT
) -> subprocess.Popen[bytes]:
    """squid in the foreground with :func:`squid_config`, once it listens; RuntimeError if it does not.

    Its configuration is written in ``folder`` (the container's own tmpfs);
    its logs go to the gateway's output.
    """
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "squid.conf")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(squid_config(allowed, port=port))
    process = subprocess.Popen(
        [SQUID, "-N", "-f", path], env=env, stdin=subprocess.DEVNULL, cwd=folder
    )
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"squid exited {process.returncode} before it listened")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1.0):
            return process
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"squid did not listen on 127.0.0.1:{port} within {READY_S:g} s")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def log_entry(kind: str, method: str | None = None, path: str | None = None) -> dict[str, Any]:
    """A fresh request-log entry (a model request or a tunnel): the one shape both are logged in."""
    return {
        "at": _now(),
        "kind": kind,
        "method": method,
        "path": path,
        "status": None,
        "bytes_in": 0,
        "bytes_out": 0,
        "seconds": 0.0,
        "model": None,
        "tokens_in": None,
        "tokens_out": None,
        "cost": 0.0,
        "refused": None,
    }


def _read_head(sock: socket.socket, limit: int) -> tuple[bytes | None, bytes]:
    """A head (None when the peer stopped, stalled or went past ``limit`` first) and what followed it.

    Without a head, the second item is everything read.
    """
    data = b""
    while b"\r\n\r\n" not in data[: limit + 4]:
        if len(data) > limit + 4:
            return None, data
        try:
            chunk = sock.recv(4096)
        except OSError:  # its timeout included
            return None, data
        if not chunk:
            return None, data
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _answer(sock: socket.socket, status: int, message: str) -> None:
    body = f"bughunt gateway: {message}\n".encode()
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n"
    )
    if status == 405:
        head += "Allow: CONNECT\r\n"
    with contextlib.suppress(OSError):
        sock.sendall(head.encode() + b"\r\n" + body)


def _squid_error(head: bytes) -> str:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"x-squid-error":
            return value.strip().decode("latin-1")[:100]
    return "no reason given"


class Tunnels:
    """The allow list and squid's port; serves tunnels and ends an execution's live ones.

    ``record(execution, entry)`` puts each tunnel's entry in the log once its
    request head is read; the entry is filled in place until the tunnel ends.
    Thread-safe.
    """

    def __init__(
        self,
        allow: Iterable[str],
        *,
        record: Callable[[str, dict[str, Any]], None],
        squid_port: int = SQUID_PORT,
    ) -> None:
        self.allowed = frozenset(parse_host_port(entry) for entry in allow)
        self.squid_port = squid_port
        self._record = record
        self._live: dict[str, dict[int, list[socket.socket]]] = {}
        self._lock = threading.Condition()

    def server(self, execution: str, path: str) -> socketserver.BaseServer:
        """A listener on ``path`` whose connections are ``execution``'s tunnels (not yet serving)."""
        tunnels = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                tunnels.serve(execution, self.request)

        if os.path.exists(path):
            os.unlink(path)
        return _UnixServer(path, Handler)

    def end(self, execution: str, *, wait_s: float = 5.0) -> None:
        """Close ``execution``'s live tunnels and wait (up to ``wait_s``) until each is logged."""
        with self._lock:
            for ends in self._live.get(execution, {}).values():
                for sock in ends:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
            self._lock.wait_for(lambda: not self._live.get(execution), timeout=wait_s)
            self._live.pop(execution, None)

    def serve(self, execution: str, client: socket.socket) -> None:
        """One tunnel from its request head to its end; a connection that sent nothing is not logged."""
        started = time.monotonic()
        entry = log_entry("tunnel")
        ends = [client]  # squid's end joins once open: end() closes whatever is there
        self._track(execution, ends, add=True)
        try:
            upstream = self._open(execution, client, entry, ends)
            if upstream is not None:
                _splice(client, upstream, entry)
        except OSError as exc:  # the agent or squid went away mid-way: the entry says so
            if entry["status"] is None:
                entry["refused"] = f"connection failed: {type(exc).__name__}"
        finally:
            for sock in ends[1:]:
                sock.close()
            entry["seconds"] = round(time.monotonic() - started, 3)
            self._track(execution, ends, add=False)

    def _track(self, execution: str, ends: list[socket.socket], *, add: bool) -> None:
        with self._lock:
            if add:
                self._live.setdefault(execution, {})[id(ends)] = ends
            else:
                self._live.get(execution, {}).pop(id(ends), None)
                self._lock.notify_all()

    def _refuse(
        self, client: socket.socket, entry: dict[str, Any], status: int, reason: str, say: str
    ) -> None:
        entry["status"], entry["refused"] = status, reason
        _answer(client, status, say)

    def _open(
        self,
        execution: str,
        client: socket.socket,
        entry: dict[str, Any],
        ends: list[socket.socket],
    ) -> socket.socket | None:
        """Check the request and open the tunnel through squid; None when refused (answered)."""
        client.settimeout(HEAD_TIMEOUT_S)
        head, rest = _read_head(client, HEAD_LIMIT)
        if head is None:
            if rest:
                entry["method"] = "?"
                self._record(execution, entry)
                why = "no complete request head within 8 KiB"
                self._refuse(client, entry, 431 if len(rest) > HEAD_LIMIT else 400, why, why)
            return None
        parts = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            entry["method"] = "?"
            self._record(execution, entry)
            self._refuse(client, entry, 400, "not an HTTP request", "not an HTTP request")
            return None
        method, target = parts[0][:20], parts[1]
        entry["method"], entry["path"] = method, target[:500]
        self._record(execution, entry)
        if method != "CONNECT":
            self._refuse(
                client,
                entry,
                405,
                "not a CONNECT request",
                "this proxy only opens tunnels (CONNECT host:port) to the agent's network.allow",
            )
            return None
        try:
            pair = parse_host_port(target)
        except ValueError:
            pair = None
        if pair is None or pair not in self.allowed:
            self._refuse(
                client,
                entry,
                403,
                "not in network.allow",
                f"{target[:200]} is not in network.allow",
            )
            return None
        entry["path"] = str(pair)
        return self._through_squid(client, entry, pair, rest, ends)

    def _through_squid(
        self,
        client: socket.socket,
        entry: dict[str, Any],
        pair: HostPort,
        rest: bytes,
        ends: list[socket.socket],
    ) -> socket.socket | None:
        try:
            upstream = socket.create_connection(("127.0.0.1", self.squid_port), timeout=10.0)
        except OSError as exc:
            self._refuse(
                client, entry, 502, f"proxy unreachable: {type(exc).__name__}", "the proxy is down"
            )
            return None
        ends.append(upstream)
        try:
            # A head of our own: only the checked target reaches squid, no header of the agent's.
            upstream.sendall(f"CONNECT {pair} HTTP/1.1\r\nHost: {pair}\r\n\r\n".encode())
            upstream.settimeout(ANSWER_TIMEOUT_S)
            answer, after = _read_head(upstream, 64 * 1024)
        except OSError as exc:
            self._refuse(
                client, entry, 502, f"proxy failed: {type(exc).__name__}", "the proxy failed"
            )
            return None
        words = answer.split(b"\r\n", 1)[0].split(b" ") if answer is not None else []
        status = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
        if answer is None or not 100 <= status < 600:
            self._refuse(client, entry, 502, "proxy answered badly", "the proxy answered badly")
            return None
        if status != 200:
            why = _squid_error(answer)
            self._refuse(
                client, entry, status, f"proxy answered {status} ({why})", f"{pair}: {why}"
            )
            return None
        entry["status"] = 200
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if rest:  # the agent did not wait for the answer: what it sent already goes through
            upstream.sendall(rest)
            entry["bytes_in"] += len(rest)
        if after:
            client.sendall(after)
            entry["bytes_out"] += len(after)
        return upstream


def _splice(client: socket.socket, upstream: socket.socket, entry: dict[str, Any]) -> None:
    """Copy both ways until both sides have ended (or nothing moved for ``IDLE_TIMEOUT_S``)."""
    other = {client: upstream, upstream: client}
    counter = {client: "bytes_in", upstream: "bytes_out"}
    reading = [client, upstream]
    for sock in reading:
        sock.settimeout(IDLE_TIMEOUT_S)
    while reading:
        ready, _, _ = select.select(reading, [], [], IDLE_TIMEOUT_S)
        if not ready:
            return
        for sock in ready:
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                reading.remove(sock)
                with contextlib.suppress(OSError):
                    other[sock].shutdown(socket.SHUT_WR)
                continue
            other[sock].sendall(data)
            entry[counter[sock]] += len(data)


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
