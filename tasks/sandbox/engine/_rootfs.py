"""Build the sandbox image from a Debian root filesystem (no registry needed).

``debootstrap`` makes the tree, the sandbox user is added to it, and ``tar``
streams it into the engine's import. The tree is removed afterwards, never
through a mount an interrupted debootstrap may have left in it.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
from collections import deque
from pathlib import Path
from typing import Any

import requests
from docker.errors import APIError

from tasks.sandbox.engine._errors import SandboxImageError
from tasks.sandbox.engine._recipe import ImageRecipe

log = logging.getLogger("bughunt.sandbox")


def _image_changes(recipe: ImageRecipe, tag: str) -> list[str]:
    """Dockerfile instructions ``docker import`` applies to the imported root filesystem."""
    env = [f"ENV {key}={value}" for key, value in recipe.env]
    return [
        f"USER {recipe.uid}:{recipe.gid}",
        f"WORKDIR {recipe.workdir}",
        *env,
        f"LABEL bughunt.sandbox.tag={tag}",
        'CMD ["python3"]',
    ]


def build_from_debootstrap(client: Any, recipe: ImageRecipe, tag: str) -> None:
    if os.geteuid() != 0:
        raise SandboxImageError(
            "building the sandbox image from a Debian root filesystem needs root (debootstrap); "
            "run `sudo bughunt sandbox build`, or build FROM an image with --base-image"
        )
    if shutil.which("debootstrap") is None:
        raise SandboxImageError(
            "debootstrap is not installed (`apt-get install debootstrap`); or build FROM an "
            "image with --base-image"
        )
    root = Path(tempfile.mkdtemp(prefix="bughunt-rootfs-"))
    try:
        argv = [
            "debootstrap",
            f"--variant={recipe.variant}",
            f"--include={','.join(recipe.packages)}",
            recipe.suite,
            str(root),
        ]
        log.info("debootstrap %s into %s (about a minute)", recipe.suite, root)
        _run_logged(argv, what="debootstrap")
        _add_user(root, recipe)
        log.info("importing %s into the engine as %s", root, tag)
        _import(client, root, recipe, tag)
    finally:
        _remove_tree(root)


def _run_logged(argv: list[str], *, what: str) -> None:
    """Run a build tool, its output at debug level; on failure raise with the last lines."""
    tail: deque[str] = deque(maxlen=25)
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    ) as proc:
        assert proc.stdout is not None  # set by stdout=PIPE
        for line in proc.stdout:
            tail.append(line.rstrip())
            log.debug("%s: %s", what, line.rstrip())
        code = proc.wait()
    if code != 0:
        raise SandboxImageError(f"{what} failed (exit {code}):\n" + "\n".join(tail))


def _add_user(root: Path, recipe: ImageRecipe) -> None:
    """Add the non-root user and group, its home and the work directory to the tree."""
    etc = root / "etc"
    group_line = f"{recipe.user}:x:{recipe.gid}:\n"
    passwd_line = f"{recipe.user}:x:{recipe.uid}:{recipe.gid}::{recipe.home}:/bin/sh\n"
    for name, line, ident in (
        ("group", group_line, recipe.gid),
        ("passwd", passwd_line, recipe.uid),
    ):
        path = etc / name
        text = path.read_text()
        if any(row.split(":")[2:3] == [str(ident)] for row in text.splitlines()):
            raise SandboxImageError(f"/etc/{name} of the root filesystem already has id {ident}")
        path.write_text(text + line)
    for folder in (recipe.home, recipe.workdir):
        target = root / folder.lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        os.chown(target, recipe.uid, recipe.gid)
    # Downloaded packages and index files are only build leftovers (~90 MB).
    for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for path in (root / leftover).glob("*"):
            if path.is_file():
                path.unlink()


def _import(client: Any, root: Path, recipe: ImageRecipe, tag: str) -> None:
    """Stream ``tar`` of the tree into the engine's import (no 300 MB file on disk)."""
    repository, _, version = tag.partition(":")
    # --one-file-system: never pack a mount debootstrap may have left inside the tree.
    argv = ["tar", "--numeric-owner", "--one-file-system", "-C", str(root), "-c", "."]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            client.api.import_image(
                src=proc.stdout,
                repository=repository,
                tag=version,
                changes=_image_changes(recipe, tag),
                stream_src=True,
            )
        except (APIError, requests.RequestException) as exc:
            proc.kill()
            raise SandboxImageError(f"the engine refused the image import: {exc}") from exc
        stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.wait() != 0:
            raise SandboxImageError(f"tar of the root filesystem failed: {stderr.strip()}")


def _mounts_under(root: Path) -> list[str]:
    prefix = str(root.resolve()) + "/"
    found = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            point = line.split()[4].encode().decode("unicode_escape")
            if point.startswith(prefix):
                found.append(point)
    return sorted(found, key=len, reverse=True)


def _remove_tree(root: Path) -> None:
    """Delete a build tree, first unmounting anything debootstrap left mounted in it.

    Deleting through a mount (a bind of the host's /dev or /proc left by an
    interrupted debootstrap) would delete host files, so a tree that still has
    mounts after ``umount`` is left in place and named in the log.
    """
    for point in _mounts_under(root):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)
    remaining = _mounts_under(root)
    if remaining:
        log.error("left %s in place: still mounted: %s", root, ", ".join(remaining))
        return
    shutil.rmtree(root, ignore_errors=True)
