"""The image's /usr on the engine's own filesystem: a copy a test cannot tell from the image.

On an engine whose storage driver is fuse-overlayfs (this machine's and CI's)
each cell mounts a volume copy of its image's /usr and every execution sees it
at /usr; elsewhere nothing changes. The copies made here are of small images
built FROM the sandbox image, so the sandbox image's own copy, which other
tests' cells use at the same time, is never touched.
"""

from __future__ import annotations

import contextlib
import io
import logging
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from docker.errors import ImageNotFound

from tasks.sandbox.engine import CellExecutor
from tasks.sandbox.engine._cell import USR_COPY, bwrap_argv
from tasks.sandbox.engine._container import Limits
from tasks.sandbox.engine._usr_volume import FUSE_DRIVER, USR_OF_LABEL, usr_volume
from tests.tasks.sandbox.test_cells import LAYOUT

pytestmark = pytest.mark.docker

LISTING = "find /usr -printf '%p %m %U %G %s %T@ %y %l\\n' | sort | sha256sum"
"""Every path under /usr with its mode, owner, size, time, kind and link target, hashed."""


def _fuse(client: Any) -> bool:
    return str(client.info().get("Driver")) == FUSE_DRIVER


def _listing(client: Any, image: str, volume: str | None = None) -> str:
    """:data:`LISTING` as root in a plain container of ``image`` (no init, which would add its
    own file under /usr), with ``volume`` at /usr when given."""
    volumes = {volume: {"bind": "/usr", "mode": "ro"}} if volume else None
    out: bytes = client.containers.run(
        image, ["sh", "-c", LISTING], user="0:0", network_mode="none", volumes=volumes, remove=True
    )
    return out.decode().strip()


@pytest.fixture
def derived(docker_client: Any, sandbox_image: str) -> Iterator[list[str]]:
    """Two small images FROM the sandbox image (tags), removed with their volumes afterwards."""
    tags = []
    for n in (1, 2):
        tag = f"bughunt-usr-test:{uuid.uuid4().hex[:10]}"
        folder = "/usr/share/bughunt-test"
        dockerfile = f"FROM {sandbox_image}\nUSER 0\nRUN mkdir {folder} && echo {n} > {folder}/n\n"
        docker_client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
        tags.append(tag)
    ids = {str(docker_client.images.get(t).id).removeprefix("sha256:") for t in tags}
    yield tags
    for tag in tags:
        with contextlib.suppress(ImageNotFound):
            docker_client.images.remove(tag, force=True)
    for volume in docker_client.volumes.list(filters={"label": USR_OF_LABEL}):
        if volume.attrs.get("Labels", {}).get(USR_OF_LABEL) in ids:
            volume.remove(force=True)


def test_bwrap_binds_the_copy_at_usr_and_hides_where_the_cell_keeps_it() -> None:
    """With a copy, /usr is bound from it; the copy's own place is in no execution's root."""
    argv = bwrap_argv(LAYOUT + f"\nD\t{USR_COPY}", Limits(), usr=USR_COPY)
    binds = {(argv[i + 1], argv[i + 2]) for i, opt in enumerate(argv) if opt == "--ro-bind"}
    assert (USR_COPY, "/usr") in binds and ("/usr", "/usr") not in binds
    assert not any(USR_COPY in (source, dest) for source, dest in binds - {(USR_COPY, "/usr")})


@pytest.mark.usefixtures("sandbox_image")
def test_a_cells_executions_see_the_images_usr_from_the_copy_on_a_fuse_engine(
    docker_client: Any, sandbox_image: str, run_id: str
) -> None:
    """On fuse-overlayfs an execution's /usr is the volume, on the engine's filesystem, and
    holds what the image's /usr holds, stat for stat; on another driver there is no volume."""
    volume = usr_volume(docker_client, sandbox_image)
    if not _fuse(docker_client):
        assert volume is None
        return
    assert volume is not None
    assert _listing(docker_client, sandbox_image, volume) == _listing(docker_client, sandbox_image)
    with CellExecutor(run_id=run_id, image=sandbox_image, client=docker_client) as executor:
        mounts = executor.run(["cat", "/proc/self/mountinfo"]).output
    [usr] = [line.split() for line in mounts.splitlines() if line.split()[4] == "/usr"]
    assert usr[3].endswith(f"/volumes/{volume}/_data") and usr[5].startswith("ro"), usr


def test_a_copy_is_made_once_made_again_when_cut_short_and_goes_with_its_image(
    docker_client: Any, derived: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    """Threads asking at once get one copy; a copy never marked done is made again; making a
    copy removes the copies of images the engine no longer has."""
    if not _fuse(docker_client):
        assert usr_volume(docker_client, derived[0]) is None
        return
    first, second = derived
    names: list[str | None] = []
    with caplog.at_level(logging.INFO, logger="bughunt.sandbox"):
        threads = [
            threading.Thread(target=lambda: names.append(usr_volume(docker_client, first)))
            for _ in range(3)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    made = [r for r in caplog.records if "copied /usr of" in r.getMessage()]
    assert len(set(names)) == 1 and names[0] is not None and len(made) == 1
    name = names[0]
    assert _listing(docker_client, first, name) == _listing(docker_client, first)

    # cut short: the copy lost a file and was never marked done
    docker_client.volumes.get(f"{name}-done").remove()
    docker_client.containers.run(
        first,
        ["rm", "-r", "/mnt/v/share/bughunt-test"],
        user="0:0",
        network_mode="none",
        volumes={name: {"bind": "/mnt/v", "mode": "rw"}},
        remove=True,
    )
    assert usr_volume(docker_client, first) == name
    assert _listing(docker_client, first, name) == _listing(docker_client, first)

    # the first image goes: the next copy made takes its volumes with it
    docker_client.images.remove(first, force=True)
    assert usr_volume(docker_client, second) is not None
    left = {v.name for v in docker_client.volumes.list(filters={"label": USR_OF_LABEL})}
    assert not {name, f"{name}-done"} & left
