"""`corpus import` with hostile instances: each is checked before anything it names is read,
skipped with its reason, and the corpus is written whole or not at all."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from bughunt.errors import InputError
from bughunt.safeio import TREE_FILE_LIMIT
from corpus import load_corpus
from tasks.make_corpus import import_swebench
from tests.tasks.make_corpus.test_swebench import (
    CALC,
    DEMO,
    _git,
    _instance,
    _jsonl,
    repos,
)

__all__ = ["repos"]  # the fixture, shared with test_swebench

pytestmark = pytest.mark.timeout(60)  # the code before the fix hung on a FIFO or /dev/zero


def _patch(path: str, old: str, new: str) -> str:
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{old}\n+{new}\n"
    )


def _import(tmp_path: Path, folder: Path, rows: list[Any]) -> dict[int, str]:
    """Import ``rows`` after one good instance; the skipped reasons by line."""
    file = _jsonl(tmp_path / "instances.jsonl", rows)
    summary = import_swebench(file, repos=folder, out=tmp_path / "out", agents_from=DEMO)
    assert summary.cases == ["acme__calc-1"], summary
    assert [c.case_id for c in load_corpus(tmp_path / "out").cases] == ["acme__calc-1"]
    return {s.line: s.reason for s in summary.skipped}


def test_paths_of_the_fix_that_leave_the_tree_are_refused_before_any_read(
    repos: tuple[Path, str], tmp_path: Path
) -> None:
    """`..` to /dev/zero or a FIFO, an absolute path: skipped by classify's path checks."""
    folder, commit = repos
    os.mkfifo(tmp_path / "fifo")
    up = "../" * 12
    rows = [
        _instance(commit),
        _instance(commit, instance_id="z", patch=_patch(f"{up}dev/zero", "a", "b")),
        _instance(commit, instance_id="f", patch=_patch(f"{up}{tmp_path}/fifo", "a", "b")),
        _instance(commit, instance_id="p", patch=_patch("/etc/passwd", "a", "b")),
    ]
    reasons = _import(tmp_path, folder, rows)
    assert sorted(reasons) == [2, 3, 4]
    assert "escapes the target (..)" in reasons[2] and reasons[2].startswith("patch:")
    assert "escapes the target (..)" in reasons[3]
    assert "passwd" in reasons[4] and "prefix" in reasons[4]


def test_an_absolute_test_patch_path_is_refused(repos: tuple[Path, str], tmp_path: Path) -> None:
    """`git apply -p1` takes `/tests/x.py` as `tests/x.py`, but the oracle would list the
    absolute path and not hold the test file out of the agent's tree: skipped."""
    folder, commit = repos
    absolute = "--- /tests/test_neg.py\n+++ /tests/test_neg.py\n@@ -1 +1 @@\n"
    absolute += "-from calc import neg\n+from calc import neg  # noqa\n"
    rows = [_instance(commit), _instance(commit, instance_id="t", test_patch=absolute)]
    reasons = _import(tmp_path, folder, rows)
    assert reasons[2].startswith("test_patch:") and "absolute path" in reasons[2], reasons


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("FAIL_TO_PASS", ["-p", "tests/test_add.py::test_add"], "not a pytest node id"),
        ("FAIL_TO_PASS", ["--rootdir=/"], "not a pytest node id"),
        ("PASS_TO_PASS", ["../../x.py::test"], "outside the repository"),
        ("FAIL_TO_PASS", ["/etc/x.py::test"], "outside the repository"),
        ("repo", "../acme__calc", "a part is . or .."),
        ("repo", "acme/..", "a part is . or .."),
    ],
)
def test_options_and_escaping_names_are_refused(
    repos: tuple[Path, str], tmp_path: Path, field: str, value: Any, said: str
) -> None:
    """A pytest option as a test, a test file outside the tree, a repo with `..`: skipped."""
    folder, commit = repos
    rows = [_instance(commit), _instance(commit, instance_id="x", **{field: value})]
    reasons = _import(tmp_path, folder, rows)
    assert reasons[2].startswith(f"field {field}") and said in reasons[2], reasons


def test_an_id_that_is_no_case_id_is_skipped(repos: tuple[Path, str], tmp_path: Path) -> None:
    """`_evil` cannot be a case id: skipped with the reason, the others imported."""
    folder, commit = repos
    reasons = _import(tmp_path, folder, [_instance(commit), _instance(commit, instance_id="_evil")])
    assert "not a usable case" in reasons[2] and "case_id" in reasons[2]


def _commit(repo: Path, make: Any) -> str:
    make(repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "more")
    return _git(repo, "rev-parse", "HEAD")


def test_a_file_absent_at_the_base_commit_is_skipped(
    repos: tuple[Path, str], tmp_path: Path
) -> None:
    """The fix modifies a file the base commit lacks: skipped, nothing read."""
    folder, commit = repos
    rows = [
        _instance(commit),
        _instance(commit, instance_id="a", patch=_patch("gone.py", "a", "b")),
    ]
    reasons = _import(tmp_path, folder, rows)
    assert "gone.py" in reasons[2] and reasons[2].startswith("patch")


def test_a_symlink_out_of_the_repository_is_skipped(
    repos: tuple[Path, str], tmp_path: Path
) -> None:
    """A base tree holding a link that leaves it: skipped with the link named, not followed."""
    folder, commit = repos
    repo = folder / "acme__calc"
    linked = _commit(repo, lambda r: (r / "leak.py").symlink_to("../../../../../../etc/passwd"))
    rows = [
        _instance(commit),
        _instance(linked, instance_id="l", patch=_patch("leak.py", "a", "b")),
    ]
    reasons = _import(tmp_path, folder, rows)
    assert "leak.py" in reasons[2], reasons
    assert not (tmp_path / "out" / "targets" / "l").exists()


def test_a_latin1_file_is_skipped(repos: tuple[Path, str], tmp_path: Path) -> None:
    """A fixed file that is not UTF-8 cannot become a bug.patch: skipped with the file named."""
    folder, commit = repos
    repo = folder / "acme__calc"
    latin = _commit(repo, lambda r: (r / "calc.py").write_bytes(CALC.encode() + b"# caf\xe9\n"))
    rows = [_instance(commit), _instance(latin, instance_id="l1")]
    reasons = _import(tmp_path, folder, rows)
    assert "calc.py" in reasons[2] and "UTF-8" in reasons[2], reasons


def _agents_with_a_fifo(tmp_path: Path) -> Path:
    """A copy of the demo corpus with a FIFO among the first command agent's files."""
    source = tmp_path / "agents-src"
    shutil.copytree(DEMO, source, ignore=shutil.ignore_patterns("__pycache__"))
    for agent in (p for p in (source / "agents").iterdir() if p.is_dir()):
        os.mkfifo(agent / "pipe")
    return source


def test_a_failure_while_writing_leaves_no_half_written_corpus(
    repos: tuple[Path, str], tmp_path: Path
) -> None:
    """The agents' copy refuses a FIFO after the targets were written: --out stays as it was
    (an empty folder) and no temporary folder is left beside it."""
    folder, commit = repos
    source = _agents_with_a_fifo(tmp_path)
    out = tmp_path / "dest" / "out"
    out.mkdir(parents=True)
    file = _jsonl(tmp_path / "instances.jsonl", [_instance(commit)])
    with pytest.raises(InputError, match="is a FIFO"):
        import_swebench(file, repos=folder, out=out, agents_from=source)
    assert list(out.iterdir()) == []
    assert [p.name for p in out.parent.iterdir()] == ["out"]


def test_the_import_file_may_not_be_a_fifo(repos: tuple[Path, str], tmp_path: Path) -> None:
    """The instances file is read only when it is a regular file."""
    folder, _ = repos
    os.mkfifo(tmp_path / "instances.jsonl")
    with pytest.raises(InputError, match="is a FIFO"):
        import_swebench(
            tmp_path / "instances.jsonl", repos=folder, out=tmp_path / "out", agents_from=DEMO
        )
    assert not (tmp_path / "out").exists()


def test_a_tree_with_a_file_over_the_limit_is_skipped_whole(
    repos: tuple[Path, str], tmp_path: Path
) -> None:
    """A base tree file over the tree limit stops its copy: the instance is skipped and no part
    of its target is left in the corpus."""
    folder, commit = repos
    repo = folder / "acme__calc"
    big = _commit(repo, lambda r: (r / "data.bin").write_bytes(b"\0" * (TREE_FILE_LIMIT + 1)))
    reasons = _import(tmp_path, folder, [_instance(commit), _instance(big, instance_id="big")])
    assert "data.bin" in reasons[2] and "limit" in reasons[2], reasons
    assert sorted(p.name for p in (tmp_path / "out" / "targets").iterdir()) == ["acme__calc-1"]
