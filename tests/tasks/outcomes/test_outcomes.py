"""Every rule of the outcome contract (docs/outcome-contract.md), one example each."""

from __future__ import annotations

from typing import Any

import pytest

from tasks.outcomes import CaseState, summarize
from tests.tasks.outcomes.records_strategy import make


def s(*raws: dict[str, Any]) -> Any:
    return summarize([make(r) for r in raws])


@pytest.mark.parametrize("notes", [("a", "b"), ("b", "a")])
def test_conflicting_pass_fail_is_disputed_whatever_the_notes(notes: tuple[str, str]) -> None:
    """{id A pass} vs {id A fail}: no rate in either note order; both variants shown."""
    out = s(
        {"id": "A", "status": "pass", "note": notes[0]},
        {"id": "A", "status": "fail", "note": notes[1]},
    )
    assert out.pass_rate is None
    assert out.pass_rate_bounds == (0.0, 1.0)
    assert out.cases.disputed == 1 and out.cases.pass_ == 0 and out.cases.fail == 0
    (d,) = out.disputed
    assert sorted((v.status.value, v.note) for v in d.variants) == sorted(
        [("pass", notes[0]), ("fail", notes[1])]
    )
    assert {v.source for v in d.variants} == {
        f"gen.jsonl:{v.source.split(':')[1]}" for v in d.variants
    }
    assert "passed or failed" in out.null_reasons["pass_rate"]


def test_replay_is_one_observation_counted_as_replay() -> None:
    """The same record twice is one observation and one replay."""
    out = s(
        {"id": "A", "case_id": "c", "status": "pass"}, {"id": "A", "case_id": "c", "status": "pass"}
    )
    assert out.observations.kept == 1 and out.observations.replays == 1
    assert out.pass_rate == 1.0


def test_annotation_variant_keeps_one_observation() -> None:
    """Same outcome, different notes: one observation, one annotation variant, not disputed."""
    out = s(
        {"id": "A", "case_id": "c", "status": "fail", "note": "x"},
        {"id": "A", "case_id": "c", "status": "fail", "note": "y", "extra": 1},
    )
    assert out.observations.kept == 1
    assert out.observations.annotation_variants == 1 and out.observations.replays == 0
    assert out.cases.fail == 1 and not out.disputed


@pytest.mark.parametrize(
    "field,values",
    [("case_hash", ("h1", "h2")), ("agent_version", ("a", "b")), ("kind", ("k1", "k2"))],
)
def test_difference_in_any_outcome_field_is_a_conflict(field: str, values: tuple[str, str]) -> None:
    """Two records of one record_id that differ in what was executed are disputed."""
    out = s(
        {"id": "A", "case_id": "c", "status": "pass", field: values[0]},
        {"id": "A", "case_id": "c", "status": "pass", field: values[1]},
    )
    assert out.cases.disputed == 1 and out.observations.conflicting_records == 2


def test_without_record_id_identity_is_case_run_agent_kind() -> None:
    """Records without record_id of the same case but other runs are two observations."""
    out = s(
        {"case_id": "c", "run_id": "r1", "status": "pass"},
        {"case_id": "c", "run_id": "r2", "status": "fail"},
    )
    assert out.observations.kept == 2 and not out.disputed
    assert out.case_states == {"c": CaseState.MIXED}


def test_record_without_case_id_is_its_own_case() -> None:
    """A record with only a record_id is its own case, named by the record_id."""
    out = s({"id": "lonely", "status": "pass"}, {"case_id": "c", "status": "fail"})
    assert out.case_states == {"c": CaseState.FAIL, "lonely": CaseState.PASS}


def test_unknown_is_never_a_fail() -> None:
    """Only unknown observations: the case is unscored and no rate is 0."""
    out = s({"case_id": "c", "status": "unknown"}, {"case_id": "c", "run_id": "r2"})
    assert out.pass_rate is None and out.observation_pass_rate is None
    assert out.cases.unscored == 1 and out.cases.fail == 0
    assert out.unscored[0].reason == "no decided observation (pass or fail): 2 unknown"
    assert out.observations.unknown == 2


def test_unknown_beside_a_pass_leaves_the_case_passing() -> None:
    """Undecided observations do not dilute a case: pass + unknown is pass."""
    out = s({"case_id": "c", "run_id": "r1", "status": "pass"}, {"case_id": "c", "run_id": "r2"})
    assert out.case_states == {"c": CaseState.PASS}
    assert out.observation_pass_rate == 1.0


def test_error_and_timeout_are_undecided() -> None:
    """error and timeout make a case unscored, with the reason counting each."""
    out = s(
        {"case_id": "c", "run_id": "1", "status": "error"},
        {"case_id": "c", "run_id": "2", "status": "timeout"},
    )
    assert out.unscored[0].reason == "no decided observation (pass or fail): 1 error, 1 timeout"


def test_pass_rate_over_cases_with_wilson_interval_and_bounds() -> None:
    """2 pass, 1 fail, 1 mixed, 1 disputed: rate 2/3, bounds 2/5..4/5, Wilson CI over 3 cases."""
    out = s(
        {"case_id": "p1", "status": "pass"},
        {"case_id": "p2", "status": "pass"},
        {"case_id": "f1", "status": "fail"},
        {"case_id": "m", "run_id": "1", "status": "pass"},
        {"case_id": "m", "run_id": "2", "status": "fail"},
        {"id": "D", "case_id": "d", "status": "pass"},
        {"id": "D", "case_id": "d", "status": "fail"},
    )
    assert out.pass_rate == pytest.approx(2 / 3)
    assert out.pass_rate_bounds == (pytest.approx(2 / 5), pytest.approx(4 / 5))
    lo, hi = out.pass_rate_ci or (None, None)
    assert lo == pytest.approx(0.2077, abs=1e-3) and hi == pytest.approx(0.9385, abs=1e-3)
    # observations: p1 p2 f1 m1 m2 decided (disputed D left out) → 3 pass of 5
    assert out.observation_pass_rate == pytest.approx(3 / 5)


def test_disputed_case_reaches_no_pass_or_fail_even_with_other_passes() -> None:
    """A case with one disputed identity is disputed even when its other observations pass."""
    out = s(
        {"id": "A", "case_id": "c", "status": "pass"},
        {"id": "A", "case_id": "c", "status": "fail"},
        {"id": "B", "case_id": "c", "status": "pass"},
    )
    assert out.case_states == {"c": CaseState.DISPUTED}
    assert out.observation_pass_rate == 1.0  # B only


def test_record_id_moved_to_another_case_disputes_both() -> None:
    """One record id named under two cases is disputed in both (no case is picked)."""
    out = s(
        {"id": "A", "case_id": "c1", "status": "pass"},
        {"id": "A", "case_id": "c2", "status": "pass"},
    )
    assert out.case_states == {"c1": CaseState.DISPUTED, "c2": CaseState.DISPUTED}


def test_no_records_gives_nulls_not_zeros() -> None:
    """An empty input has null rates with a reason, and zero counts."""
    out = summarize([])
    assert out.pass_rate is None and out.pass_rate_bounds is None
    assert out.null_reasons["observation_pass_rate"] == "no records"
