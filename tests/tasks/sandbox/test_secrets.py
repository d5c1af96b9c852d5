"""An agent's secrets reach its own container only, and no form of them comes back (real Docker).

The agent sees its secret, prints it raw and encoded on stdout and stderr,
and puts it in every field of its report, also in a form no scrubber knows
(reversed) that its reproduction test turns back into the value and prints.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from bughunt.models import AgentMode, AgentVersion, BugReport
from tasks.sandbox._agents import AgentCase, AgentContainer, run_agent
from tasks.sandbox.engine import Limits
from tests.flows.corpora import DEMO, mini_corpus
from tests.leaks import assert_no_leak, leaks
from tests.tasks.sandbox.pairs import one_pair

NAME = "HUNT_TEST_AGENT_TOKEN"
CASE = "cmp-withdraw-exact-balance"
GENUINE = json.loads((DEMO / "recorded" / "baseline" / f"{CASE}.json").read_text("utf-8"))

# The leaky agent: every form of the value on stdout and stderr, in every report field,
# and reversed in its test, which prints it back (and whether it sees the variable).
LEAKY = textwrap.dedent(
    """
    import base64, hashlib, json, os, sys, urllib.parse
    NAME, EXIT = sys.argv[1], int(sys.argv[2])
    value = os.environ[NAME]
    data = value.encode()
    forms = [
        value, value.upper(), value.lower(), urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value), json.dumps(value), data.hex(), data.hex().upper(),
        base64.b64encode(data).decode(), base64.b64encode(b"x" + data).decode(),
        base64.urlsafe_b64encode(b"xy" + data + b"\\n").decode(),
    ]
    for form in forms:
        sys.stdout.buffer.write(("out " + form + "\\n").encode())
        sys.stderr.buffer.write(("err " + form + "\\n").encode())
    sys.stdout.flush()
    sys.stderr.flush()
    if EXIT:
        # stdout and stderr reach the runner on two streams: give the earlier lines time to
        # arrive, so this is the last line (the assertion holds for any line either way).
        __import__("time").sleep(0.5)
        sys.stdout.buffer.write(("the last line is " + value).encode())
        sys.exit(EXIT)
    test = REPRO + (
        "\\n\\nimport os as _os\\n"
        "def test_prints_the_secret():\\n"
        "    print('variable in the test container:', %r in _os.environ)\\n"
        "    print('decoded:', %r[::-1])\\n"
        "    assert False\\n"
    ) % (NAME, value[::-1])
    report = dict(BASE)
    report.update(
        title="token " + value,
        summary="saw " + hashlib.sha256(data).hexdigest() + " " + forms[8],
        steps=[forms[4], forms[1], forms[10]],
        expected=forms[6],
        actual=forms[5],
        root_cause=forms[9],
        repro_test=test + "\\n# " + value + "\\n",
    )
    with open(os.environ["BUGHUNT_REPORT"], "w", encoding="utf-8") as handle:
        json.dump(report, handle)
    """
)


def _value() -> str:
    return f"Tok3n/odd+chars=&é {uuid.uuid4().hex}"


def _agent_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    preamble = f"BASE = {json.dumps(GENUINE)!r}\nREPRO = {GENUINE['repro_test']!r}\n"
    (folder / "agent.py").write_text(preamble + "BASE = __import__('json').loads(BASE)\n" + LEAKY)
    return folder


def _run_agent(
    tmp_path: Path, value: str, *, exit_code: int, image: str, run_id: str, client: Any
) -> BugReport | str:
    agent = AgentVersion(
        name="leaky",
        family="x",
        mode=AgentMode.COMMAND,
        command=["python3", "agent/agent.py", NAME, str(exit_code)],
        path=str(_agent_folder(tmp_path / "agent")),
        env=[NAME],
    )
    got = run_agent(
        agent,
        AgentCase(CASE, {"pkg/__init__.py": b""}, {"id": CASE, "title": "t", "hints": []}),
        AgentContainer(run_id, image, 60, Limits(), client),
        secrets={NAME: value},
    ).got
    return got


@pytest.mark.docker
def test_the_agent_sees_its_secret_and_its_report_holds_no_form_of_it(
    tmp_path: Path, sandbox_image: str, run_id: str, docker_client: Any
) -> None:
    """run_agent: the variable is set in the agent's container; every report field is scrubbed."""
    value = _value()
    got = _run_agent(
        tmp_path, value, exit_code=0, image=sandbox_image, run_id=run_id, client=docker_client
    )
    assert isinstance(got, BugReport), got
    assert hashlib.sha256(value.encode()).hexdigest() in got.summary  # it saw the value
    assert got.title == f"token [secret:{NAME}]"
    assert_no_leak(value, got, "the report")


@pytest.mark.docker
def test_a_failing_agents_reason_holds_no_form_of_its_secret(
    tmp_path: Path, sandbox_image: str, run_id: str, docker_client: Any
) -> None:
    """The reason quotes the agent's last line of output: scrubbed before it is cut."""
    value = _value()
    got = _run_agent(
        tmp_path, value, exit_code=3, image=sandbox_image, run_id=run_id, client=docker_client
    )
    assert isinstance(got, str) and "exit 3" in got, got
    # The reason quotes the last line of output (stdout and stderr arrive on two streams, so
    # which line is last is the engine's ordering): whichever it is, its secret is a marker.
    assert f"[secret:{NAME}]" in got.split("(", 1)[1], got
    assert_no_leak(value, got, "the reason")


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_the_stage_passes_the_secret_to_the_agent_only_and_stores_no_form_of_it(
    tmp_path: Path, run_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_sandbox: the reproduction containers lack the variable; the pair, its report and
    every observation's output (which printed the value back) hold no form of it."""
    value = _value()
    monkeypatch.setenv(NAME, value)
    monkeypatch.setenv("BUGHUNT_AGENT_KEY_VARS", NAME)  # the operator lets agents have it
    agents = f"""
[[agents]]
name = "leaky"
family = "scripted-gamma"
mode = "command"
command = ["python3", "agent/agent.py", "{NAME}", "0"]
path = "agents/leaky"
env = ["{NAME}"]
"""
    root = mini_corpus(tmp_path / "repo", [CASE], extra_agents=agents)
    _agent_folder(root / "agents" / "leaky")
    pair = one_pair(
        root,
        "leaky",
        CASE,
        run_id=run_id,
        repeats=1,
        rewrite_repeats=0,
        check_contract=False,
        seed=5,
    )
    assert pair.report is not None, pair.reason
    assert hashlib.sha256(value.encode()).hexdigest() in pair.report.summary
    outputs = [o.output or "" for o in pair.observations]
    assert len(outputs) == 2 and all(
        "variable in the test container: False" in out for out in outputs
    ), outputs
    assert all(f"decoded: [secret:{NAME}]" in out for out in outputs), outputs
    assert_no_leak(value, pair, "the stage's result")
    assert not leaks(value, pair.model_dump_json())
