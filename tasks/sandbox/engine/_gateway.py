"""An agent's only way out: its model gateway (docs/agents.md#network).

An agent with a ``[agents.network]`` table gets, for the run, a gateway
container of its own: trusted code (the ``gateway`` package, shipped into
the gateway's folder and run as ``python3 -m gateway.gateway``) on the
network its upstream is on, holding the model's key. The agent's containers
get no network interface at all (``network_mode: none``): each execution's
container has one folder of the gateway's mounted read-only at ``/gw``,
holding a Unix socket to the gateway that serves that execution alone, and
its main process (``gateway/forward.py``) turns loopback ports into that
socket, so ``OPENAI_BASE_URL=http://127.0.0.1:8080/v1`` works for any client.

Why a Unix socket rather than an internal Docker network holding the agent
and its gateway: on Docker engines before 23.0.11 / 25.0.4 / 26.0 a
container on an internal network can still resolve (and so send data out
through) names via the engine's DNS when the host's resolver is on
localhost (CVE-2024-29018). With no interface there is no name lookup and no
packet to send, on every engine; the socket is the one door, and the
gateway decides what goes through it. One design on every engine is also
one design to test. The folder is the host user's and a group only the
gateway's container carries (:func:`run_group`); no other user of the host
reaches a socket in it (docs/sandbox.md#the-model-gateway). It needs the engine on this host (the folder is a bind
mount): a remote engine is refused with a clear error.

Per execution, the host opens a listener through the gateway's control
socket and, when the execution ends, closes it and takes its request log
(method, path, status, bytes, seconds, model, tokens in and out, cost,
refusal). The budget is the gateway's, shared by all the run's executions of
the agent.

An agent with ``network.allow`` entries also gets tunnels: its container's
``127.0.0.1:3128`` (its ``HTTPS_PROXY``) leads to the execution's
``connect.sock``, where the gateway opens ``CONNECT`` tunnels to exactly the
listed ``host:port`` pairs through Debian's squid (``gateway/tunnel.py``).
That gateway runs in an image FROM the sandbox base with squid added, built
like an agent's environment (:func:`gateway_image`: once per base); an
agent without ``allow`` keeps the plain base, so a run
that needs no tunnel never needs Debian's archive.
"""

from __future__ import annotations

import grp
import json
import logging
import os
import secrets
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
from docker.errors import APIError, NotFound
from docker.types import LogConfig

from bughunt.models import AgentEnvironment, AgentNetwork, AgentVersion
from corpus import check_upstream_network
from tasks.sandbox.engine._container import (
    Limits,
    MiB,
    container_config,
    create_container,
    remove_quietly,
)
from tasks.sandbox.engine._environments import EnvironmentOwner, announce, ensure_environment
from tasks.sandbox.engine._errors import SandboxEngineError, SandboxRequestError
from tasks.sandbox.engine._executor import GatewayLink
from tasks.sandbox.engine._labels import owner
from tasks.sandbox.engine._ownership import Owner
from tasks.sandbox.engine._recipe import image_tag

log = logging.getLogger("bughunt.sandbox")

MOUNT = "/gw"
"""Where the gateway's folder (gateway) or the execution's folder (agent) is mounted."""
MODEL_PORT = 8080
"""Loopback port of the agent's container that leads to its gateway."""
PROXY_PORT = 3128
"""Loopback port of the agent's container that leads to its tunnels (``network.allow`` only)."""
GATEWAY_ENVIRONMENT = AgentEnvironment(debian=["squid"])
"""What a gateway with tunnels needs beyond the sandbox base: Debian's squid."""
GATEWAY_IMAGE_LABELS = {"bughunt.image": "gateway"}
"""Added to the gateway image when it is built (it is kept and reused, like the base)."""
KEY_VARIABLE = "BUGHUNT_GATEWAY_KEY"
"""The gateway container's variable holding the model's key (never set for an agent)."""
PLACEHOLDER_KEY = "bughunt-gateway-adds-the-key"
"""``OPENAI_API_KEY`` inside the agent's container: clients insist on one; the gateway replaces it."""
_READY_S = 20.0
_CONTROL_TIMEOUT_S = 30.0
_FORWARD_READY = "/tmp/.bughunt-gateway-ready"  # noqa: S108 - the container's own tmpfs
# Waited for before the agent's command starts: the forwarder listens (up to 10 s).
PRELUDE = (
    f"i=0; while [ ! -e {_FORWARD_READY} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
)


SOCKETS_GROUP_RANGE = (1_000_000_000, 2_000_000_000)
"""Where a root host picks the group only the run's gateway carries (none of the host's own)."""

FOLDER_PREFIX = "bughunt-gw-"
"""Name prefix of every gateway folder (in the system's temporary folder)."""
OWNER_FILE = "owner"
"""The owner label of the run that made a gateway folder."""
_UNOWNED_GRACE_S = 60.0


def sweep_folders(root: Path | None = None) -> list[str]:
    """Remove gateway folders whose run is dead (killed before it could); their names.

    A folder is a dead run's when its owner file names a dead owner
    (:meth:`~tasks.sandbox.engine._ownership.Owner.is_dead`, checked against the folder's
    age) or names none (made before owners were written, or never finished).
    Folders of live runs are kept.
    """
    swept = []
    for folder in sorted((root or Path(tempfile.gettempdir())).glob(f"{FOLDER_PREFIX}*")):
        try:
            made = folder.stat().st_mtime
        except OSError:
            continue  # removed meanwhile
        try:
            token: str | None = (folder / OWNER_FILE).read_text().strip()
        except OSError:
            token = None
        if token is None and time.time() - made < _UNOWNED_GRACE_S:
            continue  # a live run may be writing its owner file right now
        found = Owner.parse(token)
        if found is None or found.is_dead(made):
            shutil.rmtree(folder, ignore_errors=True)
            swept.append(folder.name)
    return swept


def run_group() -> int:
    """The group that alone, beside the host's user, may enter a gateway's folder.

    Run as root, the host picks a gid no group of its has, so no local user
    carries it; any other user gives its own group (it may only hand a folder
    to a group it is in): no other user enters unless the host put them in it.
    The gateway's container carries the group (``group_add``); the agent's
    does not need it (only its execution's folder is mounted there).
    """
    if os.geteuid() != 0:
        return os.getegid()
    while True:
        gid = SOCKETS_GROUP_RANGE[0] + secrets.randbelow(
            SOCKETS_GROUP_RANGE[1] - SOCKETS_GROUP_RANGE[0]
        )
        try:
            grp.getgrgid(gid)
        except KeyError:
            return gid


class GatewayError(SandboxEngineError):
    """The gateway could not be started or answered its control channel wrongly."""


@dataclass(frozen=True, slots=True)
class AgentAccess:
    """What one agent execution's container gets: a mount, its environment, its main process."""

    folder: Path
    """The execution's folder of the gateway (host side), mounted read-only at ``/gw``."""
    env: dict[str, str]
    """``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` (a placeholder) and ``BUGHUNT_MODEL_URL``; with
    tunnels also ``HTTPS_PROXY``, ``HTTP_PROXY`` and ``NO_PROXY``, in both cases."""
    log: list[dict[str, Any]] = field(default_factory=list)
    """The execution's log, model requests and tunnels; filled when the execution's block ends."""
    tunnels: bool = False
    """The agent has ``network.allow`` entries: its port 3128 leads to ``connect.sock``."""

    def link(self) -> GatewayLink:
        """How the execution's container reaches the gateway: its main process, the mount,
        and :data:`PRELUDE` before each command."""
        return GatewayLink(main=self.main_command(), volumes=self.volumes(), prelude=PRELUDE)

    def volumes(self) -> dict[str, dict[str, str]]:
        """The bind mount, read-only: the agent can connect to the socket, not change it."""
        return {str(self.folder): {"bind": MOUNT, "mode": "ro"}}

    def main_command(self) -> list[str]:
        """The container's main process: the loopback forwarder, one port per socket."""
        pairs = [f"{MODEL_PORT}={MOUNT}/model.sock"]
        if self.tunnels:
            pairs.append(f"{PROXY_PORT}={MOUNT}/connect.sock")
        return ["python3", f"{MOUNT}/forward.py", *pairs]


def _check_local_engine(client: Any) -> None:
    base = str(getattr(client.api, "base_url", ""))
    if not base.startswith("http+docker://localhost") and not base.startswith(
        "http+docker://localunixsocket"
    ):
        raise SandboxRequestError(
            f"an agent with a network needs the Docker engine on this host (its gateway's "
            f"sockets are a bind mount); the engine is at {base}"
        )


PACKAGE = "gateway"
"""The package shipped into the gateway's folder (standard library only, imports no other
package of the project); it runs from there as ``python3 -m gateway.gateway``."""


def _script(name: str) -> bytes:
    return resources.files(PACKAGE).joinpath(name).read_bytes()


def gateway_files() -> dict[str, bytes]:
    """The gateway's code as shipped into its folder: every module of the ``gateway`` package,
    keyed by its path in the folder (``gateway/<module>.py``)."""
    modules = sorted(
        entry.name
        for entry in resources.files(PACKAGE).iterdir()
        if entry.is_file() and entry.name.endswith(".py")
    )
    return {f"{PACKAGE}/{name}": _script(name) for name in modules}


def gateway_image(client: Any, *, base: str, agent: str = "gateway") -> str:
    """Tag of the gateway image (the ``base`` with Debian's squid), built when missing.

    Built like an agent's environment (:func:`ensure_environment`: fetched
    on the host, installed without network, kept and reused by every run on
    that base); a build says one line on stderr when it starts and one when
    it ends. A failed build raises
    :class:`~tasks.sandbox.engine._errors.SandboxImageError` naming the agent.
    """
    build = ensure_environment(
        GATEWAY_ENVIRONMENT,
        corpus_root=Path("."),  # no requirements file: nothing is read from it
        client=client,
        base=base,
        owner=EnvironmentOwner(agent, where="network.allow"),
        labels=GATEWAY_IMAGE_LABELS,
        progress=announce,
    )
    return build.tag


class Gateway:
    """One agent's gateway for one run: start it, open an execution per agent container, close it.

    Use as a context manager. Thread-safe: executions may open and close concurrently.
    """

    def __init__(
        self,
        *,
        run_id: str,
        agent: AgentVersion,
        network: AgentNetwork,
        key: str | None,
        client: Any,
        image: str | None = None,
    ) -> None:
        assert network.model is not None
        self.run_id = run_id
        self.agent = agent
        self.network = network
        self._key = key
        self._client = client
        self._image = image or image_tag()
        self.folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
        self.group = run_group()
        # Only the host's user and the run's group enter; setgid: all made inside is the group's.
        os.chown(self.folder, -1, self.group)
        self.folder.chmod(0o2750)
        # Who made it: a killed run's folder is swept by the next run (sweep_folders).
        (self.folder / OWNER_FILE).write_text(owner())
        self._container: Any = None
        self._base_path = urlsplit(network.model).path.rstrip("/")

    # --- life cycle -----------------------------------------------------------

    def __enter__(self) -> Gateway:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Write the gateway's folder, start its container, wait for its control socket.

        With ``allow`` entries the gateway runs in :func:`gateway_image`,
        built first when missing; its failure removes the folder and raises.
        """
        _check_local_engine(self._client)
        self._check_network()
        if self.network.allow:
            try:
                self._image = gateway_image(
                    self._client, base=self._image, agent=f"{self.agent.name}'s gateway"
                )
            except BaseException:
                self.close()
                raise
        config = self.network.model_dump(mode="json", exclude={"upstream_network"})
        files = {**gateway_files(), "config.json": json.dumps(config).encode()}
        (self.folder / PACKAGE).mkdir()
        (self.folder / PACKAGE).chmod(0o2750)  # like the folder: the host's user and the group
        for name, data in files.items():
            (self.folder / name).write_bytes(data)
            (self.folder / name).chmod(
                0o640
            )  # the gateway reads them as the group, whatever the umask
        # The gateway makes its control socket in c (the group may write there); x holds the
        # executions' folders, which only the host makes.
        for sub, mode in (("c", 0o2770), ("x", 0o2750)):
            (self.folder / sub).mkdir()
            (self.folder / sub).chmod(mode)
        env = {KEY_VARIABLE: self._key} if self._key else {}
        cfg = container_config(
            image=self._image,
            command=[
                "python3",
                "-m",
                f"{PACKAGE}.gateway",
                f"{MOUNT}/config.json",
                f"{MOUNT}/c/control.sock",
            ],
            run_id=self.run_id,
            limits=Limits(memory_bytes=256 * MiB, pids=128),
            network=True,
            env=env,
            mode="gateway",
        )
        cfg["volumes"] = {str(self.folder): {"bind": MOUNT, "mode": "rw"}}
        cfg["working_dir"] = MOUNT  # ``-m`` finds the package in the current folder
        cfg["group_add"] = [str(self.group)]
        cfg["log_config"] = LogConfig(type=LogConfig.types.JSON, config={"max-size": "1m"})
        cfg["labels"]["bughunt.agent"] = self.agent.name
        if self.network.upstream_network:
            cfg["network"] = self.network.upstream_network
        self._container = create_container(self._client, cfg)
        try:
            self._container.start()
        except (APIError, requests.RequestException) as exc:
            self.close()
            raise GatewayError(
                f"agent {self.agent.name}: the gateway did not start: {exc}"
            ) from exc
        self._wait_ready()
        log.info("gateway of agent %s up (%s)", self.agent.name, self._container.short_id)

    def _check_network(self) -> None:
        """Refuse (InputError, folder removed) a network on which the model or an allowed host
        is the host itself; the corpus's check saw names only, this sees the engine's network."""
        name = self.network.upstream_network or "bridge"
        try:
            attrs = self._client.api.inspect_network(name)
            check_upstream_network(self.agent, attrs, at=f"agents[{self.agent.name}]")
        except NotFound as exc:
            self.close()
            raise GatewayError(
                f"agent {self.agent.name}: network.upstream_network {name!r} does not exist"
            ) from exc
        except BaseException:
            self.close()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _READY_S
        while time.monotonic() < deadline:
            try:
                if self._control({"op": "stats"}, timeout_s=2.0).get("ok"):
                    return
            except OSError:
                pass
            self._container.reload()
            if self._container.status not in ("created", "running"):
                break
            time.sleep(0.05)
        said = self._logs()
        self.close()
        raise GatewayError(f"agent {self.agent.name}: the gateway did not come up: {said}")

    def _logs(self) -> str:
        try:
            raw: bytes = self._container.logs(tail=20)
        except (APIError, requests.RequestException) as exc:
            return f"(its output could not be read: {exc})"
        return raw.decode("utf-8", "replace").strip()[-2000:]

    def close(self) -> None:
        """Remove the gateway's container and folder; safe to call twice."""
        if self._container is not None:
            remove_quietly(self._container)
            self._container = None
        shutil.rmtree(self.folder, ignore_errors=True)

    # --- control channel ----------------------------------------------------

    def _control(
        self, request: dict[str, Any], *, timeout_s: float = _CONTROL_TIMEOUT_S
    ) -> dict[str, Any]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout_s)
            sock.connect(str(self.folder / "c" / "control.sock"))
            sock.sendall(json.dumps(request).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(1 << 20)
                if not chunk:
                    break
                data += chunk
        answer: dict[str, Any] = json.loads(data or b"{}")
        return answer

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            answer = self._control(request)
        except (OSError, ValueError) as exc:
            raise GatewayError(
                f"agent {self.agent.name}: the gateway did not answer: {exc}"
            ) from exc
        if not answer.get("ok"):
            raise GatewayError(
                f"agent {self.agent.name}: the gateway refused: {answer.get('error')}"
            )
        return answer

    def stats(self) -> dict[str, Any]:
        """The run's spending so far: requests, tokens, cost."""
        return self._ask({"op": "stats"})

    @contextmanager
    def execution(self) -> Iterator[AgentAccess]:
        """A listener for one agent execution; its request log is in ``access.log`` afterwards."""
        name = uuid.uuid4().hex[:16]
        folder = self.folder / "x" / name
        folder.mkdir()
        # The gateway (the run's group) makes the socket here; the agent's user, neither owner
        # nor in the group, reads it: it is mounted alone into the agent's container, and on
        # the host no other user gets past the gateway's folder.
        folder.chmod(0o2775)
        (folder / "forward.py").write_bytes(_script("forward.py"))
        (folder / "forward.py").chmod(0o644)  # the agent's user reads it, whatever the umask
        self._ask({"op": "open", "execution": name, "folder": f"{MOUNT}/x/{name}"})
        url = f"http://127.0.0.1:{MODEL_PORT}{self._base_path}"
        env = {"OPENAI_BASE_URL": url, "BUGHUNT_MODEL_URL": url, "OPENAI_API_KEY": PLACEHOLDER_KEY}
        tunnels = bool(self.network.allow)
        if tunnels:
            proxy = f"http://127.0.0.1:{PROXY_PORT}"
            # Both cases (curl reads only the lower-case http_proxy); the model stays direct.
            for variable, value in (("HTTPS_PROXY", proxy), ("HTTP_PROXY", proxy)):
                env[variable] = env[variable.lower()] = value
            env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
        access = AgentAccess(folder=folder, env=env, tunnels=tunnels)
        try:
            yield access
        finally:
            try:
                access.log.extend(self._ask({"op": "close", "execution": name}).get("log") or [])
            finally:
                shutil.rmtree(folder, ignore_errors=True)
