"""Hashed pip requirements files (docs/sandbox.md, "Agent environments"): checked, never run.

An environment's requirements must say exactly which files to install: every
requirement a project pinned with ``==`` and carrying its ``--hash``es, and
nothing that reaches outside the corpus (``-r``, ``-e``, paths, URLs).
"""

from __future__ import annotations

import re

from bughunt.errors import InputError

_HASH = re.compile(r"(?:^|\s)--hash[=\s]+[A-Za-z0-9]+:[0-9a-fA-F]+")
_PINNED = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?\s*===?\s*[A-Za-z0-9.+!_-]+\s*(;.*)?$"
)
_INDEX_OPTIONS = ("-i", "--index-url", "--extra-index-url")


def check_requirements(data: bytes, *, file: str, field: str) -> list[str]:
    """The requirement lines of a hashed requirements file, or InputError naming file:line.

    Every requirement must be a name pinned with ``==`` and carry at least
    one ``--hash``; the only options allowed are index URLs (no ``-r``,
    ``-e``, paths or URLs, which could reach outside the corpus).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 ({exc.reason})", file=file, field=field) from None
    found: list[str] = []
    for number, line in _logical_lines(text):
        if line.startswith("-"):
            if line.split("=", 1)[0].split()[0] not in _INDEX_OPTIONS:
                raise InputError(
                    f"option {line.split()[0]!r} is not allowed: only pinned, hashed requirements "
                    "and index URLs",
                    file=file,
                    line=number,
                    field=field,
                )
            continue
        spec = re.split(r"\s--hash", " " + line, maxsplit=1)[0].strip()
        if not _HASH.search(line):
            raise InputError(
                f"requirement {spec!r} has no --hash (write the file with "
                "`pip-compile --generate-hashes`)",
                file=file,
                line=number,
                field=field,
            )
        if not _PINNED.match(spec):
            raise InputError(
                f"requirement {spec!r} is not a project pinned with == (no paths or URLs)",
                file=file,
                line=number,
                field=field,
            )
        found.append(spec)
    return found


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each logical line: continuations joined, comments cut."""
    lines: list[tuple[int, str]] = []
    start, parts = 0, list[str]()
    for number, raw in enumerate(text.splitlines(), start=1):
        if not parts:
            start = number
        stripped = raw.rstrip()
        if stripped.endswith("\\"):
            parts.append(stripped[:-1])
            continue
        parts.append(stripped)
        line = re.sub(r"(^|\s)#.*$", "", " ".join(parts)).strip()
        parts = []
        if line:
            lines.append((start, line))
    return lines
