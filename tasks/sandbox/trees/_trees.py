"""Buggy and clean trees of a case, read into memory for the sandbox's workspaces.

The clean tree is the corpus's target; the buggy tree is the target with the
case's patch applied by ``git apply`` (the same tool classify's dry run uses,
so "applies" means one thing). Both are small; they are read once per case.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from bughunt.errors import InputError
from bughunt.safeio import TREE_FILE_LIMIT, copy_tree, read_input, special_entry
from corpus import TREE_EXCLUDE
from tasks.classify import symlink_problem
from tasks.classify.patch import git_apply_argv, git_apply_env

Files = dict[str, bytes]


def read_tree(root: Path) -> Files:
    """Every regular file under ``root`` (caches excluded) by relative POSIX path.

    A symlink anywhere in it raises :class:`InputError` naming it and where it
    points: a tree handed to the sandbox holds only plain files, by the rule
    classify applies to the target too (:func:`tasks.classify.symlink_problem`).
    A FIFO, a device or a socket, and a file over
    :data:`~bughunt.safeio.TREE_FILE_LIMIT` bytes, raise :class:`InputError`
    naming it; each file is checked on its opened descriptor
    (:func:`bughunt.safeio.read_input`), so a swap after the walk is refused too.
    """
    files: Files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if set(rel.parts) & set(TREE_EXCLUDE):
            continue
        problem = symlink_problem(path, root)
        if problem is not None:
            raise InputError(problem, file=str(path))
        special = special_entry(path)
        if special is not None:
            raise InputError(special, file=str(path))
        if not path.is_dir():
            files[rel.as_posix()] = read_input(
                path, limit=TREE_FILE_LIMIT, what="a tree's file", follow=False
            )
    return files


def sharing(tree: Files, base: Files) -> Files:
    """``tree``, each file whose bytes equal ``base``'s at the same path holding ``base``'s bytes
    object: a case's buggy tree then costs the files its patch changed, not a copy of the target
    (a stage holds every planned case's buggy tree; thousands of cases of a large target would
    otherwise hold thousands of copies of it)."""
    return {
        name: (same if (same := base.get(name)) == data else data) for name, data in tree.items()
    }


def apply_patch(
    target: Path, patch: bytes, *, file: str, timeout_s: float = 30.0, base: Files | None = None
) -> Files:
    """The target with ``patch`` applied, as files; :class:`InputError` naming ``file`` if it fails.

    ``base``: the target's own files, already read (:func:`read_tree`); the unchanged files of
    the result are then ``base``'s bytes objects (:func:`sharing`).
    """
    with tempfile.TemporaryDirectory(prefix="bughunt-tree-") as tmp:
        work = Path(tmp) / "tree"
        copy_tree(target, work, exclude=TREE_EXCLUDE)
        proc = subprocess.run(
            git_apply_argv(check=False),
            cwd=work,
            input=patch,
            capture_output=True,
            env=git_apply_env(work),
            timeout=timeout_s,
            check=False,
        )
        if proc.returncode != 0:
            detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise InputError(
                "patch does not apply: "
                + (detail[0] if detail else f"git apply exit {proc.returncode}"),
                file=file,
            )
        files = read_tree(work)
    return files if base is None else sharing(files, base)


def prefixed(files: Files, prefix: str) -> Files:
    """``files`` moved under ``prefix/``."""
    return {f"{prefix}/{name}": data for name, data in files.items()}
