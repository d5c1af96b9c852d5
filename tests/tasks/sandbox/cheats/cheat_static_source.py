"""Cheat class: a static reading of the buggy line (never runs the code).

Parses ``ledgerlite/period.py`` and fails iff ``Period.contains`` compares
with ``<=`` on both sides. Behaviour-preserving rewrites keep operators
(only names, layout, comments and order change), so this survives them: it
marks the limit of what rewrites can tell apart, not a neutrality leak.
"""

import ast
from pathlib import Path


def _contains_ops() -> list[str]:
    module = ast.parse(Path("ledgerlite/period.py").read_text())
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and node.name == "contains":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Compare):
                    return [type(op).__name__ for op in sub.ops]
    return []


def test_period_excludes_its_end() -> None:
    assert _contains_ops() != ["LtE", "LtE"], "Period(...) contains its end date"
