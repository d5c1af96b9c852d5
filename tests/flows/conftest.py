"""Fixtures of the flow tests that need long-lived processes: one Prefect server per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.flows.servers import Server, running_server


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A real Prefect server on 127.0.0.1, shared by every test of the session that needs one."""
    with running_server(tmp_path_factory.mktemp("prefect-server")) as server:
        yield server
