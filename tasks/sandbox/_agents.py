"""Obtaining an agent version's report for a case: recorded (replay) or run in the sandbox.

Whatever comes back is untrusted: it is parsed and validated as a
:class:`~bughunt.models.BugReport`, and anything that is not one becomes a
reason (named file or agent, line, field), never an exception that stops the
run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bughunt import jsontext
from bughunt.errors import InputError
from bughunt.jsontext import JsonTextError
from bughunt.models import AgentMode, AgentVersion, BugReport
from bughunt.safeio import read_input
from gateway.secrets import Scrubber
from tasks.sandbox.engine import ExecResult, Executor, Gateway, Limits, MiB, SandboxRequestError
from tasks.sandbox.trees import Files, prefixed, read_tree

AGENT_OUTPUT_CAP = 1024 * 1024
"""Largest report read back; also the bytes of agent output kept at each end."""


def _validation_reason(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "report"
    return f"field {where!r}: {first['msg']}"


def parse_report(raw: bytes | str, *, source: str, agent: AgentVersion) -> BugReport | str:
    """A validated report, or the reason it is not one (naming ``source``, line, field)."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        return f"{source}: not UTF-8 ({exc.reason} at byte {exc.start})"
    try:
        data = jsontext.loads(text)
    except JsonTextError as exc:
        line = f":{exc.line}" if exc.line is not None else ""
        return f"{source}{line}: not valid JSON ({exc.message})"
    if not isinstance(data, dict):
        return f"{source}: a report must be a JSON object"
    try:
        report = BugReport.model_validate(data)
    except ValidationError as exc:
        return f"{source}: {_validation_reason(exc)}"
    # The ledger names the agent version as configured, whatever the report says.
    return report.model_copy(update={"agent_version": agent.name})


def recorded_report(agent: AgentVersion, case_id: str) -> BugReport | str:
    """The recorded report of ``case_id`` in the agent's reports folder, or why there is none."""
    assert agent.reports is not None
    path = Path(agent.reports) / f"{case_id}.json"
    if not os.path.lexists(path):
        return f"{path}: no recorded report for this case"
    try:  # never followed: a link in the corpus must not bring a host file (or a device) in
        data = read_input(path, limit=4 * AGENT_OUTPUT_CAP, what="a recorded report", follow=False)
    except InputError as exc:
        return exc.describe()
    return parse_report(data, source=str(path), agent=agent)


def agent_workspace(agent: AgentVersion, buggy: Files, case: dict[str, object]) -> Files:
    """What the agent's run folder holds: ``agent/``, ``tree/`` (buggy) and ``case.json``."""
    assert agent.path is not None
    files = prefixed(read_tree(Path(agent.path)), "agent")
    files.update(prefixed(buggy, "tree"))
    files["case.json"] = json.dumps(case, sort_keys=True).encode()
    return files


REPORT_PATH = "/scratch/report.json"
"""Where an agent writes its report (``$BUGHUNT_REPORT``); read after the agent has ended."""

# The agent's environment names where things are; nothing in it is secret or
# changes between runs. The report is a file the runner reads after the
# agent's command has ended, so nothing the agent prints can pose as it.
_AGENT_ENV = {
    "BUGHUNT_TREE": "/work/tree",
    "BUGHUNT_CASE": "/work/case.json",
    "BUGHUNT_REPORT": REPORT_PATH,
}


def agent_limits(agent: AgentVersion, limits: Limits) -> Limits:
    """The agent's container limits: its own ``memory_mb`` and ``cpus`` where set, else
    ``limits``'s (the run's); agent output is kept up to :data:`AGENT_OUTPUT_CAP` at each end."""
    update: dict[str, int] = {"output_cap_bytes": AGENT_OUTPUT_CAP}
    if agent.memory_mb is not None:
        update["memory_bytes"] = agent.memory_mb * MiB
    if agent.cpus is not None:
        update["nano_cpus"] = round(agent.cpus * 1_000_000_000)
    return dataclasses.replace(limits, **update)


def agent_deadline(agent: AgentVersion, run_timeout_s: float) -> float:
    """Seconds one execution of the agent may take: its own ``timeout_s``, else the run's."""
    return agent.timeout_s if agent.timeout_s is not None else run_timeout_s


TRANSCRIPT_CAP = 32 * 1024
"""Bytes of an agent's output kept in its transcript, at each end."""


@dataclasses.dataclass(frozen=True, slots=True)
class AgentExecution:
    """What one run of a command agent on one case gave: its report or why not, and its trace."""

    got: BugReport | str
    """The validated report, or why there is none (scrubbed)."""
    seconds: float
    """Wall-clock seconds the agent ran."""
    transcript: str
    """Its stdout and stderr, merged, head and tail (:data:`TRANSCRIPT_CAP` each), scrubbed."""
    calls: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Its gateway's request log (``gateway/gateway.py``), scrubbed; empty without a network."""


@dataclasses.dataclass(frozen=True, slots=True)
class AgentCase:
    """What an agent is given of one case."""

    case_id: str
    """The case's id."""
    buggy: Files
    """The buggy tree as the agent sees it (the oracle held out)."""
    info: dict[str, object]
    """What ``case.json`` holds."""


@dataclasses.dataclass(frozen=True, slots=True)
class AgentContainer:
    """How the run's agent containers are made."""

    run_id: str
    """The run the containers belong to."""
    image: str | None
    """The agent's image (default: the sandbox image)."""
    timeout_s: float
    """The run's deadline of one execution (the agent's own ``timeout_s`` wins)."""
    limits: Limits
    """The run's limits (the agent's own ``memory_mb`` and ``cpus`` win)."""
    client: object | None = None
    """The engine (default: :func:`~tasks.sandbox.engine._engine.connect`'s)."""


def run_agent(
    agent: AgentVersion,
    case: AgentCase,
    container: AgentContainer,
    *,
    secrets: Mapping[str, str] | None = None,
    scrubber: Scrubber | None = None,
    gateway: Gateway | None = None,
) -> AgentExecution:
    """Run a command-mode agent in a fresh container: its report (or why not), seconds, trace.

    The agent starts in ``/work`` holding ``agent/`` (its folder), ``tree/``
    (the buggy tree) and ``case.json``, and writes its report to
    ``$BUGHUNT_REPORT``. A missing, oversized or malformed report is the
    case's bad input, with the reason. ``container``'s ``timeout_s`` and
    ``limits`` are the run's; the agent's own ``timeout_s``, ``memory_mb`` and
    ``cpus`` win (:func:`agent_deadline`, :func:`agent_limits`).

    ``secrets`` (this agent's ``env``, ``corpus.agent_secrets``) are set in
    this container only. Every text field of the report, the reason, the
    transcript and the request log are scrubbed of them and of whatever
    ``scrubber`` (the run's) holds.

    The container has no network interface. An agent with a network table
    needs its run's ``gateway`` (:class:`~tasks.sandbox.engine._gateway.Gateway`):
    the execution gets its own socket to it and ``OPENAI_BASE_URL`` pointing
    there; without one such an agent is refused, never run with a network.
    """
    assert agent.mode is AgentMode.COMMAND and agent.command
    scrub = (scrubber or Scrubber()).including(secrets or {})
    caps = agent_limits(agent, container.limits)
    deadline_s = agent_deadline(agent, container.timeout_s)
    if agent.network is not None and gateway is None:
        raise SandboxRequestError(
            f"agent {agent.name} has a network table but its run started no gateway"
        )
    with contextlib.ExitStack() as stack:
        access = stack.enter_context(gateway.execution()) if gateway is not None else None
        executor = stack.enter_context(
            Executor(
                run_id=container.run_id,
                image=agent.image or container.image,
                limits=caps,
                network=False,  # no interface at all: the gateway's socket is the one way out
                env={**(secrets or {}), **(access.env if access else {}), **_AGENT_ENV},
                client=container.client,
                link=access.link() if access else None,
            )
        )
        result = executor.run(
            agent.command,
            workspace=agent_workspace(agent, case.buggy, case.info),
            timeout_s=deadline_s,
            collect=REPORT_PATH,
        )
    got = _read_back(result, agent=agent, case_id=case.case_id, deadline_s=deadline_s, scrub=scrub)
    return AgentExecution(
        got=scrub.scrub(got) if isinstance(got, str) else scrub.scrub_model(got),
        seconds=result.duration_s,
        transcript=_transcript(scrub.scrub(result.output)),
        calls=scrub.scrub_json(access.log) if access else [],
    )


def _transcript(text: str) -> str:
    """``text`` with at most :data:`TRANSCRIPT_CAP` characters kept at each end, the cut said."""
    if len(text) <= 2 * TRANSCRIPT_CAP:
        return text
    dropped = len(text) - 2 * TRANSCRIPT_CAP
    return f"{text[:TRANSCRIPT_CAP]}\n[... {dropped} characters of output cut ...]\n{text[-TRANSCRIPT_CAP:]}"


def _read_back(
    result: ExecResult, *, agent: AgentVersion, case_id: str, deadline_s: float, scrub: Scrubber
) -> BugReport | str:
    """The agent's report from its execution, or why there is none."""
    source = f"agent {agent.name} on {case_id}"
    if result.timed_out:
        return f"{source}: timed out after {deadline_s:g} s"
    if result.oom_killed:
        return f"{source}: killed for exceeding the memory limit"
    if result.exit_code != 0:
        # Scrubbed before it is cut, so no piece of a secret is left at the cut.
        last = scrub.scrub(result.output).strip().splitlines()[-1:] or ["no output"]
        why = result.error or f"exit {result.exit_code}"
        return f"{source}: {why} ({last[0][:200]})"
    if result.collected is None:
        return f"{source}: wrote no report to {REPORT_PATH}"
    if len(result.collected) > AGENT_OUTPUT_CAP:
        return f"{source}: report over {AGENT_OUTPUT_CAP} bytes"
    return parse_report(result.collected, source=source, agent=agent)
