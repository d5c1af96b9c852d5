"""Capped capture, Docker stream framing and the pump: no Docker engine (a hijacked connection
is played by a server on 127.0.0.1)."""

from __future__ import annotations

import itertools
import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import given, strategies as st

from tasks.sandbox.engine._io import FrameDecoder, OutputCapture, pump


def _frames(chunks: list[tuple[int, bytes]]) -> bytes:
    return b"".join(struct.pack(">BxxxL", kind, len(data)) + data for kind, data in chunks)


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def test_short_output_is_kept_whole() -> None:
    """Output under twice the cap comes back unchanged, with nothing cut."""
    capture = OutputCapture(cap=8)
    capture.feed(b"hello ")
    capture.feed(b"world")
    assert capture.text() == "hello world"
    assert capture.cut == 0


def test_long_output_keeps_head_and_tail_and_says_how_much_was_cut() -> None:
    """Past twice the cap, the first and last cap bytes are kept and the cut is counted."""
    capture = OutputCapture(cap=4)
    capture.feed(b"ABCD" + b"x" * 100 + b"WXYZ")
    assert capture.cut == 100
    assert capture.text() == "ABCD\n[... 100 bytes of output cut ...]\nWXYZ"


@given(data=st.binary(max_size=400), cuts=st.lists(st.integers(0, 400), max_size=12))
def test_capture_is_independent_of_chunking(data: bytes, cuts: list[int]) -> None:
    """However the stream is chunked, head, tail and cut count are the same."""
    capture = OutputCapture(cap=16)
    for chunk in _split(data, cuts):
        capture.feed(chunk)
    assert capture.total == len(data)
    assert capture.cut == max(0, len(data) - 32)
    kept_head = data[:16].decode("utf-8", errors="replace")
    assert capture.text().startswith(kept_head)
    if len(data) > 32:
        assert capture.text().endswith(data[-16:].decode("utf-8", errors="replace"))


@given(
    chunks=st.lists(st.tuples(st.sampled_from([1, 2]), st.binary(max_size=50)), max_size=10),
    cuts=st.lists(st.integers(0, 700), max_size=20),
)
def test_frames_decode_to_their_payload_however_split(
    chunks: list[tuple[int, bytes]], cuts: list[int]
) -> None:
    """Frames split at any byte boundaries decode to the concatenated payloads."""
    out: list[bytes] = []
    decoder = FrameDecoder(out.append)
    for piece in _split(_frames(chunks), cuts):
        decoder.feed(piece)
    assert b"".join(out) == b"".join(data for _, data in chunks)


def test_a_stream_that_is_not_docker_framing_is_refused() -> None:
    """A header naming no known stream raises ValueError instead of garbling output."""
    with pytest.raises(ValueError, match="not a Docker stream"):
        FrameDecoder(lambda _data: None).feed(b"HTTP/1.1 500 oops\r\n")


@pytest.fixture
def upgrade_then_output() -> Iterator[tuple[str, bytes]]:
    """An engine stand-in on 127.0.0.1 that answers an exec start with its upgrade headers and
    the exec's first frames in one write, as a busy client finds them on the socket."""
    output = b"".join(b"%d\n" % n for n in range(300))
    reply = (
        b"HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
        b"Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n"
        + _frames([(1, output[:700]), (2, output[700:900]), (1, output[900:])])
    )
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(4096)
            head, _, body = request.partition(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            while len(body) < length:
                body += conn.recv(4096)
            conn.sendall(reply)
            conn.shutdown(socket.SHUT_WR)
            time.sleep(0.2)  # the client reads to end of stream before the connection goes

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}", output
    finally:
        thread.join(5)
        server.close()


def test_output_read_with_the_upgrade_headers_is_not_lost(
    upgrade_then_output: tuple[str, bytes],
) -> None:
    """Frames that docker-py's response reader took off the socket with the headers reach the
    sink first, in order: the pump does not start mid-stream (it lost them, or failed on a
    payload byte read as a frame header, when a busy flow process read the headers late)."""
    import docker

    address, output = upgrade_then_output
    api = docker.APIClient(base_url=address, version="1.41")
    sock = api.exec_start("exec-id", socket=True)
    out: list[bytes] = []
    finished = pump(sock, b"", FrameDecoder(out.append).feed, time.monotonic() + 10)
    assert finished
    assert b"".join(out) == output
