"""Cheat class: marker in ``/dev/shm``.

The old sandbox's one container kept ``/dev/shm`` between executions, which
ran buggy×3 then clean×3: count executions in a file there and fail iff
fewer than three came before. ``BUGHUNT_CHEAT_STATE`` replaces the folder
for a host-side check.
"""

import contextlib
import os
from pathlib import Path

_BUGGY_FIRST = 3
MARKER = Path(os.environ.get("BUGHUNT_CHEAT_STATE", "/dev/shm")) / ".bughunt-cheat-shm"


def _executions_before() -> int:
    try:
        seen = int(MARKER.read_text() or 0)
    except (OSError, ValueError):
        seen = 0
    with contextlib.suppress(OSError):
        MARKER.write_text(str(seen + 1))
    return seen


def test_period_excludes_its_end() -> None:
    assert _executions_before() >= _BUGGY_FIRST, "Period(...) contains its end date"
