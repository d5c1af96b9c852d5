"""Sweeping what crashed runs left behind: containers whose owning process is gone."""

from __future__ import annotations

import logging
import os
import socket
from typing import Any

import requests
from docker.errors import APIError, DockerException, NotFound

from tasks.sandbox._engine import connect
from tasks.sandbox._errors import SandboxEngineError
from tasks.sandbox._labels import LABEL, OWNER_LABEL

log = logging.getLogger("bughunt.sandbox")


def _owner_alive(value: str | None) -> bool:
    """True when the labelled owner is a live process on this host (a zombie is dead)."""
    host, _, pid_text = (value or "").rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return True  # no /proc here: kill(0) said it lives


def sweep(client: Any | None = None, run_id: str | None = None) -> list[str]:
    """Remove sandbox containers left behind by crashed runs; return their short ids.

    Every container labelled ``bughunt=1`` goes, except those whose owning
    process is still alive on this host, so two runs on one machine never
    remove each other's containers. A crashed attempt of ``run_id`` itself is
    swept too when that run is resumed (its owner is dead); ``run_id`` only
    names the sweeping run in the log.
    """
    client = client if client is not None else connect()
    removed: list[str] = []
    try:
        # The low-level list: the high-level one inspects each container and
        # fails when another run removes one meanwhile.
        found = client.api.containers(all=True, filters={"label": f"{LABEL}=1"})
    except (APIError, requests.RequestException, DockerException) as exc:
        raise SandboxEngineError(f"the engine could not list containers: {exc}") from exc
    for entry in found:
        if _owner_alive((entry.get("Labels") or {}).get(OWNER_LABEL)):
            continue
        try:
            client.api.remove_container(entry["Id"], force=True)
        except NotFound:
            continue  # removed meanwhile by its own run or another sweep
        except (APIError, requests.RequestException) as exc:
            log.warning("could not remove container %s: %s", entry["Id"][:12], exc)
            continue
        removed.append(entry["Id"][:12])
    if removed:
        log.info(
            "run %s swept %d leftover sandbox container(s): %s",
            run_id or "-",
            len(removed),
            ", ".join(removed),
        )
    return removed
