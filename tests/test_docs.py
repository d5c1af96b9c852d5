"""The CLI reference in docs/ is the CLI's own help; every command has --help."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from cli import app
from cli.docs import render
from tests.conftest import ROOT


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    # typer vendors its own click: look groups up by attribute, not by class.
    out = [prefix]
    if hasattr(group, "commands"):
        for name, sub in group.commands.items():
            out.extend(_commands(sub, (*prefix, name)))
    return out


COMMANDS = _commands(typer.main.get_command(app))


def test_every_command_is_found() -> None:
    """The walk finds nested commands (a guard on the walk itself)."""
    assert ("run", "nightly") in COMMANDS and ("flakes", "trend") in COMMANDS


def test_cli_reference_is_up_to_date() -> None:
    """docs/cli.md equals what `make docs` renders now."""
    assert (ROOT / "docs" / "cli.md").read_text() == render(), "run `make docs`"


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "bughunt")
def test_every_command_has_help(path: tuple[str, ...]) -> None:
    """`--help` works on every command and group and says what it does."""
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output
    if path:
        assert f"bughunt {' '.join(path)}" in render()
