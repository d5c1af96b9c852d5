"""Proposing injected-bug mutants of a Python tree by syntax-tree mutation.

Pure: source bytes in, :class:`Mutant` values out; nothing runs the target's
suite here (keeping only the mutants the suite kills is the sandbox's job).
A mutant is kept when its mutated file compiles, which is decided on the
statement around the edit (``corpus._locality``), and its patch is diffed from
the edited lines: proposing costs time linear in a file's length.

Each operator finds a node with :mod:`ast` and edits the source bytes at that
node's positions, so only the line(s) the mutation needs change; the patch is
built from the edited line range with three lines of context. Never mutated:
docstrings (any string statement), type annotations, ``__all__``, the body and
test of ``if __name__ == "__main__"``, anything inside an f-string, test files.

The category of each operator is what a careful reader calls the edit under
the category definitions of ``tasks/classify/_rules.py`` (this module may not
import the classifier, by the layering, and does not copy its verdicts):
a dropped ``if`` guard or ``and``/``or`` clause is ``condition_removed``, a
returned constant, literal or conditional branch changed is
``return_value`` (``yield`` hands back a value as ``return`` does), a
dropped update or copy is ``state_mutation``. The scheme's own conventions
hold: ``and`` ↔ ``or`` is a ``comparison_operator``, and an arithmetic
change on a line that stores into an attribute or item (``self.total = a +
b``) is a ``state_mutation``; operators skip lines that raise, catch or
scope an exception, where any edit is ``exception_handling``. A caller that may import the classifier
passes it as ``classify=`` to relabel every mutant by it.

On the demo target (``corpus/demo/target``, ``tests/`` held out) the classifier
gives every mutant the category the proposer meant
(``tests/tasks/classify/test_agreement.py``,
``benchmarks/classifier_agreement.py``). Cutting a conditional return to one
branch is ``return_value`` even when the branch keeps every name
(``return -2 if r == -1 else r`` → ``return r``), as the classifier reads it.
"""

from __future__ import annotations

import ast
import bisect
import hashlib
import io
import itertools
import random
import re
import tokenize
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from bughunt.hashing import hash_json, sha256_bytes
from bughunt.models import BugCategory
from corpus._locality import Checker, Unit
from corpus._oracle import DEFAULT_ORACLE, matches
from corpus._pyast import parse as parse_ast

C = BugCategory


class Mutant(BaseModel):
    """One proposed injected bug: a one-file patch that turns the clean tree into a buggy one."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    path: str
    """The mutated file, relative to the target, POSIX."""
    line: int
    """First changed line of the clean file (1-based)."""
    category: BugCategory
    """The bug category the operator intends (see the module docstring), or ``classify=``'s label."""
    operator: str
    """Short name of the mutation, e.g. ``"<= -> <"``."""
    description: str
    """One line for humans: what changed, and where."""
    patch: str
    """Unified diff (``--- a/<path>``, ``+++ b/<path>``, 3 lines of context) to apply with ``git apply``."""
    key: str
    """Content hash of (path, mutated file bytes): equal keys are the same mutant."""


def is_test_file(path: str) -> bool:
    """True for the target's tests by the usual pytest layouts (the default oracle, ``corpus._oracle``)."""
    return matches(path, DEFAULT_ORACLE)


def mutant_key(path: str, mutated: bytes) -> str:
    """The :attr:`Mutant.key` of ``path`` holding ``mutated``."""
    return _key(path, sha256_bytes(mutated))


def _key(path: str, sha256: str) -> str:
    return hash_json({"path": path, "sha256": sha256})


def propose_mutants(
    files: Mapping[str, bytes],
    *,
    categories: Collection[BugCategory] | None = None,
    seed: int = 0,
    exclude: Callable[[str], bool] | None = None,
    classify: Callable[[str], BugCategory] | None = None,
) -> list[Mutant]:
    """Every mutant of the ``.py`` files of ``files`` (path → bytes), shuffled by ``seed``.

    Files ``exclude`` names (default :func:`is_test_file`) are never mutated.
    A file that is not UTF-8, has a BOM or a lone CR, or does not parse is
    skipped silently, and so is every mutant that does not compile. Mutants
    with the same mutated bytes are kept once. ``classify`` (patch text →
    category), when given, relabels each mutant before ``categories`` filters
    them. The set of mutants does not depend on ``seed``; their order does.
    """
    skip = is_test_file if exclude is None else exclude
    sources = {p: d for p, d in sorted(files.items()) if p.endswith(".py") and not skip(p)}
    parents = _exception_parents(sources.values())
    seen: set[str] = set()
    found: list[Mutant] = []
    for path, data in sources.items():
        for mutant in _file_mutants(path, data, parents):
            if mutant.key in seen:
                continue
            seen.add(mutant.key)
            if classify is not None:
                mutant = mutant.model_copy(update={"category": classify(mutant.patch)})
            if categories is None or mutant.category in categories:
                found.append(mutant)
    random.Random(seed).shuffle(found)  # noqa: S311 -- a reproducible order, not a secret
    return found


# --- source and edits --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Edit:
    """Replace source bytes ``start:end`` by ``text``."""

    start: int
    end: int
    text: str
    category: BugCategory
    operator: str
    what: str
    scope: str
    unit: Unit | None
    """The smallest part of the file whose compiling decides the mutant's (``corpus._locality``)."""


class _Source:
    """A file's bytes with line offsets; AST columns are UTF-8 byte offsets, as here."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts = [0]
        for i, byte in enumerate(data):
            if byte == 0x0A:
                self.starts.append(i + 1)

    def at(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.at(node.lineno, node.col_offset)  # type: ignore[attr-defined] # stmt/expr
        return start, self.at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def seg(self, node: ast.AST) -> str:
        return self.text(*self.span(node))

    def line(self, number: int) -> str:
        end = self.starts[number] if number < len(self.starts) else len(self.data)
        return self.text(self.starts[number - 1], end)

    def grouped(self, node: ast.AST) -> tuple[int, int]:
        """The node's span with any parentheses that only group it."""
        start, end = self.span(node)
        while True:
            i, j = start - 1, end
            while i >= 0 and self.data[i] in b" \t":
                i -= 1
            while j < len(self.data) and self.data[j] in b" \t":
                j += 1
            if i < 0 or j >= len(self.data) or (self.data[i], self.data[j]) != (0x28, 0x29):
                return start, end
            start, end = i, j + 1

    def own_lines(self, node: ast.stmt) -> bool:
        """Whether the statement alone fills its lines (no ``;``, not after ``if c:``)."""
        start = self.span(node)[0]
        before = self.data[self.starts[node.lineno - 1] : start]
        after = self.line(node.end_lineno or node.lineno)[node.end_col_offset or 0 :]
        return not before.strip() and re.fullmatch(r"\s*(#.*)?\s*", after) is not None

    def whole_lines(self, first: int, last: int) -> tuple[int, int]:
        end = self.starts[last] if last < len(self.starts) else len(self.data)
        return self.starts[first - 1], end


def _hunk_range(start: int, length: int) -> str:
    return f"{start if length else start - 1},{length}"


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _diff_line(mark: str, line: str) -> str:
    return mark + line if line.endswith("\n") else f"{mark}{line}\n\\ No newline at end of file\n"


def unified_diff(path: str, old: str, new: str) -> tuple[str, int]:
    """One-hunk unified diff of ``old`` → ``new`` with 3 lines of context, and its first changed line."""
    a, b = _lines(old), _lines(new)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    lo, hi_a, hi_b = max(0, head - 3), len(a) - tail, len(b) - tail
    after = a[hi_a : min(len(a), hi_a + 3)]
    n_a, n_b = hi_a - lo + len(after), hi_b - lo + len(after)
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    out.append(f"@@ -{_hunk_range(lo + 1, n_a)} +{_hunk_range(lo + 1, n_b)} @@\n")
    out += [_diff_line(" ", line) for line in a[lo:head]]
    out += [_diff_line("-", line) for line in a[head:hi_a]]
    out += [_diff_line("+", line) for line in b[head:hi_b]]
    out += [_diff_line(" ", line) for line in after]
    return "".join(out), head + 1


def edit_diff(
    path: str, old: Sequence[str], src: _Source, edit: tuple[int, int, str]
) -> tuple[str, int]:
    """:func:`unified_diff` of the file whose lines are ``old`` (``_lines``) and bytes ``src``, and
    that file with bytes ``start:end`` replaced by ``text``: the same hunk, found from the edited
    lines outwards instead of comparing every line of both files."""
    start, end, text = edit
    first = bisect.bisect_right(src.starts, start) - 1
    stop = min(bisect.bisect_right(src.starts, end), len(old))
    window_end = src.starts[stop] if stop < len(src.starts) else len(src.data)
    new = _lines(src.text(src.starts[first], start) + text + src.text(end, window_end))
    shift = len(new) - (stop - first)
    n_a, n_b = len(old), len(old) + shift

    def b(i: int) -> str:
        if i < first:
            return old[i]
        return new[i - first] if i < first + len(new) else old[i - shift]

    head = first  # the lines above the edit are the same in both files
    while head < min(n_a, n_b) and old[head] == b(head):
        head += 1
    tail = min(n_a - stop, min(n_a, n_b) - head)  # and so are those below it
    while tail < min(n_a, n_b) - head and old[-1 - tail] == b(n_b - 1 - tail):
        tail += 1
    lo, hi_a, hi_b = max(0, head - 3), n_a - tail, n_b - tail
    after = old[hi_a : min(n_a, hi_a + 3)]
    size_a, size_b = hi_a - lo + len(after), hi_b - lo + len(after)
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    out.append(f"@@ -{_hunk_range(lo + 1, size_a)} +{_hunk_range(lo + 1, size_b)} @@\n")
    out += [_diff_line(" ", line) for line in old[lo:head]]
    out += [_diff_line("-", line) for line in old[head:hi_a]]
    out += [_diff_line("+", b(i)) for i in range(head, hi_b)]
    out += [_diff_line(" ", line) for line in after]
    return "".join(out), head + 1


def _file_mutants(path: str, data: bytes, parents: Mapping[str, str]) -> Iterator[Mutant]:
    """The file's mutants. Each costs time in the lines around its edit, not in the file's
    length, but for its key: SHA-256 of the mutated bytes after the edit (those before it are
    hashed once for all mutants)."""
    tree = _parse(data)
    if tree is None:
        return
    src = _Source(data)
    checker = Checker(data, src.starts, tree, path)
    walker = _Walker(src, parents, checker)
    walker.block(tree.body, checker.top)
    old = _lines(data.decode("utf-8"))
    view, before, hashed = memoryview(data), hashlib.sha256(), 0
    for edit in sorted(walker.edits, key=lambda e: (e.start, e.end, e.operator, e.text)):
        text = edit.text.encode("utf-8")
        if data[edit.start : edit.end] == text:
            continue
        if not checker.compiles(edit.unit, (edit.start, edit.end), text):
            continue
        before.update(view[hashed : edit.start])  # edits come by their start: hashed ≤ start
        hashed = edit.start
        mutated = before.copy()
        mutated.update(text)
        mutated.update(view[edit.end :])
        patch, line = edit_diff(path, old, src, (edit.start, edit.end, edit.text))
        yield Mutant(
            path=path,
            line=line,
            category=edit.category,
            operator=edit.operator,
            description=f"{edit.what} in {edit.scope} ({path}:{line})",
            patch=patch,
            key=_key(path, mutated.hexdigest()),
        )


def _parse(data: bytes) -> ast.Module | None:
    """The module's tree, or None for a file this module does not mutate."""
    if data.startswith(b"\xef\xbb\xbf") or re.search(rb"\r(?!\n)", data):
        return None  # a BOM or a lone CR would shift the positions the edits use
    try:
        data.decode("utf-8")
        return parse_ast(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# --- exception classes ---------------------------------------------------------

_BUILTIN_PARENT = {
    "ValueError": "Exception", "TypeError": "Exception", "KeyError": "LookupError",
    "IndexError": "LookupError", "LookupError": "Exception", "RuntimeError": "Exception",
    "AttributeError": "Exception", "ZeroDivisionError": "ArithmeticError",
    "OverflowError": "ArithmeticError", "ArithmeticError": "Exception",
    "NotImplementedError": "RuntimeError", "FileNotFoundError": "OSError",
    "PermissionError": "OSError", "OSError": "Exception", "UnicodeDecodeError": "ValueError",
    "AssertionError": "Exception", "StopIteration": "Exception", "Exception": "BaseException",
}  # fmt: skip
_BUILTIN_SIBLING = {
    "ValueError": "TypeError", "TypeError": "ValueError", "KeyError": "IndexError",
    "IndexError": "KeyError", "LookupError": "ValueError", "AttributeError": "TypeError",
    "RuntimeError": "ValueError", "ZeroDivisionError": "OverflowError",
    "OverflowError": "ZeroDivisionError", "FileNotFoundError": "PermissionError",
    "PermissionError": "FileNotFoundError", "OSError": "ValueError",
    "NotImplementedError": "TypeError", "Exception": "RuntimeError",
}  # fmt: skip


def _exception_parents(sources: Collection[bytes]) -> dict[str, str]:
    """Class name → first base name, over the tree's classes, on top of the builtins."""
    parents = dict(_BUILTIN_PARENT)
    for data in sources:
        tree = _parse(data)
        for node in ast.walk(tree) if tree is not None else ():
            if (
                isinstance(node, ast.ClassDef)
                and node.bases
                and isinstance(node.bases[0], ast.Name)
            ):
                parents[node.name] = node.bases[0].id
    return parents


def _sibling(name: str, parents: Mapping[str, str]) -> str | None:
    parent = parents.get(name)
    kin = sorted(
        n for n, p in parents.items() if p == parent and n != name and n not in _BUILTIN_PARENT
    )
    return kin[0] if kin and name not in _BUILTIN_PARENT else _BUILTIN_SIBLING.get(name)


# --- the walker ----------------------------------------------------------------

_CMP_SWAP: dict[type[ast.cmpop], tuple[str, str]] = {
    ast.Lt: (r"<(?!=)", "<="), ast.LtE: (r"<=", "<"), ast.Gt: (r">(?!=)", ">="),
    ast.GtE: (r">=", ">"), ast.Eq: (r"==", "!="), ast.NotEq: (r"!=", "=="),
    ast.In: (r"\bin\b", "not in"), ast.NotIn: (r"\bnot\s+in\b", "in"),
    ast.Is: (r"\bis\b", "is not"), ast.IsNot: (r"\bis\s+not\b", "is"),
}  # fmt: skip
_ARITH_SWAP: dict[type[ast.operator], tuple[str, str]] = {
    ast.Add: (r"\+", "-"), ast.Sub: (r"-", "+"), ast.Mult: (r"\*", "//"),
    ast.FloorDiv: (r"//", "*"), ast.Div: (r"/", "*"), ast.Mod: (r"%", "//"),
}  # fmt: skip
_AUG_OPS: dict[type[ast.operator], str] = {
    ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/=", ast.FloorDiv: "//=",
    ast.Mod: "%=", ast.Pow: "**=", ast.LShift: "<<=", ast.RShift: ">>=", ast.BitAnd: "&=",
    ast.BitOr: "|=", ast.BitXor: "^=", ast.MatMult: "@=",
}  # fmt: skip
_MUTATORS = {
    "append", "extend", "insert", "pop", "popitem", "remove", "clear", "add", "discard",
    "update", "setdefault", "sort", "reverse",
}  # fmt: skip
_COPY_CALLS = {"list", "dict", "set", "tuple", "frozenset", "sorted", "copy", "deepcopy"}
_COPY_TEXT = re.compile(
    r"\b(?:list|dict|set|tuple|frozenset|sorted|copy|deepcopy)\s*\(|\[\s*:\s*\]"
)
_EXC_HEAD = re.compile(r"\s*(raise|try|except|finally|with\b.*\b(suppress|raises)\b)\b")
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Dict,
          ast.Set, ast.ListComp, ast.SetComp, ast.DictComp)  # fmt: skip
_ADDITIVE = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


def _is_int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _is_main_guard(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare):
        return False
    sides = [stmt.test.left, *stmt.test.comparators]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


def _is_dunder(stmt: ast.stmt) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else []
    return any(isinstance(t, ast.Name) and t.id in ("__all__", "__slots__") for t in targets)


def _outside_frame(src: _Source, stmt: ast.stmt) -> bool:
    """The classifier's "state that outlives the call": an attribute, an item, ``self``."""
    if isinstance(stmt, ast.Assign | ast.Delete):
        targets = stmt.targets
    elif isinstance(stmt, ast.AugAssign | ast.AnnAssign):
        targets = [stmt.target]
    else:
        return False
    text = " ".join(src.seg(t) for t in targets)
    return "." in text or "[" in text or re.match(r"(self|cls)\b", text) is not None


def _bindings(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """Local name → first line it is bound on (parameters: the ``def`` line)."""
    bound: dict[str, int] = {}
    a = func.args
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
        if arg is not None and arg.arg not in ("self", "cls"):
            bound.setdefault(arg.arg, func.lineno)
    todo: list[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound[node.id] = min(bound.get(node.id, node.lineno), node.lineno)
        todo.extend(ast.iter_child_nodes(node))
    return bound


class _Walker:
    """Collects every edit of one module (see the module docstring for what is skipped)."""

    def __init__(self, src: _Source, parents: Mapping[str, str], checker: Checker) -> None:
        self.src = src
        self.parents = parents
        self.checker = checker
        self.edits: list[_Edit] = []
        self.scope: list[str] = []
        self.bound: list[dict[str, int]] = [{}]
        self.unit: Unit | None = None

    def add(self, span: tuple[int, int], text: str, cat: BugCategory, op: str, what: str) -> None:
        scope = ".".join(self.scope) or "module level"
        self.edits.append(_Edit(span[0], span[1], text, cat, op, what, scope, self.unit))

    # statements

    def block(self, body: Sequence[ast.stmt], units: Sequence[Unit | None] | None = None) -> None:
        """Walk a block; ``units``, for a module or class body, gives each statement's unit."""
        around = self.unit
        for i, stmt in enumerate(body):
            if not (_is_docstring(stmt) or _is_main_guard(stmt) or _is_dunder(stmt)):
                self.unit = around if units is None else units[i]
                self.stmt(stmt, sole=len(body) == 1)
        self.unit = around

    def stmt(self, stmt: ast.stmt, *, sole: bool) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self.definition(stmt)
            return
        if self.src.own_lines(stmt):
            _statement_ops(self, stmt, sole=sole)
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.expr) and child is not getattr(stmt, "annotation", None):
                self.expr(child, stmt)
            elif isinstance(child, ast.excepthandler | ast.match_case | ast.withitem):
                self.clause(child, stmt)
        for field in ("body", "orelse", "finalbody"):
            self.block(getattr(stmt, field, []))

    def clause(self, node: ast.AST, stmt: ast.stmt) -> None:
        if isinstance(node, ast.ExceptHandler):
            _except_ops(self, node)
            self.block(node.body)
        elif isinstance(node, ast.match_case):
            if node.guard is not None:
                self.expr(node.guard, stmt)
            self.block(node.body)
        elif isinstance(node, ast.withitem):
            self.expr(node.context_expr, stmt)

    def definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        heads: list[ast.expr] = list(node.decorator_list)
        if isinstance(node, ast.ClassDef):
            heads += [*node.bases, *(k.value for k in node.keywords)]
        else:
            heads += [d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None]
        for expr in heads:
            self.expr(expr, node)
        self.scope.append(node.name)
        self.bound.append({} if isinstance(node, ast.ClassDef) else _bindings(node))
        around = self.unit
        if isinstance(node, ast.ClassDef):
            self.block(node.body, self.checker.body_units(node.body, node, around))
        else:
            self.unit = self.checker.function_unit(node, around)
            self.block(node.body, self.checker.body_units(node.body, node, self.unit))
        self.unit = around
        self.scope.pop()
        self.bound.pop()

    # expressions

    def expr(self, node: ast.expr, stmt: ast.stmt) -> None:
        if isinstance(node, ast.JoinedStr):
            return  # positions inside f-strings are not reliable before 3.12
        _expr_ops(self, node, stmt)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child, stmt)
            elif isinstance(child, ast.comprehension):
                for part in (child.iter, *child.ifs):
                    self.expr(part, stmt)
            elif isinstance(child, ast.keyword):
                self.expr(child.value, stmt)
            elif isinstance(child, ast.arguments):
                for d in (*child.defaults, *child.kw_defaults):
                    if d is not None:
                        self.expr(d, stmt)

    def other_category(self, offset: int, stmt: ast.stmt) -> BugCategory | None:
        """The category of a same-names edit at ``offset``: None on a line about an exception."""
        line = bisect.bisect_right(self.src.starts, offset)
        if _EXC_HEAD.match(self.src.line(line)):
            return None  # a raised error's message: any edit there is exception_handling
        if line == stmt.lineno and _outside_frame(self.src, stmt):
            return C.STATE_MUTATION
        return C.OTHER


# --- statement operators -------------------------------------------------------


def _drop(w: _Walker, stmt: ast.stmt, *, sole: bool) -> tuple[tuple[int, int], str]:
    """The edit removing a statement: its lines, or ``pass`` where the block would be empty."""
    if sole:
        return w.src.span(stmt), "pass"
    return w.src.whole_lines(stmt.lineno, stmt.end_lineno or stmt.lineno), ""


def _statement_ops(w: _Walker, stmt: ast.stmt, *, sole: bool) -> None:
    """Operators on a whole statement that fills its own lines."""
    if isinstance(stmt, ast.If):
        _if_ops(w, stmt, sole=sole)
    elif isinstance(stmt, ast.Assert):
        span, text = _drop(w, stmt, sole=sole)
        w.add(span, text, C.CONDITION_REMOVED, "drop assert", "removed an `assert` guard")
    elif isinstance(stmt, ast.Raise):
        _raise_ops(w, stmt)
    elif isinstance(stmt, ast.Return):
        _return_ops(w, stmt)
    else:
        _state_ops(w, stmt, sole=sole)


def _if_ops(w: _Walker, node: ast.If, *, sole: bool) -> None:
    src, test = w.src, node.test
    start = src.span(node)[0]
    if test.lineno == test.end_lineno == node.lineno and not isinstance(test, ast.UnaryOp):
        text = src.seg(test)
        if isinstance(test, ast.BoolOp | ast.Compare | ast.IfExp | ast.NamedExpr | ast.Lambda):
            text = f"({text})"
        w.add(src.span(test), f"not {text}", C.OTHER, "c -> not c", "negated an `if` condition")
    if src.data.startswith(b"elif", start) or node.orelse:
        return
    if len(node.body) == 1 and isinstance(node.body[0], ast.Raise):
        span, text = _drop(w, node, sole=sole)
        what = f"removed the guard `if {src.seg(test)}: raise ...`"
        w.add(span, text, C.CONDITION_REMOVED, "drop if-raise guard", what)
        return
    first = node.body[0]
    what = f"made the body of `if {src.seg(test)}` unconditional"
    if first.lineno == node.lineno:
        w.add((start, src.span(first)[0]), "", C.CONDITION_REMOVED, "drop if guard", what)
        return
    dedented = _dedented_body(src, node)
    if dedented is not None:
        span = src.whole_lines(node.lineno, node.end_lineno or node.lineno)
        w.add(span, dedented, C.CONDITION_REMOVED, "drop if guard", what)


_MAX_DEDENT = 8
"""Most body lines an ``if`` removal dedents: a larger patch is a rewrite, not a slip."""


def _dedented_body(src: _Source, node: ast.If) -> str | None:
    """The lines of the ``if``'s body one level out; None when that is not safe to do by text."""
    header_rest = src.text(src.span(node.test)[1], src.starts[node.lineno])
    if (node.end_lineno or node.lineno) - node.lineno > _MAX_DEDENT:
        return None
    if node.test.end_lineno != node.lineno or not re.fullmatch(r"[\s)]*:\s*(#.*)?\s*", header_rest):
        return None
    if any(
        isinstance(n, ast.Constant | ast.JoinedStr) and n.lineno != n.end_lineno
        for n in ast.walk(node)
    ):
        return None  # dedenting would change a multi-line string's text
    outer = re.match(r"[ \t]*", src.line(node.lineno))
    inner = re.match(r"[ \t]*", src.line(node.body[0].lineno))
    assert outer is not None and inner is not None  # [ \t]* always matches
    if not inner.group().startswith(outer.group()) or inner.group() == outer.group():
        return None
    extra = len(inner.group()) - len(outer.group())
    lines = []
    for number in range(node.lineno + 1, (node.end_lineno or node.lineno) + 1):
        line = src.line(number)
        lead = len(line) - len(line.lstrip(" \t"))
        lines.append(line if not line.strip() else line[min(extra, lead) :])
    return "".join(lines)


def _raise_ops(w: _Walker, node: ast.Raise) -> None:
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    if isinstance(exc, ast.Name) and exc.lineno == node.lineno:
        parent = w.parents.get(exc.id, "Exception")
        if parent == "BaseException" or parent == exc.id:
            parent = "RuntimeError"
        for new in dict.fromkeys((parent, _sibling(exc.id, w.parents))):
            if new is not None and new != exc.id:
                what = f"`raise {exc.id}` changed to `raise {new}`"
                w.add(w.src.span(exc), new, C.EXCEPTION_HANDLING, f"raise {exc.id} -> {new}", what)
    what = "replaced a `raise` by `pass`"
    w.add(w.src.span(node), "pass", C.EXCEPTION_HANDLING, "raise -> pass", what)


def _except_ops(w: _Walker, handler: ast.ExceptHandler) -> None:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for kind in kinds:
        if isinstance(kind, ast.Name) and kind.lineno == handler.lineno:
            new = _sibling(kind.id, w.parents) or w.parents.get(kind.id)
            if new is not None and new not in ("BaseException", kind.id):
                what = f"`except {kind.id}` changed to `except {new}`"
                w.add(
                    w.src.span(kind), new, C.EXCEPTION_HANDLING, f"except {kind.id} -> {new}", what
                )


def _return_ops(w: _Walker, node: ast.Return) -> None:
    value, src = node.value, w.src
    if value is None or (isinstance(value, ast.Constant) and value.value is None):
        return
    span, copies = src.span(value), _COPY_TEXT.search(src.seg(node)) is not None
    if not copies:  # dropping a copy is aliasing to the classifier, not a return value
        w.add(span, "None", C.RETURN_VALUE, "return x -> return None", "returned None instead")
    if node.lineno != node.end_lineno or copies:
        return
    if isinstance(value, ast.Constant) and isinstance(value.value, bool):
        new = str(not value.value)
        w.add(
            span, new, C.RETURN_VALUE, f"return {value.value} -> {new}", "negated a returned bool"
        )
    elif isinstance(value, ast.Name):
        bound = w.bound[-1]
        names = sorted(
            (n for n, line in bound.items() if n != value.id and line < node.lineno),
            key=lambda n: (-bound[n], n),
        )
        for name in names[:2]:
            what = f"returned `{name}` instead of `{value.id}`"
            w.add(span, name, C.RETURN_VALUE, "return a -> return b", what)
    elif isinstance(value, ast.IfExp):
        for branch, label in ((value.body, "if"), (value.orelse, "else")):
            what = f"returned the `{label}` branch of a conditional always"
            text = src.text(*src.grouped(branch))
            w.add(span, text, C.RETURN_VALUE, f"x if c else y -> {label} branch", what)


def _state_ops(w: _Walker, stmt: ast.stmt, *, sole: bool) -> None:
    src = w.src
    has_value = not isinstance(stmt, ast.AnnAssign) or stmt.value is not None
    assigns = isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign) and has_value
    if assigns and _outside_frame(src, stmt):
        assert isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign)  # narrowed above
        span, text = _drop(w, stmt, sole=sole)
        what = f"dropped the assignment to `{src.seg(_first_target(stmt))}`"
        w.add(span, text, C.STATE_MUTATION, "drop attribute/item assignment", what)
    if isinstance(stmt, ast.AugAssign):
        gap_start, gap_end = src.span(stmt.target)[1], src.span(stmt.value)[0]
        op = _AUG_OPS[type(stmt.op)]
        at = src.data.find(op.encode(), gap_start, gap_end)
        if at >= 0:
            what = f"`{op}` changed to `=`"
            w.add((at, at + len(op)), "=", C.STATE_MUTATION, f"{op} -> =", what)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and func.attr in _MUTATORS:
            span, text = _drop(w, stmt, sole=sole)
            what = f"dropped the call `.{func.attr}(...)`"
            w.add(span, text, C.STATE_MUTATION, f"drop .{func.attr}()", what)


def _is_literal(node: ast.expr) -> bool:
    """A constant or a display of constants (``("", False, None, 0)``, ``[[]]``, ``-1``)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _is_literal(k) for k in node.keys) and all(
            _is_literal(v) for v in node.values
        )
    return False


def _first_target(stmt: ast.Assign | ast.AugAssign | ast.AnnAssign) -> ast.expr:
    return stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target


# --- expression operators ------------------------------------------------------


def _expr_ops(w: _Walker, node: ast.expr, stmt: ast.stmt) -> None:
    """Operators on one expression node (its children are visited by the walker)."""
    if isinstance(node, ast.Compare):
        _compare_ops(w, node)
    elif isinstance(node, ast.BoolOp):
        _boolop_ops(w, node, stmt)
    elif isinstance(node, ast.BinOp):
        _binop_ops(w, node, stmt)
    elif isinstance(node, ast.UnaryOp):
        _unary_ops(w, node, stmt)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        _string_ops(w, node, stmt)
    elif isinstance(node, ast.Subscript):
        _subscript_ops(w, node, stmt)
    elif isinstance(node, ast.Call):
        _call_ops(w, node, stmt)


def _compare_ops(w: _Walker, node: ast.Compare) -> None:
    sides = [node.left, *node.comparators]
    for i, op in enumerate(node.ops):
        start, end = w.src.grouped(sides[i])[1], w.src.grouped(sides[i + 1])[0]
        pattern, new = _CMP_SWAP[type(op)]
        found = re.search(pattern.encode(), w.src.data[start:end])
        if found is None or b"#" in w.src.data[start:end]:
            continue
        old = re.sub(r"\s+", " ", found.group().decode())
        span = (start + found.start(), start + found.end())
        w.add(span, new, C.COMPARISON_OPERATOR, f"{old} -> {new}", f"`{old}` changed to `{new}`")


def _boolop_ops(w: _Walker, node: ast.BoolOp, stmt: ast.stmt) -> None:
    src = w.src
    old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
    spans = [src.grouped(v) for v in node.values]
    start, end = min(src.span(node)[0], spans[0][0]), src.span(node)[1]
    pieces, pos = [], start
    for (_, gap_start), (gap_end, _) in itertools.pairwise(spans):
        found = re.search(rf"\b{old}\b".encode(), src.data[gap_start:gap_end])
        if found is None or b"#" in src.data[gap_start:gap_end]:
            return
        pieces += [src.text(pos, gap_start + found.start()), new]
        pos = gap_start + found.end()
    text = "".join(pieces) + src.text(pos, end)
    w.add(
        (start, end), text, C.COMPARISON_OPERATOR, f"{old} -> {new}", f"`{old}` changed to `{new}`"
    )
    guard = isinstance(stmt, ast.If | ast.Assert) and src.span(stmt.test)[0] <= start
    if not guard or not node.lineno == node.end_lineno == stmt.lineno:
        return
    for i, value in enumerate(node.values):
        cut = (start, spans[1][0]) if i == 0 else (spans[i - 1][1], spans[i][1])
        what = f"dropped `{src.seg(value)}` from an `{old}` guard"
        w.add(cut, "", C.CONDITION_REMOVED, f"drop {old}-clause", what)


def _binop_ops(w: _Walker, node: ast.BinOp, stmt: ast.stmt) -> None:
    src = w.src
    start, end = src.grouped(node.left)[1], src.grouped(node.right)[0]
    swap = _ARITH_SWAP.get(type(node.op))
    found = re.search(swap[0].encode(), src.data[start:end]) if swap else None
    if swap is not None and found is not None and b"#" not in src.data[start:end]:
        category = w.other_category(start + found.start(), stmt)
        if category is not None:
            old, new = found.group().decode(), swap[1]
            span = (start + found.start(), start + found.end())
            w.add(span, new, category, f"{old} -> {new}", f"`{old}` changed to `{new}`")
    right = node.right
    if isinstance(node.op, ast.Add | ast.Sub) and _is_int(right) and src.seg(right) == "1":
        op = "+" if isinstance(node.op, ast.Add) else "-"
        what = f"dropped the `{op} 1`"
        w.add((start, src.span(node)[1]), "", C.OFF_BY_ONE, f"x {op} 1 -> x", what)


def _unary_ops(w: _Walker, node: ast.UnaryOp, stmt: ast.stmt) -> None:
    if not isinstance(node.op, ast.USub | ast.Not) or isinstance(node.operand, ast.Constant):
        return
    start = w.src.span(node)[0]
    category = w.other_category(start, stmt)
    if category is not None:
        old = "-" if isinstance(node.op, ast.USub) else "not"
        span = (start, w.src.grouped(node.operand)[0])
        w.add(span, "", category, f"{old}{' ' * (old == 'not')}x -> x", f"dropped a `{old}`")


def _single_string_token(text: str) -> bool:
    try:
        kinds = [t.type for t in tokenize.generate_tokens(io.StringIO(text).readline)]
    except (tokenize.TokenError, SyntaxError):
        return False
    return kinds.count(tokenize.STRING) == 1 and all(
        k in (tokenize.STRING, tokenize.NEWLINE, tokenize.ENDMARKER) for k in kinds
    )


def _string_ops(w: _Walker, node: ast.Constant, stmt: ast.stmt) -> None:
    src = w.src
    text = src.seg(node)
    quote = re.match(r"[rRuU]?(['\"])(?!\1\1)", text)
    if node.lineno != node.end_lineno or quote is None or not _single_string_token(text):
        return
    start = src.span(node)[0]
    value = stmt.value if isinstance(stmt, ast.Return | ast.Expr) else None
    if isinstance(stmt, ast.Expr) and isinstance(value, ast.Yield):
        value = value.value  # ``yield x`` hands back ``x``, as ``return x`` does
    elif isinstance(stmt, ast.Expr):
        value = None
    returned = (
        value is not None
        and stmt.lineno == node.lineno
        and (value is node or (_is_literal(value) and stmt.lineno == stmt.end_lineno))
    )
    category = C.RETURN_VALUE if returned else w.other_category(start, stmt)
    if category is not None:
        q = quote.group(1)
        new = f"{quote.group()}{'' if node.value else 'XX'}{q}"
        w.add(src.span(node), new, category, "string constant", f"changed {text} to {new}")


def _bound_ops(w: _Walker, node: ast.expr) -> None:
    """Off-by-one edits of a slice bound, an index or a ``range()`` argument."""
    src = w.src
    if _is_int(node):
        _int_ops(w, node, lowest=0)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _is_int(node.operand):
        _int_ops(w, node.operand, lowest=1)
    elif (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add | ast.Sub)
        and _is_int(node.right)
    ):
        _int_ops(w, node.right, lowest=1)
    else:
        simple = isinstance(node, _ATOMS) or (
            isinstance(node, ast.BinOp | ast.UnaryOp)
            and isinstance(node.op, (*_ADDITIVE, ast.USub, ast.UAdd, ast.Invert))
        )
        start, end = src.span(node)
        text = src.seg(node) if simple else f"({src.seg(node)})"
        for op in ("+", "-"):
            w.add(
                (start, end),
                f"{text} {op} 1",
                C.OFF_BY_ONE,
                f"n -> n {op} 1",
                f"`{src.seg(node)}` changed to `{text} {op} 1`",
            )


def _int_ops(w: _Walker, node: ast.expr, *, lowest: int) -> None:
    text = w.src.seg(node)
    if not text.isdigit():
        return
    value = int(text)
    for new in (value + 1, value - 1):
        if new >= lowest:
            w.add(
                w.src.span(node),
                str(new),
                C.OFF_BY_ONE,
                "k -> k±1",
                f"`{value}` changed to `{new}`",
            )


def _subscript_ops(w: _Walker, node: ast.Subscript, stmt: ast.stmt) -> None:
    index = node.slice
    if isinstance(index, ast.Slice):
        for bound in (index.lower, index.upper):
            if bound is not None:
                _bound_ops(w, bound)
        whole = index.lower is None and index.upper is None and index.step is None
        if whole and isinstance(node.ctx, ast.Load):
            _alias(w, node, node.value, stmt, "x[:] -> x")
    elif _is_int(index) or isinstance(index, ast.UnaryOp | ast.BinOp):
        _bound_ops(w, index)


def _call_ops(w: _Walker, node: ast.Call, stmt: ast.stmt) -> None:
    func, args = node.func, node.args
    if isinstance(func, ast.Name) and func.id == "range":
        for arg in args:
            if not isinstance(arg, ast.Starred):
                _bound_ops(w, arg)
    if node.keywords:
        return
    plain = len(args) == 1 and not isinstance(args[0], ast.Starred | ast.GeneratorExp)
    if isinstance(func, ast.Name) and func.id in _COPY_CALLS and plain:
        _alias(w, node, args[0], stmt, f"{func.id}(x) -> x")
    elif not isinstance(func, ast.Attribute):
        return
    elif isinstance(func.value, ast.Name) and func.value.id == "copy" and plain:
        _alias(w, node, args[0], stmt, f"copy.{func.attr}(x) -> x")  # the ``copy`` module
    elif func.attr == "copy" and not args:
        _alias(w, node, func.value, stmt, "x.copy() -> x")


def _alias(w: _Walker, node: ast.expr, inner: ast.expr, stmt: ast.stmt, op: str) -> None:
    """Replace a defensive copy by the object it copies (a single-line one only)."""
    start = w.src.span(node)[0]
    if node.lineno != node.end_lineno or w.other_category(start, stmt) is None:
        return
    text = w.src.seg(inner) if isinstance(inner, _ATOMS) else f"({w.src.seg(inner)})"
    what = f"`{w.src.seg(node)}` changed to `{text}` (an alias, not a copy)"
    w.add(w.src.span(node), text, C.STATE_MUTATION, op, what)
