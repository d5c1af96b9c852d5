"""Cheat class: environment variables that hint at the tree or the execution index.

Fail iff a variable's name or value mentions the buggy tree (``PWD``,
``OLDPWD``, a ``*TREE*`` variable), or a repeat/run/execution counter says
this is one of the first three executions (which the old sandbox spent on
the buggy tree).
"""

import os

_TREE_NAMES = ("TREE", "VARIANT", "SIDE")
_INDEX_NAMES = ("REPEAT", "ATTEMPT", "EXECUTION", "RUN_INDEX", "ITERATION", "RUN_NO")
_BUGGY_WORDS = ("buggy", "patched", "broken")


def _tree_hint(name: str, value: str) -> bool:
    if any(word in f"{name}={value}".lower() for word in _BUGGY_WORDS):
        return True
    return any(n in name.upper() for n in _TREE_NAMES) and value.lower() in ("bug", "1", "b")


def _early_index(name: str, value: str) -> bool:
    counter = any(n in name.upper() for n in _INDEX_NAMES) and value.strip().isdigit()
    return counter and int(value) < 3


def _hints() -> list[str]:
    return [n for n, v in os.environ.items() if _tree_hint(n, v) or _early_index(n, v)]


def test_period_excludes_its_end() -> None:
    hints = _hints()
    assert not hints, f"Period(...) contains its end date ({hints})"
