"""The image's ``/usr`` on the engine's own filesystem, for engines that serve images through FUSE.

An engine whose storage driver is ``fuse-overlayfs`` (rootless and nested
engines; this project's CI machines) serves every file of a container's
image through a FUSE daemon, and an execution opens hundreds of them before
its test runs: the interpreter's standard library and pytest, a few hundred
modules. A cell therefore mounts, read-only at ``/usr``, a named volume that
holds a copy of the image's ``/usr``: volumes live on the engine's own
filesystem, so those files are read at its speed. Measured here (fuse-overlayfs
over ext4): ``python3 -c "import pytest"`` 0.31 → 0.23 s wall and 235 → 188 ms of
CPU per execution. An engine with a native storage driver serves image files at
that speed already: no volume.

The copy is the image's, byte for byte and stat for stat (``cp -a`` in a
container of the image, as root, into the empty volume mounted elsewhere):
every path, mode, owner, size and time under ``/usr`` is the image's, so an
execution cannot tell the two apart but by the mount table, which is the same
for every execution. One volume per image id, made once per engine: under a
lock on this host, the copy goes into ``bughunt-usr-<id>``, and only a copy
that ended is marked done by a second, empty volume ``bughunt-usr-<id>-done``
(volume creation is atomic; a copy cut short is made again). Volumes of images
the engine no longer has are removed when another is made.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests
from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from tasks.sandbox.engine._labels import LABEL, OWNER_LABEL, owner

log = logging.getLogger("bughunt.sandbox")

FUSE_DRIVER = "fuse-overlayfs"
"""The storage driver whose image files a volume copy speeds up."""
USR_OF_LABEL = "bughunt.usr-of"
"""The label naming the image id a volume copies ``/usr`` of."""
_STAGING = "/mnt/bughunt-usr"
"""Where the copying container mounts the volume (not in the image: Docker copies nothing)."""
_LOCK = threading.Lock()
_DRIVERS: dict[int, str] = {}


def usr_volume(client: Any, image: str) -> str | None:
    """The name of the volume holding ``image``'s ``/usr``, made now if need be; None when the
    engine's storage driver is native, or the copy could not be made (said in one log line:
    the cell then reads the image's own files, only slower)."""
    if _driver(client) != FUSE_DRIVER:
        return None
    try:
        image_id = str(client.images.get(image).id).removeprefix("sha256:")
    except ImageNotFound:
        return None  # the container's creation says so, naming the fix
    name = f"bughunt-usr-{image_id[:16]}"
    try:
        with _host_lock():
            if not _exists(client, f"{name}-done"):
                _make(client, image, image_id, name)
                _prune(client)
    except (DockerException, requests.RequestException, OSError) as exc:
        log.warning("could not copy /usr of %s to a volume (cells read the image): %s", image, exc)
        return None
    return name


def _driver(client: Any) -> str:
    key = id(client)
    if key not in _DRIVERS:
        _DRIVERS[key] = str(client.info().get("Driver", ""))
    return _DRIVERS[key]


@contextlib.contextmanager
def _host_lock() -> Iterator[None]:
    """This process's threads one at a time, and this host's processes one at a time."""
    path = Path(tempfile.gettempdir()) / "bughunt-usr-volumes.lock"
    with _LOCK, path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _exists(client: Any, name: str) -> bool:
    try:
        client.volumes.get(name)
    except NotFound:
        return False
    return True


def _make(client: Any, image: str, image_id: str, name: str) -> None:
    """Copy ``/usr`` of ``image`` into a fresh ``name``, then mark it done."""
    labels = {LABEL: "1", USR_OF_LABEL: image_id}
    if _exists(client, name):  # a copy cut short
        client.volumes.get(name).remove(force=True)
    client.volumes.create(name=name, labels=labels)
    client.containers.run(
        image,
        ["cp", "-a", "/usr/.", f"{_STAGING}/"],
        user="0:0",
        network_mode="none",
        volumes={name: {"bind": _STAGING, "mode": "rw"}},
        labels={LABEL: "1", OWNER_LABEL: owner(), "bughunt.mode": "usr-copy"},
        remove=True,
    )
    client.volumes.create(name=f"{name}-done", labels=labels)
    log.info("copied /usr of %s to volume %s (read-only in its cells)", image, name)


def _prune(client: Any) -> None:
    """Remove the volumes of images the engine no longer has (those in use stay)."""
    have = {str(i.id).removeprefix("sha256:") for i in client.images.list(all=True)}
    for volume in client.volumes.list(filters={"label": USR_OF_LABEL}):
        if volume.attrs.get("Labels", {}).get(USR_OF_LABEL) not in have:
            with contextlib.suppress(APIError, NotFound):
                volume.remove()
