"""Errors of the sandbox (docs/sandbox.md): what a user must fix, and what may pass on retry."""

from __future__ import annotations

from bughunt.errors import TerminalError, TransientError


class SandboxUnavailable(TerminalError):
    """The Docker engine cannot be reached; untrusted code is never run on the host instead."""


class SandboxImageError(TerminalError):
    """The sandbox image cannot be built, or is missing where it is needed."""


class SandboxEngineError(TransientError):
    """The engine failed a call in the middle of an execution (a busy or restarting daemon)."""
