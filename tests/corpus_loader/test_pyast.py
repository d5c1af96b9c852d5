"""corpus._pyast: the tree comparison the rewrite checks itself with agrees with ``ast.dump``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from corpus._pyast import compile_tree, parse, same_tree
from corpus._rewrite import rewrite_source

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "corpus" / "demo" / "target").rglob("*.py"))

# Pairs whose dumps differ although a looser comparison would call them alike.
DIFFERENT = [
    ("x = 1", "x = True"),  # 1 == True, but not their reprs
    ("x = 0.0", "x = -0.0"),
    ("x = 1", "x = 1.0"),
    ("f(a, b)", "f(b, a)"),
    ("f(a)", "f(a, )\ng"),
    ("def f(): pass", "async def f(): pass"),
    ("x: int", "x: int = 0"),
    ("import a", "import a as b"),
    ("u'x'", "'x'"),  # Constant.kind
    ("return_ = 1", "return_ = [1]"),
]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_a_module_and_its_rewrites_compare_as_dump_does(path: Path) -> None:
    """A module against itself reparsed (same), and against its rewrites (each as dump says)."""
    source = path.read_text()
    tree = parse(source)
    assert same_tree(tree, parse(source))
    for seed in (0, 1, 7):
        other = parse(rewrite_source(source, seed))
        assert same_tree(tree, other) is (ast.dump(tree) == ast.dump(other))
        assert same_tree(other, parse(ast.unparse(other)))


@pytest.mark.parametrize(("left", "right"), DIFFERENT)
def test_trees_dump_tells_apart_are_told_apart(left: str, right: str) -> None:
    a, b = parse(left), parse(right)
    assert ast.dump(a) != ast.dump(b)
    assert not same_tree(a, b) and not same_tree(b, a)


def test_positions_are_not_compared_and_a_none_field_is_an_absent_one() -> None:
    """As ``ast.dump`` (without attributes): line numbers differ, the trees are the same; a
    field left unset is the field set to its default None."""
    assert same_tree(parse("x = 1"), parse("\n\n   \nx = 1"))
    bare = ast.Return()
    assert same_tree(bare, ast.Return(value=None))
    assert ast.dump(bare) == ast.dump(ast.Return(value=None))
    assert not same_tree(bare, ast.Return(value=ast.Constant(1)))


def test_compile_tree_reports_what_compiling_the_text_does() -> None:
    """The compiler's own errors (not the parser's) come from the tree as from the text."""
    text = "nonlocal x\n"
    with pytest.raises(SyntaxError) as from_text:
        compile(text, "m.py", "exec", dont_inherit=True)
    with pytest.raises(SyntaxError) as from_tree:
        compile_tree(parse(text, "m.py"), "m.py")
    assert from_tree.value.msg == from_text.value.msg
    assert compile_tree(parse("x = 1\n"), "m.py").co_filename == "m.py"
