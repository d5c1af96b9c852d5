"""Stage 1, classify (docs/architecture.md#the-stages): validate each case's patch, label its bug category, plan the run.

- :func:`classify_corpus` — the whole stage in one call.
- :func:`check_target_tree`, :func:`symlink_problem` — the one rule for symlinks in a target tree
  (none at all), shared with the sandbox (``tasks/classify/_target.py``).
- :func:`categorize` — the pure core: a parsed patch (files, hunks) → its category.
- :func:`plan_for_changed` — a PR's changed paths → the cases to run;
  :func:`impact_config_of` — the globs of the repository holding a corpus.
- :func:`confusion` — how far two labellings agree (:class:`Confusion`, with ``.markdown()``),
  the one measure of the classifier against hand labels and the mutation proposer's.

A patch parsed into files and hunks, checked for bad input (docs/architecture.md#bad-input)
and applied with ``git apply`` is :mod:`tasks.classify.patch`. The stage reusing earlier
results of unchanged cases (the Prefect task's body) is in ``tasks/classify/_incremental.py``.
How a patch becomes changes is documented in ``tasks/classify/_changes.py``, the category
rules and their priority order in ``tasks/classify/_rules.py``, the impact rules and default
globs in ``tasks/classify/_impact.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.classify._agreement import Confusion as Confusion, confusion as confusion
    from tasks.classify._batch import (
        ClassifyResult as ClassifyResult,
        classify_corpus as classify_corpus,
        plan_for_changed as plan_for_changed,
    )
    from tasks.classify._entry import (
        RECORD as RECORD,
        ClassifyInputs as ClassifyInputs,
        ClassifySettings as ClassifySettings,
        impact_config_of as impact_config_of,
        run as run,
    )
    from tasks.classify._impact import CaseScope as CaseScope, ImpactConfig as ImpactConfig
    from tasks.classify._rules import categorize as categorize
    from tasks.classify._target import (
        check_target_tree as check_target_tree,
        symlink_problem as symlink_problem,
    )


__getattr__ = lazy_names(globals())
