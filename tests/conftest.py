"""Shared fixtures: a fresh ledger file per test, Prefect's test harness once per run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger import Ledger

ROOT = Path(__file__).resolve().parent.parent

# The code imports scipy where it is used (the CLI starts faster without it). Import it once
# here, so its first import (about a second) never lands inside a property test's example
# and trips hypothesis's per-example deadline.
import scipy.stats  # noqa: E402, F401

ENGINE_FIXTURES = frozenset(
    {"docker_client", "sandbox_image", "run_id", "prefect_harness", "prefect_server"}
)
"""Fixtures that start the Docker engine's work, Prefect's test harness or a Prefect server."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``engine`` every test that needs the Docker engine, Prefect or Dask (a fixture of
    :data:`ENGINE_FIXTURES`, or marked ``docker`` or ``slow``), so ``make test-fast`` can leave
    them out; ``make test`` and CI run them all."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if (
            fixtures & ENGINE_FIXTURES
            or item.get_closest_marker("docker")
            or item.get_closest_marker("slow")
        ):
            item.add_marker(pytest.mark.engine)


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
