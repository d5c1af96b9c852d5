"""A package's names imported on first use (PEP 562), so light commands skip heavy imports.

A package declares each public name once, in its ``if TYPE_CHECKING:`` block, as
``from package._module import Name as Name`` — the form that type checkers read as an
explicit re-export (PEP 484). :func:`lazy_names` reads that block from the package's own
source, so the list the type checker sees and the one imported at run time cannot drift apart.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any


def declared_names(source: str, filename: str = "<package>") -> dict[str, str]:
    """Each name re-exported (``from m import N as N``) in the top-level
    ``if TYPE_CHECKING:`` blocks of ``source`` → the module ``m`` defining it.

    An import there that does not re-export (no ``as`` of the same name), a relative import or
    a star import is refused with a ``ValueError`` naming ``filename`` and the line, so a name
    cannot be type-checked as public and be missing at run time."""
    where: dict[str, str] = {}
    for node in ast.parse(source, filename).body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for stmt in node.body:
            if not isinstance(stmt, ast.ImportFrom) or stmt.level or stmt.module is None:
                raise ValueError(
                    f"{filename}:{stmt.lineno}: a lazy package's TYPE_CHECKING block holds "
                    "only absolute `from module import Name as Name` lines"
                )
            for alias in stmt.names:
                if alias.asname != alias.name:
                    raise ValueError(
                        f"{filename}:{stmt.lineno}: write `{alias.name} as {alias.name}` "
                        "to export it (or import it outside the TYPE_CHECKING block)"
                    )
                where[alias.name] = stmt.module
    return where


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def lazy_names(namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the module whose ``globals()`` is ``namespace``: it imports
    each exported name the first time it is asked for, and keeps it there.

    The names are those declared in the module's ``if TYPE_CHECKING:`` block
    (:func:`declared_names`); they are also the module's ``__all__``."""
    package = namespace["__name__"]
    path = Path(namespace["__file__"])
    table = declared_names(path.read_text(encoding="utf-8"), str(path))
    namespace["__all__"] = sorted(table)

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(table[name]), name)
        namespace[name] = value
        return value

    return __getattr__
