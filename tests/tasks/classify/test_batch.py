"""classify_corpus: one call labels good cases, rejects bad ones with reasons, and plans the run."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from bughunt.hashing import hash_tree
from bughunt.models import BugCategory, Case, PipelineStage
from corpus import LoadedCase, RejectedCase, load_corpus
from tasks.classify import CaseScope, classify_corpus
from tasks.classify._batch import CaseClassification, classify_case
from tests.corpus_loader.builders import case_toml, edit, good_case, write_corpus

HOSTILE: dict[str, bytes] = {
    "dotdot": b"--- a/../evil.py\n+++ b/../evil.py\n@@ -0,0 +1 @@\n+x\n",
    "absolute": b"--- /etc/hostname\n+++ /etc/hostname\n@@ -1 +1 @@\n-a\n+b\n",
    "binary": b"diff --git a/x.png b/x.png\nBinary files a/x.png and b/x.png differ\n",
    "not-utf8": b"--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1 +1 @@\n-\xff\n+b\n",
    "no-apply": edit("pkg/calc.py", "return x", "return lo", source="    return x\n"),
}


def _corpus(tmp_path: Path) -> Path:
    cases: dict[str, tuple[str | None, bytes | None]] = {
        case_id: (case_toml(case_id), data) for case_id, data in HOSTILE.items()
    }
    cases["cmp"] = good_case("cmp")
    cases["state"] = (
        case_toml("state", expected="return_value"),
        edit("pkg/store.py", "self.count += 1", "", source=None),
    )
    cases["bad-toml"] = ("title = \n", b"")
    return write_corpus(tmp_path / "c", cases)


def test_good_cases_are_classified_beside_hostile_ones(tmp_path: Path) -> None:
    """Every hostile patch is rejected with its reason; the good cases are still labelled."""
    result = classify_corpus(load_corpus(_corpus(tmp_path)))
    assert [c.case_id for c in result.cases] == ["cmp", "state"]
    cmp, state = result.cases
    assert (cmp.category, cmp.matches_expected) == (BugCategory.COMPARISON_OPERATOR, True)
    assert (cmp.hunks, cmp.added, cmp.removed, cmp.languages) == (1, 1, 1, ["python"])
    assert cmp.files[0].path == "pkg/calc.py"
    assert cmp.evidence is not None and cmp.evidence.line == 2
    assert (state.category, state.matches_expected) == (BugCategory.STATE_MUTATION, False)
    reasons = {r.case_id: r for r in result.rejected}
    assert set(reasons) == {*HOSTILE, "bad-toml"}
    assert reasons["bad-toml"].stage == "load"
    assert "escapes the target" in reasons["dotdot"].reason
    assert "absolute path" in reasons["absolute"].reason
    assert reasons["binary"].reason.startswith("binary patch")
    assert "not valid UTF-8" in reasons["not-utf8"].reason
    assert reasons["no-apply"].reason.startswith("does not apply")
    assert all(reasons[c].stage == "validate" for c in HOSTILE)
    assert reasons["dotdot"].describe().startswith("cases/dotdot/bug.patch:1: ")


def test_nightly_plan_runs_every_valid_case(tmp_path: Path) -> None:
    """Without a PR diff the plan is everything; rejected cases are never planned."""
    result = classify_corpus(load_corpus(_corpus(tmp_path)))
    assert result.plan.scope is CaseScope.ALL
    assert result.plan.stages == list(PipelineStage)
    assert result.planned_case_ids == ["cmp", "state"]


def _git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    write_corpus(repo / "corpus" / "mini", {"cmp": good_case("cmp"), "obo": good_case("obo")})
    (repo / ".git").mkdir()  # marks the repository root for find_repo_root
    return repo


def test_pr_diff_plans_one_case(tmp_path: Path) -> None:
    """A PR touching one case folder plans that case only, found from the repository root."""
    repo = _git_repo(tmp_path)
    diff = (
        b"--- a/corpus/mini/cases/obo/case.toml\n+++ b/corpus/mini/cases/obo/case.toml\n"
        b"@@ -1 +1 @@\n-a\n+b\n"
    )
    result = classify_corpus(load_corpus(repo / "corpus" / "mini"), diff)
    assert (result.plan.scope, result.plan.case_ids) == (CaseScope.LISTED, ["obo"])
    assert result.planned_case_ids == ["obo"]
    assert [c.case_id for c in result.cases] == ["cmp", "obo"]


def test_pr_plan_reads_globs_from_repository_pyproject(tmp_path: Path) -> None:
    """The repository's pyproject.toml impact globs decide the plan."""
    repo = _git_repo(tmp_path)
    (repo / "pyproject.toml").write_text('[tool.bughunt.impact]\ndocs = ["notes/**"]\n')
    diff = b"--- a/notes/today.txt\n+++ b/notes/today.txt\n@@ -1 +1 @@\n-a\n+b\n"
    result = classify_corpus(load_corpus(repo / "corpus" / "mini"), diff)
    assert result.plan.reasons == ["docs-only change: nothing to evaluate"]
    assert result.planned_case_ids == []


def test_planned_rejected_case_is_not_run(tmp_path: Path) -> None:
    """A PR changing a case whose patch is broken plans it, but it is not in planned_case_ids."""
    repo = tmp_path / "repo"
    write_corpus(repo / "corpus" / "mini", {"bad": (case_toml("bad"), HOSTILE["dotdot"])})
    (repo / ".git").mkdir()
    diff = b"--- a/corpus/mini/cases/bad/bug.patch\n+++ b/corpus/mini/cases/bad/bug.patch\n@@ -1 +1 @@\n-a\n+b\n"
    result = classify_corpus(load_corpus(repo / "corpus" / "mini"), diff)
    assert result.plan.case_ids == ["bad"]
    assert result.planned_case_ids == []
    assert [r.case_id for r in result.rejected] == ["bad"]


def test_result_json_has_stable_keys(tmp_path: Path) -> None:
    """The JSON form has the documented top-level keys, in order."""
    result = classify_corpus(load_corpus(_corpus(tmp_path)))
    dumped = result.model_dump(mode="json")
    assert list(dumped) == [
        "corpus",
        "corpus_root",
        "cases",
        "rejected",
        "plan",
        "planned_case_ids",
        "case_keys",
        "classified",
        "reused",
    ]
    assert list(dumped["plan"]) == ["scope", "case_ids", "stages", "reasons", "paths"]


def test_validation_never_writes_the_target(tmp_path: Path) -> None:
    """After classifying, the corpus and its surroundings are byte for byte as before (dry runs only)."""
    root = _corpus(tmp_path)
    before = hash_tree(tmp_path)
    classify_corpus(load_corpus(root))
    assert hash_tree(tmp_path) == before
    assert not (tmp_path / "evil.py").exists()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.one_of(
        st.binary(max_size=400),
        st.text(max_size=400).map(
            lambda t: ("--- a/pkg/calc.py\n+++ b/pkg/calc.py\n" + t).encode()
        ),
    )
)
def test_any_bytes_give_a_label_or_a_rejection(tmp_path: Path, data: bytes) -> None:
    """classify_case never raises on a patch's content: it labels it or rejects it with a reason."""
    root = tmp_path / "c"
    if not root.exists():
        write_corpus(root)
    case = LoadedCase(
        case=Case(case_id="x", title="x"),
        case_dir=root / "cases" / "x",
        patch_path=root / "cases" / "x" / "bug.patch",
        patch=data,
    )
    result = classify_case(case, corpus_root=root, target=root / "target")
    assert isinstance(result, CaseClassification | RejectedCase)
    if isinstance(result, RejectedCase):
        assert result.reason and result.file == "cases/x/bug.patch"
