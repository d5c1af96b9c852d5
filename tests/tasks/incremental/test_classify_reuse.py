"""Classify results reused by classify key: unchanged cases are not classified again."""

from __future__ import annotations

from pathlib import Path

import pytest

from bughunt.models import StageOutput
from corpus import Corpus, hash_target, load_corpus
from ledger import Ledger
from tasks.classify import _incremental, classify_corpus
from tasks.classify._incremental import (
    classify_incremental,
    classify_key,
    previous_classifications,
    reusable_results,
)
from tests.corpus_loader.builders import case_toml, edit, good_case, write_corpus

# Made against other content: it does not apply to the target.
BAD_PATCH = edit("pkg/calc.py", "return 1", "return 2", source="def f():\n    return 1\n")


def corpus_at(root: Path) -> Corpus:
    """A corpus of two valid cases and one whose patch does not apply."""
    cases: dict[str, tuple[str | None, bytes | None]] = {
        "one": good_case("one"),
        "two": (case_toml("two"), edit("pkg/store.py", "self.count += 1", "self.count += 2")),
        "bad": (case_toml("bad"), BAD_PATCH),
    }
    return load_corpus(write_corpus(root, cases))


def payload(corpus: Corpus) -> dict[str, object]:
    """A classify checkpoint payload, as the flow stores it."""
    return classify_incremental(corpus, None, {}).model_dump(mode="json")


def test_key_covers_patch_metadata_target_and_classifier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key changes with the patch, the metadata, the target and the classifier's code."""
    corpus = corpus_at(tmp_path / "c")
    case = corpus.cases[0]
    target = hash_target(corpus.targets[0].path)
    key = classify_key(case, target)
    assert key == classify_key(case, target)
    assert classify_key(case.model_copy(update={"patch": case.patch + b"\n"}), target) != key
    retitled = case.model_copy(update={"case": case.case.model_copy(update={"title": "T"})})
    assert classify_key(retitled, target) != key
    assert classify_key(case, "other-target") != key
    assert classify_key(case, target, max_patch_bytes=10) != key
    monkeypatch.setattr(_incremental, "CLASSIFIER_VERSION", "another classifier")
    assert classify_key(case, target) != key


def test_rerun_reuses_everything_and_gives_the_same_result(tmp_path: Path) -> None:
    """An unchanged corpus: nothing classified, everything reused, the same cases and plan."""
    corpus = corpus_at(tmp_path / "c")
    first = classify_incremental(corpus, None, {})
    assert (first.classified, first.reused) == (3, 0)
    again = classify_incremental(corpus, None, reusable_results(first.model_dump(mode="json")))
    assert (again.classified, again.reused) == (0, 3)
    fields = {"classified", "reused"}
    assert again.model_dump(exclude=fields) == first.model_dump(exclude=fields)
    plain = classify_corpus(corpus)
    assert (first.cases, first.rejected, first.plan) == (plain.cases, plain.rejected, plain.plan)


def test_changed_case_alone_is_classified_again(tmp_path: Path) -> None:
    """Editing one case's patch re-classifies that case only."""
    root = tmp_path / "c"
    earlier = reusable_results(payload(corpus_at(root)))
    (root / "cases" / "two" / "bug.patch").write_bytes(
        edit("pkg/store.py", "self.count += 1", "self.count -= 1")
    )
    result = classify_incremental(load_corpus(root), None, earlier)
    assert (result.classified, result.reused) == (1, 2)


def test_changed_target_reclassifies_every_case(tmp_path: Path) -> None:
    """A change to the shared target changes every key: nothing is reused."""
    root = tmp_path / "c"
    earlier = reusable_results(payload(corpus_at(root)))
    (root / "target" / "pkg" / "extra.py").write_text("X = 1\n")
    result = classify_incremental(load_corpus(root), None, earlier)
    assert (result.classified, result.reused) == (3, 0)


def test_loader_rejections_are_never_reused(tmp_path: Path) -> None:
    """Only validation rejections come back from a payload; a broken case.toml is reloaded."""
    root = write_corpus(tmp_path / "c", {"one": good_case("one"), "broken": ("title = 1", b"")})
    doc = payload(load_corpus(root))
    found = reusable_results(doc)
    assert [r.case_id for r in found.values()] == ["one"]
    assert reusable_results({**doc, "case_keys": None}) == {}
    assert reusable_results({"cases": [{"not": "a case"}], "case_keys": {}}) == {}


def test_previous_classifications_reads_the_latest_keyed_checkpoint(
    tmp_path: Path, ledger: Ledger
) -> None:
    """The latest classify checkpoint of the same corpus with keys answers; others are ignored."""
    corpus = corpus_at(tmp_path / "c")
    keyed = payload(corpus)
    unkeyed = {k: v for k, v in keyed.items() if k != "case_keys"}
    other = {**keyed, "corpus": "another"}
    rows = [
        StageOutput(run_id=f"r{i}", stage="classify", inputs_hash="h", payload=p, rows_written={})
        for i, p in enumerate([keyed, unkeyed, other])
    ]
    ledger.write(rows)
    found = previous_classifications(ledger, corpus.name)
    assert sorted(r.case_id for r in found.values()) == ["bad", "one", "two"]
    assert previous_classifications(ledger, "nobody") == {}
    assert previous_classifications(Ledger(tmp_path / "absent.duckdb"), corpus.name) == {}
