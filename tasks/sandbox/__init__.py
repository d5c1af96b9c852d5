"""The sandbox: hardened Docker containers for untrusted code (docs/sandbox.md).

``ensure_image`` builds the image (from a debootstrapped Debian root when no
registry is reachable), ``ensure_environment`` an agent's environment image
FROM it; an ``Executor`` runs each command in a container of
its own that nothing ran in before (``run_once`` for a single command), a
``CellExecutor`` each in namespaces of its own inside a reused container;
``run_sandbox`` is the stage: every planned case × agent, its report, and its
reproduction test on both trees and their rewrites, in a seeded shuffled
order; ``sweep`` removes what crashed runs left behind, and ``claim_and_sweep``
(at a run's start) also their processes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.sandbox._agents import REPORT_PATH, parse_report, recorded_report
    from tasks.sandbox._cell import CellExecutor
    from tasks.sandbox._container import HOSTNAME, TREE_PATH, ExecResult, Limits
    from tasks.sandbox._contract import (
        TargetContract,
        check_contract,
        contract_seed,
        judge_buggy,
        known_checks,
    )
    from tasks.sandbox._engine import connect
    from tasks.sandbox._entry import (
        RECORD,
        CorpusMismatch,
        SandboxInputs,
        check_corpus_content,
        run,
    )
    from tasks.sandbox._environments import (
        EnvironmentBuild,
        corpus_images,
        ensure_corpus_images,
        ensure_environment,
    )
    from tasks.sandbox._errors import SandboxEngineError, SandboxImageError, SandboxUnavailable
    from tasks.sandbox._executor import Executor, run_once
    from tasks.sandbox._gateway import gateway_image
    from tasks.sandbox._image import ImageBuild, ensure_image
    from tasks.sandbox._pool import map_bounded
    from tasks.sandbox._recipe import RECIPE, ImageRecipe, image_tag
    from tasks.sandbox._reproduce import (
        FINGERPRINT_REASON,
        HANG_REASON,
        HANG_SHARE,
        PYTEST,
        TEST_FILE,
        CaseTrees,
        PairIds,
        ReproRuns,
        decide_outcome,
        derive_seed,
        execution_status,
        outcome_of,
        outer_deadline,
        pytest_argv,
        reproduce,
        schedule,
        symptom_of,
    )
    from tasks.sandbox._result import PairResult, SandboxResult
    from tasks.sandbox._rewrites import (
        RewriteCheck,
        RewritePlan,
        case_trees,
        rewrite_plan,
        suite_signature,
    )
    from tasks.sandbox._settings import SandboxSettings
    from tasks.sandbox._stage import run_sandbox
    from tasks.sandbox._sweep import Swept, claim_and_sweep, sweep
    from tasks.sandbox._trees import Files, apply_patch, read_tree
    from tasks.sandbox._verify import check_corpus, verify_agent, verify_report
    from tasks.sandbox._workspace import Workspace, pack_workspace

_WHERE = {
    "REPORT_PATH": "tasks.sandbox._agents",
    "parse_report": "tasks.sandbox._agents",
    "recorded_report": "tasks.sandbox._agents",
    "CellExecutor": "tasks.sandbox._cell",
    "HOSTNAME": "tasks.sandbox._container",
    "TREE_PATH": "tasks.sandbox._container",
    "ExecResult": "tasks.sandbox._container",
    "Limits": "tasks.sandbox._container",
    "TargetContract": "tasks.sandbox._contract",
    "check_contract": "tasks.sandbox._contract",
    "contract_seed": "tasks.sandbox._contract",
    "judge_buggy": "tasks.sandbox._contract",
    "known_checks": "tasks.sandbox._contract",
    "connect": "tasks.sandbox._engine",
    "RECORD": "tasks.sandbox._entry",
    "CorpusMismatch": "tasks.sandbox._entry",
    "SandboxInputs": "tasks.sandbox._entry",
    "check_corpus_content": "tasks.sandbox._entry",
    "run": "tasks.sandbox._entry",
    "EnvironmentBuild": "tasks.sandbox._environments",
    "corpus_images": "tasks.sandbox._environments",
    "ensure_corpus_images": "tasks.sandbox._environments",
    "ensure_environment": "tasks.sandbox._environments",
    "SandboxEngineError": "tasks.sandbox._errors",
    "SandboxImageError": "tasks.sandbox._errors",
    "SandboxUnavailable": "tasks.sandbox._errors",
    "Executor": "tasks.sandbox._executor",
    "run_once": "tasks.sandbox._executor",
    "gateway_image": "tasks.sandbox._gateway",
    "ImageBuild": "tasks.sandbox._image",
    "ensure_image": "tasks.sandbox._image",
    "map_bounded": "tasks.sandbox._pool",
    "RECIPE": "tasks.sandbox._recipe",
    "ImageRecipe": "tasks.sandbox._recipe",
    "image_tag": "tasks.sandbox._recipe",
    "FINGERPRINT_REASON": "tasks.sandbox._reproduce",
    "HANG_REASON": "tasks.sandbox._reproduce",
    "HANG_SHARE": "tasks.sandbox._reproduce",
    "PYTEST": "tasks.sandbox._reproduce",
    "TEST_FILE": "tasks.sandbox._reproduce",
    "CaseTrees": "tasks.sandbox._reproduce",
    "PairIds": "tasks.sandbox._reproduce",
    "ReproRuns": "tasks.sandbox._reproduce",
    "decide_outcome": "tasks.sandbox._reproduce",
    "derive_seed": "tasks.sandbox._reproduce",
    "execution_status": "tasks.sandbox._reproduce",
    "outcome_of": "tasks.sandbox._reproduce",
    "outer_deadline": "tasks.sandbox._reproduce",
    "pytest_argv": "tasks.sandbox._reproduce",
    "reproduce": "tasks.sandbox._reproduce",
    "schedule": "tasks.sandbox._reproduce",
    "symptom_of": "tasks.sandbox._reproduce",
    "RewriteCheck": "tasks.sandbox._rewrites",
    "RewritePlan": "tasks.sandbox._rewrites",
    "rewrite_plan": "tasks.sandbox._rewrites",
    "case_trees": "tasks.sandbox._rewrites",
    "suite_signature": "tasks.sandbox._rewrites",
    "PairResult": "tasks.sandbox._result",
    "SandboxResult": "tasks.sandbox._result",
    "SandboxSettings": "tasks.sandbox._settings",
    "check_corpus": "tasks.sandbox._verify",
    "run_sandbox": "tasks.sandbox._stage",
    "verify_agent": "tasks.sandbox._verify",
    "verify_report": "tasks.sandbox._verify",
    "Swept": "tasks.sandbox._sweep",
    "claim_and_sweep": "tasks.sandbox._sweep",
    "sweep": "tasks.sandbox._sweep",
    "Files": "tasks.sandbox._trees",
    "apply_patch": "tasks.sandbox._trees",
    "read_tree": "tasks.sandbox._trees",
    "Workspace": "tasks.sandbox._workspace",
    "pack_workspace": "tasks.sandbox._workspace",
}
"""Each exported name → the module defining it, imported on first use."""

__all__ = [
    "FINGERPRINT_REASON",
    "HANG_REASON",
    "HANG_SHARE",
    "HOSTNAME",
    "PYTEST",
    "RECIPE",
    "RECORD",
    "REPORT_PATH",
    "TEST_FILE",
    "TREE_PATH",
    "CaseTrees",
    "CellExecutor",
    "CorpusMismatch",
    "EnvironmentBuild",
    "ExecResult",
    "Executor",
    "Files",
    "ImageBuild",
    "ImageRecipe",
    "Limits",
    "PairIds",
    "PairResult",
    "ReproRuns",
    "RewriteCheck",
    "RewritePlan",
    "SandboxEngineError",
    "SandboxImageError",
    "SandboxInputs",
    "SandboxResult",
    "SandboxSettings",
    "SandboxUnavailable",
    "Swept",
    "TargetContract",
    "Workspace",
    "apply_patch",
    "case_trees",
    "check_contract",
    "check_corpus",
    "check_corpus_content",
    "claim_and_sweep",
    "connect",
    "contract_seed",
    "corpus_images",
    "decide_outcome",
    "derive_seed",
    "ensure_corpus_images",
    "ensure_environment",
    "ensure_image",
    "execution_status",
    "gateway_image",
    "image_tag",
    "judge_buggy",
    "known_checks",
    "map_bounded",
    "outcome_of",
    "outer_deadline",
    "pack_workspace",
    "parse_report",
    "pytest_argv",
    "read_tree",
    "recorded_report",
    "reproduce",
    "rewrite_plan",
    "run",
    "run_once",
    "run_sandbox",
    "schedule",
    "suite_signature",
    "sweep",
    "symptom_of",
    "verify_agent",
    "verify_report",
]

__getattr__ = lazy_names(globals(), _WHERE)
