"""Several targets per corpus: the ``[[targets]]`` form, each case on its own target, hashes
that cover a case's own target only, per-target deadlines. Pure: no engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from bughunt.errors import InputError
from corpus import LEGACY_TARGET, load_corpus
from flows import RunParams
from flows.params import DEFAULT_TEST_TIMEOUT_S
from tasks.classify._incremental import classify_keys
from tasks.hash_corpus._stage import hash_loaded_corpus, manifest_rows
from tests.corpus_loader.builders import CONFIG, case_toml

INLINE = 'target = "target"\ncases = "cases"\ntest_command = ["python3", "-m", "pytest", "-q"]\n'
TWO = """cases = "cases"

[[targets]]
name = "calc"
path = "calc"
test_command = ["python3", "-m", "pytest", "-q"]
test_timeout_s = 5

[[targets]]
name = "units"
path = "units"
test_command = ["python3", "-m", "pytest", "-q", "tests"]
oracle = ["tests/*"]
[targets.environment]
debian = ["jq"]
requirements = "units/requirements.txt"
"""
PATCH = """--- a/{file}
+++ b/{file}
@@ -1 +1 @@
-VALUE = 1
+VALUE = 2
"""


def _write(root: Path, config: str, cases: dict[str, str | None]) -> Path:
    """A corpus at ``root``: two target trees, and a case per entry naming its target (or none)."""
    for name in ("calc", "units"):
        (root / name).mkdir(parents=True)
        (root / name / f"{name}.py").write_text("VALUE = 1\n")
    (root / "units" / "requirements.txt").write_text("")
    for agent in ("agents/baseline", "recorded/candidate"):
        (root / agent).mkdir(parents=True)
    (root / "corpus.toml").write_text(CONFIG.replace(INLINE, config))
    for case_id, target in cases.items():
        folder = root / "cases" / case_id
        folder.mkdir(parents=True)
        text = case_toml(case_id) + (f'target = "{target}"\n' if target else "")
        (folder / "case.toml").write_text(text)
        (folder / "bug.patch").write_text(PATCH.format(file=f"{target or 'calc'}.py"))
    return root


def test_each_case_names_its_target_and_paths_are_absolute(tmp_path: Path) -> None:
    """``[[targets]]`` load in order; a case knows its target; folders and the requirements
    file are absolute inside the corpus."""
    root = _write(tmp_path / "c", TWO, {"a": "calc", "b": "units", "c": "units"})
    corpus = load_corpus(root)
    assert [t.name for t in corpus.targets] == ["calc", "units"]
    calc, units = corpus.targets
    assert calc.path == (root / "calc").resolve() and calc.test_timeout_s == 5
    assert units.environment is not None and units.oracle == ["tests/*"]
    assert units.environment.requirements == str((root / "units/requirements.txt").resolve())
    assert {c.case_id: c.target for c in corpus.cases} == {"a": "calc", "b": "units", "c": "units"}
    assert corpus.target_of(corpus.cases[1]) == units
    assert [c.case_id for c in corpus.cases_of("units")] == ["b", "c"]
    assert corpus.config.target is None and corpus.config.test_command is None


def test_the_inline_form_is_one_target_named_target(tmp_path: Path) -> None:
    """A corpus written the old way has one target, and every case is on it."""
    root = _write(tmp_path / "c", INLINE.replace('"target"', '"calc"', 1), {"a": None})
    corpus = load_corpus(root)
    (target,) = corpus.targets
    assert target.name == LEGACY_TARGET and target.path == (root / "calc").resolve()
    assert target.test_command == ["python3", "-m", "pytest", "-q"]
    assert corpus.cases[0].target == LEGACY_TARGET


@pytest.mark.parametrize(
    "config,field,words",
    [
        (INLINE.replace('cases = "cases"\n', "") + TWO, "target", "not both"),
        ('cases = "cases"\n', "target", "needs [[targets]]"),
        (TWO.replace('name = "units"', 'name = "calc"'), "targets[1].name", "duplicate target"),
        (TWO.replace('path = "units"', 'path = "../x"'), "targets[1].path", "escapes"),
        (
            TWO.replace('requirements = "units/', 'requirements = "nowhere/'),
            "targets[1].environment.requirements",
            "does not exist",
        ),
        (TWO.replace('name = "units"', 'name = "../units"'), "targets[1].name", "should match"),
    ],
)
def test_bad_targets_are_one_error_naming_the_field(
    tmp_path: Path, config: str, field: str, words: str
) -> None:
    """Both forms, neither, a repeated name, a folder out of the corpus, a missing
    requirements file, a name that is no name: refused, naming the field."""
    root = _write(tmp_path / "c", config, {})
    with pytest.raises(InputError) as caught:
        load_corpus(root)
    assert caught.value.field == field and words in caught.value.message
    assert caught.value.file == str(root / "corpus.toml")


def test_a_case_on_no_known_target_is_rejected_alone(tmp_path: Path) -> None:
    """An unknown target, or none named among several: the case is rejected with the field
    ``target`` and the known names; the others load."""
    root = _write(tmp_path / "c", TWO, {"good": "calc", "lost": "elsewhere", "unnamed": None})
    corpus = load_corpus(root)
    assert [c.case_id for c in corpus.cases] == ["good"]
    why = {r.case_id: (r.field, r.reason) for r in corpus.rejected}
    assert why["lost"] == (
        "target",
        "names unknown target 'elsewhere'; the corpus has: calc, units",
    )
    assert why["unnamed"] == ("target", "names no target, and the corpus has 2: calc, units")


def test_a_case_hash_covers_its_own_target_only(tmp_path: Path) -> None:
    """Editing one target's tree, or its environment's recipe, changes its cases' hashes and
    nothing else; the manifest names each case's own target hash."""
    root = _write(tmp_path / "c", TWO, {"a": "calc", "b": "units"})

    def hashes() -> tuple[dict[str, str], dict[str, str]]:
        result = hash_loaded_corpus(load_corpus(root), {}, None)
        return result.hashes(), result.target_hashes

    cases, targets = hashes()
    (root / "units" / "units.py").write_text("VALUE = 1  # edited\n")
    after_tree, targets_tree = hashes()
    assert after_tree["a"] == cases["a"] and after_tree["b"] != cases["b"]
    assert targets_tree["calc"] == targets["calc"] and targets_tree["units"] != targets["units"]
    (root / "units" / "requirements.txt").write_text("# a recipe change\n")
    after_env, _ = hashes()
    assert after_env["a"] == cases["a"] and after_env["b"] != after_tree["b"]
    result = hash_loaded_corpus(load_corpus(root), {}, None)
    rows = {r.case_id: r.target_hash for r in manifest_rows(result, "r1")}
    assert rows == {"a": result.target_hashes["calc"], "b": result.target_hashes["units"]}


def test_classify_keys_cover_each_case_s_own_target(tmp_path: Path) -> None:
    """A classify result is reused unless its own target changed."""
    from corpus import HashCache

    root = _write(tmp_path / "c", TWO, {"a": "calc", "b": "units"})
    before = classify_keys(load_corpus(root), HashCache())
    (root / "calc" / "calc.py").write_text("VALUE = 1\n\n")
    after = classify_keys(load_corpus(root), HashCache())
    assert after["a"] != before["a"] and after["b"] == before["b"]


def test_each_target_keeps_its_own_deadline_unless_the_run_sets_one(tmp_path: Path) -> None:
    """Targets that disagree keep their own per-test deadlines; ``--test-timeout`` wins for all."""
    root = _write(tmp_path / "c", TWO, {"a": "calc"})
    corpus = load_corpus(root)
    own = RunParams(corpus=str(root)).sandbox_settings(corpus)
    assert own.timeout_for("calc") == 5 and own.timeout_for("units") == DEFAULT_TEST_TIMEOUT_S
    forced = RunParams(corpus=str(root), test_timeout_s=7).sandbox_settings(corpus)
    assert forced.timeout_for("calc") == forced.timeout_for("units") == 7
    alike = _write(tmp_path / "d", TWO.replace("test_timeout_s = 5\n", ""), {"a": "calc"})
    same = RunParams(corpus=str(alike)).sandbox_settings(load_corpus(alike))
    assert same.target_timeouts == {} and same.test_timeout_s == DEFAULT_TEST_TIMEOUT_S
