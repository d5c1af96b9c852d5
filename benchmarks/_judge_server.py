"""A local OpenAI-compatible judge endpoint with a fixed latency and a concurrency limit.

It stands for a hosted model behind a rate-limited gateway: every
``POST /v1/chat/completions`` waits for one of ``concurrency`` slots (extra
requests queue, as a gateway's would), holds it for ``latency_s``, then
answers a valid chat completion whose content is a strict judge answer
(``{"winner": ..., "rationale": ...}``; the winner is a hash of the request
body, so the same prompt always gets the same answer). The best any client
can do is therefore ``concurrency / latency_s`` calls per second.

The server is a small asyncio HTTP/1.1 server (keep-alive, Content-Length
bodies) in a child process of its own (standard library only), so its work does not share the
client's interpreter lock: what the benchmark measures is our client side.
``GET /stats`` answers ``{"requests": n, "max_in_flight": m}`` (m counts
requests holding a slot, so it is at most ``concurrency``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
import urllib.request
from types import TracebackType

CHAT_PATH = "/v1/chat/completions"
_WINNERS = ("first", "second", "tie")


def _completion(body: bytes) -> bytes:
    winner = _WINNERS[hashlib.sha256(body).digest()[0] % 3]
    content = json.dumps({"winner": winner, "rationale": "benchmark judge"})
    return json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 0,
            "model": "bench-judge",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()


def _response(status: int, body: bytes) -> bytes:
    reason = {200: "OK", 404: "Not Found"}.get(status, "Error")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n"
    )
    return head.encode() + body


async def _serve(concurrency: int, latency_s: float) -> None:
    slots = asyncio.Semaphore(concurrency)
    stats = {"requests": 0, "in_flight": 0, "max_in_flight": 0}

    async def answer(body: bytes) -> bytes:
        stats["requests"] += 1
        async with slots:
            stats["in_flight"] += 1
            stats["max_in_flight"] = max(stats["max_in_flight"], stats["in_flight"])
            try:
                await asyncio.sleep(latency_s)
            finally:
                stats["in_flight"] -= 1
        return _response(200, _completion(body))

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                body = await reader.readexactly(length) if length else b""
                if method == "POST" and path == CHAT_PATH:
                    out = await answer(body)
                elif method == "GET" and path == "/stats":
                    shown = {k: v for k, v in stats.items() if k != "in_flight"}
                    out = _response(200, json.dumps(shown).encode())
                else:
                    out = _response(404, b'{"error": {"message": "no such route"}}')
                writer.write(out)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client closed its connection
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)  # the parent reads the port
    async with server:
        await server.serve_forever()


class JudgeServer:
    """The endpoint in a child process; use as a context manager."""

    def __init__(self, concurrency: int, latency_s: float) -> None:
        if concurrency < 1 or latency_s < 0:
            raise ValueError("concurrency must be ≥ 1 and latency ≥ 0")
        self.concurrency = concurrency
        self.latency_s = latency_s
        self._proc: subprocess.Popen[str] | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        """The judge's ``base_url`` for this server (an OpenAI-compatible endpoint)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, int]:
        """Requests received so far and the most that held a slot at once."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=10) as r:
            data: dict[str, int] = json.loads(r.read())
        return data

    def __enter__(self) -> JudgeServer:
        # Run by path: the child needs nothing but the standard library.
        self._proc = subprocess.Popen(
            [sys.executable, __file__, str(self.concurrency), repr(self.latency_s)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line.strip().isdigit():
            self._proc.kill()
            raise RuntimeError(f"the benchmark judge server did not start (said {line!r})")
        self.port = int(line)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=10)
            if self._proc.stdout is not None:
                self._proc.stdout.close()


if __name__ == "__main__":
    asyncio.run(_serve(int(sys.argv[1]), float(sys.argv[2])))
