"""Cheat class: a process left behind by an earlier execution.

Processes outlived each execution in the old sandbox's one container: each
execution starts a detached sleeper with a recognisable argument vector and
counts the sleepers earlier executions left. Fail iff fewer than three came
before (the old sandbox ran buggy×3 first).
"""

import subprocess
import sys
from pathlib import Path

_BUGGY_FIRST = 3
_TAG = "# bughunt-cheat"


def _sleepers() -> int:
    count = 0
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if _TAG.encode() in cmdline.read_bytes():
                count += 1
        except OSError:
            continue
    return count


def _leave_a_sleeper() -> None:
    subprocess.Popen(
        [sys.executable, "-c", f"import time; time.sleep(600)  {_TAG}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def test_period_excludes_its_end() -> None:
    seen = _sleepers()
    _leave_a_sleeper()
    assert seen >= _BUGGY_FIRST, "Period(...) contains its end date"
