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
    Change,
    after_braces,
    extract_changes,
    int_value,
    is_subsequence,
    token_diff,
)
from tasks.classify._shapes import (
    ASSIGN_OPS,
    CLOSERS,
    OPENERS,
    assignment,
    is_branch,
    is_literal,
    is_term,
    operands_swapped,
    removals,
    top_level,
)
from tasks.classify.patch import ParsedPatch

# --- rules -------------------------------------------------------------------

_GUARDS = {"if", "elif", "assert", "unless"}
_LOOPS = {"while"}
_BOOL_OPS = {"and", "or", "&&", "||"}
_QUANTIFIERS = {"any", "all"}
_CMP_OPS = {"<", "<=", ">", ">=", "==", "!=", "===", "!==", "is", "is not", "in", "not in"}
_EXC_HEADS = {"try", "except", "finally", "raise", "catch", "throw", "rescue", "ensure"}
_EXC_CONTEXTS = {"suppress", "raises"}
_RETURNS = {"return", "yield"}
_UPDATES = (ASSIGN_OPS - {"="}) | {"++", "--"}
_SETTERS = {"setattr", "delattr"}
_MUTATORS = {
    "append", "extend", "insert", "pop", "popitem", "remove", "clear", "add", "discard",
    "update", "setdefault", "sort", "reverse", "push", "unshift", "shift", "splice",
    "__setitem__", "__delitem__",
}  # fmt: skip
_COPY_CALLS = {"list", "dict", "set", "tuple", "frozenset", "sorted", "copy", "deepcopy"}
_OWN_STATE = {"self", "cls", "this"}
_KEYWORDS = set(keyword.kwlist) - {"True", "False", "None"}


def _is_guard(tokens: Sequence[str]) -> bool:
    """A line that opens a guard: ``if``/``elif``/``else if``/``assert``/``unless``.

    A line that closes more brackets than it opens continues an expression
    (a comprehension's ``if x]``), and so does one holding ``else`` before its
    ``:`` (a conditional expression's ``if c else``): neither is a guard.
    """
    head = after_braces(tokens)
    if not head:
        return False
    opens = head[0] in _GUARDS or (head[0] == "else" and len(head) > 1 and head[1] == "if")
    depth = 0
    for tok in head[2:] if head[0] == "else" else head:
        if depth == 0 and tok in (":", "{"):
            break  # the guarded body starts here
        if depth == 0 and tok == "else":
            return False  # ``if c else y``: the middle of a conditional expression
        depth += (tok in OPENERS) - (tok in CLOSERS)
        if depth < 0:
            return False  # ``if x]``: the tail of a comprehension
    return opens


def _condition(tokens: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """(head, condition tokens) of an ``if``/``elif``/``else if``/``assert``/``unless``/``while`` line.

    The condition runs from after the head to the first ``:`` or ``{`` outside
    brackets; a C-family ``(cond)`` is unwrapped.
    """
    head = tuple(after_braces(tokens))
    if not head or not (_is_guard(head) or head[0] in _LOOPS):
        return None
    skip = 2 if head[0] == "else" else 1
    cond: list[str] = []
    depth = 0
    for tok in head[skip:]:
        if depth == 0 and tok in (":", "{", "then", "do"):
            break
        depth += (tok in OPENERS) - (tok in CLOSERS)
        cond.append(tok)
    while len(cond) >= 2 and cond[0] == "(" and cond[-1] == ")":
        cond = cond[1:-1]
    return head[0], tuple(cond)


def _truthy_constant(cond: Sequence[str]) -> bool:
    """``True``/``true`` or a non-zero integer literal: a condition that always holds."""
    if len(cond) != 1:
        return False
    value = int_value(cond[0])
    return cond[0] in ("True", "true") or (value is not None and value != 0)


def _is_clause(gone: Sequence[str], line: Sequence[str]) -> bool:
    """An ``and``/``or`` operand with its connective, or a comprehension's ``if`` filter."""
    if not gone:
        return False
    connective = gone[0] in _BOOL_OPS or gone[-1] in _BOOL_OPS
    if not (connective or (gone[0] == "if" and "for" in line)):
        return False  # the cheap test first: a line offers one candidate per alignment
    return "else" not in gone and top_level(gone) is not None


def _dropped_clause(old: Sequence[str], new: Sequence[str]) -> bool:
    """Only deletions, each one an ``and``/``or`` operand or a comprehension's ``if`` filter.

    A deleted stretch counts when it starts with ``and``/``or``/``&&``/``||``
    (``a and b`` → ``a``), ends with one (``a and b`` → ``b``), or is an
    ``if ...`` filter after a ``for`` (``for d in ds if d`` → ``for d in ds``);
    one holding ``else`` is a conditional expression losing a branch, not a clause.
    """
    k = len(old) - len(new)
    if any(_is_clause(old[i : i + k], old) for i in removals(old, new)):
        return True
    edits = token_diff(old, new)
    return bool(edits) and all(tag == "delete" and _is_clause(gone, old) for tag, gone, _ in edits)


def condition_removed(change: Change) -> bool:
    """A guard was removed or made unconditional, or a condition lost an ``and``/``or`` clause.

    A guard is a line starting with ``if``, ``elif``, ``else if``, ``assert``
    (or ``unless``). Satisfied by: a lone removed guard; a guard paired with
    a line that is not a guard; a guard or ``while`` whose condition becomes a
    constant that always holds (``while queue:`` → ``while True:``, ``if a and
    b:`` → ``if 1:``); a guard whose new condition keeps a subset of its tokens,
    in order, with fewer boolean connectives (``if a and b`` → ``if a``); any
    line whose only edits delete ``and``/``or`` operands or a comprehension's
    ``if`` filter (``ok = a and b`` → ``ok = a``, ``(d for d in ds if d)`` →
    ``(d for d in ds)``). Conditional expressions (``x if c else y``) are not
    guards, and losing one of their branches is not a lost clause.
    """
    old = change.old
    if old is None:
        return False
    new = change.new
    if _is_guard(old.tokens) and (new is None or not _is_guard(new.tokens)):
        return True
    if new is None:
        return False
    was, now = _condition(old.tokens), _condition(new.tokens)
    if (
        was is not None
        and now is not None
        and was[0] == now[0]
        and _truthy_constant(now[1])
        and not _truthy_constant(was[1])
    ):
        return True

    def connectives(tokens: Sequence[str]) -> int:
        return sum(tok in _BOOL_OPS for tok in tokens)

    if (
        _is_guard(old.tokens)
        and connectives(new.tokens) < connectives(old.tokens)
        and is_subsequence(new.tokens, old.tokens)
    ):
        return True
    return _dropped_clause(old.tokens, new.tokens)


def _same_group(a: str, b: str) -> bool:
    return any(a in group and b in group for group in (_CMP_OPS, _BOOL_OPS, _QUANTIFIERS))


def _called(name: str, tokens: Sequence[str]) -> bool:
    return any(tok == name and nxt == "(" for tok, nxt in itertools.pairwise(tokens))


def comparison_operator(change: Change) -> bool:
    """A paired line whose only edits swap one comparison operator for another, or its operands.

    Comparison operators: ``<  <=  >  >=  ==  !=  ===  !==  is  is not  in
    not in``; a swap of boolean connectives (``and`` ↔ ``or``, ``&&`` ↔
    ``||``) or of their n-ary forms (``any(`` ↔ ``all(``) counts too. Every
    edit must be such a one-for-one swap; an operand changing as well makes it
    something else. Swapping the two sides of an ordering comparison (``a[i] <
    a[j]`` → ``a[j] < a[i]``) reverses it, and counts.
    """
    if change.old is None or change.new is None:
        return False
    old, new = change.old.tokens, change.new.tokens
    edits = token_diff(old, new)

    def swap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
        if len(a) != 1 or len(b) != 1 or not _same_group(a[0], b[0]):
            return False
        return a[0] not in _QUANTIFIERS or (_called(a[0], old) and _called(b[0], new))

    if edits and all(tag == "replace" and swap(a, b) for tag, a, b in edits):
        return True
    return operands_swapped(old, new)


def _plus_minus_one(tokens: Sequence[str]) -> bool:
    """``+ 1`` / ``- 1`` / ``1 +``: a unit term added or taken away.

    ``1 -`` is not one: ``1 - x`` is a sign change of ``x``, not ``x`` moved by one.
    """
    if len(tokens) != 2:
        return False
    trailing = tokens[0] in ("+", "-") and int_value(tokens[1]) == 1
    return trailing or (int_value(tokens[0]) == 1 and tokens[1] == "+")


def _unit_slice(tokens: Sequence[str]) -> bool:
    """``[1:]`` / ``[:-1]``: a slice that drops one element at an end."""
    return tuple(tokens) in (("[", "1", ":", "]"), ("[", ":", "-", "1", "]"))


def _unit_argument(tokens: Sequence[str]) -> bool:
    """A 0 or 1 literal on its own, as an argument (``1,``) or keyword (``, start=1``)."""
    toks = [t for t in tokens if t != ","]
    if len(toks) == 3 and toks[1] == "=" and re.match(r"^[A-Za-z_]\w*$", toks[0]):
        toks = toks[2:]
    return len(toks) == 1 and int_value(toks[0]) in (0, 1)


def _off_by_one_edit(old: tuple[str, ...], new: tuple[str, ...]) -> bool | None:
    """True for a ±1 edit, None for a neutral one (parentheses only), False otherwise."""
    if _unit_slice(old if not new else new if not old else ()):
        return True
    old = tuple(t for t in old if t not in ("(", ")"))
    new = tuple(t for t in new if t not in ("(", ")"))
    if not old and not new:
        return None
    if len(old) == 1 and len(new) == 1:
        a, b = int_value(old[0]), int_value(new[0])
        return a is not None and b is not None and abs(a - b) == 1
    lone = old if not new else new if not old else None
    return lone is not None and (_plus_minus_one(lone) or _unit_argument(lone) or _unit_slice(lone))


def _unit_term(longer: Sequence[str], shorter: Sequence[str]) -> bool:
    """``shorter`` is ``longer`` without one ``+ 1``/``- 1``/``1 +`` (parentheses ignored).

    Checked over every alignment (:func:`removals`): ``a - 1 - b`` → ``a - b``
    may align as a dropped ``1 -``, which alone is no unit term.
    """
    longer = [t for t in longer if t not in ("(", ")")]
    shorter = [t for t in shorter if t not in ("(", ")")]
    return len(longer) == len(shorter) + 2 and any(
        _plus_minus_one(longer[i : i + 2]) for i in removals(longer, shorter)
    )


def off_by_one(change: Change) -> bool:
    """A paired line whose only edits move a number or bound by one.

    Each edit (ignoring parentheses that only regroup) is one of: an integer
    literal replaced by its neighbour (``0`` ↔ ``1``, ``n[2]`` → ``n[3]``); a
    ``+ 1`` or ``- 1`` term, or a leading ``1 +``, added or removed anywhere
    (``ranked[:n]`` → ``ranked[:n - 1]``, ``(page - 1) * k`` → ``page * k``,
    ``f(x)`` → ``1 + f(x)``); a ``0``/``1`` argument or ``start=1`` added or
    removed (``range(1, n)`` → ``range(n)``, ``enumerate(xs, start=1)`` →
    ``enumerate(xs)``); a ``[1:]`` or ``[:-1]`` slice added or removed
    (``b[1:]`` → ``b``). ``<`` ↔ ``<=`` is a comparison (rule 2), which runs
    first; ``1 - x`` is a sign change, not a unit term.
    """
    if change.old is None or change.new is None:
        return False
    old, new = change.old.tokens, change.new.tokens
    if _unit_term(old, new) or _unit_term(new, old):
        return True
    verdicts = [_off_by_one_edit(a, b) for _, a, b in token_diff(old, new)]
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


def return_value(change: Change) -> bool:
    """A ``return``/``yield`` now hands back something else.

    Satisfied by: a lone removed or added ``return``/``yield``; a return
    paired with a line that is not one; a changed return whose names differ
    (``return reversal_id`` → ``return tx_id``, ``return -x if c else x`` →
    ``return x``, ``return True`` → ``return False``); one that returns a
    different constant or literal (``return "a"`` → ``return "b"``, ``return
    [[]]`` → ``return []``); one whose only edits add or drop whole terms of
    the expression (``return rest + [x]`` → ``return [x]``) or a branch of a
    conditional (``return -2 if r == -1 else r`` → ``return r``). Not satisfied
    when the names stay and only a detail inside the expression changes (a
    format spec, an arithmetic operator, the order of arguments): that is
    ``other``. Not satisfied when the edit only adds or drops a copy
    (``return list(xs)`` → ``return xs``): handing out an alias is a state
    mutation (rule 6).
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
    was, now = after_braces(old.tokens)[1:], after_braces(new.tokens)[1:]
    if was != now and is_literal(was) and is_literal(now):
        return True
    # One direction only: a term moved elsewhere (``gcd(b, a % b)`` → ``gcd(a % b, b)``)
    # is an insert and a delete of the same tokens, a reordering rather than a new term.
    edits = token_diff(was, now)
    tags = {tag for tag, _, _ in edits}
    return tags in ({"insert"}, {"delete"}) and all(
        is_term(a or b) or is_branch(a or b) for _, a, b in edits
    )


def _mutating_call(tokens: Sequence[str]) -> tuple[str, ...] | None:
    """``receiver.method(`` tokens of an in-place mutator call (``.append(``, ...), or ``setattr(obj``."""
    for i in range(1, len(tokens) - 2):
        if tokens[i] == "." and tokens[i + 1] in _MUTATORS and tokens[i + 2] == "(":
            return tuple(tokens[: i + 2])
    for i in range(len(tokens) - 1):
        if tokens[i] in _SETTERS and tokens[i + 1] == "(" and (i == 0 or tokens[i - 1] != "."):
            end = tokens.index(",", i) if "," in tokens[i:] else len(tokens)
            return tuple(tokens[i:end])
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
    in-place mutator call (``.append``, ``.add``, ``.update``, ...,
    ``setattr(...)``, ``delattr(...)``); a pair where only one side is such a
    statement, or where the assignment target or operator, or the mutator
    called, differs; a pair assigning a different value to an attribute or
    item (``self.total = a`` → ``self.total = b``). A different value for a
    local variable is a computation change, not a state one (``other``), and
    so is one update operator swapped for another on a local (``n &= n - 1``
    → ``n ^= n - 1``, ``i += 1`` → ``i -= 1``); ``total += a`` → ``total =
    a`` still is one (the running value is lost).
    """
    old, new = change.old, change.new
    if old is None or new is None:
        return any(
            assignment(side.tokens) is not None or _mutating_call(side.tokens) is not None
            for side in change.sides
        )
    if _copies(old.tokens) != _copies(new.tokens):
        return True
    a_old, a_new = assignment(old.tokens), assignment(new.tokens)
    m_old, m_new = _mutating_call(old.tokens), _mutating_call(new.tokens)
    if (a_old is None) != (a_new is None) or (m_old is None) != (m_new is None):
        return True
    if a_old is not None and a_new is not None:
        if _outside_frame(a_old[0]) or a_old[0] != a_new[0]:
            return True
        return a_old[1] != a_new[1] and not (a_old[1] in _UPDATES and a_new[1] in _UPDATES)
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
