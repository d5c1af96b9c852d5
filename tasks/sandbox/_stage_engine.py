"""The engine side of one stage run, made once: client, image, environment images, executors.

The stage (``run_sandbox``) and its one-off forms (``verify_report``,
``verify_agent``, ``check_corpus``) all start alike: connect to the engine,
build the sandbox image if it is missing, sweep what crashed runs left,
build the run's environment images, and start one executor per target
image. :func:`stage_engine` does it, and closes the executors on exit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bughunt.models import AgentVersion
from corpus import Corpus
from tasks.sandbox._settings import SandboxSettings
from tasks.sandbox.engine import (
    CellExecutor,
    Executor,
    Limits,
    RunImages,
    announce,
    connect,
    ensure_corpus_images,
    ensure_image,
    sweep,
)

Executors = Mapping[str, tuple[Executor, str]]
"""Per target name, the executor that runs its cases and the id of its image."""


@dataclass(frozen=True, slots=True)
class StageEngine:
    """What every pair and contract check of one stage run shares on the engine."""

    client: Any
    """The ``docker.DockerClient``."""
    image: str
    """The sandbox image's tag (agents without an environment run in it)."""
    image_id: str
    """Its id (part of every flake key of a target without an environment)."""
    images: RunImages
    """The run's environment images: targets' and agents' (docs/sandbox.md#agent-environments)."""
    executors: Executors
    """Each target's executor for its suite and reproduction tests, with its image's id."""
    limits: Limits
    """The limits of every container the run starts."""
    swept: tuple[str, ...] = ()
    """Containers of crashed runs removed at the start."""


@contextlib.contextmanager
def stage_engine(
    corpus: Corpus, agents: Sequence[AgentVersion], *, run_id: str, settings: SandboxSettings
) -> Iterator[StageEngine]:
    """The engine for a run of ``agents`` on ``corpus``; its executors are closed on exit.

    A missing Docker engine raises :class:`SandboxUnavailable` (never a
    fallback). The sandbox image (``settings.image``, or the recipe's, built
    if missing) comes first, then the sweep of crashed runs, then every
    environment image, before any container starts: a bad agent environment
    raises here; a target's is recorded in ``images.failed`` and costs only
    that target's cases.
    """
    client = connect()
    build = ensure_image(client) if settings.image is None else None
    image = settings.image or (build.tag if build else "")
    image_id = build.image_id if build else str(client.images.get(image).id)
    swept = sweep(client, run_id)
    images = ensure_corpus_images(corpus, agents, client=client, base=image, progress=announce)
    limits = Limits()
    with contextlib.ExitStack() as stack:
        by_image: dict[str, tuple[Executor, str]] = {}
        executors = {}
        # One executor per distinct image: a target with an environment runs in its image.
        for target in corpus.targets:
            built = images.target(target.name)
            tag, ident = (built.tag, built.image_id) if built is not None else (image, image_id)
            if tag not in by_image:
                runner = CellExecutor(run_id=run_id, image=tag, limits=limits, client=client)
                by_image[tag] = (stack.enter_context(runner), ident)
            executors[target.name] = by_image[tag]
        yield StageEngine(client, image, image_id, images, executors, limits, tuple(swept))
