"""Shared fixtures: a fresh ledger file per test, Prefect's test harness once per run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger import Ledger

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    """Path of a ledger file that does not exist yet."""
    return tmp_path / "ledger.duckdb"


@pytest.fixture
def ledger(ledger_path: Path) -> Ledger:
    """A migrated, empty ledger in a fresh file."""
    store = Ledger(ledger_path)
    store.migrate()
    return store


@pytest.fixture(scope="session")
def prefect_harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Prefect's test harness, started once per test run (its start is slow)."""
    home = tmp_path_factory.mktemp("prefect-home")
    os.environ["PREFECT_HOME"] = str(home)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


ENGINE_TESTS = (
    "tests/flows/",
    "tests/tasks/sandbox/",
    "tests/tasks/make_corpus/",
    "tests/cli/test_run_counts.py",
    "tests/cli/test_sandbox_verify.py",
    "tests/test_ownership.py",
    "tests/benchmarks/test_benchmarks.py",
)
"""Tests that run the sandbox stage, a run's start, a sweep or a kill -9.

Any test that takes a `bughunt run` past its input checks belongs here: the
run's start sweeps dead owners' processes machine-wide.

A sweep removes what dead owners left on the engine and the machine, and a
kill -9 test needs the dead run's leftovers to be there until its own next
run sweeps them; so under ``pytest -n`` (``make test``) these share one worker
(``--dist loadgroup``), in file order, while the other workers take the rest.
"""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put every engine test in one xdist group (a no-op without xdist)."""
    for item in items:
        rel = Path(str(item.path)).relative_to(ROOT).as_posix()
        if rel.startswith(ENGINE_TESTS):
            item.add_marker(pytest.mark.xdist_group("engine"))


@pytest.fixture(autouse=True)
def _no_owner_left_behind() -> Iterator[None]:
    """A `bughunt run` invoked in this process claims it (BUGHUNT_OWNER): undo that after the test.

    Otherwise every later subprocess would inherit the claim and label its
    containers with this (live) process, and no sweep would ever remove them.
    """
    before = os.environ.get("BUGHUNT_OWNER")
    yield
    if before is None:
        os.environ.pop("BUGHUNT_OWNER", None)
    else:
        os.environ["BUGHUNT_OWNER"] = before
