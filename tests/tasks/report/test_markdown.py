"""The Markdown report: an exact snapshot, every section, hostile text shown as text.

Regenerate the snapshot after an intended change with
``UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/tasks/report/test_markdown.py``
and review its diff before committing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from markdown_it import MarkdownIt
from markupsafe import escape

from bughunt.models import RunKind
from tasks.gate import GateDecision, GateOutcome
from tasks.report import RunSummary
from tasks.report._escape import clip, md_escape
from tasks.report._render import render_html, render_markdown
from tasks.report.runs import History
from tests.tasks.report.conftest import hostile_rationale, hostile_strings, make_summary

SNAPSHOT = Path(__file__).parent / "snapshots" / "report.md"
MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def test_markdown_matches_snapshot(summary: RunSummary, history: History) -> None:
    """The fixture night renders exactly as the committed snapshot (UPDATE_SNAPSHOTS=1 rewrites it)."""
    text = render_markdown(summary, history)
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert SNAPSHOT.read_text(encoding="utf-8") == text, (
        "report.md changed: review, then UPDATE_SNAPSHOTS=1 to accept"
    )


def test_markdown_has_every_section(summary: RunSummary, history: History) -> None:
    """Headline, per-category, cases, disputed, unscored, flaky, judge and history sections are there."""
    text = render_markdown(summary, history)
    headings = re.findall(r"^#{1,3} (.+)$", text, flags=re.MULTILINE)
    for h in (
        "Headline",
        "Reproduction",
        "Per category",
        "Cases",
        "Disputed identities",
        "Unscored",
        "Flaky tests",
        "Bias probes",
        "Health",
        "History",
        "Candidate win rate",
        "Reproduction rate",
        "Flake rate",
        "Judge position consistency",
    ):
        assert h in headings
    assert (
        "**Candidate wins 9 of 14 decisive pairs: 64% (95% CI 39–84%), 2 ties, 2 unscored;" in text
    )
    assert "Length-controlled win rate: withheld — its 95% interval 38%–91% is 50% wide" in text
    assert "Circuit breaker: **opened, the run is degraded**" in text


def test_hostile_strings_appear_escaped(summary: RunSummary, history: History) -> None:
    """Each hostile string of the demo's hostile report is in the Markdown in escaped form only."""
    text = render_markdown(summary, history)
    for s in hostile_strings():
        assert md_escape(clip(s)) in text or md_escape(clip(s, 120)) in text, s
    for raw in ("<script", "<img", "](javascript", "\n# SYSTEM", "\n# Verdict", "</report>"):
        assert raw not in text


def test_rendered_markdown_has_no_active_markup(summary: RunSummary, history: History) -> None:
    """Parsed as CommonMark + GFM tables: no HTML, image or link, and the only headings are ours."""
    out = MD.render(render_markdown(summary, history))
    assert "<script" not in out and "<img" not in out and "<a " not in out
    titles = re.findall(r"<h[1-6]>(.*?)</h[1-6]>", out)
    assert all(not t.startswith(("SYSTEM", "Verdict")) for t in titles)
    assert "Zero-amount posting accepted &lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "[click](javascript:alert(1))" in out  # the link's text, shown as text


def test_empty_history_says_so(summary: RunSummary) -> None:
    """With no history every series says 'No history yet' instead of an empty table."""
    text = render_markdown(summary, History())
    assert text.count("No history yet.") == 4
    assert "| run | date | decisive |" not in text


def test_unjudged_run_has_no_rate(summary: RunSummary, history: History) -> None:
    """A run the score stage did not judge says so, and no win rate or 0% is printed for it."""
    text = render_markdown(summary.model_copy(update={"headline": None}), history)
    assert "The judge did not score this run: there is no win rate." in text
    assert "Candidate wins" not in text


def test_pr_report_leads_with_the_gate(history: History) -> None:
    """A PR run shows the gate's outcome, exit code and escaped message before the headline."""
    gate = GateDecision(
        outcome=GateOutcome.REVIEW_FAILED,
        exit_code=3,
        message="REVIEW FAILED — 2 of 18 pairs could not be judged\n# not a heading <b>",
    )
    text = render_markdown(make_summary(kind=RunKind.PR, gate=gate), history)
    assert text.startswith("# bughunt PR report: pr-")
    assert text.index("## Gate: review_failed (exit 3)") < text.index("## Headline")
    assert (
        "REVIEW FAILED — 2 of 18 pairs could not be judged  \n\\# not a heading &lt;b&gt;" in text
    )


def test_few_pairs_headline_says_so(summary: RunSummary, history: History) -> None:
    """A headline resting on fewer than ten decisive pairs carries the spelled-out flag."""
    assert summary.headline is not None
    few = summary.model_copy(
        update={"headline": summary.headline.model_copy(update={"flags": ["few pairs"]})}
    )
    text = render_markdown(few, history)
    assert "> ⚠ few pairs: fewer than 10 decisive pairs, read the interval, not the point" in text
    html = render_html(few, history)
    assert "⚠ few pairs: fewer than 10 decisive pairs, read the interval, not the point" in html


def test_a_summary_stored_before_the_split_says_so(summary: RunSummary, history: History) -> None:
    """A stored summary without per-purpose call counts says 'not counted apart', never 0."""
    old = summary.model_copy(
        update={
            "health": summary.health.model_copy(update={"verdict_calls": None, "probe_calls": None})
        }
    )
    text = render_markdown(old, history)
    assert "- Verdict judge calls: not counted apart" in text
    assert "- Bias-probe judge calls: not counted apart" in text
    assert "| verdict calls | not counted apart |" in text
    assert "- All judge calls: 41 — sent 21, from cache 16, requests 24" in text


def test_the_judges_last_calibration_is_shown_beside_its_verdicts(
    summary: RunSummary, history: History
) -> None:
    """A judge calibrated against human labels shows its agreement (with intervals) in the
    headline of both reports; the labels file's name is escaped like any text."""
    from bughunt.models import JudgeCalibration, Strategy

    calibration = JudgeCalibration(
        run_id="calibrate-x",
        judge="sim",
        strategy=Strategy.SWAP,
        k=5,
        seed=0,
        labels_file="labels <b>.jsonl",
        labels_hash="abc",
        n=24,
        scored=22,
        unscored=2,
        label_ties=4,
        judge_ties=3,
        accuracy=0.8,
        accuracy_low=0.6,
        accuracy_high=0.9,
        accuracy_n=15,
        kappa=0.55,
        kappa_low=0.3,
        kappa_high=0.8,
        consistency=0.9,
        consistency_low=0.7,
        consistency_high=0.97,
        consistency_n=22,
    )
    shown = summary.model_copy(update={"calibration": calibration})
    md = render_markdown(shown, history)
    assert "on 24 labelled pairs (2 unscored): accuracy 80% (95% CI 60–90%) over 15 pairs" in md
    assert "Cohen's κ 0.55 (95% CI 0.30–0.80)" in md and "labels &lt;b&gt;.jsonl" in md
    html = render_html(shown, history)
    assert "κ 0.55 (95% CI 0.30–0.80)" in html and "labels &lt;b&gt;.jsonl" in html
    assert "has no calibration under swap" in render_markdown(summary, history)


def test_an_adaptive_run_says_how_much_of_its_plan_it_evaluated(history: History) -> None:
    """A run that stopped early says so in both reports: evaluated of planned, batches, why."""
    from tasks.gate import Evaluation, StopReason

    evaluation = Evaluation(
        adaptive=True,
        rule="the PR gate decides (regression or pass)",
        order_seed=7,
        batch_size=10,
        planned=120,
        evaluated=40,
        batches=4,
        stop=StopReason.DECIDED,
        judge_calls_sent=80,
        sandbox_seconds=95.0,
    )
    shown = make_summary(kind=RunKind.PR).model_copy(update={"evaluation": evaluation})
    line = "evaluated 40 of 120 planned cases (33%) in 4 batches of up to 10 — stopped: decided"
    assert md_escape(line) in render_markdown(shown, history)
    assert line in render_html(shown, history)


def test_the_judges_rationale_is_in_its_case_row_as_text(
    summary: RunSummary, history: History
) -> None:
    """Why the pair went that way: the judge's rationale beside the verdict, escaped (it may
    quote agent text), in the Markdown and the HTML report."""
    text = render_markdown(summary, history)
    [row] = [line for line in text.splitlines() if line.startswith("| cond-zero-amount-posting |")]
    assert f"the judge: “{md_escape(clip(hostile_rationale(), 240))}”" in row
    page = render_html(summary, history)
    assert f"the judge: “{escape(clip(hostile_rationale(), 300))}”" in page
