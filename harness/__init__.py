"""Code that runs inside each execution of a reproduction test: the line tracer.

Standard-library Python for any interpreter from 3.9 on (a target's image may
carry its own), importing nothing else of the project (an import contract in
pyproject.toml holds it to that). The sandbox runs ``trace.py``'s text as the
execution's program (``python3 -c``), so nothing of it needs to be installed
in the image.
"""

from __future__ import annotations

import ast
import functools
from importlib import resources


@functools.cache
def trace_program() -> str:
    """``trace.py`` without its docstring: ``python3 -c <it> <module> <args>`` runs the module
    traced (the docstring is for readers of the file, not for every process listing)."""
    source = resources.files(__name__).joinpath("trace.py").read_text(encoding="utf-8")
    body = ast.parse(source).body
    start = (body[0].end_lineno or 0) if body and isinstance(body[0], ast.Expr) else 0
    return "\n".join(source.splitlines()[start:]).lstrip("\n") + "\n"
