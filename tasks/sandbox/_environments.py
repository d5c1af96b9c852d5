"""Agent environments (docs/sandbox.md, "Agent environments"): images FROM the sandbox base.

An agent declares the Debian packages and the hashed Python requirements it
needs (:class:`~bughunt.models.AgentEnvironment`). Its image is tagged
``bughunt-env:<12 hex>`` of the recipe's hash (the base's tag, the sorted
package names, the requirements file's bytes, the build steps' version), so
it is built once and rebuilt only when one of them changes, or when the
base's tag has moved to a rebuilt image. Everything is fetched on the host
(``_fetch``) and installed in a build container without network, which is
committed with the base's user, environment, working folder and command.
"""

from __future__ import annotations

import logging
import re
import shutil
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from docker.errors import APIError, ImageNotFound

from bughunt.errors import InputError
from bughunt.hashing import canonical_json, hash_json, sha256_bytes
from bughunt.models import AgentEnvironment, AgentMode, AgentVersion
from corpus import Corpus
from tasks.sandbox._container import remove_quietly
from tasks.sandbox._engine import connect
from tasks.sandbox._errors import SandboxEngineError, SandboxImageError
from tasks.sandbox._fetch import PIP_WHEEL_PACKAGE, Apt, pip_download
from tasks.sandbox._image import _build_lock, ensure_image
from tasks.sandbox._labels import LABEL, OWNER_LABEL, RUN_LABEL, owner
from tasks.sandbox._recipe import RECIPE, image_tag

log = logging.getLogger("bughunt.sandbox")

REPOSITORY = "bughunt-env"
"""Repository part of every environment image tag."""
BUILD_FORMAT = 1
"""Version of the build steps below and in ``_fetch``; part of the hash, bumped when they change."""
RECIPE_LABEL = "bughunt.environment.recipe"
"""Image label holding the recipe (canonical JSON)."""
BASE_ID_LABEL = "bughunt.environment.base_id"
"""Image label holding the id of the base image it was built FROM."""
BUILD_TIMEOUT_S = 1800
"""Deadline of the install inside the build container."""

_DEBIAN_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
_HASH = re.compile(r"(?:^|\s)--hash[=\s]+[A-Za-z0-9]+:[0-9a-fA-F]+")
_PINNED = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?\s*===?\s*[A-Za-z0-9.+!_-]+\s*(;.*)?$"
)
_INDEX_OPTIONS = ("-i", "--index-url", "--extra-index-url")
_STAGING = "/var/tmp/bughunt-env"  # noqa: S108 - inside the build container, which is ours alone
# What the build container runs: packages first (pip may need a library), then
# the wheels with Debian's own pip run from its wheel (the base has no pip and
# does not get one), then nothing of the build is left in the image.
_INSTALL = f"""set -eu
export DEBIAN_FRONTEND=noninteractive
cd {_STAGING}
if [ -d debs ]; then dpkg -i debs/*.deb; fi
if [ -f requirements.txt ]; then
  dpkg-deb -x pip.deb pip
  PYTHONPATH="$(echo pip/usr/share/python-wheels/pip-*.whl)" python3 -m pip install \\
    --no-index --find-links wheels --only-binary=:all: --require-hashes \\
    --break-system-packages --root-user-action=ignore --no-warn-script-location \\
    --disable-pip-version-check --no-cache-dir --progress-bar off -r requirements.txt
fi
cd / && rm -rf {_STAGING}
"""


def check_requirements(data: bytes, *, file: str, field: str) -> list[str]:
    """The requirement lines of a hashed requirements file, or InputError naming file:line.

    Every requirement must be a name pinned with ``==`` and carry at least
    one ``--hash``; the only options allowed are index URLs (no ``-r``,
    ``-e``, paths or URLs, which could reach outside the corpus).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 ({exc.reason})", file=file, field=field) from None
    found: list[str] = []
    for number, line in _logical_lines(text):
        if line.startswith("-"):
            if line.split("=", 1)[0].split()[0] not in _INDEX_OPTIONS:
                raise InputError(
                    f"option {line.split()[0]!r} is not allowed: only pinned, hashed requirements "
                    "and index URLs",
                    file=file,
                    line=number,
                    field=field,
                )
            continue
        spec = re.split(r"\s--hash", " " + line, maxsplit=1)[0].strip()
        if not _HASH.search(line):
            raise InputError(
                f"requirement {spec!r} has no --hash (write the file with "
                "`pip-compile --generate-hashes`)",
                file=file,
                line=number,
                field=field,
            )
        if not _PINNED.match(spec):
            raise InputError(
                f"requirement {spec!r} is not a project pinned with == (no paths or URLs)",
                file=file,
                line=number,
                field=field,
            )
        found.append(spec)
    return found


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each logical line: continuations joined, comments cut."""
    lines: list[tuple[int, str]] = []
    start, parts = 0, list[str]()
    for number, raw in enumerate(text.splitlines(), start=1):
        if not parts:
            start = number
        stripped = raw.rstrip()
        if stripped.endswith("\\"):
            parts.append(stripped[:-1])
            continue
        parts.append(stripped)
        line = re.sub(r"(^|\s)#.*$", "", " ".join(parts)).strip()
        parts = []
        if line:
            lines.append((start, line))
    return lines


@dataclass(frozen=True, slots=True)
class EnvironmentRecipe:
    """Everything that decides an environment image's content; its hash names the image."""

    base: str
    """Tag of the sandbox image it is built FROM."""
    debian: tuple[str, ...]
    """Debian package names, sorted, each once."""
    requirements: str | None
    """sha256 of the requirements file's bytes, or None without one."""

    def as_json(self) -> dict[str, Any]:
        """The recipe with the build steps' version: what is hashed and put in a label."""
        return {
            "format": BUILD_FORMAT,
            "base": self.base,
            "debian": list(self.debian),
            "requirements": self.requirements,
        }

    @property
    def tag(self) -> str:
        """``bughunt-env:<12 hex>`` of the recipe's hash."""
        return f"{REPOSITORY}:{hash_json(self.as_json())[:12]}"


def environment_recipe(
    env: AgentEnvironment, *, corpus_root: Path, base: str | None = None, where: str = "environment"
) -> tuple[EnvironmentRecipe, Path | None]:
    """The recipe of ``env`` on ``base`` (default: the sandbox image's tag) and its requirements path.

    Reads and checks the requirements file (relative to ``corpus_root``):
    a bad package name, a missing file or a requirement without a hash is an
    :class:`InputError` naming ``where``'s field (and file:line). No engine,
    no network.
    """
    for i, name in enumerate(env.debian):
        if not _DEBIAN_NAME.match(name):
            raise InputError(f"not a Debian package name: {name!r}", field=f"{where}.debian[{i}]")
    path: Path | None = None
    digest: str | None = None
    if env.requirements is not None:
        path = corpus_root / env.requirements
        field = f"{where}.requirements"
        if not path.is_file():
            raise InputError(f"requirements file {str(path)!r} does not exist", field=field)
        data = path.read_bytes()
        check_requirements(data, file=str(path), field=field)
        digest = sha256_bytes(data)
    recipe = EnvironmentRecipe(base or image_tag(), tuple(sorted(set(env.debian))), digest)
    return recipe, path


@dataclass(frozen=True, slots=True)
class EnvironmentBuild:
    """What :func:`ensure_environment` found or made."""

    tag: str
    """``bughunt-env:<12 hex>``."""
    image_id: str
    """Engine id of the image."""
    built: bool
    """True when this call built it, False when an existing image was reused."""
    seconds: float
    """Wall-clock seconds spent (lookup only, when reused)."""
    debs: int = 0
    """.deb files installed by this build (the packages and what they need beyond the base)."""
    wheels: int = 0
    """Wheels installed by this build."""


def ensure_environment(
    env: AgentEnvironment,
    *,
    corpus_root: Path,
    client: Any | None = None,
    base: str | None = None,
    agent: str = "-",
    where: str = "environment",
    labels: Mapping[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> EnvironmentBuild:
    """The image of ``env`` FROM ``base`` (default: the sandbox image, built if missing).

    Built only when no image carries its tag, or the one that does was built
    FROM an image the base's tag no longer names; concurrent callers on one
    machine wait for each other. ``labels`` are added to a built image (not
    to the recipe). ``progress`` is told one line when a build starts and
    one when it ends. Bad input — a bad name, a requirement without hash, a
    Debian package or wheel that does not exist — is an :class:`InputError`
    naming ``where``'s field, raised before any container is created; a
    build that fails :class:`SandboxImageError` naming ``agent``, the field
    and the last lines of its output.
    """
    recipe, requirements = environment_recipe(env, corpus_root=corpus_root, base=base, where=where)
    client = client if client is not None else connect()
    if base is None:
        ensure_image(client)
    tag, say = recipe.tag, progress or log.info
    base_attrs = _inspect(client, recipe.base)
    if base_attrs is None:
        raise SandboxImageError(
            f"base image {recipe.base} of agent {agent}'s environment is missing"
        )
    start = time.monotonic()
    with _build_lock(tag):
        existing = _inspect(client, tag)
        if existing is not None and _labels(existing).get(BASE_ID_LABEL) == base_attrs["Id"]:
            return EnvironmentBuild(tag, existing["Id"], False, time.monotonic() - start)
        say(
            f"building environment image {tag} for agent {agent} ({len(recipe.debian)} Debian "
            f"package(s), {'a' if requirements else 'no'} requirements file)…"
        )
        build = _Build(client, recipe, requirements, base_attrs, agent=agent, where=where)
        debs, wheels = build.run(labels or {})
        made = _inspect(client, tag)
        if made is None:
            raise SandboxImageError(f"the engine reported no image {tag} after building it")
        if existing is not None and existing["Id"] != made["Id"]:
            _remove_replaced(client, existing["Id"])
    seconds = time.monotonic() - start
    say(
        f"built environment image {tag} for agent {agent} in {seconds:.1f} s "
        f"({debs} .deb file(s), {wheels} wheel(s))"
    )
    return EnvironmentBuild(tag, made["Id"], True, seconds, debs, wheels)


def _environments(
    corpus: Corpus, agents: Sequence[AgentVersion] | None
) -> list[tuple[AgentVersion, str]]:
    """Command agents that need an image of their own, each with its config field path."""
    index = {a.name: i for i, a in enumerate(corpus.config.agents)}
    chosen = corpus.config.agents if agents is None else agents
    return [
        (a, f"agents[{index[a.name]}].environment" if a.name in index else "environment")
        for a in chosen
        if a.mode is AgentMode.COMMAND
        and a.image is None  # an explicit image wins
        and a.environment is not None
        and (a.environment.debian or a.environment.requirements)
    ]


def corpus_images(
    corpus: Corpus, agents: Sequence[AgentVersion] | None = None, *, base: str | None = None
) -> dict[str, str]:
    """Agent name → environment image tag, for each command agent (of ``agents``) with an environment.

    No engine, no network; every environment is checked (:func:`environment_recipe`).
    """
    return {
        agent.name: environment_recipe(
            agent.environment, corpus_root=corpus.root, base=base, where=where
        )[0].tag
        for agent, where in _environments(corpus, agents)
        if agent.environment is not None
    }


def ensure_corpus_images(
    corpus: Corpus,
    agents: Sequence[AgentVersion] | None = None,
    *,
    client: Any | None = None,
    base: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, EnvironmentBuild]:
    """Agent name → its environment image, each built when missing (:func:`ensure_environment`).

    Every environment is checked before the first is built, so bad input in
    any of them stops everything before a container exists.
    """
    corpus_images(corpus, agents, base=base)
    client = client if client is not None else connect()
    base = base or ensure_image(client).tag
    return {
        agent.name: ensure_environment(
            agent.environment,
            corpus_root=corpus.root,
            client=client,
            base=base,
            agent=agent.name,
            where=where,
            progress=progress,
        )
        for agent, where in _environments(corpus, agents)
        if agent.environment is not None
    }


def announce(line: str) -> None:
    """A build's progress line: in the log, and on stderr (a run shows no info log)."""
    log.info("%s", line)
    print(line, file=sys.stderr, flush=True)


class _Build:
    """One environment image build: fetch on the host, install in a container, commit."""

    def __init__(
        self,
        client: Any,
        recipe: EnvironmentRecipe,
        requirements: Path | None,
        base: dict[str, Any],
        *,
        agent: str,
        where: str,
    ) -> None:
        self.client, self.recipe, self.requirements, self.base = client, recipe, requirements, base
        self.agent, self.where = agent, where

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
        debian = list(self.recipe.debian)
        if debian:  # names first: an unknown package is bad input, found before any container
            apt.check_names(debian, file=None, field=f"{self.where}.debian")
        wheels: list[Path] = []
        if self.requirements is not None:
            field = f"{self.where}.requirements"
            wheels = pip_download(
                self.requirements, staging / "wheels", apt.platform(), field=field
            )
            shutil.copyfile(apt.download(PIP_WHEEL_PACKAGE), staging / "pip.deb")
            shutil.copyfile(self.requirements, staging / "requirements.txt")
        (staging / "install.sh").write_text(_INSTALL)
        container = self._create()
        try:
            debs: list[Path] = []
            if debian:
                status = self._dpkg_status(container, work / "status")
                debs = apt.download_missing(
                    debian, status=status, file=None, field=f"{self.where}.debian"
                )
                (staging / "debs").mkdir()
                for deb in debs:
                    shutil.copyfile(deb, staging / "debs" / deb.name)
            self._install(container, staging, work / "staging.tar")
            self._commit(container, labels)
        finally:
            remove_quietly(container)
        return len(debs), len(wheels)

    def _fail(self, what: str) -> SandboxImageError:
        return SandboxImageError(
            f"agent {self.agent} ({self.where}): building {self.recipe.tag} failed: {what}"
        )

    def _create(self) -> Any:
        """The build container: the base as root, no network, labelled for the sweep."""
        try:
            return self.client.containers.create(
                image=self.recipe.base,
                command=["sh", f"{_STAGING}/install.sh"],
                user="0:0",
                network_mode="none",
                security_opt=["no-new-privileges"],
                labels={
                    LABEL: "1",
                    RUN_LABEL: f"build {self.recipe.tag}",
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
            log.debug("build %s: %s", self.recipe.tag, line)
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
            RECIPE_LABEL: canonical_json(self.recipe.as_json()).decode(),
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
        repository, _, version = self.recipe.tag.partition(":")
        try:
            container.commit(repository=repository, tag=version, conf=conf)
        except (APIError, requests.RequestException) as exc:
            raise self._fail(f"the engine could not commit the image: {exc}") from exc


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def _inspect(client: Any, tag: str) -> dict[str, Any] | None:
    try:
        return dict(client.api.inspect_image(tag))
    except ImageNotFound:
        return None
    except (APIError, requests.RequestException) as exc:
        raise SandboxEngineError(f"the engine could not look up image {tag}: {exc}") from exc


def _labels(attrs: Mapping[str, Any]) -> dict[str, str]:
    return dict((attrs.get("Config") or {}).get("Labels") or {})


def _remove_replaced(client: Any, image_id: str) -> None:
    """Drop the image a rebuild replaced (built FROM an older base), unless a container uses it."""
    try:
        client.images.remove(image_id)
    except (APIError, requests.RequestException) as exc:
        log.info("kept replaced environment image %s: %s", image_id, exc)
