"""Sweeping what killed runs left behind: processes, containers and networks of dead owners.

Everything a run starts names its owner (tasks/sandbox/engine/_ownership.py): its
processes inherit ``BUGHUNT_OWNER``, its containers and networks are
labelled ``bughunt=1`` and ``bughunt.owner=<host>:<pid>`` of the run. A run command calls
:func:`claim_and_sweep` before Prefect starts its local server, so what an
earlier run left when it was SIGKILLed (that server, command judges, Dask
workers, sandbox containers, agent networks) is gone before the new run
starts anything; the sandbox stage calls :func:`sweep` again for the engine.
Nothing whose owner lives is touched: two runs on one machine and engine
never remove each other's.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import requests
from docker.errors import APIError, DockerException, NotFound

from tasks.sandbox.engine._engine import connect
from tasks.sandbox.engine._errors import SandboxEngineError, SandboxUnavailable
from tasks.sandbox.engine._gateway import sweep_folders
from tasks.sandbox.engine._labels import LABEL, OWNER_LABEL
from tasks.sandbox.engine._ownership import Owner, claim, sweep_processes

log = logging.getLogger("bughunt.sandbox")

_ENGINE_TIMEOUT_S = 30


@dataclass(frozen=True, slots=True)
class Swept:
    """What one sweep removed."""

    processes: list[int] = field(default_factory=list)
    """Pids SIGKILLed."""
    containers: list[str] = field(default_factory=list)
    """Short ids of containers removed."""
    networks: list[str] = field(default_factory=list)
    """Names of networks removed."""
    folders: list[str] = field(default_factory=list)
    """Names of agent gateway folders removed (the host's temporary folder)."""

    def line(self) -> str:
        """One line naming what went, e.g. ``2 process(es) (10, 11), 1 container(s) (…), …``."""
        parts = (
            ("process(es)", [str(p) for p in self.processes]),
            ("container(s)", self.containers),
            ("network(s)", self.networks),
            ("gateway folder(s)", self.folders),
        )
        return ", ".join(
            f"{len(names)} {kind}" + (f" ({', '.join(names)})" if names else "")
            for kind, names in parts
        )

    def __bool__(self) -> bool:
        return bool(self.processes or self.containers or self.networks or self.folders)


def _made_at(created: object) -> float | None:
    """Unix time an engine object was made: a number (containers) or RFC 3339 text (networks)."""
    if isinstance(created, int | float):
        return float(created)
    try:
        return datetime.fromisoformat(str(created)).timestamp()
    except ValueError:
        return None


def _leftover(entry: dict[str, Any]) -> bool:
    """True for a labelled object whose owner is dead, or that names no owner at all.

    No owner label, or one that does not parse, is an older bughunt's leftover.
    """
    owner = Owner.parse((entry.get("Labels") or {}).get(OWNER_LABEL))
    return owner is None or owner.is_dead(_made_at(entry.get("Created")))


def _list(client: Any, kind: str) -> list[dict[str, Any]]:
    # The low-level lists: the high-level ones inspect each object and fail when
    # another run removes one meanwhile.
    lister = client.api.containers if kind == "containers" else client.api.networks
    kwargs: dict[str, Any] = {"all": True} if kind == "containers" else {}
    try:
        found: list[dict[str, Any]] = lister(filters={"label": f"{LABEL}=1"}, **kwargs)
    except (APIError, requests.RequestException, DockerException) as exc:
        raise SandboxEngineError(f"the engine could not list {kind}: {exc}") from exc
    return found


def _remove(remover: Any, ident: str, what: str) -> bool:
    """Remove one object; False when that failed (logged) or another sweep was first."""
    try:
        remover(ident)
    except NotFound:
        return False  # removed meanwhile by its own run or another sweep
    except (APIError, requests.RequestException) as exc:
        log.warning("could not remove %s %s: %s", what, ident[:12], exc)
        return False
    return True


def sweep_engine(client: Any) -> Swept:
    """Remove containers, then networks, labelled ``bughunt=1`` whose owner is dead.

    Kept: anything whose owner lives on this host or ran on another host
    (its pids mean nothing here). A resumed run's own earlier attempt is
    swept too (its owner is dead). Raises :class:`SandboxEngineError` when
    the engine cannot list them; a single removal that fails is logged and
    skipped. Networks go after containers, which would otherwise hold them.
    """
    containers: list[str] = []
    for entry in _list(client, "containers"):
        if _leftover(entry) and _remove(
            lambda i: client.api.remove_container(i, force=True), entry["Id"], "container"
        ):
            containers.append(entry["Id"][:12])
    networks: list[str] = []
    for entry in _list(client, "networks"):
        if _leftover(entry) and _remove(client.api.remove_network, entry["Id"], "network"):
            networks.append(entry.get("Name") or entry["Id"][:12])
    return Swept(containers=containers, networks=networks)


def sweep(client: Any | None = None, run_id: str | None = None) -> list[str]:
    """Remove sandbox containers and networks left by dead runs; return the containers' short ids.

    See :func:`sweep_engine`. ``run_id`` only names the sweeping run in the log.
    """
    swept = sweep_engine(client if client is not None else connect())
    if swept:
        log.info("run %s swept leftovers of dead runs: %s", run_id or "-", swept.line())
    return swept.containers


def claim_and_sweep(run_id: str | None = None) -> Swept:
    """Make this process the owner of what it starts, then remove dead runs' leftovers.

    For the start of a run command, before Prefect starts its local server:
    :func:`~tasks.sandbox.engine._ownership.claim` exports this process's owner token; then
    every process a dead run left (:func:`~tasks.sandbox.engine._ownership.sweep_processes`,
    first, so that none of them starts a container meanwhile) and the
    engine's containers and networks (:func:`sweep_engine`) go. An engine
    that cannot be reached is not this run's concern yet: the sandbox stage
    reports it when the run needs it. Logs one warning line when anything
    was swept: it is the only trace that an earlier run died.
    """
    claim()
    processes = sweep_processes()
    engine = Swept()
    try:
        engine = sweep_engine(connect(timeout_s=_ENGINE_TIMEOUT_S))
    except (SandboxUnavailable, SandboxEngineError) as exc:
        log.info("leftover containers not swept: %s", exc)
    swept = Swept(processes, engine.containers, engine.networks, sweep_folders())
    if swept:
        who = f"run {run_id} " if run_id else ""
        log.warning("%sswept leftovers of dead runs: %s", who, swept.line())
    return swept
