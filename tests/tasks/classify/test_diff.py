"""parse_patch and changed_paths on real-world-shaped diffs."""

from __future__ import annotations

import pytest

from bughunt.errors import InputError
from tasks.classify.patch import FileStatus, changed_paths, parse_patch
from tasks.classify.patch._diff import language_of, unquote_name

GIT_PATCH = b"""\
From 1234 Mon Sep 17 00:00:00 2001
Subject: [PATCH] inject a bug

diff --git a/pkg/calc.py b/pkg/calc.py
index 1111111..2222222 100644
--- a/pkg/calc.py
+++ b/pkg/calc.py
@@ -1,5 +1,5 @@
 def clamp(x, lo, hi):
-    if x < lo:
+    if x <= lo:
         return lo
     if x > hi:
         return hi
@@ -9,5 +9,5 @@ def clamp(x, lo, hi):
 def total(items):
     result = 0
-    for i in range(len(items)):
+    for i in range(len(items) - 1):
         result += items[i]
     return result
diff --git a/pkg/old_name.py b/pkg/new_name.py
similarity index 100%
rename from pkg/old_name.py
rename to pkg/new_name.py
diff --git a/pkg/gone.py b/pkg/gone.py
deleted file mode 100644
index 3333333..0000000
--- a/pkg/gone.py
+++ /dev/null
@@ -1 +0,0 @@
-GONE = True
diff --git a/pkg/fresh.py b/pkg/fresh.py
new file mode 100644
index 0000000..4444444
--- /dev/null
+++ b/pkg/fresh.py
@@ -0,0 +1,2 @@
+FRESH = True
+MORE = 1
diff --git a/data/nonl.txt b/data/nonl.txt
--- a/data/nonl.txt
+++ b/data/nonl.txt
@@ -1,2 +1,2 @@
 first
-last
\\ No newline at end of file
+LAST
\\ No newline at end of file
--
2.47.0
"""


def test_git_patch_files_statuses_and_counts() -> None:
    """Several files: modified (two hunks), renamed, deleted, added, no-newline; counts add up."""
    patch = parse_patch(GIT_PATCH, file="bug.patch")
    by_path = {f.path: f for f in patch.files}
    assert list(by_path) == [
        "pkg/calc.py",
        "pkg/new_name.py",
        "pkg/gone.py",
        "pkg/fresh.py",
        "data/nonl.txt",
    ]
    assert by_path["pkg/calc.py"].status is FileStatus.MODIFIED
    assert len(by_path["pkg/calc.py"].hunks) == 2
    renamed = by_path["pkg/new_name.py"]
    assert renamed.status is FileStatus.RENAMED
    assert renamed.old_path == "pkg/old_name.py"
    assert renamed.hunks == ()
    assert renamed.extra_paths == ("pkg/old_name.py", "pkg/new_name.py")
    assert by_path["pkg/gone.py"].status is FileStatus.DELETED
    assert by_path["pkg/gone.py"].new_path is None
    assert by_path["pkg/fresh.py"].status is FileStatus.ADDED
    assert by_path["pkg/fresh.py"].old_path is None
    nonl = by_path["data/nonl.txt"]
    assert [(line.kind, line.text) for line in nonl.hunks[0].lines] == [
        (" ", "first"),
        ("-", "last"),
        ("+", "LAST"),
    ]
    assert (patch.hunks, patch.added, patch.removed) == (5, 5, 4)


def test_line_numbers_point_into_files_and_patch() -> None:
    """Each line knows its old/new file line and its line in the patch file."""
    patch = parse_patch(GIT_PATCH)
    removed = next(line for line in patch.files[0].hunks[1].lines if line.kind == "-")
    assert (removed.old_line, removed.new_line, removed.diff_line) == (11, None, 18)
    assert patch.files[0].header_line == 4


def test_crlf_patch_keeps_names_and_text_clean() -> None:
    """A CRLF patch parses with no CR in file names or line text."""
    data = b"--- a/data/crlf.txt\r\n+++ b/data/crlf.txt\r\n@@ -1,3 +1,3 @@\r\n one\r\n-two\r\n+TWO\r\n three\r\n"
    (fp,) = parse_patch(data).files
    assert (fp.raw_old, fp.raw_new, fp.path) == (
        "a/data/crlf.txt",
        "b/data/crlf.txt",
        "data/crlf.txt",
    )
    assert [line.text for line in fp.hunks[0].lines] == ["one", "two", "TWO", "three"]


def test_header_with_no_hunks_parses_to_an_empty_file() -> None:
    """A file header with no hunks is a file with zero hunks, not an error."""
    data = b"--- a/pkg/calc.py\n+++ b/pkg/calc.py\n--- a/pkg/store.py\n+++ b/pkg/store.py\n@@ -1 +1 @@\n-a\n+b\n"
    patch = parse_patch(data)
    assert [len(f.hunks) for f in patch.files] == [0, 1]


def test_malformed_hunk_names_the_line() -> None:
    """A hunk shorter than its header says is a parse error with the patch line."""
    data = b"--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n"
    with pytest.raises(InputError) as info:
        parse_patch(data, file="cases/x/bug.patch")
    assert info.value.file == "cases/x/bug.patch"
    assert info.value.line == 6
    assert "malformed diff" in info.value.message


def test_invalid_utf8_names_the_line() -> None:
    """Bytes that are not UTF-8 are an error naming the line of the first bad byte."""
    with pytest.raises(InputError) as info:
        parse_patch(b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-\xff\n+b\n")
    assert info.value.line == 4
    assert "0xff" in info.value.message


def test_quoted_names_are_unquoted() -> None:
    """Git's C-style quoted names are decoded, octal escapes as UTF-8 bytes."""
    assert unquote_name('"a/caf\\303\\251 x.py"') == "a/café x.py"
    assert unquote_name('"a/\\056\\056/evil"') == "a/../evil"
    assert unquote_name("b/plain.py\r") == "b/plain.py"


@pytest.mark.parametrize(
    ("path", "language"),
    [("a/b.py", "python"), ("x.TS", "typescript"), ("Makefile", "unknown"), ("c.h", "c")],
)
def test_language_from_extension(path: str, language: str) -> None:
    """The language comes from the file extension, case-insensitively."""
    assert language_of(path) == language


def test_changed_paths_counts_both_sides_of_a_rename() -> None:
    """A PR's paths: both rename sides, deleted and added files, never /dev/null."""
    assert changed_paths(GIT_PATCH) == [
        "data/nonl.txt",
        "pkg/calc.py",
        "pkg/fresh.py",
        "pkg/gone.py",
        "pkg/new_name.py",
        "pkg/old_name.py",
    ]


def test_changed_paths_accepts_binary_and_latin1() -> None:
    """A PR diff with a binary file and non-UTF-8 content still yields its paths."""
    data = (
        b"diff --git a/docs/logo.png b/docs/logo.png\n"
        b"Binary files a/docs/logo.png and b/docs/logo.png differ\n"
        b"--- a/docs/notes.txt\n+++ b/docs/notes.txt\n@@ -1 +1 @@\n-caf\xe9\n+cafe\n"
    )
    assert changed_paths(data) == ["docs/logo.png", "docs/notes.txt"]


def test_changed_paths_refuses_oversized_diff_unparsed() -> None:
    """A PR diff over the limit is an error before it is decoded."""
    with pytest.raises(InputError) as info:
        changed_paths(b"\xff" * 101, max_bytes=100)
    assert "over the 100-byte limit" in info.value.message


@pytest.mark.parametrize(
    "data",
    [b"", b"\n\n", b"just some words about a change\n", b"index 1234..5678 100644\n"],
    ids=["empty", "blank", "prose", "no-header"],
)
def test_changed_paths_refuses_what_is_not_a_diff(data: bytes) -> None:
    """An empty file or prose holds no diff: bad input naming the file, never "no change"."""
    with pytest.raises(InputError) as info:
        changed_paths(data, file="pr-7.diff")
    assert info.value.file == "pr-7.diff"
    assert "holds no unified diff" in info.value.message
