"""Each case's behaviour-preserving rewrites for one run, and the check that they preserve.

The rewrite (corpus/_rewrite.py) is drawn per run and case from the run's
seed, no further than the level the case's contract check found, and never
in the target's test files. It is checked only where a verdict depends on
it: when a reproduction holds on the trees as shown and not on their
rewrites. Then the target's own suite runs on all four trees, and the
rewrite counts only if every test but the target's known failures keeps its
outcome. The check runs once per case and run, whatever number of agents
need it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Collection
from dataclasses import dataclass, field

from bughunt.models import ContractCheck, RewriteLevel
from corpus import FileMemo, TargetConfig, rewrite_tree, target_test_files
from tasks.sandbox.engine import ExecResult, Executor
from tasks.sandbox.reproduction._reproduce import CaseTrees, derive_seed
from tasks.sandbox.trees import Files

_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class RewritePlan:
    """How far one case's rewrites go: its contract's level, never into its test files."""

    level: RewriteLevel = RewriteLevel.FULL
    exclude: frozenset[str] = frozenset()
    """The target's test files (:func:`corpus.target_test_files`)."""
    known: frozenset[str] = frozenset()
    """The target's known failures, which no rewrite check looks at."""


def rewrite_plan(
    check: ContractCheck | None, trees: tuple[Files, Files], target: TargetConfig
) -> RewritePlan:
    """How far a case's rewrites go: its contract check's level (the strongest without one, as
    for ``sandbox verify``), never into the target's test files of either tree."""
    return RewritePlan(
        level=(check.rewrite_level if check and check.rewrite_level else RewriteLevel.FULL),
        exclude=target_test_files({**trees[0], **trees[1]}, target.oracle, target.visible_tests),
        known=frozenset(check.known_failures) if check else frozenset(),
    )


def case_trees(
    buggy: Files, clean: Files, *, seed: int, case_id: str, plan: RewritePlan | None
) -> CaseTrees:
    """The case's trees, with this run's rewrites under ``plan`` (None: no rewrites) when a
    Python file changes."""
    if plan is None or plan.level is RewriteLevel.NONE:
        return CaseTrees(buggy=buggy, clean=clean)
    rewrite_seed = derive_seed(seed, "rewrite", case_id)
    memo: FileMemo = {}  # the files both trees share are rewritten once
    rw_buggy = rewrite_tree(buggy, rewrite_seed, memo=memo, exclude=plan.exclude, level=plan.level)
    rw_clean = rewrite_tree(clean, rewrite_seed, memo=memo, exclude=plan.exclude, level=plan.level)
    if not rw_buggy.rewritten and not rw_clean.rewritten:
        return CaseTrees(buggy=buggy, clean=clean)
    return CaseTrees(
        buggy=buggy,
        clean=clean,
        rewritten_buggy=rw_buggy.files,
        rewritten_clean=rw_clean.files,
        rewrite_seed=rewrite_seed,
    )


def suite_signature(result: ExecResult) -> tuple[str, frozenset[str]]:
    """What a run of the target's suite showed: how it ended, and which tests failed."""
    if result.timed_out:
        return "timeout", frozenset()
    return f"exit {result.exit_code}", frozenset(_FAILED.findall(result.output))


_RAN = ("exit 0", "exit 1")
"""Endings of a suite that ran its tests (pytest: all passed / some failed)."""


def suite_outcome(
    sig: tuple[str, frozenset[str]], known: Collection[str]
) -> tuple[str, frozenset[str]]:
    """What a suite run decides with: how it ended (any run of the tests alike) and which tests
    failed, the target's known failures left out."""
    ending = "ran" if sig[0] in _RAN else sig[0]
    return ending, sig[1] - frozenset(known)


@dataclass
class RewriteCheck:
    """Lazily: does this case's rewrite keep every target test's outcome? (once per run)."""

    trees: CaseTrees
    test_command: tuple[str, ...]
    timeout_s: float
    known: frozenset[str] = frozenset()
    """The target's known failures: their outcomes are no evidence either way."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _answer: str | None = None
    _done: bool = False

    def problem(self, executor: Executor) -> str | None:
        """None when the rewrite preserves the suite's outcomes; else what changed."""
        with self._lock:
            if not self._done:
                self._answer = self._check(executor)
                self._done = True
            return self._answer

    def _check(self, executor: Executor) -> str | None:
        t = self.trees
        assert t.rewritten_buggy is not None and t.rewritten_clean is not None
        for name, shown, rewritten in (
            ("buggy", t.buggy, t.rewritten_buggy),
            ("clean", t.clean, t.rewritten_clean),
        ):
            before = suite_outcome(suite_signature(self._run(executor, shown)), self.known)
            after = suite_outcome(suite_signature(self._run(executor, rewritten)), self.known)
            if before != after:
                return (
                    f"the rewrite changed the target suite's outcome on the {name} tree "
                    f"({before[0]}, {len(before[1])} failing → {after[0]}, {len(after[1])} failing)"
                )
        return None

    def _run(self, executor: Executor, files: Files) -> ExecResult:
        return executor.run(list(self.test_command), workspace=files, timeout_s=self.timeout_s)
