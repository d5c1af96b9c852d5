"""Errors of the sandbox (docs/sandbox.md): what a user must fix, and what may pass on retry."""

from __future__ import annotations

from bughunt.errors import TerminalError, TransientError


class SandboxUnavailable(TerminalError):
    """The Docker engine cannot be reached; untrusted code is never run on the host instead."""


class SandboxImageError(TerminalError):
    """The sandbox image cannot be built, or is missing where it is needed."""


class SandboxEngineError(TransientError):
    """The engine failed a call: a busy or restarting daemon, a dropped connection, a container gone.

    Starting an execution (its container and first exec) is retried with backoff
    before this is raised; the message keeps the engine's own words.
    """


class SandboxRequestError(TerminalError):
    """The engine refused a request as invalid (a 4xx answer): asking again gets the same answer."""
