"""Debian's headless Chromium for the tests: found or failed, every request sent to a trap.

The trap is a local HTTP proxy that records each host asked for and answers
nothing, so no byte leaves the machine and a test sees what a page (or the
browser itself) reached for. :func:`run_chromium` is one shot (a screenshot or
a DOM dump); :func:`devtools` keeps a browser open and drives its page over
the DevTools protocol on 127.0.0.1, for what only JavaScript can tell (a
rendered width, a single-page app that has finished drawing). CI installs the
browser with ``apt-get install -y chromium``.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.sync.client import connect
from websockets.sync.connection import Connection

BROWSER_HOSTS = re.compile(
    r"(?:^|\.)(?:google\.com|googleapis\.com|gstatic\.com|gvt1\.com|gvt2\.com)$"
)
"""Hosts of Chromium's own services (update, time, accounts), told apart from a page's."""

QUIET = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-features="
    + ",".join(
        (
            "Translate",
            "OptimizationHints",
            "MediaRouter",
            "DialMediaRouteProvider",
            "NetworkTimeServiceQuerying",  # clients2.google.com/time
            "AutofillServerCommunication",  # content-autofill.googleapis.com
        )
    ),
    "--metrics-recording-only",
)
"""Flags of every run: headless, and as little of the browser's own traffic as flags stop.

Chromium 156 still asks at start for update.googleapis.com (an on-demand
component) and accounts.google.com (the signed-in accounts list), whatever
the flags: the trap gets those too, and :data:`BROWSER_HOSTS` tells them apart.
"""

START_TIMEOUT_S = 60.0
CALL_TIMEOUT_S = 60.0


def chromium() -> str:
    """Path of Debian's chromium; fails (never skips) when it is missing."""
    path = shutil.which("chromium")
    assert path, (
        "chromium is missing: apt-get install -y chromium (Debian's package; .ci/run installs it)"
    )
    return path


@dataclass
class Trap:
    """A local HTTP proxy that records each request's host and answers nothing."""

    port: int = 0
    hosts: list[str] = field(default_factory=list)

    def page_hosts(self) -> list[str]:
        """Hosts asked for other than Chromium's own services."""
        return [h for h in self.hosts if not BROWSER_HOSTS.search(h)]


@contextmanager
def trap() -> Iterator[Trap]:
    """Run a trap proxy on a free loopback port for the duration of the block."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    out = Trap(port=server.getsockname()[1])
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    line = conn.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
                except OSError:
                    continue
                if not line:
                    continue  # closed (or timed out under load) before asking for any host
                m = re.match(r"(?:CONNECT ([^:\s]+)|[A-Z]+ \w+://([^/:\s]+))", line)
                out.hosts.append((m.group(1) or m.group(2)) if m else line)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield out
    finally:
        stop.set()
        thread.join(5)
        server.close()


def browser_argv(proxy: Trap, direct: Sequence[str] = (), *args: str) -> list[str]:
    """Chromium's command line: :data:`QUIET`, and every request to ``proxy`` but those to the
    ``direct`` ``host:port`` origins (loopback included: nothing else bypasses the trap)."""
    bypass = ";".join(["<-loopback>", *direct])
    return [
        chromium(),
        *QUIET,
        f"--proxy-server=http://127.0.0.1:{proxy.port}",
        f"--proxy-bypass-list={bypass}",
        *args,
    ]


def run_chromium(
    page: Path, home: Path, proxy: Trap, *args: str
) -> subprocess.CompletedProcess[str]:
    """Headless Chromium on ``file://page`` with every request sent to the trap."""
    cmd = [*browser_argv(proxy, (), *args), page.resolve().as_uri()]
    env = {**os.environ, "HOME": str(home)}
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env, cwd=home)
    assert result.returncode == 0, result.stderr[-2000:]
    return result


class DevTools:
    """One page of a running Chromium, driven over the DevTools protocol."""

    def __init__(self, ws: Connection) -> None:
        self._ws = ws
        self._ids = itertools.count(1)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command; its result, or an AssertionError with the protocol's error."""
        call_id = next(self._ids)
        self._ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
        deadline = time.monotonic() + CALL_TIMEOUT_S
        while True:
            message = json.loads(self._ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") != call_id:
                continue  # an event (none is enabled) or an answer to an abandoned call
            assert "error" not in message, f"{method}: {message['error']}"
            result: dict[str, Any] = message["result"]
            return result

    def evaluate(self, expression: str) -> Any:
        """The JSON value of ``expression`` in the page (a promise is awaited)."""
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        assert "exceptionDetails" not in result, (expression, result["exceptionDetails"])
        return result["result"].get("value")

    def navigate(self, url: str) -> None:
        """Load ``url`` in the page (returns once the navigation started, not when it drew)."""
        self.call("Page.navigate", url=url)

    def wait_for(self, expression: str, timeout: float, what: str) -> Any:
        """Poll ``expression`` until its JSON value is truthy and return it; a failure naming
        ``what`` (with the page's text) after ``timeout`` s. An exception thrown while the page
        is still loading counts as not yet."""
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            result = self.call(
                "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
            )
            last = result.get("exceptionDetails") or result["result"].get("value")
            if "exceptionDetails" not in result and last:
                return last
            time.sleep(0.25)
        body = self.evaluate("document.body ? document.body.innerText.slice(0, 2000) : ''")
        raise AssertionError(
            f"{what}: not there after {timeout:.0f} s (last: {last!r}); the page shows:\n{body}"
        )

    def screenshot(self, png: Path) -> Path:
        """The whole page (not only the window) as a PNG at ``png``."""
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        png.write_bytes(base64.b64decode(data["data"]))
        return png


def _get_json(url: str) -> Any:
    # No proxy from the environment: the DevTools endpoint is on loopback.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=5) as resp:
        return json.load(resp)


def _page_socket(profile: Path, proc: subprocess.Popen[bytes], log: Path) -> str:
    """The DevTools WebSocket of the browser's first page, once Chromium listens."""
    active = profile / "DevToolsActivePort"
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"chromium exited {proc.returncode}:\n{log.read_text()[-2000:]}"
        if active.is_file() and (lines := active.read_text().split()):
            with suppress(OSError, ValueError):
                targets = _get_json(f"http://127.0.0.1:{lines[0]}/json/list")
                pages = [t for t in targets if t.get("type") == "page"]
                if pages:
                    url: str = pages[0]["webSocketDebuggerUrl"]
                    return url
        time.sleep(0.25)
    raise AssertionError(f"chromium's DevTools not up after {START_TIMEOUT_S:.0f} s")


@contextmanager
def devtools(
    home: Path, proxy: Trap, window: tuple[int, int], direct: Sequence[str] = ()
) -> Iterator[DevTools]:
    """A headless Chromium on ``about:blank`` (profile under ``home``), its page driven over
    DevTools on 127.0.0.1 until exit; requests to anything but ``direct`` go to ``proxy``."""
    profile = home / "profile"
    profile.mkdir(parents=True, exist_ok=True)
    log = home / "chromium.log"
    argv = browser_argv(
        proxy,
        direct,
        f"--user-data-dir={profile}",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        f"--window-size={window[0]},{window[1]}",
        "about:blank",
    )
    env = {**os.environ, "HOME": str(home)}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv, env=env, cwd=home, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        url = _page_socket(profile, proc, log)
        with connect(url, proxy=None, max_size=None, open_timeout=START_TIMEOUT_S) as ws:
            yield DevTools(ws)
    finally:
        # The browser's zygote and renderers share its process group: end them all.
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
