"""A unified diff as plain values: files, hunks and their lines (parsed with ``unidiff``).

Two entry points. :func:`parse_patch` reads a case's ``bug.patch`` in full
(every line, for classification). :func:`changed_paths` reads a PR diff for its
paths only, leniently (a PR may touch binary or non-UTF-8 files).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchedFile, PatchSet

from bughunt.errors import InputError

DEV_NULL = "/dev/null"

DEFAULT_MAX_PR_DIFF_BYTES = 64 * 1024 * 1024
"""Largest PR diff read for its paths (64 MiB); a PR diff is parsed for paths only."""

_LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".c": "c",
    ".h": "c",
    ".cc": "c++",
    ".cpp": "c++",
    ".cxx": "c++",
    ".hpp": "c++",
    ".cs": "c#",
    ".rb": "ruby",
    ".php": "php",
    ".sh": "shell",
    ".bash": "shell",
    ".sql": "sql",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".ini": "ini",
    ".cfg": "ini",
    ".md": "markdown",
    ".rst": "restructuredtext",
    ".txt": "text",
    ".html": "html",
    ".css": "css",
}


def language_of(path: str) -> str:
    """Language named by a path's extension (``.py`` → ``python``); ``unknown`` otherwise."""
    return _LANGUAGES.get(PurePosixPath(path).suffix.lower(), "unknown")


class FileStatus(StrEnum):
    """What a patch does to one file."""

    MODIFIED = "modified"
    ADDED = "added"
    DELETED = "deleted"
    RENAMED = "renamed"
    COPIED = "copied"


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One ``+``, ``-`` or context line of a hunk, without its line ending."""

    kind: Literal["+", "-", " "]
    text: str
    old_line: int | None
    """Line number in the file before the patch (``-`` and context lines)."""
    new_line: int | None
    """Line number in the file after the patch (``+`` and context lines)."""
    diff_line: int
    """1-based line of the patch file."""


@dataclass(frozen=True, slots=True)
class HunkPatch:
    """One ``@@`` block."""

    old_start: int
    old_length: int
    new_start: int
    new_length: int
    lines: tuple[DiffLine, ...]

    @property
    def added(self) -> int:
        """Lines added."""
        return sum(1 for line in self.lines if line.kind == "+")

    @property
    def removed(self) -> int:
        """Lines removed."""
        return sum(1 for line in self.lines if line.kind == "-")


@dataclass(frozen=True, slots=True)
class FilePatch:
    """One file of a patch.

    ``raw_old`` / ``raw_new`` are the header names as written (unquoted,
    prefix kept, ``/dev/null`` kept) so validation can check them exactly;
    ``old_path`` / ``new_path`` are relative to the target (prefix stripped),
    ``None`` on the side where the file does not exist.
    """

    raw_old: str
    raw_new: str
    old_path: str | None
    new_path: str | None
    status: FileStatus
    binary: bool
    mode: str | None
    """Git file mode from the headers (``120000`` is a symlink), when given."""
    extra_paths: tuple[str, ...]
    """Paths named by ``rename from/to`` and ``copy from/to`` lines (no prefix)."""
    header_line: int
    """1-based patch line where this file's headers start."""
    hunks: tuple[HunkPatch, ...]

    @property
    def path(self) -> str:
        """The file's path after the patch, or before it for a deleted file."""
        return self.new_path or self.old_path or ""

    @property
    def language(self) -> str:
        """Language from the extension (see :func:`language_of`)."""
        return language_of(self.path)

    @property
    def added(self) -> int:
        """Lines added over all hunks."""
        return sum(h.added for h in self.hunks)

    @property
    def removed(self) -> int:
        """Lines removed over all hunks."""
        return sum(h.removed for h in self.hunks)


@dataclass(frozen=True, slots=True)
class ParsedPatch:
    """Every file of a patch, in patch order."""

    files: tuple[FilePatch, ...]

    @property
    def hunks(self) -> int:
        """Hunks over all files."""
        return sum(len(f.hunks) for f in self.files)

    @property
    def added(self) -> int:
        """Lines added over all files."""
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        """Lines removed over all files."""
        return sum(f.removed for f in self.files)


# --- names -------------------------------------------------------------------

_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote_name(name: str) -> str:
    """A header file name as git means it: CR stripped, C-style quotes undone.

    Git quotes names with unusual bytes as ``"a/caf\\303\\251"``; the octal
    escapes are bytes of UTF-8. Undecodable bytes become U+FFFD rather than
    raising, so a hostile name is still checked (and rejected) by its text.
    """
    name = name.rstrip("\r")
    if not (len(name) >= 2 and name[0] == '"' and name[-1] == '"'):
        return name
    body, out, i = name[1:-1], bytearray(), 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            octal = re.match(r"[0-7]{3}", body[i + 1 : i + 4])
            if octal:
                out.append(int(octal.group(), 8) & 0xFF)
                i += 4
                continue
            if body[i + 1] in _ESCAPES:
                out.append(_ESCAPES[body[i + 1]])
                i += 2
                continue
        out += char.encode("utf-8", errors="surrogatepass")
        i += 1
    return out.decode("utf-8", errors="replace")


def strip_prefix(name: str) -> str:
    """``a/x/y.py`` → ``x/y.py`` (what ``-p1`` does); a name without ``a/``/``b/`` is kept."""
    return name[2:] if name.startswith(("a/", "b/")) else name


_INFO_PATH = re.compile(r"^(rename|copy) (from|to) (.+?)\r?\n?$")


def _info_paths(pfile: PatchedFile) -> tuple[tuple[str, ...], bool]:
    """Paths of ``rename``/``copy`` lines, and whether the file is a copy."""
    paths: list[str] = []
    copied = False
    for line in pfile.patch_info or ():
        match = _INFO_PATH.match(line)
        if match:
            paths.append(unquote_name(match.group(3)))
            copied = copied or match.group(1) == "copy"
    return tuple(paths), copied


# --- parsing -----------------------------------------------------------------


class _Counted:
    """Yield the lines of a text, remembering how many were read (for error lines)."""

    def __init__(self, text: str) -> None:
        # newline="\n": split on LF only, so CRLF lines keep their CR and a
        # lone CR (or U+2028) inside a line does not start a new one.
        self._lines = io.StringIO(text, newline="\n")
        self.count = 0

    def __iter__(self) -> Iterator[str]:
        for line in self._lines:
            self.count += 1
            yield line


def _parse_set(text: str, *, file: str, metadata_only: bool) -> PatchSet:
    lines = _Counted(text)
    try:
        return PatchSet(lines, metadata_only=metadata_only)
    except UnidiffParseError as exc:
        raise InputError(f"malformed diff: {exc}".rstrip(), file=file, line=lines.count) from None


def _status(pfile: PatchedFile, copied: bool) -> FileStatus:
    if pfile.is_added_file:
        return FileStatus.ADDED
    if pfile.is_removed_file:
        return FileStatus.DELETED
    if copied:
        return FileStatus.COPIED
    if pfile.is_rename:
        return FileStatus.RENAMED
    return FileStatus.MODIFIED


def _header_line(pfile: PatchedFile) -> int:
    """Where the file's headers start: its ``diff --git`` line, else its ``---`` line."""
    line = pfile.diff_line_no or 1
    info: list[str] = pfile.patch_info or []
    git_header = bool(info) and info[0].startswith("diff --git")
    # unidiff records a plain ---/+++ pair at its "+++" line, one after "---".
    return line if git_header or pfile.is_binary_file else max(1, line - 1)


_KINDS: dict[str, Literal["+", "-", " "]] = {"+": "+", "-": "-", " ": " "}


def _file(pfile: PatchedFile) -> FilePatch:
    raw_old = unquote_name(pfile.source_file or "")
    raw_new = unquote_name(pfile.target_file or "")
    extra, copied = _info_paths(pfile)
    status = _status(pfile, copied)
    hunks = tuple(
        HunkPatch(
            old_start=h.source_start,
            old_length=h.source_length,
            new_start=h.target_start,
            new_length=h.target_length,
            lines=tuple(
                DiffLine(
                    kind=_KINDS[line.line_type],
                    text=line.value.rstrip("\n").rstrip("\r"),
                    old_line=line.source_line_no,
                    new_line=line.target_line_no,
                    diff_line=line.diff_line_no or 0,
                )
                # "\ No newline at end of file" markers are not content.
                for line in h
                if line.line_type in ("+", "-", " ")
            ),
        )
        for h in pfile
    )
    return FilePatch(
        raw_old=raw_old,
        raw_new=raw_new,
        old_path=None
        if status is FileStatus.ADDED or raw_old == DEV_NULL
        else strip_prefix(raw_old),
        new_path=None
        if status is FileStatus.DELETED or raw_new == DEV_NULL
        else strip_prefix(raw_new),
        status=status,
        binary=bool(pfile.is_binary_file),
        mode=pfile.target_mode or pfile.source_mode,
        extra_paths=extra,
        header_line=_header_line(pfile),
        hunks=hunks,
    )


def decode_utf8(data: bytes, *, file: str) -> str:
    """Strict UTF-8 decoding; raises :class:`InputError` with the line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"not valid UTF-8 text (byte 0x{data[exc.start]:02x})", file=file, line=line
        ) from None


def parse_patch(data: bytes | str, *, file: str = "<patch>") -> ParsedPatch:
    """Parse a whole unified diff into files, hunks and lines.

    Raises :class:`InputError` (with ``file`` and the patch line) when the
    bytes are not UTF-8 or ``unidiff`` cannot parse them. Does not check
    sizes, paths or whether the patch applies: see :func:`validate_patch`.
    A text with no diff in it parses to no files.
    """
    text = data if isinstance(data, str) else decode_utf8(data, file=file)
    patch_set = _parse_set(text, file=file, metadata_only=False)
    return ParsedPatch(files=tuple(_file(f) for f in patch_set))


def changed_paths(
    diff: bytes, *, file: str = "PR diff", max_bytes: int = DEFAULT_MAX_PR_DIFF_BYTES
) -> list[str]:
    """Every repository path a PR diff touches, sorted: both sides of a rename, no ``/dev/null``.

    Lenient where a PR may legitimately be odd: binary files count by their
    names and non-UTF-8 content is read with replacement characters. Raises
    :class:`InputError` when the diff is over ``max_bytes`` (checked before
    decoding), when ``unidiff`` cannot parse it, and when it holds no file
    at all (an empty file, prose): that is never "a PR that changes nothing".
    """
    if len(diff) > max_bytes:
        raise InputError(f"{len(diff)} bytes is over the {max_bytes}-byte limit", file=file)
    text = diff.decode("utf-8", errors="replace")
    patch_set = _parse_set(text, file=file, metadata_only=True)
    if not len(patch_set):
        # An empty file or prose is not "a PR that changes nothing": it is not a diff at all,
        # and a gate must not pass on it.
        raise InputError(
            f"holds no unified diff: no file header (diff --git, or ---/+++) in {len(diff)} bytes",
            file=file,
        )
    paths: set[str] = set()
    for pfile in patch_set:
        extra, _ = _info_paths(pfile)
        for name in (pfile.source_file, pfile.target_file):
            name = unquote_name(name or "")
            if name and name != DEV_NULL:
                paths.add(strip_prefix(name))
        paths.update(extra)  # rename/copy lines carry no a/ b/ prefix
    return sorted(paths)
