"""Variants with a decoy: where decoys go, what each side's variant is, and what the verdict makes
of an execution on one. Pure: trees are dicts of bytes, traces the harness's records."""

from __future__ import annotations

import itertools

from bughunt.models import Observation, ReproOutcome, Status, Tree
from tasks.sandbox.evidence import (
    BUGGY_VARIANTS,
    CLEAN_VARIANTS,
    Trace,
    plan_variants,
    site_ran,
    variant_agrees,
)
from tasks.sandbox.reproduction._reproduce import VARIANT_REASON, decide_outcome, variants_outcome

CLEAN = b"""\
def inside(lo, hi, x):
    return lo <= x < hi


def grow(n):
    if n > 10:
        return n * 2
    return n + 1


def shrink(n):
    if n < 0:
        return n - 1
    return n // 2


def cap(n, top):
    return min(n, top) if top > 0 else n
"""
BUGGY = CLEAN.replace(b"lo <= x < hi", b"lo <= x <= hi")
HELPER = b"def twice(n):\n    return n * 2\n\n\ndef half(n):\n    return n // 2 if n > 0 else 0\n"
TREES = {"pkg/mod.py": (BUGGY, CLEAN), "pkg/helper.py": (HELPER, HELPER)}


def _trees() -> tuple[dict[str, bytes], dict[str, bytes]]:
    return {p: b for p, (b, _c) in TREES.items()}, {p: c for p, (_b, c) in TREES.items()}


# The test imported both modules and called inside() and grow(20).
SCOUT = Trace(
    {"pkg/mod.py": frozenset({1, 2, 5, 6, 7, 11, 17}), "pkg/helper.py": frozenset({1, 5})}, None
)


def test_decoys_go_only_where_the_test_did_not_and_never_on_the_bug() -> None:
    buggy, clean = _trees()
    plan = plan_variants(buggy, clean, SCOUT, seed=3)
    assert plan.short is None and len(plan.variants) == BUGGY_VARIANTS + CLEAN_VARIANTS
    assert [v.side for v in plan.variants].count(Tree.BUGGY) == BUGGY_VARIANTS
    used = set()
    for v in plan.variants:
        base = buggy if v.side is Tree.BUGGY else clean
        before, after = base[v.path].splitlines(), v.files[v.path].splitlines()
        assert len(before) == len(after)  # no line moves
        changed = {i + 1 for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b}
        assert changed == set(v.lines) and not changed & SCOUT.ran[v.path]
        assert v.path != "pkg/mod.py" or not changed & {2}  # the bug's line
        # one edit in one file: every other file of the side's tree is as it was
        assert {p: d for p, d in v.files.items() if p != v.path} == {
            p: d for p, d in base.items() if p != v.path
        }
        assert (v.path, min(changed)) not in used
        used.add((v.path, min(changed)))
    # the first variant of each side is in the bug's own file
    firsts = {v.side: v.path for v in reversed(plan.variants)}
    assert firsts == {Tree.BUGGY: "pkg/mod.py", Tree.CLEAN: "pkg/mod.py"}


def test_the_plan_depends_on_the_seed_and_only_on_it() -> None:
    buggy, clean = _trees()
    one = [(v.side, v.path, v.lines) for v in plan_variants(buggy, clean, SCOUT, seed=3).variants]
    again = [(v.side, v.path, v.lines) for v in plan_variants(buggy, clean, SCOUT, seed=3).variants]
    other = [(v.side, v.path, v.lines) for v in plan_variants(buggy, clean, SCOUT, seed=4).variants]
    assert one == again and one != other


def test_a_line_the_clean_tree_ran_holds_no_decoy() -> None:
    """Where the clean tree passes the test may go further than on the buggy one."""
    buggy, clean = _trees()
    went_on = Trace({"pkg/mod.py": frozenset(range(1, 20)), "pkg/helper.py": frozenset()}, None)
    plan = plan_variants(buggy, clean, SCOUT, seed=3, clean_scout=went_on)
    assert all(v.path == "pkg/helper.py" for v in plan.variants)


def test_too_few_sites_make_a_short_plan_that_says_so() -> None:
    buggy, clean = _trees()
    everything = Trace(
        {"pkg/mod.py": frozenset(range(1, 20)), "pkg/helper.py": frozenset({1, 2, 5, 6})}, None
    )
    plan = plan_variants(buggy, clean, everything, seed=3)
    assert plan.variants == () and "only 0 of 6 variants" in str(plan.short)


def test_site_ran_reads_the_variant_s_own_trace() -> None:
    buggy, clean = _trees()
    variant = plan_variants(buggy, clean, SCOUT, seed=3).variants[0]
    line = min(variant.lines)
    assert site_ran(Trace({variant.path: frozenset({line})}, None), variant) is True
    assert site_ran(Trace({}, None), variant) is False
    assert site_ran(Trace({}, "the trace ended early"), variant) is None


def test_what_each_side_asks() -> None:
    assert variant_agrees(Tree.BUGGY, Status.FAIL) and variant_agrees(Tree.BUGGY, Status.TIMEOUT)
    assert not variant_agrees(Tree.BUGGY, Status.PASS)
    assert variant_agrees(Tree.CLEAN, Status.PASS) and not variant_agrees(Tree.CLEAN, Status.ERROR)


def _on(side: Tree, status: Status, ran: bool | None) -> Observation:
    return Observation(
        observation_id=f"{side.value}-{status.value}-{ran}",
        tree=side,
        status=status,
        annotations={
            "variant": {"side": side.value, "index": 0, "edit": "== -> != (pkg/mod.py:9)"},
            "variant_site_ran": ran,
        },
    )


def test_the_verdict_on_variants() -> None:
    agree = [_on(Tree.BUGGY, Status.FAIL, False), _on(Tree.CLEAN, Status.PASS, True)]
    assert variants_outcome(agree) == (ReproOutcome.REPRODUCED, None)
    assert variants_outcome([]) == (ReproOutcome.REPRODUCED, None)
    held = variants_outcome([*agree, _on(Tree.BUGGY, Status.PASS, False)])
    assert held[0] is ReproOutcome.NOT_REPRODUCED and str(held[1]).endswith(VARIANT_REASON)
    assert "one that keeps the bug (== -> != (pkg/mod.py:9))" in str(held[1])
    # the decoy ran, or the trace cannot say: the decoy may be what changed the outcome
    for ran in (True, None):
        void = variants_outcome([*agree, _on(Tree.CLEAN, Status.FAIL, ran)])
        assert void[0] is ReproOutcome.ERROR and "a decoy ran" in str(void[1])


def _pattern_outcome(fails: dict[str, bool]) -> ReproOutcome:
    """The verdict of the real rules for a test that fails on the tree it saw and, on each tree
    it never saw, fails or passes as ``fails`` says (the same on every repeat of one tree)."""

    def status(tree: str) -> Status:
        return Status.FAIL if fails[tree] else Status.PASS

    shown = decide_outcome(
        [Status.FAIL] * 3,
        [status("clean")] * 3,
        [status("rewritten buggy")] * 3,
        [status("rewritten clean")] * 3,
    )[0]
    if shown is not ReproOutcome.REPRODUCED:
        return shown
    variants = [
        _on(side, status(f"{side.value} variant {i}"), False)
        for side, count in ((Tree.BUGGY, BUGGY_VARIANTS), (Tree.CLEAN, CLEAN_VARIANTS))
        for i in range(count)
    ]
    return variants_outcome(variants)[0]


def test_a_blind_guess_reproduces_at_most_the_stated_bound() -> None:
    """Every way a guess can fall on the 7 trees the agent never saw, weighed at each p: the
    chance of ``reproduced`` is never over 0.84% (docs/sandbox.md#trees-the-agent-never-saw),
    and peaks where the formula says."""
    unseen = [
        "clean",
        "rewritten buggy",
        "rewritten clean",
        *(f"buggy variant {i}" for i in range(BUGGY_VARIANTS)),
        *(f"clean variant {i}" for i in range(CLEAN_VARIANTS)),
    ]
    reproducing = [
        sum(fails)
        for fails in itertools.product((False, True), repeat=len(unseen))
        if _pattern_outcome(dict(zip(unseen, fails, strict=True))) is ReproOutcome.REPRODUCED
    ]
    assert reproducing == [BUGGY_VARIANTS + 1]  # exactly one pattern: fail on the buggy-side ones
    m, k = 1 + 1 + CLEAN_VARIANTS, 1 + BUGGY_VARIANTS
    worst = max((1 - p) ** m * p**k for p in (i / 1000 for i in range(1001)))
    assert worst <= m**m * k**k / (m + k) ** (m + k) + 1e-12 < 0.0085
