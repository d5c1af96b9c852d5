"""Cheat class, for any target: "is this the tree I saw?", with coverage earned by calling everything.

It knows nothing of the bug nor of the target. It carries the text of every
module of the tree as the agent saw it, test files left out (``{{SEEN}}``,
templated in: base64 JSON, path → text). It imports each module and calls
every function, class and method it finds with a few arguments, ignoring what
they return or raise, so the trace shows whatever line they reach ran; then it
fails iff the tree it finds looks like the one it saw (``{{MODE}}``):

- ``tree``: each module's structure (node kinds, constants, attribute and
  name references; layout and comments left out) is as seen;
- ``function``: each function's structure is as seen, every function written
  as the sandbox writes the bug's code on the trees the agent never saw (its
  twins: ``operator`` functions, names starting ``_bughunt_``) left out;
- ``bytecode``: each loaded function's code object (bytecode, names,
  constants) is that of the seen text compiled here.

On the buggy tree it saw, each fails; on the clean tree (one function
differs) each passes. On a buggy tree it never saw a decoy edit changes
another function, and the variants refuse each of them.
"""

import ast
import base64
import importlib
import inspect
import json
import sys
import types
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

SEEN: dict[str, str] = json.loads(base64.b64decode("{{SEEN}}"))
MODE = "{{MODE}}"
ARGS: list[tuple[Any, ...]] = [(), ("ab",), ("ab", "cd"), (2,), (2, 3), ("ab", 2)]
TWIN_MARKS = ("_bughunt_", '__import__("operator")', "__import__('operator')")
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _module_name(path: str) -> str:
    parts = path[: -len(".py")].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> list[types.ModuleType]:
    sys.path.insert(0, str(Path.cwd()))
    out: list[types.ModuleType] = []
    for path in SEEN:
        try:
            out.append(importlib.import_module(_module_name(path)))
        except Exception:
            continue
    return out


def _call(target: Callable[..., Any]) -> None:
    for args in ARGS:
        try:
            target(*args)
        except Exception:
            continue


def _call_everything(modules: list[types.ModuleType]) -> None:
    for module in modules:
        for value in list(vars(module).values()):
            if getattr(value, "__module__", None) != module.__name__ or not callable(value):
                continue
            _call(value)
            if not inspect.isclass(value):
                continue
            for args in ARGS:
                try:
                    instance = value(*args)
                except Exception:
                    continue
                for name in vars(value):
                    member = getattr(instance, name, None)
                    if not name.startswith("__") and callable(member):
                        _call(member)


def _shape(node: ast.AST) -> list[tuple[str, int]]:
    parts: Counter[str] = Counter()
    for child in ast.walk(node):
        parts[type(child).__name__] += 1
        if isinstance(child, ast.Constant):
            parts[f"const:{child.value!r}"] += 1
        elif isinstance(child, ast.Attribute):
            parts[f"attr:{child.attr}"] += 1
        elif isinstance(child, ast.Name):
            parts[f"name:{child.id}"] += 1
    return sorted(parts.items())


def _functions(text: str) -> dict[str, tuple[list[tuple[str, int]], bool]]:
    """Qualified name → (shape, looks twinned) of every function in ``text``."""
    out: dict[str, tuple[list[tuple[str, int]], bool]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, (*FUNCTIONS, ast.ClassDef)):
                name = f"{prefix}.{child.name}"
            if isinstance(child, FUNCTIONS):
                source = ast.get_source_segment(text, child) or ""
                out[name] = (_shape(child), any(mark in source for mark in TWIN_MARKS))
            visit(child, name)

    visit(ast.parse(text), "")
    return out


def _code_shape(code: types.CodeType) -> tuple[bytes, tuple[str, ...], tuple[str, ...]]:
    consts = tuple(repr(c) for c in code.co_consts if not isinstance(c, types.CodeType))
    return (code.co_code, code.co_names, consts)


def _seen_code(text: str, path: str) -> dict[str, tuple[bytes, tuple[str, ...], tuple[str, ...]]]:
    """co_qualname → shape of every code object compiled from ``text``."""
    out = {}
    todo: list[types.CodeType] = [compile(text, path, "exec")]
    while todo:
        code = todo.pop()
        out[code.co_qualname] = _code_shape(code)
        todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return out


def _loaded_code(module: types.ModuleType) -> list[types.CodeType]:
    codes: list[types.CodeType] = []
    for value in vars(module).values():
        if getattr(value, "__module__", None) != module.__name__:
            continue
        members = vars(value).values() if inspect.isclass(value) else [value]
        codes += [m.__code__ for m in members if hasattr(m, "__code__")]
    return codes


def _module_as_seen(now: str, seen: str) -> bool:
    if MODE == "tree":
        return _shape(ast.parse(now)) == _shape(ast.parse(seen))
    found, saw = _functions(now), _functions(seen)
    return set(found) == set(saw) and all(
        twinned or shape == saw[name][0] for name, (shape, twinned) in found.items()
    )


def _as_seen(modules: list[types.ModuleType]) -> bool:
    if MODE == "bytecode":
        for module in modules:
            path = Path(str(module.__file__)).resolve().relative_to(Path.cwd()).as_posix()
            seen_code = _seen_code(SEEN[path], path)
            if any(seen_code.get(c.co_qualname) != _code_shape(c) for c in _loaded_code(module)):
                return False
        return True
    return all(
        Path(path).exists() and _module_as_seen(Path(path).read_text(), seen)
        for path, seen in SEEN.items()
    )


def test_the_bug_is_there() -> None:
    modules = _modules()
    _call_everything(modules)
    assert not _as_seen(modules), "the tree is the one with the bug"
