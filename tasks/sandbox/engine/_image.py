"""The sandbox image (docs/sandbox.md): find it by its recipe-hash tag, or build it.

Where no registry can be reached the image is built from a Debian root
filesystem made by ``debootstrap`` and imported into the engine
(``_rootfs``). Where one can, ``base_image`` builds it FROM a Debian-like
base through a tiny generated Dockerfile. Either way the tag is
``bughunt-sandbox:<12 hex>`` of the recipe's hash, so an image is rebuilt
only when its recipe changes.
"""

from __future__ import annotations

import fcntl
import io
import logging
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from docker.errors import APIError, BuildError, ImageNotFound

from bughunt.errors import InputError
from tasks.sandbox.engine._engine import connect
from tasks.sandbox.engine._errors import SandboxEngineError, SandboxImageError
from tasks.sandbox.engine._recipe import RECIPE, ImageRecipe, image_tag
from tasks.sandbox.engine._rootfs import build_from_debootstrap

log = logging.getLogger("bughunt.sandbox")


@dataclass(frozen=True, slots=True)
class ImageBuild:
    """What :func:`ensure_image` found or made."""

    tag: str
    """``bughunt-sandbox:<12 hex>``."""
    image_id: str
    """Engine id of the image (``sha256:…``)."""
    built: bool
    """True when this call built it, False when an existing image was reused."""
    seconds: float
    """Wall-clock seconds spent (lookup only, when reused)."""
    base_image: str | None
    """Base image it was built FROM, or None for the debootstrapped root filesystem."""


def ensure_image(
    client: Any | None = None,
    *,
    recipe: ImageRecipe = RECIPE,
    base_image: str | None = None,
    force: bool = False,
) -> ImageBuild:
    """Return the sandbox image for ``recipe``, building it only when it is missing.

    With ``force`` the image is rebuilt even when present: the tag moves to
    the new image and the old one is removed unless a container still uses it. Concurrent callers on one machine wait for each other
    (a file lock), so the image is built once. A bad ``base_image`` reference
    raises :class:`InputError` before the engine is contacted; a missing
    engine :class:`SandboxUnavailable`; a failed build
    :class:`SandboxImageError` with the tail of the build's output.
    """
    if base_image is not None:
        _check_base(base_image)
    client = client if client is not None else connect()
    tag = image_tag(recipe, base_image)
    start = time.monotonic()
    with _build_lock(tag):
        existing = _find(client, tag)
        if existing is not None and not force:
            return ImageBuild(tag, existing, False, time.monotonic() - start, base_image)
        log.info("building sandbox image %s (%s)", tag, base_image or "debootstrap")
        if base_image is None:
            build_from_debootstrap(client, recipe, tag)
        else:
            _build_from_base(client, recipe, base_image, tag)
        image_id = _find(client, tag)
        if image_id is None:
            raise SandboxImageError(f"the engine reported no image {tag} after building it")
        if existing is not None and existing != image_id:
            _remove_replaced(client, existing)
    seconds = time.monotonic() - start
    log.info("built sandbox image %s in %.1f s", tag, seconds)
    return ImageBuild(tag, image_id, True, seconds, base_image)


def _find(client: Any, tag: str) -> str | None:
    try:
        return str(client.images.get(tag).id)
    except ImageNotFound:
        return None
    except (APIError, requests.RequestException) as exc:
        raise SandboxEngineError(f"the engine could not look up image {tag}: {exc}") from exc


def _remove_replaced(client: Any, image_id: str) -> None:
    """Drop the image a forced rebuild replaced (untagged, ~170 MB), unless a container uses it."""
    try:
        client.images.remove(image_id)
    except (APIError, requests.RequestException) as exc:
        log.info("kept replaced image %s: %s", image_id, exc)


@contextmanager
def _build_lock(tag: str) -> Iterator[None]:
    path = Path(tempfile.gettempdir()) / f"{tag.replace(':', '-')}.build.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _check_base(base_image: str) -> None:
    if not base_image or any(ch.isspace() for ch in base_image):
        raise InputError(f"bad base image reference {base_image!r}", field="base_image")


def dockerfile(recipe: ImageRecipe, base_image: str, tag: str) -> str:
    """The Dockerfile that turns a Debian-like ``base_image`` into the sandbox image.

    Packages are installed only when missing (so a base that already has them
    builds without a package mirror); the user is added only when its ids are
    free. A ``base_image`` that is not one reference (empty, spaces, newlines)
    raises :class:`InputError`.
    """
    _check_base(base_image)
    packages = " ".join(recipe.packages)
    env = "ENV " + " ".join(f'{key}="{value}"' for key, value in recipe.env) + "\n"
    return (
        f"FROM {base_image}\n"
        "USER root\n"
        "RUN set -e; \\\n"
        f"    if ! dpkg -s {packages} >/dev/null 2>&1; then \\\n"
        "      apt-get update && \\\n"
        f"      apt-get install -y --no-install-recommends {packages} && \\\n"
        "      rm -rf /var/lib/apt/lists/*; \\\n"
        "    fi; \\\n"
        f"    getent group {recipe.gid} >/dev/null || groupadd -g {recipe.gid} {recipe.user}; \\\n"
        f"    getent passwd {recipe.uid} >/dev/null || \\\n"
        f"      useradd -u {recipe.uid} -g {recipe.gid} -M -d {recipe.home} -s /bin/sh {recipe.user}; \\\n"
        f"    mkdir -p {recipe.home} {recipe.workdir}; \\\n"
        f"    chown {recipe.uid}:{recipe.gid} {recipe.home} {recipe.workdir}\n"
        f"{env}"
        f"WORKDIR {recipe.workdir}\n"
        f"LABEL bughunt.sandbox.tag={tag}\n"
        f"USER {recipe.uid}:{recipe.gid}\n"
        'CMD ["python3"]\n'
    )


def _build_from_base(client: Any, recipe: ImageRecipe, base_image: str, tag: str) -> None:
    text = dockerfile(recipe, base_image, tag)
    try:
        client.images.build(
            fileobj=io.BytesIO(text.encode()), tag=tag, rm=True, forcerm=True, pull=False
        )
    except BuildError as exc:
        lines = [str(chunk.get("stream") or chunk.get("error") or "") for chunk in exc.build_log]
        tail = "".join(lines)[-3000:]
        raise SandboxImageError(f"building FROM {base_image} failed: {exc.msg}\n{tail}") from exc
    except (APIError, requests.RequestException) as exc:
        raise SandboxImageError(f"building FROM {base_image} failed: {exc}") from exc
