"""docs/judges.md keeps up with the code: every status, config key and check option is described."""

from __future__ import annotations

from typing import Any

import pytest
import typer
import typer.main

from bughunt.models import CallStatus
from cli import _judge
from judging.judges import JudgeConfig
from tests.conftest import ROOT

DOC = (ROOT / "docs" / "judges.md").read_text()


@pytest.mark.parametrize("status", list(CallStatus))
def test_every_terminal_status_is_explained(status: CallStatus) -> None:
    """Each terminal status has a row saying what it means for a user."""
    assert f"| `{status.value}`" in DOC


@pytest.mark.parametrize("key", sorted(set(JudgeConfig.model_fields) - {"name"}))
def test_every_config_key_is_documented(key: str) -> None:
    """Each judge table key is in the configuration table."""
    assert f"`{key}`" in DOC


def test_every_check_option_is_documented() -> None:
    """Each ``bughunt judge check`` option appears in the docs."""
    app = typer.Typer()
    _judge.register(app)

    @app.callback()
    def main() -> None:
        """Test app."""

    # Typer vendors its own click, so look commands up by attribute, not by class.
    group: Any = typer.main.get_command(app)
    check = group.commands["judge"].commands["check"]
    opts = [opt for param in check.params for opt in param.opts]
    assert "--judge" in opts and "--json" in opts
    for opt in opts:
        if opt.startswith("--") and opt != "--help":
            assert f"`{opt}" in DOC, opt
