"""The sandbox: hardened Docker containers for untrusted code (docs/sandbox.md).

``run_sandbox`` is the stage: every planned case × agent, its report, and its
reproduction test on both trees and their rewrites, in a seeded shuffled
order; ``verify_report``, ``verify_agent`` and ``check_corpus`` check one pair or
the corpus contract now, exactly as the stage would. The engine side (the
engine, the images, the containers and cells that run each command, the sweep
of what crashed runs left) is :mod:`tasks.sandbox.engine`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.sandbox._agents import recorded_report as recorded_report
    from tasks.sandbox._contract import (
        TargetContract as TargetContract,
        contract_seed as contract_seed,
        known_checks as known_checks,
    )
    from tasks.sandbox._entry import RECORD as RECORD, SandboxInputs as SandboxInputs, run as run
    from tasks.sandbox._result import PairResult as PairResult, SandboxResult as SandboxResult
    from tasks.sandbox._settings import SandboxSettings as SandboxSettings
    from tasks.sandbox._stage import SandboxCases as SandboxCases, run_sandbox as run_sandbox
    from tasks.sandbox._verify import (
        check_corpus as check_corpus,
        verify_agent as verify_agent,
        verify_report as verify_report,
    )


__getattr__ = lazy_names(globals())
