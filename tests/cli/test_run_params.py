"""One source for run parameters: RunParams makes the CLI's options, the flows' parameter, the
deployments' parameters and docs/cli.md; adding a field is a one-place change."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from pydantic import Field
from typer.testing import CliRunner

from cli import app
from cli._params import option_name, with_model_options
from cli.docs import render
from flows import RunParams, prepare
from tests.conftest import ROOT


def _flat(text: str) -> str:
    """Help output as one line of words (Rich's boxes and wrapping removed)."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def _options(*command: str) -> set[str]:
    out = CliRunner().invoke(app, [*command, "--help"], terminal_width=200).output
    return set(re.findall(r"(--[a-z][a-z-]*)", out))


def test_every_field_is_an_option_of_both_run_commands() -> None:
    """`bughunt run nightly` and `run pr` offer exactly RunParams' fields (plus their own)."""
    fields = {option_name(n, f) for n, f in RunParams.model_fields.items()}
    assert fields <= _options("run", "nightly")
    assert fields <= _options("run", "pr")
    assert _options("run", "nightly") - fields == {"--json", "--help"}
    assert _options("run", "pr") - fields == {"--json", "--help", "--diff"}


def test_every_field_is_in_the_cli_reference() -> None:
    """docs/cli.md (rendered from the CLI) documents every field with its help text."""
    doc = render()
    for name, field in RunParams.model_fields.items():
        assert option_name(name, field) in doc
        first_words = " ".join((field.description or "").replace("``", "").split()[:3])
        assert first_words in " ".join(doc.split()), name


def test_the_flows_take_run_params_whole() -> None:
    """Each flow's Prefect parameter schema is RunParams' own schema (so a deployment is
    validated against it)."""
    from flows import nightly_flow, pr_flow

    for flow in (nightly_flow, pr_flow):
        schema = flow.parameters.model_dump()
        defs = schema["definitions"]
        assert set(defs["RunParams"]["properties"]) == set(RunParams.model_fields)


def test_the_deployments_parameters_are_run_params() -> None:
    """prefect.yaml's parameters validate against RunParams (extra keys are refused)."""
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    for deployment in config["deployments"]:
        RunParams.model_validate(deployment["parameters"]["params"])


class MoreParams(RunParams):
    """RunParams with one field more, as a change adding a run parameter would make it."""

    canary_share: float = Field(default=0.25, ge=0, le=1)
    """Share of cases run as canaries."""


def test_adding_a_field_is_a_one_place_change() -> None:
    """A model with one more field gives a command with one more option, whose value arrives."""
    seen: dict[str, Any] = {}
    probe = typer.Typer()

    @probe.command()
    @with_model_options(MoreParams)
    def go(*, params: MoreParams) -> None:
        seen["params"] = params

    runner = CliRunner()
    help_text = _flat(runner.invoke(probe, ["--help"]).output)
    assert "--canary-share" in help_text and "Share of cases run" in help_text
    result = runner.invoke(probe, ["--canary-share", "0.5", "--repeats", "2"])
    assert result.exit_code == 0, result.output
    assert seen["params"].canary_share == 0.5 and seen["params"].repeats == 2
    refused = runner.invoke(probe, ["--canary-share", "2"])
    assert refused.exit_code == 2 and "--canary-share" in refused.output


def test_a_value_the_model_refuses_names_the_option() -> None:
    """A bound the CLI cannot express (a strict > 0) is refused by the model, naming the option."""
    result = CliRunner().invoke(app, ["run", "nightly", "--judge-deadline-s", "0"])
    assert result.exit_code == 2
    assert "--judge-deadline-s" in result.output and "greater than 0" in result.output


def test_run_pr_refuses_a_file_that_is_no_diff(tmp_path: Path) -> None:
    """`bughunt run pr --diff` on an empty file or prose exits 2 with one line naming the file,
    before any run starts (nothing is written to the ledger)."""
    ledger = tmp_path / "l.duckdb"
    for name, data in (("empty.diff", b""), ("prose.diff", b"see the ticket\n")):
        diff = tmp_path / name
        diff.write_bytes(data)
        result = CliRunner().invoke(
            app, ["run", "pr", "--diff", str(diff), "--ledger", str(ledger)]
        )
        assert result.exit_code == 2, result.output
        assert result.stderr.strip().splitlines() == [
            f"error: {diff}: holds no unified diff: no file header (diff --git, or ---/+++) "
            f"in {len(data)} bytes"
        ]
    assert not ledger.exists()


@pytest.mark.parametrize("kind", ["nightly", "pr"])
def test_the_deadline_options_reach_the_sandbox_settings(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--agent-timeout` and `--test-timeout` on either run command become the sandbox stage's
    deadlines (stopped after the input checks, before any run starts)."""
    import cli._run
    from flows import Prepared

    seen: list[Prepared] = []

    def checked_then_stop(*args: Any, **kwargs: Any) -> None:
        seen.append(prepare(*args, **kwargs))
        raise typer.Exit(0)

    monkeypatch.setattr(cli._run, "prepare", checked_then_stop)
    diff = tmp_path / "pr.diff"
    diff.write_text("--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-a\n+b\n")
    args = ["--agent-timeout", "42", "--test-timeout", "7.5", "--ledger", str(tmp_path / "l.db")]
    args += ["--diff", str(diff)] if kind == "pr" else []
    result = CliRunner().invoke(app, ["run", kind, *args])
    assert result.exit_code == 0, result.output
    (ready,) = seen
    settings = ready.params.sandbox_settings(ready.corpus)
    assert (settings.agent_timeout_s, settings.test_timeout_s) == (42.0, 7.5)
