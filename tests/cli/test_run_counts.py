"""One real run, every output: the CLI's text, report.md, report.html, summary.json and
`bughunt summary --run` give the same counts (Prefect test harness, real Docker, real DuckDB)."""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from cli import app
from ledger import Ledger
from tests.flows.minicorpus import build_minicorpus

pytestmark = pytest.mark.usefixtures("prefect_harness")

CASES = ("cmp-same-day-posting", "cond-closed-account", "obo-top-expenses", "state-next-id")
"""Four demo cases; the candidate's report of cond-closed-account is not valid JSON, so one
pair is unscored."""

# Each count line, as every output says it (tasks/report/_counts.py), with its numbers.
PAIRS = re.compile(
    r"Pairs: (\d+) — decisive (\d+) \(candidate wins (\d+), baseline wins (\d+)\), "
    r"ties (\d+), unscored (\d+)"
)
VERDICT_CALLS = re.compile(
    r"Verdict judge calls: (\d+) — used by the verdicts (\d+), sent (\d+), from cache (\d+), "
    r"requests (\d+)"
)
PROBE_CALLS = re.compile(
    r"Bias-probe judge calls: (\d+) — sent (\d+), from cache (\d+), requests (\d+)"
)
ALL_CALLS = re.compile(r"All judge calls: (\d+) — sent (\d+), from cache (\d+), requests (\d+)")
TABLE_ROW = re.compile(r"\| (verdict calls|bias-probe calls|all calls) \| (\d+) \|")
HTML_ROW = re.compile(
    r'<tr><th>(verdict calls|bias-probe calls|all calls)</th><td class="num">(\d+)</td>'
)


def _numbers(pattern: re.Pattern[str], text: str, where: str) -> set[tuple[int, ...]]:
    found = {tuple(int(n) for n in m.groups()) for m in pattern.finditer(text)}
    assert found, f"{where}: no line matching {pattern.pattern!r}"
    return found


def _calls(c: dict[str, Any]) -> tuple[int, ...]:
    return (c["calls"], c["sent"], c["cache_hits"], c["requests"])


def _expected(summary: dict[str, Any]) -> dict[re.Pattern[str], tuple[int, ...]]:
    """What each line must say, from summary.json's fields (the numbers, not the wording)."""
    h, health = summary["headline"], summary["health"]
    verdict, probe = health["verdict_calls"], health["probe_calls"]
    every = (
        sum(health["calls_by_status"].values()),
        health["calls_sent"],
        health["cache_hits"],
        health["requests"],
    )
    return {
        PAIRS: tuple(
            h[k]
            for k in ("pairs", "decisive", "candidate_wins", "baseline_wins", "ties", "unscored")
        ),
        VERDICT_CALLS: (verdict["calls"], h["calls_used"], *_calls(verdict)[1:]),
        PROBE_CALLS: _calls(probe),
        ALL_CALLS: every,
    }


@dataclass(frozen=True, slots=True)
class _Run:
    """The module's one nightly run: its ledger, summary.json, and every output that counts."""

    ledger: Path
    summary: dict[str, Any]
    page: str
    """report.html as written (its markup intact)."""
    outputs: dict[str, str]
    """Each output's text by where it comes from (report.html unescaped)."""

    @property
    def run_id(self) -> str:
        return str(self.summary["run_id"])

    @property
    def headline(self) -> dict[str, Any]:
        return dict(self.summary["headline"])

    def calls(self, purpose: str) -> dict[str, Any]:
        """summary.json's health figures of one purpose's judge calls (``verdict``, ``probe``)."""
        return dict(self.summary["health"][f"{purpose}_calls"])

    def cli(self, *args: str) -> Result:
        """A `bughunt` command against the run's ledger."""
        return CliRunner().invoke(app, [*args, "--ledger", str(self.ledger)])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> _Run:
    """One nightly run on the mini corpus, read through every output once for the module.

    Prefect's harness (``pytestmark``) is session-scoped, so pytest starts it before this.
    """
    tmp_path = tmp_path_factory.mktemp("run-counts")
    mini = build_minicorpus(tmp_path / "repo", CASES)
    ledger, out = tmp_path / "ledger.duckdb", tmp_path / "out"
    runner = CliRunner()
    # The run claims this process (BUGHUNT_OWNER); the per-test guard starts after a module
    # fixture, so this one takes the claim back itself.
    owner = os.environ.get("BUGHUNT_OWNER")
    try:
        ran = runner.invoke(
            app,
            [
                "run",
                "nightly",
                "--corpus",
                str(mini.corpus),
                "--ledger",
                str(ledger),
                "--out",
                str(out),
                "--repeats",
                "1",
                "--probe-pairs",
                "3",
            ],
        )
    finally:
        if owner is None:
            os.environ.pop("BUGHUNT_OWNER", None)
        else:
            os.environ["BUGHUNT_OWNER"] = owner
    assert ran.exit_code == 0, ran.output
    summary = json.loads((out / "summary.json").read_text())
    stored = runner.invoke(app, ["summary", "--run", summary["run_id"], "--ledger", str(ledger)])
    assert stored.exit_code == 0, stored.output
    page = (out / "report.html").read_text()
    outputs = {
        "bughunt run nightly": ran.stdout,
        "report.md": (out / "report.md").read_text(),
        "report.html": html.unescape(page),
        "bughunt summary --run": stored.stdout,
    }
    return _Run(ledger=ledger, summary=summary, page=page, outputs=outputs)


def test_summary_json_call_fields_are_the_verdict_calls_and_totals_add_up(run: _Run) -> None:
    """summary.json: the headline's verdict-call fields are the health's verdict calls, and the
    totals are verdict plus bias-probe calls."""
    h, verdict, probe = run.headline, run.calls("verdict"), run.calls("probe")
    assert (h["calls_recorded"], h["calls_sent"], h["requests"]) == (
        verdict["calls"],
        verdict["sent"],
        verdict["requests"],
    )
    assert _expected(run.summary)[ALL_CALLS] == tuple(
        a + b for a, b in zip(_calls(verdict), _calls(probe), strict=True)
    )


def test_summary_json_pairs_add_up(run: _Run) -> None:
    """summary.json: one pair per case, at least one unscored, probe calls made, and pairs are
    decisive plus ties plus unscored, decisive the wins of either side."""
    h = run.headline
    assert h["pairs"] == len(CASES) and h["unscored"] >= 1 and run.calls("probe")["calls"] > 0
    assert h["decisive"] == h["candidate_wins"] + h["baseline_wins"]
    assert h["pairs"] == h["decisive"] + h["ties"] + h["unscored"]


def test_every_count_line_says_the_same_numbers_in_every_output(run: _Run) -> None:
    """Pairs, decisive, wins each way, ties, unscored and judge calls (verdict, bias-probe and
    all apart) are one number each across the CLI, report.md, report.html and `bughunt summary
    --run`, the numbers of summary.json."""
    expected = _expected(run.summary)
    for where, text in run.outputs.items():
        for pattern, numbers in expected.items():
            assert _numbers(pattern, text, where) == {numbers}, (where, pattern.pattern)


def test_the_headline_sentence_reads_word_for_word_in_every_output(run: _Run) -> None:
    """report.md's headline sentence appears as it is in every other output."""
    sentence = re.search(r"((?:Candidate wins|No decisive pair)[^\n<*]*)", run.outputs["report.md"])
    assert sentence is not None
    for where, text in run.outputs.items():
        assert sentence.group(1).rstrip(".") in text, where


def test_the_judge_tables_give_one_total_per_purpose_as_the_lines_do(run: _Run) -> None:
    """The Judge section's table in report.md and report.html: verdict, bias-probe and all
    calls, the same totals as the count lines."""
    totals = {
        "verdict calls": run.calls("verdict")["calls"],
        "bias-probe calls": run.calls("probe")["calls"],
        "all calls": _expected(run.summary)[ALL_CALLS][0],
    }
    assert {m[0]: int(m[1]) for m in TABLE_ROW.findall(run.outputs["report.md"])} == totals
    assert {m[0]: int(m[1]) for m in HTML_ROW.findall(run.page)} == totals


def test_summary_as_json_gives_the_same_numbers_under_run(run: _Run) -> None:
    """`bughunt summary --run --json`: the pair counts, calls used and the calls of each
    purpose are summary.json's."""
    h, expected = run.headline, _expected(run.summary)
    as_json = run.cli("summary", "--run", run.run_id, "--json")
    counts = json.loads(as_json.stdout)["run"]
    assert (
        tuple(counts[k] for k in ("pairs", "decisive", "candidate_wins", "baseline_wins", "ties"))
        == (expected[PAIRS][:5])
    )
    assert counts["unscored"] == h["unscored"] and counts["calls_used"] == h["calls_used"]
    assert (counts["verdict_calls"], counts["probe_calls"]) == (
        run.calls("verdict"),
        run.calls("probe"),
    )


def test_unscored_lists_the_unscored_pairs_with_their_reasons(run: _Run) -> None:
    """`bughunt unscored --run` (by a start of the id) lists the run's unscored pairs, the
    invalid report's among them, each with a reason; its text says how many of how many."""
    h = run.headline
    listed = run.cli("unscored", "--run", run.run_id[:-3], "--json")
    assert listed.exit_code == 0, listed.output
    pairs = json.loads(listed.stdout)
    assert (pairs["run_id"], pairs["pairs"], len(pairs["unscored"])) == (
        run.run_id,
        h["pairs"],
        h["unscored"],
    )
    assert "cond-closed-account" in {p["case_id"] for p in pairs["unscored"]}
    assert all(p["reason"] for p in pairs["unscored"])
    as_text = run.cli("unscored", "--run-id", run.run_id)
    assert f"{h['unscored']} of {h['pairs']} pairs unscored" in as_text.stdout


def test_runs_counts_the_unscored_pairs(run: _Run) -> None:
    """`bughunt runs --json` gives the run's unscored count of summary.json."""
    listed_runs = run.cli("runs", "--json")
    assert [r["unscored"] for r in json.loads(listed_runs.stdout) if r["run_id"] == run.run_id] == [
        run.headline["unscored"]
    ]


def test_the_ledger_rows_agree_with_the_counts(run: _Run) -> None:
    """The ledger's rows: one verdict per pair, the unscored ones, every call recorded, probe
    calls by their case id."""
    h = run.headline
    rows = Ledger(run.ledger).query(
        "SELECT (SELECT count(*) FROM verdicts WHERE run_id = ?) AS pairs, "
        "(SELECT count(*) FROM verdicts WHERE run_id = ? AND outcome = 'unscored') AS unscored, "
        "(SELECT count(*) FROM judge_calls WHERE run_id = ?) AS calls, "
        "(SELECT count(*) FROM judge_calls WHERE run_id = ? AND case_id LIKE 'probe:%') "
        "AS probe_calls",
        [run.run_id] * 4,
    )[0]
    assert rows == {
        "pairs": h["pairs"],
        "unscored": h["unscored"],
        "calls": _expected(run.summary)[ALL_CALLS][0],
        "probe_calls": run.calls("probe")["calls"],
    }


def test_every_judged_verdict_carries_the_judges_words_and_no_unscored_one_does(
    run: _Run,
) -> None:
    """In the ledger, every judged verdict has a rationale and the unscored ones none."""
    h = run.headline
    said = Ledger(run.ledger).query(
        "SELECT outcome = 'unscored' AS unscored, count(rationale) AS n, count(*) AS total "
        "FROM verdicts WHERE run_id = ? GROUP BY 1 ORDER BY 1",
        [run.run_id],
    )
    assert [(r["n"] == r["total"], r["n"]) for r in said] == [
        (True, h["pairs"] - h["unscored"]),
        (False, 0),
    ]
