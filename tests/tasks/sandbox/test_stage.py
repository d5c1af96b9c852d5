"""The sandbox stage's decisions (pure) and a bad case costing only itself (real Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bughunt.models import ReproOutcome, Status
from corpus import load_corpus
from tasks.sandbox import SandboxSettings, decide_outcome, run_sandbox
from tests.flows.corpora import mini_corpus

P, F, E, T = Status.PASS, Status.FAIL, Status.ERROR, Status.TIMEOUT


@pytest.mark.parametrize(
    "buggy,clean,outcome,reason",
    [
        ([F, F, F], [P, P, P], ReproOutcome.REPRODUCED, None),
        ([P, P, P], [P, P, P], ReproOutcome.NOT_REPRODUCED, "the test passes on the buggy tree"),
        ([F, F, F], [F, F, F], ReproOutcome.NOT_REPRODUCED, "the test fails on the clean tree too"),
        ([F, F, F], [P, F, P], ReproOutcome.FLAKY, "clean tree: 1 fail, 2 pass"),
        ([F, T, F], [P, P, F], ReproOutcome.FLAKY, "clean tree: 1 fail, 2 pass"),
        ([T, T, T], [P, P, P], ReproOutcome.ERROR, "buggy tree: 3 timeout; clean tree: 3 pass"),
        ([E], [P], ReproOutcome.ERROR, "buggy tree: 1 error; clean tree: 1 pass"),
        ([], [], ReproOutcome.ERROR, "buggy tree: ; clean tree: "),
    ],
)
def test_decide_outcome(
    buggy: list[Status], clean: list[Status], outcome: ReproOutcome, reason: str | None
) -> None:
    """Flaky beats error beats the reproduction pattern; each with its reason."""
    assert decide_outcome(buggy, clean) == (outcome, reason)


def test_patch_that_does_not_apply_costs_only_its_case(tmp_path: Path) -> None:
    """A case whose patch no longer applies is an error per agent; the other case still runs."""
    good, bad = "cmp-withdraw-exact-balance", "state-next-id"
    root = mini_corpus(tmp_path / "repo", [good, bad])
    patch = root / "cases" / bad / "bug.patch"
    patch.write_text(patch.read_text().replace("-", "+", 3))
    corpus = load_corpus(root)
    agent = next(a for a in corpus.config.agents if a.name == "baseline-recorded")
    result = run_sandbox(
        corpus,
        case_ids=[good, bad],
        agents=[agent],
        case_hashes={},
        run_id="stage-bad-patch",
        settings=SandboxSettings(repeats=1),
    )
    by_case = {p.case_id: p for p in result.pairs}
    assert by_case[good].outcome is ReproOutcome.REPRODUCED and len(by_case[good].observations) == 2
    assert by_case[bad].outcome is ReproOutcome.ERROR and by_case[bad].observations == []
    assert (by_case[bad].reason or "").startswith("buggy tree could not be prepared: ")
