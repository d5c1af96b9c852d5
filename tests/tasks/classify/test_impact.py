"""PR impact: changed paths → impact classes → run plan; globs configurable from pyproject.toml."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from bughunt.errors import InputError
from bughunt.models import PipelineStage
from tasks.classify import CaseScope, ImpactConfig
from tasks.classify._impact import (
    DOCS_ONLY,
    CorpusLayout,
    ImpactClass,
    RunPlan,
    glob_match,
    load_impact_config,
    plan_for_paths,
)
from tasks.classify.patch import changed_paths

LAYOUT = CorpusLayout(
    root="corpus/demo", cases="corpus/demo/cases", case_ids=frozenset({"cmp-a", "obo-b", "ret-c"})
)
ALL = list(PipelineStage)


def _plan(*paths: str, impact: ImpactConfig | None = None) -> RunPlan:
    return plan_for_paths(paths, impact=impact or ImpactConfig(), layout=LAYOUT)


def test_one_case_folder_runs_that_case_only() -> None:
    """A change inside one case's folder runs that case, every stage."""
    plan = _plan("corpus/demo/cases/obo-b/bug.patch", "corpus/demo/cases/obo-b/case.toml")
    assert (plan.scope, plan.case_ids, plan.stages) == (CaseScope.LISTED, ["obo-b"], ALL)
    assert plan.reasons == [
        "case obo-b changed (corpus/demo/cases/obo-b/bug.patch, "
        "corpus/demo/cases/obo-b/case.toml): that case, every stage"
    ]
    assert all(p.case_id == "obo-b" and p.impact is ImpactClass.CORPUS for p in plan.paths)


def test_rename_counts_both_sides() -> None:
    """A file moved out of a case folder into docs still runs that case."""
    diff = (
        b"diff --git a/corpus/demo/cases/ret-c/notes.txt b/docs/notes.txt\n"
        b"similarity index 100%\n"
        b"rename from corpus/demo/cases/ret-c/notes.txt\nrename to docs/notes.txt\n"
    )
    plan = plan_for_paths(changed_paths(diff), impact=ImpactConfig(), layout=LAYOUT)
    assert (plan.scope, plan.case_ids) == (CaseScope.LISTED, ["ret-c"])
    assert [p.path for p in plan.paths] == ["corpus/demo/cases/ret-c/notes.txt", "docs/notes.txt"]


def test_two_case_folders_run_both() -> None:
    """Changes in two case folders list both cases, sorted."""
    plan = _plan("corpus/demo/cases/ret-c/case.toml", "corpus/demo/cases/cmp-a/bug.patch")
    assert plan.case_ids == ["cmp-a", "ret-c"]


def test_target_tree_runs_every_case() -> None:
    """A change to the shared target tree runs every case."""
    plan = _plan("corpus/demo/target/ledgerlite/ledger.py")
    assert (plan.scope, plan.stages) == (CaseScope.ALL, ALL)
    assert "corpus-wide file changed" in plan.reasons[0]


def test_a_target_tree_runs_that_target_s_cases_only() -> None:
    """With several targets, a change inside one target's tree runs its cases, every stage;
    a change to two targets runs both sets; ``corpus.toml`` still runs every case."""
    layout = LAYOUT.__class__(
        root=LAYOUT.root,
        cases=LAYOUT.cases,
        case_ids=LAYOUT.case_ids,
        targets=(
            ("ledger", "corpus/demo/target", frozenset({"cmp-a", "obo-b"})),
            ("units", "corpus/demo/targets/units", frozenset({"ret-c"})),
        ),
    )

    def plan(*paths: str) -> RunPlan:
        return plan_for_paths(paths, impact=ImpactConfig(), layout=layout)

    one = plan("corpus/demo/targets/units/units/convert.py")
    assert (one.scope, one.case_ids, one.stages) == (CaseScope.LISTED, ["ret-c"], ALL)
    assert one.reasons == [
        "target units changed (corpus/demo/targets/units/units/convert.py): its cases, every stage"
    ]
    both = plan("corpus/demo/target/x.py", "corpus/demo/targets/units/y.py")
    assert both.case_ids == ["cmp-a", "obo-b", "ret-c"] and both.scope is CaseScope.LISTED
    wide = plan("corpus/demo/corpus.toml", "corpus/demo/targets/units/y.py")
    assert wide.scope is CaseScope.ALL


def test_agent_runs_everything() -> None:
    """An agent change runs every case, every stage."""
    plan = _plan("corpus/demo/agents/candidate/agent.py")
    assert (plan.scope, plan.stages) == (CaseScope.ALL, ALL)
    assert plan.reasons[0].startswith("agent changed (corpus/demo/agents/candidate/agent.py)")


def test_judge_rescores_every_case_with_its_reports() -> None:
    """A judge config change re-scores every case, and the sandbox runs to give it reports.

    A plan that scored without the sandbox stage had no reports to judge: nothing was scored.
    """
    plan = _plan("judging/judges/sim.py", "judges.toml")
    assert plan.scope is CaseScope.ALL
    assert plan.stages == ALL
    assert PipelineStage.SANDBOX in plan.stages and PipelineStage.SCORE in plan.stages
    assert "re-score every case" in plan.reasons[0]
    assert {p.impact for p in plan.paths} == {ImpactClass.JUDGE}


def test_pipeline_runs_everything() -> None:
    """Pipeline code (tasks/, flows/, the lock file) runs everything."""
    plan = _plan("tasks/sandbox/runner.py", "requirements.lock")
    assert (plan.scope, plan.stages) == (CaseScope.ALL, ALL)
    assert plan.reasons[0].startswith("pipeline changed")


def test_docs_only_runs_nothing_and_says_so() -> None:
    """A docs-only PR plans nothing, with the fixed reason."""
    plan = _plan("docs/ledger.md", "README.md", "corpus/demo/README.md")
    assert (plan.scope, plan.case_ids, plan.stages) == (CaseScope.NONE, [], [])
    assert plan.reasons == [DOCS_ONLY]
    assert plan.describe() == "run nothing"


def test_docs_plus_case_runs_the_case() -> None:
    """Docs beside a case change: the case runs, the docs are noted as no effect."""
    plan = _plan("docs/corpus.md", "corpus/demo/cases/cmp-a/bug.patch")
    assert (plan.scope, plan.case_ids) == (CaseScope.LISTED, ["cmp-a"])
    assert plan.reasons[-1] == "docs changed (docs/corpus.md): no effect on the run"


def test_judge_plus_case_is_the_union() -> None:
    """A judge and a case change together: every case (judge) and every stage (case)."""
    plan = _plan("judges.toml", "corpus/demo/cases/cmp-a/bug.patch")
    assert (plan.scope, plan.stages) == (CaseScope.ALL, ALL)


def test_unmatched_path_is_treated_as_pipeline() -> None:
    """A path no glob matches runs everything, and the reason says it was a fail-safe."""
    plan = _plan("docs/x.md", "weird/thing.bin")
    assert (plan.scope, plan.stages) == (CaseScope.ALL, ALL)
    assert "weird/thing.bin matches no impact glob: treated as pipeline (fail safe)" in plan.reasons
    (weird,) = [p for p in plan.paths if p.path == "weird/thing.bin"]
    assert (weird.impact, weird.glob) == (ImpactClass.PIPELINE, None)


def test_removed_case_runs_nothing_for_it() -> None:
    """A case folder that is no longer in the corpus (deleted by the PR) is reported, not run."""
    plan = _plan("corpus/demo/cases/gone/bug.patch")
    assert plan.scope is CaseScope.NONE
    assert "case gone is not in the corpus" in plan.reasons[0]


def test_other_corpus_runs_nothing_here() -> None:
    """A change in another corpus does not run this one."""
    plan = _plan("corpus/other/cases/x/bug.patch")
    assert plan.scope is CaseScope.NONE
    assert "another corpus" in plan.reasons[0]


def test_unplaced_corpus_change_runs_every_case() -> None:
    """Without the corpus's place in the repo, a case change cannot be pinned: every case."""
    plan = plan_for_paths(["corpus/demo/cases/cmp-a/bug.patch"], impact=ImpactConfig(), layout=None)
    assert (plan.scope, plan.stages) == (CaseScope.ALL, ALL)


def test_empty_diff_runs_nothing() -> None:
    """A PR diff with no files plans nothing and says why."""
    plan = _plan()
    assert plan.scope is CaseScope.NONE
    assert "changes no files" in plan.reasons[0]


def test_precedence_specific_before_broad() -> None:
    """Judging code is judge; a README under tasks/ is pipeline (tasks/**), not docs (*.md)."""
    config = ImpactConfig()
    assert config.classify_path("judging/judges/x.py") == (ImpactClass.JUDGE, "judging/**")
    assert config.classify_path("tasks/README.md")[0] is ImpactClass.PIPELINE


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.md", "README.md", True),
        ("*.md", "docs/deep/x.md", True),
        ("docs/**", "docs/a/b.txt", True),
        ("docs/**", "src/docs/a.txt", False),
        ("corpus/*/cases/**", "corpus/demo/cases/x/bug.patch", True),
        ("corpus/*/cases/**", "corpus/a/b/cases/x", False),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/test_a.py", True),
        ("pkg/?.py", "pkg/a.py", True),
        ("pkg/[ab].py", "pkg/c.py", False),
        ("/pyproject.toml", "pyproject.toml", True),
        ("pyproject.toml", "sub/pyproject.toml", True),
    ],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    """`*` stays in a segment, `**` spans segments, a slash-less glob matches at any depth."""
    assert glob_match(pattern, path) is matches


def test_globs_come_from_pyproject(tmp_path: Path) -> None:
    """[tool.bughunt.impact] replaces a class's globs; the others keep their defaults."""
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\n\n[tool.bughunt.impact]\n'
        'judge = ["config/judges/**"]\ndocs = ["docs/**", "*.md", "*.txt"]\n'
    )
    config = load_impact_config(pyproject)
    assert config.judge == ("config/judges/**",)
    assert config.agent == ImpactConfig().agent
    judge = _plan("config/judges/openai.toml", impact=config)
    assert judge.stages == ALL and judge.reasons[0].startswith("judge configuration changed")
    moved = _plan("judges.toml", impact=config)  # no longer a judge glob
    assert moved.stages == ALL and not moved.reasons[0].startswith("judge configuration")
    assert _plan("NOTES.txt", impact=config).reasons == [DOCS_ONLY]


def test_missing_pyproject_or_table_gives_defaults(tmp_path: Path) -> None:
    """No file, or no impact table, means the built-in globs."""
    assert load_impact_config(None) == ImpactConfig()
    assert load_impact_config(tmp_path / "nope.toml") == ImpactConfig()
    (tmp_path / "pyproject.toml").write_text("[tool.bughunt]\nledger = 'x'\n")
    assert load_impact_config(tmp_path / "pyproject.toml") == ImpactConfig()


@pytest.mark.parametrize(
    ("body", "field", "line"),
    [
        ("[tool.bughunt.impact]\nagnet = ['x/**']\n", "tool.bughunt.impact.agnet", None),
        ("[tool.bughunt.impact]\njudge = 'x/**'\n", "tool.bughunt.impact.judge", None),
        ("[tool.bughunt.impact]\ndocs = [1]\n", "tool.bughunt.impact.docs", None),
        ("[tool.bughunt.impact]\ndocs = [\n", None, 3),
    ],
    ids=["unknown-class", "not-a-list", "not-strings", "bad-toml"],
)
def test_bad_impact_config_names_field(
    tmp_path: Path, body: str, field: str | None, line: int | None
) -> None:
    """A bad impact table is an error naming the file and the field (or line)."""
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(body)
    with pytest.raises(InputError) as info:
        load_impact_config(pyproject)
    assert info.value.file == str(pyproject)
    assert info.value.field == field
    if line is not None:
        assert info.value.line == line


PATHS = st.sampled_from(
    [
        "corpus/demo/cases/cmp-a/bug.patch",
        "corpus/demo/cases/obo-b/case.toml",
        "corpus/demo/cases/gone/bug.patch",
        "corpus/demo/target/x.py",
        "corpus/demo/agents/baseline/agent.py",
        "corpus/other/cases/y/bug.patch",
        "judging/judges/sim.py",
        "flows/nightly.py",
        "weird.bin",
        "docs/a.md",
        "README.md",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(PATHS, max_size=8), st.randoms(use_true_random=False))
def test_plan_ignores_path_order(paths: list[str], rng: random.Random) -> None:
    """Permuting the changed paths never changes the plan."""
    shuffled = list(paths)
    rng.shuffle(shuffled)
    assert _plan(*paths) == _plan(*shuffled)


@settings(max_examples=200, deadline=None)
@given(st.lists(PATHS, min_size=1, max_size=8), st.sampled_from(["docs/z.md", "CHANGELOG.md"]))
def test_adding_docs_never_changes_what_runs(paths: list[str], doc: str) -> None:
    """Adding a docs path to a PR that changes something else never changes its cases or stages."""
    if all(p.endswith(".md") for p in paths):
        return  # a docs-only PR is its own case (tested above)
    before, after = _plan(*paths), _plan(*paths, doc)
    assert (before.scope, before.case_ids, before.stages) == (
        after.scope,
        after.case_ids,
        after.stages,
    )
