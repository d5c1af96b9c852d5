"""bughunt.safeio: only regular files are read, never past a limit, checked on the descriptor."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from bughunt.errors import InputError
from bughunt.hashing import hash_tree
from bughunt.safeio import copy_tree, read_input, read_text_input, sha256_regular, special_file

pytestmark = pytest.mark.timeout(30)  # a FIFO opened without O_NONBLOCK blocks for ever


def _zero(path: Path) -> Path:
    """A character device of the test's own that reads as /dev/zero."""
    os.mknod(path, 0o644 | stat.S_IFCHR, os.makedev(1, 5))
    return path


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """No writer ever comes: the open does not wait, the error names the path and the kind."""
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(InputError, match="is a FIFO") as err:
        read_input(tmp_path / "pipe", what="a records file")
    assert err.value.file == str(tmp_path / "pipe")
    assert err.value.message == "cannot read a records file: it is a FIFO, not a regular file"


@pytest.mark.parametrize("where", ["own", "/dev/zero"])
def test_a_device_is_refused_unread(tmp_path: Path, where: str) -> None:
    """A zero device (ours, or the machine's) is never read: it would never end."""
    path = _zero(tmp_path / "zero.py") if where == "own" else Path(where)
    with pytest.raises(InputError, match="is a character device"):
        read_input(path)


def test_a_user_named_link_to_a_regular_file_is_read_and_to_a_device_refused(
    tmp_path: Path,
) -> None:
    """follow=True resolves once: a link to a file reads it; a link to a device is refused,
    named by the link with where it leads."""
    (tmp_path / "real.json").write_bytes(b"{}")
    (tmp_path / "good").symlink_to(tmp_path / "real.json")
    (tmp_path / "bad").symlink_to("/dev/zero")
    assert read_input(tmp_path / "good") == b"{}"
    with pytest.raises(InputError, match=r"is a character device \(a link to /dev/zero\)") as err:
        read_input(tmp_path / "bad")
    assert err.value.file == str(tmp_path / "bad")


def test_a_link_inside_a_tree_is_never_followed(tmp_path: Path) -> None:
    """follow=False refuses any symlink as the last component, even one to a regular file."""
    (tmp_path / "real").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(InputError, match="is a symbolic link"):
        read_input(tmp_path / "link", follow=False)
    with pytest.raises(InputError, match="is a symbolic link"):
        sha256_regular(tmp_path / "link")


def test_a_file_over_the_limit_is_refused_and_missing_and_folder_named(tmp_path: Path) -> None:
    """Over the limit, missing, a folder: each one line naming the path; not UTF-8 with its line."""
    (tmp_path / "big").write_bytes(b"x" * 11)
    with pytest.raises(InputError, match="11 bytes; a thing is over the 10-byte limit"):
        read_input(tmp_path / "big", limit=10, what="a thing")
    assert read_input(tmp_path / "big", limit=11) == b"x" * 11
    with pytest.raises(InputError, match="No such file or directory"):
        read_input(tmp_path / "nope")
    with pytest.raises(InputError, match="is a folder"):
        read_input(tmp_path)
    (tmp_path / "latin").write_bytes(b"ok\ncaf\xe9\n")
    with pytest.raises(InputError, match="not UTF-8") as err:
        read_text_input(tmp_path / "latin")
    assert err.value.line == 2


def test_copy_tree_keeps_files_and_links_and_refuses_a_device(tmp_path: Path) -> None:
    """Regular files and folders are copied, a link as a link (its text, unfollowed); a device
    in the tree stops the copy naming it, and nothing of /dev/zero is copied."""
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "a.py").write_text("A = 1\n")
    (src / "pkg" / "passwd").symlink_to("/etc/passwd")
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "x.pyc").write_bytes(b"\0")
    copy_tree(src, tmp_path / "dest", exclude=("__pycache__",))
    assert (tmp_path / "dest" / "pkg" / "a.py").read_text() == "A = 1\n"
    assert os.readlink(tmp_path / "dest" / "pkg" / "passwd") == "/etc/passwd"
    assert not (tmp_path / "dest" / "__pycache__").exists()
    _zero(src / "pkg" / "zero.py")
    with pytest.raises(InputError, match="is a character device") as err:
        copy_tree(src, tmp_path / "dest2")
    assert err.value.file == str(src / "pkg" / "zero.py")


def test_hashing_a_tree_refuses_a_fifo_and_a_device(tmp_path: Path) -> None:
    """Corpus hashing reads no special file: a FIFO or a device is named, not hashed or skipped."""
    (tmp_path / "a.py").write_text("x")
    before = hash_tree(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(InputError, match="is a FIFO"):
        hash_tree(tmp_path)
    os.unlink(tmp_path / "pipe")
    _zero(tmp_path / "zero.py")
    with pytest.raises(InputError, match="is a character device"):
        hash_tree(tmp_path)
    os.unlink(tmp_path / "zero.py")
    assert hash_tree(tmp_path) == before


def test_special_file_names_what_a_path_leads_to(tmp_path: Path) -> None:
    """For files another library opens by name: a FIFO, a device or a link to one is named;
    a regular file, a folder and a missing path are not."""
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link").symlink_to("/dev/zero")
    (tmp_path / "file").write_text("x")
    assert special_file(tmp_path / "pipe") == "a FIFO"
    assert special_file(tmp_path / "link") == "a character device"
    assert [special_file(tmp_path / n) for n in ("file", ".", "missing")] == [None, None, None]
