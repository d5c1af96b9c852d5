"""Behaviour-equal twins of the bug's code: the same computation, written and compiled otherwise.

A test that found the bug and checks its text (the operator on the buggy line,
the function's bytecode) instead of running it tells the trees apart without
testing what the code does. On a twin, the bug's lines compute what they
computed, in the same order and with the same effects, but read differently
and compile to other bytecode; a test that runs the bug does the same there,
a test that reads it does not.

On the bug's lines (``BugLines`` of the tree), each rewrite is equivalent by
construction, for any values, not by testing:

- a comparison, arithmetic or unary operator becomes the ``operator``
  module's function the language defines as that operation
  (``a <= b`` → ``__import__("operator").le(a, b)``); ``a in b`` passes its
  operands through a function that evaluates them in their order before
  ``operator.contains(b, a)``, and ``not in`` is its ``operator.not_``;
- a chained comparison keeps its short-circuit: ``a < b < c`` becomes
  ``(lt(a, (t := b)) and lt(t, c))`` with a fresh ``_bughunt_`` name, never in
  a class body (the name would become an attribute), which the chain
  evaluated once too;
- an integer constant from 0 to 256 becomes a sum of two smaller ones
  (``operator.add``; the interpreter shares these objects, so identity
  holds too);
- a bug line none of those changed has its statement's expression passed
  through an identity function, ``(lambda v: v)((…))``, evaluated where it was.

Left as they are: annotations (strings where evaluation is postponed),
f-strings, patterns of ``match``, decorators, ``and``/``or`` (no function
short-circuits), augmented assignment (its target would be evaluated twice).
A twin adds to the running program only names that start with ``_bughunt_``
and a frame per identity call.

The twin is spliced into the file's own text at the parser's positions, never
regenerated from the tree: comments, layout and every other line stay, and no
line moves. Each result is compiled; a file whose twin does not compile
(the host parses the target's code) keeps its text and the twin says why.
"""

from __future__ import annotations

import ast
import functools
import random
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from corpus import parse_python
from tasks.sandbox.evidence._coverage import BugLines

Files = Mapping[str, bytes]

_OP = b'__import__("operator").'
_PREFIX = "_bughunt_"
_IDENTITY = b"(lambda _bughunt_v: _bughunt_v)(("
_COMPARE = {
    ast.Lt: ("lt", b"<"),
    ast.LtE: ("le", b"<="),
    ast.Gt: ("gt", b">"),
    ast.GtE: ("ge", b">="),
    ast.Eq: ("eq", b"=="),
    ast.NotEq: ("ne", b"!="),
    ast.Is: ("is_", b"is"),
    ast.IsNot: ("is_not", b"isnot"),
    ast.In: ("in", b"in"),
    ast.NotIn: ("not in", b"notin"),
}
_BINARY = {
    ast.Add: ("add", b"+"),
    ast.Sub: ("sub", b"-"),
    ast.Mult: ("mul", b"*"),
    ast.Div: ("truediv", b"/"),
    ast.FloorDiv: ("floordiv", b"//"),
    ast.Mod: ("mod", b"%"),
    ast.Pow: ("pow", b"**"),
    ast.LShift: ("lshift", b"<<"),
    ast.RShift: ("rshift", b">>"),
    ast.BitOr: ("or_", b"|"),
    ast.BitXor: ("xor", b"^"),
    ast.BitAnd: ("and_", b"&"),
    ast.MatMult: ("matmul", b"@"),
}
_UNARY = {
    ast.USub: ("neg", b"-"),
    ast.UAdd: ("pos", b"+"),
    ast.Invert: ("invert", b"~"),
    ast.Not: ("not_", b"not"),
}
_OPAQUE_FIELDS = frozenset(
    {"annotation", "returns", "pattern", "decorator_list", "type_comment", "type_params"}
)
"""Fields never rewritten: their text is data (annotations), a grammar of its own (patterns), or
outside the node's own span (decorators)."""
_WRAPPED = {
    ast.Return: ("value",),
    ast.Assign: ("value",),
    ast.AnnAssign: ("value",),
    ast.AugAssign: ("value",),
    ast.Expr: ("value",),
    ast.If: ("test",),
    ast.While: ("test",),
    ast.Assert: ("test", "msg"),
    ast.For: ("iter",),
    ast.AsyncFor: ("iter",),
    ast.Raise: ("exc", "cause"),
}
"""Statement fields whose expression the identity fallback wraps."""
_COMMENT = re.compile(rb"#[^\r\n]*")


@dataclass(frozen=True, slots=True)
class Twin:
    """A tree with the bug's code written another way, or why some of it could not be."""

    files: Files
    changed: Mapping[str, frozenset[int]]
    """Path → the bug's lines (1-based) whose text the twin changed."""
    text: Mapping[str, Mapping[int, bytes]]
    """Path → every line (1-based) the twin wrote otherwise → its new text."""
    short: str | None = None
    """Why a bug line or file kept its text; None when every line of the bug changed."""

    def describe(self) -> dict[str, object]:
        """The twin as an observation's annotation: enough to rebuild it from the tree."""
        return {
            "changed": {path: sorted(lines) for path, lines in sorted(self.changed.items())},
            "lines": [
                [path, line, text.decode("utf-8", "replace")]
                for path, lines in sorted(self.text.items())
                for line, text in sorted(lines.items())
            ],
            "short": self.short,
        }


def twin(files: Files, bug: BugLines, seed: int) -> Twin:
    """``files`` with the bug's lines on this tree rewritten into behaviour-equal twins.

    Pure. Files the bug has no line in come back as they are.
    """
    out = dict(files)
    changed: dict[str, frozenset[int]] = {}
    short: list[str] = []
    for path, lines in sorted(bug.lines.items()):
        if not path.endswith(".py") or path not in files or not lines:
            continue
        made = _twin_file(path, files[path], frozenset(lines), seed)
        if isinstance(made, str):
            short.append(f"{path}: {made}")
            continue
        text, moved = made
        out[path] = text
        changed[path] = moved
        kept = sorted(lines - moved)
        if kept:
            short.append(f"{path}: line {', '.join(map(str, kept))} has no other form here")
    if bug.unmeasured:
        short.append(bug.unmeasured)
    rewritten = {
        path: {
            i + 1: new
            for i, (old, new) in enumerate(
                zip(
                    files[path].splitlines(keepends=True),
                    out[path].splitlines(keepends=True),
                    strict=True,
                )
            )
            if old != new
        }
        for path in changed
    }
    return Twin(out, changed, rewritten, "; ".join(short) or None)


@functools.lru_cache(maxsize=256)
def _twin_file(
    path: str, data: bytes, lines: frozenset[int], seed: int
) -> tuple[bytes, frozenset[int]] | str:
    """The file's twin and the bug lines it changed, or why there is none."""
    try:
        module = parse_python(data, path)
    except (SyntaxError, ValueError):
        return "does not parse here"
    for chains in (True, False):
        render = _Render(_Source(data), lines, chains, random.Random(seed))  # noqa: S311 -- replayable
        text = _identity_wrapped(render.module(module), data, lines, path)
        if text is not None and _compiles(text, path):
            moved = frozenset(line for line in lines if _line(text, line) != _line(data, line))
            if not moved:
                return "nothing on the bug's lines has another form here"
            return text, moved
    return "its twin does not compile here"


def _compiles(text: bytes, path: str) -> bool:
    try:
        compile(text, path, "exec", dont_inherit=True)  # source text: no ``ast`` objects built
    except (SyntaxError, ValueError):
        return False
    return True


def _line(data: bytes, line: int) -> bytes:
    lines = data.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else b""


class _Source:
    """A file's bytes and the offset of each line: ``ast`` columns are UTF-8 byte offsets."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts = [0]
        for line in data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.starts[node.lineno - 1] + node.col_offset,  # type: ignore[attr-defined]
            self.starts[node.end_lineno - 1] + node.end_col_offset,  # type: ignore[attr-defined]
        )


def _positioned(node: ast.AST, scope: str) -> Iterator[tuple[ast.AST, str]]:
    """The nearest descendants of ``node`` that have a position, each with its scope: the
    body of a function or lambda is a function's, the body of a class a class's."""
    for name, value in ast.iter_fields(node):
        if name in _OPAQUE_FIELDS:
            continue
        inner = scope
        if name == "body" and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner = "function"
        elif name == "body" and isinstance(node, ast.ClassDef):
            inner = "class"
        for child in value if isinstance(value, list) else [value]:
            if not isinstance(child, ast.AST):
                continue
            if hasattr(child, "end_col_offset"):
                yield child, inner
            else:
                yield from _positioned(child, inner)


@dataclass
class _Render:
    src: _Source
    lines: frozenset[int]
    chains: bool
    rng: random.Random
    temps: int = 0

    def module(self, module: ast.Module) -> bytes:
        return self._splice(module, 0, len(self.src.data), "module")

    def _touches(self, node: ast.AST) -> bool:
        first, last = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        return any(first <= line <= last for line in self.lines)

    def text(self, node: ast.AST, scope: str) -> bytes:
        start, end = self.src.span(node)
        if isinstance(node, ast.JoinedStr) or not self._touches(node):
            return self.src.data[start:end]
        made = self._rewrite(node, scope)
        return made if made is not None else self._splice(node, start, end, scope)

    def _splice(self, node: ast.AST, start: int, end: int, scope: str) -> bytes:
        out: list[bytes] = []
        pos = start
        children = sorted(_positioned(node, scope), key=lambda c: self.src.span(c[0]))
        for child, inner in children:
            first, last = self.src.span(child)
            if first < pos or last > end:
                continue  # outside the node's own text (a decorator) or already written
            out += [self.src.data[pos:first], self.text(child, inner)]
            pos = last
        out.append(self.src.data[pos:end])
        return b"".join(out)

    def _rewrite(self, node: ast.AST, scope: str) -> bytes | None:
        if isinstance(node, ast.Compare):
            return self._compare(node, scope)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            name, token = _BINARY[type(node.op)]
            parts = self._operands(node, [node.left, node.right], [token], scope)
            return None if parts is None else _OP + name.encode() + b"(" + b",".join(parts) + b")"
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return self._unary(node, scope)
        if (
            isinstance(node, ast.Constant)
            and type(node.value) is int
            and 0 <= node.value <= 256
            and node.lineno in self.lines
        ):
            part = self.rng.randint(1, node.value - 1) if node.value > 1 else 0
            return _OP + b"add(%d, %d)" % (part, node.value - part)
        return None

    def _unary(self, node: ast.UnaryOp, scope: str) -> bytes | None:
        name, token = _UNARY[type(node.op)]
        start, end = self.src.span(node)
        first, last = self.src.span(node.operand)
        prefix = self.src.data[start:first]
        if not prefix.startswith(token):
            return None
        body = prefix[len(token) :] + self.text(node.operand, scope) + self.src.data[last:end]
        return _OP + name.encode() + b"(" + body + b")"

    def _compare(self, node: ast.Compare, scope: str) -> bytes | None:
        tokens = [_COMPARE[type(op)] for op in node.ops]
        operands = [node.left, *node.comparators]
        parts = self._operands(node, operands, [token for _name, token in tokens], scope)
        if parts is None:
            return None
        if len(tokens) == 1:
            return _call(tokens[0][0], parts[0], parts[1])
        if not self.chains or scope == "class":
            return None
        calls = []
        left = parts[0]
        for i, (name, _token) in enumerate(tokens):
            right = parts[i + 1]
            if i + 1 < len(tokens):
                self.temps += 1
                temp = f"{_PREFIX}t{self.temps}".encode()
                calls.append(_call(name, left, b"(" + temp + b" := " + right + b")"))
                left = temp
            else:
                calls.append(_call(name, left, right))
        return b"(" + b" and ".join(calls) + b")"

    def _operands(
        self, node: ast.AST, operands: list[ast.expr], tokens: list[bytes], scope: str
    ) -> list[bytes] | None:
        """Each operand's text with the parentheses and comments around it, the operator tokens
        between them taken out; None when a token is not where the tree says."""
        start, end = self.src.span(node)
        spans = [self.src.span(o) for o in operands]
        before = [self.src.data[start : spans[0][0]]]
        after: list[bytes] = []
        for (_first, last), (nxt, _end), token in zip(spans[:-1], spans[1:], tokens, strict=True):
            split = _split(self.src.data[last:nxt], token)
            if split is None:
                return None
            after.append(split[0])
            before.append(split[1])
        after.append(self.src.data[spans[-1][1] : end])
        return [
            head + self.text(operand, scope) + tail
            for head, operand, tail in zip(before, operands, after, strict=True)
        ]


def _call(name: str, left: bytes, right: bytes) -> bytes:
    if name == "in":
        return (
            _OP
            + b"contains(*(lambda _bughunt_a, _bughunt_b: (_bughunt_b, _bughunt_a))("
            + (left + b"," + right + b"))")
        )
    if name == "not in":
        return _OP + b"not_(" + _call("in", left, right) + b")"
    return _OP + name.encode() + b"(" + left + b"," + right + b")"


def _split(gap: bytes, token: bytes) -> tuple[bytes, bytes] | None:
    """``gap`` (the text between two operands) cut around its operator token: the text before
    and after it. None when the gap holds anything but the token, parentheses, space, comments
    and line continuations, or the token spans lines."""
    bare = _COMMENT.sub(lambda m: b" " * len(m.group()), gap)
    chars = [i for i, c in enumerate(bare) if chr(c) not in " \t\f\r\n\\()"]
    if bytes(bare[i] for i in chars) != token or not chars:
        return None
    first, last = chars[0], chars[-1] + 1
    if b"\n" in gap[first:last] or b"\r" in gap[first:last]:
        return None
    return gap[:first], gap[last:]


def _identity_wrapped(
    text: bytes, original: bytes, lines: frozenset[int], path: str
) -> bytes | None:
    """``text`` with the expression of each statement on a bug line the operator rewrites left
    as it was passed through an identity function; None when ``text`` does not parse."""
    kept = {line for line in lines if _line(text, line) == _line(original, line)}
    if not kept:
        return text
    try:
        module = parse_python(text, path)
    except (SyntaxError, ValueError):
        return None
    src = _Source(text)
    spans: list[tuple[int, int]] = []
    for node in ast.walk(module):
        for field in _WRAPPED.get(type(node), ()):
            value = getattr(node, field)
            if value is None or _docstring(node):
                continue
            if any(value.lineno <= line <= value.end_lineno for line in kept):
                spans.append(src.span(value))
    out: list[bytes] = []
    pos = 0
    for first, last in sorted(spans):
        if first < pos:
            continue  # inside one already wrapped
        out += [text[pos:first], _IDENTITY, text[first:last], b"))"]
        pos = last
    out.append(text[pos:])
    return b"".join(out)


def _docstring(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )
