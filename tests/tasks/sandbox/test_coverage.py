"""The bug's lines on each tree, a trace read against them, and a pair's executions summed up.

Pure: trees are dicts of bytes, traces are the harness's records as text.
"""

from __future__ import annotations

from bughunt.models import Observation, ReproOutcome, Status, Tree
from tasks.sandbox.evidence import (
    Coverage,
    Trace,
    annotations_of,
    bug_coverage,
    bug_lines,
    coverage_of,
    read_trace,
)
from tasks.sandbox.reproduction import NOT_EXECUTED_REASON, outcome_of

CLEAN = b"""\
import os

LIMIT = 3


def inside(lo, hi, x):
    # both ends
    if lo <= x and x < hi:
        return True
    return False


class Box:
    def size(self):
        total = 0
        for part in self.parts:
            total += part
        return total

    def name(self):
        return "box"
"""


def _edit(source: bytes, old: bytes, new: bytes) -> bytes:
    assert old in source
    return source.replace(old, new, 1)


def _lines(clean: bytes, buggy: bytes, path: str = "pkg/mod.py") -> tuple[object, object]:
    found = bug_lines({path: clean}, {path: buggy})
    return dict(found.lines), found.unmeasured


def test_a_changed_line_is_its_own_bug_line() -> None:
    buggy = _edit(CLEAN, b"x < hi", b"x <= hi")
    assert _lines(CLEAN, buggy) == ({"pkg/mod.py": frozenset({8})}, None)
    # and on the clean tree, the same line of its own side
    assert _lines(buggy, CLEAN) == ({"pkg/mod.py": frozenset({8})}, None)


def test_a_module_level_change_counts_on_import() -> None:
    buggy = _edit(CLEAN, b"LIMIT = 3", b"LIMIT = 4")
    assert _lines(CLEAN, buggy) == ({"pkg/mod.py": frozenset({3})}, None)


def test_a_deleted_statement_stands_for_the_next_line_of_its_function() -> None:
    buggy = _edit(CLEAN, b"        total = 0\n", b"")
    # Not `def size` (14, which runs in the class body on import): the loop that follows.
    assert _lines(CLEAN, buggy) == ({"pkg/mod.py": frozenset({15})}, None)


def test_a_deleted_last_statement_stands_for_the_line_before_it_in_its_function() -> None:
    buggy = _edit(CLEAN, b'        return "box"\n', b"        pass\n")
    assert _lines(CLEAN, buggy)[0] == {"pkg/mod.py": frozenset({21})}
    # Deleted outright: the function's body is gone; its line before is `def name` — a
    # definition line runs in the class body, so the function is what stands for it.
    gone = _edit(CLEAN, b'        return "box"\n', b"        ...\n")
    assert _lines(CLEAN, gone)[0] == {"pkg/mod.py": frozenset({21})}


def test_a_comment_only_change_stands_for_the_next_line_that_runs() -> None:
    buggy = _edit(CLEAN, b"# both ends", b"# one end")
    assert _lines(CLEAN, buggy)[0] == {"pkg/mod.py": frozenset({8})}


def test_what_coverage_cannot_see_is_not_measured_with_the_reason() -> None:
    removed = _edit(CLEAN, b'    def name(self):\n        return "box"\n', b"")
    assert "removes a definition" in str(_lines(CLEAN, removed)[1])
    broken = _edit(CLEAN, b"return False", b"return False)")
    assert "does not compile" in str(_lines(CLEAN, broken)[1])
    data = bug_lines(
        {"a.py": b"x = 1\n", "data.json": b"{}"}, {"a.py": b"x = 2\n", "data.json": b"[]"}
    )
    assert data.lines == {} and "outside .py files (data.json)" in str(data.unmeasured)
    hooks = bug_lines({"tests/conftest.py": b"x = 1\n"}, {"tests/conftest.py": b"x = 2\n"})
    assert "tests/conftest.py, whose hooks run untraced" in str(hooks.unmeasured)


def test_a_new_file_is_all_bug() -> None:
    found = bug_lines({}, {"new.py": b"x = 1\n\ny = 2\n"})
    assert found.lines == {"new.py": frozenset({1, 3})} and found.unmeasured is None


def test_read_trace_maps_indexes_to_paths_and_says_when_it_is_partial() -> None:
    trace = read_trace(b"F 0 pkg/mod.py\n0 3\n0 8\nF 1 test_x.py\n1 2\nE -\n")
    assert trace == Trace({"pkg/mod.py": frozenset({3, 8}), "test_x.py": frozenset({2})}, None)
    assert "ended early" in str(read_trace(b"F 0 a.py\n0 1\n").partial)
    assert "another program" in str(read_trace(b"E S\n").partial)
    assert "replaced" in str(read_trace(b"E R\n").partial)
    assert "cannot read" in str(read_trace(b"F 0 a.py\n7 1\nE -\n").partial)
    assert "no trace" in str(read_trace(None).partial)


def test_coverage_of_a_trace() -> None:
    bug = bug_lines({"m.py": b"a = 1\nb = 2\n"}, {"m.py": b"a = 1\nb = 3\n"})
    ran = read_trace(b"F 0 m.py\n0 1\n0 2\nE -\n")
    assert coverage_of(ran, bug) == Coverage(True, None, 2)
    missed = read_trace(b"F 0 m.py\n0 1\nE -\n")
    assert coverage_of(missed, bug) == Coverage(False, None, 1)
    # A line that ran counts in a partial trace; a missing one there proves nothing.
    assert coverage_of(read_trace(b"F 0 m.py\n0 2\n"), bug).executed is True
    cut = coverage_of(read_trace(b"F 0 m.py\n0 1\n"), bug)
    assert cut.executed is None and "ended early" in str(cut.reason)
    outside = bug_lines({"d.txt": b"1"}, {"d.txt": b"2"})
    assert coverage_of(ran, outside).executed is None


def _obs(tree: Tree, status: Status, coverage: Coverage) -> Observation:
    return Observation(
        observation_id=f"{tree.value}-{status.value}-{coverage.executed}",
        tree=tree,
        status=status,
        annotations=annotations_of(coverage),
    )


def test_a_pair_executed_the_bug_when_any_failing_buggy_execution_ran_it() -> None:
    ran, missed = Coverage(True, None, 5), Coverage(False, None, 4)
    unknown = Coverage(None, "the trace ended early", 0)
    assert bug_coverage([_obs(Tree.BUGGY, Status.FAIL, missed)]).executed is False
    assert (
        bug_coverage(
            [_obs(Tree.BUGGY, Status.FAIL, missed), _obs(Tree.BUGGY, Status.TIMEOUT, ran)]
        ).executed
        is True
    )
    # Only failing (or hanging) buggy executions count: a clean run or a pass says nothing.
    assert bug_coverage(
        [_obs(Tree.CLEAN, Status.PASS, missed), _obs(Tree.BUGGY, Status.FAIL, unknown)]
    ) == Coverage(None, "the trace ended early", 0)
    assert "never failed" in str(bug_coverage([_obs(Tree.BUGGY, Status.PASS, ran)]).reason)


def _pair(buggy: Coverage) -> list[Observation]:
    clean = Coverage(True, None, 3)
    return [
        *(_obs(Tree.BUGGY, Status.FAIL, buggy).model_copy(update={"repeat": i}) for i in range(2)),
        *(_obs(Tree.CLEAN, Status.PASS, clean).model_copy(update={"repeat": i}) for i in range(2)),
    ]


def test_a_reproduction_that_never_ran_the_bug_is_not_reproduced() -> None:
    """Coverage vetoes a reproduction only when measured: not measured leaves the verdict as it is."""
    missed = outcome_of(_pair(Coverage(False, None, 2)), 10.0)
    assert missed == (ReproOutcome.NOT_REPRODUCED, NOT_EXECUTED_REASON)
    assert outcome_of(_pair(Coverage(True, None, 5)), 10.0) == (ReproOutcome.REPRODUCED, None)
    unknown = Coverage(None, "the test started another program, whose lines are not traced", 0)
    assert outcome_of(_pair(unknown), 10.0) == (ReproOutcome.REPRODUCED, None)


def test_a_changed_continuation_line_brings_its_statement_s_first_line() -> None:
    """Before 3.10 a statement over several lines reports only its first: both stand for the bug."""
    clean = b"def f(a, b):\n    return max(\n        a,\n        b,\n    )\n"
    buggy = clean.replace(b"        b,\n", b"        -b,\n")
    assert _lines(clean, buggy) == ({"pkg/mod.py": frozenset({2, 4})}, None)
