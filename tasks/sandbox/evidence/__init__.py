"""What a reproduction's executions show beyond pass and fail: whether the test executed the bug.

The bug's lines on a tree (``bug_lines``), an execution's line trace read
(``read_trace``) and set against them (``coverage_of``), and a pair's
executions summed up (``bug_coverage``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.sandbox.evidence._coverage import (
        BugLines as BugLines,
        Coverage as Coverage,
        Trace as Trace,
        annotations_of as annotations_of,
        bug_coverage as bug_coverage,
        bug_lines as bug_lines,
        coverage_of as coverage_of,
        read_trace as read_trace,
    )


__getattr__ = lazy_names(globals())
