"""`make complexity` (part of `make lint`) refuses a function over 20 paths counting boolean
operators, names it, and passes one at the ceiling."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import ROOT


def _function(paths: int) -> str:
    """A function of exactly ``paths`` paths: one for the body, one per boolean operand after
    the first (radon counts each ``and``)."""
    operands = " and ".join(f"x{i}" for i in range(paths))
    args = ", ".join(f"x{i}" for i in range(paths))
    return f"def f({args}):\n    return {operands}\n"


def _complexity(tmp_path: Path, paths: int) -> subprocess.CompletedProcess[str]:
    module = tmp_path / "pkg" / "m.py"
    module.parent.mkdir()
    module.write_text(_function(paths))
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), "complexity", f"CHECKED={module.parent}"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_function_over_the_ceiling_fails_and_is_named(tmp_path: Path) -> None:
    """21 paths (twenty ``and``s) fail, naming the file and function."""
    proc = _complexity(tmp_path, 21)
    assert proc.returncode != 0, proc.stdout
    assert "m.py" in proc.stdout and "f - D (21)" in proc.stdout, proc.stdout


def test_a_function_at_the_ceiling_passes(tmp_path: Path) -> None:
    """20 paths pass."""
    proc = _complexity(tmp_path, 20)
    assert proc.returncode == 0, proc.stdout + proc.stderr
