"""Invariants of the outcome contract, as hypothesis properties."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings, strategies as st

from bughunt.models import Observation, Status
from tasks.outcomes import CaseState, OutcomeSummary, summarize
from tests.tasks.outcomes.records_strategy import RAW, RECORDS, make


def decisions(out: OutcomeSummary) -> dict[str, Any]:
    """Everything in a summary that decides or counts outcomes (annotations shown aside)."""
    data = out.model_dump(mode="json", by_alias=True)
    obs = data["observations"]
    obs["duplicates"] = obs.pop("replays") + obs.pop("annotation_variants")
    for d in data["disputed"]:
        d["variants"] = sorted(
            (v["status"], v["source"], v["case_hash"], v["kind"], v["agent_version"])
            for v in d["variants"]
        )
    return data


@settings(max_examples=300)
@given(RECORDS, st.randoms(use_true_random=False))
def test_permutation_does_not_change_summary(
    records: list[Observation], rnd: random.Random
) -> None:
    """Shuffling the records gives exactly the same summary."""
    shuffled = list(records)
    rnd.shuffle(shuffled)
    assert summarize(shuffled) == summarize(records)


@settings(max_examples=300)
@given(RECORDS, st.randoms(use_true_random=False), st.data())
def test_annotations_do_not_decide(
    records: list[Observation], rnd: random.Random, data: st.DataObject
) -> None:
    """Changing notes and extra fields, or swapping them between records, changes no decision."""
    annotations = [(r.note, r.annotations) for r in records]
    rnd.shuffle(annotations)
    changed = []
    for r, (note, extra) in zip(records, annotations, strict=True):
        if data.draw(st.booleans()):
            note, extra = (
                data.draw(st.sampled_from([None, "z", "fail!"])),
                {"x": data.draw(st.integers())},
            )
        changed.append(r.model_copy(update={"note": note, "annotations": extra}))
    assert decisions(summarize(changed)) == decisions(summarize(records))


@settings(max_examples=300)
@given(RECORDS.filter(bool), st.data())
def test_replay_never_changes_a_rate(records: list[Observation], data: st.DataObject) -> None:
    """Re-delivering any record (new provenance) leaves every rate and case count unchanged."""
    original = data.draw(st.sampled_from(records))
    replay = original.model_copy(
        update={"observation_id": "replay", "source": "again.jsonl", "source_line": 1}
    )
    before, after = summarize(records), summarize([*records, replay])
    for key in (
        "pass_rate",
        "pass_rate_ci",
        "pass_rate_bounds",
        "observation_pass_rate",
        "cases",
        "case_states",
    ):
        assert getattr(after, key) == getattr(before, key)
    assert after.observations.kept == before.observations.kept


@settings(max_examples=300)
@given(RECORDS, st.lists(RAW, max_size=5))
def test_unknown_never_enters_a_denominator(
    records: list[Observation], extra: list[dict[str, Any]]
) -> None:
    """Adding unknown-status records under fresh identities changes no rate."""
    unknowns = []
    for i, raw in enumerate(extra):
        raw = {k: v for k, v in raw.items() if k not in ("id", "status")}
        raw["id"] = f"fresh-{i}"
        raw.setdefault("case_id", f"fresh-case-{i}")
        unknowns.append(make(raw))
    assert all(u.status is Status.UNKNOWN for u in unknowns)
    before, after = summarize(records), summarize([*records, *unknowns])
    for key in ("pass_rate", "pass_rate_ci", "pass_rate_bounds", "observation_pass_rate"):
        assert getattr(after, key) == getattr(before, key)
    assert after.cases.fail == before.cases.fail


@settings(max_examples=300)
@given(RECORDS)
def test_disputed_identity_never_yields_pass_or_fail(records: list[Observation]) -> None:
    """Every case named by a disputed identity is disputed: neither pass nor fail."""
    out = summarize(records)
    for d in out.disputed:
        for case in d.case_ids:
            assert out.case_states[case] is CaseState.DISPUTED


@settings(max_examples=200)
@given(st.sampled_from(["pass", "fail", "error"]), st.sampled_from(["pass", "fail", "unknown"]))
def test_no_record_id_never_merges_across_runs(a: str, b: str) -> None:
    """Two records of one case without record_id, from two runs, are two observations, never disputed."""
    out = summarize(
        [
            make({"case_id": "c", "run_id": "r1", "status": a}),
            make({"case_id": "c", "run_id": "r2", "status": b}),
        ]
    )
    assert out.observations.kept == 2 and not out.disputed


@settings(max_examples=300)
@given(RECORDS)
def test_counts_add_up(records: list[Observation]) -> None:
    """Records = kept + replays + variants + (conflicting − disputed identities); states add to total."""
    out = summarize(records)
    o, c = out.observations, out.cases
    assert o.records == o.kept + o.replays + o.annotation_variants + o.conflicting_records - len(
        out.disputed
    )
    assert c.total == c.pass_ + c.fail + c.mixed + c.disputed + c.unscored
