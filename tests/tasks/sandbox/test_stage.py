"""The sandbox stage's decisions (pure) and a bad case costing only itself (real Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from bughunt.models import ReproOutcome, Status, Tree
from corpus import load_corpus
from tasks.sandbox import SandboxCases, SandboxSettings, run_sandbox
from tasks.sandbox.evidence import BUGGY_VARIANTS, CLEAN_VARIANTS
from tasks.sandbox.reproduction._reproduce import (
    FINGERPRINT_REASON,
    HANG_REASON,
    decide_outcome,
    derive_seed,
    schedule,
)
from tests.flows.corpora import mini_corpus

P, F, E, T = Status.PASS, Status.FAIL, Status.ERROR, Status.TIMEOUT


@pytest.mark.parametrize(
    "buggy,clean,outcome,reason",
    [
        ([F, F, F], [P, P, P], ReproOutcome.REPRODUCED, None),
        ([P, P, P], [P, P, P], ReproOutcome.NOT_REPRODUCED, "the test passes on the buggy tree"),
        ([F, F, F], [F, F, F], ReproOutcome.NOT_REPRODUCED, "the test fails on the clean tree too"),
        ([F, F, F], [P, F, P], ReproOutcome.FLAKY, "clean tree: 1 fail, 2 pass"),
        ([F, T, F], [P, P, F], ReproOutcome.FLAKY, "clean tree: 1 fail, 2 pass"),
        ([T, T, T], [P, P, P], ReproOutcome.REPRODUCED, HANG_REASON),
        ([E], [P], ReproOutcome.ERROR, "buggy tree: 1 error; clean tree: 1 pass"),
        ([], [], ReproOutcome.ERROR, "buggy tree: ; clean tree: "),
    ],
)
def test_decide_outcome(
    buggy: list[Status], clean: list[Status], outcome: ReproOutcome, reason: str | None
) -> None:
    """Flaky beats error beats the reproduction pattern; each with its reason."""
    assert decide_outcome(buggy, clean) == (outcome, reason)


@pytest.mark.parametrize(
    "rw_buggy,rw_clean,outcome,reason",
    [
        ([F], [P], ReproOutcome.REPRODUCED, None),
        ([P], [P], ReproOutcome.NOT_REPRODUCED, FINGERPRINT_REASON),
        ([F], [F], ReproOutcome.NOT_REPRODUCED, FINGERPRINT_REASON),
        ([P], [F], ReproOutcome.NOT_REPRODUCED, FINGERPRINT_REASON),
        ([T], [P], ReproOutcome.NOT_REPRODUCED, FINGERPRINT_REASON),
        ([F], [E], ReproOutcome.NOT_REPRODUCED, FINGERPRINT_REASON),
    ],
)
def test_a_reproduction_must_also_hold_on_the_rewritten_trees(
    rw_buggy: list[Status], rw_clean: list[Status], outcome: ReproOutcome, reason: str | None
) -> None:
    """Reproduced on the trees as shown counts only when the rewrites show the same pattern."""
    assert decide_outcome([F, F, F], [P, P, P], rw_buggy, rw_clean) == (outcome, reason)


def test_rewrites_do_not_rescue_a_test_that_fails_on_the_shown_trees() -> None:
    """Rewritten executions never turn a non-reproduction into a reproduction."""
    assert decide_outcome([P, P], [P, P], [F], [P])[0] is ReproOutcome.NOT_REPRODUCED


@given(st.integers(0, 6), st.integers(0, 3), st.integers(0, 2**63 - 1))
def test_schedule_holds_every_planned_execution_once(
    repeats: int, rewrites: int, seed: int
) -> None:
    """Whatever the seed: each (tree, repeat, rewritten) slot exactly once, same seed same order."""
    slots = schedule(repeats, rewrites, seed)
    expected = {
        (tree, r, rw)
        for rw, n in ((False, repeats), (True, rewrites))
        for tree in (Tree.BUGGY, Tree.CLEAN)
        for r in range(n)
    }
    assert (
        len(slots) == len(expected) and {(s.tree, s.repeat, s.rewritten) for s in slots} == expected
    )
    assert schedule(repeats, rewrites, seed) == slots


def test_schedule_order_depends_on_the_seed_so_no_tree_always_comes_first() -> None:
    """Over many seeds the first execution is on the buggy tree about half the time."""
    firsts = [schedule(3, 1, seed)[0].tree for seed in range(400)]
    share = firsts.count(Tree.BUGGY) / len(firsts)
    assert 0.4 < share < 0.6, share


def test_derived_seeds_depend_on_every_part_only() -> None:
    """A piece's seed is a function of the run seed and names: stable, and distinct per name."""
    assert derive_seed(7, "order", "case-a", "x") == derive_seed(7, "order", "case-a", "x")
    assert len({derive_seed(7, "order", c, "x") for c in "abcdefgh"}) == 8
    assert derive_seed(7, "order", "a", "x") != derive_seed(8, "order", "a", "x")


@pytest.mark.docker
def test_patch_that_does_not_apply_costs_only_its_case(tmp_path: Path) -> None:
    """A case whose patch no longer applies is an error per agent; the other case still runs."""
    good, bad = "cmp-withdraw-exact-balance", "state-next-id"
    root = mini_corpus(tmp_path / "repo", [good, bad])
    patch = root / "cases" / bad / "bug.patch"
    patch.write_text(patch.read_text().replace("-", "+", 3))
    corpus = load_corpus(root)
    agent = next(a for a in corpus.config.agents if a.name == "baseline-recorded")
    result = run_sandbox(
        corpus,
        cases=SandboxCases(ids=[good, bad], hashes={}),
        agents=[agent],
        run_id="stage-bad-patch",
        settings=SandboxSettings(repeats=1),
    )
    by_case = {p.case_id: p for p in result.pairs}
    good_pair = by_case[good]
    assert good_pair.outcome is ReproOutcome.REPRODUCED
    # one on each tree as shown (no rewrites by default), then once on each variant
    assert len(good_pair.observations) == 2 + BUGGY_VARIANTS + CLEAN_VARIANTS
    assert all(o.rewrite is None for o in good_pair.observations)
    assert (
        sum("variant" in o.annotations for o in good_pair.observations)
        == BUGGY_VARIANTS + CLEAN_VARIANTS
    )
    assert by_case[bad].outcome is ReproOutcome.ERROR and by_case[bad].observations == []
    assert (by_case[bad].reason or "").startswith("buggy tree could not be prepared: ")


@pytest.mark.docker
def test_a_stage_starts_its_cells_once_for_the_contract_and_the_pairs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_id: str
) -> None:
    """With one slot, a stage (a shard on a Dask worker) checks its case's contract and runs
    its pairs in one cell: the contract's cell is not killed to start another for the pairs."""
    from tasks.sandbox.engine._cell import CellExecutor

    started: list[str] = []
    new_cell = CellExecutor._new_cell

    def counted(self: CellExecutor) -> object:
        cell = new_cell(self)
        started.append(cell.id)
        return cell

    monkeypatch.setattr(CellExecutor, "_new_cell", counted)
    case = "cmp-withdraw-exact-balance"
    corpus = load_corpus(mini_corpus(tmp_path / "repo", [case]))
    agent = next(a for a in corpus.config.agents if a.name == "baseline-recorded")
    result = run_sandbox(
        corpus,
        cases=SandboxCases(ids=[case], hashes={case: "h-" + case}),
        agents=[agent],
        run_id=run_id,
        settings=SandboxSettings(repeats=1, workers=1),
    )
    assert [c.status.value for c in result.checks] == ["ok"]
    assert result.pairs[0].outcome is ReproOutcome.REPRODUCED
    assert len(started) == 1, started


def test_verify_answers_an_unusable_report_before_asking_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report that is not one (a key given twice) is the pair's error with its reason; no
    engine is contacted and no image built for it (the target's environment stays unbuilt)."""
    import tasks.sandbox._stage_engine as stage_engine
    from tasks.sandbox import verify_report

    def no_engine(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the engine was asked for something")

    monkeypatch.setattr(stage_engine, "connect", no_engine)
    monkeypatch.setattr(stage_engine, "ensure_corpus_images", no_engine)
    corpus = load_corpus(mini_corpus(tmp_path / "repo", ["cmp-withdraw-exact-balance"]))
    report = tmp_path / "report.json"
    report.write_text('{"title": "a", "title": "b"}')
    pair = verify_report(
        corpus, "cmp-withdraw-exact-balance", report, run_id="verify-x", settings=SandboxSettings()
    )
    assert pair.outcome is ReproOutcome.ERROR and pair.report is None
    assert pair.unusable_reason is not None and "title" in pair.unusable_reason
