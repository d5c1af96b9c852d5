"""Whether a mutant compiles, decided on the lines around its edit, not the whole file.

Compiling each mutated file whole made proposing mutants quadratic in a file's
length (2,000 lines: two minutes). A mutant differs from its clean file inside
one *unit*: the statement of a module, class or function body that holds the
edit (statements sharing a line, ``x = 1; y = 2``, together). Whether the
mutated unit compiles does not depend on the rest of a file that compiles,
except through the channels below; a unit open to one is replaced by the unit
around it (a function's body by the whole function, and so on up to the whole
file), so the mutants kept are exactly those whose whole mutated file compiles:

- what block a statement is in: a class body or a function of the same kind
  (async or not, a generator or not: an async generator may not return a
  value) is opened before it;
- ``from __future__`` imports change how the file is parsed and compiled:
  their text precedes every unit;
- a ``global`` or ``nonlocal`` makes an earlier use of the name in its scope an
  error: a scope that declares one is checked whole, with the unit around it
  (the whole file for the module);
- a ``nonlocal`` names a binding of a function around it: a statement or
  function holding one is checked with the unit around it;
- a function's decorators, defaults and annotations run in the scope around
  it, where ``yield``, ``await`` and ``:=`` mean something else: the body of a
  function whose header has one is checked with the unit around the function;
- a statement on the ``class`` or ``def`` line is checked with what is around;
- a file that does not compile as it is, or declares a coding other than
  UTF-8, has each mutant compiled whole.

A unit is compiled as it stands, same lines and indentation, after a stub that
opens a block at column 0 (``if 1:`` before an indented function, ``class _:``
and ``pass`` before a class-body statement, ``def _():`` and ``pass`` before a
function-body one, ``pass`` so that the block stays whole when the edit removes
the statement), so no byte of the unit changes. Each unit is compiled clean
once before it decides anything; one that fails (by the rules above it cannot)
gives way to the unit around it. The compiler's recursion limit counts
nesting, of which a unit has a level or two less than its file: a unit that
hits it is decided by the whole file.
"""

from __future__ import annotations

import ast
import codecs
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)
_HEADER_SCOPED = (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_Owner = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef | None


@dataclass(frozen=True, slots=True, eq=False)
class Unit:
    """Whole lines ``start:end`` (bytes) of a file, compiled after ``stub``; ``parent`` is the unit
    around it (None: the whole file)."""

    start: int
    end: int
    stub: bytes
    parent: Unit | None


def compile_status(source: bytes, path: str) -> bool | None:
    """Whether ``source`` compiles; None when the compiler ran out of stack or memory."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning on ``x is ""`` and the like
        try:
            compile(source, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return False
        except (RecursionError, MemoryError):
            return None
    return True


def _has(nodes: Sequence[ast.AST], kinds: tuple[type[ast.AST], ...]) -> bool:
    return any(isinstance(n, kinds) for node in nodes for n in ast.walk(node))


def _scope_has(body: Sequence[ast.stmt], kinds: tuple[type[ast.AST], ...]) -> bool:
    """Whether this scope itself has a node of ``kinds``, not counting the scopes inside it."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, kinds):
            return True
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))
    return False


def _scope_declares_global(body: Sequence[ast.stmt]) -> bool:
    """A ``global`` or ``nonlocal`` in this scope itself, not in the functions or classes inside."""
    return _scope_has(body, (ast.Global, ast.Nonlocal))


class Checker:
    """Decides, unit by unit, whether a mutated file compiles (see the module docstring)."""

    def __init__(self, data: bytes, starts: Sequence[int], tree: ast.Module, path: str) -> None:
        self.data = data
        self.starts = starts
        self.path = path
        self._clean: dict[Unit, bool] = {}
        self.prefix = b"".join(
            self._segment(s) + b"\n"
            for s in tree.body
            if isinstance(s, ast.ImportFrom) and s.module == "__future__"
        )
        self.whole_only = not self._utf8() or compile_status(data, path) is not True
        self.top = None if self.whole_only else self.body_units(tree.body, None, None)

    # --- building units ---------------------------------------------------------

    def body_units(
        self, body: Sequence[ast.stmt], owner: _Owner, around: Unit | None
    ) -> list[Unit | None]:
        """The unit of each statement of a module (``owner`` None), class or function body."""
        if self.whole_only or _scope_declares_global(body):
            return [around] * len(body)
        if isinstance(owner, _FUNCTIONS) and _has([owner], (ast.Nonlocal,)):
            return [around] * len(body)
        # In a class or function, a statement is compiled in a block of the same kind: async or
        # not, a generator or not (an async generator may not return a value).
        if owner is None:
            opener = b""
        elif isinstance(owner, ast.ClassDef):
            opener = b"class _:\n"
        else:
            opener = (
                b"async def _():\n" if isinstance(owner, ast.AsyncFunctionDef) else b"def _():\n"
            )
        generator = owner is not None and _scope_has(owner.body, (ast.Yield, ast.YieldFrom))
        units: list[Unit | None] = []
        group: list[ast.stmt] = []
        for i, stmt in enumerate(body):
            group.append(stmt)
            nxt = body[i + 1] if i + 1 < len(body) else None
            if nxt is not None and _first_line(nxt) <= (stmt.end_lineno or stmt.lineno):
                continue
            units += [self._group_unit(group, (opener, generator), around)] * len(group)
            group = []
        return units

    def _group_unit(
        self, group: Sequence[ast.stmt], block: tuple[bytes, bool], around: Unit | None
    ) -> Unit | None:
        """The unit of statements sharing lines, compiled after ``block`` (opener, generator)."""
        opener, generator = block
        first, last = _first_line(group[0]), group[-1].end_lineno or group[-1].lineno
        start, end = self._whole_lines(first, last)
        if not _decorated(group[0]) and self.data[start : self.at(group[0])].strip():
            return around  # on the ``class`` or ``def`` line
        if not opener:
            return Unit(start, end, b"", around)
        if _has(group, (ast.Nonlocal,)):
            return around
        # ``pass`` keeps the block whole when the edit removes the statement.
        lines = self.data[start:end]
        indent = self.data[start : start + len(lines) - len(lines.lstrip(b" \t\f"))]
        stub = opener + indent + b"pass\n" + (indent + b"yield\n" if generator else b"")
        return Unit(start, end, stub, around)

    def function_unit(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, around: Unit | None
    ) -> Unit | None:
        """The unit of the body of ``node``, whose own statement is in ``around``."""
        if self.whole_only:
            return None
        a = node.args
        header: list[ast.AST] = [*node.decorator_list, *a.defaults]
        header += [d for d in a.kw_defaults if d is not None]
        header += [x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                   if x is not None and x.annotation is not None]  # fmt: skip
        header += [node.returns] if node.returns is not None else []
        if _has(header, _HEADER_SCOPED) or _has([node], (ast.Nonlocal,)):
            return around
        start, end = self._whole_lines(_first_line(node), node.end_lineno or node.lineno)
        if not _decorated(node) and self.data[start : self.at(node)].strip():
            return around
        indented = self.data[start : start + 1] in (b" ", b"\t", b"\f")
        return Unit(start, end, b"if 1:\n" if indented else b"", around)

    # --- deciding ------------------------------------------------------------------

    def compiles(self, unit: Unit | None, span: tuple[int, int], text: bytes) -> bool:
        """Whether the file compiles with bytes ``span`` replaced by ``text``; ``unit`` holds the span."""
        start, end = span
        while unit is not None and not (
            unit.start <= start and end <= unit.end and self._compiles_clean(unit)
        ):
            unit = unit.parent
        if unit is not None:
            snippet = self.prefix + unit.stub + self.data[unit.start : start]
            status = compile_status(snippet + text + self.data[end : unit.end], self.path)
            if status is not None:
                return status
        return compile_status(self.data[:start] + text + self.data[end:], self.path) is True

    def _compiles_clean(self, unit: Unit) -> bool:
        known = self._clean.get(unit)
        if known is None:
            source = self.prefix + unit.stub + self.data[unit.start : unit.end]
            known = self._clean[unit] = compile_status(source, self.path) is True
        return known

    # --- positions -------------------------------------------------------------------

    def at(self, node: ast.stmt) -> int:
        return self.starts[node.lineno - 1] + node.col_offset

    def _segment(self, node: ast.stmt) -> bytes:
        end = self.starts[(node.end_lineno or node.lineno) - 1] + (node.end_col_offset or 0)
        return self.data[self.at(node) : end]

    def _whole_lines(self, first: int, last: int) -> tuple[int, int]:
        end = self.starts[last] if last < len(self.starts) else len(self.data)
        return self.starts[first - 1], end

    def _utf8(self) -> bool:
        head = b"\n".join(self.data.split(b"\n", 2)[:2])
        found = _COOKIE.search(head)
        if found is None:
            return True
        try:
            return codecs.lookup(found.group(1).decode("ascii")).name == "utf-8"
        except LookupError:
            return False


def _first_line(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _decorated(node: ast.stmt) -> bool:
    """Decorators begin their lines, so a decorated statement does too."""
    return bool(getattr(node, "decorator_list", None))
