"""The fold and the state rules, as pure functions (no ledger)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings, strategies as st

from bughunt.models import FlakeRecord, FlakeState, Observation, Status, Tree
from bughunt.stats import wilson
from tasks.flakes import FlakeThresholds
from tasks.flakes._fold import FlakeKey, flake_key, flake_state, fold, update_flakes

T0 = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)
NOW = datetime(2026, 6, 1, tzinfo=UTC)
DEFAULTS = FlakeThresholds()
CODES = {
    "P": Status.PASS,
    "F": Status.FAIL,
    "E": Status.ERROR,
    "T": Status.TIMEOUT,
    "U": Status.UNKNOWN,
}


def ex(
    code: str,
    i: int,
    *,
    case_hash: str = "h1",
    run: str = "r1",
    at: datetime | None = None,
    repeat: int | None = None,
    oid: str | None = None,
) -> Observation:
    """Execution ``i`` of one key: ``i`` minutes after T0 unless ``at`` is given."""
    return Observation(
        observation_id=oid or f"o{i}-{case_hash}",
        case_id="case-a",
        run_id=run,
        agent_version="baseline",
        status=CODES[code],
        case_hash=case_hash,
        ingested_at=at or T0 + timedelta(minutes=i),
        tree=Tree.BUGGY,
        repeat=repeat,
        test_hash="t1",
        image_id="sha256:img",
    )


def seq(codes: str, *, start: int = 0, days_apart: float = 0, run: str = "r1") -> list[Observation]:
    """Executions in order, a minute (or ``days_apart`` days) apart."""
    return [
        ex(
            c,
            start + i,
            run=run,
            at=T0 + timedelta(days=days_apart * (start + i), minutes=start + i),
        )
        for i, c in enumerate(codes)
    ]


def state_of(codes: str, thresholds: FlakeThresholds = DEFAULTS) -> FlakeState:
    return fold(None, seq(codes), thresholds, NOW).state


def test_first_disagreement_is_suspected() -> None:
    """Passes then one fail under one key: suspected, one flip."""
    record = fold(None, seq("PPF"), DEFAULTS, NOW)
    assert (record.state, record.flips, record.passes, record.fails) == (
        FlakeState.SUSPECTED,
        1,
        2,
        1,
    )


def test_flaky_needs_two_flips_over_five_decided_runs() -> None:
    """Two flips make flaky only once five decided executions back them."""
    assert state_of("PFP") == FlakeState.SUSPECTED
    assert state_of("PFPP") == FlakeState.SUSPECTED
    assert state_of("PFPPP") == FlakeState.FLAKY
    assert state_of("PFEEEP") == FlakeState.SUSPECTED  # errors are not decided runs


@pytest.mark.parametrize("n", [1, 2, 5, 100])
def test_consecutive_failures_are_failing_not_flaky(n: int) -> None:
    """Any number of failures with no pass is failing, with a flake rate of 0."""
    record = fold(None, seq("F" * n), DEFAULTS, NOW)
    assert (record.state, record.flips, record.flake_rate) == (FlakeState.FAILING, 0, 0.0)
    assert (record.ci_low, record.ci_high) == wilson(0, n)


def test_only_passes_is_passing() -> None:
    """A key that only passed is passing."""
    assert state_of("PPPPPPPPPPPP") == FlakeState.PASSING


def test_undecided_neither_makes_nor_breaks_a_flip() -> None:
    """error / timeout / unknown between two outcomes: counted apart, flips judged around them."""
    across = fold(None, seq("PETUF"), DEFAULTS, NOW)
    assert (across.flips, across.runs, across.undecided, across.last_status) == (
        1,
        5,
        3,
        Status.FAIL,
    )
    same = fold(None, seq("PETUP"), DEFAULTS, NOW)
    assert (same.flips, same.consecutive_consistent, same.state) == (0, 2, FlakeState.PASSING)
    trailing = fold(None, seq("PFE"), DEFAULTS, NOW)
    assert (trailing.last_status, trailing.last_decided) == (Status.ERROR, Status.FAIL)


def test_flip_against_last_decided_across_runs() -> None:
    """A run ending in an error still flips against the outcome before the error."""
    first = fold(None, seq("PE", run="r1"), DEFAULTS, NOW)
    second = fold(first, seq("F", start=5, run="r2"), DEFAULTS, NOW)
    assert (second.flips, second.runs, second.undecided, second.run_id) == (1, 3, 1, "r2")


def test_step_change_that_holds_is_failing() -> None:
    """Passing then failing for good: suspected until ten agreeing runs, then failing."""
    assert state_of("PPPPP" + "F" * 9) == FlakeState.SUSPECTED
    record = fold(None, seq("PPPPP" + "F" * 10), DEFAULTS, NOW)
    assert (record.state, record.flips, record.flake_rate) == (FlakeState.FAILING, 1, 5 / 15)


def test_step_change_to_passing_is_passing() -> None:
    """Failing then passing for good (the test's environment was fixed) is passing."""
    assert state_of("FFF" + "P" * 10) == FlakeState.PASSING


def test_flaky_then_quiet_is_cleared() -> None:
    """Two flips or more, then ten agreeing decided runs: cleared."""
    assert state_of("PPFP" + "P" * 8) == FlakeState.FLAKY
    assert state_of("PPFP" + "P" * 9) == FlakeState.CLEARED
    assert state_of("PPFP" + "P" * 9 + "EEEE") == FlakeState.CLEARED


def test_cleared_by_days_without_a_disagreement() -> None:
    """Fourteen days from the latest flip to the latest decided run clear a key."""
    rec = fold(None, seq("PFP", days_apart=1), DEFAULTS, NOW)  # flip at day 2
    later = fold(rec, [ex("P", 10, at=T0 + timedelta(days=15, minutes=10))], DEFAULTS, NOW)
    assert later.state == FlakeState.SUSPECTED  # 13 days
    cleared = fold(later, [ex("P", 11, at=T0 + timedelta(days=16, minutes=11))], DEFAULTS, NOW)
    assert cleared.state == FlakeState.CLEARED


def test_days_of_errors_do_not_clear() -> None:
    """Only a decided run measures quiet time: weeks of errors leave a key suspected."""
    rec = fold(None, seq("PFP"), DEFAULTS, NOW)
    errors = [ex("E", 10 + d, at=T0 + timedelta(days=d)) for d in range(1, 30)]
    assert fold(rec, errors, DEFAULTS, NOW).state == FlakeState.SUSPECTED


def test_relapse_after_cleared_is_flaky_at_once() -> None:
    """A cleared key that disagrees again is judged on its whole history: flaky."""
    cleared = fold(None, seq("PPFP" + "P" * 9), DEFAULTS, NOW)
    assert cleared.state == FlakeState.CLEARED
    relapsed = fold(cleared, seq("F", start=20), DEFAULTS, NOW)
    assert (relapsed.state, relapsed.flips, relapsed.consecutive_consistent) == (
        FlakeState.FLAKY,
        3,
        1,
    )


def test_thresholds_are_configurable() -> None:
    """Stricter thresholds need more evidence; looser ones less."""
    strict = FlakeThresholds(min_flips=3, min_runs=8, clear_after_runs=20)
    assert state_of("PPFPP", strict) == FlakeState.SUSPECTED
    assert state_of("PPFPFPPP", strict) == FlakeState.FLAKY
    assert state_of("PPFPFP" + "P" * 12, strict) == FlakeState.FLAKY
    loose = FlakeThresholds(min_flips=1, min_runs=2, clear_after_runs=3)
    assert state_of("PF", loose) == FlakeState.FLAKY
    assert state_of("PFFF", loose) == FlakeState.FAILING


def test_rate_is_minority_share_with_wilson_interval() -> None:
    """flake_rate = min(passes, fails) / decided, interval from bughunt.stats.wilson."""
    record = fold(None, seq("PPPFE"), DEFAULTS, NOW)
    assert record.flake_rate == 0.25
    assert (record.ci_low, record.ci_high) == wilson(1, 4)


def test_executions_are_ordered_by_time_then_repeat() -> None:
    """Input order does not matter: (ingested_at, repeat) decides the fold order."""
    same_time = [ex("F", 0, at=T0, repeat=1, oid="b"), ex("P", 1, at=T0, repeat=0, oid="a")]
    record = fold(None, same_time, DEFAULTS, NOW)
    assert (record.last_decided, record.first_seen, record.last_seen) == (Status.FAIL, T0, T0)
    shuffled = fold(None, list(reversed(seq("PPFPP"))), DEFAULTS, NOW)
    assert shuffled == fold(None, seq("PPFPP"), DEFAULTS, NOW)


def test_fold_refuses_what_it_cannot_fold() -> None:
    """No executions, mixed keys, another key, a new key with nothing decided: ValueError."""
    with pytest.raises(ValueError, match="no executions"):
        fold(None, [], DEFAULTS, NOW)
    with pytest.raises(ValueError, match="one complete test key"):
        fold(None, [ex("P", 0), ex("P", 1, case_hash="h2")], DEFAULTS, NOW)
    with pytest.raises(ValueError, match="one complete test key"):
        fold(None, [ex("P", 0).model_copy(update={"image_id": None})], DEFAULTS, NOW)
    with pytest.raises(ValueError, match="another key"):
        fold(fold(None, seq("P"), DEFAULTS, NOW), [ex("P", 1, case_hash="h2")], DEFAULTS, NOW)
    with pytest.raises(ValueError, match="no decided execution"):
        fold(None, seq("ETU"), DEFAULTS, NOW)


def test_flake_state_refuses_a_record_with_nothing_decided() -> None:
    """A record with no pass and no fail has no state."""
    record = fold(None, seq("P"), DEFAULTS, NOW).model_copy(update={"passes": 0})
    with pytest.raises(ValueError, match="decided"):
        flake_state(record, DEFAULTS)


def test_other_content_is_another_key_not_a_flip() -> None:
    """Same case, agent and test under two case hashes: two keys, no flips."""
    obs = [ex("P", 0), ex("F", 1, case_hash="h2"), ex("P", 2), ex("F", 3, case_hash="h2")]
    rows = update_flakes([], obs, "r1", DEFAULTS, NOW)
    assert [(r.case_hash, r.state, r.flips) for r in rows] == [
        ("h1", FlakeState.PASSING, 0),
        ("h2", FlakeState.FAILING, 0),
    ]


def test_update_skips_unkeyed_duplicates_and_undecided_new_keys() -> None:
    """Ingested records, a re-delivered observation and an all-error new key add nothing."""
    ingested = Observation(observation_id="x", case_id="case-a", status=Status.FAIL, ingested_at=T0)
    obs = [ex("P", 0), ex("P", 0), ingested, ex("E", 1, case_hash="h2")]
    (row,) = update_flakes([], obs, "r1", DEFAULTS, NOW)
    assert (row.case_hash, row.runs) == ("h1", 1)


def test_a_run_already_folded_is_not_counted_twice() -> None:
    """Running the update again for the same run id returns nothing for keys it already has."""
    first = update_flakes([], seq("PF"), "r1", DEFAULTS, NOW)
    assert update_flakes(first, seq("PF"), "r1", DEFAULTS, NOW) == []
    (second,) = update_flakes(first, seq("PP", start=5, run="r2"), "r2", DEFAULTS, NOW)
    assert (second.runs, second.run_id, second.updated_at) == (4, "r2", NOW)


def test_update_uses_the_latest_previous_row_per_key() -> None:
    """Given a key's whole history of rows, the fold continues from the one with most runs."""
    r1 = update_flakes([], seq("PF", run="r1"), "r1", DEFAULTS, NOW)
    r2 = update_flakes(r1, seq("PP", start=2, run="r2"), "r2", DEFAULTS, NOW)
    (r3,) = update_flakes([*r2, *r1], seq("P", start=4, run="r3"), "r3", DEFAULTS, NOW)
    assert (r3.runs, r3.flips) == (5, 2)


def test_flake_key_needs_every_field() -> None:
    """A sandbox execution has a key; a record missing any key field has none."""
    assert flake_key(ex("P", 0)) == FlakeKey("h1", "baseline", "t1", Tree.BUGGY, "sha256:img")
    for field in ("case_hash", "agent_version", "test_hash", "tree", "image_id"):
        assert flake_key(ex("P", 0).model_copy(update={field: None})) is None


OUTCOMES = st.text(alphabet="PFETU", min_size=1, max_size=40)
THRESHOLDS = st.builds(
    FlakeThresholds,
    min_flips=st.integers(1, 4),
    min_runs=st.integers(2, 10),
    clear_after_runs=st.integers(1, 15),
    clear_after_days=st.integers(1, 20),
)


def _comparable(record: FlakeRecord) -> dict[str, object]:
    return record.model_dump(exclude={"run_id", "updated_at"})


@settings(max_examples=300, deadline=None)
@given(st.sampled_from("PF"), OUTCOMES, THRESHOLDS, st.data())
def test_record_does_not_depend_on_how_runs_split_the_history(
    first: str, rest: str, thresholds: FlakeThresholds, data: st.DataObject
) -> None:
    """Folding a history in one batch or split into any runs gives the same record and state."""
    codes = first + rest
    executions = seq(codes, days_apart=0.4)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(codes) - 1), max_size=6)) if rest else [])
    record: FlakeRecord | None = None
    for a, b in zip([0, *cuts], [*cuts, len(codes)], strict=True):
        record = fold(record, executions[a:b], thresholds, NOW, run_id=f"r{a}")
    assert record is not None
    assert _comparable(record) == _comparable(fold(None, executions, thresholds, NOW))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="FETU", min_size=1, max_size=60), THRESHOLDS)
def test_never_passed_is_never_flaky(codes: str, thresholds: FlakeThresholds) -> None:
    """Under any thresholds, a key that never passed is failing (or has no row)."""
    if "F" not in codes:
        return
    assert fold(None, seq(codes), thresholds, NOW).state == FlakeState.FAILING


@settings(max_examples=300, deadline=None)
@given(OUTCOMES, THRESHOLDS)
def test_counters_add_up(codes: str, thresholds: FlakeThresholds) -> None:
    """runs = passes + fails + undecided; flips < decided; the streak fits in the decided runs."""
    if "P" not in codes and "F" not in codes:
        return
    r = fold(None, seq(codes), thresholds, NOW)
    decided = r.passes + r.fails
    assert r.runs == len(codes) == decided + r.undecided
    assert r.flips < decided and 1 <= r.consecutive_consistent <= decided
    assert (r.flips > 0) == (r.passes > 0 and r.fails > 0)
    assert r.flake_rate == min(r.passes, r.fails) / decided
