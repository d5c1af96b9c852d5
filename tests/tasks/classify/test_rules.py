"""The bug-category rules: one behaviour each, their priority, and totality on any input."""

from __future__ import annotations

import difflib
import textwrap
import time

import pytest
from hypothesis import given, settings, strategies as st

from bughunt.models import BugCategory
from tasks.classify import categorize
from tasks.classify._changes import Change, CodeLine, extract_changes, tokenize
from tasks.classify._rules import decide
from tasks.classify.patch import parse_patch


def _decide(before: str, after: str, path: str = "m.py") -> BugCategory:
    old = textwrap.dedent(before).splitlines(keepends=True)
    new = textwrap.dedent(after).splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}"))
    return categorize(parse_patch(diff)).category


def _line(before: str, after: str) -> BugCategory:
    """Category of a one-line change inside a small function."""
    return _decide(
        f"def f(a, b, n, xs):\n    pre = 1\n    {before}\n    post = 2\n",
        f"def f(a, b, n, xs):\n    pre = 1\n    {after}\n    post = 2\n",
    )


# --- 1. condition_removed ------------------------------------------------------


def test_removed_guard_with_raise_is_condition_removed() -> None:
    """Removing an `if` guard (and the raise it guarded) is condition_removed, not exception handling."""
    before = """\
    def apply(self, amount):
        if self.closed:
            raise Closed(self.name)
        self.raw += amount
    """
    after = """\
    def apply(self, amount):
        self.raw += amount
    """
    assert _decide(before, after) is BugCategory.CONDITION_REMOVED


def test_removed_guard_with_dedented_body_is_condition_removed() -> None:
    """An `if` removed with its body dedented: the body is no change, the guard is removed."""
    before = """\
    def f(x):
        if x:
            go(x)
        return x
    """
    after = """\
    def f(x):
        go(x)
        return x
    """
    assert _decide(before, after) is BugCategory.CONDITION_REMOVED


def test_condition_losing_a_clause_is_condition_removed() -> None:
    """`if a and b:` → `if a:` drops a clause: condition_removed."""
    assert _line("if a and b > 0: pass", "if a: pass") is BugCategory.CONDITION_REMOVED


def test_adding_a_guard_is_not_condition_removed() -> None:
    """An added `if` guard is not a removed one."""
    assert _line("go(a)", "if a: go(a)") is not BugCategory.CONDITION_REMOVED


@pytest.mark.parametrize(
    ("before", "after", "path"),
    [
        ("while xs: pass", "while True: pass", "m.py"),
        ("if a and b > 0: pass", "if True: pass", "m.py"),
        ("elif a: pass", "elif 1: pass", "m.py"),
        ("while (n > 0) {", "while (1) {", "a.c"),
        ("} else if (a && b) {", "} else if (true) {", "A.java"),
    ],
)
def test_condition_made_always_true_is_condition_removed(
    before: str, after: str, path: str
) -> None:
    """A guard's or loop's condition replaced by a constant that always holds: condition_removed."""
    assert _decide(f"{before}\n", f"{after}\n", path) is BugCategory.CONDITION_REMOVED


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("while True: pass", "while 1: pass"),
        ("while xs: pass", "while False: pass"),
        ("while xs: pass", "while ys: pass"),
        ("if a: pass", "if 0: pass"),
    ],
)
def test_other_condition_changes_are_not_condition_removed(before: str, after: str) -> None:
    """Already constant, now never true, or another test: no guard was removed."""
    assert _line(before, after) is not BugCategory.CONDITION_REMOVED


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("self.wrap = a.atomic and db.can_rollback", "self.wrap = a.atomic"),
        ("ok = a or b", "ok = b"),
        ("xs.update(d for d in ds if d)", "xs.update(d for d in ds)"),
        ("return a is not None and a.ok", "return a.ok"),
    ],
)
def test_clause_dropped_outside_a_guard_is_condition_removed(before: str, after: str) -> None:
    """An `and`/`or` operand or a comprehension filter dropped from any line: condition_removed."""
    assert _line(before, after) is BugCategory.CONDITION_REMOVED


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("x = a if c else b", "x = a"),
        ("x = a and b", "x = a or b"),
        ("x = not a", "x = a"),
        ("xs = [d for d in ds]", "xs = [d for d in ds if d]"),
    ],
)
def test_branch_negation_or_added_filter_is_not_a_dropped_clause(before: str, after: str) -> None:
    """A conditional's branch, a swapped connective, a dropped `not`, an added filter: no lost clause."""
    assert _line(before, after) is not BugCategory.CONDITION_REMOVED


def test_continuation_lines_starting_with_if_are_not_guards() -> None:
    """A comprehension's `if x]` or a conditional's `if c else` line removed is no removed guard."""
    before = """\
    def f(xs):
        return [x
                for x in xs
                if x.ok]
    """
    after = """\
    def f(xs):
        return None
    """
    assert _decide(before, after) is BugCategory.RETURN_VALUE
    before = """\
    def f(self, m):
        self.m = (EMPTY
                  if m is None else
                  wrap(m))
    """
    after = """\
    def f(self, m):
        pass
    """
    assert _decide(before, after) is BugCategory.STATE_MUTATION


# --- 2. comparison_operator ------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("return a < b", "return a <= b"),
        ("if a == b: pass", "if a != b: pass"),
        ("ok = a is None", "ok = a is not None"),
        ("ok = a in xs", "ok = a not in xs"),
        ("ok = a and b", "ok = a or b"),
    ],
)
def test_operator_swap_is_comparison_operator(before: str, after: str) -> None:
    """Only a comparison (or boolean connective) swapped: comparison_operator."""
    assert _line(before, after) is BugCategory.COMPARISON_OPERATOR


def test_operator_swap_with_operand_change_is_not_comparison() -> None:
    """When an operand changes too, it is no longer a pure operator swap."""
    assert _line("return a < b", "return a <= n") is not BugCategory.COMPARISON_OPERATOR


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("if all(n % p > 0 for p in xs): pass", "if any(n % p > 0 for p in xs): pass"),
        ("if xs[i] < xs[j]: pass", "if xs[j] < xs[i]: pass"),
        ("ok = f(a) >= g(b, n) and n", "ok = g(b, n) >= f(a) and n"),
    ],
)
def test_quantifier_swap_or_reversed_operands_is_comparison(before: str, after: str) -> None:
    """`all(` ↔ `any(` (n-ary `and` ↔ `or`), or the sides of `<` swapped: comparison_operator."""
    assert _line(before, after) is BugCategory.COMPARISON_OPERATOR


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("x = all", "x = any"),
        ("ok = a == b", "ok = b == a"),
        ("if a < b + n: pass", "if b < a + n: pass"),
        ("x = f(a, b)", "x = f(b, a)"),
    ],
)
def test_other_swaps_are_not_comparison(before: str, after: str) -> None:
    """`any`/`all` not called, symmetric or partial operand swaps, argument swaps: not comparison."""
    assert _line(before, after) is not BugCategory.COMPARISON_OPERATOR


# --- 3. off_by_one -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("return xs[:n]", "return xs[:n - 1]"),
        ("start = (a - 1) * n", "start = a * n"),
        ("for i, x in enumerate(xs, start=1): pass", "for i, x in enumerate(xs): pass"),
        ("for i in range(1, n): pass", "for i in range(n): pass"),
        ("for i in range(n): pass", "for i in range(n + 1): pass"),
        ("return xs[0]", "return xs[1]"),
        ("limit = 10", "limit = 11"),
    ],
)
def test_unit_shift_is_off_by_one(before: str, after: str) -> None:
    """An integer moved by one, a ±1 term or a 0/1 bound added or removed: off_by_one."""
    assert _line(before, after) is BugCategory.OFF_BY_ONE


def test_huge_literal_is_not_a_number_to_compare() -> None:
    """A 5000-digit literal (past int()'s digit limit) is classified without error."""
    assert _line("limit = " + "1" * 5000, "limit = " + "1" * 4999 + "2") is BugCategory.OTHER


def test_larger_literal_change_is_not_off_by_one() -> None:
    """A literal moved by more than one is not an off-by-one."""
    assert _line("limit = 10", "limit = 20") is BugCategory.OTHER


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("return f(a[1:], b[1:])", "return 1 + f(a[1:], b[1:])"),
        ("x = 1 + n * 2", "x = n * 2"),
        ("start = n - 1 - a // 2", "start = n - a // 2"),
        ("return a[0] + f(a[1:], b[1:])", "return a[0] + f(a[1:], b)"),
        ("return xs[:-1]", "return xs"),
    ],
)
def test_leading_unit_term_or_unit_slice_is_off_by_one(before: str, after: str) -> None:
    """A leading `1 +`, a `- 1` however the diff aligns it, a `[1:]`/`[:-1]` slice: off_by_one."""
    assert _line(before, after) is BugCategory.OFF_BY_ONE


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("y = 1 - x", "y = x"),
        ("for x in xs[k:]: pass", "for x in xs: pass"),
        ("y = xs[-1:]", "y = xs"),
        ("y = 2 + x", "y = x"),
    ],
)
def test_sign_changes_and_other_slices_are_not_off_by_one(before: str, after: str) -> None:
    """`1 - x` → `x` is a sign change; a `[k:]` or `[-1:]` slice or a `2 +` is no unit shift."""
    assert _line(before, after) is not BugCategory.OFF_BY_ONE


# --- 4. exception_handling -----------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("except AmountError as exc: pass", "except ValueError as exc: pass"),
        ('raise ValueError("x")', 'raise KeyError("x")'),
        ("with suppress(KeyError): go(a)", "go(a)"),
    ],
)
def test_touched_exception_lines_are_exception_handling(before: str, after: str) -> None:
    """A changed except/raise/try line, or a dropped suppress(), is exception_handling."""
    assert _line(before, after) is BugCategory.EXCEPTION_HANDLING


def test_removed_reraise_is_exception_handling() -> None:
    """Dropping a bare `raise` from an except block is exception_handling."""
    before = """\
    try:
        go()
    except Exception:
        undo()
        raise
    """
    after = """\
    try:
        go()
    except Exception:
        undo()
    """
    assert _decide(before, after) is BugCategory.EXCEPTION_HANDLING


# --- 5. return_value -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("return reversal_id", "return tx_id"),
        ("return -a if b else a", "return a"),
        ("return True", "return False"),
        ('return "open"', 'return "closed"'),
    ],
)
def test_different_returned_value_is_return_value(before: str, after: str) -> None:
    """A return handing back a different name or constant is return_value."""
    assert _line(before, after) is BugCategory.RETURN_VALUE


def test_removed_early_return_is_return_value() -> None:
    """A lone removed return statement is return_value."""
    assert _line("return a", "") is BugCategory.RETURN_VALUE


def test_format_detail_inside_return_is_other() -> None:
    """Same names, only a format spec inside the returned f-string: other, not return_value."""
    assert _line('return f"{a}.{b:02d}"', 'return f"{a}.{b}"') is BugCategory.OTHER


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("return [[]]", "return []"),
        ("return {}", "return []"),
        ("return ('', False, None, 0)", "return ('XX', False, None, 0)"),
        ("yield -1", "yield 1"),
    ],
)
def test_changed_returned_literal_is_return_value(before: str, after: str) -> None:
    """A returned constant or collection literal changed: return_value."""
    assert _line(before, after) is BugCategory.RETURN_VALUE


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("return rest + [[a] + s for s in rest]", "return [[a] + s for s in rest]"),
        ("return a", "return a * a"),
        ("return -2 if a == -1 else a", "return a"),
        ("return b if a else a", "return a"),
    ],
)
def test_dropped_or_added_returned_term_is_return_value(before: str, after: str) -> None:
    """A whole term or a conditional's branch added to or dropped from a return: return_value."""
    assert _line(before, after) is BugCategory.RETURN_VALUE


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("return f(b, a % b)", "return f(a % b, b)"),
        ("return a + b", "return a - b"),
        ("x = rest + [a]", "x = [a]"),
    ],
)
def test_reordered_or_swapped_return_or_local_term_is_other(before: str, after: str) -> None:
    """Arguments reordered, an operator swapped, a term dropped outside a return: other."""
    assert _line(before, after) is BugCategory.OTHER


def test_first_line_of_a_longer_return_is_no_literal() -> None:
    """`return ("a"` is the start of an expression, not a returned literal."""
    before = 'def f(a):\n    return ("<%s>"\n            % a)\n'
    after = 'def f(a):\n    return (""\n            % a)\n'
    assert _decide(before, after) is BugCategory.OTHER


# --- 6. state_mutation ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("return list(self.items)", "return self.items"),
        ("tags=set(self.tags),", "tags=self.tags,"),
        ("self.count += 1", ""),
        ("self.items.append(a)", ""),
        ("self.items.append(a)", "self.items.extend(a)"),
        ("self.total = a", "self.total = b"),
        ("total += a", "total = a"),
        ("", "self.cache = None"),
    ],
)
def test_changed_state_is_state_mutation(before: str, after: str) -> None:
    """A dropped copy, a removed/added store or mutator call, a changed target or operator: state_mutation."""
    assert _line(before, after) is BugCategory.STATE_MUTATION


def test_removed_increment_is_state_not_off_by_one() -> None:
    """`self.n += 1` removed whole is a lost update, not an off-by-one."""
    assert _line("self.n += 1", "") is BugCategory.STATE_MUTATION


def test_local_value_change_is_other() -> None:
    """A different value computed into a local variable is other (a computation, not state)."""
    assert _line("x = a * b", "x = a + b") is BugCategory.OTHER


@pytest.mark.parametrize(
    ("before", "after"),
    [("n &= n - 1", "n ^= n - 1"), ("a += 1", "a -= 1"), ("b *= 2", "b //= 2")],
)
def test_update_operator_swap_on_a_local_is_other(before: str, after: str) -> None:
    """One update operator for another on a local name: an arithmetic change, other."""
    assert _line(before, after) is BugCategory.OTHER


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("self.n += 1", "self.n -= 1"),
        ("xs[a] |= b", "xs[a] &= b"),
        ("total += a", "total = a"),
        ("n += 1", "m += 1"),
    ],
)
def test_update_swap_on_state_or_a_lost_update_is_state_mutation(before: str, after: str) -> None:
    """The same swap on an attribute or item, `+=` → `=`, another target: state_mutation."""
    assert _line(before, after) is BugCategory.STATE_MUTATION


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("setattr(a, 'pk', None)", ""),
        ("delattr(a, name)", ""),
        ("setattr(a, 'pk', None)", "setattr(b, 'pk', None)"),
        ("k = d[a] = b + n", "k = d[a] = b * n"),
    ],
)
def test_setattr_and_chained_item_stores_are_state_mutation(before: str, after: str) -> None:
    """A dropped or retargeted `setattr`/`delattr`, a value stored through `k = d[a] = v`: state_mutation."""
    assert _line(before, after) is BugCategory.STATE_MUTATION


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("getattr(a, 'pk')", ""),
        ("name='a', size=1,", "name='b', size=1,"),
        ("n=3, end='\\n')", "n=3, end='')"),
        ("f = lambda a=1: a", "f = lambda a=2: a * 2"),
    ],
)
def test_reads_and_keyword_argument_lines_are_not_state(before: str, after: str) -> None:
    """A dropped `getattr`, a line of keyword arguments, a lambda default: not state_mutation."""
    assert _line(before, after) is not BugCategory.STATE_MUTATION


# --- 7. other and edge cases ------------------------------------------------------------


def test_whitespace_and_comment_only_change_is_other() -> None:
    """Reindenting and editing comments changes no code: other, with no evidence."""
    before = "def f(a):\n    x = a  # one\n    return x\n"
    after = "def f(a):\n    x  =  a  # two\n    return x\n"
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(old, new, fromfile="a/m.py", tofile="b/m.py"))
    decision = categorize(parse_patch(diff))
    assert decision.category is BugCategory.OTHER
    assert decision.evidence is None


def test_whole_file_additions_are_not_evidence() -> None:
    """A patch that only adds a file (full of ifs and assignments) is other."""
    diff = "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,3 @@\n+if x:\n+    y = 1\n+    raise E\n"
    assert categorize(parse_patch(diff)).category is BugCategory.OTHER


def test_priority_picks_the_earlier_rule_across_files() -> None:
    """A patch with a state change in one file and a comparison in another is comparison_operator."""
    diff = (
        "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-self.n = 1\n+self.n = 2\n"
        "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-ok = a < b\n+ok = a <= b\n"
    )
    decision = categorize(parse_patch(diff))
    assert decision.category is BugCategory.COMPARISON_OPERATOR
    assert decision.evidence is not None
    assert (decision.evidence.file, decision.evidence.line) == ("b.py", 1)
    assert decision.evidence.removed == "ok = a < b"


def test_c_family_syntax() -> None:
    """C-family code: `} catch` is exception handling, `//` starts a comment, `&&` is a connective."""
    assert (
        _decide("x();\n} catch (IOException e) {\n", "x();\n} catch (Exception e) {\n", "A.java")
        is BugCategory.EXCEPTION_HANDLING
    )
    assert _decide("if (a && b) {\n", "if (a || b) {\n", "a.c") is BugCategory.COMPARISON_OPERATOR
    assert _decide("go(); // old\n", "go(); // new\n", "a.ts") is BugCategory.OTHER


def test_crlf_lines_classify_like_lf_lines() -> None:
    """CR line endings do not hide a change from the rules."""
    diff = "--- a/m.py\r\n+++ b/m.py\r\n@@ -1 +1 @@\r\n-ok = a < b\r\n+ok = a > b\r\n"
    assert categorize(parse_patch(diff)).category is BugCategory.COMPARISON_OPERATOR


def test_tokenizer_merges_two_word_operators() -> None:
    """`is not` and `not in` are single tokens; strings stay whole; comments go."""
    assert tokenize("a is not b and c not in d # x", "python") == (
        "a",
        "is not",
        "b",
        "and",
        "c",
        "not in",
        "d",
    )
    assert tokenize('f"{a:02d}" + "x # y"', "python") == ('f"{a:02d}"', "+", '"x # y"')


def _one_hunk(removed: list[str], added: list[str]) -> str:
    return f"--- a/m.py\n+++ b/m.py\n@@ -1,{len(removed)} +1,{len(added)} @@\n" + "".join(
        [*(f"-{line}\n" for line in removed), *(f"+{line}\n" for line in added)]
    )


def _cpu_seconds_to_classify(diff: str) -> float:
    patch = parse_patch(diff)
    started = time.process_time()
    categorize(patch)
    return time.process_time() - started


@pytest.mark.parametrize(
    ("removed", "added"),
    [
        (["x = " + " + ".join(["a"] * 200)] * 600, ["x = " + " + ".join(["b", "a"] * 100)] * 600),
        (["a = 1", "b = 2"] * 6000, ["a = 1"] * 12000),
        ([f"v{i} = f(a{i}, b{i})" for i in range(9000)], [f"w{i} = g({i})" for i in range(6000)]),
    ],
    ids=["long-repetitive-lines", "repetitive-block", "unequal-rewrite"],
)
def test_hostile_large_patches_classify_quickly(removed: list[str], added: list[str]) -> None:
    """Patches near the 1 MiB limit shaped to make diffing quadratic cost about what a plain
    patch of the same size costs: a ratio of CPU times in one test, so neither the machine's
    load nor coverage's tracing moves it (quadratic work would be hundreds of times over)."""
    diff = _one_hunk(removed, added)
    assert len(diff) < 1024 * 1024
    # The plain patch: each line edited in place, one-to-one, as many bytes as the hostile one.
    plain_lines = max(1, len(diff) // (2 * len("-x00000 = 00000\n")))
    plain = _one_hunk(
        [f"x{i:05d} = {i:05d}" for i in range(plain_lines)],
        [f"x{i:05d} = {i + 1:05d}" for i in range(plain_lines)],
    )
    hostile_s = _cpu_seconds_to_classify(diff)
    plain_s = _cpu_seconds_to_classify(plain)
    assert hostile_s < 8 * max(plain_s, 0.05), (hostile_s, plain_s)


_OPERANDS = st.lists(
    st.sampled_from(["a", "b", "c", "x.ok", "f(a)", "n > 0"]), min_size=2, max_size=8
)


@settings(max_examples=200, deadline=None)
@given(_OPERANDS, st.data(), st.sampled_from(["and", "or"]))
def test_dropping_any_clause_is_condition_removed(
    operands: list[str], data: st.DataObject, connective: str
) -> None:
    """Whichever operand of an `and`/`or` chain is dropped, however the diff aligns it: condition_removed."""
    cut = data.draw(st.integers(0, len(operands) - 1))
    kept = operands[:cut] + operands[cut + 1 :]
    before = "ok = " + f" {connective} ".join(operands)
    after = "ok = " + f" {connective} ".join(kept)
    assert _line(before, after) is BugCategory.CONDITION_REMOVED


@settings(max_examples=200, deadline=None)
@given(_OPERANDS.map(lambda xs: [x for x in xs if ">" not in x] or ["a", "b"]), st.data())
def test_dropping_a_unit_term_anywhere_is_off_by_one(
    operands: list[str], data: st.DataObject
) -> None:
    """A `- 1` or `+ 1` dropped from any place in a sum of names is off_by_one."""
    at = data.draw(st.integers(1, len(operands)))
    sign = data.draw(st.sampled_from(["+", "-"]))
    rest = "".join(f" - {o}" for o in operands[at:])
    before = "x = " + " - ".join(operands[:at]) + f" {sign} 1" + rest
    after = "x = " + " - ".join(operands)
    assert _line(before, after) is BugCategory.OFF_BY_ONE


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.text(max_size=200))
def test_rules_never_raise_on_any_line_pair(old: str, new: str) -> None:
    """Every rule is total: any pair of lines gets a category."""
    change = Change(
        CodeLine("m.py", 1, old, tokenize(old, "python")) if old.strip() else None,
        CodeLine("m.py", 1, new, tokenize(new, "c")) if new.strip() else None,
    )
    assert decide([change] if change.sides else []).category in set(BugCategory)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("+- "), st.text(max_size=60)), max_size=30))
def test_any_parsed_hunk_classifies(lines: list[tuple[str, str]]) -> None:
    """Whatever a well-formed hunk holds, categorize returns a category."""
    body = [(kind, text.replace("\n", " ").replace("\r", " ")) for kind, text in lines]
    old = sum(kind != "+" for kind, _ in body)
    new = sum(kind != "-" for kind, _ in body)
    diff = f"--- a/m.py\n+++ b/m.py\n@@ -1,{old} +1,{new} @@\n" + "".join(
        f"{kind}{text}\n" for kind, text in body
    )
    patch = parse_patch(diff)
    assert isinstance(extract_changes(patch), list)
    assert categorize(patch).category in set(BugCategory)
