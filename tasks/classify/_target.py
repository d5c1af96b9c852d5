"""The one rule about symbolic links in a target tree, for classify and the sandbox alike.

A target tree holds regular files and folders only: a symlink anywhere in it
is bad input, whether it leaves the target, stays inside it or points at
nothing. Why not allow the ones that stay inside: the sandbox hands a tree to
each execution as the bytes of its regular files (``tasks/sandbox/trees/_trees.py``),
so a link has no faithful copy there. Following it would bring in whatever is
behind it, outside bytes for a link that leaves (directly, by ``..``, or
through other links) and a loop for a folder link that points up; keeping it
as a link would show the tests the image's files instead of the target's.
Classify refuses what the sandbox would, by the same function
(:func:`symlink_problem`), so a corpus that passes classify never fails in
the sandbox for a link, and the reason says where the link points.
"""

from __future__ import annotations

import os
from pathlib import Path

from bughunt.errors import InputError
from corpus import TREE_EXCLUDE

_RULE = "a target tree holds only regular files and folders"


def symlink_problem(path: Path, root: Path) -> str | None:
    """Why ``path`` (under ``root``) may not be in a target tree; None when it is not a symlink.

    The reason names the link relative to ``root`` and the text it points to,
    and says whether that leads outside ``root`` (followed to the end of any
    chain of links), to nothing, round a loop, or to a file or folder inside.
    """
    if not path.is_symlink():
        return None
    rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    link = f"symlink {rel!r} -> {os.readlink(path)!r}"
    base = root.resolve()
    try:
        end = path.resolve(strict=False)
    except (OSError, RuntimeError):  # RuntimeError: a loop of links (Python < 3.13)
        return f"{link} is part of a loop of links; {_RULE}"
    if not end.is_relative_to(base):
        return f"{link} points outside the target (to {end}); {_RULE}"
    if not end.exists():
        return f"{link} points to nothing; {_RULE}"
    inside = end.relative_to(base).as_posix()
    return (
        f"{link} stays inside the target (at {inside!r}), but the sandbox copies files, "
        f"never links: {_RULE}"
    )


def check_target_tree(target: Path, *, shown_as: str | None = None) -> None:
    """Refuse a target tree holding a symlink: :class:`InputError` naming the first, by path.

    Cache folders (``TREE_EXCLUDE``) are skipped, as the sandbox skips them;
    folders are never entered through a link. The error's ``file`` is the
    link's path under ``shown_as`` (how the caller names the target, e.g.
    relative to the corpus), else relative to the target; the message says
    where it points (:func:`symlink_problem`) and how many more links there
    are. Reads only folder entries and links, never a file's content.
    """
    skip = set(TREE_EXCLUDE)
    links: list[Path] = []
    for folder, dirs, files in os.walk(target):
        dirs[:] = [d for d in dirs if d not in skip]  # a link to a folder is listed, not entered
        for name in (*dirs, *files):
            path = Path(folder) / name
            if name not in skip and path.is_symlink():
                links.append(path)
    if not links:
        return
    first = min(links, key=lambda p: p.relative_to(target).parts)
    problem = symlink_problem(first, target)
    assert problem is not None
    more = f" ({len(links) - 1} more symlink(s) in the target)" if len(links) > 1 else ""
    rel = first.relative_to(target).as_posix()
    raise InputError(problem + more, file=f"{shown_as}/{rel}" if shown_as else rel)
