"""Adaptive evaluation: seeded random batches, stopping rules, resuming (real Docker and DuckDB)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flows import RunParams, RunResult, nightly_flow, pr_flow
from ledger import Ledger
from tasks.gate import StopReason, evaluation_order
from tests.flows.corpora import DEMO_CASES, SEVEN, broken_corpus, mini_corpus, path_diff

pytestmark = pytest.mark.usefixtures("prefect_harness")


def params(tmp_path: Path, corpus: Path, **kw: Any) -> RunParams:
    return RunParams(
        corpus=str(corpus),
        ledger=str(tmp_path / "l.duckdb"),
        out=str(tmp_path / "out"),
        repeats=1,
        probe_pairs=2,
        **kw,
    )


def test_nightly_until_decided_stops_once_the_interval_excludes_half(tmp_path: Path) -> None:
    """A candidate worse on every case: --until-decided stops when the score's interval lies
    below 0.5, before the corpus is exhausted, and says how much of it it needed."""
    corpus = broken_corpus(tmp_path / "c", DEMO_CASES)
    result = nightly_flow(params=params(tmp_path, corpus, until_decided=True, batch_size=3))
    evaluation = result.summary.evaluation
    assert evaluation is not None and evaluation.adaptive
    assert evaluation.stop is StopReason.DECIDED and evaluation.evaluated < len(DEMO_CASES)
    assert evaluation.score_interval is not None and evaluation.score_interval[1] < 0.5
    assert f"evaluated {evaluation.evaluated} of {len(DEMO_CASES)} planned" in evaluation.line()
    # the cases evaluated are the first ones of the seeded order, each judged once
    order = evaluation_order(DEMO_CASES, evaluation.order_seed)
    assert sorted(c.case_id for c in result.summary.cases) == sorted(order[: evaluation.evaluated])
    verdicts = Ledger(tmp_path / "l.duckdb").query(
        "SELECT case_id, count(*) AS n FROM verdicts WHERE run_id = ? GROUP BY case_id",
        [result.run_id],
    )
    assert len(verdicts) == evaluation.evaluated and all(v["n"] == 1 for v in verdicts)
    assert result.summary.probes  # the bias probes ran once, after the last batch


def test_nightly_until_decided_stops_at_the_width_asked_for(tmp_path: Path) -> None:
    """A width the first batch already beats stops the nightly after that batch."""
    result = nightly_flow(
        params=params(
            tmp_path, broken_corpus(tmp_path / "c"), until_decided=True, batch_size=3, width=0.999
        )
    )
    evaluation = result.summary.evaluation
    assert evaluation is not None and evaluation.stop is StopReason.DECIDED
    assert evaluation.evaluated == 3 and evaluation.batches == 1


def test_a_plain_nightly_is_one_batch_of_every_case(tmp_path: Path) -> None:
    """Without --until-decided the nightly evaluates every case, not adaptively, and its one
    score stage probes the judge."""
    result = nightly_flow(params=params(tmp_path, mini_corpus(tmp_path / "c", SEVEN[:2])))
    evaluation = result.summary.evaluation
    assert evaluation is not None and not evaluation.adaptive
    assert (evaluation.evaluated, evaluation.batches, evaluation.stop) == (
        2,
        1,
        StopReason.EXHAUSTED,
    )
    assert result.summary.probes and result.summary.health.probe_calls is not None
    assert result.summary.health.probe_calls.calls > 0


def test_a_resumed_adaptive_run_redoes_nothing(tmp_path: Path) -> None:
    """Re-running an adaptive PR run's id resumes every batch: same gate, no new row; the
    flow run's final state message carries the gate."""
    corpus = broken_corpus(tmp_path / "c")
    diff = tmp_path / "pr.diff"
    diff.write_bytes(path_diff("corpus/demo/agents/scripted/agent.py"))
    p = params(tmp_path, corpus, batch_size=2, run_id="pr-adaptive")

    def run() -> RunResult:
        return pr_flow(diff=str(diff), params=p)

    first = run()
    store = Ledger(tmp_path / "l.duckdb")
    count = "SELECT (SELECT count(*) FROM verdicts) + (SELECT count(*) FROM judge_calls) AS n"
    before = store.query(count)[0]["n"]
    again = run()
    assert again.stages_run == [] and "sandbox" in again.stages_resumed
    assert store.query(count)[0]["n"] == before
    assert first.summary.gate == again.summary.gate
    assert first.summary.evaluation is not None and again.summary.evaluation is not None
    assert first.summary.evaluation.evaluated == again.summary.evaluation.evaluated
    # The flow run's final state carries the headline and the gate (the Prefect UI shows it).
    state = pr_flow(diff=str(diff), params=p, return_state=True)
    assert first.summary.gate is not None
    assert state.is_completed() and state.message is not None
    assert f"gate {first.summary.gate.outcome.value} (exit {first.summary.gate.exit_code})" in (
        state.message
    )
