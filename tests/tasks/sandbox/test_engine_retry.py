"""A busy engine's failures at an execution's start are retried on a fresh container; nothing else is.

The engine is the real one, reached through a client that injects faults into
the first calls of chosen steps (the errors docker-py itself raises, built by
its own function from an HTTP answer, or the real engine's answer to an exec
in a container that has exited) and counts every call.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import requests
from docker.errors import APIError, create_api_error_from_http_exception
from tenacity import RetryCallState, Retrying, wait_none
from urllib3.exceptions import ProtocolError

from bughunt.errors import TerminalError, TransientError
from bughunt.models import ReproOutcome
from corpus import load_corpus
from tasks.sandbox import SandboxCases, SandboxSettings, _stage_engine, run_sandbox
from tasks.sandbox.engine import Executor, _executor
from tasks.sandbox.engine._errors import SandboxEngineError, SandboxImageError, SandboxRequestError
from tests.flows.corpora import mini_corpus

pytestmark = pytest.mark.docker

EXITS = "exits"
"""A start fault: the container really starts and is killed before its first exec."""

Fault = Exception | str


def api_error(status: int, reason: str, path: str, message: str) -> APIError:
    """The error docker-py raises for the engine's HTTP answer ``status`` saying ``message``."""
    response = requests.Response()
    response.status_code = status
    response.reason = reason
    response.url = f"http+docker://localhost/v1.41{path}"
    response._content = json.dumps({"message": message}).encode()
    try:
        create_api_error_from_http_exception(requests.HTTPError(response=response))
    except APIError as exc:
        return exc
    raise AssertionError("docker-py raises the error it creates")


def busy(path: str = "/containers/create") -> APIError:
    """A 500 of a daemon short of resources for the moment."""
    return api_error(
        500, "Internal Server Error", path, "engine busy: too many containers being created"
    )


def dropped() -> requests.ConnectionError:
    """The connection to the engine reset in the middle of a call (requests' own wording)."""
    return requests.ConnectionError(
        ProtocolError("Connection aborted.", ConnectionResetError(104, "Connection reset by peer"))
    )


class FlakyEngine:
    """The real engine's client whose first calls of some steps fail; every call is counted.

    Steps: ``create`` (either API), ``start`` (an exception, or :data:`EXITS`),
    ``exec_create``, ``exec_start``. Everything else goes to the real client.
    """

    def __init__(self, real: Any, faults: dict[str, list[Fault]] | None = None) -> None:
        self.real = real
        self.faults = {step: list(queue) for step, queue in (faults or {}).items()}
        self.calls: Counter[str] = Counter()
        self.containers = _Containers(self)
        self.api = _Api(self)

    def step(self, name: str) -> Fault | None:
        """Count a call of ``name``; the fault it is to meet, if any is left."""
        self.calls[name] += 1
        queue = self.faults.get(name)
        fault = queue.pop(0) if queue else None
        if isinstance(fault, Exception):
            raise fault
        return fault

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class _Containers:
    def __init__(self, engine: FlakyEngine) -> None:
        self._engine = engine

    def create(self, **config: Any) -> _Container:
        self._engine.step("create")
        return _Container(self._engine, self._engine.real.containers.create(**config))

    def get(self, container_id: str) -> _Container:
        return _Container(self._engine, self._engine.real.containers.get(container_id))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine.real.containers, name)


class _Container:
    def __init__(self, engine: FlakyEngine, real: Any) -> None:
        self._engine = engine
        self._real = real

    def start(self) -> None:
        fault = self._engine.step("start")
        self._real.start()
        if fault == EXITS:
            self._real.kill()
            self._engine.real.api.wait(self._real.id, timeout=30)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _Api:
    def __init__(self, engine: FlakyEngine) -> None:
        self._engine = engine

    def create_container(self, *args: Any, **kwargs: Any) -> Any:
        """A cell's create (its HostConfig needs the low-level call) meets the same faults."""
        self._engine.step("create")
        return self._engine.real.api.create_container(*args, **kwargs)

    def exec_create(self, *args: Any, **kwargs: Any) -> Any:
        self._engine.step("exec_create")
        return self._engine.real.api.exec_create(*args, **kwargs)

    def exec_start(self, *args: Any, **kwargs: Any) -> Any:
        self._engine.step("exec_start")
        return self._engine.real.api.exec_start(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine.real.api, name)


@pytest.fixture
def no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """No backoff between attempts (one test keeps the real waits and times them)."""
    monkeypatch.setattr(_executor, "_START_WAIT", wait_none())


RETRIES = _executor.START_ATTEMPTS - 1
"""The most failures in a row an execution still starts after."""


@pytest.mark.parametrize(
    "step,fault",
    [
        ("create", busy),
        ("create", dropped),
        ("start", lambda: requests.ReadTimeout("Read timed out. (read timeout=120)")),
        ("start", lambda: EXITS),
        ("exec_create", lambda: busy("/containers/x/exec")),
        ("exec_start", dropped),
    ],
    ids=["create-500", "create-reset", "start-timeout", "exits-first", "exec-500", "exec-reset"],
)
@pytest.mark.usefixtures("no_wait")
def test_an_execution_starts_after_transient_engine_failures(
    docker_client: Any, sandbox_image: str, run_id: str, step: str, fault: Any
) -> None:
    """Each transient failure before the command runs is retried on a fresh container."""
    engine = FlakyEngine(docker_client, {step: [fault() for _ in range(RETRIES)]})
    script = "echo started; echo report > /scratch/out"
    with Executor(run_id=run_id, image=sandbox_image, client=engine) as executor:
        result = executor.run(["sh", "-c", script], timeout_s=30, collect="/scratch/out")
    assert (result.exit_code, result.output, result.error) == (0, "started\n", None)
    assert result.collected == b"report\n"
    assert engine.calls["create"] == _executor.START_ATTEMPTS  # a fresh container every attempt
    assert executor.containers_started == 1
    # the run_id fixture fails the test if a failed attempt's container was left behind


def test_exhausted_retries_keep_the_engines_message_and_the_attempts(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """Containers that keep exiting before their first exec: the engine's 409 kept, with backoff."""
    engine = FlakyEngine(docker_client, {"start": [EXITS] * _executor.START_ATTEMPTS})
    started = time.monotonic()
    with (
        Executor(run_id=run_id, image=sandbox_image, client=engine) as executor,
        pytest.raises(SandboxEngineError) as info,
    ):
        executor.run(["sh", "-c", "echo never"], timeout_s=30)
    waited = time.monotonic() - started
    assert isinstance(info.value, TransientError)
    assert f"in {_executor.START_ATTEMPTS} attempts" in info.value.message
    assert "409 Client Error" in info.value.message and "is not running" in info.value.message
    assert engine.calls["start"] == _executor.START_ATTEMPTS
    assert executor.containers_started == 0
    assert waited >= 0.5 + 1 + 2  # it backed off between the attempts


def test_the_backoff_grows_with_jitter_and_stays_under_ten_seconds() -> None:
    """Waits of about 0.5, 1, 2 s, each with up to 0.5 s of jitter: under 10 s in all."""
    state = RetryCallState(retry_object=Retrying(), fn=None, args=(), kwargs={})
    worst = 0.0
    for attempt in range(1, _executor.START_ATTEMPTS):
        state.attempt_number = attempt
        base = 0.5 * 2 ** (attempt - 1)
        waits = {_executor._START_WAIT(state) for _ in range(200)}
        assert all(base <= w <= base + 0.5 for w in waits)
        assert len(waits) > 1  # jittered, not in step
        worst += max(waits)
    assert worst < 10


@pytest.mark.usefixtures("no_wait")
def test_a_busy_engines_explanation_survives_the_retries(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """After the last failed create, the error holds the engine's status and explanation."""
    engine = FlakyEngine(docker_client, {"create": [busy() for _ in range(9)]})
    with (
        Executor(run_id=run_id, image=sandbox_image, client=engine) as executor,
        pytest.raises(SandboxEngineError) as info,
    ):
        executor.run(["true"], timeout_s=30)
    assert "500 Server Error" in info.value.message
    assert "engine busy: too many containers being created" in info.value.message
    assert engine.calls["create"] == _executor.START_ATTEMPTS


@pytest.mark.usefixtures("no_wait")
def test_a_refused_request_is_not_retried(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """A 400 (the request itself is bad) is terminal at the first answer."""
    refused = api_error(
        400, "Bad Request", "/containers/create", "invalid reference format: must be lowercase"
    )
    engine = FlakyEngine(docker_client, {"create": [refused]})
    with (
        Executor(run_id=run_id, image=sandbox_image, client=engine) as executor,
        pytest.raises(SandboxRequestError) as info,
    ):
        executor.run(["true"], timeout_s=30)
    assert isinstance(info.value, TerminalError)
    assert "invalid reference format" in info.value.message
    assert engine.calls["create"] == 1


@pytest.mark.usefixtures("no_wait")
def test_a_missing_image_is_not_retried(docker_client: Any, run_id: str) -> None:
    """An image the engine does not have is terminal at the first create."""
    engine = FlakyEngine(docker_client)
    missing = f"bughunt-sandbox:missing-{uuid.uuid4().hex[:8]}"
    with (
        Executor(run_id=run_id, image=missing, client=engine) as executor,
        pytest.raises(SandboxImageError),
    ):
        executor.run(["true"], timeout_s=30)
    assert engine.calls["create"] == 1


@pytest.mark.usefixtures("no_wait")
def test_the_commands_own_failure_and_timeout_are_not_retried(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """A non-zero exit and a deadline are the command's results: one container each."""
    engine = FlakyEngine(docker_client)
    with Executor(run_id=run_id, image=sandbox_image, client=engine) as executor:
        failed = executor.run(["sh", "-c", "echo no >&2; exit 3"], timeout_s=30)
        slow = executor.run(["sleep", "30"], timeout_s=1)
    assert (failed.exit_code, failed.output, failed.error) == (3, "no\n", None)
    assert slow.timed_out
    assert engine.calls["create"] == engine.calls["exec_create"] == 2
    assert executor.containers_started == 2


@pytest.mark.usefixtures("no_wait")
def test_a_pair_whose_engine_keeps_failing_is_an_error_and_the_next_pair_runs(
    docker_client: Any,
    sandbox_image: str,
    run_id: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The stage records the pair as error with the engine's message and attempts; others go on."""
    first, second = "cmp-withdraw-exact-balance", "state-next-id"
    corpus = load_corpus(mini_corpus(tmp_path / "repo", [first, second]))
    agent = next(a for a in corpus.config.agents if a.name == "baseline-recorded")
    engine = FlakyEngine(docker_client, {"start": [EXITS] * _executor.START_ATTEMPTS})
    monkeypatch.setattr(_stage_engine, "connect", lambda: engine)
    result = run_sandbox(
        corpus,
        cases=SandboxCases(ids=[first, second], hashes={}),
        agents=[agent],
        run_id=run_id,
        settings=SandboxSettings(
            repeats=1, rewrite_repeats=0, check_contract=False, workers=1, image=sandbox_image
        ),
    )
    by_case = {p.case_id: p for p in result.pairs}
    failed = by_case[first]  # pairs run in case order on one worker: it met every fault
    assert failed.outcome is ReproOutcome.ERROR and failed.observations == []
    reason = failed.reason or ""
    assert reason.startswith("sandbox engine failed: ")
    assert f"in {_executor.START_ATTEMPTS} attempts" in reason and "is not running" in reason
    assert by_case[second].outcome is ReproOutcome.REPRODUCED
