"""Rule-based bug category of a patch, from its changes (``_changes.py``).

How changes become a category. Each rule below looks at one change (a pair,
or a lone line). The case's category is the first rule, in this priority
order, that any of its changes satisfies:

1. ``condition_removed`` — :func:`condition_removed`
2. ``comparison_operator`` — :func:`comparison_operator`
3. ``off_by_one`` — :func:`off_by_one`
4. ``exception_handling`` — :func:`exception_handling`
5. ``return_value`` — :func:`return_value`
6. ``state_mutation`` — :func:`state_mutation`
7. ``other`` — none of the above.

The order goes from the most specific shape to the most general: a removed
``if`` that guarded a ``raise`` is a missing condition, not an exception
change; ``start = (page - 1) * n`` → ``start = page * n`` is an off-by-one,
not a state change.
"""

from __future__ import annotations

import itertools
import keyword
import re
from collections.abc import Callable, Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from bughunt.models import BugCategory
from tasks.classify._changes import (
    NUMBER,
    Change,
    after_braces,
    extract_changes,
    int_value,
    is_subsequence,
    token_diff,
)
from tasks.classify._diff import ParsedPatch

# --- rules -------------------------------------------------------------------

_GUARDS = {"if", "elif", "assert", "unless"}
_BOOL_OPS = {"and", "or", "&&", "||"}
_CMP_OPS = {"<", "<=", ">", ">=", "==", "!=", "===", "!==", "is", "is not", "in", "not in"}
_EXC_HEADS = {"try", "except", "finally", "raise", "catch", "throw", "rescue", "ensure"}
_EXC_CONTEXTS = {"suppress", "raises"}
_RETURNS = {"return", "yield"}
_ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", ">>=", "<<=", "&=", "|=", "^="}
_NOT_TARGET = {
    "if", "elif", "else", "while", "for", "return", "yield", "def", "class", "lambda", "with",
    "assert", "raise", "import", "from", "print", "case", "match", "async", "await", "@",
}  # fmt: skip
_MUTATORS = {
    "append", "extend", "insert", "pop", "popitem", "remove", "clear", "add", "discard",
    "update", "setdefault", "sort", "reverse", "push", "unshift", "shift", "splice",
    "__setitem__", "__delitem__",
}  # fmt: skip
_COPY_CALLS = {"list", "dict", "set", "tuple", "frozenset", "sorted", "copy", "deepcopy"}
_OWN_STATE = {"self", "cls", "this"}
_KEYWORDS = set(keyword.kwlist) - {"True", "False", "None"}


def _is_guard(tokens: Sequence[str]) -> bool:
    head = after_braces(tokens)
    if not head:
        return False
    return head[0] in _GUARDS or (head[0] == "else" and len(head) > 1 and head[1] == "if")


def condition_removed(change: Change) -> bool:
    """A guard was removed, replaced by unconditional code, or lost an ``and``/``or`` clause.

    A guard is a line starting with ``if``, ``elif``, ``else if``, ``assert``
    (or ``unless``). Satisfied by: a lone removed guard; a guard paired with
    a line that is not a guard; a guard whose new condition keeps a subset of
    its tokens, in order, with fewer boolean connectives (``if a and b`` →
    ``if a``). Conditional expressions (``x if c else y``) are not guards.
    """
    if change.old is None or not _is_guard(change.old.tokens):
        return False
    if change.new is None or not _is_guard(change.new.tokens):
        return True
    old, new = change.old.tokens, change.new.tokens

    def connectives(tokens: Sequence[str]) -> int:
        return sum(tok in _BOOL_OPS for tok in tokens)

    return connectives(new) < connectives(old) and is_subsequence(new, old)


def _same_group(a: str, b: str) -> bool:
    return (a in _CMP_OPS and b in _CMP_OPS) or (a in _BOOL_OPS and b in _BOOL_OPS)


def comparison_operator(change: Change) -> bool:
    """A paired line whose only edits swap one comparison operator for another.

    Comparison operators: ``<  <=  >  >=  ==  !=  ===  !==  is  is not  in
    not in``; a swap of boolean connectives (``and`` ↔ ``or``, ``&&`` ↔
    ``||``) counts too. Every edit must be such a one-for-one swap; an
    operand changing as well makes it something else.
    """
    if change.old is None or change.new is None:
        return False
    edits = token_diff(change.old.tokens, change.new.tokens)
    return bool(edits) and all(
        tag == "replace" and len(old) == 1 and len(new) == 1 and _same_group(old[0], new[0])
        for tag, old, new in edits
    )


def _plus_minus_one(tokens: Sequence[str]) -> bool:
    """``+ 1`` / ``- 1``: a unit term added or taken away."""
    return len(tokens) == 2 and tokens[0] in ("+", "-") and int_value(tokens[1]) == 1


def _unit_argument(tokens: Sequence[str]) -> bool:
    """A 0 or 1 literal on its own, as an argument (``1,``) or keyword (``, start=1``)."""
    toks = [t for t in tokens if t != ","]
    if len(toks) == 3 and toks[1] == "=" and re.match(r"^[A-Za-z_]\w*$", toks[0]):
        toks = toks[2:]
    return len(toks) == 1 and int_value(toks[0]) in (0, 1)


def _off_by_one_edit(old: tuple[str, ...], new: tuple[str, ...]) -> bool | None:
    """True for a ±1 edit, None for a neutral one (parentheses only), False otherwise."""
    old = tuple(t for t in old if t not in ("(", ")"))
    new = tuple(t for t in new if t not in ("(", ")"))
    if not old and not new:
        return None
    if len(old) == 1 and len(new) == 1:
        a, b = int_value(old[0]), int_value(new[0])
        return a is not None and b is not None and abs(a - b) == 1
    lone = old if not new else new if not old else None
    return lone is not None and (_plus_minus_one(lone) or _unit_argument(lone))


def off_by_one(change: Change) -> bool:
    """A paired line whose only edits move a number or bound by one.

    Each edit (ignoring parentheses that only regroup) is one of: an integer
    literal replaced by its neighbour (``0`` ↔ ``1``, ``n[2]`` → ``n[3]``); a
    ``+ 1`` or ``- 1`` term added or removed (``ranked[:n]`` →
    ``ranked[:n - 1]``, ``(page - 1) * k`` → ``page * k``); a ``0``/``1``
    argument or ``start=1`` added or removed (``range(1, n)`` → ``range(n)``,
    ``enumerate(xs, start=1)`` → ``enumerate(xs)``). ``<`` ↔ ``<=`` is a
    comparison (rule 2), which runs first.
    """
    if change.old is None or change.new is None:
        return False
    verdicts = [
        _off_by_one_edit(old, new)
        for _, old, new in token_diff(change.old.tokens, change.new.tokens)
    ]
    return any(v is True for v in verdicts) and all(v is not False for v in verdicts)


def _touches_exceptions(tokens: Sequence[str]) -> bool:
    head = after_braces(tokens)
    if not head:
        return False
    return head[0] in _EXC_HEADS or (head[0] == "with" and bool(_EXC_CONTEXTS & set(head)))


def exception_handling(change: Change) -> bool:
    """A line that raises, catches or scopes an exception was added, removed or changed.

    Such a line starts with ``try``, ``except``, ``finally``, ``raise``
    (``catch``, ``throw`` in C-family code, ``rescue``/``ensure`` in Ruby) or
    is a ``with`` over ``suppress(...)`` / ``raises(...)``. Either side of a
    pair counts: ``except AmountError`` → ``except ValueError``.
    """
    return any(_touches_exceptions(side.tokens) for side in change.sides)


def _copies(tokens: Sequence[str]) -> int:
    """How many defensive copies a line makes: ``list(x)``, ``x.copy()``, ``x[:]``, ..."""
    calls = sum(1 for tok, nxt in itertools.pairwise(tokens) if tok in _COPY_CALLS and nxt == "(")
    slices = sum(1 for i in range(len(tokens) - 2) if tuple(tokens[i : i + 3]) == ("[", ":", "]"))
    return calls + slices


def _is_return(tokens: Sequence[str]) -> bool:
    head = after_braces(tokens)
    return bool(head) and head[0] in _RETURNS


def _names(tokens: Sequence[str]) -> set[str]:
    return {t for t in tokens if re.match(r"^[A-Za-z_$][\w$]*$", t) and t not in _KEYWORDS}


def _is_constant(tok: str) -> bool:
    """A number or a plain string: not an f-string or template, which compute their text."""
    if NUMBER.match(tok):
        return True
    prefix = re.match(r"^[A-Za-z]*", tok)
    return tok[-1:] in ("'", '"') and prefix is not None and "f" not in prefix.group().lower()


def return_value(change: Change) -> bool:
    """A ``return``/``yield`` now hands back something else.

    Satisfied by: a lone removed or added ``return``/``yield``; a return
    paired with a line that is not one; a changed return whose names differ
    (``return reversal_id`` → ``return tx_id``, ``return -x if c else x`` →
    ``return x``, ``return True`` → ``return False``) or that returns a
    different constant (``return "a"`` → ``return "b"``). Not satisfied
    when the names stay and only a detail inside the expression changes (a
    format spec, an arithmetic operator): that is ``other``. Not satisfied
    when the edit only adds or drops a copy (``return list(xs)`` → ``return
    xs``): handing out an alias is a state mutation (rule 6).
    """
    old, new = change.old, change.new
    if old is None or new is None:
        return any(_is_return(side.tokens) for side in change.sides)
    if _is_return(old.tokens) != _is_return(new.tokens):
        return True
    if not _is_return(old.tokens) or _copies(old.tokens) != _copies(new.tokens):
        return False
    if _names(old.tokens) != _names(new.tokens):
        return True
    return (
        len(old.tokens) == len(new.tokens) == 2
        and old.tokens != new.tokens
        and _is_constant(old.tokens[1])
        and _is_constant(new.tokens[1])
    )


def _assignment(tokens: Sequence[str]) -> tuple[tuple[str, ...], str] | None:
    """(target tokens, operator) of an assignment, augmented assignment, ``del`` or ``++``."""
    head = tuple(after_braces(tokens))
    if not head or head[0] in _NOT_TARGET:
        return None
    if head[0] == "del":
        return head[1:], "del"
    depth = 0
    for i, tok in enumerate(head):
        if tok in ("(", "[", "{"):
            depth += 1
        elif tok in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and i > 0 and tok in _ASSIGN_OPS:
            if tok == "=" and head[-1] == "," and i == 1:
                return None  # ``name=value,``: a keyword argument on its own line
            return head[:i], tok
        elif depth == 0 and tok in ("++", "--"):
            return (head[:i] or head[i + 1 :]), tok
    return None


def _mutating_call(tokens: Sequence[str]) -> tuple[str, ...] | None:
    """``receiver.method(`` tokens of a call to an in-place mutator (``.append(``, ...)."""
    for i in range(1, len(tokens) - 2):
        if tokens[i] == "." and tokens[i + 1] in _MUTATORS and tokens[i + 2] == "(":
            return tuple(tokens[: i + 2])
    return None


def _outside_frame(target: Sequence[str]) -> bool:
    """The target is state that outlives the call: an attribute, an item, ``self``."""
    return "." in target or "[" in target or (bool(target) and target[0] in _OWN_STATE)


def state_mutation(change: Change) -> bool:
    """What is stored, where, or whether a copy is made, changed.

    Satisfied by: a pair where a defensive copy (``list(x)``, ``set(x)``,
    ``dict(x)``, ``x.copy()``, ``copy(x)``, ``deepcopy(x)``, ``sorted(x)``,
    ``x[:]``) appears or disappears (aliasing); a lone removed or added
    assignment, augmented assignment (``+=``), ``del``, ``++``/``--`` or
    in-place mutator call (``.append``, ``.add``, ``.update``, ...); a pair
    where only one side is such a statement, or where the assignment target
    or operator, or the mutator called, differs; a pair assigning a
    different value to an attribute or item (``self.total = a`` →
    ``self.total = b``). A different value for a local variable is a
    computation change, not a state one (``other``).
    """
    old, new = change.old, change.new
    if old is None or new is None:
        return any(
            _assignment(side.tokens) is not None or _mutating_call(side.tokens) is not None
            for side in change.sides
        )
    if _copies(old.tokens) != _copies(new.tokens):
        return True
    a_old, a_new = _assignment(old.tokens), _assignment(new.tokens)
    m_old, m_new = _mutating_call(old.tokens), _mutating_call(new.tokens)
    if (a_old is None) != (a_new is None) or (m_old is None) != (m_new is None):
        return True
    if a_old is not None and a_new is not None:
        return a_old != a_new or _outside_frame(a_old[0])
    return m_old != m_new


Rule = Callable[[Change], bool]

RULES: tuple[tuple[BugCategory, Rule], ...] = (
    (BugCategory.CONDITION_REMOVED, condition_removed),
    (BugCategory.COMPARISON_OPERATOR, comparison_operator),
    (BugCategory.OFF_BY_ONE, off_by_one),
    (BugCategory.EXCEPTION_HANDLING, exception_handling),
    (BugCategory.RETURN_VALUE, return_value),
    (BugCategory.STATE_MUTATION, state_mutation),
)
"""The rules in priority order; the first one any change satisfies names the category."""


# --- decision ----------------------------------------------------------------


class Evidence(BaseModel):
    """The change that decided a category."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    file: str
    """File of the change, relative to the target."""
    line: int
    """Line in the old file (when a line was removed) or the new file."""
    removed: str | None
    """The removed line, stripped (at most 240 characters)."""
    added: str | None
    """The added line, stripped (at most 240 characters)."""


class CategoryDecision(BaseModel):
    """A patch's category, the rule that gave it and the change that satisfied the rule."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    category: BugCategory
    """The first category, in priority order, that a change satisfies."""
    rule: str
    """The deciding rule in words (first line of its docstring)."""
    evidence: Evidence | None = None
    """The first change, in patch order, that satisfied it; none for ``other``."""


def _summary(rule: Rule) -> str:
    return (rule.__doc__ or rule.__name__).strip().splitlines()[0]


def _clip(text: str, limit: int = 240) -> str:
    """A line as evidence: whole when short, else its start (reports stay readable)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def decide(changes: Iterable[Change]) -> CategoryDecision:
    """The category of a list of changes by :data:`RULES` (``other`` when none applies)."""
    changes = list(changes)
    for category, rule in RULES:
        for change in changes:
            if rule(change):
                where = change.sides[0]
                return CategoryDecision(
                    category=category,
                    rule=_summary(rule),
                    evidence=Evidence(
                        file=where.file,
                        line=where.line,
                        removed=_clip(change.old.text) if change.old else None,
                        added=_clip(change.new.text) if change.new else None,
                    ),
                )
    why = (
        "no rule matched the changed lines"
        if changes
        else "no edited code line (whitespace, comments or whole files only)"
    )
    return CategoryDecision(category=BugCategory.OTHER, rule=why)


def categorize(patch: ParsedPatch) -> CategoryDecision:
    """The bug category of a parsed patch, with the rule and the evidence; never raises."""
    return decide(extract_changes(patch))
