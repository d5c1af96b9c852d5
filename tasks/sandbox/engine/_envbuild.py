"""Building an environment image: fetch on the host, install without network, commit.

The build container is the base image as root with no network; what was
fetched (``_fetch``) is copied in, ``dpkg -i`` installs the packages and
Debian's pip, run from its wheel, installs the wheels, building there (and
nowhere else) the pinned source distributions of projects that publish no
wheel. The container is
committed with the base's user, environment, working folder and command,
and removed whatever happens. Changing anything here changes the images:
bump ``_environments.BUILD_FORMAT``.
"""

from __future__ import annotations

import logging
import shutil
import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import requests
from docker.errors import APIError

from bughunt.hashing import canonical_json
from tasks.sandbox.engine._container import remove_quietly
from tasks.sandbox.engine._errors import SandboxEngineError, SandboxImageError
from tasks.sandbox.engine._fetch import (
    PIP_WHEEL_PACKAGE,
    Apt,
    Requirements,
    pip_download,
    pip_index,
)
from tasks.sandbox.engine._labels import LABEL, OWNER_LABEL, RUN_LABEL, owner
from tasks.sandbox.engine._recipe import RECIPE

if TYPE_CHECKING:
    from tasks.sandbox.engine._environments import EnvironmentRecipe

log = logging.getLogger("bughunt.sandbox")

RECIPE_LABEL = "bughunt.environment.recipe"
"""Image label holding the recipe (canonical JSON)."""
BASE_ID_LABEL = "bughunt.environment.base_id"
"""Image label holding the id of the base image it was built FROM."""
BUILD_TIMEOUT_S = 1800
"""Deadline of the install inside the build container."""
BUILD_TOOL_PACKAGES = ("python3-setuptools-whl", "python3-wheel-whl")
"""Debian's setuptools and wheel as wheels: what a pinned source distribution is built with in
the build container (fetched only when there is one, never installed in the image)."""

_STAGING = "/var/tmp/bughunt-env"  # noqa: S108 - inside the build container, which is ours alone
# What the build container runs: packages first (pip may need a library), then
# the wheels with Debian's own pip run from its wheel (the base has no pip and
# does not get one), then nothing of the build is left in the image.
_INSTALL = f"""set -eu
export DEBIAN_FRONTEND=noninteractive
cd {_STAGING}
# dpkg -i takes the files in no dependency order: one whose pre-dependency is in the
# same batch is refused until that one is configured, which the next pass finds done.
if [ -d debs ]; then dpkg -i debs/*.deb || dpkg -i debs/*.deb || dpkg -i debs/*.deb; fi
if [ -f requirements.txt ]; then
  dpkg-deb -x pip.deb pip
  binary=--only-binary=:all:
  tools=
  if [ -d tools ]; then
    # Pinned source distributions are in wheels/: built here, without network, with
    # Debian's setuptools and wheel as the only build requirements on offer.
    for deb in tools/*.deb; do dpkg-deb -x "$deb" tools/x; done
    binary=
    tools="--find-links tools/x/usr/share/python-wheels"
  fi
  PYTHONPATH="$(echo pip/usr/share/python-wheels/pip-*.whl)" python3 -m pip install \\
    --no-index --find-links wheels $tools $binary --require-hashes \\
    --break-system-packages --root-user-action=ignore --no-warn-script-location \\
    --disable-pip-version-check --no-cache-dir --progress-bar off -r requirements.txt
fi
cd / && rm -rf {_STAGING}
"""


class EnvironmentBuilder:
    """One environment image build: fetch on the host, install in a container, commit as
    ``recipe.tag``.

    ``recipe`` names the image, its Debian packages and what the image's
    label records; ``requirements`` are the checked pins and the file they
    were read from (never handed to pip);
    ``base`` the base image's inspection (its id, architecture and config);
    ``agent`` and ``where`` (the config field) name the build in its errors.
    """

    def __init__(
        self,
        client: Any,
        *,
        recipe: EnvironmentRecipe,
        requirements: Requirements | None,
        base: Mapping[str, Any],
        agent: str,
        where: str,
    ) -> None:
        self.client, self.tag, self.recipe = client, recipe.tag, recipe.as_json()
        self.debian = list(recipe.debian)
        self.requirements, self.base, self.agent, self.where = requirements, base, agent, where

    def run(self, labels: Mapping[str, str]) -> tuple[int, int]:
        """Build and tag the image; the numbers of .deb files and wheels it installed."""
        work = Path(tempfile.mkdtemp(prefix="bughunt-env-"))
        try:
            return self._run(work, labels)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _run(self, work: Path, labels: Mapping[str, str]) -> tuple[int, int]:
        staging = work / "staging"
        staging.mkdir()
        apt = Apt(work / "apt", suite=RECIPE.suite, docker_arch=self.base.get("Architecture", ""))
        apt.update()
        debian = self.debian
        if debian:  # names first: an unknown package is bad input, found before any container
            apt.check_names(debian, file=None, field=f"{self.where}.debian")
        wheels: list[Path] = []
        if self.requirements is not None:
            field = f"{self.where}.requirements"
            # Written by the host from the checked pins into staging: the user's file never
            # reaches a pip, here or in the build container.
            fetched = pip_download(
                self.requirements, staging, apt.platform(), index=pip_index(), field=field
            )
            wheels = [*fetched.wheels, *fetched.sdists]
            shutil.copyfile(apt.download(PIP_WHEEL_PACKAGE), staging / "pip.deb")
            if fetched.sdists:
                (staging / "tools").mkdir()
                for package in BUILD_TOOL_PACKAGES:
                    deb = apt.download(package)
                    shutil.copyfile(deb, staging / "tools" / deb.name)
        (staging / "install.sh").write_text(_INSTALL)
        container = self._create()
        try:
            debs: list[Path] = []
            if debian:
                status = self._dpkg_status(container, work / "status")
                debs = apt.download_missing(
                    debian, status=status, file=None, field=f"{self.where}.debian"
                )
                if debs:  # none when the base has them all
                    (staging / "debs").mkdir()
                for deb in debs:
                    shutil.copyfile(deb, staging / "debs" / deb.name)
            self._install(container, staging, work / "staging.tar")
            self._commit(container, labels)
        finally:
            remove_quietly(container)
        return len(debs), len(wheels)

    def _fail(self, what: str) -> SandboxImageError:
        return SandboxImageError(f"{self.agent} ({self.where}): building {self.tag} failed: {what}")

    def _create(self) -> Any:
        """The build container: the base as root, no network, labelled for the sweep."""
        try:
            return self.client.containers.create(
                image=self.base["Id"],
                command=["sh", f"{_STAGING}/install.sh"],
                user="0:0",
                network_mode="none",
                security_opt=["no-new-privileges"],
                labels={
                    LABEL: "1",
                    RUN_LABEL: f"build {self.tag}",
                    OWNER_LABEL: owner(),
                    "bughunt.mode": "environment-build",
                },
            )
        except (APIError, requests.RequestException) as exc:
            raise SandboxEngineError(
                f"the engine could not create a build container: {exc}"
            ) from exc

    def _dpkg_status(self, container: Any, dest: Path) -> Path:
        """The base's ``/var/lib/dpkg/status``, read from the (never started) build container."""
        archive = dest.with_suffix(".tar")
        try:
            chunks, _stat = container.get_archive("/var/lib/dpkg/status")
            with archive.open("wb") as handle:
                for chunk in chunks:
                    handle.write(chunk)
        except (APIError, requests.RequestException) as exc:
            raise self._fail(f"cannot read the base's dpkg status: {exc}") from exc
        with tarfile.open(archive) as tar:
            member = tar.extractfile("status")
            if member is None:
                raise self._fail("the base has no dpkg status file")
            dest.write_bytes(member.read())
        return dest

    def _install(self, container: Any, staging: Path, archive: Path) -> None:
        """Copy what was fetched in, run the install, raise with its last lines when it fails."""
        with tarfile.open(archive, "w") as tar:
            tar.add(staging, arcname=Path(_STAGING).name, filter=_root_owned)
        try:
            with archive.open("rb") as handle:
                container.put_archive(str(Path(_STAGING).parent), handle)
            container.start()
        except (APIError, requests.RequestException) as exc:
            raise self._fail(f"the engine could not start the build: {exc}") from exc
        try:
            code = int(container.wait(timeout=BUILD_TIMEOUT_S).get("StatusCode", -1))
        except (requests.exceptions.Timeout, requests.exceptions.ConnectionError) as exc:
            raise self._fail(f"the install did not end within {BUILD_TIMEOUT_S} s ({exc})") from exc
        try:
            output = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
        except (APIError, requests.RequestException) as exc:
            raise self._fail(f"the engine failed: {exc}") from exc
        for line in output.splitlines():
            log.debug("build %s: %s", self.tag, line)
        if code != 0:
            tail = [line.strip() for line in output.splitlines() if line.strip()][-4:]
            raise self._fail(f"the install exited {code}: {' | '.join(tail) or 'no output'}")

    def _commit(self, container: Any, labels: Mapping[str, str]) -> None:
        """Commit the container as the tag, with the base's user, environment, folder and command.

        The engine merges the container's own labels into the image's; the
        sweep labels are blanked, so no container made from the image is
        taken for this build's leftover.
        """
        config = self.base.get("Config") or {}
        image_labels = {
            **(config.get("Labels") or {}),
            LABEL: "",
            RUN_LABEL: "",
            OWNER_LABEL: "",
            "bughunt.mode": "",
            RECIPE_LABEL: canonical_json(dict(self.recipe)).decode(),
            BASE_ID_LABEL: self.base["Id"],
            **labels,
        }
        conf = {
            "User": config.get("User") or f"{RECIPE.uid}:{RECIPE.gid}",
            "Env": config.get("Env") or [],
            "WorkingDir": config.get("WorkingDir") or RECIPE.workdir,
            "Cmd": config.get("Cmd") or ["python3"],
            "Entrypoint": config.get("Entrypoint"),
            "Labels": image_labels,
        }
        repository, _, version = self.tag.partition(":")
        try:
            container.commit(repository=repository, tag=version, conf=conf)
        except (APIError, requests.RequestException) as exc:
            raise self._fail(f"the engine could not commit the image: {exc}") from exc


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info
