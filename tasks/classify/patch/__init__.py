"""A patch as plain values, and whether it is safe to apply: a unified diff parsed into files,
hunks and lines (or read for its paths only), the bad-input checks of a case's ``bug.patch``
(docs/architecture.md#bad-input) and the one ``git apply`` command line they end with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.classify.patch._diff import (
        FilePatch as FilePatch,
        FileStatus as FileStatus,
        HunkPatch as HunkPatch,
        ParsedPatch as ParsedPatch,
        changed_paths as changed_paths,
        parse_patch as parse_patch,
    )
    from tasks.classify.patch._validate import (
        DEFAULT_APPLY_TIMEOUT_S as DEFAULT_APPLY_TIMEOUT_S,
        git_apply_argv as git_apply_argv,
        git_apply_env as git_apply_env,
        validate_patch as validate_patch,
    )


__getattr__ = lazy_names(globals())
