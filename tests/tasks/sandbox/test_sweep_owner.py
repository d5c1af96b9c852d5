"""The engine sweep by owner: dead owners' containers and networks go, live and foreign ones stay."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import suppress
from typing import Any

import pytest

from tasks.sandbox.engine import claim_and_sweep
from tasks.sandbox.engine._labels import LABEL, OWNER_LABEL, RUN_LABEL
from tasks.sandbox.engine._ownership import OWNER_ENV, proc_stat
from tasks.sandbox.engine._sweep import sweep

pytestmark = pytest.mark.docker

HOST = socket.gethostname()


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    proc = subprocess.Popen(["sleep", "60"])
    proc.kill()
    proc.wait()
    return proc.pid


@pytest.fixture
def made(docker_client: Any, run_id: str) -> Iterator[dict[str, tuple[str, str]]]:  # noqa: ARG001 - its run's containers are checked gone after the test
    """Labelled containers and networks the test makes, by name: (kind, id); removed after."""
    objects: dict[str, tuple[str, str]] = {}
    yield objects
    for kind, ident in objects.values():
        with suppress(Exception):  # swept already: what most tests expect
            if kind == "container":
                docker_client.api.remove_container(ident, force=True)
            else:
                docker_client.api.remove_network(ident)


def _make(
    client: Any, image: str, run_id: str, made: dict[str, tuple[str, str]], name: str, owner: str
) -> None:
    labels = {LABEL: "1", RUN_LABEL: run_id, OWNER_LABEL: owner}
    made[f"c-{name}"] = (
        "container",
        client.api.create_container(image, ["true"], labels=labels)["Id"],
    )
    made[f"n-{name}"] = (
        "network",
        client.api.create_network(f"{run_id}-{name}", labels=labels)["Id"],
    )


def _left(client: Any, made: dict[str, tuple[str, str]]) -> set[str]:
    ids = {c["Id"] for c in client.api.containers(all=True, filters={"label": f"{LABEL}=1"})}
    ids |= {n["Id"] for n in client.api.networks(filters={"label": f"{LABEL}=1"})}
    return {name for name, (_kind, ident) in made.items() if ident in ids}


def test_sweep_removes_dead_owners_containers_and_networks_only(
    docker_client: Any,
    sandbox_image: str,
    run_id: str,
    made: dict[str, tuple[str, str]],
    dead_pid: int,
) -> None:
    """Dead (gone, or a reused pid), unowned: removed. Live, or another host's: kept."""
    me = proc_stat(os.getpid())
    assert me is not None
    owners = {
        "live": f"{HOST}:{os.getpid()}",
        "live-token": f"{HOST}:{os.getpid()}:{me.started}",
        "gone": f"{HOST}:{dead_pid}",
        "reused": f"{HOST}:{os.getpid()}:{me.started + 1}",
        "unowned": "not a token",
        "foreign": f"not-{HOST}:{dead_pid}",
    }
    for name, owner in owners.items():
        _make(docker_client, sandbox_image, run_id, made, name, owner)

    removed = sweep(docker_client, run_id="sweeper")

    kept = {"live", "live-token", "foreign"}
    assert _left(docker_client, made) == {f"{k}-{n}" for k in "cn" for n in kept}
    assert not {made[f"c-{n}"][1][:12] for n in kept} & set(removed)


def test_claim_and_sweep_claims_then_sweeps_processes_and_the_engine(
    docker_client: Any,
    sandbox_image: str,
    run_id: str,
    made: dict[str, tuple[str, str]],
    dead_pid: int,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """At a run's start: the process owns what it starts, a dead run's leftovers go, one line says so."""
    monkeypatch.setenv(OWNER_ENV, "restored after the test")
    # Any run's start on this machine sweeps dead owners' leftovers, so another
    # process may take the container or the network first (gone, but not in this
    # call's lists): then make fresh ones and try again. A sweep that leaves either
    # behind, or never takes both, fails.
    for attempt in range(3):
        name = f"gone{attempt}"
        _make(docker_client, sandbox_image, run_id, made, name, f"{HOST}:{dead_pid}")
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="bughunt.sandbox"):
            swept = claim_and_sweep("starting")
        took_both = (
            made[f"c-{name}"][1][:12] in swept.containers and f"{run_id}-{name}" in swept.networks
        )
        if took_both or _left(docker_client, made) & {f"c-{name}", f"n-{name}"}:
            break
    assert os.environ[OWNER_ENV].startswith(f"{HOST}:{os.getpid()}:")
    assert made[f"c-{name}"][1][:12] in swept.containers and f"{run_id}-{name}" in swept.networks
    lines = [r for r in caplog.records if "swept leftovers of dead runs" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    assert "run starting swept" in lines[0].getMessage()


def test_claim_and_sweep_goes_on_without_an_engine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """An engine that cannot be reached does not stop a run's start (its sandbox stage will say)."""
    monkeypatch.setenv(OWNER_ENV, "restored after the test")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    swept = claim_and_sweep()
    assert swept.containers == [] and swept.networks == []
    assert os.environ[OWNER_ENV].startswith(f"{HOST}:{os.getpid()}:")
