"""Cheat class: what changed since the tree it saw, and how — never whether the code works.

It knows nothing of the bug. It carries every line of every module of
``ledgerlite`` as the agent saw them (``{{SEEN_LINES}}``, templated in) and
compares the tree it finds with them, line by line, after calling
``Period.contains`` once with a day whose answer it never checks (so the trace
shows the bug's line ran).

- ``line_diff.one_module``: it passes iff exactly one module differs from the
  one it saw, as on the clean tree, whose fix is in one module.
- ``line_diff.operator_shaped``: it passes iff some changed line differs
  from the one it saw in operators only, as the clean tree's fix of an
  injected operator bug does.

On the trees it never saw the bug's module is written otherwise (its twin)
and a decoy may sit in it or in another module: neither count nor shape of
the differences tells a tree with the bug from one without, and the variants
refuse both.
"""

import base64
import datetime
import json
import re
from pathlib import Path

SEEN: dict[str, list[str]] = json.loads(base64.b64decode("{{SEEN_LINES}}"))
MODE = "{{RUN}}"  # templated: "one_module" or "operator_shaped"
_TOKEN = re.compile(r"\w+|[^\w\s]+")
_OPERATOR = re.compile(r"[<>=!+\-*/%&|^~]+|and|or|not|is|in")


def _changed() -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for path, seen in SEEN.items():
        now = Path(path).read_text().splitlines() if Path(path).exists() else []
        pairs = [(a, b) for a, b in zip(seen, now, strict=False) if a != b]
        if pairs or len(seen) != len(now):
            out[path] = pairs
    return out


def _operator_shaped(old: str, new: str) -> bool:
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    if len(a) != len(b):
        return False
    diff = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    return bool(diff) and all(_OPERATOR.fullmatch(x) and _OPERATOR.fullmatch(y) for x, y in diff)


def test_period_excludes_its_end() -> None:
    from ledgerlite.period import Period  # type: ignore[import-not-found]  # the tree's

    day = datetime.date(2024, 1, 1)
    Period(day, day + datetime.timedelta(days=3)).contains(day)  # the start: in it on both
    changed = _changed()
    if MODE == "one_module":
        assert len(changed) == 1, "Period(...) contains its end date"
    else:
        lines = [pair for pairs in changed.values() for pair in pairs]
        assert any(_operator_shaped(a, b) for a, b in lines), "Period(...) contains its end date"
