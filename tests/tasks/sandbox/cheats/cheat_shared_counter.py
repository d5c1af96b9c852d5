"""Cheat class: execution order through a counter in every writable place.

The old sandbox ran buggy×3 then clean×3 in one container: keep a counter
in every place that might outlive an execution (``/dev/shm``, ``/tmp``,
``/var/tmp``, ``/scratch``, the home folder, ``/run/lock``, the folder
above the tree), take the highest, and fail on executions 1 to 3.
``BUGHUNT_CHEAT_STATE`` replaces every place for a host-side check.
"""

import contextlib
import os
from pathlib import Path

_BUGGY_FIRST = 3
_NAME = ".bughunt-order"


def _places() -> list[Path]:
    override = os.environ.get("BUGHUNT_CHEAT_STATE")
    if override:
        return [Path(override)]
    fixed = ["/dev/shm", "/tmp", "/var/tmp", "/scratch", "/run/lock", "/run/user"]
    return [*map(Path, fixed), Path.home(), Path.cwd().parent]


def _executions_before() -> int:
    seen = 0
    for place in _places():
        with contextlib.suppress(OSError, ValueError):
            seen = max(seen, int((place / _NAME).read_text() or 0))
    for place in _places():
        with contextlib.suppress(OSError):
            (place / _NAME).write_text(str(seen + 1))
    return seen


def test_period_excludes_its_end() -> None:
    assert _executions_before() >= _BUGGY_FIRST, "Period(...) contains its end date"
