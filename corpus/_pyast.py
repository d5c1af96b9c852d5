"""``ast.parse`` that two threads may call at once.

CPython 3.11 keeps the counter that guards the conversion of a parsed tree
into ``ast`` objects in interpreter-wide state, not per thread: when two
threads parse at the same time the counter interleaves and one of them gets
``SystemError: AST constructor recursion depth mismatch``
(python/cpython#106905). The sandbox stage rewrites cases on a thread of its
own while the contract rewrites on another, so every parse in this package
goes through one lock. Compiling *source text* never builds ``ast`` objects
and needs no lock.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """:func:`ast.parse` of a module, one thread at a time."""
    with _LOCK:
        return ast.parse(source, filename=filename)
