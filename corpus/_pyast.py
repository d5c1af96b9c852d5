"""``ast`` work that two threads may do at once: parsing, compiling a tree, comparing trees.

CPython 3.11 keeps the counter that guards the conversion between parsed
trees and ``ast`` objects in interpreter-wide state, not per thread: when two
threads convert at the same time the counter interleaves and one of them gets
``SystemError: AST constructor recursion depth mismatch``
(python/cpython#106905). The sandbox stage rewrites cases on a thread of its
own while the contract rewrites on another, so every parse, and every compile
of an ``ast`` tree (the same conversion the other way), in this package goes
through one lock. Compiling *source text* never builds ``ast`` objects and
needs no lock.
"""

from __future__ import annotations

import ast
import threading
from types import CodeType

_LOCK = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """:func:`ast.parse` of a module, one thread at a time."""
    with _LOCK:
        return ast.parse(source, filename=filename)


def compile_tree(tree: ast.Module, filename: str) -> CodeType:
    """``compile(tree, filename, "exec", dont_inherit=True)``, one thread at a time.

    For a tree just parsed from a text this checks what compiling the text
    would (the compiler's own errors: ``return`` outside a function, a
    misplaced ``nonlocal``, …) without parsing the text again.
    """
    with _LOCK:
        return compile(tree, filename, "exec", dont_inherit=True)


_ABSENT = object()


def same_tree(a: object, b: object) -> bool:
    """``ast.dump(a) == ast.dump(b)``, without formatting either tree as text.

    Nodes match when their classes and every field match, a field that is
    absent counting as one that is ``None`` where the class defaults it to
    ``None`` (as ``ast.dump`` leaves both out); positions are not compared;
    lists match item by item; any other value by its ``repr`` (as
    ``ast.dump`` prints it, so ``1`` is not ``True`` and ``0.0`` is not
    ``-0.0``). ``ast.dump`` formats both whole trees first, which would be
    most of the time a rewrite takes to check itself.
    """
    if isinstance(a, ast.AST):
        cls = type(a)
        if type(b) is not cls:
            return False
        for name in cls._fields:
            x = getattr(a, name, _ABSENT)
            y = getattr(b, name, _ABSENT)
            if x is y:
                continue
            if x is None and getattr(cls, name, ...) is None:
                x = _ABSENT
            if y is None and getattr(cls, name, ...) is None:
                y = _ABSENT
            if x is not y and not same_tree(x, y):
                return False
        return True
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(same_tree(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(b, ast.AST | list) or a is _ABSENT or b is _ABSENT:
        return False
    return repr(a) == repr(b)
