"""The sandbox (DESIGN §7): hardened Docker containers for untrusted code.

``ensure_image`` builds the image (from a debootstrapped Debian root when no
registry is reachable); ``run_once`` runs one execution in its own
container; ``SandboxSession`` serves many executions of one (case, agent)
from one container, each in a fresh workspace; ``run_sessions`` runs many
sessions on a bounded pool; ``sweep`` removes what crashed runs left behind.
"""

from tasks.sandbox._container import Limits, RunResult, run_once
from tasks.sandbox._engine import connect
from tasks.sandbox._errors import SandboxEngineError, SandboxImageError, SandboxUnavailable
from tasks.sandbox._image import ImageBuild, ensure_image
from tasks.sandbox._pool import SessionJob, map_bounded, run_sessions
from tasks.sandbox._recipe import RECIPE, ImageRecipe, image_tag
from tasks.sandbox._session import SandboxSession
from tasks.sandbox._stage import (
    TEST_FILE,
    PairResult,
    SandboxResult,
    SandboxSettings,
    decide_outcome,
    execution_status,
    reproduce,
    run_sandbox,
)
from tasks.sandbox._sweep import sweep
from tasks.sandbox._workspace import Workspace

__all__ = [
    "RECIPE",
    "TEST_FILE",
    "ImageBuild",
    "ImageRecipe",
    "Limits",
    "PairResult",
    "RunResult",
    "SandboxEngineError",
    "SandboxImageError",
    "SandboxResult",
    "SandboxSession",
    "SandboxSettings",
    "SandboxUnavailable",
    "SessionJob",
    "Workspace",
    "connect",
    "decide_outcome",
    "ensure_image",
    "execution_status",
    "image_tag",
    "map_bounded",
    "reproduce",
    "run_once",
    "run_sandbox",
    "run_sessions",
    "sweep",
]
