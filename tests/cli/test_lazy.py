"""The command line imports a command's module only when that command runs.

``bughunt --help`` lists commands from ``cli.COMMANDS``; these tests keep that
list in step with the commands themselves and show, in fresh interpreters,
which heavy libraries a light command leaves unimported. Wall times are in
``benchmarks/cli_latency.py``.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import typer.main

from cli import COMMANDS, app
from tests.conftest import ROOT

HEAVY = ("prefect", "scipy", "matplotlib", "docker", "openai", "distributed", "httpx", "urllib3")
"""Libraries a read command or the help has no use for (each slow to import)."""

ROWS = ("pyarrow", "bughunt.models")
"""What the ledger's row writes and reads need and a user's query does not (slow to import)."""


def _first_paragraph(command: object) -> str:
    text = inspect.cleandoc(getattr(command, "help", None) or "").partition("\f")[0]
    return " ".join(text.split("\n\n")[0].split())


def test_the_listed_commands_are_the_commands_their_modules_register() -> None:
    """Each entry of COMMANDS is registered by the module it names, with the help it lists."""
    for name, (module, help_text) in COMMANDS.items():
        holder = typer.Typer()
        __import__(module, fromlist=["register"]).register(holder)
        registered = typer.main.get_group(holder).commands
        assert name in registered, f"{module} does not register {name}"
        assert _first_paragraph(registered[name]) == help_text, name


def test_every_module_s_commands_are_listed() -> None:
    """No module registers a command COMMANDS leaves out."""
    for module in {m for m, _ in COMMANDS.values()}:
        holder = typer.Typer()
        __import__(module, fromlist=["register"]).register(holder)
        assert set(typer.main.get_group(holder).commands) <= set(COMMANDS), module


def test_the_root_looks_commands_up_lazily() -> None:
    """The root group lists COMMANDS in order and loads a real command when one is looked up."""
    group = typer.main.get_command(app)
    ctx = typer.Context(group)
    assert group.list_commands(ctx) == list(COMMANDS)  # type: ignore[attr-defined]
    run = group.get_command(ctx, "run")  # type: ignore[attr-defined]
    assert run is not None and "nightly" in run.commands
    assert group.get_command(ctx, "no-such-command") is None  # type: ignore[attr-defined]


def _imported_after(args: list[str], cwd: Path) -> dict[str, object]:
    """Run ``bughunt ARGS`` in a fresh interpreter; its exit code and the heavy modules loaded."""
    probe = (
        "import json, sys\n"
        f"sys.argv = ['bughunt', *{args!r}]\n"
        "code = 0\n"
        "try:\n"
        "    from cli import main\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    code = exc.code or 0\n"
        f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print('\\n' + json.dumps({'code': code, 'heavy': heavy}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(cwd)},
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize(
    ("args", "unwanted"),
    [
        (["--help"], HEAVY),
        (["sql", "select 1", "--json"], (*HEAVY, *ROWS)),
        (["schema", "RunInfo"], HEAVY),
        # history commands read the ledger: no run machinery, no charts, no statistics library
        (["flakes", "--help"], ("prefect", "scipy", "matplotlib", "openai", "distributed")),
        (["report", "--help"], ("prefect", "scipy", "matplotlib", "openai", "distributed")),
        # the judge cache's commands read or mark the ledger: no run machinery, no statistics
        (["cache", "stats", "--json"], ("prefect", "scipy", "matplotlib", "openai", "distributed")),
        (
            ["cache", "prune", "--older-than", "30d"],
            ("prefect", "scipy", "matplotlib", "openai", "distributed"),
        ),
    ],
    ids=lambda a: " ".join(a) if isinstance(a, list) else "",
)
def test_light_commands_import_no_heavy_library(
    args: list[str], unwanted: tuple[str, ...], tmp_path: Path
) -> None:
    """Help, SQL, schema, the history commands' help and the judge cache's commands leave the
    heavy libraries unimported."""
    if args[0] in ("sql", "cache"):
        assert _imported_after(["migrate"], tmp_path)["code"] == 0
    result = _imported_after(args, tmp_path)
    assert result["code"] == 0
    assert [m for m in result["heavy"] if m in unwanted] == []  # type: ignore[attr-defined]


def test_the_probe_sees_what_a_command_imports(tmp_path: Path) -> None:
    """The guard above can fail: `run nightly --help` loads the run module, whose input checks
    import the docker SDK (an agent environment's image recipe), and the probe reports it."""
    result = _imported_after(["run", "nightly", "--help"], tmp_path)
    assert result["code"] == 0 and "docker" in result["heavy"]  # type: ignore[operator]


def test_a_mistyped_judge_is_answered_before_the_run_machinery_is_imported(
    tmp_path: Path,
) -> None:
    """`run nightly --judge <typo>` exits 2 having imported no Prefect, no statistics, no charts,
    no Arrow: the judges are checked first (the wall time is in benchmarks/cli_latency.py)."""
    demo = str(ROOT / "corpus" / "demo")
    result = _imported_after(["run", "nightly", "--corpus", demo, "--judge", "typo"], tmp_path)
    assert result["code"] == 2
    unwanted = ("prefect", "scipy", "matplotlib", "distributed", "openai", "pyarrow")
    assert [m for m in result["heavy"] if m in unwanted] == []  # type: ignore[attr-defined]
