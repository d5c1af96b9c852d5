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
from pathlib import Path

import pytest

from bughunt.models import ReproOutcome
from flows import RunParams, nightly_flow
from ledger import Ledger
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


def test_two_samples_per_case_kept_apart_and_averaged_by_case(
    ledger: Ledger, tmp_path: Path
) -> None:
    """Each sample has its own executions, outcome, agent run, verdict and transcript; the
    rate is the mean of case shares (0.5 over 3 cases, not 3 of 6 samples as 6 units)."""
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
    run = result.run_id

    rows = ledger.query(
        "SELECT case_id, agent_version, sample, outcome FROM reproductions WHERE run_id = ? "
        "ORDER BY ALL",
        [run],
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

    agent_runs = ledger.query(
        "SELECT case_id, sample, ended FROM agent_runs WHERE run_id = ? ORDER BY ALL", [run]
    )
    assert agent_runs == [
        {"case_id": c, "sample": s, "ended": "report"} for c in CASES for s in (0, 1)
    ]
    verdicts = ledger.query(
        "SELECT case_id, sample FROM verdicts WHERE run_id = ? ORDER BY ALL", [run]
    )
    assert verdicts == [{"case_id": c, "sample": s} for c in CASES for s in (0, 1)]
    calls = ledger.query(
        "SELECT DISTINCT agent_sample FROM judge_calls WHERE run_id = ? ORDER BY 1", [run]
    )
    assert calls == [{"agent_sample": 0}, {"agent_sample": 1}]
    # Every execution is its own identity: same case, agent and tree, another sample.
    obs = ledger.query(
        "SELECT count(*) AS n, count(DISTINCT record_id) AS ids, "
        "count(DISTINCT sample) AS samples FROM observations "
        "WHERE run_id = ? AND agent_version = 'coin'",
        [run],
    )[0]
    assert obs["n"] == obs["ids"] and obs["samples"] == 2

    s = result.summary
    coin = next(r for r in s.repro if r.agent_version == "coin")
    assert (coin.cases, coin.samples, coin.reproduced, coin.not_reproduced) == (3, 2, 3, 3)
    assert coin.rate == pytest.approx(0.5)
    # Every case is 1/2: the interval is over 3 cases, as wide as a coin's over 3 tosses
    # at least, never the 6 samples' width.
    assert coin.rate_ci is not None and coin.rate_ci[1] - coin.rate_ci[0] > 0.6
    base = next(r for r in s.repro if r.agent_version == "baseline-recorded")
    assert (base.cases, base.samples, base.rate) == (3, 1, 1.0)
    assert s.headline is not None and s.headline.pairs == 6 and s.headline.cases == 3
    assert s.headline.decisive <= 3

    by_row = {(c.case_id, c.sample): c for c in s.cases}
    assert set(by_row) == {(c, i) for c in CASES for i in (0, 1)}
    for case in CASES:
        assert by_row[case, 0].candidate_status is ReproOutcome.REPRODUCED
        assert by_row[case, 1].candidate_status is ReproOutcome.NOT_REPRODUCED
        # the replay baseline's one report stands for both samples
        assert by_row[case, 1].baseline_status is ReproOutcome.REPRODUCED
        transcript = by_row[case, 1].candidate_transcript
        assert transcript == f"transcripts/{case}/coin.sample1.txt"
        assert f"sample 1 of {case}" in (out / transcript).read_text()
    summary = json.loads((out / "summary.json").read_text())
    assert {r["sample"] for r in summary["cases"]} == {0, 1}
    # The counts say what they count: sample pairs, in cases (the rate's unit).
    text = (out / "report.md").read_text()
    assert f"in {s.headline.decisive} case" in text and "decisive sample pairs" in text
