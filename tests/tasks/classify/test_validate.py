"""validate_patch: hostile patches are rejected with a reason and cost nothing; good ones pass."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bughunt.errors import InputError, TerminalError
from bughunt.hashing import hash_tree
from tasks.classify.patch import FileStatus, validate_patch
from tests.corpus_loader.builders import edit, write_corpus


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """A target tree with a symlinked folder and a symlinked file pointing outside it."""
    root = write_corpus(tmp_path / "corpus")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("SECRET = 1\n")
    os.symlink(outside, root / "target" / "link")
    os.symlink(outside / "secret.py", root / "target" / "pkg" / "alias.py")
    return root / "target"


def _rejects(target: Path, data: bytes) -> InputError:
    """Validate, expecting a rejection; the target tree and its surroundings stay unchanged."""
    before = hash_tree(target.parent)
    with pytest.raises(InputError) as info:
        validate_patch(data, target, file="cases/x/bug.patch")
    assert hash_tree(target.parent) == before
    assert info.value.file == "cases/x/bug.patch"
    return info.value


def _new_file(path: str) -> bytes:
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1\n".encode()


def test_dotdot_path_is_rejected(target: Path) -> None:
    """A ../ path is rejected by name, before anything runs."""
    err = _rejects(target, b"--- a/../evil.py\n+++ b/../evil.py\n@@ -0,0 +1 @@\n+x\n")
    assert "escapes the target (..)" in err.message
    assert err.line == 1
    assert not (target.parent / "evil.py").exists()


def test_absolute_path_is_rejected(target: Path) -> None:
    """An absolute header path is rejected."""
    err = _rejects(target, b"--- /etc/hostname\n+++ /etc/hostname\n@@ -1 +1 @@\n-a\n+b\n")
    assert "absolute path '/etc/hostname'" in err.message


def test_path_through_symlinked_folder_is_rejected(target: Path) -> None:
    """A path through a symlinked folder in the target is rejected, naming the link."""
    err = _rejects(target, _new_file("link/planted.py"))
    assert "passes through a symbolic link in the target (link)" in err.message
    assert not (target.parent.parent / "outside" / "planted.py").exists()


def test_path_onto_symlinked_file_is_rejected(target: Path) -> None:
    """Editing a file that is a symlink in the target is rejected."""
    err = _rejects(target, edit("pkg/alias.py", "SECRET = 1", "SECRET = 2", source="SECRET = 1\n"))
    assert "symbolic link in the target (pkg/alias.py)" in err.message


def test_rename_lines_are_checked(target: Path) -> None:
    """A git rename whose `rename to` escapes is rejected even though its headers look safe."""
    data = (
        b"diff --git a/pkg/gone.py b/pkg/gone.py\n"
        b"similarity index 100%\nrename from pkg/gone.py\nrename to ../gone.py\n"
    )
    assert "escapes the target" in _rejects(target, data).message


def test_quoted_dotdot_is_rejected(target: Path) -> None:
    """Octal-escaped dots in a quoted name are decoded and rejected."""
    data = b'--- "a/\\056\\056/evil.py"\n+++ "b/\\056\\056/evil.py"\n@@ -0,0 +1 @@\n+x\n'
    assert "escapes the target" in _rejects(target, data).message


def test_git_folder_is_rejected(target: Path) -> None:
    """A patch writing into a .git folder is rejected."""
    assert ".git folder" in _rejects(target, _new_file(".git/config")).message


def test_missing_prefix_is_rejected(target: Path) -> None:
    """A header path without a/ or b/ is rejected: -p1 would strip a real folder."""
    data = b"--- pkg/calc.py\n+++ pkg/calc.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert "lacks the a/ or b/ prefix" in _rejects(target, data).message


def test_symlink_mode_is_rejected(target: Path) -> None:
    """A patch creating a symlink (mode 120000) is rejected."""
    data = (
        b"diff --git a/pkg/l b/pkg/l\nnew file mode 120000\n"
        b"--- /dev/null\n+++ b/pkg/l\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n"
    )
    assert "symbolic link (mode 120000)" in _rejects(target, data).message


@pytest.mark.parametrize(
    "data",
    [
        b"diff --git a/x.png b/x.png\nBinary files a/x.png and b/x.png differ\n",
        b"diff --git a/x.bin b/x.bin\nnew file mode 100644\nGIT binary patch\nliteral 3\nKcmZ?wWMTjS0RRBW\n\n",
    ],
    ids=["binary-files-differ", "git-binary-patch"],
)
def test_binary_patch_is_rejected(target: Path, data: bytes) -> None:
    """Both forms of binary patch are rejected, naming the line."""
    err = _rejects(target, data)
    assert err.message.startswith("binary patch")
    assert err.line in (2, 3)


def test_nul_byte_is_rejected(target: Path) -> None:
    """A NUL byte is binary content."""
    assert "NUL" in _rejects(target, b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\x00\n+b\n").message


def test_invalid_utf8_is_rejected_with_line(target: Path) -> None:
    """Non-UTF-8 bytes are rejected with the line they are on."""
    err = _rejects(target, b"--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1 +1 @@\n-a\n+\xc3\x28\n")
    assert "not valid UTF-8" in err.message
    assert err.line == 5


def test_malformed_diff_is_rejected(target: Path) -> None:
    """A hunk that ends early is a malformed diff."""
    err = _rejects(target, b"--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,9 +1,9 @@\n-a\n")
    assert "malformed diff" in err.message


@pytest.mark.parametrize("data", [b"", b"just some words\n"], ids=["empty", "prose"])
def test_no_files_is_rejected(target: Path, data: bytes) -> None:
    """A patch with no file in it is rejected."""
    assert "no file changes" in _rejects(target, data).message


def test_header_without_hunks_is_rejected(target: Path) -> None:
    """A patch whose only file has no hunk changes nothing and is rejected."""
    assert "no hunks" in _rejects(target, b"--- a/pkg/calc.py\n+++ b/pkg/calc.py\n").message


def test_patch_that_does_not_apply_is_rejected(target: Path) -> None:
    """Context that is not in the target fails the dry run, with git's reason."""
    data = edit("pkg/calc.py", "if x < lo:", "if x <= lo:", source="def f():\n    if x < lo:\n")
    err = _rejects(target, data)
    assert err.message.startswith("does not apply to the target")
    assert "pkg/calc.py" in err.message


def test_reversed_patch_is_rejected(target: Path) -> None:
    """An already-applied (reversed) patch is rejected, not silently reversed."""
    data = edit("pkg/calc.py", "if x <= lo:", "if x < lo:", source="if x <= lo:\n")
    assert "does not apply" in _rejects(target, data).message


def test_huge_patch_is_rejected_unparsed(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 50 MB patch is rejected by size alone: never decoded, parsed or dry-run."""

    def boom(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a huge patch must not get this far")

    monkeypatch.setattr("tasks.classify.patch._validate.decode_utf8", boom)
    monkeypatch.setattr("tasks.classify.patch._validate.parse_patch", boom)
    monkeypatch.setattr("tasks.classify.patch._validate.subprocess.run", boom)
    data = b"+" * (50 * 1024 * 1024)
    started = time.perf_counter()
    err = _rejects(target, data)
    assert time.perf_counter() - started < 0.5
    assert "over the 1048576-byte patch limit" in err.message


def test_valid_multi_file_patch_passes(target: Path) -> None:
    """Modify, rename, delete, add, and no-newline-at-end in one git patch all apply."""
    data = (
        edit("pkg/calc.py", "if x < lo:", "if x <= lo:")
        + b"diff --git a/pkg/old_name.py b/pkg/new_name.py\n"
        b"similarity index 100%\nrename from pkg/old_name.py\nrename to pkg/new_name.py\n"
        b"diff --git a/pkg/gone.py b/pkg/gone.py\ndeleted file mode 100644\n"
        b"--- a/pkg/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-GONE = True\n"
        b"diff --git a/pkg/fresh.py b/pkg/fresh.py\nnew file mode 100644\n"
        b"--- /dev/null\n+++ b/pkg/fresh.py\n@@ -0,0 +1 @@\n+FRESH = 1\n"
        b"--- a/data/nonl.txt\n+++ b/data/nonl.txt\n@@ -1,2 +1,2 @@\n first\n-last\n"
        b"\\ No newline at end of file\n+LAST\n\\ No newline at end of file\n"
    )
    before = hash_tree(target)
    patch = validate_patch(data, target)
    assert [f.status for f in patch.files] == [
        FileStatus.MODIFIED,
        FileStatus.RENAMED,
        FileStatus.DELETED,
        FileStatus.ADDED,
        FileStatus.MODIFIED,
    ]
    assert hash_tree(target) == before


def test_crlf_patch_of_crlf_file_passes(target: Path) -> None:
    """A CRLF patch against a CRLF file applies."""
    data = b"--- a/data/crlf.txt\r\n+++ b/data/crlf.txt\r\n@@ -1,3 +1,3 @@\r\n one\r\n-two\r\n+TWO\r\n three\r\n"
    assert validate_patch(data, target).files[0].path == "data/crlf.txt"


def test_lf_patch_of_crlf_file_is_rejected(target: Path) -> None:
    """Line endings are content: an LF patch does not apply to a CRLF file."""
    data = b"--- a/data/crlf.txt\n+++ b/data/crlf.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    assert "does not apply" in _rejects(target, data).message


def test_header_without_hunks_beside_a_real_change_passes(target: Path) -> None:
    """A hunk-less header next to a real change is accepted."""
    data = b"--- a/pkg/store.py\n+++ b/pkg/store.py\n" + edit(
        "pkg/calc.py", "if x < lo:", "if x <= lo:"
    )
    assert [len(f.hunks) for f in validate_patch(data, target).files] == [0, 1]


def test_missing_git_is_a_terminal_error(
    target: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without git on PATH the dry run cannot happen: a terminal error, not a case rejection."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(TerminalError) as info:
        validate_patch(edit("pkg/calc.py", "if x < lo:", "if x <= lo:"), target)
    assert not isinstance(info.value, InputError)
    assert "install git" in info.value.message


def test_hanging_dry_run_is_cut_off(
    target: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dry run that does not finish in time rejects the patch instead of hanging the stage."""
    bin_dir = tmp_path / "slow-bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    started = time.perf_counter()
    with pytest.raises(InputError) as info:
        validate_patch(edit("pkg/calc.py", "if x < lo:", "if x <= lo:"), target, apply_timeout=0.5)
    assert time.perf_counter() - started < 5
    assert "did not finish within 0.5 s" in info.value.message
