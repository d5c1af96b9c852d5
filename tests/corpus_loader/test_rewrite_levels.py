"""Rewrite levels and test files: what each level may change, and what is never rewritten."""

from __future__ import annotations

import ast
from pathlib import Path

from bughunt.models import RewriteLevel
from corpus import TargetConfig, rewrite_tree, target_test_files
from corpus._rewrite import rewrite_module
from tasks.sandbox.reproduction import case_trees, rewrite_plan
from tests.fixtures.real_suites import EXAMPLES, TARGETS

SOURCE = (
    EXAMPLES
    + "\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n"
)


def _defs(text: str) -> list[str]:
    return [n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]


def _rewrite(level: RewriteLevel, seed: int) -> str:
    return rewrite_module(SOURCE, seed, "m.py", keep_docs=False, level=level).text


def test_each_level_changes_no_more_than_it_allows() -> None:
    """full shuffles, keep-order never does, keep-names keeps every local, keep-text keeps
    every line as written, and each level's output still differs from the source."""
    shuffled = {tuple(_defs(_rewrite(RewriteLevel.FULL, seed))) for seed in range(12)}
    assert len(shuffled) > 1
    for seed in range(12):
        assert _defs(_rewrite(RewriteLevel.KEEP_ORDER, seed)) == _defs(SOURCE)
    names = _rewrite(RewriteLevel.KEEP_NAMES, 1)
    assert "total = 0" in names and "# add each value" not in names
    assert "total = 0" not in _rewrite(RewriteLevel.KEEP_ORDER, 1)
    text = _rewrite(RewriteLevel.KEEP_TEXT, 1)
    assert (
        text.startswith(SOURCE) and text != SOURCE and text != _rewrite(RewriteLevel.KEEP_TEXT, 2)
    )
    assert ast.dump(ast.parse(text).body[-1]).startswith("Expr(value=Constant(")
    none = rewrite_tree({"m.py": SOURCE.encode()}, 1, level=RewriteLevel.NONE)
    assert none.rewritten == () and none.files["m.py"] == SOURCE.encode()


def test_test_files_are_the_oracle_pytest_defaults_its_config_and_testpaths() -> None:
    """Oracle and visible patterns, test_*.py, *_test.py, conftest.py, the target's own
    python_files besides them and everything under its testpaths; nothing else."""
    files = dict.fromkeys(
        [
            "pkg/m.py",
            "pkg/test_m.py",
            "pkg/m_test.py",
            "conftest.py",
            "checks/util.py",
            "spec/check_m.py",
            "held/secret.py",
            "setup.py",
        ],
        b"",
    )
    files["setup.cfg"] = b"[tool:pytest]\ntestpaths = checks\npython_files = check_*.py\n"
    found = target_test_files(files, ["held/*"])
    assert found == {
        "pkg/test_m.py",
        "pkg/m_test.py",
        "conftest.py",
        "checks/util.py",
        "spec/check_m.py",
        "held/secret.py",
    }
    toml = {**files, "pyproject.toml": b'[tool.pytest.ini_options]\ntestpaths = ["spec"]\n'}
    del toml["setup.cfg"]
    assert target_test_files(toml, []) == {
        "pkg/test_m.py",
        "pkg/m_test.py",
        "conftest.py",
        "spec/check_m.py",
    }


def test_a_case_s_rewritten_trees_keep_every_test_file_byte_for_byte() -> None:
    """The stage's rewrites change the library and never its tests (which pytest runs in
    definition order and which may read their own source)."""
    files = {rel: text.encode() for rel, text in TARGETS["acct"].items()}
    buggy = {**files, "acct/book.py": files["acct/book.py"].replace(b" > self", b" >= self")}
    target = TargetConfig(name="acct", path=Path("/nonexistent"), test_command=["pytest"])
    plan = rewrite_plan(None, (buggy, files), target)
    trees = case_trees(buggy, files, seed=7, case_id="c", plan=plan)
    assert trees.rewritten_buggy is not None and trees.rewritten_clean is not None
    for tree, rewritten in ((buggy, trees.rewritten_buggy), (files, trees.rewritten_clean)):
        assert rewritten["tests/test_book.py"] == tree["tests/test_book.py"]
        assert rewritten["acct/book.py"] != tree["acct/book.py"]
