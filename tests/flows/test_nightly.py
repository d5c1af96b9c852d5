"""The nightly flow end to end on the demo corpus (Prefect test harness, real Docker, real DuckDB).

One nightly run in a module fixture; each test reads one behaviour of it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bughunt.models import ReproOutcome, RunKind
from corpus import load_corpus
from flows import STAGES, RunParams, RunResult, nightly_flow
from ledger import Ledger
from tasks.report._model import CaseRow
from tasks.sandbox.evidence import BUGGY_VARIANTS, CLEAN_VARIANTS
from tests.conftest import ROOT

pytestmark = pytest.mark.usefixtures("prefect_harness")

SHOWN = 180
"""45 usable reports (one malformed) × 2 trees × 2 repeats (no rewritten trees by default)."""


def _observations(night: Night) -> int:
    """Every execution of the run: on the trees as shown, then once on each variant
    of the pairs those made reproductions (as many variants as a plan found places for)."""
    row = night.query(
        "SELECT count(*) AS n, count(DISTINCT case_id || '/' || agent_version) AS pairs "
        "FROM observations WHERE run_id = ? AND kind LIKE '%-variant'",
        night.run,
    )[0]
    assert 0 < row["pairs"] <= row["n"] <= row["pairs"] * (BUGGY_VARIANTS + CLEAN_VARIANTS)
    return SHOWN + int(row["n"])


@dataclass(frozen=True)
class Night:
    result: RunResult
    ledger: Ledger
    out: Path

    @property
    def run(self) -> str:
        return self.result.run_id

    @property
    def cases(self) -> dict[str, CaseRow]:
        return {c.case_id: c for c in self.result.summary.cases}

    def query(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        return self.ledger.query(sql, list(params))


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Night]:
    """The demo nightly, run once for the module (2 repeats, 6 probe pairs)."""
    folder = tmp_path_factory.mktemp("nightly")
    ledger = Ledger(folder / "ledger.duckdb")
    owner = os.environ.get("BUGHUNT_OWNER")  # the per-test guard starts after this fixture
    try:
        result = nightly_flow(
            params=RunParams(
                corpus=str(ROOT / "corpus" / "demo"),
                ledger=str(ledger.path),
                out=str(folder / "out"),
                repeats=2,
                probe_pairs=6,
            )
        )
    finally:
        if owner is None:
            os.environ.pop("BUGHUNT_OWNER", None)
        else:
            os.environ["BUGHUNT_OWNER"] = owner
    yield Night(result, ledger, folder / "out")


def test_every_stage_runs_and_every_case_has_a_row(night: Night) -> None:
    """Every stage runs, in order; 23 case rows (18 ledgerlite, 5 rankings) and 23 pairs."""
    assert night.result.stages_run == list(STAGES) and night.result.kind is RunKind.NIGHTLY
    assert len(night.cases) == 23
    headline = night.result.summary.headline
    assert headline is not None and headline.pairs == 23


def test_a_malformed_report_is_an_unscored_error(night: Night) -> None:
    """The candidate's report of cond-closed-account is not valid JSON: an error with the
    reason, the pair unscored, no outputs file."""
    row = night.cases["cond-closed-account"]
    assert row.candidate_status is ReproOutcome.ERROR
    assert "not valid JSON" in (row.candidate_reason or "")
    assert row.verdict == "unscored" and row.candidate_outputs is None
    assert not (night.out / "outputs" / "cond-closed-account" / "candidate-recorded.txt").exists()


def test_a_test_that_sleeps_on_the_buggy_tree_reproduces_as_a_hang(night: Night) -> None:
    """ret-reverse-id's test sleeps on the buggy tree and passes at once on the clean one."""
    assert night.cases["ret-reverse-id"].candidate_status is ReproOutcome.REPRODUCED
    symptom = night.query(
        "SELECT symptom FROM reproductions WHERE run_id = ? AND case_id = ? AND agent_version = ?",
        night.run,
        "ret-reverse-id",
        "candidate-recorded",
    )
    assert symptom == [{"symptom": "hang"}]
    assert night.cases["cond-zero-amount-posting"].candidate_status is ReproOutcome.REPRODUCED


def test_a_random_clean_tree_result_is_flaky_exactly_when_both_showed(night: Night) -> None:
    """state-reversal-shares-tags's clean-tree result is random (p = 1/2 per execution): flaky
    exactly when both outcomes showed up on the clean tree as shown. Executions on variants of
    the clean tree (kind ``repro:clean-variant``, also ``tree = 'clean'``) and on rewrites are
    other trees: any outcome there is a check of the reproduction, never flake evidence."""
    clean = {
        r["status"]
        for r in night.query(
            "SELECT status FROM observations WHERE run_id = ? AND case_id = ? AND agent_version = ? "
            "AND kind = 'repro:clean' AND rewrite IS NULL",
            night.run,
            "state-reversal-shares-tags",
            "candidate-recorded",
        )
    }
    flaky = night.cases["state-reversal-shares-tags"].candidate_status is ReproOutcome.FLAKY
    assert flaky == ({"pass", "fail"} <= clean)


def test_the_ledger_holds_the_run_s_rows(night: Night) -> None:
    """One observation row (and record id) per execution, a reproduction per report, a verdict
    and a manifest row per case, one output per stage, at least two calls per scored pair; the
    run completed."""
    counts = night.query(
        "SELECT (SELECT count(*) FROM observations WHERE run_id = $1) AS obs, "
        "(SELECT count(DISTINCT record_id) FROM observations WHERE run_id = $1) AS ids, "
        "(SELECT count(*) FROM reproductions WHERE run_id = $1) AS repro, "
        "(SELECT count(*) FROM verdicts WHERE run_id = $1) AS verdicts, "
        "(SELECT count(*) FROM judge_calls WHERE run_id = $1) AS calls, "
        "(SELECT count(*) FROM corpus_manifest WHERE run_id = $1) AS manifest, "
        "(SELECT count(*) FROM stage_outputs WHERE run_id = $1) AS stages",
        night.run,
    )[0]
    observations = _observations(night)
    assert counts == {
        "obs": observations,
        "ids": observations,
        "repro": 46,
        "verdicts": 23,
        "calls": counts["calls"],
        "manifest": 23,
        "stages": 6,
    }
    assert counts["calls"] >= 22 * 2
    status = night.query("SELECT status FROM runs_latest WHERE run_id = ?", night.run)
    assert status[0]["status"] in ("completed", "degraded")


def test_a_target_with_its_own_packages_runs_in_its_own_image(night: Night) -> None:
    """The rankings target's cases ran in its own image (sortedcontainers from PyPI) and every
    one reproduced for both agents; the ledgerlite cases ran in the sandbox image."""
    rankings = {c.case_id for c in load_corpus(ROOT / "corpus" / "demo").cases_of("rankings")}
    images: dict[bool, set[str]] = {True: set(), False: set()}
    for row in night.query(
        "SELECT DISTINCT case_id, image_id FROM observations WHERE run_id = ?", night.run
    ):
        images[row["case_id"] in rankings].add(row["image_id"])
    assert len(images[True]) == 1 and images[True].isdisjoint(images[False])
    for case_id in rankings:
        assert night.cases[case_id].candidate_status is ReproOutcome.REPRODUCED
        assert night.cases[case_id].baseline_status is ReproOutcome.REPRODUCED


def test_the_report_and_summary_are_written(night: Night) -> None:
    """summary.json names the run; report.html is a full page."""
    summary = json.loads((night.out / "summary.json").read_text())
    assert summary["run_id"] == night.run
    assert (night.out / "report.html").stat().st_size > 10_000


def _printed(night: Night) -> dict[tuple[str, str], list[str]]:
    """Each pair's non-empty outputs, as the ledger has them."""
    printed: dict[tuple[str, str], list[str]] = {}
    for r in night.query(
        "SELECT case_id, agent_version, output FROM observations WHERE run_id = ? "
        "AND output IS NOT NULL AND trim(output) <> ''",
        night.run,
    ):
        printed.setdefault((r["case_id"], r["agent_version"]), []).append(r["output"])
    return printed


def test_each_case_row_links_both_tests_executions(night: Night) -> None:
    """Each case row links both reproduction tests' executions; the file holds one block per
    observation the ledger has for the pair, and every output the ledger kept (the run's
    result in memory has none once written: the files read them back from the ledger)."""
    per_pair = {
        (r["case_id"], r["agent_version"]): r["n"]
        for r in night.query(
            "SELECT case_id, agent_version, count(*) AS n FROM observations WHERE run_id = ? "
            "GROUP BY ALL",
            night.run,
        )
    }
    assert sum(per_pair.values()) == _observations(night)
    printed = _printed(night)
    assert sum(map(len, printed.values())) > 300
    md, html = (night.out / "report.md").read_text(), (night.out / "report.html").read_text()
    for (case_id, agent), n in per_pair.items():
        link = f"outputs/{case_id}/{agent}.txt"
        assert f"]({link})" in md and f'href="{link}"' in html
        text = (night.out / link).read_text()
        assert text.startswith(f"reproduction test of {agent} on case {case_id}\n")
        assert text.count("\n--- ") == n and f"executions: {n}\n" in text
        assert all(o in text for o in printed.get((case_id, agent), [])), (case_id, agent)
