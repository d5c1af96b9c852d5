"""A report's reproduction test against a case, and the rewrites it is checked on.

The test runs on the buggy and the clean tree and on behaviour-preserving
rewrites of both, in one order shuffled from a seed (``reproduce``; its
command line ``pytest_argv``, an execution's status ``execution_status``);
the rewrites of a case for a run (``rewrite_plan``, ``case_trees``) count only
where the target's own suite keeps its outcome on them (``RewriteCheck``,
``suite_signature``), the measure the corpus contract uses too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.sandbox.reproduction._reproduce import (
        FINGERPRINT_REASON as FINGERPRINT_REASON,
        HANG_SHARE as HANG_SHARE,
        NOT_EXECUTED_REASON as NOT_EXECUTED_REASON,
        TEST_FILE as TEST_FILE,
        VARIANT_REASON as VARIANT_REASON,
        CaseTrees as CaseTrees,
        PairIds as PairIds,
        ReproRuns as ReproRuns,
        derive_seed as derive_seed,
        execution_status as execution_status,
        outcome_of as outcome_of,
        outer_deadline as outer_deadline,
        pytest_argv as pytest_argv,
        reproduce as reproduce,
        symptom_of as symptom_of,
    )
    from tasks.sandbox.reproduction._rewrites import (
        RewriteCheck as RewriteCheck,
        case_trees as case_trees,
        rewrite_plan as rewrite_plan,
        suite_outcome as suite_outcome,
        suite_signature as suite_signature,
    )


__getattr__ = lazy_names(globals())
