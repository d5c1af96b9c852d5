"""Renaming of function-local variables, the one rewrite that needs scope analysis.

A name is renamed only where the rename is a pure alpha-conversion: it is bound
in the function's own body, every occurrence in that body (comprehensions and
lambdas included) refers to the same local, and nothing can look it up by its
text. Anything that makes this doubtful drops the name, or skips the function.
"""

from __future__ import annotations

import ast
import random
import re
from dataclasses import dataclass

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# Calls that read or write locals by their text.
_NAME_READERS = frozenset({"locals", "vars", "eval", "exec", "globals"})
# Frame access lets a function (or its callees) read locals by their text.
_FRAME_WORDS = frozenset(
    {"_getframe", "currentframe", "f_locals", "getouterframes", "getinnerframes", "getargvalues"}
)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class SkippedFunction:
    """A function whose locals were left alone, and why."""

    name: str
    line: int
    reason: str


def rename_locals(
    tree: ast.Module, rng: random.Random, taken: set[str]
) -> tuple[SkippedFunction, ...]:
    """Rename the locals of every safe function in ``tree`` in place.

    New names are ``_l`` plus six hex digits drawn from ``rng``, never one of
    ``taken`` (which gains each new name). Functions are visited in
    ``ast.walk`` order and names in sorted order, so the result depends only on
    the tree and the RNG state. Returns the functions that were skipped.
    """
    skipped: list[SkippedFunction] = []
    for node in ast.walk(tree):
        if not isinstance(node, _FUNCTIONS):
            continue
        inner = [n for stmt in node.body for n in ast.walk(stmt)]
        reason = _skip_reason(inner)
        if reason is not None:
            skipped.append(SkippedFunction(node.name, node.lineno, reason))
            continue
        names = sorted(_bound_names(inner) - _unsafe_names(node, inner))
        _apply(inner, {name: _fresh_name(rng, taken) for name in names})
    return tuple(skipped)


def _skip_reason(inner: list[ast.AST]) -> str | None:
    for node in inner:
        if isinstance(node, _SCOPES):
            return "contains a nested function or class"
        if isinstance(node, ast.Lambda) and any(
            isinstance(n, ast.NamedExpr) for n in ast.walk(node.body)
        ):
            return "a lambda binds a name with :="
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
            [called] = _identifiers(node.func)
            if called in _NAME_READERS or (called == "dir" and not node.args):
                return f"calls {called}()"
        words = _FRAME_WORDS.intersection(_identifiers(node))
        if words:
            return f"inspects frames ({min(words)})"
    return None


def _bound_names(inner: list[ast.AST]) -> set[str]:
    """Names the function body binds in its own scope (not comprehension targets)."""
    # A comprehension's targets are its own; a := inside it binds in the function.
    targets = {
        id(n)
        for node in inner
        if isinstance(node, ast.comprehension)
        for n in ast.walk(node.target)
    }
    bound: set[str] = set()
    for node in inner:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            if id(node) not in targets:
                bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name is not None:
            bound.add(node.name)
        elif isinstance(node, ast.alias) and node.name != "*":
            bound.add(node.asname or node.name.partition(".")[0])
    # Dunders keep their text: tools read them from frames (pytest's __tracebackhide__).
    return {n for n in bound if not (n.startswith("__") and n.endswith("__"))}


def _unsafe_names(fn: ast.FunctionDef | ast.AsyncFunctionDef, inner: list[ast.AST]) -> set[str]:
    """Names that must keep their text: parameters, declared, captured, or spelled out."""
    args = fn.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    unsafe = {a.arg for a in params if a is not None}
    for node in inner:
        if isinstance(node, ast.Global | ast.Nonlocal):
            unsafe.update(node.names)
        elif isinstance(node, ast.Lambda):
            unsafe.update(a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
        elif isinstance(node, ast.alias) and node.asname is None and "." in node.name:
            unsafe.add(node.name.partition(".")[0])  # `import a.b` binds `a` to another module
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name is not None:
            unsafe.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest is not None:
            unsafe.add(node.rest)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            unsafe.update(_WORD.findall(node.value))
    return unsafe


def _apply(inner: list[ast.AST], mapping: dict[str, str]) -> None:
    for node in inner:
        if isinstance(node, ast.Name) and node.id in mapping:
            node.id = mapping[node.id]
        elif isinstance(node, ast.ExceptHandler) and node.name in mapping:
            node.name = mapping[node.name]
        elif isinstance(node, ast.alias):
            bound = node.asname or node.name
            if bound in mapping:
                node.asname = mapping[bound]


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.alias):
        return [*node.name.split("."), node.asname or ""]
    return []


def _fresh_name(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = f"_l{rng.getrandbits(24):06x}"
        if name not in taken:
            taken.add(name)
            return name
