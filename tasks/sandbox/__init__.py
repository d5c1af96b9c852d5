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
    from tasks.sandbox._agents import (
        REPORT_PATH as REPORT_PATH,
        parse_report as parse_report,
        recorded_report as recorded_report,
    )
    from tasks.sandbox._cell import CellExecutor as CellExecutor
    from tasks.sandbox._container import (
        HOSTNAME as HOSTNAME,
        TREE_PATH as TREE_PATH,
        ExecResult as ExecResult,
        Limits as Limits,
    )
    from tasks.sandbox._contract import (
        TargetContract as TargetContract,
        check_contract as check_contract,
        contract_seed as contract_seed,
        judge_buggy as judge_buggy,
        known_checks as known_checks,
    )
    from tasks.sandbox._engine import connect as connect
    from tasks.sandbox._entry import (
        RECORD as RECORD,
        CorpusMismatch as CorpusMismatch,
        SandboxInputs as SandboxInputs,
        check_corpus_content as check_corpus_content,
        run as run,
    )
    from tasks.sandbox._environments import (
        EnvironmentBuild as EnvironmentBuild,
        EnvironmentOwner as EnvironmentOwner,
        corpus_images as corpus_images,
        ensure_corpus_images as ensure_corpus_images,
        ensure_environment as ensure_environment,
    )
    from tasks.sandbox._errors import (
        SandboxEngineError as SandboxEngineError,
        SandboxImageError as SandboxImageError,
        SandboxUnavailable as SandboxUnavailable,
    )
    from tasks.sandbox._executor import (
        ContainerSpec as ContainerSpec,
        Executor as Executor,
        run_once as run_once,
    )
    from tasks.sandbox._gateway import gateway_image as gateway_image
    from tasks.sandbox._image import ImageBuild as ImageBuild, ensure_image as ensure_image
    from tasks.sandbox._pool import map_bounded as map_bounded
    from tasks.sandbox._recipe import (
        RECIPE as RECIPE,
        ImageRecipe as ImageRecipe,
        image_tag as image_tag,
    )
    from tasks.sandbox._reproduce import (
        FINGERPRINT_REASON as FINGERPRINT_REASON,
        HANG_REASON as HANG_REASON,
        HANG_SHARE as HANG_SHARE,
        PYTEST as PYTEST,
        TEST_FILE as TEST_FILE,
        CaseTrees as CaseTrees,
        PairIds as PairIds,
        ReproRuns as ReproRuns,
        decide_outcome as decide_outcome,
        derive_seed as derive_seed,
        execution_status as execution_status,
        outcome_of as outcome_of,
        outer_deadline as outer_deadline,
        pytest_argv as pytest_argv,
        reproduce as reproduce,
        schedule as schedule,
        symptom_of as symptom_of,
    )
    from tasks.sandbox._result import PairResult as PairResult, SandboxResult as SandboxResult
    from tasks.sandbox._rewrites import (
        RewriteCheck as RewriteCheck,
        RewritePlan as RewritePlan,
        case_trees as case_trees,
        rewrite_plan as rewrite_plan,
        suite_signature as suite_signature,
    )
    from tasks.sandbox._settings import SandboxSettings as SandboxSettings
    from tasks.sandbox._stage import SandboxCases as SandboxCases, run_sandbox as run_sandbox
    from tasks.sandbox._sweep import (
        Swept as Swept,
        claim_and_sweep as claim_and_sweep,
        sweep as sweep,
    )
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
    from tasks.sandbox._workspace import Workspace as Workspace, pack_workspace as pack_workspace


__getattr__ = lazy_names(globals())
