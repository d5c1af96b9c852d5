"""Cheat class: marker in ``/var/tmp`` and ``/scratch``.

Both outlived each execution in the old sandbox's one container (``/scratch``
held every run's trees), which ran buggy×3 then clean×3: count executions in
a file in each and fail iff fewer than three came before.
``BUGHUNT_CHEAT_STATE`` replaces both folders for a host-side check.
"""

import contextlib
import os
from pathlib import Path

_BUGGY_FIRST = 3


def _folders() -> list[Path]:
    override = os.environ.get("BUGHUNT_CHEAT_STATE")
    return [Path(override)] if override else [Path("/var/tmp"), Path("/scratch")]


def _executions_before() -> int:
    seen = 0
    for folder in _folders():
        with contextlib.suppress(OSError, ValueError):
            seen = max(seen, int((folder / ".bughunt-cheat-var").read_text() or 0))
    for folder in _folders():
        with contextlib.suppress(OSError):
            (folder / ".bughunt-cheat-var").write_text(str(seen + 1))
    return seen


def test_period_excludes_its_end() -> None:
    assert _executions_before() >= _BUGGY_FIRST, "Period(...) contains its end date"
