"""The connection to the Docker engine, and the one message naming what to start."""

from __future__ import annotations

import os
from typing import Any

import docker
import requests
from docker.errors import DockerException

from tasks.sandbox.engine._errors import SandboxUnavailable

API_TIMEOUT_S = 120
"""Timeout of one engine API call; executions have their own deadlines on top."""


def connect(*, timeout_s: int = API_TIMEOUT_S) -> Any:
    """A ``docker.DockerClient`` for the engine named by the environment, checked with a ping.

    ``DOCKER_HOST`` and friends are honoured as the ``docker`` CLI does. An
    engine that cannot be reached raises :class:`SandboxUnavailable` saying
    what to start; there is deliberately no fallback to running on the host.
    """
    where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    try:
        client = docker.from_env(timeout=timeout_s)
        client.ping()
    except (DockerException, requests.RequestException, OSError) as exc:
        raise SandboxUnavailable(
            f"cannot reach the Docker engine at {where} ({exc}); start the Docker engine "
            "(dockerd, e.g. `sudo systemctl start docker` or `sudo dockerd &`) or point "
            "DOCKER_HOST at a running one. Untrusted code is never run outside the sandbox."
        ) from exc
    return client
