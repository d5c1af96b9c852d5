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

import configparser
import tomllib
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

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


TEST_FILE_PATTERNS = ("test_*.py", "*/test_*.py", "*_test.py", "conftest.py", "*/conftest.py")
"""pytest's default test files (``python_files``) and its ``conftest.py``, at any depth."""

# Where each pytest configuration file keeps its options, in pytest's order of precedence.
_PYTEST_CONFIGS = (
    ("pytest.ini", "pytest"),
    (".pytest.ini", "pytest"),
    ("pyproject.toml", "tool.pytest.ini_options"),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)


def pytest_options(files: Mapping[str, bytes]) -> dict[str, list[str]]:
    """``testpaths`` and ``python_files`` of the tree's root pytest configuration (the first
    file pytest itself would read); empty when there is none or it does not parse."""
    for name, section in _PYTEST_CONFIGS:
        data = files.get(name)
        if data is None:
            continue
        try:
            text = data.decode("utf-8")
            if name.endswith(".toml"):
                table = tomllib.loads(text).get("tool", {}).get("pytest", {})
                if "ini_options" not in table:
                    continue
                found = {k: table["ini_options"].get(k) for k in ("testpaths", "python_files")}
            else:
                parser = configparser.ConfigParser(interpolation=None)
                parser.read_string(text)
                if not parser.has_section(section):
                    continue
                found = {
                    k: parser.get(section, k, fallback=None) for k in ("testpaths", "python_files")
                }
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, configparser.Error, AttributeError):
            return {}
        return {
            key: value.split() if isinstance(value, str) else [str(v) for v in value]
            for key, value in found.items()
            if isinstance(value, str | list)
        }
    return {}


def target_test_files(
    files: Mapping[str, bytes], oracle: Sequence[str], visible: Sequence[str] = ()
) -> frozenset[str]:
    """The target's test files among ``files``: the oracle and visible-test patterns, pytest's
    ``test_*.py``, ``*_test.py`` and ``conftest.py`` at any depth, the target's own
    ``python_files`` besides them, and every ``.py`` file under its ``testpaths``. They are
    never rewritten (both trees hold the same ones, so rewriting them defends nothing)."""
    options = pytest_options(files)
    names = options.get("python_files", [])
    roots = [p.strip("/") for p in options.get("testpaths", []) if p.strip("/") not in ("", ".")]

    def is_test(path: str) -> bool:
        name = PurePosixPath(path).name
        return (
            matches(path, oracle)
            or matches(path, visible)
            or matches(path, TEST_FILE_PATTERNS)
            or name == "conftest.py"
            or any(fnmatchcase(name, pattern) for pattern in names)
            or any(path.startswith(root + "/") or fnmatchcase(path, root + "/*") for root in roots)
        )

    return frozenset(path for path in files if path.endswith(".py") and is_test(path))
