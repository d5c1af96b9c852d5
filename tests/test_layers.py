"""The import contract in pyproject.toml holds for the code, and catches what it forbids.

``make lint`` runs ``lint-imports``; these tests show the same contract, run
on small trees of the project's package names, fails on an upward import and
on a private import across packages, and passes on the real code.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT

LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def _contract_file(tmp_path: Path) -> Path:
    """The project's own ``[tool.importlinter]`` table, alone in a config file."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    lines = [f"root_packages = {table['root_packages']!r}".replace("'", '"')]
    for c in table["contracts"]:
        lines.append("[[tool.importlinter.contracts]]")
        for key, value in c.items():
            lines.append(f"{key} = {value!r}".replace("'", '"'))
    config = tmp_path / "contract.toml"
    config.write_text("[tool.importlinter]\n" + "\n".join(lines) + "\n")
    return config


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """Every root package as an empty package, plus ``files`` (path → source)."""
    root = tmp_path / "src"
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    for pkg in table["root_packages"]:
        (root / pkg).mkdir(parents=True)
        (root / pkg / "__init__.py").write_text("")
    for contract in table["contracts"]:  # every layer a contract names inside a container
        for container in contract.get("containers", []):
            for layer in contract["layers"]:
                for name in layer.split("|"):
                    package = root / container.replace(".", "/") / name.strip()
                    package.mkdir(parents=True, exist_ok=True)
                    (package / "__init__.py").write_text("")
    for rel, source in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for folder in path.relative_to(root).parents:
            init = root / folder / "__init__.py"
            if folder != Path(".") and not init.exists():
                init.write_text("")
        path.write_text(source)
    return root


def _lint(tmp_path: Path, root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LINT_IMPORTS, str(_contract_file(tmp_path)), "--no-cache"],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": str(Path(sys.executable).parent)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_code_keeps_the_contract(tmp_path: Path) -> None:
    """The real packages keep every contract (what ``make lint`` checks)."""
    proc = subprocess.run(
        [LINT_IMPORTS, str(_contract_file(tmp_path)), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("files", "broken"),
    [
        ({"bughunt/models.py": "import ledger\n"}, "Layers"),
        ({"ledger/store.py": "import tasks\n"}, "Layers"),
        ({"judging/judge.py": "import tasks.score\n"}, "Layers"),
        ({"tasks/score/x.py": "import flows\n"}, "Layers"),
        ({"flows/x.py": "import cli\n"}, "Layers"),
        ({"corpus/x.py": "import ledger\n"}, "Layers"),
        ({"gateway/x.py": "import bughunt\n"}, "The gateway imports nothing else"),
        ({"cli/x.py": "import benchmarks\n"}, "Layers"),
        ({"tasks/classify/x.py": "import tasks.sandbox\n"}, "Stages in pipeline order"),
        ({"tasks/sandbox/x.py": "import tasks.score\n"}, "Stages in pipeline order"),
        ({"tasks/score/x.py": "import tasks.gate\n"}, "Stages in pipeline order"),
        ({"tasks/make_corpus/x.py": "import tasks.report\n"}, "Stages in pipeline order"),
        (
            {
                "tasks/sandbox/__init__.py": "",
                "tasks/sandbox/_inner.py": "",
                "tasks/score/__init__.py": "",
                "tasks/score/x.py": "import tasks.sandbox._inner\n",
            },
            "private module",
        ),
    ],
    ids=[
        "kernel→ledger",
        "ledger→tasks",
        "judging→stage",
        "stage→flows",
        "flows→cli",
        "corpus→ledger",
        "gateway→kernel",
        "cli→benchmarks",
        "classify→sandbox",
        "sandbox→score",
        "score→gate",
        "make_corpus→report",
        "private across stages",
    ],
)
def test_the_contract_refuses(tmp_path: Path, files: dict[str, str], broken: str) -> None:
    """An import the contract forbids fails lint-imports, naming the contract it breaks."""
    proc = _lint(tmp_path, _tree(tmp_path, files))
    assert proc.returncode != 0, proc.stdout
    assert f"{broken}" in proc.stdout and "BROKEN" in proc.stdout, proc.stdout


def test_a_stage_may_use_its_own_private_modules(tmp_path: Path) -> None:
    """The contract does not forbid what the layout intends: a package's own private modules,
    a later stage using an earlier one, a benchmark using the product."""
    files = {
        "tasks/score/__init__.py": "from tasks.score._stage import x\n",
        "tasks/score/_stage.py": "x = 1\n",
        "flows/x.py": "import tasks.score\nimport judging\nimport ledger\nimport bughunt\n",
        "tasks/report/x.py": "import tasks.gate\nimport tasks.score\nimport tasks.outcomes\n",
        "tasks/sandbox/x.py": "import tasks.hash_corpus\nimport tasks.classify\n",
        "benchmarks/x.py": "import cli\nimport tasks.sandbox\n",
    }
    proc = _lint(tmp_path, _tree(tmp_path, files))
    assert proc.returncode == 0, proc.stdout
