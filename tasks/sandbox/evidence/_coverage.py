"""Did a reproduction test execute the bug? The bug's lines on each tree, and a trace read against them.

The bug is where the buggy and the clean tree differ. On each tree its lines
are that tree's side of the difference, where a line event can report them
(comments, blank lines and docstrings never run); a change with no such line
(a deleted statement, a comment-only edit) stands for the nearest line that
can run, in the same function where there is one. A test executes the bug on
a tree when its trace (``harness/trace.py``) shows one of those lines ran.

Where a trace cannot say, the answer is "not measured" with the reason, never
"not executed": part of the bug outside ``.py`` files, a file this
interpreter cannot compile, a deleted definition (nothing runs in its place),
a trace that ended early, a process that started another program, a tracer
that was replaced.
"""

from __future__ import annotations

import ast
import difflib
import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import CodeType

from bughunt.models import Observation, Status, Tree
from corpus import parse_python

Files = Mapping[str, bytes]


@dataclass(frozen=True, slots=True)
class BugLines:
    """The lines of one tree a test must execute to execute the bug, or why that cannot be told."""

    lines: Mapping[str, frozenset[int]]
    """Path → lines (1-based) of the tree that stand for the bug."""
    unmeasured: str | None = None
    """Why coverage cannot tell whether the bug ran on this tree; None when it can."""


@dataclass(frozen=True, slots=True)
class Coverage:
    """What one execution's trace says about the bug."""

    executed: bool | None
    """True: a line of the bug ran; False: none ran and the trace is whole; None: not measured."""
    reason: str | None = None
    """Why not measured; None when measured."""
    lines: int = 0
    """Lines of the tree the trace shows ran."""


def _own_lines(code: CodeType) -> set[int]:
    lines = {line for _start, _end, line in code.co_lines() if line is not None}
    if code.co_name != "<module>":
        lines.discard(code.co_firstlineno)
    return lines


def _codes(code: CodeType, name: str = "") -> Iterator[tuple[str, CodeType]]:
    """Every code object under ``code`` with a qualified name made of the enclosing names."""
    yield name, code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _codes(const, f"{name}.{const.co_name}")


@dataclass(frozen=True, slots=True)
class _Layout:
    """Which code object each line that can run belongs to (its qualified name)."""

    owner: Mapping[int, str]
    starts: Mapping[str, int]
    """Qualified name → first line of a definition (not the module)."""
    statement: Mapping[int, int]
    """Line → first line of the innermost statement it is part of."""


def _statements(tree: ast.Module) -> dict[int, int]:
    """Each line of a statement → that statement's first line, the innermost statement winning."""
    out: dict[int, int] = {}
    nodes = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.stmt)),
        key=lambda n: (n.end_lineno or n.lineno) - n.lineno,
        reverse=True,
    )
    for node in nodes:  # widest first: an inner statement overwrites its lines
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            out[line] = node.lineno
    return out


@functools.lru_cache(maxsize=256)
def statement_starts(source: bytes, path: str) -> Mapping[int, int]:
    """Each line of ``source``'s statements → the first line of the innermost one (empty when it
    does not parse)."""
    try:
        return _statements(parse_python(source, path))
    except (SyntaxError, ValueError):
        return {}


def _layout(source: bytes, path: str) -> _Layout:
    module = compile(source, path, "exec", dont_inherit=True)
    owner: dict[int, str] = {}
    starts: dict[str, int] = {}
    for name, code in _codes(module):
        if name:
            starts[name] = code.co_firstlineno
        for line in _own_lines(code):
            owner[line] = name
    statement = _statements(parse_python(source, path))  # one thread at a time (see corpus)
    return _Layout(owner, starts, statement)


def _nearest(layout: _Layout, point: int, near: str | None) -> set[int]:
    """The line that stands for a change with no line of its own, after buggy line ``point``.

    In the code object ``near`` (the one the other side's lines belonged to)
    when it is on this side: its first line after the point, else its last
    before. Otherwise the first line after the point in any code, else the
    last before.
    """
    for scope in ([near] if near is not None and near in layout.owner.values() else []) + [None]:
        lines = sorted(line for line, name in layout.owner.items() if scope in (None, name))
        after = [line for line in lines if line > point]
        before = [line for line in lines if line <= point]
        if after or before:
            return {after[0]} if after else {before[-1]}
    return set()


def _changed(old: list[bytes], new: list[bytes]) -> Iterator[tuple[range, range]]:
    """Each change between two files' lines: (0-based lines of ``old``, of ``new``)."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            yield range(i1, i2), range(j1, j2)


def _file_lines(path: str, old: bytes, new: bytes) -> set[int] | str:
    """The lines of ``new`` standing for its changes from ``old``, or why there are none to measure."""
    try:
        here = _layout(new, path)
        there = _layout(old, path) if old else None
    except (SyntaxError, ValueError) as exc:
        return f"{path} does not compile here ({type(exc).__name__})"
    lines: set[int] = set()
    for gone, came in _changed(old.splitlines(), new.splitlines()):
        # A changed line and the first line of its statement: interpreters before 3.10 report a
        # statement that spans lines at its first line only.
        own = {j + 1 for j in came} & here.owner.keys()
        own |= {here.statement[line] for line in own if line in here.statement}
        if own:
            lines |= own & here.owner.keys()
            continue
        if there is not None and any(start - 1 in gone for start in there.starts.values()):
            return f"the bug removes a definition from {path}: nothing runs in its place"
        near = (
            next((there.owner[i + 1] for i in gone if i + 1 in there.owner), None)
            if there
            else None
        )
        lines |= _nearest(here, came.start, near)
    return lines


def bug_lines(other: Files, tree: Files) -> BugLines:
    """The lines of ``tree`` where it differs from ``other``, as a test's trace can show them."""
    lines: dict[str, frozenset[int]] = {}
    for path in sorted(set(other) | set(tree)):
        old, new = other.get(path, b""), tree.get(path, b"")
        if old == new or path not in tree:
            continue
        if not path.endswith(".py"):
            return BugLines({}, f"part of the bug is outside .py files ({path})")
        if path.rsplit("/", 1)[-1] == "conftest.py":
            # pytest runs its hooks outside the windows the harness traces
            return BugLines({}, f"part of the bug is in {path}, whose hooks run untraced")
        found = _file_lines(path, old, new)
        if isinstance(found, str):
            return BugLines({}, found)
        if found:
            lines[path] = frozenset(found)
    if not lines:
        return BugLines({}, "no line of this tree that can run stands for the bug")
    return BugLines(lines)


@dataclass(frozen=True, slots=True)
class Trace:
    """One execution's trace, read: lines that ran by file, and whether it is whole."""

    ran: Mapping[str, frozenset[int]]
    partial: str | None
    """Why a line missing from the trace may still have run; None when the trace is whole."""


def read_trace(records: bytes | None) -> Trace:
    """``harness/trace.py``'s records as lines by file. Pure; bad records make the trace partial."""
    if records is None:
        return Trace({}, "the execution returned no trace")
    names: dict[str, str] = {}
    ran: dict[str, set[int]] = {}
    flags: str | None = None
    for raw in records.decode("utf-8", "surrogateescape").splitlines():
        kind, _, rest = raw.partition(" ")
        if kind == "F":
            index, _, path = rest.partition(" ")
            names[index] = path
        elif kind == "E":
            flags = rest
        elif kind in names and rest.isdigit():
            ran.setdefault(names[kind], set()).add(int(rest))
        else:
            return Trace(_frozen(ran), "the trace has a record it cannot read")
    return Trace(_frozen(ran), _partial(flags))


def _frozen(ran: Mapping[str, set[int]]) -> dict[str, frozenset[int]]:
    return {path: frozenset(lines) for path, lines in ran.items()}


def _partial(flags: str | None) -> str | None:
    if flags is None:
        return "the trace ended early (the process was killed or left without exiting)"
    if "S" in flags:
        return "the test started another program, whose lines are not traced"
    if "R" in flags:
        return "another tracer replaced the harness's"
    return None


def coverage_of(trace: Trace, bug: BugLines) -> Coverage:
    """Whether ``trace`` shows the bug ran; a line that ran counts even in a partial trace."""
    count = sum(len(lines) for lines in trace.ran.values())
    if bug.unmeasured is not None:
        return Coverage(None, bug.unmeasured, count)
    if any(trace.ran.get(path, frozenset()) & lines for path, lines in bug.lines.items()):
        return Coverage(True, None, count)
    if trace.partial is not None:
        return Coverage(None, trace.partial, count)
    return Coverage(False, None, count)


def annotations_of(coverage: Coverage) -> dict[str, object]:
    """An execution's coverage as its observation's annotations."""
    out: dict[str, object] = {"bug_executed": coverage.executed, "lines_run": coverage.lines}
    if coverage.reason is not None:
        out["coverage_reason"] = coverage.reason
    return out


_DECIDING = (Status.FAIL, Status.TIMEOUT)


def bug_coverage(observations: Sequence[Observation]) -> Coverage:
    """Whether a pair's test executed the bug where it failed or hung on a buggy tree.

    True when any such execution ran a line of the bug; False when none did
    and at least one of them was measured; otherwise not measured, with the
    first reason recorded (or, when no execution failed on a buggy tree,
    that there is nothing to measure).
    """
    deciding = [o for o in observations if o.tree is Tree.BUGGY and o.status in _DECIDING]
    said = [o.annotations.get("bug_executed") for o in deciding]
    lines = max((int(o.annotations.get("lines_run") or 0) for o in deciding), default=0)
    if True in said:
        return Coverage(True, None, lines)
    if False in said:
        return Coverage(False, None, lines)
    reasons = [
        str(o.annotations["coverage_reason"])
        for o in deciding
        if "coverage_reason" in o.annotations
    ]
    if reasons:
        return Coverage(None, reasons[0], lines)
    if deciding:
        return Coverage(None, "the executions carry no coverage", lines)
    return Coverage(None, "the test never failed on the buggy tree", lines)
