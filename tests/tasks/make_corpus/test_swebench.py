"""`bughunt corpus import --format swebench` on a git repository the test builds.

The repository has a bug at its base commit; the instance's fix patch
corrects it and its test patch adds the test that shows it. Imported, the
target is the fixed tree with that test, the injected bug is the fix
reversed, and the corpus contract holds in the real sandbox.
"""

from __future__ import annotations

import difflib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli import app
from corpus import load_corpus
from tasks.classify import classify_corpus
from tasks.make_corpus import import_swebench
from tasks.sandbox import SandboxSettings, check_corpus
from tasks.sandbox.trees import apply_patch
from tests.conftest import ROOT

DEMO = ROOT / "corpus" / "demo"

CALC = "def add(a, b):\n    return a - b\n\n\ndef neg(a):\n    return -a\n"
OLD_TEST = "from calc import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n"
NEW_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FIX = "diff --git a/calc.py b/calc.py\n" + "".join(
    difflib.unified_diff(
        CALC.splitlines(keepends=True),
        CALC.replace("a - b", "a + b").splitlines(keepends=True),
        "a/calc.py",
        "b/calc.py",
    )
)
TEST_PATCH = """diff --git a/tests/test_add.py b/tests/test_add.py
new file mode 100644
--- /dev/null
+++ b/tests/test_add.py
@@ -0,0 +1,5 @@
+from calc import add
+
+
+def test_add():
+    assert add(2, 3) == 5
"""


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(repo)}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def repos(tmp_path: Path) -> tuple[Path, str]:
    """``repos/acme__calc``: one commit holding the bug; returns the folder and the commit."""
    repo = tmp_path / "repos" / "acme__calc"
    (repo / "tests").mkdir(parents=True)
    (repo / "calc.py").write_text(CALC)
    (repo / "tests" / "test_neg.py").write_text(OLD_TEST)
    (repo / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    return tmp_path / "repos", _git(repo, "rev-parse", "HEAD")


def _instance(commit: str, **over: Any) -> dict[str, Any]:
    base = {
        "instance_id": "acme__calc-1",
        "repo": "acme/calc",
        "base_commit": commit,
        "patch": FIX,
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": json.dumps(["tests/test_add.py::test_add"]),
        "PASS_TO_PASS": ["tests/test_neg.py::test_neg"],
        "problem_statement": "add() subtracts\n\nIt returns a - b.",
        "created_at": "ignored",
    }
    return base | over


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_an_instance_becomes_a_target_and_a_case(repos: tuple[Path, str], tmp_path: Path) -> None:
    """The target is the fixed tree with the new test; the case's patch is the fix reversed,
    applies to it and gives back the base code; the oracle is the failing test's file; the
    suite runs FAIL_TO_PASS and PASS_TO_PASS by node id; classify agrees."""
    folder, commit = repos
    file = _jsonl(tmp_path / "instances.jsonl", [_instance(commit)])
    out = tmp_path / "imported"
    summary = import_swebench(file, repos=folder, out=out, agents_from=DEMO)
    assert summary.skipped == [] and summary.cases == ["acme__calc-1"]
    corpus = load_corpus(out)
    assert corpus.rejected == []
    (case,) = corpus.cases
    target = corpus.target_of(case)
    assert case.target == target.name == "acme__calc-1"
    assert (target.path / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    assert (target.path / "tests" / "test_add.py").read_text() == NEW_TEST
    assert target.oracle == ["tests/test_add.py"]
    assert target.test_command[-2:] == [
        "tests/test_add.py::test_add",
        "tests/test_neg.py::test_neg",
    ]
    buggy = apply_patch(target.path, case.patch, file="bug.patch")
    assert buggy["calc.py"].decode() == CALC
    assert case.case.title == "add() subtracts"
    assert classify_corpus(corpus).rejected == []
    assert {a.name for a in corpus.config.agents} >= {"baseline", "candidate"}


def test_bad_instances_are_skipped_by_line_and_the_rest_imported(
    repos: tuple[Path, str], tmp_path: Path
) -> None:
    """Not JSON, a missing field, an unknown repository, a commit the checkout lacks, a fix that
    adds a file, a repeated id: each skipped with its line and reason; exit 1; the good one kept."""
    folder, commit = repos
    adds = "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n"
    adds += "@@ -0,0 +1 @@\n+X = 1\n"
    rows: list[Any] = [
        _instance(commit),
        "{not json",
        {k: v for k, v in _instance(commit, instance_id="b").items() if k != "patch"},
        _instance(commit, instance_id="c", repo="acme/nowhere"),
        _instance("f" * 40, instance_id="d"),
        _instance(commit, instance_id="e", patch=adds),
        _instance(commit),
    ]
    file = _jsonl(tmp_path / "instances.jsonl", rows)
    out = tmp_path / "imported"
    result = CliRunner().invoke(
        app,
        [
            *("corpus", "import", str(file), "--repos", str(folder), "--out", str(out)),
            *("--agents-from", str(DEMO), "--json"),
        ],
    )
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout)
    assert summary["cases"] == ["acme__calc-1"]
    reasons = {s["line"]: s["reason"] for s in summary["skipped"]}
    assert sorted(reasons) == [2, 3, 4, 5, 6, 7]
    assert reasons[2].startswith("not JSON")
    assert reasons[3] == "field patch: Field required"
    assert "no git checkout of acme/nowhere" in reasons[4]
    assert reasons[5].startswith("git archive failed")
    assert "adds, deletes or renames files (new.py)" in reasons[6]
    assert "given twice" in reasons[7]
    assert len(load_corpus(out).cases) == 1


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_the_imported_case_keeps_the_corpus_contract_in_the_sandbox(
    repos: tuple[Path, str], tmp_path: Path, run_id: str
) -> None:
    """The clean target passes FAIL_TO_PASS and PASS_TO_PASS; the reversed fix fails the first."""
    folder, commit = repos
    out = tmp_path / "imported"
    file = _jsonl(tmp_path / "instances.jsonl", [_instance(commit)])
    import_swebench(file, repos=folder, out=out, agents_from=DEMO)
    (check,) = check_corpus(load_corpus(out), {}, run_id=run_id, settings=SandboxSettings())
    assert check.status.value == "ok", check.reason
    assert check.failing_tests == ["tests/test_add.py::test_add"]
