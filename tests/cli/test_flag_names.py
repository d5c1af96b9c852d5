"""One name for one thing across every command: the judges' configuration, a run's id."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer.main

from cli import COMMANDS

SAME_THING = {
    "--config": "--judges-config",
    "--run": "--run-id",
}
"""An option named by the key must also answer to the value (the name every other command uses)."""


def _commands() -> Iterator[tuple[str, Any]]:
    for name, (module, _) in COMMANDS.items():
        holder = typer.Typer()
        __import__(module, fromlist=["register"]).register(holder)
        stack: list[tuple[str, Any]] = [(name, typer.main.get_group(holder).commands[name])]
        while stack:
            path, command = stack.pop()
            yield path, command
            # typer's groups are not click.Group instances: a group is what has commands
            stack.extend((f"{path} {n}", c) for n, c in getattr(command, "commands", {}).items())


def test_every_command_answers_to_the_shared_names() -> None:
    """`--judges-config` wherever judges are configured, `--run-id` wherever a run is chosen."""
    seen = {key: 0 for key in SAME_THING}
    odd = []
    for path, command in _commands():
        for param in command.params:
            names = set(getattr(param, "opts", [])) | set(getattr(param, "secondary_opts", []))
            for key, shared in SAME_THING.items():
                if key in names:
                    seen[key] += 1
                    if shared not in names:
                        odd.append(f"bughunt {path}: {key} without {shared}")
    assert odd == []
    assert all(seen.values()), seen  # the walk reaches the commands that have them


def test_judge_check_and_report_take_the_shared_names() -> None:
    """``judge check`` and ``report`` take the shared option names, as the other commands do."""
    names = {
        path: {o for p in command.params for o in getattr(p, "opts", [])}
        for path, command in _commands()
    }
    assert {"--judges-config", "--config"} <= names["judge check"]
    assert {"--run-id", "--run"} <= names["report"]
    assert {"--run-id", "--run"} <= names["summary"]
