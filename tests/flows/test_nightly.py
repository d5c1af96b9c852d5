"""The nightly flow end to end on the demo corpus (Prefect test harness, real Docker, real DuckDB)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bughunt.models import ReproOutcome, RunKind
from corpus import load_corpus
from flows import STAGES, RunParams, nightly_flow
from ledger import Ledger
from tests.conftest import ROOT

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_nightly_on_the_demo_corpus(ledger: Ledger, tmp_path: Path) -> None:
    """Every stage runs; the ledger holds the run's rows; the report and summary are written."""
    result = nightly_flow(
        params=RunParams(
            corpus=str(ROOT / "corpus" / "demo"),
            ledger=str(ledger.path),
            out=str(tmp_path / "out"),
            repeats=2,
            probe_pairs=6,
        )
    )
    assert result.stages_run == list(STAGES) and result.kind is RunKind.NIGHTLY
    s = result.summary
    by_case = {(c.case_id): c for c in s.cases}
    assert len(by_case) == 23  # 18 ledgerlite cases, 5 of the rankings target
    # the awkward recorded reports of the candidate, each recognised for what it is
    assert by_case["cond-closed-account"].candidate_status is ReproOutcome.ERROR
    assert "not valid JSON" in (by_case["cond-closed-account"].candidate_reason or "")
    assert by_case["cond-closed-account"].verdict == "unscored"
    # its test sleeps on the buggy tree and passes at once on the clean one: a hang
    assert by_case["ret-reverse-id"].candidate_status is ReproOutcome.REPRODUCED
    symptom = ledger.query(
        "SELECT symptom FROM reproductions WHERE run_id = ? AND case_id = ? AND agent_version = ?",
        [result.run_id, "ret-reverse-id", "candidate-recorded"],
    )
    assert symptom == [{"symptom": "hang"}]
    # Its clean-tree result is random (p = 1/2 per execution): flaky exactly when both showed
    # up on the clean tree as shown. (On the rewritten trees any outcome but the pattern is
    # "not reproduced", never flaky: a test must not turn a failed check into an excluded one.)
    clean = {
        r["status"]
        for r in ledger.query(
            "SELECT status FROM observations WHERE run_id = ? AND case_id = ? AND agent_version = ? "
            "AND tree = 'clean' AND rewrite IS NULL",
            [result.run_id, "state-reversal-shares-tags", "candidate-recorded"],
        )
    }
    flaky = by_case["state-reversal-shares-tags"].candidate_status is ReproOutcome.FLAKY
    assert flaky == ({"pass", "fail"} <= clean)
    assert by_case["cond-zero-amount-posting"].candidate_status is ReproOutcome.REPRODUCED
    assert s.headline is not None and s.headline.pairs == 23
    run = result.run_id
    counts = ledger.query(
        "SELECT (SELECT count(*) FROM observations WHERE run_id = ?) AS obs, "
        "(SELECT count(DISTINCT record_id) FROM observations WHERE run_id = ?) AS ids, "
        "(SELECT count(*) FROM reproductions WHERE run_id = ?) AS repro, "
        "(SELECT count(*) FROM verdicts WHERE run_id = ?) AS verdicts, "
        "(SELECT count(*) FROM judge_calls WHERE run_id = ?) AS calls, "
        "(SELECT count(*) FROM corpus_manifest WHERE run_id = ?) AS manifest, "
        "(SELECT count(*) FROM stage_outputs WHERE run_id = ?) AS stages",
        [run] * 7,
    )[0]
    # 45 usable reports (one malformed) × 2 trees × (2 repeats as shown + 2 rewritten)
    assert counts == {
        "obs": 360,
        "ids": 360,
        "repro": 46,
        "verdicts": 23,
        "calls": counts["calls"],
        "manifest": 23,
        "stages": 6,
    }
    assert counts["calls"] >= 22 * 2
    # the rankings target's cases ran in its own image (sortedcontainers from PyPI), and every
    # one of them reproduced for both agents; the ledgerlite cases ran in the sandbox image
    rankings = {c.case_id for c in load_corpus(ROOT / "corpus" / "demo").cases_of("rankings")}
    images: dict[bool, set[str]] = {True: set(), False: set()}
    for row in ledger.query(
        "SELECT DISTINCT case_id, image_id FROM observations WHERE run_id = ?", [run]
    ):
        images[row["case_id"] in rankings].add(row["image_id"])
    assert len(images[True]) == 1 and images[True].isdisjoint(images[False])
    for case_id in rankings:
        assert by_case[case_id].candidate_status is ReproOutcome.REPRODUCED
        assert by_case[case_id].baseline_status is ReproOutcome.REPRODUCED
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["run_id"] == run
    assert (tmp_path / "out" / "report.html").stat().st_size > 10_000
    assert ledger.query("SELECT status FROM runs_latest WHERE run_id = ?", [run])[0]["status"] in (
        "completed",
        "degraded",
    )
    # Each case row links both reproduction tests' executions; the file holds one block per
    # observation the ledger has for the pair. A report that never became a test has no link.
    out = tmp_path / "out"
    md, html = (out / "report.md").read_text(), (out / "report.html").read_text()
    per_pair = {
        (r["case_id"], r["agent_version"]): r["n"]
        for r in ledger.query(
            "SELECT case_id, agent_version, count(*) AS n FROM observations WHERE run_id = ? "
            "GROUP BY ALL",
            [run],
        )
    }
    assert sum(per_pair.values()) == 360
    # The run keeps its sandbox result without outputs once written; the files have them
    # all, read back from the ledger.
    printed: dict[tuple[str, str], list[str]] = {}
    for r in ledger.query(
        "SELECT case_id, agent_version, output FROM observations WHERE run_id = ? "
        "AND output IS NOT NULL AND trim(output) <> ''",
        [run],
    ):
        printed.setdefault((r["case_id"], r["agent_version"]), []).append(r["output"])
    assert sum(map(len, printed.values())) > 300
    for (case_id, agent), n in per_pair.items():
        link = f"outputs/{case_id}/{agent}.txt"
        assert f"]({link})" in md and f'href="{link}"' in html
        text = (out / link).read_text()
        assert text.startswith(f"reproduction test of {agent} on case {case_id}\n")
        assert text.count("\n--- ") == n and f"executions: {n}\n" in text
        assert all(o in text for o in printed.get((case_id, agent), [])), (case_id, agent)
    assert by_case["cond-closed-account"].candidate_outputs is None
    assert not (out / "outputs" / "cond-closed-account" / "candidate-recorded.txt").exists()
