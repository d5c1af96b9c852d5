"""Stage 1, classify (docs/architecture.md#the-stages): validate each case's patch, label its bug category, plan the run.

- :func:`classify_corpus` — the whole stage in one call.
- :func:`classify_incremental` — the same, reusing earlier results of unchanged cases (the
  Prefect task's body; see ``tasks/classify/_incremental.py``).
- :func:`validate_patch` — the bad-input checks of one patch (docs/architecture.md#bad-input), then ``git apply --check``.
- :func:`check_target_tree`, :func:`symlink_problem` — the one rule for symlinks in a target tree
  (none at all), shared with the sandbox (``tasks/classify/_target.py``).
- :func:`parse_patch`, :func:`categorize` — the pure core: diff → files/hunks → category.
- :func:`plan_for_paths`, :func:`load_impact_config` — PR paths → :class:`RunPlan`.
- :func:`confusion` — how far two labellings agree (:class:`Confusion`, with ``.markdown()``),
  the one measure of the classifier against hand labels and the mutation proposer's.

How a patch becomes changes is documented in ``tasks/classify/_changes.py``,
the category rules and their priority order in ``tasks/classify/_rules.py``,
the impact rules and default globs in ``tasks/classify/_impact.py``.
"""

from tasks.classify._agreement import Confusion, confusion
from tasks.classify._batch import (
    CaseClassification,
    ClassifyResult,
    FileSummary,
    classify_case,
    classify_corpus,
    plan_for_diff,
)
from tasks.classify._diff import ParsedPatch, changed_paths, parse_patch
from tasks.classify._entry import RECORD, ClassifyInputs, ClassifySettings, run
from tasks.classify._impact import (
    DEFAULT_IMPACT_GLOBS,
    CaseScope,
    CorpusLayout,
    ImpactClass,
    ImpactConfig,
    PathImpact,
    RunPlan,
    load_impact_config,
    plan_for_paths,
)
from tasks.classify._incremental import (
    CLASSIFIER_VERSION,
    classify_incremental,
    classify_key,
    previous_classifications,
)
from tasks.classify._rules import RULES, CategoryDecision, Evidence, categorize
from tasks.classify._target import check_target_tree, symlink_problem
from tasks.classify._validate import git_apply_argv, git_apply_env, validate_patch

__all__ = [
    "CLASSIFIER_VERSION",
    "DEFAULT_IMPACT_GLOBS",
    "RECORD",
    "RULES",
    "CaseClassification",
    "CaseScope",
    "CategoryDecision",
    "ClassifyInputs",
    "ClassifyResult",
    "ClassifySettings",
    "Confusion",
    "CorpusLayout",
    "Evidence",
    "FileSummary",
    "ImpactClass",
    "ImpactConfig",
    "ParsedPatch",
    "PathImpact",
    "RunPlan",
    "categorize",
    "changed_paths",
    "check_target_tree",
    "classify_case",
    "classify_corpus",
    "classify_incremental",
    "classify_key",
    "confusion",
    "git_apply_argv",
    "git_apply_env",
    "load_impact_config",
    "parse_patch",
    "plan_for_diff",
    "plan_for_paths",
    "previous_classifications",
    "run",
    "symlink_problem",
    "validate_patch",
]
