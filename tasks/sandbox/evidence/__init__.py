"""What a reproduction's executions show beyond pass and fail: whether the test executed the bug,
and what it does on trees it never saw.

The bug's lines on a tree (``bug_lines``), an execution's line trace read
(``read_trace``) and set against them (``coverage_of``), and a pair's
executions summed up (``bug_coverage``); the buggy and clean variants with one
decoy edit each (``plan_variants``), whether a decoy ran (``site_ran``) and
whether an execution on a variant did what its tree asks (``variant_agrees``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.sandbox.evidence._coverage import (
        BugLines as BugLines,
        Coverage as Coverage,
        Trace as Trace,
        annotations_of as annotations_of,
        bug_coverage as bug_coverage,
        bug_lines as bug_lines,
        coverage_of as coverage_of,
        read_trace as read_trace,
    )
    from tasks.sandbox.evidence._decoys import (
        BUGGY_VARIANTS as BUGGY_VARIANTS,
        CLEAN_VARIANTS as CLEAN_VARIANTS,
        Variant as Variant,
        VariantPlan as VariantPlan,
        plan_variants as plan_variants,
        site_ran as site_ran,
        variant_agrees as variant_agrees,
        variant_counts as variant_counts,
    )
    from tasks.sandbox.evidence._localise import Localisation as Localisation, localise as localise
    from tasks.sandbox.evidence._twins import Twin as Twin, twin as twin


__getattr__ = lazy_names(globals())
