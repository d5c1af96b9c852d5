"""Agent environments (docs/sandbox.md, "Agent environments"): images FROM the sandbox base.

An agent declares the Debian packages and the hashed Python requirements it
needs (:class:`~bughunt.models.AgentEnvironment`). Its image is tagged
``bughunt-env:<12 hex>`` of the recipe's hash (the base's tag, the sorted
package names, the requirements file's bytes, the build steps' version), so
it is built once and rebuilt only when one of them changes, or when the
base's tag has moved to a rebuilt image. Everything is fetched on the host
(``_fetch``) and installed in a build container without network
(``_envbuild``), committed with the base's user, environment, working
folder and command.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import requests
from docker.errors import APIError, ImageNotFound

from bughunt.errors import InputError
from bughunt.hashing import hash_json, sha256_bytes
from bughunt.models import AgentEnvironment, AgentMode, AgentVersion
from bughunt.safeio import CONFIG_LIMIT, read_input
from corpus import Corpus, TargetConfig
from tasks.sandbox.engine._engine import connect
from tasks.sandbox.engine._envbuild import BASE_ID_LABEL, EnvironmentBuilder
from tasks.sandbox.engine._errors import SandboxEngineError, SandboxImageError
from tasks.sandbox.engine._fetch import Requirements
from tasks.sandbox.engine._image import _build_lock, ensure_image
from tasks.sandbox.engine._recipe import image_tag
from tasks.sandbox.engine._requirements import check_requirements

log = logging.getLogger("bughunt.sandbox")

REPOSITORY = "bughunt-env"
"""Repository part of every environment image tag."""
BUILD_FORMAT = 3
"""Version of the build steps (``_envbuild``, ``_fetch``); part of the hash, bumped when they change."""

_DEBIAN_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")


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
) -> tuple[EnvironmentRecipe, Requirements | None]:
    """The recipe of ``env`` on ``base`` (default: the sandbox image's tag) and its checked pins.

    Reads and checks the requirements file (relative to ``corpus_root``):
    a bad package name, a missing file, or a line that is not
    ``name==version --hash=...`` (any option, a path, a URL, no hash) is an
    :class:`InputError` naming ``where``'s field (and file:line). No engine,
    no network. A Debian name is checked to be exact against the archive's
    index later, before any container (:meth:`tasks.sandbox.engine._fetch.Apt.check_names`).
    """
    for i, name in enumerate(env.debian):
        if not _DEBIAN_NAME.match(name):
            raise InputError(f"not a Debian package name: {name!r}", field=f"{where}.debian[{i}]")
    checked: Requirements | None = None
    digest: str | None = None
    if env.requirements is not None:
        path = corpus_root / env.requirements
        field = f"{where}.requirements"
        if not os.path.lexists(path):
            raise InputError(f"requirements file {str(path)!r} does not exist", field=field)
        try:
            data = read_input(path, limit=CONFIG_LIMIT, what="a requirements file")
        except InputError as exc:
            raise InputError(exc.message, file=exc.file, field=field) from None
        pins = check_requirements(data, file=str(path), field=field)
        checked = Requirements(path, tuple(pins))
        digest = sha256_bytes(data)
    recipe = EnvironmentRecipe(base or image_tag(), tuple(sorted(set(env.debian))), digest)
    return recipe, checked


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


@dataclass(frozen=True, slots=True)
class EnvironmentOwner:
    """Whose environment an image is, as its errors and progress lines name it."""

    name: str = "-"
    """The agent's (or target's) name; ``-`` names none."""
    kind: Literal["agent", "target"] = "agent"
    """What ``name`` names."""
    where: str = "environment"
    """The environment's field in the configuration."""


def ensure_environment(
    env: AgentEnvironment,
    *,
    corpus_root: Path,
    client: Any | None = None,
    base: str | None = None,
    owner: EnvironmentOwner = EnvironmentOwner(),
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
    naming ``owner.where``'s field, raised before any container is created; a
    build that fails :class:`SandboxImageError` naming the owner, the field
    and the last lines of its output.
    """
    agent, kind, where = owner.name, owner.kind, owner.where
    with _naming(agent, kind):
        recipe, requirements = environment_recipe(
            env, corpus_root=corpus_root, base=base, where=where
        )
    client = client if client is not None else connect()
    if base is None:
        ensure_image(client)
    tag, say = recipe.tag, progress or log.info
    base_attrs = _inspect(client, recipe.base)
    if base_attrs is None:
        raise SandboxImageError(
            f"base image {recipe.base} of {kind} {agent}'s environment is missing"
        )
    start = time.monotonic()
    with _build_lock(tag):
        existing = _inspect(client, tag)
        if existing is not None and _labels(existing).get(BASE_ID_LABEL) == base_attrs["Id"]:
            return EnvironmentBuild(tag, existing["Id"], False, time.monotonic() - start)
        say(
            f"building environment image {tag} for {kind} {agent} ({len(recipe.debian)} Debian "
            f"package(s), {'a' if requirements else 'no'} requirements file)…"
        )
        build = EnvironmentBuilder(
            client,
            recipe=recipe,
            requirements=requirements,
            base=base_attrs,
            agent=f"{kind} {agent}",
            where=where,
        )
        with _naming(agent, kind):
            debs, wheels = build.run(labels or {})
        made = _inspect(client, tag)
        if made is None:
            raise SandboxImageError(f"the engine reported no image {tag} after building it")
        if existing is not None and existing["Id"] != made["Id"]:
            _remove_replaced(client, existing["Id"])
    seconds = time.monotonic() - start
    say(
        f"built environment image {tag} for {kind} {agent} in {seconds:.1f} s "
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


def _target_environments(corpus: Corpus) -> list[tuple[TargetConfig, str]]:
    """Targets that need an image of their own, each with its config field path."""
    return [
        (t, f"targets[{i}].environment")
        for i, t in enumerate(corpus.targets)
        if t.environment is not None and (t.environment.debian or t.environment.requirements)
    ]


def target_label(target: str) -> str:
    """How a target's image is named among a corpus's images (``target:<name>``)."""
    return f"target:{target}"


def agent_on_target(agent: str, target: str) -> str:
    """How an agent's image on a target with an environment is named (``<agent>@<target>``)."""
    return f"{agent}@{target}"


def corpus_images(
    corpus: Corpus,
    agents: Sequence[AgentVersion] | None = None,
    *,
    base: str | None = None,
    target_errors: dict[str, str] | None = None,
) -> dict[str, str]:
    """Every environment image a run on ``corpus`` needs, by name → tag.

    A command agent (of ``agents``) with an environment: its name. A target
    with an environment: ``target:<name>``. A command agent on such a target
    runs FROM the target's image (the target's packages are what its tests
    need): ``<agent>@<target>``, its own environment on top when it has one.
    No engine, no network; every environment is checked (:func:`environment_recipe`).

    Bad input in an agent's environment raises :class:`InputError`. So does a
    target's, unless ``target_errors`` is given: then the target's one-line
    error is put there under its name, and its images are left out (a run
    loses that target's cases only).
    """
    tags: dict[str, str] = {}
    for agent, where in _environments(corpus, agents):
        assert agent.environment is not None  # _environments keeps only these
        with _naming(agent.name):
            recipe, _path = environment_recipe(
                agent.environment, corpus_root=corpus.root, base=base, where=where
            )
        tags[agent.name] = recipe.tag
    for target, where in _target_environments(corpus):
        assert target.environment is not None
        try:
            with _naming(target.name, "target"):
                recipe, _path = environment_recipe(
                    target.environment, corpus_root=corpus.root, base=base, where=where
                )
        except InputError as exc:
            if target_errors is None:
                raise
            target_errors[target.name] = _located(corpus, exc)
            continue
        tags[target_label(target.name)] = recipe.tag
        for agent, on in _agents_on(corpus, agents, recipe.tag):
            tags[agent_on_target(agent.name, target.name)] = on
    return tags


def _located(corpus: Corpus, exc: InputError) -> str:
    """``exc`` on one line, in ``corpus.toml`` when it names no other file."""
    if exc.file is None:
        exc = InputError(exc.message, file=str(corpus.config_file), line=exc.line, field=exc.field)
    return exc.describe().splitlines()[0]


def _agents_on(
    corpus: Corpus, agents: Sequence[AgentVersion] | None, base: str
) -> list[tuple[AgentVersion, str]]:
    """Each command agent (no explicit image) on a target with an image ``base``: the tag it
    runs in there (its own environment FROM ``base``, or ``base`` itself)."""
    chosen = corpus.config.agents if agents is None else agents
    out = []
    for agent in chosen:
        if agent.mode is not AgentMode.COMMAND or agent.image is not None:
            continue
        env = agent.environment
        if env is not None and (env.debian or env.requirements):
            with _naming(agent.name):
                recipe, _path = environment_recipe(env, corpus_root=corpus.root, base=base)
            out.append((agent, recipe.tag))
        else:
            out.append((agent, base))
    return out


@dataclass(frozen=True, slots=True)
class RunImages:
    """The images one sandbox stage runs in, beyond the sandbox base."""

    builds: dict[str, EnvironmentBuild]
    """Every environment image by its name in :func:`corpus_images` (built or reused)."""
    failed: dict[str, str] = field(default_factory=dict)
    """Targets whose environment could not be built, each with its one-line reason: their
    cases do not run."""

    def target(self, name: str) -> EnvironmentBuild | None:
        """The image a target's suite and reproduction tests run in; None: the base."""
        return self.builds.get(target_label(name))

    def agent(self, agent: str, target: str) -> str | None:
        """The image ``agent`` runs in on a case of ``target``; None: the base."""
        on = self.builds.get(agent_on_target(agent, target))
        if on is not None:
            return on.tag
        own = self.builds.get(agent)
        return own.tag if own is not None else None


def ensure_corpus_images(
    corpus: Corpus,
    agents: Sequence[AgentVersion] | None = None,
    *,
    client: Any | None = None,
    base: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> RunImages:
    """Every environment image of :func:`corpus_images`, each built when missing
    (:func:`ensure_environment`): targets first, then agents (some are FROM a target's).

    Every environment is checked before the first is built, so bad input in
    an agent's stops everything before a container exists. A target whose
    environment is bad or fails to build costs only that target: it is in
    :attr:`RunImages.failed` with its one-line reason, and the others build.
    """
    failed: dict[str, str] = {}
    corpus_images(corpus, agents, base=base, target_errors=failed)
    client = client if client is not None else connect()
    base = base or ensure_image(client).tag
    builds: dict[str, EnvironmentBuild] = {}
    for target, where in _target_environments(corpus):
        assert target.environment is not None
        if target.name in failed:
            continue
        try:
            built = ensure_environment(
                target.environment,
                corpus_root=corpus.root,
                client=client,
                base=base,
                owner=EnvironmentOwner(target.name, "target", where),
                progress=progress,
            )
        except InputError as exc:
            failed[target.name] = _located(corpus, exc)
            continue
        except SandboxImageError as exc:
            log.warning("target %s: environment build failed: %s", target.name, exc)
            failed[target.name] = f"{corpus.config_file}: {str(exc).splitlines()[0]}"
            continue
        builds[target_label(target.name)] = built
        for agent, _tag in _agents_on(corpus, agents, built.tag):
            env = agent.environment
            if env is not None and (env.debian or env.requirements):
                on = ensure_environment(
                    env,
                    corpus_root=corpus.root,
                    client=client,
                    base=built.tag,
                    owner=EnvironmentOwner(agent.name),
                    progress=progress,
                )
            else:
                on = built
            builds[agent_on_target(agent.name, target.name)] = on
    for agent, where in _environments(corpus, agents):
        assert agent.environment is not None
        builds[agent.name] = ensure_environment(
            agent.environment,
            corpus_root=corpus.root,
            client=client,
            base=base,
            owner=EnvironmentOwner(agent.name, where=where),
            progress=progress,
        )
    return RunImages(builds, failed)


@contextmanager
def _naming(agent: str, kind: str = "agent") -> Iterator[None]:
    """Bad input found inside names the agent (or target) too (its field gives only its place
    in the list)."""
    try:
        yield
    except InputError as exc:
        if agent == "-":
            raise
        raise InputError(
            f"{kind} {agent}: {exc.message}", file=exc.file, line=exc.line, field=exc.field
        ) from None


def announce(line: str) -> None:
    """A build's progress line: in the log, and on stderr (a run shows no info log)."""
    log.info("%s", line)
    print(line, file=sys.stderr, flush=True)


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
