"""A gateway's folder and sockets are the run's alone: no other user of the host reaches them.

A real gateway container on a Docker network this module creates (internal:
its upstream is never contacted), and a probe run as another user of the host
(``nobody``), which tries every socket the run's gateway serves. The agent's
own container still reaching its socket is shown by ``test_gateway.py``.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bughunt.errors import InputError
from bughunt.models import AgentMode, AgentNetwork, AgentVersion
from tasks.sandbox.engine._gateway import Gateway
from tasks.sandbox.engine._labels import LABEL, OWNER_LABEL, owner

OTHER_UID = 65534
"""``nobody``: a user of the host that is neither the run's nor in its group."""
SYSTEM_PYTHON = "/usr/bin/python3"
"""A Python that user can run (the test's own may live under a folder only root enters)."""

PROBE = """
import json, socket, sys
for path in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        print(json.dumps([path, "connected"]))
    except OSError as e:
        print(json.dumps([path, type(e).__name__]))
    finally:
        s.close()
"""


@pytest.fixture
def network(docker_client: Any) -> Iterator[str]:
    labels = {LABEL: "1", OWNER_LABEL: owner(), "bughunt.test": "gateway-access"}
    made = docker_client.networks.create(
        f"bughunt-test-gwacc-{uuid.uuid4().hex[:8]}", internal=True, labels=labels
    )
    try:
        yield made.name
    finally:
        made.remove()


def _as_other_user(paths: list[Path]) -> dict[str, str]:
    done = subprocess.run(
        [SYSTEM_PYTHON, "-I", "-S", "-c", PROBE, *map(str, paths)],
        user=OTHER_UID,
        group=OTHER_UID,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(line) for line in done.stdout.splitlines())


@pytest.mark.usefixtures("sandbox_image")
def test_no_other_user_of_the_host_reaches_the_gateways_sockets(
    docker_client: Any, run_id: str, network: str
) -> None:
    """``nobody`` cannot connect to the control socket or an execution's; the host's user can."""
    assert os.geteuid() == 0, "switching to another user needs root (the engine's hosts run so)"
    agent = AgentVersion(
        name="llm",
        family="f",
        mode=AgentMode.COMMAND,
        command=["true"],
        path="/nowhere",
        network=AgentNetwork(model="http://model.invalid:8000/v1", upstream_network=network),
    )
    assert agent.network is not None
    with (
        Gateway(
            run_id=run_id, agent=agent, network=agent.network, key=None, client=docker_client
        ) as gateway,
        gateway.execution() as access,
    ):
        sockets = [gateway.folder / "c" / "control.sock", access.folder / "model.sock"]
        for path in sockets:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as mine:
                mine.connect(str(path))  # the run's own user
        seen = _as_other_user(sockets)
        assert seen == {str(path): "PermissionError" for path in sockets}, seen
        # Nothing for other users in the folder's or the sockets' modes either.
        assert gateway.folder.stat().st_mode & 0o007 == 0
        assert all(path.stat().st_mode & 0o007 == 0 for path in sockets)
        assert gateway.stats()["requests"] == 0  # and the gateway still answers its host


def test_a_model_at_the_hosts_address_on_the_gateways_network_is_refused(
    docker_client: Any, run_id: str, network: str
) -> None:
    """The host's own address on the gateway's network (its gateway IP) is refused before any
    container starts, naming the field; the gateway's folder is removed."""
    attrs = docker_client.api.inspect_network(network)
    host = attrs["IPAM"]["Config"][0].get("Gateway") or str(
        next(ipaddress.ip_network(attrs["IPAM"]["Config"][0]["Subnet"]).hosts())
    )
    agent = AgentVersion(
        name="llm",
        family="f",
        mode=AgentMode.COMMAND,
        command=["true"],
        path="/nowhere",
        network=AgentNetwork(model=f"http://{host}:8000/v1", upstream_network=network),
    )
    assert agent.network is not None
    gateway = Gateway(
        run_id=run_id, agent=agent, network=agent.network, key=None, client=docker_client
    )
    with pytest.raises(InputError) as caught:
        gateway.start()
    assert caught.value.field == "agents[llm].network.model", caught.value
    assert not gateway.folder.exists()
    assert not docker_client.api.containers(all=True, filters={"label": f"bughunt.run_id={run_id}"})
