"""Bytes in and out of a container: capped capture, Docker's stream framing, the socket pump.

``OutputCapture`` and ``FrameDecoder`` are pure and hold bounded memory
whatever a container prints; ``pump`` moves a workspace tar into a hijacked
attach/exec connection while reading what comes back, until end of stream
or a deadline.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any

DEFAULT_CAP = 64 * 1024
"""Bytes kept at each end of an execution's output."""

_CHUNK = 64 * 1024
_QUIET_S = 0.5  # how long a stream may be quiet before ``ended`` is asked


class OutputCapture:
    """Keeps the first ``cap`` and the last ``cap`` bytes of a stream and counts the rest.

    Memory stays under ``2 * cap`` plus one chunk, however much is fed.
    """

    def __init__(self, cap: int = DEFAULT_CAP) -> None:
        if cap < 1:
            raise ValueError(f"cap must be positive, got {cap}")
        self.cap = cap
        self.total = 0
        self._head = bytearray()
        self._tail = bytearray()

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the stream."""
        self.total += len(data)
        room = self.cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > self.cap:
                # bytearray drops from its front without copying the rest.
                del self._tail[: len(self._tail) - self.cap]

    @property
    def cut(self) -> int:
        """Bytes seen but kept at neither end."""
        return self.total - len(self._head) - len(self._tail)

    def raw(self) -> bytes:
        """Head and tail as bytes, without a marker (for callers that cap small enough to keep all)."""
        return bytes(self._head) + bytes(self._tail)

    def text(self) -> str:
        """Head and tail as text (undecodable bytes replaced), with a marker where bytes were cut."""
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        if self.cut:
            return f"{head}\n[... {self.cut} bytes of output cut ...]\n{tail}"
        return head + tail


class FrameDecoder:
    """Decodes Docker's multiplexed stdout/stderr framing, passing payload bytes to ``sink``.

    Frames are ``[stream, 0, 0, 0, size (4 bytes, big-endian)]`` then ``size``
    bytes. Payload is forwarded as it arrives, never buffered whole, so a
    huge frame costs no memory. stdout and stderr are merged in arrival
    order, as a terminal shows them, unless ``stderr`` is given: then stderr's
    payload goes there instead. A header naming no known stream raises
    ``ValueError`` (the connection is not a Docker stream).
    """

    def __init__(
        self, sink: Callable[[bytes], None], *, stderr: Callable[[bytes], None] | None = None
    ) -> None:
        self._sinks = {0: sink, 1: sink, 2: stderr or sink}
        self._sink = sink
        self._header = bytearray()
        self._remaining = 0

    def feed(self, data: bytes) -> None:
        """Take the next bytes read from the connection."""
        view = memoryview(data)
        pos = 0
        while pos < len(view):
            if self._remaining:
                take = min(self._remaining, len(view) - pos)
                self._sink(bytes(view[pos : pos + take]))
                pos += take
                self._remaining -= take
                continue
            need = 8 - len(self._header)
            self._header += view[pos : pos + need]
            pos += need
            if len(self._header) == 8:
                if self._header[0] not in (0, 1, 2) or any(self._header[1:4]):
                    raise ValueError(f"not a Docker stream header: {bytes(self._header)!r}")
                self._sink = self._sinks[self._header[0]]
                self._remaining = int.from_bytes(self._header[4:8], "big")
                self._header.clear()


def raw_socket(sock: Any) -> socket.socket:
    """The ``socket.socket`` under what docker-py returns for a hijacked connection.

    docker-py hands back a ``SocketIO`` for unix and plain TCP engines. Its
    reads turn unusable after one timeout, so the pump works on the socket.
    """
    inner = getattr(sock, "_sock", sock)
    if not isinstance(inner, socket.socket):
        raise TypeError(f"unsupported engine connection type {type(sock).__name__}")
    return inner


def taken_with_headers(sock: Any) -> bytes:
    """The stream's first bytes that the engine's HTTP response read along with its headers.

    docker-py parses the upgrade's status line and headers through a buffered
    reader, whose first read takes whatever the socket already holds: when a
    process prints at once and the reading thread was slow to get the GIL, that
    is the first frames of its output. They are in that reader, not on the
    socket, so reading the socket alone would lose them (or fall out of step
    with the framing mid-frame). Call with the socket already non-blocking: a
    reader with nothing buffered then makes one read that finds nothing, or
    the next bytes, which are the stream's just the same.
    """
    response = getattr(sock, "_response", None)
    reader = getattr(getattr(getattr(response, "raw", None), "_fp", None), "fp", None)
    if reader is None:  # a plain socket, not a hijacked engine response
        return b""
    try:
        early = reader.read1(_CHUNK)
    except (OSError, ValueError):  # TLS wanting a read (nothing there), or already closed
        return b""
    return bytes(early or b"")


def pump(
    sock: Any,
    payload: bytes,
    sink: Callable[[bytes], None],
    deadline: float,
    *,
    ended: Callable[[], bool] | None = None,
) -> bool:
    """Send ``payload`` then end the write side, while passing everything read to ``sink``.

    Reads and writes are interleaved, so a process that prints while its
    input is still arriving cannot deadlock the two. Returns True at end of
    stream, False when ``deadline`` (``time.monotonic()``) passes first. A
    peer that stops reading or hangs up ends the sending quietly (the
    process has exited; its output still tells why). ``ended``, when given,
    is asked whenever the stream has been quiet for a while: a command whose
    background children still hold the stream open is over once it says so
    (what is already buffered is still read).
    """
    raw = raw_socket(sock)
    raw.setblocking(False)
    early = taken_with_headers(sock)
    if early:
        sink(early)
    view = memoryview(payload)
    sent = 0
    with selectors.DefaultSelector() as selector:
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if payload else 0)
        if not payload:
            _close_write(raw)
        selector.register(raw, events)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready = selector.select(min(left, _QUIET_S) if ended is not None else left)
            if not ready and ended is not None and ended():
                _drain(raw, sink)
                return True
            for _key, mask in ready:
                if mask & selectors.EVENT_READ and _read_ready(raw, sink):
                    return True
                if mask & selectors.EVENT_WRITE and sent < len(view):
                    sent = _send_ready(raw, view, sent)
                    if sent >= len(view):
                        _close_write(raw)
                        selector.modify(raw, selectors.EVENT_READ)


def _read_ready(raw: socket.socket, sink: Callable[[bytes], None]) -> bool:
    """Pass one read's bytes to ``sink``; True at end of stream or when the peer reset it."""
    try:
        data = raw.recv(_CHUNK)
    except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
        return False
    except ConnectionResetError:
        return True
    if not data:
        return True
    sink(data)
    return False


def _send_ready(raw: socket.socket, view: memoryview, sent: int) -> int:
    """Send the chunk of ``view`` after ``sent``; the new count, or all of it if the peer left."""
    try:
        return sent + raw.send(view[sent : sent + _CHUNK])
    except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
        return sent
    except (BrokenPipeError, ConnectionResetError):
        return len(view)


def _drain(raw: socket.socket, sink: Callable[[bytes], None]) -> None:
    """Pass on what is already buffered on a non-blocking socket, without waiting for more."""
    while True:
        try:
            data = raw.recv(_CHUNK)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError, OSError):
            return
        if not data:
            return
        sink(data)


def _close_write(raw: socket.socket) -> None:
    """Half-close: the process reads end of input; its output keeps coming back."""
    with contextlib.suppress(OSError):  # already closed by the peer: nothing to signal
        raw.shutdown(socket.SHUT_WR)


def close_quietly(sock: Any) -> None:
    """Close a hijacked connection, ignoring a peer that is already gone."""
    for obj in (sock, getattr(sock, "_sock", None)):
        if obj is not None:
            with contextlib.suppress(OSError):  # a dead connection has nothing to report
                obj.close()
