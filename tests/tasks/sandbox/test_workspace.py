"""Packing a workspace into the tar an execution unpacks: pure, no engine."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from bughunt.errors import InputError
from tasks.sandbox.engine._workspace import pack_workspace


def _names(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return tar.getnames()


def test_mapping_packs_files_with_their_folders_deterministically() -> None:
    """A mapping becomes sorted folder and file entries; the same content gives the same bytes."""
    first = pack_workspace({"b.txt": "b", "pkg/a.py": b"a"}, max_bytes=100)
    second = pack_workspace({"pkg/a.py": b"a", "b.txt": "b"}, max_bytes=100)
    assert first == second
    assert _names(first) == ["pkg", "b.txt", "pkg/a.py"]


def test_folder_packs_identically_whatever_the_mtimes(tmp_path: Path) -> None:
    """A folder's tar depends on content only, not on modification times."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.py").write_text("x = 1\n")
    before = pack_workspace(tmp_path, max_bytes=100)
    os.utime(tmp_path / "sub" / "x.py", (1, 1))
    assert pack_workspace(tmp_path, max_bytes=100) == before
    assert _names(before) == ["sub", "sub/x.py"]


@pytest.mark.parametrize("name", ["/etc/passwd", "../up.py", "a/../../b", ""])
def test_mapping_paths_that_escape_are_refused(name: str) -> None:
    """Absolute, parent-relative and empty paths raise InputError naming the path."""
    with pytest.raises(InputError) as info:
        pack_workspace({name: "x"}, max_bytes=100)
    assert info.value.file == name


def test_symlink_leaving_the_folder_is_refused(tmp_path: Path) -> None:
    """A symlink pointing outside the workspace raises InputError naming the link."""
    (tmp_path / "ok.py").write_text("")
    (tmp_path / "inside").symlink_to("ok.py")
    (tmp_path / "outside").symlink_to("../../etc/passwd")
    with pytest.raises(InputError, match="outside the workspace") as info:
        pack_workspace(tmp_path, max_bytes=100)
    assert info.value.file == "outside"


def test_symlink_inside_the_folder_is_kept(tmp_path: Path) -> None:
    """A relative symlink to a file inside the workspace travels as a symlink."""
    (tmp_path / "ok.py").write_text("")
    (tmp_path / "link.py").symlink_to("ok.py")
    with tarfile.open(fileobj=io.BytesIO(pack_workspace(tmp_path, max_bytes=100))) as tar:
        assert tar.getmember("link.py").issym()


def test_special_files_are_refused(tmp_path: Path) -> None:
    """A FIFO in the workspace raises InputError naming it."""
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(InputError, match="not a regular file") as info:
        pack_workspace(tmp_path, max_bytes=100)
    assert info.value.file == "pipe"


def test_oversized_workspace_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """A workspace larger than the scratch space raises InputError."""
    (tmp_path / "big.bin").write_bytes(b"x" * 1000)
    with pytest.raises(InputError, match="over the 999-byte scratch space"):
        pack_workspace(tmp_path, max_bytes=999)


def test_a_file_is_not_a_workspace(tmp_path: Path) -> None:
    """A path that is not a folder raises InputError naming it."""
    path = tmp_path / "f.txt"
    path.write_text("")
    with pytest.raises(InputError, match="not a folder"):
        pack_workspace(path, max_bytes=100)
