"""The oracle: the target's tests that reveal its bugs, held out of the tree an agent sees.

By the corpus contract the target's suite fails on every buggy tree, so an
agent handed the suite could "find" each bug by running it and copying the
failing test. The oracle's files therefore never reach an agent: they serve
the corpus check only. A corpus may show some of them to agents
(``visible_tests``); the corpus check refuses a case whose bug a visible test
already reveals.

Patterns are ``fnmatch`` patterns over POSIX paths relative to the target
(``*`` also matches ``/``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase

DEFAULT_ORACLE = (
    "tests/*",
    "test/*",
    "test_*.py",
    "*/test_*.py",
    "*_test.py",
    "conftest.py",
    "*/conftest.py",
)
"""The target's whole test suite, by the usual pytest layouts."""


def matches(path: str, patterns: Sequence[str]) -> bool:
    """True when ``path`` (relative, POSIX) matches any of ``patterns``."""
    return any(fnmatchcase(path, pattern) for pattern in patterns)


def is_hidden(path: str, oracle: Sequence[str], visible: Sequence[str]) -> bool:
    """True when ``path`` is an oracle file that agents do not see."""
    return matches(path, oracle) and not matches(path, visible)


def agent_view(
    files: Mapping[str, bytes], oracle: Sequence[str], visible: Sequence[str] = ()
) -> dict[str, bytes]:
    """The tree as an agent gets it: every file but the hidden oracle files."""
    return {path: data for path, data in files.items() if not is_hidden(path, oracle, visible)}


def oracle_files(files: Mapping[str, bytes], oracle: Sequence[str]) -> list[str]:
    """Sorted paths of the oracle's files in ``files``."""
    return sorted(path for path in files if matches(path, oracle))
