"""One report's reproduction test against one case: the executions, shuffled, and the verdict.

The test runs ``repeats`` times on the buggy and on the clean tree as the
agent saw them, and ``rewrite_repeats`` times (none by default) on
behaviour-preserving rewrites of both (corpus/_rewrite.py), in one order shuffled from a seed
that derives from the run's seed, the case and the agent (never from a
worker or shard). Each execution gets namespaces and writable places of its
own in a hardened cell (``_cell``), so nothing but the tree's content tells
them apart.

Every execution runs under the line tracer (``harness/trace.py``); what it
shows of the bug's lines is kept in the observation's annotations
(``tasks.sandbox.evidence``), and a reproduction whose test never ran the bug
where it failed is not one (:func:`outcome_of`). A reproduction then runs on
the trees the agent never saw: variants with a decoy edit each and the bug's
code written as a behaviour-equal twin (``tasks.sandbox.evidence``).

Pure parts (the schedule, a status from an execution, the verdict) are
functions here; :func:`reproduce` is the thin shell over an executor.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from bughunt.hashing import hash_json, sha256_bytes
from bughunt.models import BugReport, Observation, ReproOutcome, Status, Symptom, Tree, utcnow
from harness import trace_program
from tasks.sandbox.engine import ExecResult, Executor, Limits, pack_workspace
from tasks.sandbox.evidence import (
    BugLines,
    Trace,
    annotations_of,
    bug_coverage,
    bug_lines,
    coverage_of,
    plan_variants,
    read_trace,
    site_ran,
    variant_agrees,
    variant_counts,
)
from tasks.sandbox.trees import Files

TEST_FILE = "test_bughunt_repro.py"
"""Name the reproduction test is written under, at the root of each tree."""

PYTEST = ("python3", "-c", trace_program(), "pytest", "-q", "-p", "no:cacheprovider", TEST_FILE)
"""The reproduction test's command: pytest under the line tracer (``harness/trace.py``), in every
execution alike; :func:`pytest_argv` adds the per-test deadline."""

HANG_SHARE = 0.25
"""A clean execution counts as passing "well under" the deadline within this share of it."""

# pytest-timeout's report of a test it stopped at the per-test deadline.
_PLUGIN_TIMEOUT = re.compile(r"^E\s+Failed: Timeout >[\d.]+s", re.MULTILINE)
# pytest's closing line: "1 passed in 0.03s" (its own time, without the interpreter's start).
_PYTEST_TIME = re.compile(r" in ([\d.]+)s(?: \([^)]*\))?(?: =+)?\s*$")


def pytest_argv(test_timeout_s: float) -> list[str]:
    """The reproduction command with pytest-timeout's per-test deadline."""
    return [*PYTEST, f"--timeout={test_timeout_s:g}", "--timeout-method=signal"]


def outer_deadline(test_timeout_s: float) -> float:
    """The container's own deadline: past the per-test one, for tests that escape it."""
    return 2 * test_timeout_s + 10


def pytest_seconds(result: ExecResult) -> float:
    """pytest's own time for the session when it printed one, else the execution's wall time."""
    tail = result.output.rstrip().splitlines()[-1:] or [""]
    match = _PYTEST_TIME.search(tail[0])
    return float(match[1]) if match else result.duration_s


_PYTEST_EXIT = {
    2: "pytest was interrupted (often a collection error: the test does not import)",
    3: "pytest internal error",
    4: "pytest usage error",
    5: "no test was collected from the reproduction file",
}


@dataclass(frozen=True, slots=True)
class CaseTrees:
    """The trees one case's reproductions run on."""

    buggy: Files
    clean: Files
    rewritten_buggy: Files | None = None
    """The buggy tree after the run's behaviour-preserving rewrite; None when none applies."""
    rewritten_clean: Files | None = None
    rewrite_seed: int | None = None
    """Seed the rewrites were drawn with."""


@dataclass(frozen=True, slots=True)
class Slot:
    """One planned execution: which tree, which repeat, original or rewritten."""

    tree: Tree
    repeat: int
    rewritten: bool
    variant: bool = False
    """On a variant of ``tree`` (``repeat`` its index): ``tasks.sandbox.evidence``'s decoys."""


def derive_seed(seed: int, *parts: str) -> int:
    """A 63-bit seed for one piece of the run, from the run's seed and names only."""
    return int(hash_json({"seed": seed, "parts": list(parts)})[:15], 16)


def schedule(repeats: int, rewrite_repeats: int, seed: int) -> list[Slot]:
    """Every execution of one reproduction, in an order shuffled by ``seed``."""
    slots = [
        Slot(tree, repeat, rewritten)
        for rewritten, count in ((False, repeats), (True, rewrite_repeats))
        for tree in (Tree.BUGGY, Tree.CLEAN)
        for repeat in range(count)
    ]
    random.Random(seed).shuffle(slots)  # noqa: S311  (seeded on purpose: the order is recorded and replayable; the seed is what the agent cannot know)
    return slots


def execution_status(result: ExecResult, timeout_s: float) -> tuple[Status, str | None]:
    """pytest's exit → pass (0) / fail (1); anything else is error or timeout, with the reason.

    ``timeout_s`` is the per-test deadline: a test pytest-timeout stopped there
    (and that really ran that long) is a ``timeout``, like one killed by the
    container's own deadline.
    """
    if result.timed_out:
        return Status.TIMEOUT, "killed at the execution's deadline"
    if (
        result.exit_code == 1
        and result.duration_s >= timeout_s
        and _PLUGIN_TIMEOUT.search(result.output)
    ):
        return Status.TIMEOUT, f"a test ran past its {timeout_s:g} s deadline"
    if result.oom_killed:
        return Status.ERROR, "killed for exceeding the memory limit"
    if result.error:
        return Status.ERROR, result.error
    if result.exit_code == 0:
        return Status.PASS, None
    if result.exit_code == 1:
        return Status.FAIL, None
    return Status.ERROR, _PYTEST_EXIT.get(result.exit_code or -1, f"exit code {result.exit_code}")


def _count(statuses: Sequence[Status]) -> str:
    counts: dict[str, int] = {}
    for s in statuses:
        counts[s.value] = counts.get(s.value, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))


HANG_REASON = (
    "symptom hang: every buggy execution hit the per-test deadline, the clean tree passed "
    "well under it"
)

FINGERPRINT_REASON = (
    "it does not hold on a behaviour-preserving rewrite of the trees: the test tells the "
    "trees apart by something other than the bug"
)


def _only(statuses: Sequence[Status], status: Status) -> bool:
    """Every execution ended in ``status`` (true of no executions)."""
    return all(s is status for s in statuses)


def _flaky_tree(buggy: Sequence[Status], clean: Sequence[Status]) -> str | None:
    """The first tree that both passed and failed, with its counts; None when neither did."""
    for name, statuses in (("buggy", buggy), ("clean", clean)):
        if Status.PASS in statuses and Status.FAIL in statuses:
            return f"{name} tree: {_count(statuses)}"
    return None


def _hangs(
    buggy: Sequence[Status],
    clean: Sequence[Status],
    rewritten_buggy: Sequence[Status],
    rewritten_clean: Sequence[Status],
) -> bool:
    """Both trees ran as shown, every buggy execution timed out and every clean one passed.

    Rewritten executions count with the shown ones: a hang must hold on the
    rewrites too.
    """
    return (
        bool(buggy)
        and bool(clean)
        and _only((*buggy, *rewritten_buggy), Status.TIMEOUT)
        and _only((*clean, *rewritten_clean), Status.PASS)
    )


def _hang_outcome(slow_clean: int) -> tuple[ReproOutcome, str]:
    """A hang reproduces only when no clean pass came close to the deadline."""
    if slow_clean:
        return ReproOutcome.ERROR, (
            f"the buggy tree hangs, but {slow_clean} clean execution(s) passed only "
            f"slowly (over {HANG_SHARE:.0%} of the deadline): not a clear hang"
        )
    return ReproOutcome.REPRODUCED, HANG_REASON


def _undecided(buggy: Sequence[Status], clean: Sequence[Status]) -> bool:
    """A tree as shown has no execution, or one of them neither passed nor failed."""
    return (
        not buggy or not clean or any(s not in (Status.PASS, Status.FAIL) for s in (*buggy, *clean))
    )


def _decided_outcome(
    buggy: Sequence[Status],
    clean: Sequence[Status],
    rewritten_buggy: Sequence[Status],
    rewritten_clean: Sequence[Status],
) -> tuple[ReproOutcome, str | None]:
    """The outcome when every execution on the trees as shown passed or failed, and none is flaky."""
    if _only(buggy, Status.FAIL) and _only(clean, Status.PASS):
        # Anything but fail on the rewritten buggy tree and pass on the rewritten clean one
        # (a pass, an error, a timeout) means the test does not hold there: a test must not
        # be able to turn a failed check into an "error" that only asks for a review.
        if _only(rewritten_buggy, Status.FAIL) and _only(rewritten_clean, Status.PASS):
            return ReproOutcome.REPRODUCED, None
        return ReproOutcome.NOT_REPRODUCED, FINGERPRINT_REASON
    if _only(buggy, Status.PASS):
        return ReproOutcome.NOT_REPRODUCED, "the test passes on the buggy tree"
    return ReproOutcome.NOT_REPRODUCED, "the test fails on the clean tree too"


def decide_outcome(
    buggy: Sequence[Status],
    clean: Sequence[Status],
    rewritten_buggy: Sequence[Status] = (),
    rewritten_clean: Sequence[Status] = (),
    *,
    slow_clean: int = 0,
) -> tuple[ReproOutcome, str | None]:
    """The pair's outcome from its executions (order: flaky, hang, error, reproduced, not_reproduced).

    Flaky: a tree both passed and failed (identical content, both outcomes).
    Hang: every buggy execution (shown and rewritten) hit the per-test
    deadline and every clean one passed, none of them slowly (``slow_clean``
    counts clean passes over :data:`HANG_SHARE` of the deadline): reproduced,
    symptom hang (:func:`symptom_of`). Error: any other execution that did not
    decide (error, timeout). Reproduced: every buggy execution failed and every
    clean one passed, on the trees as shown and on their rewrites. A test that
    reproduces on the trees as shown and not on their rewrites is not
    reproduced, with that reason, whatever the rewritten executions ended in.
    """
    flaky = _flaky_tree(buggy, clean)
    if flaky is not None:
        return ReproOutcome.FLAKY, flaky
    if _hangs(buggy, clean, rewritten_buggy, rewritten_clean):
        return _hang_outcome(slow_clean)
    if _undecided(buggy, clean):
        return ReproOutcome.ERROR, f"buggy tree: {_count(buggy)}; clean tree: {_count(clean)}"
    return _decided_outcome(buggy, clean, rewritten_buggy, rewritten_clean)


@dataclass(frozen=True, slots=True)
class PairIds:
    """Who an execution belongs to, for its observation row."""

    run_id: str
    case_id: str
    case_hash: str | None
    agent: str
    image_id: str
    sample: int = 0
    """Which of the agent's samples on the case: part of every execution's identity."""


@dataclass(frozen=True, slots=True)
class ReproRuns:
    """How a pair's test is run: how often on which trees, each for how long, in which order."""

    repeats: int
    """Executions on each tree as the agent saw it."""
    rewrite_repeats: int
    """Executions on each rewritten tree, when the case has rewrites."""
    timeout_s: float
    """Each execution's deadline (the test's own; the cell's comes on top)."""
    seed: int
    """The run's seed: the order of the executions derives from it."""


def reproduce(
    report: BugReport, trees: CaseTrees, *, executor: Executor, ids: PairIds, runs: ReproRuns
) -> tuple[str, list[Observation]]:
    """Run ``report``'s test on every planned tree, each execution isolated from every other.

    Returns the test's hash and one observation per execution, in the
    order they ran. Without rewritten trees, only the trees as shown run.
    When those executions make a reproduction, the test then runs once on each
    variant of the trees with a decoy (``tasks.sandbox.evidence``), placed
    where the first execution on each tree did not go.
    """
    timeout_s = runs.timeout_s
    test = report.repro_test.encode("utf-8")
    test_hash = sha256_bytes(test)
    has_rewrite = trees.rewritten_buggy is not None and trees.rewritten_clean is not None
    payloads = _payloads(trees, test, executor.limits)
    bugs = _bug_lines(trees)
    # Sample 0 keeps the seed (and record ids) a run without samples had.
    order_seed = derive_seed(runs.seed, "order", ids.case_id, ids.agent, *_sample_part(ids))
    slots = schedule(runs.repeats, runs.rewrite_repeats if has_rewrite else 0, order_seed)
    run = _Runner(executor, ids, test_hash, timeout_s, trees.rewrite_seed)
    # The first execution on each tree as shown scouts where the test goes: the variants'
    # decoys go where it did not.
    scouts: dict[Tree, Trace] = {}
    for slot in slots:
        trace = run.one(slot, payloads[slot.tree, slot.rewritten], bugs[slot.tree, slot.rewritten])
        if not slot.rewritten:
            scouts.setdefault(slot.tree, trace)
    if outcome_of(run.observations, timeout_s)[0] is ReproOutcome.REPRODUCED:
        seed = derive_seed(runs.seed, "variants", ids.case_id, ids.agent, *_sample_part(ids))
        plan = plan_variants(
            trees.buggy,
            trees.clean,
            scouts[Tree.BUGGY],
            seed=seed,
            clean_scout=scouts.get(Tree.CLEAN),
            counts=variant_counts(has_rewrite and runs.rewrite_repeats > 0),
            bugs={side: bugs[side, False] for side in Tree},
        )
        run.observations[0].annotations["variants_short"] = plan.short
        for variant in plan.variants:
            slot = Slot(variant.side, variant.index, rewritten=False, variant=True)
            payload = pack_workspace(
                {**variant.files, TEST_FILE: test}, max_bytes=executor.limits.scratch_bytes
            )
            trace = run.one(slot, payload, bugs[variant.side, False])
            annotations = run.observations[-1].annotations
            annotations["variant"] = variant.describe()
            annotations["variant_site_ran"] = site_ran(trace, variant)
    return test_hash, run.observations


@dataclass
class _Runner:
    """Runs one pair's executions and keeps their observations, in the order they ran."""

    executor: Executor
    ids: PairIds
    test_hash: str
    timeout_s: float
    rewrite_seed: int | None
    observations: list[Observation] = field(default_factory=list)

    def one(self, slot: Slot, payload: bytes, bug: BugLines) -> Trace:
        """One execution of the test on ``payload``: its observation kept, its trace returned."""
        result = self.executor.run(
            pytest_argv(self.timeout_s),
            workspace=payload,
            timeout_s=outer_deadline(self.timeout_s),
        )
        observation = _observation(
            self.ids,
            slot,
            result,
            self.test_hash,
            self.timeout_s,
            len(self.observations),
            self.rewrite_seed,
        )
        trace = read_trace(result.trace)
        observation.annotations.update(annotations_of(coverage_of(trace, bug)))
        self.observations.append(observation)
        return trace


def _bug_lines(trees: CaseTrees) -> dict[tuple[Tree, bool], BugLines]:
    """Each tree's lines that stand for the bug (its side of the difference from the other)."""
    pairs = {
        False: (trees.buggy, trees.clean),
        True: (trees.rewritten_buggy, trees.rewritten_clean),
    }
    out: dict[tuple[Tree, bool], BugLines] = {}
    for rewritten, (buggy, clean) in pairs.items():
        if buggy is not None and clean is not None:
            out[Tree.BUGGY, rewritten] = bug_lines(clean, buggy)
            out[Tree.CLEAN, rewritten] = bug_lines(buggy, clean)
    return out


def _sample_part(ids: PairIds) -> tuple[str, ...]:
    return (f"s{ids.sample}",) if ids.sample else ()


def _payloads(trees: CaseTrees, test: bytes, limits: Limits) -> dict[tuple[Tree, bool], bytes]:
    """Each tree with the test at its root, packed once."""
    variants = {
        (Tree.BUGGY, False): trees.buggy,
        (Tree.CLEAN, False): trees.clean,
        (Tree.BUGGY, True): trees.rewritten_buggy,
        (Tree.CLEAN, True): trees.rewritten_clean,
    }
    return {
        key: pack_workspace({**files, TEST_FILE: test}, max_bytes=limits.scratch_bytes)
        for key, files in variants.items()
        if files is not None
    }


def _observation(
    ids: PairIds,
    slot: Slot,
    result: ExecResult,
    test_hash: str,
    timeout_s: float,
    position: int,
    rewrite_seed: int | None,
) -> Observation:
    status, why = execution_status(result, timeout_s)
    annotations: dict[str, object] = {
        "output_truncated_bytes": result.output_truncated_bytes,
        "position": position,
        "pytest_seconds": pytest_seconds(result),
    }
    if why:
        annotations["reason"] = why
    suffix = "-rewrite" if slot.rewritten else "-variant" if slot.variant else ""
    return Observation(
        observation_id=uuid.uuid4().hex,
        # The test's hash is part of the identity: other source run again is a new observation.
        record_id="/".join(
            (
                ids.run_id,
                ids.case_id,
                ids.agent,
                *_sample_part(ids),
                test_hash[:16],
                f"{slot.tree.value}{suffix}",
                str(slot.repeat),
            )
        ),
        case_id=ids.case_id,
        run_id=ids.run_id,
        agent_version=ids.agent,
        kind=f"repro:{slot.tree.value}{suffix}",
        status=status,
        case_hash=ids.case_hash,
        annotations=annotations,
        source="sandbox",
        batch_id=ids.run_id,
        ingested_at=utcnow(),
        tree=slot.tree,
        repeat=slot.repeat,
        exit_code=result.exit_code,
        duration_s=round(result.duration_s, 6),
        output=result.output,
        test_hash=test_hash,
        image_id=ids.image_id,
        sample=ids.sample,
        rewrite=rewrite_seed if slot.rewritten else None,
    )


def _on_variant(o: Observation) -> bool:
    return "variant" in o.annotations


def symptom_of(outcome: ReproOutcome, observations: Sequence[Observation]) -> Symptom | None:
    """How a reproduced bug showed: hang when every buggy execution timed out, else fail."""
    if outcome is not ReproOutcome.REPRODUCED:
        return None
    buggy = [o.status for o in observations if o.tree is Tree.BUGGY and not _on_variant(o)]
    return Symptom.HANG if buggy and all(s is Status.TIMEOUT for s in buggy) else Symptom.FAIL


def outcome_of(
    observations: Sequence[Observation], test_timeout_s: float
) -> tuple[ReproOutcome, str | None]:
    """:func:`decide_outcome` over a pair's executions on the trees as shown and rewritten and its
    per-test deadline; then, for a reproduction, the coverage rule (measured, and no failing or
    hanging buggy execution ran a line of the bug: ``not_reproduced``,
    :data:`NOT_EXECUTED_REASON`) and the variants (:func:`variants_outcome`)."""
    shown = [o for o in observations if not _on_variant(o)]
    limit = HANG_SHARE * test_timeout_s
    slow = sum(
        1
        for o in shown
        if o.tree is Tree.CLEAN
        and o.status is Status.PASS
        and float(o.annotations.get("pytest_seconds", o.duration_s or 0.0)) > limit
    )

    def of(tree: Tree, rewritten: bool) -> list[Status]:
        return [o.status for o in shown if o.tree is tree and (o.rewrite is not None) is rewritten]

    outcome, reason = decide_outcome(
        of(Tree.BUGGY, False),
        of(Tree.CLEAN, False),
        of(Tree.BUGGY, True),
        of(Tree.CLEAN, True),
        slow_clean=slow,
    )
    if outcome is not ReproOutcome.REPRODUCED:
        return outcome, reason
    if bug_coverage(observations).executed is False:
        return ReproOutcome.NOT_REPRODUCED, NOT_EXECUTED_REASON
    checked = variants_outcome([o for o in observations if _on_variant(o)])
    return (outcome, reason) if checked[0] is ReproOutcome.REPRODUCED else checked


def variants_outcome(variants: Sequence[Observation]) -> tuple[ReproOutcome, str | None]:
    """A reproduction's verdict from its executions on variants (none: it stands).

    An execution that did not do what its variant's tree asks is held against
    the test when the decoy did not run in it (its trace is whole and shows
    none of the decoy's lines): ``not_reproduced``. When the decoy ran, or the
    trace cannot say, the decoy may have changed what the test saw: ``error``,
    for a person to look at.
    """
    void = []
    for o in variants:
        side = Tree(str(o.annotations["variant"]["side"]))
        if o.tree is None or variant_agrees(side, o.status):
            continue
        edit = o.annotations["variant"]["edit"]
        what = "keeps the bug" if side is Tree.BUGGY else "has no bug"
        if o.annotations.get("variant_site_ran") is False:
            return ReproOutcome.NOT_REPRODUCED, (
                f"on a {side.value} tree it had not seen, one that {what} ({edit}), the test "
                f"ended {o.status.value}: {VARIANT_REASON}"
            )
        void.append(f"{side.value} variant ({edit}): {o.status.value}")
    if void:
        return ReproOutcome.ERROR, (
            "a decoy ran where the test did not do what its tree asks, so it may have changed "
            f"what the test saw: {'; '.join(void)}"
        )
    return ReproOutcome.REPRODUCED, None


VARIANT_REASON = "it tells the trees apart by something other than the bug"


NOT_EXECUTED_REASON = (
    "the test never executed the bug: no line of the bug ran where it failed on the buggy tree"
)
