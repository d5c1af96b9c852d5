"""The ledger's outcome views and the Python outcome contract agree on identities."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from bughunt.models import Observation
from ledger import Ledger
from tasks.outcomes import identity_of, summarize
from tests.tasks.outcomes.records_strategy import RECORDS, make


def _views(records: list[Observation]) -> tuple[set[str], set[str], dict[str, str]]:
    with tempfile.TemporaryDirectory() as folder:
        store = Ledger(Path(folder) / "l.duckdb")
        store.write(records)
        conflicts = {r["identity"] for r in store.query("SELECT identity FROM conflicts")}
        unscored = {r["case_id"] for r in store.query("SELECT case_id FROM unscored")}
        identities = {
            r["observation_id"]: r["identity"]
            for r in store.query("SELECT observation_id, identity FROM observation_identities")
        }
    return conflicts, unscored, identities


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RECORDS)
def test_views_follow_the_python_contract(records: list[Observation]) -> None:
    """Every record's identity, the disputed identities and the unscored cases are the same in SQL."""
    conflicts, unscored, identities = _views(records)
    summary = summarize(records)
    assert identities == {r.observation_id: identity_of(r) for r in records}
    assert conflicts == {d.identity for d in summary.disputed}
    assert unscored == {u.case_id for u in summary.unscored}


def test_another_test_source_is_a_new_observation_not_a_replay() -> None:
    """Two records of one test id that differ only in the test's hash are two observations."""
    first = make(
        {"case_id": "c", "run_id": "r", "kind": "repro:buggy", "status": "fail", "test_hash": "h1"}
    )
    again = make(
        {"case_id": "c", "run_id": "r", "kind": "repro:buggy", "status": "fail", "test_hash": "h2"}
    )
    summary = summarize([first, again])
    assert identity_of(first) != identity_of(again)
    assert summary.observations.replays == 0 and summary.observations.kept == 2
    _, _, identities = _views([first, again])
    assert len(set(identities.values())) == 2
