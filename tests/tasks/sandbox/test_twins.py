"""Twins of the bug's code: the same behaviour, other text, other bytecode, no line moved.

Equivalence is shown three ways: expressions whose operands log every
evaluation give the same values, effects and exceptions in the same order;
the demo target with every line of every module twinned passes its own test
suite as before, and a buggy tree fails the same tests; the project's own
modules, every line twinned, all compile with their line count kept.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

from bughunt.models import Observation, ReproOutcome, Status, Tree
from tasks.sandbox.evidence import BugLines, Trace, Variant, plan_variants, site_ran, twin
from tasks.sandbox.evidence._twins import _twin_file
from tasks.sandbox.reproduction._reproduce import VARIANT_REASON, variants_outcome
from tasks.sandbox.trees import apply_patch, read_tree
from tests.conftest import ROOT

DEMO = ROOT / "corpus" / "demo"
TARGET = DEMO / "target"


def _all_lines(data: bytes) -> frozenset[int]:
    return frozenset(range(1, len(data.splitlines()) + 1))


def _twinned(source: str, lines: frozenset[int] | None = None, seed: int = 1) -> str:
    data = source.encode()
    made = _twin_file("m.py", data, _all_lines(data) if lines is None else lines, seed)
    assert not isinstance(made, str), made
    return made[0].decode()


class Logged:
    """A value whose every operation is written to a shared log, so order and count show."""

    def __init__(self, name: str, value: Any, log: list[str]) -> None:
        self.name, self.value, self.log = name, value, log

    def _op(self, op: str, other: Any, result: Any) -> Any:
        self.log.append(f"{self.name}.{op}({getattr(other, 'name', other)!r})")
        return result

    def __lt__(self, other: Any) -> Any:
        return self._op("lt", other, self.value < _v(other))

    def __le__(self, other: Any) -> Any:
        return self._op("le", other, self.value <= _v(other))

    def __eq__(self, other: Any) -> Any:
        return self._op("eq", other, self.value == _v(other))

    def __hash__(self) -> int:
        return hash(self.value)

    def __add__(self, other: Any) -> Any:
        return self._op("add", other, Logged(f"({self.name}+)", self.value + _v(other), self.log))

    def __radd__(self, other: Any) -> Any:
        return self._op("radd", other, Logged(f"(+{self.name})", _v(other) + self.value, self.log))

    def __neg__(self) -> Any:
        return self._op("neg", None, Logged(f"-{self.name}", -self.value, self.log))

    def __contains__(self, item: Any) -> bool:
        self.log.append(f"{self.name}.contains({getattr(item, 'name', item)!r})")
        return _v(item) in self.value

    def __bool__(self) -> bool:
        self.log.append(f"{self.name}.bool")
        return bool(self.value)


def _v(x: Any) -> Any:
    return x.value if isinstance(x, Logged) else x


SNIPPETS = {
    "chain": "def f(a, b, c):\n    return a <= b < c\n",
    "chain that stops early": "def f(a, b, c):\n    return a < b <= c\n",
    "chain of three": "def f(a, b, c):\n    return a <= b <= c < 100\n",
    "arithmetic": "def f(a, b, c):\n    return -a + b * 2 - (c  # comment\n        // 3) % 7\n",
    "reflected": "def f(a, b, c):\n    return 5 + a\n",
    "membership": "def f(a, b, c):\n    return (a in b, a not in c)\n",
    "identity": "def f(a, b, c):\n    return a is not b, a is a\n",
    "boolean": "def f(a, b, c):\n    return (a and b) or not c\n",
    "comprehension": "def f(a, b, c):\n    return [x for x in range(9) if 1 < x <= 6]\n",
    "lambda": "def f(a, b, c):\n    g = lambda y: 0 < y < 5\n    return g(3), g(7)\n",
    "raises": "def f(a, b, c):\n    return a < None\n",
    "f-string": "def f(a, b, c):\n    return f'{1 + 2}' + str(a is b)\n",
    "defaults": "def f(a, b, c, d=3 - 1):\n    return d * 2\n",
    "class body": "class K:\n    x = 1 < 2 < 3\n    y = -4\n\ndef f(a, b, c):\n    return K.x, K.y, sorted(vars(K))\n",
}


def _run(source: str, args: tuple[Any, ...]) -> tuple[Any, list[str]]:
    log: list[str] = []
    space: dict[str, Any] = {}
    exec(compile(source, "m.py", "exec"), space)
    wrapped = [
        Logged(n, a, log) if isinstance(a, (int, list)) else a
        for n, a in zip("abc", args, strict=False)
    ]
    try:
        result = space["f"](*wrapped)
    except Exception as e:  # the exception is part of the behaviour compared
        result = (type(e).__name__, str(e))
    return _plain(result), log


def _plain(x: Any) -> Any:
    if isinstance(x, Logged):
        return ("Logged", x.name, x.value)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(i) for i in x)
    return x


@pytest.mark.parametrize("name", sorted(SNIPPETS))
@pytest.mark.parametrize("args", [(1, 2, 3), (3, 2, 1), (2, 2, 2), (1, [1, 2], [3])])
def test_a_twin_evaluates_the_same_operands_in_the_same_order_with_the_same_result(
    name: str, args: tuple[Any, ...]
) -> None:
    source = SNIPPETS[name]
    other = _twinned(source)
    assert other != source or name == "boolean"
    assert _run(other, args) == _run(source, args)


def test_a_twin_changes_the_bugs_lines_text_and_bytecode_and_nothing_else() -> None:
    period = (TARGET / "ledgerlite" / "period.py").read_bytes()
    line = 1 + period.splitlines().index(b"        return self.start <= day < self.end")
    made = _twin_file("ledgerlite/period.py", period, frozenset({line}), 5)
    assert not isinstance(made, str)
    text, moved = made
    assert moved == {line}
    old, new = period.splitlines(), text.splitlines()
    assert len(old) == len(new)
    assert [i + 1 for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b] == [line]
    assert b"<" not in new[line - 1].replace(b"lambda", b"")
    assert _code(period, "contains").co_code != _code(text, "contains").co_code
    assert _code(period, "__init__").co_code == _code(text, "__init__").co_code


def _code(source: bytes, name: str) -> CodeType:
    def walk(code: CodeType) -> list[CodeType]:
        inner = [c for c in code.co_consts if isinstance(c, CodeType)]
        return [code, *(x for c in inner for x in walk(c))]

    found = [c for c in walk(compile(source, "m.py", "exec")) if c.co_name == name]
    return found[0]


def test_a_chain_in_a_class_body_keeps_its_form_and_a_twin_that_cannot_compile_falls_back() -> None:
    cls = _twinned("class K:\n    x = a < b < c\n")
    assert ":=" not in cls and "(a < b < c)" in cls  # only the identity carries it
    # an assignment expression may not stand in a comprehension's iterable: chains stay chains
    iterable = _twinned("def f(a, b):\n    return [x for x in (a < b < 3, 1)]\n")
    assert ":=" not in iterable and "(a < b < " in iterable
    compile(iterable, "m.py", "exec")


def test_a_bug_with_no_other_form_says_so_and_an_identity_carries_a_plain_line() -> None:
    assert _twin_file("m.py", b"def f():\n    pass\n", frozenset({2}), 1) == (
        "nothing on the bug's lines has another form here"
    )
    assert _twin_file("m.py", b"def f(:\n", frozenset({1}), 1) == "does not parse here"
    plain = _twinned("def f(a, b):\n    return g(b, a)\n", frozenset({2}))
    assert "return (lambda _bughunt_v: _bughunt_v)((g(b, a)))" in plain
    docstring = _twin_file("m.py", b'def f():\n    """doc"""\n', frozenset({2}), 1)
    assert docstring == "nothing on the bug's lines has another form here"
    made = twin(
        {"a.py": b"x = a < b\n", "b.txt": b"y\n"},
        BugLines({"a.py": frozenset({1}), "b.txt": frozenset({1})}),
        seed=1,
    )
    assert made.changed == {"a.py": frozenset({1})} and made.files["b.txt"] == b"y\n"
    assert made.describe()["lines"] == [["a.py", 1, 'x = __import__("operator").lt(a , b)\n']]


def test_every_module_of_the_project_twins_into_code_that_compiles_with_its_lines_in_place() -> (
    None
):
    """The splicer against real code of every shape this project has (the grammar's breadth)."""
    files = [
        p
        for top in ("bughunt", "corpus", "harness", "tasks", "flows", "benchmarks")
        for p in sorted((ROOT / top).rglob("*.py"))
    ]
    assert len(files) > 150
    for path in files:
        data = path.read_bytes()
        made = _twin_file(str(path), data, _all_lines(data), 11)
        if isinstance(made, str):
            assert made == "nothing on the bug's lines has another form here", path
            continue
        assert len(made[0].splitlines()) == len(data.splitlines()), path
        compile(made[0], str(path), "exec", dont_inherit=True)


def _pytest_failures(tree: Path) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", "tests"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "passed" in proc.stdout or "failed" in proc.stdout, proc.stdout + proc.stderr
    return {line.split()[1] for line in proc.stdout.splitlines() if line.startswith("FAILED ")}


def _write(files: dict[str, bytes], root: Path) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def _whole_twin(files: dict[str, bytes]) -> dict[str, bytes]:
    lines = {
        p: _all_lines(d)
        for p, d in files.items()
        if p.endswith(".py") and not p.startswith("tests/") and not p.endswith("__init__.py")
    }
    made = twin(files, BugLines(lines), seed=4)
    assert len(made.changed) >= 5
    return dict(made.files)


@pytest.mark.parametrize("case", [None, "cmp-period-end-inclusive", "obo-paginate-offset"])
def test_the_demo_target_every_line_twinned_passes_and_fails_the_same_tests(
    case: str | None, tmp_path: Path
) -> None:
    clean = dict(read_tree(TARGET))
    files = (
        clean
        if case is None
        else dict(
            apply_patch(TARGET, (DEMO / "cases" / case / "bug.patch").read_bytes(), file=case)
        )
    )
    before = _pytest_failures(_write(files, tmp_path / "as-is"))
    after = _pytest_failures(_write(_whole_twin(files), tmp_path / "twin"))
    assert after == before
    assert (case is None) == (not before)
    shutil.rmtree(tmp_path)


def test_a_variant_carries_its_sides_twin_and_a_text_check_fails_there() -> None:
    """The located text check: fails where ``<=`` is on the line, so on the seen buggy tree; on a
    buggy variant with the twin it passes, and the verdict holds that against the test."""
    clean = (
        b"def inside(lo, hi, x):\n    return lo <= x < hi\n\n\n"
        b"def grow(n):\n    return n + 1\n\n\ndef shrink(n):\n    return n - 1\n"
    )
    buggy = clean.replace(b"x < hi", b"x <= hi")
    bugs = {
        Tree.BUGGY: BugLines({"m.py": frozenset({2})}),
        Tree.CLEAN: BugLines({"m.py": frozenset({2})}),
    }
    scout = Trace({"m.py": frozenset({1, 2})}, None)
    plan = plan_variants({"m.py": buggy}, {"m.py": clean}, scout, seed=2, counts=(1, 1), bugs=bugs)
    assert [v.side for v in plan.variants] == [Tree.BUGGY, Tree.CLEAN]
    for variant in plan.variants:
        assert variant.twin is not None and variant.twin.changed == {"m.py": frozenset({2})}
        assert b"<=" not in variant.files["m.py"].splitlines()[1]
        assert "written otherwise" in variant.edit
        assert variant.describe()["twin"] is not None
    buggy_variant = plan.variants[0]
    line = buggy_variant.files["m.py"].splitlines()[1]
    status = Status.FAIL if b"x <= hi" in line else Status.PASS  # the text check's outcome
    observed = _on_variant(buggy_variant, status)
    outcome, reason = variants_outcome([observed])
    assert status is Status.PASS
    assert outcome is ReproOutcome.NOT_REPRODUCED and str(reason).endswith(VARIANT_REASON)
    assert ast.parse(buggy_variant.files["m.py"])


def _on_variant(variant: Variant, status: Status) -> Observation:
    return Observation(
        observation_id="twin",
        tree=variant.side,
        status=status,
        annotations={"variant": variant.describe(), "variant_site_ran": False},
    )


def test_with_no_line_left_for_a_decoy_each_side_still_gets_one_tree_it_never_saw() -> None:
    clean = b"def inside(lo, hi, x):\n    return lo <= x < hi\n"
    buggy = clean.replace(b"x < hi", b"x <= hi")
    bug = BugLines({"m.py": frozenset({2})})
    scout = Trace({"m.py": frozenset({1, 2})}, None)  # it ran every line: no decoy site
    alone = plan_variants({"m.py": buggy}, {"m.py": clean}, scout, seed=2, counts=(3, 1))
    assert alone.variants == ()
    plan = plan_variants(
        {"m.py": buggy},
        {"m.py": clean},
        scout,
        seed=2,
        counts=(3, 1),
        bugs={Tree.BUGGY: bug, Tree.CLEAN: bug},
    )
    assert [(v.side, v.lines) for v in plan.variants] == [
        (Tree.BUGGY, frozenset()),
        (Tree.CLEAN, frozenset()),
    ]
    assert "the twins of the bug's code alone" in str(plan.short)
    for variant in plan.variants:
        assert variant.files["m.py"] != (buggy if variant.side is Tree.BUGGY else clean)
        # no decoy to run: an execution that disagrees is held against the test
        assert site_ran(Trace({"m.py": frozenset({1, 2})}, None), variant) is False
