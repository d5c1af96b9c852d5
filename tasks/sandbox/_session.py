"""One long-lived hardened container serving many executions (DESIGN §7).

Like SWE-bench's harness: the container idles under init (``sleep
infinity``) and every execution is an ``exec`` in a fresh copy of the
workspace, under ``timeout -s KILL`` (exec has no deadline of its own).

Freshness: each execution gets the workspace again as a tar on the exec's
stdin, unpacked into ``/scratch/run-N``. A pristine copy kept inside the
container would be writable by the same uid, so one execution could change
what the next one sees; the bytes on the host cannot be touched. After each
execution a clean-up exec kills every leftover process, empties ``/scratch``
and ``/tmp`` and reads the memory cgroup's OOM-kill counter (exec'd
processes are not OOM-flagged in the container's state). When that cannot
be done (pids exhausted, the deadline overrun, the keeper killed), the
container is thrown away and the next execution starts a new one.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

import requests
from docker.errors import APIError

from tasks.sandbox._container import (
    UNPACK_FAILED,
    UNPACK_MARKER,
    Limits,
    MiB,
    RunResult,
    check_command,
    check_timeout,
    container_config,
    create_container,
    kill_quietly,
    remove_quietly,
)
from tasks.sandbox._engine import connect
from tasks.sandbox._errors import SandboxEngineError
from tasks.sandbox._io import FrameDecoder, OutputCapture, close_quietly, pump
from tasks.sandbox._recipe import image_tag
from tasks.sandbox._workspace import Workspace, pack_workspace

log = logging.getLogger("bughunt.sandbox")

# Beyond the in-container deadline, time for unpacking, exec set-up and the
# engine's own wait for the stream to close (about 2 s when a background
# process still holds stdout).
_HOST_GRACE_S = 10.0
_CONTROL_TIMEOUT_S = 30.0
_SETTLE_S = 3.0

_RUN_ENTRY = (
    'dir=$1 limit=$2; shift 2; mkdir "$dir" && tar -x -C "$dir" || '
    f'{{ echo "{UNPACK_MARKER}" >&2; exit {UNPACK_FAILED}; }}; '
    'cd "$dir" && exec timeout -s KILL "$limit" "$@"'
)

# Probe, run once when a container starts, before any untrusted code: the
# keeper is then the only child of PID 1 (init). Exec'd processes have no
# parent inside the container.
_PROBE = r"""
for d in /proc/[0-9]*; do
  read -r st 2>/dev/null < "$d/stat" || continue
  rest=${st##*) }; rest=${rest#* }
  [ "${rest%% *}" = 1 ] && echo "keeper=${d#/proc/}"
done
exit 0
"""
_PROBE_LINE = re.compile(r"^keeper=(\d+)$")

# The clean-up exec, run after every execution with the keeper's pid. dash
# builtins only (but rm), so it still runs when the pids limit is nearly
# exhausted. Everything but init, the keeper and this shell is killed, a few
# rounds over (a fork bomb's children appear while /proc is walked); zombies
# are init's to reap. Then scratch and /tmp are emptied, and whether the
# keeper lives (an execution can kill it, which stops the container), the
# survivors and the memory cgroup's OOM-kill counter (v1 or v2) are
# reported on the last line.
_CLEANUP = r"""
keep=$1
others() {
  n=0
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    case $p in 1|"$keep"|$$) continue;; esac
    read -r st 2>/dev/null < "$d/stat" || continue
    st=${st##*) }
    [ "${st%% *}" = Z ] && continue
    n=$((n + 1))
    [ "$1" = kill ] && kill -9 "$p" 2>/dev/null
  done
}
round=0
while [ "$round" -lt 20 ]; do
  others kill
  [ "$n" = 0 ] && break
  round=$((round + 1))
done
rm -rf /scratch/* /scratch/.[!.]* /scratch/..?* /tmp/* /tmp/.[!.]* /tmp/..?* 2>/dev/null
others count
keeper=dead
if read -r st 2>/dev/null < "/proc/$keep/stat"; then
  st=${st##*) }
  [ "${st%% *}" = Z ] || keeper=alive
fi
oom=0
for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do
  [ -r "$f" ] || continue
  while read -r k v; do [ "$k" = oom_kill ] && oom=$v; done < "$f"
  break
done
echo "keeper=$keeper left=$n oom_kill=$oom"
"""
_CLEANUP_LINE = re.compile(r"^keeper=(alive|dead) left=(\d+) oom_kill=(\d+)$")
_STOPPED = "the sandbox container stopped during the execution"


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


class SandboxSession:
    """A hardened container for one (case, agent): many executions, each in a fresh workspace.

    Use as a context manager; the container is removed on exit whatever
    happened. Bad input (command, timeout, workspace) raises
    :class:`InputError` before anything is started; a missing image
    :class:`SandboxImageError`; an engine failure :class:`SandboxEngineError`.
    """

    def __init__(
        self,
        *,
        run_id: str,
        workspace: Workspace | None = None,
        image: str | None = None,
        limits: Limits | None = None,
        network: bool = False,
        env: Mapping[str, str] | None = None,
        client: Any | None = None,
    ) -> None:
        self.run_id = run_id
        self.limits = limits or Limits()
        self.image = image or image_tag()
        self._payload = pack_workspace(workspace, max_bytes=self.limits.scratch_bytes)
        self._network = network
        self._env = dict(env or {})
        self._client = client
        self._container: Any | None = None
        self._oom_seen = 0
        self._keeper = 0
        self._count = 0
        self.containers_started = 0
        """Containers this session has started (more than 1 after a recycle)."""

    def __enter__(self) -> SandboxSession:
        self._ensure_started()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def container_id(self) -> str | None:
        """Id of the current container, None before start or after a recycle or close."""
        return None if self._container is None else str(self._container.id)

    def close(self) -> None:
        """Kill and remove the container; safe to call twice."""
        if self._container is not None:
            remove_quietly(self._container)
            self._container = None

    def _client_or_connect(self) -> Any:
        if self._client is None:
            self._client = connect()
        return self._client

    def _ensure_started(self) -> Any:
        if self._container is not None:
            return self._container
        client = self._client_or_connect()
        config = container_config(
            image=self.image,
            command=["sleep", "infinity"],
            run_id=self.run_id,
            limits=self.limits,
            network=self._network,
            env=self._env,
            mode="session",
            stdin=False,
        )
        container = create_container(client, config)
        self._container = container
        try:
            container.start()
            self.containers_started += 1
            self._oom_seen = 0  # a new container has a new memory cgroup
            code, out = self._control(["sh", "-c", _PROBE])
            match = _PROBE_LINE.match(_last_line(out))
            if code != 0 or match is None:
                raise SandboxEngineError(f"the session container failed its probe: {out!r}")
            self._keeper = int(match[1])
        except (APIError, requests.RequestException) as exc:
            self.close()
            raise SandboxEngineError(
                f"the engine could not start a session container: {exc}"
            ) from exc
        except SandboxEngineError:
            self.close()
            raise
        return container

    def _control(self, argv: list[str]) -> tuple[int, str]:
        """Run a short trusted exec (probe, clean-up); exit code and output."""
        client = self._client_or_connect()
        assert self._container is not None  # callers start the container first
        exec_id = client.api.exec_create(self._container.id, argv, stdin=False)["Id"]
        capture = OutputCapture(4096)
        sock = client.api.exec_start(exec_id, socket=True)
        try:
            finished = pump(
                sock, b"", FrameDecoder(capture.feed).feed, time.monotonic() + _CONTROL_TIMEOUT_S
            )
        finally:
            close_quietly(sock)
        code = self._exec_exit(exec_id) if finished else None
        return (-1 if code is None else code), capture.text()

    def _exec_exit(self, exec_id: str) -> int | None:
        """Exit code of a finished exec (polled briefly: the stream can end a moment before)."""
        client = self._client_or_connect()
        for _attempt in range(50):
            info = client.api.exec_inspect(exec_id)
            if not info.get("Running"):
                code = info.get("ExitCode")
                return None if code is None else int(code)
            time.sleep(0.05)
        return None

    def _running(self) -> bool:
        if self._container is None:
            return False
        try:
            self._container.reload()
        except (APIError, requests.RequestException):
            return False
        return bool(self._container.status == "running")

    def _stops_within(self, seconds: float) -> bool:
        """True when the container is stopped, or stops within ``seconds``."""
        if self._container is None:
            return True
        try:
            self._container.wait(timeout=seconds)
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            return False
        except APIError:
            return True  # gone altogether
        return True

    def _recycle(self, why: str) -> None:
        log.warning("recycling session container %s: %s", self.container_id, why)
        if self._container is not None:
            kill_quietly(self._container)
        self.close()

    def exec(self, command: Sequence[str], *, timeout_s: float = 60.0) -> RunResult:
        """Run ``command`` in a fresh copy of the workspace, killed at ``timeout_s`` seconds.

        The command starts in ``/scratch/run-N``; nothing an earlier execution
        wrote (in scratch, ``/tmp``, or as a leftover process) is there. A
        command still running at its deadline is killed with its process
        group and reported ``timed_out``; one that outlives even that is
        stopped by recycling the container.
        """
        argv = check_command(command)
        deadline_s = check_timeout(timeout_s)
        try:
            return self._exec(argv, deadline_s)
        except (APIError, requests.RequestException) as exc:
            self._recycle(f"engine error: {exc}")
            raise SandboxEngineError(f"the engine failed during an execution: {exc}") from exc

    def _exec(self, argv: list[str], timeout_s: float) -> RunResult:
        client = self._client_or_connect()
        self._count += 1
        run_dir = f"/scratch/run-{self._count}"
        entry = ["sh", "-c", _RUN_ENTRY, "sh", run_dir, f"{timeout_s:g}", *argv]
        exec_id, sock = self._open_exec(client, entry)
        capture = OutputCapture(self.limits.output_cap_bytes)
        started = time.monotonic()
        try:
            finished = pump(
                sock,
                self._payload,
                FrameDecoder(capture.feed).feed,
                started + timeout_s + _HOST_GRACE_S,
            )
        finally:
            close_quietly(sock)
        duration = time.monotonic() - started
        if not finished:
            self._recycle("an execution overran its deadline")
            return self._result(None, True, False, duration, capture, timeout_s)
        exit_code = self._exec_exit(exec_id)
        oom, problem = self._clean_up()
        timed_out = exit_code in (124, 137) and duration >= timeout_s and not oom
        return self._result(exit_code, timed_out, oom, duration, capture, timeout_s, problem)

    def _open_exec(self, client: Any, entry: list[str]) -> tuple[str, Any]:
        """Create and start an exec; a container found stopped is replaced once."""
        try:
            exec_id = client.api.exec_create(self._ensure_started().id, entry, stdin=True)["Id"]
            return exec_id, client.api.exec_start(exec_id, socket=True)
        except APIError:
            if self._running():
                raise
        self._recycle("the container was not running")
        exec_id = client.api.exec_create(self._ensure_started().id, entry, stdin=True)["Id"]
        return exec_id, client.api.exec_start(exec_id, socket=True)

    def _clean_up(self) -> tuple[bool, str | None]:
        """Kill leftovers and empty scratch: (OOM killer struck meanwhile, what went wrong)."""
        try:
            code, out = self._control(["sh", "-c", _CLEANUP, "sh", str(self._keeper)])
        except APIError as exc:  # e.g. "container is not running": judged below
            code, out = -1, str(exc)
        match = _CLEANUP_LINE.match(_last_line(out))
        if code != 0 or match is None:
            # "cannot exec in a stopped state" can come while the engine still
            # reports the container running: give it a moment to settle.
            stopped = self._stops_within(_SETTLE_S)
            self._recycle(f"clean-up failed (exit {code}): {out.strip()[:200]!r}")
            return False, _STOPPED if stopped else None
        if match[1] == "dead":
            # The execution killed the keeper (e.g. `kill -9 -1`), which stops
            # the container: an outcome of the code under test.
            self._recycle("the keeper process was killed")
            return False, _STOPPED
        oom_count = int(match[3])
        oom = oom_count > self._oom_seen
        self._oom_seen = oom_count
        if int(match[2]):
            self._recycle(f"{match[2]} process(es) survived the clean-up")
        return oom, None

    def _result(
        self,
        exit_code: int | None,
        timed_out: bool,
        oom: bool,
        duration: float,
        capture: OutputCapture,
        timeout_s: float,
        problem: str | None = None,
    ) -> RunResult:
        text = capture.text()
        error: str | None = problem
        if timed_out:
            error = f"timed out: killed after {timeout_s:g} s"
            exit_code = None
        elif oom:
            error = f"out of memory: killed at the {self.limits.memory_bytes // MiB} MiB limit"
        elif exit_code == UNPACK_FAILED and UNPACK_MARKER in text:
            error = "the workspace could not be unpacked into the scratch space"
        elif exit_code is None and error is None:
            error = "the engine reported no exit code for the execution"
        return RunResult(
            exit_code=exit_code,
            timed_out=timed_out,
            oom_killed=oom,
            duration_s=round(duration, 3),
            output=text,
            output_truncated_bytes=capture.cut,
            error=error,
        )
