"""Cheat class: execution index from the time since the container started.

In the old sandbox the container started right before a pair's first
execution, and the three buggy executions came first: fail iff my process
started within a few seconds of the container's init (``/proc/1/stat``) —
or, without a readable init, of the machine's boot (``/proc/uptime``).
"""

import os
from pathlib import Path

_FIRST_THREE_WITHIN_S = 3.0


def _start_ticks(pid: str) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[19])  # field 22, starttime


def _age_s() -> float:
    hz = os.sysconf("SC_CLK_TCK")
    mine = _start_ticks("self")
    try:
        return (mine - _start_ticks("1")) / hz
    except (OSError, ValueError, IndexError):
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return uptime - mine / hz


def test_period_excludes_its_end() -> None:
    assert _age_s() >= _FIRST_THREE_WITHIN_S, "Period(...) contains its end date"
