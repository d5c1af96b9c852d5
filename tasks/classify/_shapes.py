"""What a changed line's tokens look like: brackets, alignments, literals, terms, targets.

Pure helpers over token tuples (``_changes.tokenize``) that the category rules
(``_rules.py``) share. Each is total on any tokens and linear in the line's
length, except where its docstring says otherwise; none raises.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tasks.classify._changes import NUMBER, after_braces

OPENERS = {"(", "[", "{"}
CLOSERS = {")", "]", "}"}
ORDERING = {"<", "<=", ">", ">="}
TERM_OPS = {"+", "-", "*", "/", "//", "%", "**", "@", "|", "&", "^", "<<", ">>"}
OPERAND_BOUNDARY = {
    ",", ":", ";", "=", "?", "!", "not", "and", "or", "&&", "||", "if", "elif", "else", "while",
    "return", "yield", "assert", "lambda", "in", "not in", "is", "is not", "==", "!=", "===",
    "!==", "<", "<=", ">", ">=",
}  # fmt: skip
ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", ">>=", "<<=", "&=", "|=", "^="}
NOT_TARGET = {
    "if", "elif", "else", "while", "for", "return", "yield", "def", "class", "lambda", "with",
    "assert", "raise", "import", "from", "print", "case", "match", "async", "await", "@",
}  # fmt: skip


def top_level(tokens: Sequence[str]) -> list[str] | None:
    """The tokens outside any brackets; None when the brackets do not balance."""
    depth, top = 0, []
    for tok in tokens:
        if tok in CLOSERS:
            depth -= 1
        if depth == 0 and tok not in CLOSERS:
            top.append(tok)
        if tok in OPENERS:
            depth += 1
        if depth < 0:
            return None
    return top if depth == 0 else None


def removals(longer: Sequence[str], shorter: Sequence[str]) -> range:
    """Every ``i`` where dropping ``longer[i : i + k]`` leaves ``shorter`` (``k`` the length difference).

    A token diff picks one alignment (``a and b and c`` → ``a and c`` may
    drop ``and b`` or ``b and``); the rules judge every equivalent one. Empty
    when ``shorter`` is not ``longer`` minus one contiguous run.
    """
    k = len(longer) - len(shorter)
    if k <= 0:
        return range(0)
    head = 0
    while head < len(shorter) and longer[head] == shorter[head]:
        head += 1
    tail = 0
    while tail < len(shorter) and longer[-1 - tail] == shorter[-1 - tail]:
        tail += 1
    # Dropping at i leaves longer[:i] == shorter[:i] (i <= head) and
    # longer[i + k:] == shorter[i:] (i >= len(longer) - k - tail).
    return range(max(0, len(longer) - k - tail), min(head, len(shorter)) + 1)


def is_constant(tok: str) -> bool:
    """A number or a plain string: not an f-string or template, which compute their text."""
    if NUMBER.match(tok):
        return True
    prefix = re.match(r"^[A-Za-z]*", tok)
    return tok[-1:] in ("'", '"') and prefix is not None and "f" not in prefix.group().lower()


def is_literal(tokens: Sequence[str]) -> bool:
    """A constant or a display of constants: ``0``, ``-1``, ``"a"``, ``None``, ``[]``, ``[[]]``, ``{"a": 1}``.

    Brackets must balance: the first line of a longer expression is no literal.
    """
    structure = OPENERS | CLOSERS | {",", ":"}
    return (
        bool(tokens)
        and top_level(tokens) is not None
        and all(
            tok in structure
            or tok in ("True", "False", "None")
            or is_constant(tok)
            or (
                tok in ("-", "+")
                and i + 1 < len(tokens)
                and NUMBER.match(tokens[i + 1]) is not None
            )
            for i, tok in enumerate(tokens)
        )
    )


def is_term(tokens: Sequence[str]) -> bool:
    """An operand with its binary operator (``rest +``, ``- offset``), brackets balanced.

    The operand holds nothing that binds looser than arithmetic (no comparison,
    ``and``/``or``, conditional or comma outside brackets).
    """
    top = top_level(tokens)
    if top is None or len(tokens) < 2 or not (top[0] in TERM_OPS or top[-1] in TERM_OPS):
        return False
    return not any(tok in OPERAND_BOUNDARY or tok == "for" for tok in top)


def is_branch(tokens: Sequence[str]) -> bool:
    """A conditional expression's test and one branch (``if c else y``, ``x if c else``)."""
    top = top_level(tokens)
    return top is not None and "if" in top and "else" in top


def _operand_end(tokens: Sequence[str], start: int, step: int) -> int:
    """Where the operand beside a comparison ends: the first operand boundary, walking by ``step``."""
    depth, i = 0, start
    while 0 <= i < len(tokens):
        tok = tokens[i]
        opens, closes = (OPENERS, CLOSERS) if step > 0 else (CLOSERS, OPENERS)
        if tok in opens:
            depth += 1
        elif tok in closes:
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0 and tok in OPERAND_BOUNDARY:
            return i
        i += step
    return i


def operands_swapped(old: Sequence[str], new: Sequence[str]) -> bool:
    """``a < b`` → ``b < a``: an ordering comparison reversed by swapping its sides.

    Each side runs to the nearest operand boundary (a comma, a connective,
    another comparison, an unmatched bracket). Quadratic in the line's length
    at worst, and only for lines holding the same tokens in another order.
    """
    if len(old) != len(new) or sorted(old) != sorted(new):
        return False
    for p, tok in enumerate(old):
        if tok not in ORDERING:
            continue
        left = _operand_end(old, p - 1, -1) + 1
        right = _operand_end(old, p + 1, 1)
        swapped = (*old[:left], *old[p + 1 : right], tok, *old[left:p], *old[right:])
        if left < p < right - 1 and swapped == tuple(new):
            return True
    return False


def assignment(tokens: Sequence[str]) -> tuple[tuple[str, ...], str] | None:
    """(target tokens, operator) of an assignment, augmented assignment, ``del`` or ``++``.

    A chained assignment's targets are all of them (``k = d[j] = v`` stores into ``d[j]``).
    """
    head = tuple(after_braces(tokens))
    if not head or head[0] in NOT_TARGET:
        return None
    if head[0] == "del":
        return head[1:], "del"
    depth = 0
    for i, tok in enumerate(head):
        if tok in ("(", "[", "{"):
            depth += 1
        elif tok in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and i > 0 and tok in ASSIGN_OPS:
            if tok == "=" and _keyword_arguments(head):
                return None  # ``name=value,`` / ``n=3):``: keyword arguments of a call
            return _chained(head, i), tok
        elif depth == 0 and tok in ("++", "--"):
            return (head[:i] or head[i + 1 :]), tok
    return None


def _keyword_arguments(tokens: Sequence[str]) -> bool:
    """A line of a call's arguments: ends in ``,`` with its brackets closed, or closes one it did not open."""
    depth = 0
    for tok in tokens:
        depth += (tok in OPENERS) - (tok in CLOSERS)
        if depth < 0:
            return True
    return tokens[-1] == "," and depth == 0


def _chained(head: Sequence[str], first: int) -> tuple[str, ...]:
    """Every target of ``a = b[k] = value``: the tokens before the last ``=`` outside brackets.

    Chaining stops at a ``,`` or ``lambda`` outside brackets: ``f = lambda
    a=1: a`` has the one target ``f``.
    """
    last, depth = first, 0
    if head[first] == "=":
        for i in range(first + 1, len(head)):
            tok = head[i]
            depth += (tok in OPENERS) - (tok in CLOSERS)
            if depth < 0 or (depth == 0 and tok in (",", "lambda")):
                break
            if depth == 0 and tok == "=":
                last = i
    return tuple(head[:last])
