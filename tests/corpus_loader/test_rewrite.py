"""rewrite_tree / rewrite_source: deterministic, behaviour-preserving rewrites of a source tree."""

from __future__ import annotations

import ast
import hashlib
import inspect
import os
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from corpus import _rewrite
from corpus._rewrite import (
    FileMemo,
    RewrittenTree,
    rewrite_module,
    rewrite_source,
    rewrite_tree,
)

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "corpus" / "demo"
TARGET = DEMO / "target"
SEEDS = (0, 1, 20240607)
RUN_SEEDS = (1, 20240607)  # each costs a run of the demo's test suite
# Two kinds of injected bug: a comparison operator (period.py), a state slip (account.py).
BUG_CASES = ("cmp-period-end-inclusive", "state-entries-alias")


def _snippet(text: str) -> str:
    return textwrap.dedent(text).lstrip()


# name -> (module source, expressions evaluated after exec'ing it)
SNIPPETS: dict[str, tuple[str, list[str]]] = {
    "closure": (
        _snippet("""
            def make_counter(start):
                count = start
                def bump(step=1):
                    nonlocal count
                    before = count
                    count += step
                    return before, count
                return bump

            def use():
                bump = make_counter(10)
                bump()
                return bump(5)
        """),
        ["use()", "make_counter(1)(2)"],
    ),
    "global": (
        _snippet("""
            TOTAL = 0

            def add(n):
                global TOTAL
                TOTAL += n
                doubled = TOTAL * 2
                return doubled

            def run():
                add(3)
                return add(4), TOTAL
        """),
        ["run()"],
    ),
    "locals_eval": (
        _snippet("""
            def describe(a):
                label = "value"
                doubled = a * 2
                return "{label}={doubled}".format(**locals())

            def evaluate(a):
                factor = 3
                return eval("a * factor")

            def names():
                first = 1
                second = first + 1
                return sorted(dir()), second
        """),
        ["describe(4)", "evaluate(5)", "names()"],
    ),
    "defaults_name_functions": (
        _snippet("""
            import itertools

            _ids = itertools.count()

            def base():
                return 1

            def uses_default(x=base):
                return x() + 1

            def annotated(x: base = None) -> base:
                return x

            MARK = "a non-def statement ends the run above"

            def first(x=next(_ids)):
                return x

            def second(x=next(_ids)):
                return x
        """),
        ["uses_default()", "annotated()", "first()", "second()"],
    ),
    "decorators": (
        _snippet("""
            registry = []

            def register(fn):
                registry.append(fn.__name__)
                return fn

            @register
            def alpha():
                return 1

            @register
            def beta():
                return 2

            @register
            def gamma():
                return 3

            def order():
                return list(registry)
        """),
        ["order()", "alpha() + beta() + gamma()"],
    ),
    "properties": (
        _snippet("""
            class Box:
                def __init__(self, v):
                    self._v = v

                @property
                def value(self):
                    doubled = self._v * 2
                    return doubled

                @value.setter
                def value(self, new):
                    checked = int(new)
                    self._v = checked

                def area(self):
                    side = self.value
                    return side * side

            def run():
                box = Box(3)
                before = box.area()
                box.value = "4"
                return before, box.value, box.area()
        """),
        ["run()"],
    ),
    "duplicate_names": (
        _snippet("""
            def pick():
                return "first"

            def other():
                return "other"

            def pick():
                return "second"

            class Twice:
                def go(self):
                    return 1

                def go(self):
                    return 2
        """),
        ["pick()", "other()", "Twice().go()"],
    ),
    "comprehensions": (
        _snippet("""
            def comp(data):
                total = 0
                squares = [x * x for x in data if x > total]
                total = sum(squares)
                pairs = {k: v for k, v in zip(data, squares)}
                gen = list(y + total for y in data)
                x = max(data)
                shadow = [x for x in range(3)]
                nested = [[x + total for x in row] for row in [data, squares]]
                labels = [str(len) for len in data]
                count = len(labels)
                return squares, total, pairs, gen, x, shadow, nested, count
        """),
        ["comp([1, 2, 3])", "comp([0, -1])"],
    ),
    "walrus": (
        _snippet("""
            def walrus(data):
                if (n := len(data)) > 2:
                    big = [y for v in data if (y := v * 2) > 2]
                    return n, big, y
                return n
        """),
        ["walrus([1, 2, 3])", "walrus([1])"],
    ),
    "try_except_as": (
        _snippet("""
            def safe_div(a, b):
                log = []
                try:
                    result = a / b
                except ZeroDivisionError as err:
                    message = str(err)
                    log.append(message)
                    result = None
                else:
                    log.append("ok")
                finally:
                    log.append("done")
                return result, log

            def unbound():
                try:
                    value = later
                except UnboundLocalError:
                    value = "unbound"
                later = 1
                return value, later
        """),
        ["safe_div(1, 2)", "safe_div(1, 0)", "unbound()"],
    ),
    "with_as": (
        _snippet("""
            import contextlib
            import io

            def with_as():
                with contextlib.nullcontext(5) as value, io.StringIO() as buf:
                    buf.write(str(value))
                    text = buf.getvalue()
                return text, value
        """),
        ["with_as()"],
    ),
    "f_strings": (
        _snippet("""
            def fmt(amount, width=8):
                sign = "-" if amount < 0 else "+"
                body = f"{sign}{abs(amount):>{width}.2f}"
                debug = f"{sign=} {width=}"
                quoted = f"{body!r} {'a' if amount else 'b'}"
                return body, debug, quoted
        """),
        ["fmt(3.5)", "fmt(-2, 4)", "fmt(0)"],
    ),
    "async_functions": (
        _snippet("""
            async def agen(n):
                for i in range(n):
                    yield i

            async def consume(n):
                total = 0
                async for item in agen(n):
                    total += item
                return total

            async def twice(n):
                first = await consume(n)
                return first * 2

            def run(n):
                coro = twice(n)
                try:
                    coro.send(None)
                except StopIteration as stop:
                    return stop.value
        """),
        ["run(5)"],
    ),
    "class_methods": (
        _snippet("""
            class Base:
                def greet(self):
                    word = "base"
                    return word

            class Child(Base):
                def greet(self):
                    parent = super().greet()
                    return parent + "+child"

                def helper(self):
                    return 1

                def other(self):
                    step = self.helper()
                    return step + 1

                @classmethod
                def make(cls):
                    made = cls()
                    return type(made).__name__

                @staticmethod
                def twice(x):
                    y = x * 2
                    return y

            def run():
                child = Child()
                return child.greet(), child.other(), Child.make(), Child.twice(4)
        """),
        ["run()"],
    ),
    "doc_used": (
        _snippet('''
            """Module doc."""

            def documented():
                """Function doc."""
                return documented.__doc__

            class Kind:
                """Class doc."""

            def doc():
                return Kind.__doc__, __doc__
        '''),
        ["documented()", "doc()"],
    ),
    "imports_and_match": (
        _snippet("""
            def imports():
                import os.path
                import json as js
                from math import sqrt
                from collections import OrderedDict as OD
                return os.path.join("a", "b"), js.dumps([1]), sqrt(16), list(OD(a=1))

            def classify(point):
                match point:
                    case (0, 0):
                        label = "origin"
                    case (x, 0):
                        label = f"x={x}"
                    case {"k": value, **rest}:
                        rest = sorted(rest)
                        label = str(value) + str(rest)
                    case [first, *others]:
                        first = first * 2
                        others = others[::-1]
                        label = str(first) + str(others)
                    case _:
                        label = "other"
                return label
        """),
        [
            "imports()",
            "classify((0, 0))",
            "classify((3, 0))",
            "classify({'k': 1, 'z': 2})",
            "classify([1, 2, 3])",
            "classify('s')",
        ],
    ),
    "lambdas": (
        _snippet("""
            def ranked(data):
                order = sorted(range(len(data)), key=lambda i: (-data[i], i))
                out = []
                for i in order:
                    out.append(data[i])
                scale = 10
                scaled = list(map(lambda v: v * scale, out))
                return out, scaled
        """),
        ["ranked([3, 1, 2, 3])"],
    ),
    "frames": (
        _snippet("""
            import sys

            def caller_locals():
                return dict(sys._getframe(1).f_locals)

            def uses_helper():
                token = 5
                return caller_locals()["token"]

            def hidden():
                __tracebackhide__ = True
                flag = 1
                return any(k.endswith("hide__") for k in caller_locals()), flag

            def own_frame():
                marker = 1
                return sorted(sys._getframe().f_locals), marker

            level = "module"

            def lambda_walrus():
                get = lambda: (level := "lambda")
                return get(), level
        """),
        ["uses_helper()", "hidden()", "own_frame()", "lambda_walrus()"],
    ),
    "generators_and_nested_class": (
        _snippet("""
            def gen(n):
                acc = 0
                for i in range(n):
                    acc += i
                    received = yield acc
                    if received:
                        acc = received
                del i
                return acc

            def drive():
                it = gen(4)
                out = [next(it), it.send(10), next(it)]
                return out

            def factory():
                size = 3
                class Local:
                    size = 5
                    def get(self):
                        return size
                return Local.size, Local().get()
        """),
        ["drive()", "factory()"],
    ),
}


def _outcome(ns: dict[str, Any], expr: str) -> str:
    try:
        return repr(eval(expr, ns))
    except Exception as exc:
        return f"raises {type(exc).__name__}"


def _shape(ns: dict[str, Any]) -> dict[str, str]:
    """Every public module name, with each function's signature and each class's attributes."""
    shape = {}
    for name, value in ns.items():
        if name.startswith("__"):
            continue
        if inspect.isclass(value):
            shape[name] = repr(sorted(vars(value)))
        elif inspect.isfunction(value):
            shape[name] = re.sub(r" at 0x[0-9a-f]+", "", str(inspect.signature(value)))
        else:
            shape[name] = type(value).__name__
    return shape


def _behaviour(source: str, calls: list[str]) -> tuple[dict[str, str], list[str]]:
    """Exec ``source`` in a fresh namespace; its shape and the outcome of each call."""
    ns: dict[str, Any] = {"__name__": "snippet"}
    exec(compile(source, "<snippet>", "exec"), ns)
    return _shape(ns), [_outcome(ns, expr) for expr in calls]


def _read_tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and ".pytest_cache" not in p.parts
    }


def _write_tree(files: Mapping[str, bytes], root: Path) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def _failing_tests(tree: Path, tmp_path: Path) -> set[str]:
    """Run the target's own tests in ``tree``; the ids of those that did not pass."""
    report = tmp_path / f"{tree.name}.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env |= {"PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}"],
        cwd=tree,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    cases = ET.parse(report).getroot().iter("testcase")
    return {
        f"{case.get('classname')}::{case.get('name')}"
        for case in cases
        if case.find("failure") is not None or case.find("error") is not None
    }


@pytest.fixture(scope="module")
def demo_files() -> dict[str, bytes]:
    """The demo target tree as path -> bytes."""
    return _read_tree(TARGET)


def test_same_seed_gives_same_tree(demo_files: dict[str, bytes]) -> None:
    """Rewriting the same files with the same seed twice gives identical bytes and digest."""
    assert rewrite_tree(demo_files, 7) == rewrite_tree(dict(demo_files), 7)


def test_a_shared_memo_rewrites_common_files_once_and_changes_no_byte(
    demo_files: dict[str, bytes],
) -> None:
    """Two trees that differ in one file, through one memo: each tree as alone; one entry a file."""
    py = sorted(p for p in demo_files if p.endswith(".py"))
    changed = {**demo_files, py[0]: demo_files[py[0]] + b"\nX = 1\n"}
    memo: FileMemo = {}
    together = (rewrite_tree(demo_files, 7, memo=memo), rewrite_tree(changed, 7, memo=memo))
    assert together == (rewrite_tree(demo_files, 7), rewrite_tree(changed, 7))
    assert len(memo) == len(py) + 1


def test_threads_rewriting_at_once_get_what_one_thread_gets(
    demo_files: dict[str, bytes],
) -> None:
    """Four threads, each from another stack depth, rewrite modules at once.

    CPython 3.11 shares the AST converter's depth counter between threads and
    seeds it from the caller's stack depth; a thread switch inside a parse (here
    forced by a garbage collection that sleeps) fails the other parse with a
    SystemError unless parses take turns.
    """
    import gc
    import time
    from concurrent.futures import ThreadPoolExecutor

    sources = [v.decode() for p, v in sorted(demo_files.items()) if p.endswith(".py")]
    source = max(sources, key=len)
    alone = rewrite_source(source, 3)

    def at_depth(n: int) -> str:
        return at_depth(n - 1) if n else rewrite_source(source, 3)

    def yield_gil(_phase: str, _info: dict[str, int]) -> None:
        time.sleep(0)

    gc.callbacks.append(yield_gil)
    try:
        with ThreadPoolExecutor(4) as pool:
            together = list(pool.map(lambda i: at_depth(i % 7 * 5), range(80)))
    finally:
        gc.callbacks.remove(yield_gil)
    assert together == [alone] * 80


def test_rewrite_does_not_depend_on_hash_seed(demo_files: dict[str, bytes]) -> None:
    """A process with another PYTHONHASHSEED produces the same digest."""
    script = (
        "import sys; from pathlib import Path; from corpus._rewrite import rewrite_tree; "
        "root = Path(sys.argv[1]); "
        "files = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob('*'))"
        " if p.is_file() and not {'__pycache__', '.pytest_cache'} & set(p.parts)}; "
        "print(rewrite_tree(files, 7).digest)"
    )
    other = subprocess.run(
        [sys.executable, "-c", script, str(TARGET)],
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": "12345"},  # this process's is random
        capture_output=True,
        text=True,
        check=True,
    )
    assert other.stdout.strip() == rewrite_tree(demo_files, 7).digest


def test_different_seeds_give_different_modules(demo_files: dict[str, bytes]) -> None:
    """Each ledgerlite module gets different bytes under each of several seeds."""
    trees = [rewrite_tree(demo_files, seed) for seed in range(4)]
    assert len({t.digest for t in trees}) == len(trees)
    for path in demo_files:
        if path.startswith("ledgerlite/"):
            assert len({t.files[path] for t in trees}) == len(trees), path


def test_digest_covers_paths_and_contents() -> None:
    """The digest changes when a file's content or its path changes, and only then."""
    base = {"a.txt": b"x", "b.txt": b"y"}
    assert rewrite_tree(base, 0).digest == rewrite_tree(dict(reversed(base.items())), 0).digest
    assert rewrite_tree(base, 0).digest != rewrite_tree({"a.txt": b"x", "b.txt": b"z"}, 0).digest
    assert rewrite_tree(base, 0).digest != rewrite_tree({"a.txt": b"x", "c.txt": b"y"}, 0).digest


def test_non_python_files_are_unchanged(demo_files: dict[str, bytes]) -> None:
    """Files not ending in .py come back byte-for-byte, and the keys are the input's."""
    tree = rewrite_tree(demo_files, 3)
    assert list(tree.files) == list(demo_files)
    for path, data in demo_files.items():
        if not path.endswith(".py"):
            assert tree.files[path] == data
            assert path not in tree.rewritten


def test_exclude_is_respected(demo_files: dict[str, bytes]) -> None:
    """An excluded .py file is unchanged and listed in kept as excluded."""
    tree = rewrite_tree(demo_files, 3, exclude={"ledgerlite/money.py"})
    assert tree.files["ledgerlite/money.py"] == demo_files["ledgerlite/money.py"]
    assert ("ledgerlite/money.py", "excluded") in tree.kept
    assert "ledgerlite/money.py" not in tree.rewritten
    assert "ledgerlite/period.py" in tree.rewritten


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"def broken(:\n    pass\n", "does not parse: "),
        (b"x = 1\x00\n", "does not parse: "),
        (b"name = '\xe9t\xe9'\n", "not UTF-8: "),
        (b"# -*- coding: latin-1 -*-\nname = '\xc3\xa9'\n", "not UTF-8: declares"),
        (b"nonlocal x\n", "could not be rewritten safely"),
        (b"", "nothing to rewrite"),
    ],
    ids=["syntax-error", "null-byte", "latin-1-bytes", "latin-1-cookie", "no-compile", "empty"],
)
def test_unrewritable_file_is_kept_with_reason(data: bytes, reason: str) -> None:
    """A .py file that cannot be rewritten is unchanged and listed in kept with its reason."""
    tree = rewrite_tree({"m.py": data, "ok.py": b"def f():\n    x = 1\n    return x\n"}, 0)
    assert tree.files["m.py"] == data
    [(path, why)] = tree.kept
    assert path == "m.py" and why.startswith(reason)
    assert tree.rewritten == ("ok.py",)


def test_rewrite_source_raises_syntax_error() -> None:
    """rewrite_source raises SyntaxError for a module that does not parse."""
    with pytest.raises(SyntaxError):
        rewrite_source("def broken(:\n", 0)


@settings(max_examples=40, deadline=None)
@given(
    files=st.dictionaries(
        st.builds(
            "{}.{}".format,
            st.text("abc/", min_size=1, max_size=6),
            st.sampled_from(["py", "txt", "pyc", "ini"]),
        ),
        st.one_of(
            st.binary(max_size=40),
            st.sampled_from([s.encode() for s, _ in SNIPPETS.values()]),
        ),
        max_size=6,
    ),
    seed=st.integers(),
)
def test_tree_invariants(files: dict[str, bytes], seed: int) -> None:
    """Same keys; non-.py bytes kept; each .py path either rewritten or kept; output parses."""
    tree = rewrite_tree(files, seed)
    assert list(tree.files) == list(files)
    python = sorted(p for p in files if p.endswith(".py"))
    assert sorted([*tree.rewritten, *(p for p, _ in tree.kept)]) == python
    for path, data in files.items():
        if path in tree.rewritten:
            ast.parse(tree.files[path])
        else:
            assert tree.files[path] == data


@pytest.mark.parametrize("name", sorted(SNIPPETS))
@settings(max_examples=15, deadline=None)
@given(seed=st.integers())
def test_snippet_behaviour_is_preserved(name: str, seed: int) -> None:
    """Exec'ing the rewritten snippet gives the same names, signatures and call results."""
    source, calls = SNIPPETS[name]
    assert _behaviour(rewrite_source(source, seed), calls) == _behaviour(source, calls)


def test_locals_are_renamed() -> None:
    """Locals of an ordinary function get fresh _l names; parameters keep theirs."""
    out = rewrite_source(SNIPPETS["comprehensions"][0], 1)
    assert "def comp(data):" in out
    for name in ("total", "squares", "pairs", "shadow"):
        assert name not in out
    assert out.count("_l") >= 4


def test_functions_reading_names_are_not_renamed() -> None:
    """Functions calling locals(), eval() or dir() keep every local name."""
    out = rewrite_source(SNIPPETS["locals_eval"][0], 1)
    for name in ("label", "doubled", "factor", "first", "second"):
        assert f"{name} =" in out


def test_functions_with_nested_scopes_are_skipped() -> None:
    """An enclosing function keeps its locals; the reason names the nested scope."""
    result = rewrite_module(SNIPPETS["closure"][0], 1, "m.py", keep_docs=False)
    assert "count = start" in result.text
    reasons = {s.name: s.reason for s in result.skipped}
    assert reasons == {"make_counter": "contains a nested function or class"}


def test_dependent_and_decorated_defs_keep_their_order() -> None:
    """Defs whose defaults name a run member or call something, and decorated defs, stay put."""
    for key in ("defaults_name_functions", "decorators", "duplicate_names"):
        source = SNIPPETS[key][0]
        order = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
        for seed in range(10):
            tree = ast.parse(rewrite_source(source, seed))
            assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == order


def _def_names(stmts: list[ast.stmt]) -> list[str]:
    """The names of statements that are all top-level defs."""
    names = []
    for n in stmts:
        assert isinstance(n, ast.FunctionDef), ast.dump(n)
        names.append(n.name)
    return names


def test_independent_defs_are_shuffled() -> None:
    """A run of plain top-level defs comes out in more than one order across seeds."""
    source = "".join(f"def f{i}(x=1):\n    return x + {i}\n" for i in range(6))
    orders = {
        tuple(_def_names(ast.parse(rewrite_source(source, seed)).body[:6])) for seed in range(5)
    }
    assert len(orders) > 1


def test_decorated_def_stays_between_shuffled_runs() -> None:
    """A decorated def keeps its index; the plain defs shuffle only on their own side of it."""
    plain = "".join(f"def {n}():\n    return {i}\n" for i, n in enumerate(["a0", "a1", "a2"]))
    after = plain.replace("a", "b")
    source = f"{plain}@staticmethod\ndef mid():\n    return 9\n{after}"
    orders = set()
    for seed in range(8):
        names = _def_names(ast.parse(rewrite_source(source, seed)).body[:7])
        assert names[3] == "mid"
        assert sorted(names[:3]) == ["a0", "a1", "a2"] and sorted(names[4:]) == ["b0", "b1", "b2"]
        orders.add(tuple(names))
    assert len(orders) > 1


def test_docstrings_are_removed_unless_read() -> None:
    """Docstrings go (an emptied body becomes pass) unless the module mentions __doc__."""
    source = '"""Mod."""\nclass K:\n    """Doc."""\ndef f():\n    """Doc."""\n    return 1\n'
    out = rewrite_source(source, 0)
    assert "Doc." not in out and "Mod." not in out
    assert "class K:\n    pass" in out
    kept = rewrite_source(SNIPPETS["doc_used"][0], 0)
    assert all(doc in kept for doc in ("Module doc.", "Function doc.", "Class doc."))


def test_doctest_anywhere_in_tree_keeps_docstrings() -> None:
    """A config file enabling doctests keeps the docstrings of every module."""
    files = {"m.py": b'def f():\n    """>>> f()\n    1\n    """\n    return 1\n'}
    assert b">>> f()" not in rewrite_tree(files, 0).files["m.py"]
    files["pytest.ini"] = b"[pytest]\naddopts = --doctest-modules\n"
    assert b">>> f()" in rewrite_tree(files, 0).files["m.py"]


def test_failed_plan_falls_back_to_a_milder_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """When renaming yields invalid code, the module is still rewritten without renaming."""

    def broken_rename(tree: ast.Module, *_: object) -> tuple[()]:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == "squares":
                node.id = "1bad"
        return ()

    monkeypatch.setattr(_rewrite, "rename_locals", broken_rename)
    out = rewrite_source(SNIPPETS["comprehensions"][0], 0)
    assert "squares = [" in out and "1bad" not in out


def test_demo_skips_no_function(demo_files: dict[str, bytes]) -> None:
    """Every function of the demo package has its locals considered for renaming."""
    for path, data in demo_files.items():
        if path.endswith(".py"):
            assert rewrite_module(data.decode(), 0, path, keep_docs=False).skipped == ()


def test_fingerprint_of_buggy_module_changes(demo_files: dict[str, bytes]) -> None:
    """A sha256 fingerprint of each ledgerlite module no longer matches after rewriting."""
    for seed in SEEDS:
        tree: RewrittenTree = rewrite_tree(demo_files, seed)
        for path, data in demo_files.items():
            if path.startswith("ledgerlite/"):
                before = hashlib.sha256(data).hexdigest()
                assert hashlib.sha256(tree.files[path]).hexdigest() != before


@pytest.mark.slow
@pytest.mark.parametrize("seed", RUN_SEEDS)
def test_demo_tests_pass_on_rewritten_target(
    demo_files: dict[str, bytes], seed: int, tmp_path: Path
) -> None:
    """The demo's own test suite passes on the rewritten clean tree; every module changed."""
    tree = rewrite_tree(demo_files, seed)
    assert tree.kept == ()
    assert {p for p in demo_files if p.startswith("ledgerlite/")} <= set(tree.rewritten)
    assert _failing_tests(_write_tree(tree.files, tmp_path / "clean"), tmp_path) == set()


@pytest.mark.slow
@pytest.mark.parametrize("case", BUG_CASES)
def test_injected_bug_fails_the_same_tests_after_rewrite(case: str, tmp_path: Path) -> None:
    """The rewritten buggy tree fails exactly the tests the original buggy tree fails."""
    buggy = tmp_path / "buggy"
    shutil.copytree(TARGET, buggy, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    patch = DEMO / "cases" / case / "bug.patch"
    subprocess.run(["git", "apply", str(patch)], cwd=buggy, check=True, capture_output=True)
    expected = _failing_tests(buggy, tmp_path)
    assert expected, "the injected bug must fail some test"
    rewritten = rewrite_tree(_read_tree(buggy), SEEDS[2])
    assert rewritten.kept == ()
    assert (
        _failing_tests(_write_tree(rewritten.files, tmp_path / "rewritten"), tmp_path) == expected
    )
