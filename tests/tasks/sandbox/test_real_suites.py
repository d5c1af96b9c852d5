"""Real suites stay whole: a contract per case, test files never rewritten, rewrites that step
down instead of refusing, and `corpus mutate` keeping only what `corpus check` keeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from bughunt.models import ContractStatus, RewriteLevel
from corpus import load_corpus
from tasks.make_corpus import MutateSettings, mutate_target
from tasks.sandbox import SandboxSettings, check_corpus
from tests.conftest import ROOT
from tests.fixtures.real_suites import CASES, SUITE, write_corpus, write_target

pytestmark = pytest.mark.docker

DATABASE_TEST = "tests/test_book.py::test_reads_the_real_database"


@pytest.mark.usefixtures("sandbox_image")
def test_every_real_case_keeps_the_contract_at_the_level_its_target_allows(
    tmp_path: Path, run_id: str
) -> None:
    """Order-dependent tests and an environment-dependent known failure refuse no case; the
    tracer's suite, which reads source text, takes its rewrites down to keep-text."""
    corpus = load_corpus(write_corpus(tmp_path / "corpus"))
    checks = check_corpus(corpus, {}, run_id=run_id, settings=SandboxSettings())
    assert {c.case_id: c.status for c in checks} == dict.fromkeys(CASES, ContractStatus.OK), [
        (c.case_id, c.reason) for c in checks
    ]
    levels = {c.case_id: c.rewrite_level for c in checks}
    known = {c.case_id: c.known_failures for c in checks}
    for case_id, (target, *_rest) in CASES.items():
        if target == "acct":
            assert levels[case_id] is RewriteLevel.FULL
            assert known[case_id] == [DATABASE_TEST]
        else:
            assert levels[case_id] is RewriteLevel.KEEP_TEXT
            assert known[case_id] == []
    assert all(DATABASE_TEST not in c.failing_tests and c.failing_tests for c in checks)


@pytest.mark.parametrize("target", ["acct", "tracelet"])
@pytest.mark.usefixtures("sandbox_image")
def test_mutate_keeps_only_what_the_corpus_check_keeps(
    target: str, tmp_path: Path, run_id: str
) -> None:
    """Mutants of a real target, written as a corpus, all pass `corpus check` as written."""
    tree = write_target(tmp_path / "targets", target)
    out = tmp_path / "mutants"
    summary = mutate_target(
        tree,
        SUITE,
        out=out,
        settings=MutateSettings(max_cases=3, seed=1, workers=2, suite_timeout_s=60),
        agents_from=ROOT / "corpus" / "demo",
        run_id=run_id,
    )
    assert summary.kept == 3
    corpus = load_corpus(out)
    checks = check_corpus(corpus, {}, run_id=run_id, settings=SandboxSettings())
    assert len(checks) == 3
    assert all(c.status is ContractStatus.OK for c in checks), [
        (c.case_id, c.reason) for c in checks
    ]
