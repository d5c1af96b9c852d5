"""One real run, every output: the CLI's text, report.md, report.html, summary.json and
`bughunt summary --run` give the same counts (Prefect test harness, real Docker, real DuckDB)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli import app
from ledger import Ledger
from tests.flows.minicorpus import build_minicorpus

pytestmark = pytest.mark.usefixtures("prefect_harness")

CASES = ("cmp-same-day-posting", "cond-closed-account", "obo-top-expenses", "ret-reverse-id")
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


def test_every_count_reads_the_same_in_every_output(tmp_path: Path) -> None:
    """Pairs, decisive, wins each way, ties, unscored and judge calls (verdict, bias-probe and all
    apart) are one number each across the CLI, report.md, report.html, summary.json and
    `bughunt summary --run`, and the ledger's rows agree with it."""
    mini = build_minicorpus(tmp_path / "repo", CASES)
    ledger, out = tmp_path / "ledger.duckdb", tmp_path / "out"
    runner = CliRunner()
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
    assert ran.exit_code == 0, ran.output
    summary = json.loads((out / "summary.json").read_text())
    run_id = summary["run_id"]
    stored = runner.invoke(app, ["summary", "--run", run_id, "--ledger", str(ledger)])
    assert stored.exit_code == 0, stored.output
    page = (out / "report.html").read_text()
    outputs = {
        "bughunt run nightly": ran.stdout,
        "report.md": (out / "report.md").read_text(),
        "report.html": html.unescape(page),
        "bughunt summary --run": stored.stdout,
    }
    expected = _expected(summary)
    h, health = summary["headline"], summary["health"]
    # summary.json itself: the headline's verdict-call fields are the health's verdict calls,
    # and the totals are verdict plus bias-probe calls
    verdict, probe = health["verdict_calls"], health["probe_calls"]
    assert (h["calls_recorded"], h["calls_sent"], h["requests"]) == (
        verdict["calls"],
        verdict["sent"],
        verdict["requests"],
    )
    assert expected[ALL_CALLS] == tuple(
        a + b for a, b in zip(_calls(verdict), _calls(probe), strict=True)
    )
    assert h["pairs"] == len(CASES) and h["unscored"] >= 1 and probe["calls"] > 0
    assert h["decisive"] == h["candidate_wins"] + h["baseline_wins"]
    assert h["pairs"] == h["decisive"] + h["ties"] + h["unscored"]
    for where, text in outputs.items():
        for pattern, numbers in expected.items():
            assert _numbers(pattern, text, where) == {numbers}, (where, pattern.pattern)
    # the headline sentence, word for word
    sentence = re.search(r"((?:Candidate wins|No decisive pair)[^\n<*]*)", outputs["report.md"])
    assert sentence is not None
    for where, text in outputs.items():
        assert sentence.group(1).rstrip(".") in text, where
    # the Judge section's table: one total per purpose, the same as the lines
    totals = {
        "verdict calls": verdict["calls"],
        "bias-probe calls": probe["calls"],
        "all calls": expected[ALL_CALLS][0],
    }
    assert {m[0]: int(m[1]) for m in TABLE_ROW.findall(outputs["report.md"])} == totals
    assert {m[0]: int(m[1]) for m in HTML_ROW.findall(page)} == totals
    # `bughunt summary --run --json`: the same numbers under "run"
    as_json = runner.invoke(app, ["summary", "--run", run_id, "--json", "--ledger", str(ledger)])
    counts = json.loads(as_json.stdout)["run"]
    assert (
        tuple(counts[k] for k in ("pairs", "decisive", "candidate_wins", "baseline_wins", "ties"))
        == (expected[PAIRS][:5])
    )
    assert counts["unscored"] == h["unscored"] and counts["calls_used"] == h["calls_used"]
    # `bughunt unscored --run` (by a start of the id) lists those pairs, `bughunt runs` counts them
    listed = runner.invoke(
        app, ["unscored", "--run", run_id[:-3], "--json", "--ledger", str(ledger)]
    )
    assert listed.exit_code == 0, listed.output
    pairs = json.loads(listed.stdout)
    assert (pairs["run_id"], pairs["pairs"], len(pairs["unscored"])) == (
        run_id,
        h["pairs"],
        h["unscored"],
    )
    assert "cond-closed-account" in {p["case_id"] for p in pairs["unscored"]}
    assert all(p["reason"] for p in pairs["unscored"])
    as_text = runner.invoke(app, ["unscored", "--run-id", run_id, "--ledger", str(ledger)])
    assert f"{h['unscored']} of {h['pairs']} pairs unscored" in as_text.stdout
    listed_runs = runner.invoke(app, ["runs", "--json", "--ledger", str(ledger)])
    assert [r["unscored"] for r in json.loads(listed_runs.stdout) if r["run_id"] == run_id] == [
        h["unscored"]
    ]
    assert (counts["verdict_calls"], counts["probe_calls"]) == (verdict, probe)
    # the ledger's rows: one verdict per pair, every call recorded, probe calls by their case id
    rows = Ledger(ledger).query(
        "SELECT (SELECT count(*) FROM verdicts WHERE run_id = ?) AS pairs, "
        "(SELECT count(*) FROM verdicts WHERE run_id = ? AND outcome = 'unscored') AS unscored, "
        "(SELECT count(*) FROM judge_calls WHERE run_id = ?) AS calls, "
        "(SELECT count(*) FROM judge_calls WHERE run_id = ? AND case_id LIKE 'probe:%') "
        "AS probe_calls",
        [run_id] * 4,
    )[0]
    # every judged verdict carries the judge's words, the unscored ones none
    said = Ledger(ledger).query(
        "SELECT outcome = 'unscored' AS unscored, count(rationale) AS n, count(*) AS total "
        "FROM verdicts WHERE run_id = ? GROUP BY 1 ORDER BY 1",
        [run_id],
    )
    assert [(r["n"] == r["total"], r["n"]) for r in said] == [
        (True, h["pairs"] - h["unscored"]),
        (False, 0),
    ]
    assert rows == {
        "pairs": h["pairs"],
        "unscored": h["unscored"],
        "calls": expected[ALL_CALLS][0],
        "probe_calls": probe["calls"],
    }
