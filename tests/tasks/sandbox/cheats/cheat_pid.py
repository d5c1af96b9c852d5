"""Cheat class: execution index from the process id.

In the old sandbox's one container, process ids climbed with every
execution (shell, ``timeout``, ``python3`` each, plus the clean-up between
runs); the first three executions, the buggy ones, ran with small ids. Fail
iff my process id (or my parent's) is that small.
"""

import os

_FIRST_THREE_BELOW = 24


def test_period_excludes_its_end() -> None:
    pid = max(os.getpid(), os.getppid())
    assert pid >= _FIRST_THREE_BELOW, "Period(...) contains its end date"
