"""The run's answer: which version is better, by how much, how sure — first in every output."""

from __future__ import annotations

import pytest

from bughunt.models import ReproOutcome
from bughunt.sequential import WITH_REPLACEMENT, Side, bound
from tasks.report import RunSummary
from tasks.report._answer import answer_of
from tasks.report._comment import pr_comment
from tasks.report._counts import headline_lines
from tasks.report._entry import closing_message
from tasks.report._escape import md_escape
from tasks.report._model import Better, CaseRow
from tasks.report._render import render_html, render_markdown
from tasks.report.runs import History
from tasks.score.pairs import SPLIT_TIE

R, N, E = ReproOutcome.REPRODUCED, ReproOutcome.NOT_REPRODUCED, ReproOutcome.ERROR


def row(i: int, verdict: str, baseline: ReproOutcome, candidate: ReproOutcome) -> CaseRow:
    return CaseRow(
        case_id=f"c{i:03d}",
        category=None,
        baseline_status=baseline,
        baseline_reason=None,
        candidate_status=candidate,
        candidate_reason=None,
        baseline_title=None,
        candidate_title=None,
        verdict=verdict,
        verdict_reason=None,
    )


def test_a_clear_judge_preference_names_the_better_version_with_its_interval() -> None:
    """Forty cases, the candidate's report preferred on two thirds and tied on the rest, the
    same bugs reproduced: the candidate is better, by the mean pair score and its interval;
    the reproduction difference is shown, undecided."""
    rows = [row(i, "candidate" if i % 3 else "tie", R, R) for i in range(40)]
    a = answer_of(rows)
    assert a.better is Better.CANDIDATE and a.more_cases is None
    assert a.score is not None and a.score.cases == 40
    values = [1.0 if i % 3 else 0.5 for i in range(40)]
    assert a.score.mean == pytest.approx(sum(values) / 40)
    assert a.score.low == bound(values, population=WITH_REPLACEMENT, alpha=0.025, side=Side.ABOVE)
    assert a.score.low > 0.5
    assert a.sentence.startswith("The candidate is better: the judge prefers its reports — ")
    assert f"mean pair score {a.score.mean:.2f} (95% interval {a.score.low:.2f}–" in a.sentence
    assert "reproduction rate difference +0%" in a.sentence


def test_reproduction_alone_can_decide_and_the_baseline_can_be_better() -> None:
    """Even verdicts, but the candidate's tests reproduce nothing the baseline's reproduce:
    the baseline is better, because it reproduces more bugs."""
    rows = [row(i, "candidate" if i % 2 else "baseline", R, N) for i in range(30)]
    a = answer_of(rows)
    assert a.better is Better.BASELINE
    assert a.reproduction is not None and a.reproduction.mean == -1.0
    assert a.reproduction.high < 0
    assert a.sentence.startswith("The baseline is better: it reproduces more bugs — ")


def test_measures_that_disagree_are_a_conflict_never_a_winner() -> None:
    """The judge prefers the baseline on every pair, the candidate alone reproduces every bug:
    the answer says the evidence conflicts and names both sides."""
    a = answer_of([row(i, "baseline", N, R) for i in range(20)])
    assert a.better is Better.CONFLICT
    assert "the judge prefers the baseline's reports, but the candidate reproduces more" in (
        a.sentence
    )


def test_too_little_evidence_says_so_and_how_many_more_cases_would_decide() -> None:
    """Eighteen cases split evenly with a few reproductions lost: undecided, with about how
    many more cases would decide at the rates seen; a run that sits exactly on no difference
    says no number would."""
    rows = [row(i, "candidate" if i % 2 else "baseline", R, R if i % 5 else N) for i in range(18)]
    a = answer_of(rows)
    assert a.better is Better.UNDECIDED
    assert a.more_cases is not None and a.more_cases > 0
    assert f"about {a.more_cases} more cases would show which is better at the rates seen" in (
        a.sentence
    )
    even = answer_of([row(i, "tie", R, R) for i in range(10)])
    assert even.better is Better.UNDECIDED and even.more_cases is None
    assert "no number of further cases would show which is better" in even.sentence


def test_unjudged_and_undecided_cases_are_left_out_and_samples_average() -> None:
    """Unscored pairs, ties only because the calls split, and cases either version could not
    decide have no value; a case's samples count once, as their mean; nothing at all is no
    evidence."""
    rows = [row(0, "candidate", R, R), row(0, "baseline", R, E), row(1, "unscored", E, R)]
    split = row(2, "tie", E, E).model_copy(update={"verdict_reason": SPLIT_TIE})
    a = answer_of([*rows, split])
    assert a.score is not None and (a.score.cases, a.score.mean) == (1, 0.5)
    assert "over 1 judged cases (1 tie only because the judge's calls split, no verdict)" in (
        a.sentence
    )
    assert a.reproduction is not None and a.reproduction.cases == 1
    none = answer_of([row(0, "unscored", E, E)])
    assert none.better is Better.NO_EVIDENCE and none.score is None
    assert none.sentence.startswith("No evidence")


def test_every_output_opens_with_the_answer(summary: RunSummary, history: History) -> None:
    """The CLI's lines, the Markdown and HTML reports and the PR comment say the answer first;
    the flow run's state message (which shows its first words only) its short form first."""
    assert summary.answer is not None
    sentence = summary.answer.sentence
    assert headline_lines(summary)[0] == sentence
    markdown = render_markdown(summary, history).splitlines()
    assert markdown[2] == f"**{md_escape(sentence)}**"
    html = render_html(summary, history)
    assert html.index('id="answer"') < html.index('id="headline"')
    comment = pr_comment(summary, None, "report.html")
    assert comment.split("\n\n")[1] == f"**{md_escape(sentence)}**"
    assert closing_message(summary).startswith(summary.answer.short + "; ")
    assert summary.answer.short.startswith("no decision (pair score ")


def test_the_judge_beside_the_sandbox_counts_only_pairs_the_sandbox_did_not_separate() -> None:
    """Pairs where one version reproduced and the other did not are left out (there the judge
    mostly repeats the sandbox); on the rest, the candidate's wins of the decisive pairs with
    a Wilson interval, shown in the CLI's lines and the reports."""
    rows = [
        row(0, "candidate", R, R),
        row(1, "baseline", N, N),
        row(2, "candidate", R, R),
        row(3, "tie", R, R),
        row(4, "candidate", N, R),  # separated: left out
        row(5, "baseline", R, E),  # undecided: left out
    ]
    u = answer_of(rows).unseparated
    assert u is not None
    assert (u.pairs, u.candidate_wins, u.decisive) == (4, 2, 3)
    assert u.win_rate == pytest.approx(2 / 3) and u.win_rate_ci is not None
    assert answer_of([row(0, "candidate", N, R)]).unseparated is None


def test_the_judge_beside_the_sandbox_is_in_every_report(
    summary: RunSummary, history: History
) -> None:
    """The fixture night's figure appears in the CLI's lines, report.md and report.html."""
    from tasks.report._format import unseparated_sentence

    assert summary.answer is not None and summary.answer.unseparated is not None
    sentence = unseparated_sentence(summary.answer.unseparated)
    assert sentence in headline_lines(summary)
    assert sentence in render_markdown(summary, history)  # numbers and fixed words: unescaped
    assert "Beside the sandbox" in render_html(summary, history)
