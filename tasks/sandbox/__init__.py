"""The sandbox: hardened Docker containers for untrusted code (docs/sandbox.md).

``ensure_image`` builds the image (from a debootstrapped Debian root when no
registry is reachable), ``ensure_corpus_images`` the agents' environment images
FROM it; an ``Executor`` runs each command in a container of its own that
nothing ran in before, a ``CellExecutor`` each in namespaces of its own inside
a reused container;
``run_sandbox`` is the stage: every planned case × agent, its report, and its
reproduction test on both trees and their rewrites, in a seeded shuffled
order; ``claim_and_sweep`` (at a run's start) removes what crashed runs left
behind, their containers and their processes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.sandbox._agents import recorded_report as recorded_report
    from tasks.sandbox._cell import CellExecutor as CellExecutor
    from tasks.sandbox._container import ExecResult as ExecResult, Limits as Limits
    from tasks.sandbox._contract import (
        TargetContract as TargetContract,
        contract_seed as contract_seed,
        known_checks as known_checks,
    )
    from tasks.sandbox._engine import connect as connect
    from tasks.sandbox._entry import RECORD as RECORD, SandboxInputs as SandboxInputs, run as run
    from tasks.sandbox._environments import (
        corpus_images as corpus_images,
        ensure_corpus_images as ensure_corpus_images,
    )
    from tasks.sandbox._executor import Executor as Executor
    from tasks.sandbox._gateway import gateway_image as gateway_image
    from tasks.sandbox._image import ensure_image as ensure_image
    from tasks.sandbox._pool import map_bounded as map_bounded
    from tasks.sandbox._recipe import RECIPE as RECIPE
    from tasks.sandbox._reproduce import (
        TEST_FILE as TEST_FILE,
        execution_status as execution_status,
        outer_deadline as outer_deadline,
        pytest_argv as pytest_argv,
    )
    from tasks.sandbox._result import PairResult as PairResult, SandboxResult as SandboxResult
    from tasks.sandbox._rewrites import (
        case_trees as case_trees,
        rewrite_plan as rewrite_plan,
        suite_signature as suite_signature,
    )
    from tasks.sandbox._settings import SandboxSettings as SandboxSettings
    from tasks.sandbox._stage import SandboxCases as SandboxCases, run_sandbox as run_sandbox
    from tasks.sandbox._sweep import claim_and_sweep as claim_and_sweep
    from tasks.sandbox._trees import (
        Files as Files,
        apply_patch as apply_patch,
        read_tree as read_tree,
    )
    from tasks.sandbox._verify import (
        check_corpus as check_corpus,
        verify_agent as verify_agent,
        verify_report as verify_report,
    )
    from tasks.sandbox._workspace import pack_workspace as pack_workspace


__getattr__ = lazy_names(globals())
