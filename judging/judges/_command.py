"""The ``command`` backend: an executable that reads a JSON request and prints the answer.

The command is started once per attempt, without a shell, in its own
process session. It gets on stdin one JSON object::

    {"system": "...", "user": "...", "case_id": "...", "order": "candidate_first",
     "sample_index": 0}

and prints the judge's answer on stdout (the same answer text a model would
give; the call contract parses it). Exit codes:

* ``0`` — stdout is the answer;
* ``64`` (``EX_USAGE``) — the request is wrong: a client error, not retried;
* ``65`` (``EX_DATAERR``) — the input is over the judge's budget: not retried,
  the pair is left ``over_budget``;
* anything else, or death by a signal — a server error, retried: a command
  often wraps a network call of its own, and the contract's three attempts
  under one deadline bound what a broken command can cost.

A command that outlives the request's timeout is killed with its whole
process group (so a grandchild holding stdout open cannot stall the night)
and the attempt is a timeout. A missing or non-executable command is a
client error: trying again gives the same answer.

The command may hold secrets (its ``env``, the key its ``api_key_env``
names): its answer and the stderr quoted in an error are scrubbed of them,
raw and encoded (:class:`gateway.secrets.Scrubber`), before anything stores them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

from gateway.secrets import Scrubber
from judging.judges._identity import COMMAND_MODEL, command_endpoint
from judging.judges._protocol import (
    ClientError,
    JudgeRequest,
    JudgeTimeout,
    OverBudget,
    ServerError,
)

if TYPE_CHECKING:
    from judging.judges._config import JudgeConfig

EX_USAGE = 64
EX_DATAERR = 65
_STDERR_TAIL = 300
_STDOUT_LIMIT = 1_000_000


def command_input(system: str, user: str, request: JudgeRequest) -> str:
    """The JSON text a command reads on stdin."""
    return json.dumps(
        {
            "system": system,
            "user": user,
            "case_id": request.case_id,
            "order": request.order.value,
            "sample_index": request.sample_index,
        },
        ensure_ascii=False,
    )


def _tail(data: bytes, scrubber: Scrubber) -> str:
    # Scrubbed before it is cut, so no piece of a secret is left at the cut.
    text = " ".join(scrubber.scrub(data.decode("utf-8", "replace")).split())
    return text if len(text) <= _STDERR_TAIL else "..." + text[-_STDERR_TAIL:]


class CommandJudge:
    """A judge that is a local executable speaking JSON on stdin and text on stdout."""

    def __init__(
        self,
        config: JudgeConfig,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        secrets: Mapping[str, str] | None = None,
        withhold: Collection[str] = (),
    ) -> None:
        """A judge as ``config`` describes it: its name, family, whether it is required,
        the command (``config.command``) and the model the command uses, as the
        configuration declares it (the command picks it itself; with the command line it
        is the judge's cache key). ``env`` is added to the command's environment; its
        values and ``secrets`` (name → value, e.g. an API key from the environment) are
        scrubbed from every answer and error text. ``withhold`` names host variables the
        command never gets (the agents' secrets and model keys: theirs alone). A config
        without a command raises ``ValueError``."""
        if not config.command:
            raise ValueError("a command judge needs a non-empty argument vector")
        self.name = config.name
        self.family = config.family
        self.required = config.required
        self.argv = list(config.command)
        self.model = config.model or COMMAND_MODEL
        self.endpoint = command_endpoint(self.argv)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.withhold = frozenset(withhold)
        self._scrubber = Scrubber({**(env or {}), **(secrets or {})})

    def __repr__(self) -> str:
        return f"CommandJudge(name={self.name!r}, argv={self.argv!r})"

    def complete(self, system: str, user: str, request: JudgeRequest, timeout_s: float) -> str:
        """Run the command once; its stdout, or a transport error."""
        payload = command_input(system, user, request).encode("utf-8")
        env: dict[str, str] | None = None
        if self.env is not None or self.withhold:
            inherited = {k: v for k, v in os.environ.items() if k not in self.withhold}
            env = {**inherited, **(self.env or {})}
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env=env,
                cwd=self.cwd,
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            raise ClientError(f"cannot run {self.argv[0]!r}: {exc.strerror or exc}") from exc
        except OSError as exc:
            raise ServerError(f"cannot start {self.argv[0]!r}: {exc}") from exc
        try:
            out, err = proc.communicate(payload, timeout=max(timeout_s, 0.001))
        except subprocess.TimeoutExpired as exc:
            _kill_group(proc)
            raise JudgeTimeout(f"{self.argv[0]!r} gave no answer within {timeout_s:.1f} s") from exc
        code = proc.returncode
        if code == 0:
            return self._scrubber.scrub(out[:_STDOUT_LIMIT].decode("utf-8", "replace"))
        tail = f": {_tail(err, self._scrubber)}" if err.strip() else ""
        detail = f"{self.argv[0]!r} exited with {code}{tail}"
        if code == EX_USAGE:
            raise ClientError(detail)
        if code == EX_DATAERR:
            raise OverBudget(detail)
        raise ServerError(detail)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the command and everything it started, then reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process that ignores SIGKILL
        proc.kill()
