"""The demo corpus's flaky reproduction test is flagged after a few nightly runs (docs/ledger.md#flakes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bughunt.models import FlakeState, ReproOutcome, Tree
from flows import RunParams, nightly_flow
from ledger import Ledger
from tasks.flakes._ledger import current_flakes
from tests.flows.corpora import mini_corpus

pytestmark = pytest.mark.usefixtures("prefect_harness")

CASE = "state-reversal-shares-tags"


def test_flaky_recorded_report_is_flagged_and_never_counted(tmp_path: Path) -> None:
    """Two nights of 10 repeats: the clean-tree key is flaky, and the case counts as flaky, not (not) reproduced.

    Its clean-tree outcome is a fair coin per execution: 20 executions with
    fewer than 2 flips has probability 40 / 2**20 (about 4 in 100,000).
    """
    corpus = mini_corpus(
        tmp_path / "repo", [CASE], pairing=("baseline-recorded", "candidate-recorded")
    )
    ledger = tmp_path / "l.duckdb"
    results = [
        nightly_flow(
            params=RunParams(
                corpus=str(corpus),
                ledger=str(ledger),
                out=str(tmp_path / f"out{i}"),
                repeats=10,
                probe_pairs=0,
            )
        )
        for i in range(2)
    ]
    flakes = current_flakes(Ledger(ledger))
    candidate_clean = [
        f for f in flakes if f.agent_version == "candidate-recorded" and f.tree is Tree.CLEAN
    ]
    assert [f.state for f in candidate_clean] == [FlakeState.FLAKY]
    assert candidate_clean[0].runs == 20 and candidate_clean[0].flips >= 2
    last = results[-1].summary
    assert last.cases[0].candidate_status is ReproOutcome.FLAKY
    assert any(t.state is FlakeState.FLAKY and t.case_id == CASE for t in last.flaky)
    candidate = next(v for v in last.repro if v.agent_version == "candidate-recorded")
    assert candidate.flaky == 1 and candidate.reproduced == candidate.not_reproduced == 0
    baseline_keys = [f for f in flakes if f.agent_version == "baseline-recorded"]
    assert baseline_keys and all(
        f.state in (FlakeState.PASSING, FlakeState.FAILING) for f in baseline_keys
    )
