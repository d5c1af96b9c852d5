"""Flaky keys never count as reproduced / not-reproduced; the summary lists them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bughunt.models import FlakeRecord, FlakeState, Observation, Status, Tree
from tasks.flakes import FlakeThresholds, FlakyTest, flaky_keys
from tasks.flakes._fold import update_flakes
from tasks.flakes._summary import ReproductionInput, exclude_flaky, is_flaky_key

T0 = datetime(2026, 2, 1, 2, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=1)


def runs(case: str, tree: Tree, codes: str, agent: str = "candidate") -> list[Observation]:
    """One key's executions: ``codes`` of P / F, a minute apart."""
    return [
        Observation(
            observation_id=f"{case}-{agent}-{tree}-{i}",
            case_id=case,
            run_id="r1",
            agent_version=agent,
            status=Status.PASS if c == "P" else Status.FAIL,
            case_hash=f"hash-{case}",
            ingested_at=T0 + timedelta(minutes=i),
            tree=tree,
            repeat=i,
            test_hash=f"test-{case}-{agent}",
            image_id="sha256:img",
        )
        for i, c in enumerate(codes)
    ]


def repro(case: str, buggy: Status, clean: Status, agent: str = "candidate") -> ReproductionInput:
    return ReproductionInput(
        case_id=case,
        agent_version=agent,
        case_hash=f"hash-{case}",
        test_hash=f"test-{case}-{agent}",
        image_id="sha256:img",
        buggy=buggy,
        clean=clean,
    )


def reproduced(inputs: list[ReproductionInput]) -> int:
    """What a score stage counts: the test fails on the buggy tree and passes on the clean one."""
    return sum(1 for i in inputs if i.buggy == Status.FAIL and i.clean == Status.PASS)


def records() -> list[FlakeRecord]:
    obs = [
        *runs("a", Tree.BUGGY, "FFFFF"),
        *runs("a", Tree.CLEAN, "PPPPP"),
        *runs("b", Tree.BUGGY, "FPFFP"),  # flaky on the buggy tree
        *runs("b", Tree.CLEAN, "PPPPP"),
        *runs("c", Tree.BUGGY, "F" * 100),  # always fails: a failing test, counted
        *runs("c", Tree.CLEAN, "FFFFF"),
        *runs("d", Tree.BUGGY, "FFFFF"),
        *runs("d", Tree.CLEAN, "PPF"),  # first disagreement: suspected
    ]
    return update_flakes([], obs, "r1", FlakeThresholds(), NOW)


def test_flaky_key_is_excluded_from_reproduction() -> None:
    """A run's per-case inputs: the flaky and suspected cases are left out, the rest counted."""
    inputs = [
        repro("a", Status.FAIL, Status.PASS),
        repro("b", Status.FAIL, Status.PASS),
        repro("c", Status.FAIL, Status.FAIL),
        repro("d", Status.FAIL, Status.PASS),
    ]
    assert reproduced(inputs) == 3
    split = exclude_flaky(inputs, flaky_keys(records()))
    assert [i.case_id for i in split.kept] == ["a", "c"]
    assert reproduced(split.kept) == 1
    assert [(e.input.case_id, [(t.tree, t.state) for t in e.flaky]) for e in split.excluded] == [
        ("b", [(Tree.BUGGY, FlakeState.FLAKY)]),
        ("d", [(Tree.CLEAN, FlakeState.SUSPECTED)]),
    ]


def test_summary_lists_untrusted_keys_with_key_and_state() -> None:
    """flaky_keys lists flaky first, then suspected, with the key and its evidence."""
    listed = flaky_keys(records())
    assert [(t.case_id, t.tree, t.state) for t in listed] == [
        ("b", Tree.BUGGY, FlakeState.FLAKY),
        ("d", Tree.CLEAN, FlakeState.SUSPECTED),
    ]
    b = listed[0]
    assert (b.runs, b.passes, b.fails, b.flips, b.flake_rate) == (5, 2, 3, 3, 0.4)
    assert b.key == "hash-b/candidate/test-b-candi/buggy/img"
    assert b.ci_low is not None and b.ci_low < 0.4 < (b.ci_high or 0)


def test_trusted_states_are_not_flaky() -> None:
    """passing, failing and cleared keys count; suspected and flaky do not."""
    by_state = {r.state: r for r in records()}
    assert {s for s, r in by_state.items() if is_flaky_key(r)} == {
        FlakeState.FLAKY,
        FlakeState.SUSPECTED,
    }
    cleared = by_state[FlakeState.FLAKY].model_copy(update={"state": FlakeState.CLEARED})
    assert not is_flaky_key(cleared)


def test_trusted_entries_exclude_nothing() -> None:
    """Passing every key's summary, trusted ones included, excludes only the untrusted."""
    every = [FlakyTest.of(r) for r in records()]
    split = exclude_flaky([repro("a", Status.FAIL, Status.PASS)], every)
    assert [i.case_id for i in split.kept] == ["a"] and split.excluded == []


def test_flaky_keys_use_the_latest_row_per_key() -> None:
    """An older flaky row of a key that has since cleared is not listed."""
    old = update_flakes([], runs("e", Tree.BUGGY, "PFPFP"), "r1", FlakeThresholds(), NOW)
    assert [t.state for t in flaky_keys(old)] == [FlakeState.FLAKY]
    later = [
        o.model_copy(
            update={
                "observation_id": f"later-{i}",
                "run_id": "r2",
                "ingested_at": NOW + timedelta(minutes=i),
            }
        )
        for i, o in enumerate(runs("e", Tree.BUGGY, "P" * 10))
    ]
    new = update_flakes(old, later, "r2", FlakeThresholds(), NOW)
    assert new[0].state == FlakeState.CLEARED
    assert flaky_keys([*old, *new]) == []
