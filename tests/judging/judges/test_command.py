"""The command backend: an executable reading a JSON request on stdin, under the contract."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from bughunt.models import (
    AgentMode,
    AgentNetwork,
    AgentVersion,
    CallStatus,
    JudgeCall,
    Order,
    Winner,
)
from judging.judges import CallTiming, CommandJudge, JudgeConfig, build_judge, call_judge
from tasks.score._entry import agent_variables
from tests.judging.judges.helpers import assert_no_failure_carries_a_winner, request
from tests.leaks import assert_no_leak


def script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "judge.py"
    path.write_text("import json, sys, time, os, subprocess\n" + body)
    return [sys.executable, str(path)]


def run(argv: list[str], deadline_s: float = 10.0, **kw: object) -> JudgeCall:
    config = JudgeConfig(name="cmd", backend="command", family="local", command=argv)
    judge = CommandJudge(config, **kw)  # type: ignore[arg-type]
    call = call_judge(
        judge,
        request(),
        run_id="r",
        timing=CallTiming(deadline_s=deadline_s, sleep=lambda _s: None),
    )
    assert_no_failure_carries_a_winner([call])
    return call


def test_the_command_reads_the_request_and_its_stdout_is_the_answer(tmp_path: Path) -> None:
    """The request JSON (system, user, case, order, sample) arrives on stdin; stdout is parsed."""
    seen = tmp_path / "seen.json"
    argv = script(
        tmp_path,
        f"req = json.load(sys.stdin)\nopen({str(seen)!r}, 'w').write(json.dumps(req))\n"
        "print('verdict: ' + json.dumps({'winner': 'second', 'rationale': 'cmd'}))\n",
    )
    call = run(argv)
    assert (call.status, call.winner, call.rationale, call.attempts) == (
        CallStatus.JUDGED,
        Winner.SECOND,
        "cmd",
        1,
    )
    req = json.loads(seen.read_text())
    assert sorted(req) == ["case_id", "order", "sample_index", "system", "user"]
    assert (req["case_id"], req["order"], req["sample_index"]) == (
        "c1",
        Order.CANDIDATE_FIRST.value,
        0,
    )
    assert "<<<REPORT-FIRST-" in req["user"]


def test_a_nonzero_exit_is_retried_then_fails_closed(tmp_path: Path) -> None:
    """A failing command is a server error: three runs, then failed_closed with its stderr."""
    counter = tmp_path / "runs"
    argv = script(
        tmp_path,
        f"open({str(counter)!r}, 'a').write('x')\nsys.stderr.write('upstream down')\nsys.exit(1)\n",
    )
    call = run(argv)
    assert (call.status, call.attempts) == (CallStatus.FAILED_CLOSED, 3)
    assert counter.read_text() == "xxx"
    assert call.failure_reason is not None and "upstream down" in call.failure_reason


def test_exit_65_is_over_budget_and_exit_64_a_client_error(tmp_path: Path) -> None:
    """The two sysexits codes a command may use to say "too big" and "bad request"."""
    assert run(script(tmp_path, "sys.exit(65)\n")).status is CallStatus.OVER_BUDGET
    c = run(script(tmp_path, "sys.exit(64)\n"))
    assert (c.status, c.attempts) == (CallStatus.FAILED_CLOSED, 1)


def test_a_slow_command_is_killed_with_its_children_and_times_out(tmp_path: Path) -> None:
    """A command (and a child holding its stdout) past the deadline: timed_out, promptly."""
    argv = script(
        tmp_path,
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\ntime.sleep(30)\n",
    )
    start = time.monotonic()
    call = run(argv, deadline_s=1.0)
    assert (call.status, call.attempts) == (CallStatus.TIMED_OUT, 1)
    assert time.monotonic() - start < 5.0


def test_a_missing_command_fails_closed_without_retry(tmp_path: Path) -> None:
    """A command that does not exist is a client error: one attempt."""
    call = run([str(tmp_path / "no-such-judge")])
    assert (call.status, call.attempts) == (CallStatus.FAILED_CLOSED, 1)
    assert call.failure_reason is not None and "cannot run" in call.failure_reason


def test_unparseable_output_is_retried(tmp_path: Path) -> None:
    """Printed prose without JSON is a parse failure, retried like any model's."""
    call = run(script(tmp_path, "print('the first one')\n"))
    assert (call.status, call.attempts) == (CallStatus.FAILED_CLOSED, 3)


SECRET = "judge-Token/0123+abc=XYZ"
# Prints the variable's value (named by argv[1]) raw and encoded, on stderr or in its answer.
LEAKY = (
    "import base64, urllib.parse\n"
    "value = os.environ[sys.argv[1]]\n"
    "forms = [value, value.upper(), urllib.parse.quote(value, safe=''), json.dumps(value),\n"
    "         value.encode().hex(), base64.b64encode(b'k:' + value.encode()).decode()]\n"
    "if sys.argv[2] == 'stderr':\n"
    "    sys.stderr.write(' '.join(forms))\n"
    "    sys.exit(1)\n"
    "print(json.dumps({'winner': 'first', 'rationale': ' '.join(forms)}))\n"
)


def test_a_secret_on_stderr_never_reaches_the_row(tmp_path: Path) -> None:
    """The command's env values, raw or encoded on stderr, are scrubbed from the failure."""
    argv = [*script(tmp_path, LEAKY), "JUDGE_TOKEN", "stderr"]
    call = run(argv, env={"JUDGE_TOKEN": SECRET})
    assert call.status is CallStatus.FAILED_CLOSED
    assert call.failure_reason is not None and "[secret:JUDGE_TOKEN]" in call.failure_reason
    assert_no_leak(SECRET, call, "the call's row")


def test_a_secret_in_the_answer_never_reaches_the_row(tmp_path: Path) -> None:
    """An answer quoting the secret (raw and encoded) is judged with the marker in its place."""
    argv = [*script(tmp_path, LEAKY), "JUDGE_TOKEN", "answer"]
    call = run(argv, env={"JUDGE_TOKEN": SECRET})
    assert (call.status, call.winner) == (CallStatus.JUDGED, Winner.FIRST)
    assert "[secret:JUDGE_TOKEN]" in (call.rationale or "")
    assert_no_leak(SECRET, call, "the call's row")


def test_a_configured_command_judge_scrubs_its_api_key_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built from configuration, the command inherits the environment: the value of the variable
    its api_key_env names is scrubbed from what it prints."""
    monkeypatch.setenv("HUNT_TEST_JUDGE_KEY", SECRET)
    config = JudgeConfig(
        name="cmd",
        backend="command",
        family="local",
        command=[*script(tmp_path, LEAKY), "HUNT_TEST_JUDGE_KEY", "stderr"],
        api_key_env="HUNT_TEST_JUDGE_KEY",
    )
    call = call_judge(
        build_judge(config),
        request(),
        run_id="r",
        timing=CallTiming(deadline_s=10, sleep=lambda _s: None),
    )
    assert call.failure_reason is not None and "[secret:HUNT_TEST_JUDGE_KEY]" in call.failure_reason
    assert_no_leak(SECRET, call, "the call's row")


def test_a_command_judge_never_gets_the_agents_secrets_or_model_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agents' ``env`` values and model keys are theirs alone: withheld from the judge's
    command (it sees neither name nor value), while the judge's own key still reaches it."""
    monkeypatch.setenv("HUNT_AGENT_TOKEN", SECRET)
    monkeypatch.setenv("HUNT_AGENT_MODEL_KEY", SECRET + "-model")
    monkeypatch.setenv("HUNT_TEST_JUDGE_KEY", "judge-own-key-123")
    agents = [
        AgentVersion(
            name="a", family="f", mode=AgentMode.COMMAND, command=["x"], env=["HUNT_AGENT_TOKEN"]
        ),
        AgentVersion(
            name="b",
            family="f",
            mode=AgentMode.COMMAND,
            command=["x"],
            network=AgentNetwork(model="http://m/v1", api_key_env="HUNT_AGENT_MODEL_KEY"),
        ),
    ]
    seen = tmp_path / "env.json"
    argv = script(
        tmp_path,
        f"json.load(sys.stdin)\nopen({str(seen)!r}, 'w').write(json.dumps(dict(os.environ)))\n"
        "print('verdict: ' + json.dumps({'winner': 'first', 'rationale': 'ok'}))\n",
    )
    config = JudgeConfig(
        name="cmd",
        backend="command",
        family="local",
        command=argv,
        api_key_env="HUNT_TEST_JUDGE_KEY",
    )
    withheld = agent_variables(agents)
    assert withheld == ["HUNT_AGENT_MODEL_KEY", "HUNT_AGENT_TOKEN"]
    judge = build_judge(config, withhold=withheld)
    call = call_judge(
        judge, request(), run_id="r", timing=CallTiming(deadline_s=10, sleep=lambda _s: None)
    )
    assert call.status is CallStatus.JUDGED
    env = json.loads(seen.read_text())
    assert "HUNT_AGENT_TOKEN" not in env and "HUNT_AGENT_MODEL_KEY" not in env
    assert env["HUNT_TEST_JUDGE_KEY"] == "judge-own-key-123"
    assert_no_leak(SECRET, env, "the judge's environment")
