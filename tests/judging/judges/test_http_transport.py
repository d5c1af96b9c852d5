"""The judges' HTTP transport: its pool of kept-alive connections, and HTTPS.

Against the scripted server on a real socket (over TLS where a test says so),
through the ``openai`` backend and the call contract, as a night uses it.
"""

from __future__ import annotations

import pickle
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bughunt.models import CallStatus
from judging.judges import CallTiming, JudgeConfig, OpenAIJudge, call_judge
from tests.judging.judges.helpers import request
from tests.judging.judges.openai_server import OpenAIServer, Reply, answer, completion


def judge_for(server: OpenAIServer, max_connections: int = 64) -> OpenAIJudge:
    config = JudgeConfig(
        name="local", backend="openai", family="test", model="m", base_url=server.base_url
    )
    return OpenAIJudge(config, max_connections=max_connections)


def test_an_idle_connection_the_endpoint_dropped_costs_no_attempt(server: OpenAIServer) -> None:
    """The endpoint closes a kept-alive connection after its answer without saying so: the
    next call sees that before sending, opens a new connection and is judged at its first
    request (sent on the dropped one, it would have failed and been retried)."""
    judge = judge_for(server)
    server.script(Reply(200, completion('{"winner": "first", "rationale": "r"}'), hang_up=True))
    server.script(answer("second"))
    assert call_judge(judge, request("c1"), run_id="r").status is CallStatus.JUDGED
    time.sleep(0.2)  # the server's side of the connection is closed by now
    second = call_judge(judge, request("c2"), run_id="r", timing=CallTiming(deadline_s=5))
    assert (second.status, second.attempts, server.count) == (CallStatus.JUDGED, 1, 2)
    first_peer, second_peer = (r.peer for r in server.requests)
    assert first_peer != second_peer
    judge.close()


def test_a_call_that_finds_no_free_connection_in_time_times_out_unsent(
    server: OpenAIServer,
) -> None:
    """A pool of one held by a slow call: a second call waits for it only until its own
    deadline, then ends ``timed_out`` without a request (never more connections than the pool)."""
    judge = judge_for(server, max_connections=1)
    server.script(answer("first", delay_s=1.5))
    slow = threading.Thread(
        target=call_judge, args=(judge, request("slow")), kwargs={"run_id": "r"}
    )
    slow.start()
    while server.count == 0:
        time.sleep(0.01)
    waited = call_judge(judge, request("waits"), run_id="r", timing=CallTiming(deadline_s=0.3))
    slow.join()
    assert waited.status is CallStatus.TIMED_OUT and waited.winner is None
    assert waited.failure_reason is not None and "no free connection" in waited.failure_reason
    assert server.count == 1 and server.max_in_flight == 1
    judge.close()


def test_a_judge_travels_without_its_connections_and_opens_new_ones(
    server: OpenAIServer,
) -> None:
    """A judge pickled (as it travels to a Dask worker) leaves its open connections behind;
    the copy opens its own and is judged."""
    judge = judge_for(server)
    server.script(answer("first"), answer("tie"))
    assert call_judge(judge, request("c1"), run_id="r").status is CallStatus.JUDGED
    copy = pickle.loads(pickle.dumps(judge))
    assert call_judge(copy, request("c2"), run_id="r").status is CallStatus.JUDGED
    assert len({r.peer for r in server.requests}) == 2
    judge.close()
    copy.close()


# --- HTTPS ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 and its key (openssl, one day)."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return str(cert), str(key)


@pytest.fixture
def tls_server(certificate: tuple[str, str]) -> Iterator[OpenAIServer]:
    with OpenAIServer(tls=certificate) as server:
        yield server


def test_an_https_endpoint_whose_certificate_is_trusted_is_judged(
    tls_server: OpenAIServer, certificate: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over HTTPS with a certificate the machine trusts (``SSL_CERT_FILE``): judged, twice over
    one kept-alive TLS connection."""
    monkeypatch.setenv("SSL_CERT_FILE", certificate[0])
    judge = judge_for(tls_server)
    assert tls_server.base_url.startswith("https://")
    tls_server.script(answer("first"), answer("second"))
    assert call_judge(judge, request("c1"), run_id="r").status is CallStatus.JUDGED
    assert call_judge(judge, request("c2"), run_id="r").status is CallStatus.JUDGED
    assert len({r.peer for r in tls_server.requests}) == 1
    judge.close()


def test_an_https_endpoint_whose_certificate_is_not_trusted_is_never_a_verdict(
    tls_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A certificate nobody vouches for: the request is never sent (nothing reaches the
    server), the call fails closed naming the certificate, and carries no winner."""
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "no-such-bundle.pem"))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    judge = judge_for(tls_server)
    tls_server.script(answer("first"))
    c = call_judge(
        judge, request(), run_id="r", timing=CallTiming(deadline_s=10, sleep=lambda _s: None)
    )
    assert (c.status, c.winner, tls_server.count) == (CallStatus.FAILED_CLOSED, None, 0)
    assert c.failure_reason is not None and "CERTIFICATE_VERIFY_FAILED" in c.failure_reason
    judge.close()
