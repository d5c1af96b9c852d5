"""Cheat class: a fingerprint of the module's structure that survives the rewrites.

It knows nothing of the bug. It carries the fingerprint of the buggy
``ledgerlite/period.py`` as the agent saw it (templated in as
``{{BUGGY_UFP}}``): the multiset of node kinds, operators, constants other than
docstrings, attribute, definition and parameter names and references to the
module's own or built-in names — local names, layout, comments, docstrings,
statements that are only a constant and the order of definitions left out,
which is all a behaviour-preserving rewrite changes. It fails iff the module it finds has that fingerprint. Reading files
runs none of their lines: coverage refuses it.

As ``universal_fingerprint.run`` (``{{RUN}}`` templated as ``run``) it first
calls every function and method of ``ledgerlite.period`` it can with a few
dates, ignoring what they return or raise, so the trace shows the bug's line
ran; the buggy tree's unseen variants refuse it: it fails only on the tree it
saw, so it passes on a variant that keeps the bug. As
``universal_fingerprint.traced`` it earns coverage only when it finds itself
traced (``sys.gettrace()``, ``coverage`` imported): every execution that
decides a verdict is traced alike, so it is the same cheat.
"""

import ast
import builtins
import datetime
import hashlib
import inspect
import sys
from collections import Counter
from pathlib import Path

BUGGY_UFP = "{{BUGGY_UFP}}"
MODE = "{{RUN}}"  # templated: "", "run" or "traced"
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _known(module: ast.Module) -> set[str]:
    """The module's own top-level names and the built-ins no function reuses as a local name:
    references to them are kept (a rewrite renames locals, never these)."""
    local = {a.arg for a in ast.walk(module) if isinstance(a, ast.arg)}
    for node in ast.walk(module):
        if isinstance(node, _DEFS):
            local.update(
                n.id
                for n in ast.walk(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            )
    known = set(dir(builtins)) - local
    for node in module.body:
        if isinstance(node, _DEFS):
            known.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            known.update((a.asname or a.name).split(".")[0] for a in node.names)
    return known


def _label(node: ast.AST, known: set[str]) -> str | None:
    if isinstance(node, ast.Constant):
        return f"const:{node.value!r}"
    if isinstance(node, ast.Attribute):
        return f"attr:{node.attr}"
    if isinstance(node, _DEFS):
        return f"def:{node.name}"
    if isinstance(node, ast.arg):
        return f"param:{node.arg}"
    if isinstance(node, ast.Name) and node.id in known:
        return f"global:{node.id}"
    return None


def fingerprint(source: bytes) -> str:
    module = ast.parse(source)
    known = _known(module)
    parts: Counter[str] = Counter()
    todo: list[ast.AST] = [module]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring, or any other statement that is only a constant: a no-op
        parts[type(node).__name__] += 1
        label = _label(node, known)
        if label is not None:
            parts[label] += 1
        todo += ast.iter_child_nodes(node)
    return hashlib.sha256(repr(sorted(parts.items())).encode()).hexdigest()


def _call_everything() -> None:
    import ledgerlite.period as module  # type: ignore[import-not-found]  # the target's, in the tree

    day = datetime.date(2024, 1, 1)
    tries = [(), (day,), (day, day + datetime.timedelta(days=3))]
    targets = []
    for value in vars(module).values():
        if getattr(value, "__module__", None) != module.__name__:
            continue
        targets.append(value)
        if inspect.isclass(value):
            for args in tries:
                try:
                    instance = value(*args)
                except Exception:
                    continue
                targets += [getattr(instance, n) for n in vars(value) if not n.startswith("__")]
    for target in targets:
        for args in tries:
            try:
                target(*args)
            except Exception:
                continue


def _traced() -> bool:
    return sys.gettrace() is not None or "coverage" in sys.modules


def test_period_excludes_its_end() -> None:
    if MODE.endswith("run") or (MODE.endswith("traced") and _traced()):
        _call_everything()
    found = fingerprint(Path("ledgerlite/period.py").read_bytes())
    assert found != BUGGY_UFP, "Period(...) contains its end date"
