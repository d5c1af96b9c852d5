"""Each gate outcome from a scenario built for it (PR flow on small corpora, real Docker and DuckDB)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bughunt.models import ReproOutcome
from flows import RunParams, RunResult, pr_flow
from tasks.gate import GateOutcome, StopReason
from tests.flows.corpora import (
    DEMO_CASES,
    SEVEN,
    broken_corpus,
    broken_reports,
    case_diff,
    copied_reports,
    mini_corpus,
    path_diff,
)
from tests.judging.judges.openai_server import OpenAIServer, error

pytestmark = pytest.mark.usefixtures("prefect_harness")


def run_pr(
    tmp_path: Path, corpus: Path, diff: bytes, fail_on_gate: bool = False, **kw: Any
) -> RunResult:
    diff_file = tmp_path / "pr.diff"
    diff_file.write_bytes(diff)
    params = RunParams(
        corpus=str(corpus),
        ledger=str(tmp_path / "l.duckdb"),
        out=str(tmp_path / "out"),
        repeats=1,
        probe_pairs=0,
        **kw,
    )
    return pr_flow(diff=str(diff_file), params=params, fail_on_gate=fail_on_gate)


def test_docs_only_change_is_nothing_to_evaluate(tmp_path: Path) -> None:
    """A PR touching only docs runs nothing past classify and exits 0."""
    corpus = mini_corpus(tmp_path / "c", SEVEN[:1])
    result = run_pr(tmp_path, corpus, path_diff("docs/operations.md"))
    gate = result.summary.gate
    assert (
        gate is not None and gate.outcome is GateOutcome.NOTHING_TO_EVALUATE and gate.exit_code == 0
    )
    assert "sandbox" in result.stages_skipped and "score" in result.stages_skipped


def test_one_case_of_equal_reports_is_inconclusive(tmp_path: Path) -> None:
    """The baseline's own reports under another name, on the one case the PR touches: no
    evidence either way, so the gate says inconclusive (exit 4), never pass."""
    corpus = mini_corpus(tmp_path / "c", SEVEN[:2], pairing=("baseline-recorded", "baseline-copy"))
    (corpus / "corpus.toml").write_text(
        (corpus / "corpus.toml").read_text() + copied_reports(corpus)
    )
    result = run_pr(tmp_path, corpus, case_diff(SEVEN[0]))
    gate = result.summary.gate
    assert gate is not None and gate.outcome is GateOutcome.INCONCLUSIVE and gate.exit_code == 4
    assert "more cases (pairs) would decide" in gate.message
    assert [c.case_id for c in result.summary.cases] == [SEVEN[0]]  # the plan: that case only
    evaluation = result.summary.evaluation
    assert evaluation is not None and evaluation.stop is StopReason.EXHAUSTED


def test_a_better_candidate_on_the_whole_demo_passes(tmp_path: Path) -> None:
    """The recorded baseline reports as the candidate, against a baseline whose tests
    reproduce nothing, on all 18 demo cases: the bounds clear ½ − margin and −margin, so the
    gate passes (exit 0) as soon as a batch shows it."""
    corpus = mini_corpus(tmp_path / "c", DEMO_CASES, pairing=("broken", "baseline-recorded"))
    (corpus / "corpus.toml").write_text(
        (corpus / "corpus.toml").read_text() + broken_reports(corpus, DEMO_CASES)
    )
    result = run_pr(tmp_path, corpus, path_diff("corpus/demo/agents/scripted/agent.py"))
    gate = result.summary.gate
    assert gate is not None
    assert gate.outcome is GateOutcome.PASS and gate.exit_code == 0, gate.message
    assert gate.score is not None and gate.score.lower >= 0.4
    assert gate.reproduction is not None and 2 * gate.reproduction.lower - 1 >= -0.1
    evaluation = result.summary.evaluation
    assert evaluation is not None and evaluation.stop is StopReason.DECIDED


def test_reports_that_reproduce_nothing_are_a_regression_found_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A candidate whose tests reproduce none of seven bugs the baseline reproduces:
    regression (exit 1), decided before the plan is exhausted (batches of two). The gate's
    bounds are about the agents' rates, so at the default alpha (0.05) ten such cases are
    the fewest that show it; the project here sets alpha 0.2, which six cases show."""
    corpus = broken_corpus(tmp_path / "c")
    project = tmp_path / "c" / "pyproject.toml"
    project.write_text(project.read_text().replace("alpha = 0.05", "alpha = 0.2", 1))
    monkeypatch.chdir(tmp_path / "c")
    result = run_pr(
        tmp_path, corpus, path_diff("corpus/demo/agents/scripted/agent.py"), batch_size=2
    )
    gate = result.summary.gate
    assert gate is not None and gate.outcome is GateOutcome.REGRESSION and gate.exit_code == 1
    assert gate.thresholds is not None and gate.thresholds.alpha == 0.2
    assert all(c.candidate_status is ReproOutcome.NOT_REPRODUCED for c in result.summary.cases)
    evaluation = result.summary.evaluation
    assert evaluation is not None and evaluation.stop is StopReason.DECIDED
    assert evaluation.evaluated < 7 and len(result.summary.cases) == evaluation.evaluated
    h = result.summary.headline
    assert h is not None and h.pairs == evaluation.evaluated  # one verdict per evaluated case


@pytest.mark.parametrize(
    ("budget", "stop"),
    [
        ({"max_judge_calls": 3}, StopReason.JUDGE_BUDGET),
        ({"max_sandbox_seconds": 0.5}, StopReason.SANDBOX_BUDGET),
    ],
    ids=["judge-calls", "sandbox-seconds"],
)
def test_a_budget_stops_the_evaluation(
    tmp_path: Path, budget: dict[str, Any], stop: StopReason
) -> None:
    """A budget the next batch would overrun stops the run after one case: the gate says
    inconclusive with what it has, never pass."""
    corpus = broken_corpus(tmp_path / "c")
    result = run_pr(
        tmp_path,
        corpus,
        path_diff("corpus/demo/agents/scripted/agent.py"),
        batch_size=1,
        **budget,
    )
    evaluation = result.summary.evaluation
    assert evaluation is not None and evaluation.stop is stop and evaluation.evaluated == 1
    gate = result.summary.gate
    assert gate is not None and gate.outcome is GateOutcome.INCONCLUSIVE


def test_failing_judge_is_review_failed_not_regression(tmp_path: Path) -> None:
    """A judge endpoint that only fails: review_failed (exit 3), said to be a failure to review."""
    corpus = mini_corpus(tmp_path / "c", SEVEN[:2], pairing=("baseline-recorded", "baseline-copy"))
    (corpus / "corpus.toml").write_text(
        (corpus / "corpus.toml").read_text() + copied_reports(corpus)
    )
    with OpenAIServer() as server:
        server.fallback = error(500, "down", type_="server_error")
        config = tmp_path / "judges.toml"
        config.write_text(
            f'[judges.down]\nbackend = "openai"\nfamily = "x"\nmodel = "m"\n'
            f'base_url = "{server.base_url}"\napi_key_env = ""\n'
        )
        result = run_pr(
            tmp_path,
            corpus,
            path_diff("corpus/demo/agents/scripted/agent.py"),
            judge="down",
            judges_config=str(config),
        )
        assert server.count > 0
    gate = result.summary.gate
    assert gate is not None and gate.outcome is GateOutcome.REVIEW_FAILED and gate.exit_code == 3
    assert "not a finding that the change regresses" in gate.message
    h = result.summary.headline
    assert h is not None and h.candidate_wins == h.baseline_wins == h.ties == 0


def test_fail_on_gate_fails_the_run_after_writing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With fail_on_gate a regression raises GateFailed; the run's rows and report are written
    first (alpha 0.2, so seven cases can show the regression)."""
    from flows.pr import GateFailed
    from ledger import Ledger

    corpus = broken_corpus(tmp_path / "c")
    project = tmp_path / "c" / "pyproject.toml"
    project.write_text(project.read_text().replace("alpha = 0.05", "alpha = 0.2", 1))
    monkeypatch.chdir(tmp_path / "c")
    with pytest.raises(GateFailed, match="regression"):
        run_pr(
            tmp_path,
            corpus,
            path_diff("corpus/demo/agents/scripted/agent.py"),
            fail_on_gate=True,
            run_id="pr-fail",
        )
    rows = Ledger(tmp_path / "l.duckdb").query(
        "SELECT message FROM runs_latest WHERE run_id = 'pr-fail'"
    )
    assert "gate regression" in rows[0]["message"]
    assert (tmp_path / "out" / "summary.json").exists()


@pytest.mark.parametrize("data", [b"", b"see the ticket\n"], ids=["empty", "prose"])
def test_a_file_that_is_no_diff_fails_the_flow_before_the_run(tmp_path: Path, data: bytes) -> None:
    """The pr-check flow (as a deployment runs it) refuses a diff file that holds no diff,
    naming it; no run is recorded, so nothing can read as "nothing to evaluate"."""
    from bughunt.errors import InputError

    corpus = mini_corpus(tmp_path / "c", SEVEN[:1])
    diff = tmp_path / "pr.diff"
    diff.write_bytes(data)
    with pytest.raises(InputError) as info:
        pr_flow(diff=str(diff), params=RunParams(corpus=str(corpus), ledger=str(tmp_path / "l")))
    assert info.value.file == str(diff) and "holds no unified diff" in info.value.message
    assert not (tmp_path / "l").exists()
