"""``bughunt judge check``: one probe call, printed, with the exit code telling judged or not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from cli import _judge
from tests.judging.judges.openai_server import OpenAIServer, answer, error

runner = CliRunner()


def app() -> typer.Typer:
    a = typer.Typer(pretty_exceptions_enable=False)
    _judge.register(a)

    @a.callback()
    def main() -> None:
        """bughunt (test app)."""

    return a


def check(*args: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app(), ["judge", "check", *args], env=env)


def check_ad_hoc(server: OpenAIServer, *args: str, env: dict[str, str] | None = None) -> Result:
    """``judge check`` of an unconfigured judge ``local`` at the test server, model ``m``."""
    return check("--judge", "local", "--base-url", server.base_url, "--model", "m", *args, env=env)


def test_check_an_ad_hoc_endpoint_prints_the_parsed_answer_as_json(server: OpenAIServer) -> None:
    """--base-url and --model check an unconfigured endpoint; --json prints the call."""
    server.script(answer("first", "precise repro and root cause"))
    result = check_ad_hoc(server, "--json", env={"OPENAI_API_KEY": "k"})
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["status"], out["winner"], out["attempts"], out["expected_winner"]) == (
        "judged",
        "first",
        1,
        "first",
    )
    assert out["rationale"] == "precise repro and root cause"
    assert out["latency_s"] >= 0 and out["failure_reason"] is None
    assert server.count == 1
    user = server.requests[0].body["messages"][1]["content"]
    assert "clamp" in user and "<<<REPORT-FIRST-" in user


def test_check_exits_1_when_the_judge_fails(server: OpenAIServer) -> None:
    """A judge that refuses the request: status and reason printed, exit code 1."""
    server.script(error(400, "unknown model"))
    result = check_ad_hoc(server, env={"OPENAI_API_KEY": "k"})
    assert result.exit_code == 1
    text = result.stdout
    assert "status:    failed_closed" in text
    assert "attempts:  1" in text
    assert "unknown model" in text


def test_check_a_configured_judge_with_an_overridden_url(
    server: OpenAIServer, tmp_path: Path
) -> None:
    """A judge from a config file, its base URL overridden on the command line."""
    config = tmp_path / "judges.toml"
    config.write_text(
        '[judges.gpt]\nbackend = "openai"\nfamily = "gpt"\nmodel = "gpt-x"\n'
        'base_url = "http://127.0.0.1:9/v1"\napi_key_env = "GPT_KEY"\n'
    )
    server.script(answer("tie"))
    result = check(
        "--judge",
        "gpt",
        "--config",
        str(config),
        "--base-url",
        server.base_url,
        "--json",
        env={"GPT_KEY": "k"},
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["judge"], out["family"], out["model"], out["winner"]) == (
        "gpt",
        "gpt",
        "gpt-x",
        "tie",
    )
    assert server.requests[0].body["model"] == "gpt-x"


def test_check_a_command_judge(tmp_path: Path) -> None:
    """A command judge from a config file, in text form."""
    import sys

    script = tmp_path / "j.py"
    script.write_text('import sys, json\njson.load(sys.stdin)\nprint(\'{"winner": "first"}\')\n')
    config = tmp_path / "judges.toml"
    config.write_text(
        f'[judges.cmd]\nbackend = "command"\nfamily = "local"\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(script))}]\n'
    )
    result = check("--judge", "cmd", "--config", str(config))
    assert result.exit_code == 0, result.output
    assert "status:    judged" in result.stdout
    assert "winner:    first" in result.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["--judge", "nobody"], "no judge named 'nobody'"),
        (["--judge", "sim", "--base-url", "http://x/v1"], "apply to one openai judge"),
        (["--judge", "sim", "--family", "f"], "--family is for a judge that is not configured"),
    ],
)
def test_check_refuses_bad_input_with_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    """Unknown judges and misplaced overrides are errors (exit 2), not probes."""
    config = tmp_path / "judges.toml"
    config.write_text("")
    result = check("--config", str(config), *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_a_missing_config_file_is_an_error(tmp_path: Path) -> None:
    """--config naming a file that does not exist: exit 2, naming it."""
    result = check("--config", str(tmp_path / "none.toml"))
    assert result.exit_code == 2
    assert "none.toml: judge configuration file not found" in result.stderr


def test_a_missing_key_variable_is_an_error_that_names_it(server: OpenAIServer) -> None:
    """The key's variable named and empty: exit 2, naming the variable, nothing sent."""
    result = check_ad_hoc(server, "--api-key-env", "OPENAI_API_KEY", env={"OPENAI_API_KEY": ""})
    assert result.exit_code == 2
    assert "OPENAI_API_KEY is not set" in result.stderr
    assert server.count == 0


def test_help_describes_the_command() -> None:
    """``judge check --help`` says what it does."""
    result = runner.invoke(app(), ["judge", "check", "--help"])
    assert result.exit_code == 0
    assert "probe pair" in result.stdout


def test_check_the_default_sim_judge_needs_no_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bughunt judge check`` with no options probes the simulated judge: no network, exit 0."""
    monkeypatch.chdir(tmp_path)
    result = check("--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["judge"], out["backend"], out["status"], out["attempts"]) == (
        "sim",
        "sim",
        "judged",
        1,
    )
    assert out["winner"] in {"first", "second", "tie"}


def test_check_a_jury_checks_every_member(tmp_path: Path, server: OpenAIServer) -> None:
    """A jury name probes each member; one failing member makes the exit code 1."""
    config = tmp_path / "judges.toml"
    config.write_text(
        f'[judges.gpt]\nbackend = "openai"\nfamily = "gpt"\nmodel = "m"\nbase_url = "{server.base_url}"\n'
        'api_key_env = ""\n[juries.panel]\nmembers = ["gpt", "sim"]\n'
    )
    server.script(error(500, "down", type_="server_error"))
    server.fallback = error(500, "still down", type_="server_error")
    result = check("--judge", "panel", "--config", str(config), "--json", "--deadline", "5")
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    assert [(m["judge"], m["status"]) for m in out["members"]] == [
        ("gpt", "failed_closed"),
        ("sim", "judged"),
    ]
    assert out["members"][0]["attempts"] == 3 and server.count == 3


def test_an_ad_hoc_judge_at_a_base_url_is_keyless_unless_told(server: OpenAIServer) -> None:
    """A local endpoint needs no key: no OPENAI_API_KEY is asked for, and one that is set is not
    sent to an address it was not meant for; --api-key-env names the key to send."""
    server.script(answer("first"), answer("first"))
    keyless = check_ad_hoc(server, env={})
    assert keyless.exit_code == 0, keyless.output
    leaked = check_ad_hoc(server, env={"OPENAI_API_KEY": "sk-not-for-you"})
    assert leaked.exit_code == 0, leaked.output
    assert [r.headers.get("authorization") for r in server.requests] == [None, None]
    server.script(answer("first"))
    told = check_ad_hoc(server, "--api-key-env", "LOCAL_KEY", env={"LOCAL_KEY": "k-local"})
    assert told.exit_code == 0, told.output
    assert server.requests[-1].headers.get("authorization") == "Bearer k-local"


def test_judges_config_is_the_shared_name_of_the_config_option(
    server: OpenAIServer, tmp_path: Path
) -> None:
    """--judges-config, as every other command names it, reads the judges of judge check."""
    config = tmp_path / "judges.toml"
    config.write_text(
        f'[judges.mine]\nbackend = "openai"\nfamily = "f"\nmodel = "m"\n'
        f'base_url = "{server.base_url}"\napi_key_env = ""\n'
    )
    server.script(answer("first"))
    result = check("--judge", "mine", "--judges-config", str(config), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["judge"] == "mine"
