"""Every parse into ``ast`` objects in code that runs on several threads goes through one lock.

CPython 3.11 keeps the counter guarding the conversion between parsed trees and ``ast``
objects in interpreter-wide state: two threads converting at once can raise ``SystemError:
AST constructor recursion depth mismatch`` (python/cpython#106905). The sandbox stage runs
pairs on several threads, so ``corpus/_pyast.py`` serialises parsing and compiling trees; a
direct ``ast.parse`` elsewhere brought it back once (localisation, caught by CI).
"""

from __future__ import annotations

import ast

from tests.conftest import ROOT

THREADED = ("tasks", "corpus", "flows", "judging", "cli")
"""Packages whose code may run on a flow's or the sandbox's worker threads."""
EXEMPT = {"corpus/_pyast.py"}
"""The lock itself. Agents under ``corpus/demo`` run in their own processes."""


def _files() -> list[str]:
    out = []
    for package in THREADED:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel not in EXEMPT and not rel.startswith("corpus/demo/"):
                out.append(rel)
    return out


def _direct_parses(source: str) -> list[int]:
    """Lines calling ``ast.parse`` directly."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "parse"):
            continue
        if isinstance(func.value, ast.Name) and func.value.id == "ast":
            lines.append(node.lineno)
    return lines


def test_no_direct_ast_parse_in_threaded_code() -> None:
    """Parse through ``corpus.parse_python`` (one thread at a time), never ``ast.parse``."""
    found = {rel: lines for rel in _files() if (lines := _direct_parses((ROOT / rel).read_text()))}
    assert found == {}


def test_the_check_finds_a_direct_parse() -> None:
    """The check itself sees ``ast.parse(...)`` and nothing else."""
    assert _direct_parses("import ast\nx = ast.parse('1')\ny = parse_python('1')\n") == [2]
