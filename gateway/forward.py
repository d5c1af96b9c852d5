"""Inside an agent's container: loopback ports that lead to its gateway's sockets.

The agent's container has no network interface but loopback; the only way
out is the Unix sockets in ``/gw`` (its own folder of the gateway's, mounted
read-only). So that any HTTP client works unchanged, this process, the
container's main one, listens on 127.0.0.1 and splices each connection to
the matching socket: ``OPENAI_BASE_URL=http://127.0.0.1:8080/<api path>``
leads to ``model.sock`` and, for an agent with ``network.allow`` entries,
``HTTPS_PROXY=http://127.0.0.1:3128`` to ``connect.sock`` (its tunnels). It
holds no secret and can reach nothing the sockets cannot.

Standard library only: it runs in whatever image the agent uses.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading

READY = "/tmp/.bughunt-gateway-ready"  # noqa: S108 - the container's own tmpfs
"""Written once every port listens; the execution waits for it before the agent starts."""


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for end, how in ((sink, socket.SHUT_WR), (source, socket.SHUT_RD)):
            with contextlib.suppress(OSError):
                end.shutdown(how)


def _serve(listener: socket.socket, target: str) -> None:
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(target)
        except OSError:
            client.close()
            upstream.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pipe, args=(a, b), daemon=True).start()


def main(pairs: list[str]) -> None:
    """Listen on each ``port=socket-path`` pair, then mark the container ready."""
    threads = []
    for pair in pairs:
        port, _, target = pair.partition("=")
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", int(port)))
        listener.listen(64)
        threads.append(threading.Thread(target=_serve, args=(listener, target), daemon=True))
    for thread in threads:
        thread.start()
    with open(READY, "w", encoding="utf-8") as handle:
        handle.write(str(os.getpid()))
    threading.Event().wait()


if __name__ == "__main__":  # pragma: no cover - the agent container's main process
    main(sys.argv[1:])
