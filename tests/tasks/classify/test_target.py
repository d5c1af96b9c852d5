"""A target tree holding a symlink is bad input at classify, by the rule the sandbox applies."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from bughunt.errors import InputError
from corpus import load_corpus
from tasks.classify import check_target_tree, classify_corpus
from tasks.classify._incremental import classify_incremental
from tasks.sandbox.trees import read_tree
from tests.corpus_loader.builders import case_toml, good_case, write_corpus


def _corpus(tmp_path: Path) -> Path:
    """Two good cases and one the loader rejects, beside a folder outside the corpus."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("SECRET = 1\n")
    cases: dict[str, tuple[str | None, bytes | None]] = {
        "cmp": good_case("cmp"),
        "obo": (case_toml("obo"), good_case("obo")[1]),
        "bad-toml": ("title = \n", b""),
    }
    return write_corpus(tmp_path / "c", cases)


Links = Callable[[Path, Path], None]
"""Puts links into a target (first argument) next to the folder ``outside`` (second)."""


def _absolute(target: Path, outside: Path) -> None:
    os.symlink(outside / "secret.py", target / "pkg" / "secret.py")


def _dotdot(target: Path, _outside: Path) -> None:
    os.symlink("../../../outside/secret.py", target / "pkg" / "secret.py")


def _chain(target: Path, _outside: Path) -> None:
    os.symlink("b.py", target / "pkg" / "a.py")  # stays inside, to a link that leaves
    os.symlink("../../../outside/secret.py", target / "pkg" / "b.py")


def _folder(target: Path, outside: Path) -> None:
    os.symlink(outside, target / "vendor")


def _dangling(target: Path, _outside: Path) -> None:
    os.symlink("missing.py", target / "pkg" / "secret.py")


def _inside(target: Path, _outside: Path) -> None:
    os.symlink("calc.py", target / "pkg" / "secret.py")


def _loop(target: Path, _outside: Path) -> None:
    os.symlink("b.py", target / "pkg" / "a.py")
    os.symlink("a.py", target / "pkg" / "b.py")


# (links, the link named, what its reason says)
KINDS: dict[str, tuple[Links, str, str]] = {
    "absolute": (_absolute, "pkg/secret.py", "points outside the target (to {outside}/secret.py)"),
    "dotdot": (_dotdot, "pkg/secret.py", "points outside the target (to {outside}/secret.py)"),
    "chain": (_chain, "pkg/a.py", "points outside the target (to {outside}/secret.py)"),
    "folder": (_folder, "vendor", "points outside the target (to {outside})"),
    "dangling": (_dangling, "pkg/secret.py", "points to nothing"),
    "inside": (_inside, "pkg/secret.py", "stays inside the target (at 'pkg/calc.py')"),
    "loop": (_loop, "pkg/a.py", "is part of a loop of links"),
}


def _linked(tmp_path: Path, kind: str) -> tuple[Path, str, str]:
    """A corpus whose target holds a link of ``kind``; the link's name and what is said of it."""
    links, name, says = KINDS[kind]
    root = _corpus(tmp_path)
    links(root / "target", tmp_path / "outside")
    return root, name, says


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_target_with_a_symlink_rejects_every_case_naming_the_link(
    tmp_path: Path, kind: str
) -> None:
    """Every case is rejected naming the link and where it points; the loader's rejection stays."""
    root, name, says = _linked(tmp_path, kind)
    result = classify_corpus(load_corpus(root))
    assert result.cases == [] and result.planned_case_ids == []
    reasons = {r.case_id: r for r in result.rejected}
    assert set(reasons) == {"cmp", "obo", "bad-toml"}
    assert reasons["bad-toml"].stage == "load"
    for case_id in ("cmp", "obo"):
        rejected = reasons[case_id]
        assert rejected.stage == "validate"
        assert rejected.file == f"target/{name}"
        assert f"symlink {name!r} -> {os.readlink(root / 'target' / name)!r}" in rejected.reason
        assert says.format(outside=tmp_path / "outside") in rejected.reason
        assert "a target tree holds only regular files and folders" in rejected.reason


@pytest.mark.parametrize("kind", list(KINDS))
def test_classify_and_the_sandbox_refuse_the_same_link_for_the_same_reason(
    tmp_path: Path, kind: str
) -> None:
    """One rule: what classify says of a target is what reading it for the sandbox raises."""
    root, name, _says = _linked(tmp_path, kind)
    with pytest.raises(InputError) as classify:
        check_target_tree(root / "target")
    with pytest.raises(InputError) as sandbox:
        read_tree(root / "target")
    assert classify.value.file == name
    assert classify.value.message.split(" (1 more")[0] == sandbox.value.message


def test_the_stage_entry_rejects_the_cases_of_such_a_target(tmp_path: Path) -> None:
    """classify_incremental (the stage's body) hashes the linked target and rejects its cases."""
    root = _corpus(tmp_path)
    _dotdot(root / "target", tmp_path / "outside")
    result = classify_incremental(load_corpus(root), None, {})
    assert result.cases == [] and result.classified == 2
    assert {r.case_id for r in result.rejected if r.stage == "validate"} == {"cmp", "obo"}
    assert set(result.case_keys) == {"cmp", "obo"}


def test_a_target_without_links_is_classified_and_links_in_caches_are_ignored(
    tmp_path: Path,
) -> None:
    """Links inside cache folders the sandbox skips do not count; the cases are labelled."""
    root = _corpus(tmp_path)
    cache = root / "target" / "pkg" / "__pycache__"
    cache.mkdir()
    os.symlink(tmp_path / "outside", cache / "escape")
    check_target_tree(root / "target")
    assert "pkg/calc.py" in read_tree(root / "target")
    result = classify_corpus(load_corpus(root))
    assert [c.case_id for c in result.cases] == ["cmp", "obo"]
    assert [r.case_id for r in result.rejected] == ["bad-toml"]


def test_every_link_is_counted_and_the_first_by_path_named(tmp_path: Path) -> None:
    """With several links the first in path order is named, and the others counted."""
    root = _corpus(tmp_path)
    _folder(root / "target", tmp_path / "outside")
    _chain(root / "target", tmp_path / "outside")
    with pytest.raises(InputError) as info:
        check_target_tree(root / "target", shown_as="target")
    assert info.value.file == "target/pkg/a.py"
    assert info.value.message.endswith("(2 more symlink(s) in the target)")
