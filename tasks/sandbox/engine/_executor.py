"""Every execution in a container of its own, never used before, started when it is needed.

This is how agents run (each needs its own network, gateway and files to
collect). Reproduction tests, contract checks and mutant suites run in cells
(``_cell``): one such container reused, with fresh namespaces per execution,
which keeps everything below at a fraction of the cost.

Why not one long-lived container per (case, agent) with a clean-up between
executions: whatever a container has run leaves traces the next execution
can read and that no clean-up removes — process ids climb, the memory and
CPU counters of its cgroup grow, the time since the container started, SysV
and POSIX IPC objects, files in ``/dev/shm``. A reproduction test that can
tell its execution's index can tell which tree it is on as soon as the order
is known, so every execution gets a container nothing else has touched: the
same layout, host name, user, environment and paths every time
(docs/sandbox.md, "Neutral executions").

Why not start containers ahead of need: a container's age is visible inside
it (its init's start time, the timestamps of its mount points), and the age
of one started during the previous execution is that execution's duration —
a channel from one execution to the next (a test sleeps to say "I ran").
So a container is started when its execution asks for it, and killed as soon
as the execution ends, so none of its processes outlives the execution;
only its removal runs on a background thread, off the critical path.

Layout inside (the same for every execution): the workspace is unpacked into
``/work`` (the working folder; its own timestamp normalised), and ``/work``,
``/scratch``, ``/tmp``, ``/var/tmp``, ``$HOME`` and ``/dev/shm`` are empty,
size-limited tmpfs mounts; the rest of the file system is read-only.

A busy engine sometimes fails to create or start a container, or the
container's first exec (a 5xx answer, a dropped connection, a container that
exited before it answered): that part is retried on a fresh container with
backoff (:meth:`Executor._launch`). What the command does once it runs is its
result and is never retried.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any

import requests
from docker.errors import APIError
from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from tasks.sandbox.engine._container import (
    TREE_PATH,
    UNPACK_FAILED,
    UNPACK_MARKER,
    ExecResult,
    Limits,
    MiB,
    check_command,
    check_timeout,
    container_config,
    create_container,
    engine_error,
    kill_quietly,
    remove_quietly,
)
from tasks.sandbox.engine._engine import connect
from tasks.sandbox.engine._errors import SandboxEngineError
from tasks.sandbox.engine._io import FrameDecoder, OutputCapture, close_quietly, pump
from tasks.sandbox.engine._recipe import image_tag
from tasks.sandbox.engine._workspace import Workspace, pack_workspace

log = logging.getLogger("bughunt.sandbox")

NORMAL_MTIME = 946_684_800
"""2000-01-01: the timestamp every file and folder of a workspace carries."""

# Beyond the in-container deadline: unpacking, exec set-up, the stream closing.
_HOST_GRACE_S = 10.0
_CONTROL_TIMEOUT_S = 30.0

START_ATTEMPTS = 4
"""Tries at a fresh container and its first exec before the engine's failure is the execution's."""
# Waits between tries: 0.5, 1, 2 s, each plus up to 0.5 s of jitter so that
# workers failed by the same busy moment do not come back in step (under 5 s in all).
_START_WAIT = wait_exponential(multiplier=0.5, max=4) + wait_random(0, 0.5)

_ENTRY = (
    f'limit=$1; shift; tar -x -C {TREE_PATH} || {{ echo "{UNPACK_MARKER}" >&2; exit {UNPACK_FAILED}; }}; '
    f"touch -d @{NORMAL_MTIME} {TREE_PATH}; "
    "{prelude}"
    f'cd {TREE_PATH} && exec timeout -s KILL "$limit" "$@"'
)

# Read after an execution killed by SIGKILL before its deadline: did the OOM
# killer strike in this (fresh) container's memory cgroup? v2 or v1.
_OOM_PROBE = r"""
for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
  [ -r "$f" ] || continue
  while read -r k v; do [ "$k" = oom_kill ] && echo "oom_kill=$v"; done < "$f"
  exit 0
done
echo oom_kill=unknown
"""
_OOM_LINE = re.compile(r"oom_kill=(\d+)")


@contextlib.contextmanager
def _removed_if_failing(container: Any, what: str) -> Iterator[None]:
    """Remove ``container`` when the block fails; an engine error is raised as
    :class:`SandboxEngineError` saying the step (``what``) that failed."""
    try:
        yield
    except (APIError, requests.RequestException) as exc:
        remove_quietly(container)
        raise engine_error(exc, what) from exc
    except BaseException:
        remove_quietly(container)
        raise


class _Remover:
    """Removes used (already killed) containers on a thread of its own, off the critical path."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="sandbox-remove", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (container := self._queue.get()) is not None:
            remove_quietly(container)

    def put(self, container: Any) -> None:
        self._queue.put(container)

    def close(self) -> None:
        """Return once every container handed in is removed; safe to call twice."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()


@dataclasses.dataclass(frozen=True, slots=True)
class GatewayLink:
    """An agent's way to its gateway (``_gateway``) from each of its execution containers."""

    main: Sequence[str]
    """The container's main process (the loopback forwarder to the gateway's sockets)."""
    volumes: Mapping[str, Mapping[str, str]]
    """Its bind mounts: the execution's folder of the gateway."""
    prelude: str
    """Shell run before each command (trusted text, never from a corpus)."""


class Executor:
    """Runs commands, each over a fresh copy of its workspace in a never-used hardened container.

    Use as a context manager (or call :meth:`close`): on exit every container
    it started is removed. Thread-safe: many threads may call :meth:`run` at
    once. Bad input (command, timeout, workspace) raises :class:`InputError`
    before anything starts; a missing image :class:`SandboxImageError`; a
    request the engine refuses (a 4xx other than a container gone or not
    running) :class:`SandboxRequestError`, not retried. An engine that fails to start an execution :data:`START_ATTEMPTS`
    times in a row (:meth:`_launch`) raises :class:`SandboxEngineError` with
    the attempts and the engine's last message. What the command itself does
    (a non-zero exit, its deadline, running out of memory) is its result,
    never retried.
    """

    def __init__(
        self,
        *,
        run_id: str,
        image: str | None = None,
        limits: Limits | None = None,
        network: bool = False,
        env: Mapping[str, str] | None = None,
        client: Any | None = None,
        link: GatewayLink | None = None,
    ) -> None:
        """``link`` is an agent's way to its gateway; without one the container's main process
        is ``sleep infinity``, it has no bind mount and nothing runs before each command."""
        self.run_id = run_id
        self.limits = limits or Limits()
        self.image = image or image_tag()
        self._client = client if client is not None else connect()
        self._config = container_config(
            image=self.image,
            command=list(link.main) if link and link.main else ["sleep", "infinity"],
            run_id=run_id,
            limits=self.limits,
            network=network,
            env=env,
            mode="execution",
        )
        if link and link.volumes:
            self._config["volumes"] = {host: dict(spec) for host, spec in link.volumes.items()}
        self._entry = _ENTRY.replace("{prelude}", link.prelude if link else "")
        self.containers_started = 0
        """Containers whose first execution started (one per execution here; a cell's, per cell)."""
        self._count_lock = threading.Lock()
        self._remover = _Remover()

    def __enter__(self) -> Executor:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Return once every container this executor started is removed; safe to call twice."""
        self._remover.close()

    def _launch(self, entry: list[str]) -> tuple[Any, str, Any]:
        """A container with ``entry`` started as its exec: container, exec id, socket.

        Here a fresh container, ``entry`` its first exec (:meth:`_launch_once`;
        a cell executor overrides that to reuse an idle cell).

        Creating the container, starting it and starting the exec are retried
        on a fresh container when the engine fails transiently
        (:func:`~tasks.sandbox.engine._container.engine_error`), the failed container
        removed before the next try, with exponential backoff and jitter. No
        retry can run the command twice: it waits behind the workspace's
        unpacking, and the workspace is sent only after this returns (an exec
        whose stdin closes first fails to unpack and never runs it). After
        :data:`START_ATTEMPTS` failures, :class:`SandboxEngineError` saying
        how many and keeping the engine's last message; a refused request or a
        missing image is raised at once.
        """
        return self._launch_with(lambda: self._launch_once(entry))

    def _launch_with(self, once: Callable[[], tuple[Any, str, Any]]) -> tuple[Any, str, Any]:
        """``once()`` retried as :meth:`_launch` says, until it returns or the tries run out."""
        retrying = Retrying(
            stop=stop_after_attempt(START_ATTEMPTS),
            wait=_START_WAIT,
            retry=retry_if_exception_type(SandboxEngineError),
            before_sleep=_log_retry,
        )
        try:
            for attempt in retrying:
                with attempt:
                    return once()
        except RetryError as exc:
            last = exc.last_attempt.exception()
            said = last.message if isinstance(last, SandboxEngineError) else str(last)
            raise SandboxEngineError(
                f"no execution could be started in {START_ATTEMPTS} attempts; the last: {said}"
            ) from last
        raise AssertionError("unreachable: tenacity returns or raises")  # pragma: no cover

    def _launch_once(self, entry: list[str]) -> tuple[Any, str, Any]:
        container = self._start_container()
        with _removed_if_failing(container, "start the execution in a started container"):
            api = self._client.api
            exec_id = api.exec_create(container.id, entry, stdin=True)["Id"]
            sock = api.exec_start(exec_id, socket=True)
        with self._count_lock:
            self.containers_started += 1
        return container, exec_id, sock

    def _start_container(self) -> Any:
        """A new container of this executor's configuration, started (removed again if it fails)."""
        container = create_container(self._client, self._config)
        with _removed_if_failing(container, "start a container"):
            container.start()
        return container

    def run(
        self,
        command: Sequence[str],
        *,
        workspace: Workspace | bytes | None = None,
        timeout_s: float = 60.0,
        collect: str | None = None,
    ) -> ExecResult:
        """Run ``command`` in ``/work`` over a fresh copy of ``workspace``, killed at ``timeout_s``.

        ``workspace`` may be a packed tar (:func:`pack_workspace`) to skip
        packing the same tree again. ``collect`` names a file the command is
        to leave behind: it is read from the container after the command has
        ended (at most ``limits.output_cap_bytes``) into ``ExecResult.collected``.
        """
        argv, deadline_s, payload = self._checked(command, workspace, timeout_s)
        entry = ["sh", "-c", self._entry, "sh", f"{deadline_s:g}", *argv]
        container, exec_id, sock = self._launch(entry)
        try:
            finished, capture, duration = self._pump(exec_id, sock, payload, deadline_s)
            if not finished:  # even the in-container deadline did not end it
                return self._result(None, True, False, duration, capture, deadline_s)
            exit_code = _exit_of(self._client.api, exec_id)
            timed_out = exit_code in (124, 137) and duration >= deadline_s
            oom = exit_code == 137 and not timed_out and self._oom_killed(container)
            collected = self._read(container, collect) if collect else None
            result = self._result(exit_code, timed_out, oom, duration, capture, deadline_s)
            return result if collected is None else _with_collected(result, collected)
        except (APIError, requests.RequestException) as exc:
            raise SandboxEngineError(f"the engine failed during an execution: {exc}") from exc
        finally:
            kill_quietly(container)  # nothing of this execution runs on into the next one
            self._remover.put(container)

    def _result(
        self,
        exit_code: int | None,
        timed_out: bool,
        oom: bool,
        duration: float,
        capture: OutputCapture,
        timeout_s: float,
        *,
        text: str | None = None,
    ) -> ExecResult:
        """The execution's result; ``text`` replaces the capture's text (a cell's, its status cut)."""
        text = capture.text() if text is None else text
        error: str | None = None
        if timed_out:
            error = f"timed out: killed after {timeout_s:g} s"
            exit_code = None
        elif oom:
            error = f"out of memory: killed at the {self.limits.memory_bytes // MiB} MiB limit"
        elif exit_code == UNPACK_FAILED and UNPACK_MARKER in text:
            error = "the workspace could not be unpacked into the scratch space"
        elif exit_code is None:
            error = "the engine reported no exit code for the execution"
        return ExecResult(
            exit_code=exit_code,
            timed_out=timed_out,
            oom_killed=oom,
            duration_s=round(duration, 3),
            output=text,
            output_truncated_bytes=capture.cut,
            error=error,
        )

    def _checked(
        self, command: Sequence[str], workspace: Workspace | bytes | None, timeout_s: float
    ) -> tuple[list[str], float, bytes]:
        """The command, its deadline and the packed workspace, or :class:`InputError`."""
        argv = check_command(command)
        deadline_s = check_timeout(timeout_s)
        if isinstance(workspace, bytes):
            return argv, deadline_s, workspace
        return argv, deadline_s, pack_workspace(workspace, max_bytes=self.limits.scratch_bytes)

    def _pump(
        self,
        exec_id: str,
        sock: Any,
        payload: bytes,
        timeout_s: float,
        stderr: OutputCapture | None = None,
    ) -> tuple[bool, OutputCapture, float]:
        """Send ``payload`` to a started exec and read its output: finished in time, output, seconds.

        "Finished" is False when the exec still ran :data:`_HOST_GRACE_S` past
        ``timeout_s`` (its own in-container deadline did not end it). With
        ``stderr``, the exec's stderr goes there rather than into the output.
        """
        api = self._client.api
        capture = OutputCapture(self.limits.output_cap_bytes)
        started = time.monotonic()
        try:
            finished = pump(
                sock,
                payload,
                FrameDecoder(capture.feed, stderr=stderr.feed if stderr else None).feed,
                started + timeout_s + _HOST_GRACE_S,
                ended=lambda: not api.exec_inspect(exec_id).get("Running", True),
            )
        finally:
            close_quietly(sock)
        return finished, capture, time.monotonic() - started

    def _control(self, container: Any, argv: list[str], cap: int) -> tuple[int | None, bytes]:
        """A short trusted exec (nothing untrusted is running it): exit code and stdout."""
        api = self._client.api
        exec_id = api.exec_create(container.id, argv, stdin=False, stderr=False)["Id"]
        sock = api.exec_start(exec_id, socket=True)
        out = OutputCapture(cap)
        try:
            finished = pump(
                sock, b"", FrameDecoder(out.feed).feed, time.monotonic() + _CONTROL_TIMEOUT_S
            )
        finally:
            close_quietly(sock)
        return (_exit_of(api, exec_id) if finished else None), out.raw()

    def _oom_killed(self, container: Any) -> bool:
        with contextlib.suppress(APIError, requests.RequestException):
            _code, out = self._control(container, ["sh", "-c", _OOM_PROBE], 4096)
            match = _OOM_LINE.search(out.decode("utf-8", "replace"))
            return match is not None and int(match[1]) > 0
        return False

    def _read(self, container: Any, path: str) -> bytes | None:
        """Up to the output cap of ``path`` in the container; None when it is not a file there."""
        cap = self.limits.output_cap_bytes
        script = 'test -f "$1" && exec head -c "$2" "$1"; exit 3'
        code, data = self._control(container, ["sh", "-c", script, "sh", path, str(cap + 1)], cap)
        return data if code == 0 else None


def _log_retry(state: RetryCallState) -> None:
    failed = state.outcome.exception() if state.outcome is not None else None
    wait = state.next_action.sleep if state.next_action is not None else 0.0
    log.warning(
        "sandbox: attempt %d of %d failed (%s); trying a fresh container in %.1f s",
        state.attempt_number,
        START_ATTEMPTS,
        failed,
        wait,
    )


def _exit_of(api: Any, exec_id: str) -> int | None:
    """Exit code of a finished exec (polled briefly: the stream can end a moment before)."""
    for _attempt in range(50):
        info = api.exec_inspect(exec_id)
        if not info.get("Running"):
            code = info.get("ExitCode")
            return None if code is None else int(code)
        time.sleep(0.05)
    return None


def _with_collected(result: ExecResult, collected: bytes) -> ExecResult:
    return dataclasses.replace(result, collected=collected)


@dataclasses.dataclass(frozen=True, slots=True)
class ContainerSpec:
    """How :func:`run_once`'s container is made: its image, limits, network and environment."""

    image: str | None = None
    """Image tag (default: the sandbox image's)."""
    limits: Limits | None = None
    """Resource limits (default: :class:`Limits`'s)."""
    network: bool = False
    """Give the container a network interface (default: none at all)."""
    env: Mapping[str, str] | None = None
    """Environment variables added to the image's."""


DEFAULT_SPEC = ContainerSpec()


def run_once(
    command: Sequence[str],
    *,
    run_id: str,
    workspace: Workspace | None = None,
    timeout_s: float = 60.0,
    spec: ContainerSpec = DEFAULT_SPEC,
    client: Any | None = None,
) -> ExecResult:
    """Run one command in a fresh hardened container over a copy of ``workspace``, then remove it.

    The command starts in ``/work`` (a tmpfs copy of the workspace) of a
    container made as ``spec`` says. At ``timeout_s`` it is killed, what it
    printed is kept, and the result says ``timed_out``. Bad input raises :class:`InputError` before any container
    exists; a missing image :class:`SandboxImageError`; an engine failure
    (after the retries :class:`Executor` makes) :class:`SandboxEngineError`.
    The container is removed whatever happens.
    """
    argv = check_command(command)
    deadline_s = check_timeout(timeout_s)
    limits = spec.limits or Limits()
    payload = pack_workspace(workspace, max_bytes=limits.scratch_bytes)
    with Executor(
        run_id=run_id,
        image=spec.image,
        limits=limits,
        network=spec.network,
        env=spec.env,
        client=client,
    ) as executor:
        return executor.run(argv, workspace=payload, timeout_s=deadline_s)
