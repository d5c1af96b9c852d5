"""propose_mutants: one-line injected bugs of a Python tree, labelled as a careful reader (and tasks.classify) would."""

from __future__ import annotations

import ast
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from bughunt.models import BugCategory
from corpus._mutate import Mutant, is_test_file, mutant_key, propose_mutants
from tasks.classify import categorize
from tasks.classify.patch import parse_patch
from tasks.sandbox.trees import apply_patch, read_tree

C = BugCategory
TARGET = Path(__file__).resolve().parents[2] / "corpus" / "demo" / "target"

SAMPLE = textwrap.dedent('''\
    """A tiny module."""


    class Box:
        """Integers in a box."""

        def __init__(self, items: list[int]) -> None:
            self.items = items
            self.count = 0

        def put(self, item: int) -> None:
            if item < 0:
                raise ValueError("negative")
            self.items.append(item)
            self.count += 1

        def first(self, n: int) -> list[int]:
            return list(self.items[:n])

        def has(self, item: int) -> bool:
            return item in self.items

        def total(self) -> int:
            return sum(self.items) * 2

        def at(self, i: int) -> int:
            try:
                return self.items[i]
            except IndexError:
                return 0


    if __name__ == "__main__":
        print(Box([1, 2]).total() + 1)
''')


def _classified(patch: str) -> BugCategory:
    return categorize(parse_patch(patch)).category


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _docs_and_annotations(source: bytes) -> list[str | None]:
    """Every docstring and (dumped) annotation of a module, in tree order."""
    found: list[str | None] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(ast.get_docstring(node, clean=False))
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            found.append(ast.dump(node.annotation))
        if isinstance(node, ast.FunctionDef) and node.returns is not None:
            found.append(ast.dump(node.returns))
    return found


def _changed(patch: str) -> tuple[int, int]:
    """(removed, added) lines of a one-file patch."""
    body = patch.splitlines()[2:]
    return sum(line.startswith("-") for line in body), sum(line.startswith("+") for line in body)


@pytest.fixture(scope="module")
def demo_files() -> dict[str, bytes]:
    """The demo target's files, its tests included."""
    return read_tree(TARGET)


@pytest.fixture(scope="module")
def demo_mutants(demo_files: dict[str, bytes]) -> list[Mutant]:
    """Every mutant of the demo target, seed 0."""
    return propose_mutants(demo_files)


@pytest.fixture(scope="module")
def demo_applied(demo_mutants: list[Mutant]) -> dict[str, dict[str, bytes]]:
    """Each demo mutant's key → the demo tree with its patch applied by ``git apply``."""
    return {m.key: apply_patch(TARGET, m.patch.encode(), file=m.key) for m in demo_mutants}


@pytest.fixture(scope="module")
def sample_mutants() -> list[Mutant]:
    """Every mutant of :data:`SAMPLE`."""
    return propose_mutants({"box.py": SAMPLE.encode()})


# --- the demo target -------------------------------------------------------------------


def test_demo_gives_every_category(demo_mutants: list[Mutant]) -> None:
    """The demo target gives at least 200 mutants, some of each of the seven categories."""
    counts = Counter(m.category for m in demo_mutants)
    assert len(demo_mutants) >= 200
    assert set(counts) == set(BugCategory)
    assert min(counts.values()) >= 20


def test_demo_tests_are_never_mutated(demo_mutants: list[Mutant]) -> None:
    """No mutant touches the oracle (``tests/``) or a non-Python file."""
    assert demo_mutants
    assert all(not is_test_file(m.path) and m.path.endswith(".py") for m in demo_mutants)
    assert all(m.path.startswith("ledgerlite/") for m in demo_mutants)


def test_demo_patches_apply_to_give_the_mutated_file(
    demo_files: dict[str, bytes],
    demo_mutants: list[Mutant],
    demo_applied: dict[str, dict[str, bytes]],
) -> None:
    """Each patch applies with git apply and changes its own file only, into the keyed bytes."""
    for m in demo_mutants:
        tree = demo_applied[m.key]
        assert set(tree) == set(demo_files)
        assert [p for p in tree if tree[p] != demo_files[p]] == [m.path]
        assert mutant_key(m.path, tree[m.path]) == m.key


def test_demo_mutants_parse(
    demo_mutants: list[Mutant], demo_applied: dict[str, dict[str, bytes]]
) -> None:
    """Every mutated file is valid Python."""
    for m in demo_mutants:
        ast.parse(demo_applied[m.key][m.path])


def test_demo_patches_change_few_lines(demo_mutants: list[Mutant]) -> None:
    """One hunk per patch; most change exactly one line; none more than a guarded block."""
    sizes = [_changed(m.patch) for m in demo_mutants]
    assert all(m.patch.count("\n@@ -") == 1 for m in demo_mutants)
    assert all(1 <= max(size) <= 10 for size in sizes)
    assert sum(size == (1, 1) for size in sizes) >= 0.75 * len(sizes)


def test_demo_docstrings_and_annotations_are_untouched(
    demo_files: dict[str, bytes],
    demo_mutants: list[Mutant],
    demo_applied: dict[str, dict[str, bytes]],
) -> None:
    """A mutated file keeps every docstring and annotation of the clean one."""
    clean = {
        path: _docs_and_annotations(demo_files[path]) for path in {m.path for m in demo_mutants}
    }
    assert sum(len([x for x in found if x]) for found in clean.values()) > 50  # there are some
    for m in demo_mutants:
        assert _docs_and_annotations(demo_applied[m.key][m.path]) == clean[m.path]


def test_demo_categories_agree_with_the_classifier(demo_mutants: list[Mutant]) -> None:
    """tasks.classify gives every demo patch the category the proposer gave it."""
    disagree = [(m.operator, m.category, _classified(m.patch)) for m in demo_mutants]
    assert [d for d in disagree if d[1] != d[2]] == []


def test_same_seed_same_order_other_seed_other_order(
    demo_files: dict[str, bytes], demo_mutants: list[Mutant]
) -> None:
    """The seed sets the order only: same seed, same list; other seed, same set in another order."""
    first, again, other = (
        demo_mutants,
        propose_mutants(demo_files, seed=0),
        propose_mutants(demo_files, seed=1),
    )
    assert first == again
    assert [m.key for m in first] != [m.key for m in other]
    assert {m.key for m in first} == {m.key for m in other}


def test_keys_are_unique(demo_mutants: list[Mutant]) -> None:
    """No two mutants have the same mutated bytes."""
    assert len({m.key for m in demo_mutants}) == len(demo_mutants)


def test_categories_filter(demo_files: dict[str, bytes], demo_mutants: list[Mutant]) -> None:
    """``categories=`` keeps exactly the mutants of those categories."""
    wanted = {C.OFF_BY_ONE, C.STATE_MUTATION}
    kept = propose_mutants(demo_files, categories=wanted)
    assert kept and {m.category for m in kept} == wanted
    assert {m.key for m in kept} == {m.key for m in demo_mutants if m.category in wanted}


# --- behaviour on small inputs -----------------------------------------------------------


def test_duplicate_mutants_are_dropped() -> None:
    """Two operators giving the same bytes (either branch of ``a if c else a``) give one mutant."""
    mutants = propose_mutants({"m.py": b"def f(a, c):\n    return a if c else a\n"})
    branch = [m for m in mutants if "+    return a\n" in m.patch]
    assert len(branch) == 1


def test_unparsable_and_non_utf8_files_are_skipped() -> None:
    """A file with a syntax error or bad UTF-8 gives no mutant and no exception."""
    files = {"bad.py": b"def f(:\n    return 1 < 2\n", "latin.py": b"x = '\xe9' < 'a'\n"}
    assert propose_mutants({**files, "ok.py": SAMPLE.encode()}) == propose_mutants(
        {"ok.py": SAMPLE.encode()}
    )
    assert propose_mutants(files) == []


def test_default_exclude_is_the_test_suite() -> None:
    """Test files by the usual pytest layouts are never mutated; ``exclude=`` replaces the rule."""
    source = b"def f(a):\n    return a < 1\n"
    paths = ["tests/test_a.py", "test_b.py", "pkg/test_c.py", "conftest.py", "pkg/c_test.py"]
    assert all(is_test_file(p) for p in paths)
    assert not is_test_file("pkg/testing.py")
    assert propose_mutants(dict.fromkeys(paths, source)) == []
    mutated = propose_mutants(
        {"pkg/lib.py": source, "conftest.py": source}, exclude=lambda p: p.startswith("pkg/")
    )
    assert {m.path for m in mutated} == {"conftest.py"}


def test_classify_hook_relabels() -> None:
    """``classify=`` replaces each category, and ``categories=`` filters by the new one."""
    files = {"box.py": SAMPLE.encode()}
    relabelled = propose_mutants(files, classify=lambda _patch: C.OTHER)
    assert relabelled and {m.category for m in relabelled} == {C.OTHER}
    assert propose_mutants(files, classify=lambda _patch: C.OTHER, categories={C.OFF_BY_ONE}) == []


def test_main_guard_docstrings_and_annotations_are_untouched(sample_mutants: list[Mutant]) -> None:
    """Nothing in the ``__main__`` block, a docstring or an annotation is mutated."""
    main_line = SAMPLE.splitlines().index('if __name__ == "__main__":') + 1
    assert sample_mutants
    assert all(m.line < main_line for m in sample_mutants)
    for m in sample_mutants:
        removed = [line for line in m.patch.splitlines()[2:] if line.startswith("-")]
        assert not any('"""' in line or "->" in line or ": int" in line for line in removed)


def test_sample_categories_agree_with_the_classifier(sample_mutants: list[Mutant]) -> None:
    """The small module's mutants are labelled as tasks.classify labels them, all seven present."""
    assert {m.category for m in sample_mutants} == set(BugCategory)
    assert all(_classified(m.patch) == m.category for m in sample_mutants)


@pytest.mark.parametrize(
    ("source", "operator", "removed", "added"),
    [
        (
            "def f(a):\n    return ('', False, a)\n",
            "string constant",
            "return ('', False, a)",
            None,
        ),
        ("def f():\n    return ('', 0)\n", "string constant", "return ('', 0)", "return ('XX', 0)"),
        ("def f():\n    yield 'a'\n", "string constant", "yield 'a'", "yield ''"),
        (
            "def f(r):\n    return -2 if r == -1 else r\n",
            "x if c else y -> else branch",
            "return -2 if r == -1 else r",
            "return r",
        ),
    ],
    ids=["string-in-returned-tuple-with-a-name", "returned-literal", "yield", "same-names-branch"],
)
def test_returned_values_are_labelled_by_what_they_hand_back(
    source: str, operator: str, removed: str, added: str | None
) -> None:
    """Returned or yielded literals and conditionals cut to a branch are return_value; not a string beside a name."""
    mutants = [m for m in propose_mutants({"m.py": source.encode()}) if m.operator == operator]
    mutant = next(m for m in mutants if f"-    {removed}\n" in m.patch)
    if added is None:
        assert mutant.category is C.OTHER
    else:
        assert f"+    {added}\n" in mutant.patch
        assert mutant.category is C.RETURN_VALUE
    assert _classified(mutant.patch) is mutant.category


def test_no_trailing_newline(tmp_path: Path) -> None:
    """A file without a final newline gets a patch git apply accepts."""
    source = "def f(a):\n    return a < 1"
    mutants = propose_mutants({"m.py": source.encode()})
    swap = next(m for m in mutants if m.operator == "< -> <=")
    assert swap.patch.endswith("+    return a <= 1\n\\ No newline at end of file\n")
    tree = apply_patch(_tree(tmp_path, {"m.py": source}), swap.patch.encode(), file="m")
    assert tree["m.py"] == b"def f(a):\n    return a <= 1"


# --- one example per category, with its exact diff ------------------------------------------

# A blank context line (one space) is written ``~``: the space would not survive editors.

EXAMPLES = {
    C.COMPARISON_OPERATOR: (
        "< -> <=",
        12,
        """\
        @@ -9,7 +9,7 @@
                 self.count = 0
        ~
             def put(self, item: int) -> None:
        -        if item < 0:
        +        if item <= 0:
                     raise ValueError("negative")
                 self.items.append(item)
                 self.count += 1
        """,
    ),
    C.OFF_BY_ONE: (
        "n -> n + 1",
        18,
        """\
        @@ -15,7 +15,7 @@
                 self.count += 1
        ~
             def first(self, n: int) -> list[int]:
        -        return list(self.items[:n])
        +        return list(self.items[:n + 1])
        ~
             def has(self, item: int) -> bool:
                 return item in self.items
        """,
    ),
    C.CONDITION_REMOVED: (
        "drop if-raise guard",
        12,
        """\
        @@ -9,8 +9,6 @@
                 self.count = 0
        ~
             def put(self, item: int) -> None:
        -        if item < 0:
        -            raise ValueError("negative")
                 self.items.append(item)
                 self.count += 1
        ~
        """,
    ),
    C.EXCEPTION_HANDLING: (
        "except IndexError -> KeyError",
        29,
        """\
        @@ -26,7 +26,7 @@
             def at(self, i: int) -> int:
                 try:
                     return self.items[i]
        -        except IndexError:
        +        except KeyError:
                     return 0
        ~
        ~
        """,
    ),
    C.RETURN_VALUE: (
        "return x -> return None",
        21,
        """\
        @@ -18,7 +18,7 @@
                 return list(self.items[:n])
        ~
             def has(self, item: int) -> bool:
        -        return item in self.items
        +        return None
        ~
             def total(self) -> int:
                 return sum(self.items) * 2
        """,
    ),
    C.STATE_MUTATION: (
        "+= -> =",
        15,
        """\
        @@ -12,7 +12,7 @@
                 if item < 0:
                     raise ValueError("negative")
                 self.items.append(item)
        -        self.count += 1
        +        self.count = 1
        ~
             def first(self, n: int) -> list[int]:
                 return list(self.items[:n])
        """,
    ),
    C.OTHER: (
        "* -> //",
        24,
        """\
        @@ -21,7 +21,7 @@
                 return item in self.items
        ~
             def total(self) -> int:
        -        return sum(self.items) * 2
        +        return sum(self.items) // 2
        ~
             def at(self, i: int) -> int:
                 try:
        """,
    ),
}


@pytest.mark.parametrize("category", list(EXAMPLES))
def test_example_per_category(
    category: BugCategory, sample_mutants: list[Mutant], tmp_path: Path
) -> None:
    """Each category's example mutant of the small module has this exact diff, and applies."""
    operator, line, hunk = EXAMPLES[category]
    (mutant,) = [m for m in sample_mutants if m.operator == operator and m.line == line]
    lines = textwrap.dedent(hunk).splitlines(keepends=True)
    expected = "--- a/box.py\n+++ b/box.py\n" + "".join(" \n" if x == "~\n" else x for x in lines)
    assert mutant.patch == expected
    assert mutant.category is category is _classified(mutant.patch)
    tree = apply_patch(_tree(tmp_path, {"box.py": SAMPLE}), mutant.patch.encode(), file="box")
    assert mutant.key == mutant_key("box.py", tree["box.py"])
