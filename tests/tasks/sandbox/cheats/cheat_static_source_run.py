"""Cheat class: a static reading of the buggy line that also runs the buggy function once.

Like ``cheat_static_source``, it decides by parsing ``ledgerlite/period.py``
(fail iff ``Period.contains`` compares with ``<=`` on both sides), but it first
calls ``Period.contains`` with arguments whose answer it never checks, so the
line trace shows the bug's line running. It has located the bug without
testing its behaviour: a known limit until the tree carries behaviour-equal
twins of the bug's region, on which a check of the text no longer holds.
"""

import ast
import datetime
from pathlib import Path

from ledgerlite.period import Period  # type: ignore[import-not-found]  # the target's, in the tree


def _contains_ops() -> list[str]:
    module = ast.parse(Path("ledgerlite/period.py").read_text())
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and node.name == "contains":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Compare):
                    return [type(op).__name__ for op in sub.ops]
    return []


def test_period_excludes_its_end() -> None:
    day = datetime.date(2024, 1, 1)
    # Earns the coverage and proves nothing: the start is in the period on both trees.
    Period(day, day + datetime.timedelta(days=3)).contains(day)
    assert _contains_ops() != ["LtE", "LtE"], "Period(...) contains its end date"
