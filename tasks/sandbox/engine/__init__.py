"""The engine side of the sandbox: the Docker engine, the images and the hardened containers.

``connect`` reaches the engine; ``ensure_image`` builds the sandbox image (``RECIPE``),
``ensure_corpus_images`` the agents' environment images FROM it and ``gateway_image`` the
image of an agent's model gateway (``Gateway``); an ``Executor`` runs each command in a
container of its own that nothing ran in before, a ``CellExecutor`` each in namespaces of its
own inside a reused container (both give an ``ExecResult`` within ``Limits``);
``map_bounded`` runs many executions on a bounded pool of threads; ``claim_and_sweep`` (at a
run's start) removes what crashed runs left behind, their containers and their processes.
docs/sandbox.md describes the hardening.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.sandbox.engine._cell import CellExecutor as CellExecutor
    from tasks.sandbox.engine._container import (
        ExecResult as ExecResult,
        Limits as Limits,
        MiB as MiB,
    )
    from tasks.sandbox.engine._engine import connect as connect
    from tasks.sandbox.engine._environments import (
        RunImages as RunImages,
        announce as announce,
        corpus_images as corpus_images,
        ensure_corpus_images as ensure_corpus_images,
    )
    from tasks.sandbox.engine._errors import (
        SandboxEngineError as SandboxEngineError,
        SandboxRequestError as SandboxRequestError,
    )
    from tasks.sandbox.engine._executor import Executor as Executor
    from tasks.sandbox.engine._gateway import Gateway as Gateway, gateway_image as gateway_image
    from tasks.sandbox.engine._image import ensure_image as ensure_image
    from tasks.sandbox.engine._pool import map_bounded as map_bounded, pool_size as pool_size
    from tasks.sandbox.engine._recipe import RECIPE as RECIPE
    from tasks.sandbox.engine._sweep import claim_and_sweep as claim_and_sweep, sweep as sweep
    from tasks.sandbox.engine._workspace import pack_workspace as pack_workspace


__getattr__ = lazy_names(globals())
