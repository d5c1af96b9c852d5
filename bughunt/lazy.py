"""A package's names imported on first use (PEP 562), so light commands skip heavy imports."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(namespace: dict[str, Any], where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the module whose ``globals()`` is ``namespace``: it imports
    each name in ``where`` (name → the module defining it) the first time it is asked for, and
    keeps it there."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        namespace[name] = value
        return value

    return __getattr__
