"""The report with several agent samples per case: rates over cases, one row per sample,
transcripts beside each other (docs/agents.md#samples)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bughunt.models import (
    AgentMode,
    AgentVersion,
    BugReport,
    Observation,
    Reproduction,
    ReproOutcome,
    Status,
    Strategy,
    Tree,
    Verdict,
    VerdictOutcome,
)
from bughunt.stats import case_mean, wilson
from tasks.outcomes import summarize
from tasks.report import write_transcripts
from tasks.report._summary import (
    case_rows,
    reproduction_records,
    transcript_path,
    version_repro,
)
from tasks.report._write import write_outputs
from tasks.sandbox import PairResult, SandboxResult
from tests.conftest import ROOT

RECORDED = ROOT / "corpus" / "demo" / "recorded"

R, N, F, E = (
    ReproOutcome.REPRODUCED,
    ReproOutcome.NOT_REPRODUCED,
    ReproOutcome.FLAKY,
    ReproOutcome.ERROR,
)
CAND = AgentVersion(name="cand", family="fam-c", mode=AgentMode.COMMAND, command=["true"])
BASE = AgentVersion(name="base", family="fam-b", mode=AgentMode.REPLAY, reports="r")


def repro(case: str, agent: str, sample: int, outcome: ReproOutcome) -> Reproduction:
    reason = None if outcome is R else f"{outcome} on sample {sample}"
    return Reproduction(
        run_id="run",
        case_id=case,
        agent_version=agent,
        outcome=outcome,
        reason=reason,
        sample=sample,
    )


def samples(agent: str, **per_case: list[ReproOutcome]) -> list[Reproduction]:
    """``agent``'s reproduction rows: each case's outcomes in sample order."""
    return [repro(c, agent, s, o) for c, outs in per_case.items() for s, o in enumerate(outs)]


def verdict(case: str, sample: int, outcome: VerdictOutcome) -> Verdict:
    return Verdict(
        run_id="run",
        case_id=case,
        baseline="base",
        candidate="cand",
        strategy=Strategy.SWAP,
        outcome=outcome,
        sample=sample,
    )


def pair_result(case: str, agent: str, sample: int, title: str, transcript: bool) -> PairResult:
    data = (RECORDED / "baseline" / "cmp-same-day-posting.json").read_text()
    report = BugReport.model_validate_json(data).model_copy(update={"title": title})
    return PairResult(
        case_id=case,
        case_hash=None,
        agent_version=agent,
        family="fam",
        report=report,
        unusable_reason=None,
        outcome=R,
        reason=None,
        test_hash=None,
        agent_seconds=1.0,
        observations=[],
        transcript="agent output" if transcript else None,
        sample=sample,
    )


def sandbox(*pairs: PairResult) -> SandboxResult:
    return SandboxResult(image="img", image_id="sha256:" + "0" * 64, swept=[], pairs=list(pairs))


def test_rate_is_the_mean_over_cases_and_counts_count_samples() -> None:
    """Case A reproduced on both samples and case B on neither: rate ½ over two cases (the
    interval Wilson's over two cases, not four samples), counts of samples."""
    v = version_repro(CAND, samples("cand", A=[R, R], B=[N, N]))
    assert (v.rate, v.cases, v.samples) == (0.5, 2, 2)
    assert (v.reproduced, v.not_reproduced, v.flaky, v.error) == (2, 2, 0, 0)
    assert v.rate_ci == wilson(1, 2) != wilson(2, 4)


def test_each_case_weighs_the_same_whatever_its_decided_samples() -> None:
    """A case's share is over its decided samples: ½ for one reproduced of two, 1 for one
    of one decided (an error beside it), and a case with no decided sample is out of the rate."""
    v = version_repro(CAND, samples("cand", A=[R, N, E], B=[E, R, E], C=[E, E, E]))
    assert v.rate == pytest.approx(0.75)
    assert v.rate_ci == case_mean([0.5, 1.0])[1]
    assert (v.cases, v.samples, v.reproduced, v.not_reproduced, v.error) == (3, 3, 2, 1, 6)


def test_flaky_samples_bound_the_rate_per_case() -> None:
    """A flaky sample is out of the rate and in the bounds, each case's share counted apart."""
    v = version_repro(CAND, samples("cand", A=[R, F], B=[N, N]))
    assert v.rate == 0.5 and v.flaky == 1
    assert v.rate_bounds == pytest.approx((0.25, 0.5))


def test_one_sample_per_case_is_the_old_rate() -> None:
    """With one sample per case the rate is reproduced / decided with Wilson's interval."""
    rows = samples("base", **{f"c{i}": [R if i % 3 else N] for i in range(9)})
    v = version_repro(BASE, rows)
    assert (v.rate, v.rate_ci, v.samples, v.cases) == (6 / 9, wilson(6, 9), 1, 9)


def test_transcript_of_a_later_sample_sits_beside_the_first() -> None:
    """Sample 0's transcript keeps its name; sample i's is ``<agent>.sample<i>.txt`` beside it."""
    assert transcript_path("case-1", "cand") == "transcripts/case-1/cand.txt"
    assert transcript_path("case-1", "cand", 0) == "transcripts/case-1/cand.txt"
    assert transcript_path("case-1", "cand", 1) == "transcripts/case-1/cand.sample1.txt"
    assert transcript_path("case-1", "cand", 12) == "transcripts/case-1/cand.sample12.txt"


def test_each_sample_transcript_is_written_to_its_own_file(tmp_path: Path) -> None:
    """Two samples of one agent write two transcript files, the later one saying its sample."""
    written = write_transcripts(
        [pair_result("a", "cand", s, f"t{s}", transcript=True) for s in (0, 1)], tmp_path
    )
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == [
        "transcripts/a/cand.sample1.txt",
        "transcripts/a/cand.txt",
    ]
    text = (tmp_path / "transcripts/a/cand.sample1.txt").read_text()
    assert text.startswith("agent cand on case a (sample 1)")


def test_case_rows_one_per_case_sample() -> None:
    """Two candidate samples against a replay baseline: two rows per case with their sample,
    the baseline's one result, title and transcript shown in both, each candidate sample its
    own; a sample without a verdict is unscored."""
    reps = samples("base", a=[R], b=[N]) + samples("cand", a=[R, N], b=[E, R])
    box = sandbox(
        pair_result("a", "base", 0, "base a", transcript=True),
        pair_result("a", "cand", 0, "cand a0", transcript=True),
        pair_result("a", "cand", 1, "cand a1", transcript=True),
    )
    verdicts = [verdict("a", 0, VerdictOutcome.CANDIDATE), verdict("a", 1, VerdictOutcome.TIE)]
    verdicts.append(verdict("b", 0, VerdictOutcome.BASELINE))
    rows = case_rows(["a", "b"], {}, reps, box, verdicts, "base", "cand")
    assert [(r.case_id, r.sample) for r in rows] == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert [(r.baseline_status, r.candidate_status) for r in rows] == [
        (R, R),
        (R, N),
        (N, E),
        (N, R),
    ]
    assert [r.verdict for r in rows] == ["candidate", "tie", "baseline", "unscored"]
    assert rows[3].verdict_reason == "not judged in this run"
    assert rows[2].candidate_reason == "error on sample 0"
    a0, a1 = rows[0], rows[1]
    assert a0.baseline_title == a1.baseline_title == "base a"
    assert (a0.candidate_title, a1.candidate_title) == ("cand a0", "cand a1")
    assert a0.baseline_transcript == a1.baseline_transcript == "transcripts/a/base.txt"
    assert a0.candidate_transcript == "transcripts/a/cand.txt"
    assert a1.candidate_transcript == "transcripts/a/cand.sample1.txt"
    assert rows[2].candidate_transcript is None


def test_case_rows_without_samples_have_no_sample() -> None:
    """A run with one sample per case has one row per case, its ``sample`` None."""
    reps = samples("base", a=[R], b=[N]) + samples("cand", a=[N], b=[R])
    rows = case_rows(["a", "b"], {}, reps, None, [], "base", "cand")
    assert [(r.case_id, r.sample) for r in rows] == [("a", None), ("b", None)]


def test_a_verdict_of_a_later_sample_makes_sample_rows() -> None:
    """Verdicts alone (no reproduction row of a later sample) still give a row per sample."""
    reps = samples("base", a=[R]) + samples("cand", a=[R])
    verdicts = [verdict("a", 0, VerdictOutcome.TIE), verdict("a", 1, VerdictOutcome.CANDIDATE)]
    rows = case_rows(["a"], {}, reps, None, verdicts, "base", "cand")
    assert [(r.sample, r.verdict, r.candidate_status) for r in rows] == [
        (0, "tie", R),
        (1, "candidate", R),
    ]


def test_samples_are_distinct_outcome_identities() -> None:
    """Two samples of one case with different outcomes are two identities, never one
    disputed identity: the case is mixed, not disputed."""
    records = reproduction_records(samples("cand", a=[R, N]))
    assert [r.record_id for r in records] == ["run/a/cand", "run/a/cand/s1"]
    assert len({r.observation_id for r in records}) == 2
    s = summarize(records)
    assert s.disputed == [] and s.cases.disputed == 0
    assert s.cases.mixed == 1 and s.observations.kept == 2 and s.observations.replays == 0


def test_a_missing_sample_of_a_sampled_side_is_not_run() -> None:
    """A side with several samples stands in for none it lacks: its missing sample 1 is shown
    as not run, never as sample 0's result (only a one-sample replay side stands for all)."""
    reps = [*samples("base", a=[R, R, R]), repro("a", "cand", 0, R), repro("a", "cand", 2, N)]
    rows = case_rows(["a"], {}, reps, None, [], "base", "cand")
    assert (rows[1].sample, rows[1].candidate_status, rows[1].candidate_reason) == (
        1,
        E,
        "not run",
    )


def test_outputs_of_a_pair_list_every_execution_in_order(tmp_path: Path) -> None:
    """A pair's outputs file has its outcome and one block per execution, in tree, rewrite and
    repeat order, each with status, exit code and output; a pair that never ran has none."""
    obs = [
        Observation(
            observation_id=f"o{i}",
            tree=tree,
            rewrite=rewrite,
            repeat=repeat,
            status=status,
            exit_code=code,
            duration_s=0.5,
            output=f"<b>{tree}/{rewrite}/{repeat}</b>",
        )
        for i, (tree, rewrite, repeat, status, code) in enumerate(
            [
                (Tree.CLEAN, None, 1, Status.PASS, 0),
                (Tree.BUGGY, 7, 0, Status.FAIL, 1),
                (Tree.BUGGY, None, 0, Status.FAIL, 1),
                (Tree.CLEAN, None, 0, Status.PASS, 0),
            ]
        )
    ]
    ran = pair_result("a", "cand", 1, "t", transcript=False).model_copy(
        update={"observations": obs, "test_hash": "abc"}
    )
    never = pair_result("b", "cand", 0, "t", transcript=False)
    written = write_outputs([ran, never], tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in written] == ["outputs/a/cand.sample1.txt"]
    text = written[0].read_text()
    assert text.startswith("reproduction test of cand on case a (sample 1)\noutcome: reproduced\n")
    heads = [line for line in text.splitlines() if line.startswith("--- ")]
    assert heads == [
        "--- buggy, repeat 0: fail, exit 1, 0.5s ---",
        "--- buggy, rewrite 7, repeat 0: fail, exit 1, 0.5s ---",
        "--- clean, repeat 0: pass, exit 0, 0.5s ---",
        "--- clean, repeat 1: pass, exit 0, 0.5s ---",
    ]
    assert "<b>clean/None/1</b>" in text  # plain text, as the test printed it
    rows = case_rows(["a", "b"], {}, [], sandbox(ran, never), [], "base", "cand")
    assert [(r.case_id, r.sample, r.candidate_outputs) for r in rows] == [
        ("a", 0, None),
        ("a", 1, "outputs/a/cand.sample1.txt"),
        ("b", 0, None),
        ("b", 1, None),
    ]
