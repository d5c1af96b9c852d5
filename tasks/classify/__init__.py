"""Stage 1, classify (docs/architecture.md#the-stages): validate each case's patch, label its bug category, plan the run.

- :func:`classify_corpus` — the whole stage in one call.
- :func:`classify_incremental` — the same, reusing earlier results of unchanged cases (the
  Prefect task's body; see ``tasks/classify/_incremental.py``).
- :func:`validate_patch` — the bad-input checks of one patch (docs/architecture.md#bad-input), then ``git apply --check``.
- :func:`check_target_tree`, :func:`symlink_problem` — the one rule for symlinks in a target tree
  (none at all), shared with the sandbox (``tasks/classify/_target.py``).
- :func:`parse_patch`, :func:`categorize` — the pure core: diff → files/hunks → category.
- :func:`plan_for_paths`, :func:`load_impact_config` — PR paths → :class:`RunPlan`;
  :func:`impact_config_of` — the globs of the repository holding a corpus.
- :func:`confusion` — how far two labellings agree (:class:`Confusion`, with ``.markdown()``),
  the one measure of the classifier against hand labels and the mutation proposer's.

How a patch becomes changes is documented in ``tasks/classify/_changes.py``,
the category rules and their priority order in ``tasks/classify/_rules.py``,
the impact rules and default globs in ``tasks/classify/_impact.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.classify._agreement import Confusion, confusion
    from tasks.classify._batch import (
        CaseClassification,
        ClassifyResult,
        FileSummary,
        classify_case,
        classify_corpus,
        plan_for_changed,
        plan_for_diff,
    )
    from tasks.classify._diff import ParsedPatch, changed_paths, parse_patch
    from tasks.classify._entry import (
        RECORD,
        ClassifyInputs,
        ClassifySettings,
        impact_config_of,
        run,
    )
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

_WHERE = {
    "Confusion": "tasks.classify._agreement",
    "confusion": "tasks.classify._agreement",
    "CaseClassification": "tasks.classify._batch",
    "ClassifyResult": "tasks.classify._batch",
    "FileSummary": "tasks.classify._batch",
    "classify_case": "tasks.classify._batch",
    "classify_corpus": "tasks.classify._batch",
    "plan_for_changed": "tasks.classify._batch",
    "plan_for_diff": "tasks.classify._batch",
    "ParsedPatch": "tasks.classify._diff",
    "changed_paths": "tasks.classify._diff",
    "parse_patch": "tasks.classify._diff",
    "RECORD": "tasks.classify._entry",
    "ClassifyInputs": "tasks.classify._entry",
    "ClassifySettings": "tasks.classify._entry",
    "impact_config_of": "tasks.classify._entry",
    "run": "tasks.classify._entry",
    "DEFAULT_IMPACT_GLOBS": "tasks.classify._impact",
    "CaseScope": "tasks.classify._impact",
    "CorpusLayout": "tasks.classify._impact",
    "ImpactClass": "tasks.classify._impact",
    "ImpactConfig": "tasks.classify._impact",
    "PathImpact": "tasks.classify._impact",
    "RunPlan": "tasks.classify._impact",
    "load_impact_config": "tasks.classify._impact",
    "plan_for_paths": "tasks.classify._impact",
    "CLASSIFIER_VERSION": "tasks.classify._incremental",
    "classify_incremental": "tasks.classify._incremental",
    "classify_key": "tasks.classify._incremental",
    "previous_classifications": "tasks.classify._incremental",
    "RULES": "tasks.classify._rules",
    "CategoryDecision": "tasks.classify._rules",
    "Evidence": "tasks.classify._rules",
    "categorize": "tasks.classify._rules",
    "check_target_tree": "tasks.classify._target",
    "symlink_problem": "tasks.classify._target",
    "git_apply_argv": "tasks.classify._validate",
    "git_apply_env": "tasks.classify._validate",
    "validate_patch": "tasks.classify._validate",
}
"""Each exported name → the module defining it, imported on first use."""

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
    "impact_config_of",
    "load_impact_config",
    "parse_patch",
    "plan_for_changed",
    "plan_for_diff",
    "plan_for_paths",
    "previous_classifications",
    "run",
    "symlink_problem",
    "validate_patch",
]

__getattr__ = lazy_names(globals(), _WHERE)
