"""The CLI reference in docs/ is the CLI's own help; every command has --help."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
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


def _anchors(doc: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown file (lower case, punctuation dropped, - for spaces)."""
    out = set()
    for line in doc.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def _references() -> list[tuple[str, str, str]]:
    """Every ``docs/<file>.md[#anchor]`` named outside the tests, and every relative link in docs/."""
    found = []
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for rel in tracked:
        if not rel.endswith((".py", ".md", ".toml", ".yaml", ".sql")) or rel == "CHANGELOG.md":
            continue
        if rel.startswith("tests/"):  # tests use made-up docs paths as PR diffs
            continue
        text = (ROOT / rel).read_text()
        for m in re.finditer(r"docs/([\w-]+\.md)(?:#([\w-]+))?", text):
            found.append((rel, m.group(1), m.group(2) or ""))
        if rel.startswith("docs/"):
            for m in re.finditer(r"\]\(([\w-]+\.md)(?:#([\w-]+))?\)", text):
                found.append((rel, m.group(1), m.group(2) or ""))
    return found


def test_the_design_is_cited_from_the_repository_only() -> None:
    """Nothing cites sections of the design document the repository does not hold, except the
    changelog and the applied migrations (whose text every ledger that ran them recorded)."""
    citation = "DESIGN" + " §"
    hits = subprocess.run(
        ["git", "grep", "-n", citation, "--", ".", ":!CHANGELOG.md", ":!ledger/migrations"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout
    assert hits == "", hits


def test_every_docs_reference_resolves() -> None:
    """Each docs/<file>.md#anchor the code or the docs name is a file with that heading."""
    refs = _references()
    assert len(refs) > 50  # the walk finds them
    broken = [
        f"{where}: {file}#{anchor}"
        for where, file, anchor in refs
        if not (ROOT / "docs" / file).is_file()
        or (anchor and anchor not in _anchors(ROOT / "docs" / file))
    ]
    assert broken == []
