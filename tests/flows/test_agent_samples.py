"""`--agent-samples k` end to end: a stochastic command agent sampled twice per case.

The agent (written here, stdlib only) hands in a report whose test reproduces
the bug on sample 0 and one that reproduces nothing on sample 1, so every
figure can be checked against what the samples must give: the case is the
unit, each sample's rows are kept apart, and a replay baseline's one report
stands for both of its samples.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bughunt.models import ReproOutcome
from flows import RunParams, RunResult, nightly_flow
from ledger import Ledger
from tasks.report._model import CaseRow
from tests.flows.corpora import DEMO, SEVEN, mini_corpus

pytestmark = pytest.mark.usefixtures("prefect_harness")

CASES = sorted(SEVEN[:3])

AGENT = """\
import json, os, pathlib
case = json.loads(pathlib.Path(os.environ["BUGHUNT_CASE"]).read_text())
report = json.loads(pathlib.Path("agent/reports", case["id"] + ".json").read_text())
if case["sample"] % 2:
    report["repro_test"] = "def test_nothing():\\n    assert True\\n"
print("sample", case["sample"], "of", case["id"], file=__import__("sys").stderr)
pathlib.Path(os.environ["BUGHUNT_REPORT"]).write_text(json.dumps(report))
"""


def _coin_corpus(repo: Path) -> Path:
    corpus = mini_corpus(repo, CASES, pairing=("baseline-recorded", "coin"))
    folder = corpus / "agents" / "coin"
    (folder / "reports").mkdir(parents=True)
    (folder / "agent.py").write_text(AGENT)
    for case in CASES:
        shutil.copy(DEMO / "recorded" / "baseline" / f"{case}.json", folder / "reports")
    (corpus / "corpus.toml").write_text(
        (corpus / "corpus.toml").read_text()
        + '\n[[agents]]\nname = "coin"\nfamily = "scripted-gamma"\nmode = "command"\n'
        'command = ["python3", "agent/agent.py"]\npath = "agents/coin"\n'
    )
    return corpus


@dataclass(frozen=True, slots=True)
class _Sampled:
    """The module's one nightly run with two agent samples per case."""

    ledger: Ledger
    out: Path
    result: RunResult

    def rows(self, sql: str) -> list[dict[str, Any]]:
        """``sql`` over the ledger, its one parameter the run's id."""
        return self.ledger.query(sql, [self.result.run_id])

    def case_rows(self) -> dict[tuple[str, int | None], CaseRow]:
        """The summary's case rows by (case, sample)."""
        return {(c.case_id, c.sample): c for c in self.result.summary.cases}


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> _Sampled:
    """One nightly run of the coin agent, two samples per case, for every test of the module.

    Prefect's harness (``pytestmark``) is session-scoped, so pytest starts it before this.
    """
    tmp_path = tmp_path_factory.mktemp("agent-samples")
    ledger = Ledger(tmp_path / "ledger.duckdb")
    ledger.migrate()
    corpus = _coin_corpus(tmp_path / "repo")
    out = tmp_path / "out"
    result = nightly_flow(
        params=RunParams(
            corpus=str(corpus),
            ledger=str(ledger.path),
            out=str(out),
            repeats=1,
            probe_pairs=0,
            agent_samples=2,
        )
    )
    return _Sampled(ledger=ledger, out=out, result=result)


def test_each_sample_has_its_own_reproduction_outcome(sampled: _Sampled) -> None:
    """Each coin sample's pair has its own outcome; the replay baseline has one per case."""
    rows = sampled.rows(
        "SELECT case_id, agent_version, sample, outcome FROM reproductions WHERE run_id = ? "
        "ORDER BY ALL"
    )
    expected = [
        {"case_id": c, "agent_version": a, "sample": s, "outcome": o}
        for c in CASES
        for a, s, o in (
            ("baseline-recorded", 0, "reproduced"),
            ("coin", 0, "reproduced"),
            ("coin", 1, "not_reproduced"),
        )
    ]
    assert rows == expected


def test_each_sample_has_its_own_agent_run(sampled: _Sampled) -> None:
    """One agent run per case and sample, each ended by its report."""
    agent_runs = sampled.rows(
        "SELECT case_id, sample, ended FROM agent_runs WHERE run_id = ? ORDER BY ALL"
    )
    assert agent_runs == [
        {"case_id": c, "sample": s, "ended": "report"} for c in CASES for s in (0, 1)
    ]


def test_each_sample_has_its_own_verdict_and_judge_calls(sampled: _Sampled) -> None:
    """One verdict per case and sample, and judge calls for each sample."""
    verdicts = sampled.rows("SELECT case_id, sample FROM verdicts WHERE run_id = ? ORDER BY ALL")
    assert verdicts == [{"case_id": c, "sample": s} for c in CASES for s in (0, 1)]
    calls = sampled.rows(
        "SELECT DISTINCT agent_sample FROM judge_calls WHERE run_id = ? ORDER BY 1"
    )
    assert calls == [{"agent_sample": 0}, {"agent_sample": 1}]


def test_every_execution_is_its_own_identity(sampled: _Sampled) -> None:
    """Same case, agent and tree, another sample: another observation record."""
    obs = sampled.rows(
        "SELECT count(*) AS n, count(DISTINCT record_id) AS ids, "
        "count(DISTINCT sample) AS samples FROM observations "
        "WHERE run_id = ? AND agent_version = 'coin'"
    )[0]
    assert obs["n"] == obs["ids"] and obs["samples"] == 2


def test_the_rate_is_the_mean_of_case_shares(sampled: _Sampled) -> None:
    """The rate is the mean of case shares (0.5 over 3 cases, not 3 of 6 samples as 6 units)."""
    coin = next(r for r in sampled.result.summary.repro if r.agent_version == "coin")
    assert (coin.cases, coin.samples, coin.reproduced, coin.not_reproduced) == (3, 2, 3, 3)
    assert coin.rate == pytest.approx(0.5)
    # Every case is 1/2: the interval is over 3 cases, as wide as a coin's over 3 tosses
    # at least, never the 6 samples' width.
    assert coin.rate_ci is not None and coin.rate_ci[1] - coin.rate_ci[0] > 0.6


def test_a_replay_baseline_is_one_sample_per_case(sampled: _Sampled) -> None:
    """The replay baseline's figures: 3 cases, 1 sample, every one reproduced."""
    base = next(r for r in sampled.result.summary.repro if r.agent_version == "baseline-recorded")
    assert (base.cases, base.samples, base.rate) == (3, 1, 1.0)


def test_the_headline_counts_sample_pairs_in_cases(sampled: _Sampled) -> None:
    """The headline counts 6 sample pairs in 3 cases, at most one decisive per case."""
    s = sampled.result.summary
    assert s.headline is not None and s.headline.pairs == 6 and s.headline.cases == 3
    assert s.headline.decisive <= 3


def test_each_case_row_is_one_sample_and_the_baseline_stands_for_both(sampled: _Sampled) -> None:
    """The summary has a row per case and sample with that sample's outcome; the replay
    baseline's one report stands for both samples."""
    by_row = sampled.case_rows()
    assert set(by_row) == {(c, i) for c in CASES for i in (0, 1)}
    for case in CASES:
        assert by_row[case, 0].candidate_status is ReproOutcome.REPRODUCED
        assert by_row[case, 1].candidate_status is ReproOutcome.NOT_REPRODUCED
        assert by_row[case, 1].baseline_status is ReproOutcome.REPRODUCED


def test_each_sample_keeps_its_own_transcript(sampled: _Sampled) -> None:
    """Sample 1's transcript is a file of its own, holding what that sample printed."""
    by_row = sampled.case_rows()
    for case in CASES:
        transcript = by_row[case, 1].candidate_transcript
        assert transcript == f"transcripts/{case}/coin.sample1.txt"
        assert f"sample 1 of {case}" in (sampled.out / transcript).read_text()


def test_summary_json_keeps_both_samples(sampled: _Sampled) -> None:
    """summary.json's case rows hold both samples."""
    summary = json.loads((sampled.out / "summary.json").read_text())
    assert {r["sample"] for r in summary["cases"]} == {0, 1}


def test_the_report_says_what_its_counts_count(sampled: _Sampled) -> None:
    """report.md counts sample pairs, in cases (the rate's unit)."""
    s = sampled.result.summary
    assert s.headline is not None
    text = (sampled.out / "report.md").read_text()
    assert f"in {s.headline.decisive} case" in text and "decisive sample pairs" in text
