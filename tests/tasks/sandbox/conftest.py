"""Fixtures for the sandbox tests: the real engine, the image built once, a run id per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tasks.sandbox.engine import connect, ensure_image
from tasks.sandbox.engine._labels import LABEL, RUN_LABEL

PASSING_TEST = {"test_ok.py": "def test_ok():\n    assert 1 + 1 == 2\n"}
PYTEST = ("python3", "-m", "pytest", "-q", "-p", "no:cacheprovider")


@pytest.fixture(scope="session")
def docker_client() -> Any:
    """A client of the real engine (the suite fails, never skips, without one)."""
    return connect()


@pytest.fixture(scope="session")
def sandbox_image(docker_client: Any) -> str:
    """Tag of the sandbox image, built on first use (about a minute) and reused after."""
    return ensure_image(docker_client).tag


@contextmanager
def fresh_run_id(docker_client: Any) -> Iterator[str]:
    """A fresh run id; after the block, no container of that run may be left (a leftover is
    removed and the block fails, naming it)."""
    value = f"test-{uuid.uuid4().hex[:10]}"
    yield value
    left = [
        c["Id"]
        for c in docker_client.api.containers(
            all=True, filters={"label": [f"{LABEL}=1", f"{RUN_LABEL}={value}"]}
        )
    ]
    for container in left:
        docker_client.api.remove_container(container, force=True)
    assert not left, f"containers left behind by run {value}: {[c[:12] for c in left]}"


@pytest.fixture
def run_id(docker_client: Any) -> Iterator[str]:
    """A fresh run id per test (:func:`fresh_run_id`)."""
    with fresh_run_id(docker_client) as value:
        yield value
