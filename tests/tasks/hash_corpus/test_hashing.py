"""Content hashes: stable across copies, modes and mtimes; sensitive to every covered byte."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from cli import app
from corpus import hash_case, hash_corpus, hash_target, load_corpus
from ledger import Ledger
from tasks.hash_corpus import hash_loaded_corpus
from tasks.hash_corpus._hashing import diff_manifests

NAMES = st.sampled_from(["a.py", "b.py", "pkg/c.py", "pkg/d.txt", "tests/test_x.py"])
TREES = st.dictionaries(NAMES, st.binary(max_size=64), min_size=1, max_size=5)


def write_tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@settings(max_examples=100, deadline=None)
@given(TREES, st.integers(0, 0o777), st.integers(0, 2**31))
def test_same_content_same_hash_anywhere(files: dict[str, bytes], mode: int, mtime: int) -> None:
    """Two copies in different folders, with other modes and mtimes, hash the same."""
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        ta, tb = (
            write_tree(Path(a) / "one", files),
            write_tree(Path(b) / "elsewhere" / "two", files),
        )
        for path in tb.rglob("*"):
            if path.is_file():
                os.chmod(path, mode | 0o400)
                os.utime(path, (mtime, mtime))
        (tb / "__pycache__").mkdir(exist_ok=True)
        (tb / "__pycache__" / "x.pyc").write_bytes(b"cache")
        assert hash_target(ta) == hash_target(tb)


@settings(max_examples=100, deadline=None)
@given(TREES, st.data())
def test_any_byte_change_changes_the_hash(files: dict[str, bytes], data: st.DataObject) -> None:
    """Changing, adding or renaming any covered file changes the tree hash."""
    rel = data.draw(st.sampled_from(sorted(files)))
    edit = data.draw(st.sampled_from(["flip", "append", "rename", "add"]))
    changed = dict(files)
    if edit == "flip" and files[rel]:
        i = data.draw(st.integers(0, len(files[rel]) - 1))
        changed[rel] = files[rel][:i] + bytes([files[rel][i] ^ 0x01]) + files[rel][i + 1 :]
    elif edit == "rename":
        changed[rel + ".renamed"] = changed.pop(rel)
    elif edit == "add":
        changed["new/file.py"] = b""
    else:
        changed[rel] = files[rel] + b"\n"
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        assert hash_target(write_tree(Path(a), files)) != hash_target(write_tree(Path(b), changed))


def test_case_hash_covers_metadata_patch_and_target(tmp_path: Path) -> None:
    """The case hash changes with its metadata, its patch, or its target; not with toml formatting."""
    case = write_tree(
        tmp_path / "case", {"bug.patch": b"--- a/x\n+++ b/x\n", "case.toml": b'id = "x"\n'}
    )
    meta = {"case_id": "x", "title": "t", "hints": []}
    base = hash_case(meta, case, "target-1")
    (case / "case.toml").write_bytes(b'id    =   "x"   # reformatted\n')
    assert hash_case(meta, case, "target-1") == base
    assert hash_case({**meta, "title": "t2"}, case, "target-1") != base
    assert hash_case(meta, case, "target-2") != base
    (case / "bug.patch").write_bytes(b"--- a/x\n+++ b/y\n")
    assert hash_case(meta, case, "target-1") != base


@given(st.lists(st.text(min_size=1), unique=True), st.randoms(use_true_random=False))
def test_corpus_hash_ignores_case_order(hashes: list[str], rnd: object) -> None:
    """The corpus hash is over sorted case hashes."""
    shuffled = list(hashes)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert hash_corpus(shuffled) == hash_corpus(hashes)


def test_diff_lists_new_changed_removed() -> None:
    """A manifest diff sorts cases into new, changed, removed and unchanged."""
    d = diff_manifests({"a": "1", "b": "2", "c": "3"}, {"b": "2", "c": "9", "d": "4"}, "run-0")
    assert (d.new, d.changed, d.removed, d.unchanged) == (["d"], ["c"], ["a"], ["b"])


def test_demo_corpus_hash_is_stable_across_checkouts(tmp_path: Path) -> None:
    """A copy of the demo corpus elsewhere has the same corpus hash; editing one patch changes one case."""
    from tests.conftest import ROOT

    copy = tmp_path / "demo"
    shutil.copytree(ROOT / "corpus" / "demo", copy, ignore=shutil.ignore_patterns("__pycache__"))
    original = hash_loaded_corpus(load_corpus(ROOT / "corpus" / "demo"), {}, None)
    copied = hash_loaded_corpus(load_corpus(copy), {}, None)
    assert copied.corpus_hash == original.corpus_hash
    victim = sorted(copy.glob("cases/*/bug.patch"))[0]
    victim.write_bytes(victim.read_bytes() + b"\n")
    edited = hash_loaded_corpus(load_corpus(copy), original.hashes(), "run-0")
    assert edited.diff.changed == [victim.parent.name]
    assert len(edited.diff.unchanged) == len(original.cases) - 1


def test_hash_command_records_and_compares(tmp_path: Path) -> None:
    """`bughunt hash --record` stores the manifest; the next call compares against it."""
    from tests.conftest import ROOT

    runner = CliRunner()
    ledger = tmp_path / "l.duckdb"
    corpus = str(ROOT / "corpus" / "demo")
    first = runner.invoke(
        app, ["hash", "--corpus", corpus, "--ledger", str(ledger), "--record", "--json"]
    )
    assert first.exit_code == 0, first.output
    n = Ledger(ledger).query("SELECT count(*) AS n FROM corpus_manifest")[0]["n"]
    assert n > 0
    second = runner.invoke(app, ["hash", "--corpus", corpus, "--ledger", str(ledger)])
    assert f"0 new, 0 changed, 0 removed, {n} unchanged" in second.stdout
