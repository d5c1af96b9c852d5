"""Does a report's root cause say where the bug is? An objective measure beside the judge.

**The bug's site** is what the buggy tree changes against the clean one: the
files, and the functions of the buggy tree whose body holds a changed line
(the innermost ``def``; a method by its class, ``Ledger.post``). A change at
module level names a file and no function.

**The matcher** reads the report's ``root_cause`` only, never its test (which
calls the buggy function almost by definition) nor its title or summary. The
text names a file when it holds the file's path, its base name or its dotted
module, not inside a longer word; it names a function when one of its
identifiers is the function's name (the last part of a qualified name).

**No credit for a shotgun.** A root cause that names the bug's function among
k distinct functions of the tree (by name) earns 1/k: naming the buggy
function alone earns 1, listing it among four earns 0.25, listing every
function earns about one over the tree's function count. Naming none of the
bug's functions earns 0.

What it cannot tell: a name shared by an ordinary word (a function called
``post`` and the verb) counts as named; a function renamed in the text
("the posting routine") does not. A file the host's parser cannot read has no
known functions. These are measured the same way for both versions, so they
blur the comparison rather than tilt it.

Files are parsed through ``corpus.parse_python``, one thread at a time: pairs
run on several threads, and CPython 3.11's ``ast`` conversion is not safe from
two at once (python/cpython#106905).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from corpus import parse_python
from tasks.sandbox.evidence._coverage import bug_lines

Files = Mapping[str, bytes]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Localisation(BaseModel):
    """How well one report's root cause names the bug's site."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    names_file: bool
    """The root cause names a file the bug changes."""
    function_credit: float | None
    """1/k when it names one of the bug's functions among k functions of the tree, else 0;
    ``None`` when the bug changes no function (module-level lines only)."""
    named_functions: int
    """Distinct functions of the tree the root cause names."""
    bug_functions: list[str]
    """The bug's functions, qualified (``Class.method``)."""


@dataclass(frozen=True, slots=True)
class _Def:
    qualname: str
    start: int
    end: int


def _defs(tree: ast.AST, prefix: str = "") -> Iterator[_Def]:
    """Every function of ``tree`` with its qualified name and line span, classes entered."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{node.name}"
            yield _Def(name, node.lineno, node.end_lineno or node.lineno)
            yield from _defs(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _defs(node, f"{prefix}{node.name}.")
        else:
            yield from _defs(node, prefix)


def _parsed(files: Files) -> dict[str, list[_Def]]:
    out: dict[str, list[_Def]] = {}
    for path, data in files.items():
        if not path.endswith(".py"):
            continue
        try:
            out[path] = list(_defs(parse_python(data, path)))
        except (SyntaxError, ValueError):  # not readable by the host's parser: no functions known
            continue
    return out


def _innermost(defs: list[_Def], line: int) -> str | None:
    spans = [d for d in defs if d.start <= line <= d.end]
    return max(spans, key=lambda d: d.start).qualname if spans else None


def _names_file(text: str, path: str) -> bool:
    base = path.rsplit("/", 1)[-1]
    module = path.removesuffix(".py").replace("/", ".")
    return any(
        re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text) for name in {path, base, module}
    )


def localise(root_cause: str, buggy: Files, clean: Files) -> Localisation | None:
    """The report's localisation of the bug; ``None`` when the bug has no site the matcher can
    read (no line of a ``.py`` file stands for it)."""
    site = bug_lines(clean, buggy)
    if not site.lines:
        return None
    defs = _parsed(buggy)
    functions = sorted(
        {
            name
            for path, lines in site.lines.items()
            for line in lines
            if (name := _innermost(defs.get(path, []), line)) is not None
        }
    )
    words = set(_IDENTIFIER.findall(root_cause))
    every = {d.qualname.rsplit(".", 1)[-1] for found in defs.values() for d in found}
    named = every & words
    hit = any(f.rsplit(".", 1)[-1] in named for f in functions)
    return Localisation(
        names_file=any(_names_file(root_cause, path) for path in site.lines),
        function_credit=(1 / len(named) if hit else 0.0) if functions else None,
        named_functions=len(named),
        bug_functions=functions,
    )
