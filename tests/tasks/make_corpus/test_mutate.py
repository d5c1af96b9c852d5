"""`bughunt corpus mutate` against the real engine: fresh cases the target's own suite kills."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from bughunt.models import BugCategory
from cli import app
from corpus import load_corpus
from tasks.classify import classify_corpus
from tasks.make_corpus import MutateSettings, Verdict, mutate_target
from tasks.sandbox.trees import apply_patch
from tests.conftest import ROOT

pytestmark = pytest.mark.docker

DEMO = ROOT / "corpus" / "demo"
SUITE = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]


@pytest.mark.usefixtures("sandbox_image")
def test_the_demo_target_gives_forty_cases_in_all_seven_categories(
    tmp_path: Path, run_id: str
) -> None:
    """At least 40 kept cases covering every category; each one's patch applies, its label is
    the classifier's, the written corpus loads with every case, and the counts add up."""
    out = tmp_path / "mutants"
    seen: list[tuple[int, int, int]] = []
    summary = mutate_target(
        DEMO / "target",
        SUITE,
        out=out,
        settings=MutateSettings(max_cases=40, seed=3, workers=2, suite_timeout_s=60),
        agents_from=DEMO,
        run_id=run_id,
        progress=lambda kept, wanted, tried, _counts: seen.append((kept, wanted, tried)),
    )
    assert summary.kept == 40 and len(summary.cases) == 40
    assert set(summary.per_category) == set(BugCategory)
    assert sum(summary.verdicts.values()) == summary.tried == len(seen)
    assert summary.verdicts[Verdict.KILLED] + summary.verdicts[Verdict.HANGING] >= 40
    assert seen[-1][0] == 40 and all(w == 40 for _, w, _ in seen)

    corpus = load_corpus(out)
    assert corpus.rejected == [] and len(corpus.cases) == 40
    result = classify_corpus(corpus)
    assert result.rejected == []
    assert all(c.matches_expected for c in result.cases), [
        (c.case_id, c.category, c.expected_category) for c in result.cases if not c.matches_expected
    ]
    (target,) = corpus.targets
    for case in corpus.cases:
        apply_patch(target.path, case.patch, file=case.case_id)  # raises if it does not apply
        assert case.case.title and "changed to" not in case.case.title  # a symptom only
        assert case.case.hints and not case.case.hints[0].startswith("tests/")
    assert {a.name for a in corpus.config.agents} >= {"baseline", "candidate"}


def _mutate(target: Path, out: Path, *extra: str) -> Result:
    """``bughunt corpus mutate`` on ``target`` into ``out``, the demo's agents, pytest's suite."""
    return CliRunner().invoke(
        app,
        [
            *("corpus", "mutate", "--target", str(target), "--out", str(out)),
            *("--test-command", "python3 -m pytest -q -p no:cacheprovider tests"),
            *("--agents-from", str(DEMO), *extra),
        ],
    )


@pytest.mark.usefixtures("sandbox_image")
def test_the_command_refuses_a_target_whose_suite_does_not_run_before_anything_is_written(
    tmp_path: Path,
) -> None:
    """A suite that does not run on the clean tree (it cannot be collected): exit 2, one line
    naming the target, nothing written. (A suite with failing tests runs: they are known
    failures, tests/tasks/sandbox/test_real_suites.py.)"""
    target = tmp_path / "target"
    (target / "tests").mkdir(parents=True)
    (target / "tests" / "test_x.py").write_text(
        "import no_such_module\n\n\ndef test_x():\n    pass\n"
    )
    (target / "mod.py").write_text("def f(a, b):\n    return a < b\n")
    out = tmp_path / "out"
    result = _mutate(target, out)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(target) in lines[0] and "clean tree" in lines[0]
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.usefixtures("sandbox_image")
def test_the_command_writes_a_small_corpus_and_a_json_summary(tmp_path: Path) -> None:
    """Two comparison cases from a tiny target: exit 0, the summary as JSON, cases on disk."""
    target = tmp_path / "target"
    (target / "tests").mkdir(parents=True)
    (target / "mod.py").write_text(
        "def less(a, b):\n    return a < b\n\n\ndef same(a, b):\n    return a == b\n"
    )
    (target / "tests" / "test_mod.py").write_text(
        "from mod import less, same\n\n\ndef test_less():\n    assert less(1, 2)\n"
        "    assert not less(2, 2)\n\n\ndef test_same():\n    assert same(1, 1)\n"
        "    assert not same(1, 2)\n"
    )
    (target / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    out = tmp_path / "out"
    result = _mutate(target, out, "--json", "--max-cases", "2", "--category", "comparison_operator")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["kept"] == 2 and summary["per_category"] == {"comparison_operator": 2}
    assert sorted(p.name for p in (out / "cases").iterdir()) == sorted(summary["cases"])


@pytest.mark.usefixtures("sandbox_image")
def test_a_suite_that_kills_no_mutant_writes_no_case_and_says_why(tmp_path: Path) -> None:
    """Tests that never touch the code: every mutant is equivalent, exit 1, one stderr line
    naming the target and its test command."""
    target = tmp_path / "target"
    (target / "tests").mkdir(parents=True)
    (target / "mod.py").write_text("def less(a, b):\n    return a < b\n")
    (target / "tests" / "test_mod.py").write_text("def test_nothing():\n    assert True\n")
    (target / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    out = tmp_path / "out"
    result = _mutate(target, out, "--json", "--max-cases", "2")
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout)
    assert summary["kept"] == 0 and summary["tried"] >= 1
    assert summary["verdicts"]["equivalent"] == summary["tried"]
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith(f"{target}: no case written: its suite (")
    assert f"fails on none of the {summary['tried']} mutant(s) tried" in lines[-1]
