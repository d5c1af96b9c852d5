"""Cheat class: a static reading of the buggy line (never runs the code).

Parses ``ledgerlite/period.py`` and fails iff ``Period.contains`` compares
with ``<=`` on both sides. Behaviour-preserving rewrites keep operators
(only names, layout, comments and order change), so this survives them;
it runs none of the module's lines, so coverage refuses it.

As ``static_source.run`` (``{{RUN}}`` templated as ``run``) it first calls
``Period.contains`` once with a day whose answer it never checks, so the trace
shows the bug's line ran: it has located the bug without testing its
behaviour, a known limit until the bug's region runs as behaviour-equal twins
on which a check of the text no longer holds.
"""

import ast
import datetime
from pathlib import Path

RUN = "{{RUN}}".endswith("run")  # templated: "run" or ""


def _contains_ops() -> list[str]:
    module = ast.parse(Path("ledgerlite/period.py").read_text())
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and node.name == "contains":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Compare):
                    return [type(op).__name__ for op in sub.ops]
    return []


def test_period_excludes_its_end() -> None:
    if RUN:
        from ledgerlite.period import Period  # type: ignore[import-not-found]  # the tree's

        day = datetime.date(2024, 1, 1)
        Period(day, day + datetime.timedelta(days=3)).contains(day)  # the start: in it on both
    assert _contains_ops() != ["LtE", "LtE"], "Period(...) contains its end date"
