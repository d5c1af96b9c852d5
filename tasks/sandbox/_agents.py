"""Obtaining an agent version's report for a case: recorded (replay) or run in the sandbox.

Whatever comes back is untrusted: it is parsed and validated as a
:class:`~bughunt.models.BugReport`, and anything that is not one becomes a
reason (named file or agent, line, field), never an exception that stops the
run.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from pydantic import ValidationError

from bughunt.models import AgentMode, AgentVersion, BugReport
from tasks.sandbox._container import Limits
from tasks.sandbox._session import SandboxSession
from tasks.sandbox._trees import Files, prefixed, read_tree

AGENT_OUTPUT_CAP = 1024 * 1024
"""Bytes of agent output kept at each end: a report up to this size arrives whole."""


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
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"{source}:{exc.lineno}: not valid JSON ({exc.msg})"
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
    if not path.is_file():
        return f"{path}: no recorded report for this case"
    if path.stat().st_size > 4 * AGENT_OUTPUT_CAP:
        return f"{path}: report over {4 * AGENT_OUTPUT_CAP} bytes"
    return parse_report(path.read_bytes(), source=str(path), agent=agent)


def agent_workspace(agent: AgentVersion, buggy: Files, case: dict[str, object]) -> Files:
    """What the agent's run folder holds: ``agent/``, ``tree/`` (buggy) and ``case.json``."""
    assert agent.path is not None
    files = prefixed(read_tree(Path(agent.path)), "agent")
    files.update(prefixed(buggy, "tree"))
    files["case.json"] = json.dumps(case, sort_keys=True).encode()
    return files


# The report is whatever the agent printed on stdout. Output streams are merged
# by the sandbox, so stdout goes to a file and is printed after a marker with a
# per-run nonce the agent cannot know (it cannot forge the boundary).
_WRAPPER = (
    "marker=$BUGHUNT_MARKER; unset BUGHUNT_MARKER; out=$PWD/.bughunt-report; log=$PWD/.bughunt-log; "
    'BUGHUNT_TREE=$PWD/tree BUGHUNT_CASE=$PWD/case.json "$@" >"$out" 2>"$log"; code=$?; '
    'tail -c 16384 "$log"; printf "\\n%s %s\\n" "$marker" "$code"; cat "$out"; exit $code'
)


def run_agent(
    agent: AgentVersion,
    *,
    case_id: str,
    buggy: Files,
    case: dict[str, object],
    run_id: str,
    image: str | None,
    timeout_s: float,
    limits: Limits,
    client: object | None = None,
) -> tuple[BugReport | str, float]:
    """Run a command-mode agent in the sandbox; its report (or why not) and seconds taken."""
    assert agent.mode is AgentMode.COMMAND and agent.command
    marker = "BUGHUNT-REPORT-" + secrets.token_hex(8)
    env = {"BUGHUNT_MARKER": marker}
    caps = Limits(
        memory_bytes=limits.memory_bytes,
        nano_cpus=limits.nano_cpus,
        pids=limits.pids,
        scratch_bytes=limits.scratch_bytes,
        tmp_bytes=limits.tmp_bytes,
        output_cap_bytes=AGENT_OUTPUT_CAP,
    )
    with SandboxSession(
        run_id=run_id,
        workspace=agent_workspace(agent, buggy, case),
        image=agent.image or image,
        limits=caps,
        network=agent.network,
        env=env,
        client=client,
    ) as session:
        result = session.exec(["sh", "-c", _WRAPPER, "sh", *agent.command], timeout_s=timeout_s)
    source = f"agent {agent.name} on {case_id}"
    if result.timed_out:
        return f"{source}: timed out after {timeout_s:.0f} s", result.duration_s
    if result.oom_killed:
        return f"{source}: killed for exceeding the memory limit", result.duration_s
    head, sep, tail = result.output.rpartition(f"{marker} ")
    if not sep:
        return (
            f"{source}: no report ({result.error or 'the agent did not finish'})",
            result.duration_s,
        )
    code_text, _, report_text = tail.partition("\n")
    if code_text.strip() != "0":
        last = head.strip().splitlines()[-1:] or ["no output"]
        return f"{source}: exit {code_text.strip()} ({last[0][:200]})", result.duration_s
    return parse_report(report_text, source=source, agent=agent), result.duration_s
