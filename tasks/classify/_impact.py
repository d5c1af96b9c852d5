"""PR impact: which cases and stages a pull request's changed paths call for (the run plan).

Each changed path gets one impact class from globs (``[tool.bughunt.impact]``
in ``pyproject.toml``, defaults in :data:`DEFAULT_IMPACT_GLOBS`). Classes are
tried in the order agent, judge, corpus, pipeline, docs, and the first whose
glob matches wins, so the specific owners beat the broad ones
(``judging/judges/x.py`` is judge, not pipeline) and docs come last
(``tasks/README.md`` is pipeline). A path no glob matches is treated as
pipeline: running too much is safe, silently running too little is not.

What each class calls for:

- agent → every case, every stage;
- judge → every case, every stage (the judge reads the reports the sandbox
  stage produces; re-scoring an earlier run's stored reports is not built);
- corpus → inside one case's folder: that case only, every stage; inside one
  target's tree: that target's cases, every stage; anywhere else in the
  evaluated corpus (``corpus.toml``, a file outside any case or target):
  every case, every stage; in another corpus: nothing;
- pipeline (and unmatched) → every case, every stage;
- docs → nothing.

Several classes combine by union: the cases of all of them, the stages of
all of them. A plan is one (cases, stages) pair, so a judge change plus one
case change runs every stage on every case — more than needed, never less.

Globs are relative to the repository root. ``*`` and ``?`` stay within one
path segment, ``**`` spans any number of them (``docs/**``), ``[abc]`` is a
character class, and a glob without ``/`` matches a file name at any depth
(``*.md`` matches ``README.md`` and ``docs/x/y.md``), as in ``.gitignore``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bughunt.config import read_toml
from bughunt.errors import InputError
from bughunt.models import PipelineStage


class ImpactClass(StrEnum):
    """What a changed path belongs to."""

    AGENT = "agent"
    JUDGE = "judge"
    CORPUS = "corpus"
    PIPELINE = "pipeline"
    DOCS = "docs"


class CaseScope(StrEnum):
    """Which cases a plan runs."""

    ALL = "all"
    LISTED = "listed"
    NONE = "none"


ALL_STAGES: tuple[PipelineStage, ...] = tuple(PipelineStage)
# A judge change re-scores every case. The score stage reads the reports the sandbox
# stage produces, so the sandbox runs too: re-scoring an earlier run's stored reports
# without it is not built (a plan without it would judge nothing at all).
RESCORE_STAGES: tuple[PipelineStage, ...] = ALL_STAGES

DEFAULT_IMPACT_GLOBS: dict[ImpactClass, tuple[str, ...]] = {
    ImpactClass.AGENT: ("corpus/*/agents/**", "corpus/*/recorded/**"),
    ImpactClass.JUDGE: ("judging/**", "judges.toml"),
    ImpactClass.CORPUS: (
        "corpus/*/cases/**",
        "corpus/*/target/**",
        "corpus/*/targets/**",
        "corpus/*/corpus.toml",
    ),
    ImpactClass.PIPELINE: (
        "cli/**",
        "flows/**",
        "tasks/**",
        "ledger/**",
        "bughunt/**",
        "pyproject.toml",
        "requirements.lock",
        "prefect.yaml",
    ),
    ImpactClass.DOCS: ("docs/**", "*.md"),
}
"""Globs per impact class when ``pyproject.toml`` does not set them."""

CLASS_ORDER: tuple[ImpactClass, ...] = tuple(ImpactClass)
"""Precedence when a path matches globs of several classes: first wins."""

DOCS_ONLY = "docs-only change: nothing to evaluate"


# --- globs -------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob (syntax in the module docstring) to a regex over POSIX paths."""
    anchored = "/" in pattern.strip("/") or pattern.startswith("/")
    pattern = pattern.lstrip("/")
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\").replace("[", "\\[") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(prefix + "".join(out) + r"\Z")


def glob_match(pattern: str, path: str) -> bool:
    """Whether a repository-relative POSIX path matches a glob."""
    return glob_regex(pattern).match(path) is not None


class ImpactConfig(BaseModel):
    """Globs per impact class (``[tool.bughunt.impact]``); a key given replaces that class's defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    agent: tuple[str, ...] = DEFAULT_IMPACT_GLOBS[ImpactClass.AGENT]
    """Paths of the agent under test (its code, its recorded reports)."""
    judge: tuple[str, ...] = DEFAULT_IMPACT_GLOBS[ImpactClass.JUDGE]
    """Paths of the judge configuration: a change re-scores without a sandbox run."""
    corpus: tuple[str, ...] = DEFAULT_IMPACT_GLOBS[ImpactClass.CORPUS]
    """Paths of corpus cases and target trees."""
    pipeline: tuple[str, ...] = DEFAULT_IMPACT_GLOBS[ImpactClass.PIPELINE]
    """Paths of the pipeline itself: a change runs everything."""
    docs: tuple[str, ...] = DEFAULT_IMPACT_GLOBS[ImpactClass.DOCS]
    """Paths that change nothing the pipeline computes."""

    def globs(self, impact: ImpactClass) -> tuple[str, ...]:
        """The globs of one class."""
        globs: tuple[str, ...] = getattr(self, impact.value)
        return globs

    def classify_path(self, path: str) -> tuple[ImpactClass, str | None]:
        """A path's class and the glob that matched (``None``: unmatched, so pipeline)."""
        for impact in CLASS_ORDER:
            for pattern in self.globs(impact):
                if glob_match(pattern, path):
                    return impact, pattern
        return ImpactClass.PIPELINE, None


def load_impact_config(pyproject: Path | None) -> ImpactConfig:
    """Globs from ``[tool.bughunt.impact]`` of a ``pyproject.toml``; defaults where unset.

    A missing file or table gives the defaults. Raises :class:`InputError`
    naming the file (and line, for TOML syntax) and the field for invalid
    TOML, an unknown class name, or a value that is not a list of non-empty
    strings.
    """
    if pyproject is None or not pyproject.is_file():
        return ImpactConfig()
    file = str(pyproject)
    data = read_toml(pyproject, display=file)
    table = data.get("tool", {}).get("bughunt", {}).get("impact")
    if table is None:
        return ImpactConfig()
    base = "tool.bughunt.impact"
    if not isinstance(table, dict):
        raise InputError("must be a table of glob lists", file=file, field=base)
    known = {c.value for c in ImpactClass}
    values: dict[str, tuple[str, ...]] = {}
    for key, value in table.items():
        if key not in known:
            raise InputError(
                f"unknown impact class; use one of {', '.join(sorted(known))}",
                file=file,
                field=f"{base}.{key}",
            )
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise InputError(
                f"must be a list of non-empty glob strings, got {value!r}",
                file=file,
                field=f"{base}.{key}",
            )
        values[key] = tuple(value)
    return ImpactConfig.model_validate(values)


# --- the plan ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CorpusLayout:
    """Where the evaluated corpus sits in the repository (POSIX, repository-relative)."""

    root: str
    """The corpus folder, e.g. ``corpus/demo``."""
    cases: str
    """Its cases folder, e.g. ``corpus/demo/cases``."""
    case_ids: frozenset[str]
    """Every case folder present now (loaded or rejected)."""
    targets: tuple[tuple[str, str, frozenset[str]], ...] = ()
    """Each target: its name, its folder (e.g. ``corpus/demo/target``) and its loaded cases."""


class PathImpact(BaseModel):
    """One changed path and what it calls for."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    path: str
    """Repository-relative path."""
    impact: ImpactClass
    """Its class (pipeline when unmatched)."""
    glob: str | None
    """The glob that matched; ``None`` when none did."""
    case_id: str | None = None
    """The case whose folder holds it, when it is in one."""


class RunPlan(BaseModel):
    """Which cases and stages a run covers, and why."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    scope: CaseScope
    """All cases, the listed ones, or none."""
    case_ids: list[str] = Field(default_factory=list)
    """The cases to run when ``scope`` is ``listed`` (sorted); empty otherwise."""
    stages: list[PipelineStage] = Field(default_factory=list)
    """Stages to run, in pipeline order; empty when nothing runs."""
    reasons: list[str] = Field(default_factory=list)
    """Why, in plain English, one line per kind of change."""
    paths: list[PathImpact] = Field(default_factory=list)
    """Every changed path with its class (empty for a run without a PR diff)."""

    def selects(self, case_id: str) -> bool:
        """Whether the plan runs ``case_id``."""
        if self.scope is CaseScope.ALL:
            return True
        return self.scope is CaseScope.LISTED and case_id in self.case_ids

    def describe(self) -> str:
        """The plan in one sentence, e.g. ``run 2 cases (a, b): classify, ..., report``."""
        if self.scope is CaseScope.NONE or not self.stages:
            return "run nothing"
        which = (
            "every case"
            if self.scope is CaseScope.ALL
            else f"{len(self.case_ids)} case{'s' if len(self.case_ids) != 1 else ''} "
            f"({', '.join(self.case_ids)})"
        )
        return f"run {which}: {', '.join(self.stages)}"


def full_plan(reason: str) -> RunPlan:
    """Every case, every stage (a nightly run, or a PR that touches everything)."""
    return RunPlan(scope=CaseScope.ALL, stages=list(ALL_STAGES), reasons=[reason])


def _listing(paths: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def _case_of(path: str, layout: CorpusLayout) -> str | None:
    prefix = layout.cases.rstrip("/") + "/"
    if not path.startswith(prefix):
        return None
    rest = path[len(prefix) :]
    return rest.split("/", 1)[0] if "/" in rest else None


@dataclass(slots=True)
class _Changes:
    """A PR's changed paths sorted into the groups the plan's reasons name."""

    groups: dict[str, list[str]] = field(default_factory=dict)
    """Paths per group (``agent``, ``unmatched``, ``corpus-wide``, ``docs``, ...), sorted."""
    cases: dict[str, list[str]] = field(default_factory=dict)
    """Paths per case of the corpus whose folder holds them."""
    removed: dict[str, list[str]] = field(default_factory=dict)
    """Paths per case folder that is not in the corpus now."""
    impacts: list[PathImpact] = field(default_factory=list)
    """Every path with its class, sorted."""


def _corpus_group(path: str, layout: CorpusLayout | None) -> tuple[str, str | None]:
    """A corpus path's group (one case, a removed case, corpus-wide, elsewhere) and its case."""
    if layout is None:
        return "corpus-unplaced", None
    case_id = _case_of(path, layout)
    if case_id is not None:
        return ("case" if case_id in layout.case_ids else "removed-case"), case_id
    for name, folder, _cases in layout.targets:
        if path.startswith(folder.rstrip("/") + "/"):
            return f"target:{name}", None
    if path.startswith(layout.root.rstrip("/") + "/"):
        return "corpus-wide", None
    return "elsewhere", None


def _group_of(
    path: str, cls: ImpactClass, pattern: str | None, layout: CorpusLayout | None
) -> tuple[str, str | None]:
    """A classified path's group and, when it is in a case's folder, that case."""
    if pattern is None:
        return "unmatched", None
    if cls is ImpactClass.CORPUS:
        return _corpus_group(path, layout)
    return cls.value, None


def _sort_changes(
    unique: Sequence[str], impact: ImpactConfig, layout: CorpusLayout | None
) -> _Changes:
    """Classify each path of ``unique`` and file it under its group or its case."""
    changes = _Changes()
    for path in unique:
        cls, pattern = impact.classify_path(path)
        group, case_id = _group_of(path, cls, pattern, layout)
        if case_id is not None:
            by_case = changes.cases if group == "case" else changes.removed
            by_case.setdefault(case_id, []).append(path)
        else:
            changes.groups.setdefault(group, []).append(path)
        changes.impacts.append(PathImpact(path=path, impact=cls, glob=pattern, case_id=case_id))
    return changes


def _everything_reasons(groups: dict[str, list[str]]) -> list[str]:
    """Reasons that call for every case and every stage, one per kind of change."""
    reasons: list[str] = []
    if groups.get("agent"):
        reasons.append(f"agent changed ({_listing(groups['agent'])}): every case, every stage")
    if groups.get("pipeline"):
        reasons.append(
            f"pipeline changed ({_listing(groups['pipeline'])}): every case, every stage"
        )
    for path in groups.get("unmatched", []):
        reasons.append(f"{path} matches no impact glob: treated as pipeline (fail safe)")
    if groups.get("corpus-wide"):
        reasons.append(
            f"corpus-wide file changed ({_listing(groups['corpus-wide'])}): every case, every stage"
        )
    if groups.get("corpus-unplaced"):
        reasons.append(
            f"corpus changed ({_listing(groups['corpus-unplaced'])}) but the evaluated corpus "
            "is not inside the repository, so the change cannot be pinned to a case: every case"
        )
    return reasons


def _rescore_reasons(groups: dict[str, list[str]]) -> list[str]:
    """The reason to re-score every case, if the judge changed."""
    if not groups.get("judge"):
        return []
    return [
        f"judge configuration changed ({_listing(groups['judge'])}): re-score every case "
        "(the sandbox runs too: the judge reads the reports it produces)"
    ]


def _case_reasons(changes: _Changes, layout: CorpusLayout | None) -> list[str]:
    """Reasons for changed cases, removed cases and changes in another corpus, in that order."""
    reasons: list[str] = []
    for case_id, case_paths in sorted(changes.cases.items()):
        reasons.append(f"case {case_id} changed ({_listing(case_paths)}): that case, every stage")
    for case_id in sorted(changes.removed):
        reasons.append(
            f"case {case_id} is not in the corpus (removed by this PR?): nothing to run for it"
        )
    elsewhere = changes.groups.get("elsewhere")
    if elsewhere:
        where = layout.root if layout else "this corpus"
        reasons.append(
            f"change in another corpus ({_listing(elsewhere)}): nothing to run for {where}"
        )
    return reasons


def _target_cases(changes: _Changes, layout: CorpusLayout | None) -> set[str]:
    """The cases of every target whose tree the PR changes."""
    changed = {g.removeprefix("target:") for g in changes.groups if g.startswith("target:")}
    if layout is None:
        return set()
    return {c for name, _folder, cases in layout.targets if name in changed for c in cases}


def _target_reasons(changes: _Changes) -> list[str]:
    """One reason per changed target tree."""
    return [
        f"target {group.removeprefix('target:')} changed ({_listing(paths)}): its cases, "
        "every stage"
        for group, paths in sorted(changes.groups.items())
        if group.startswith("target:")
    ]


def _scope_and_stages(
    *, everything: bool, rescore: bool, cases: bool
) -> tuple[CaseScope, list[PipelineStage]]:
    """Which cases run and the stages they run, in pipeline order (none when nothing runs)."""
    stages: set[PipelineStage] = set()
    if everything:
        scope, stages = CaseScope.ALL, set(ALL_STAGES)
    elif rescore:
        scope, stages = CaseScope.ALL, set(RESCORE_STAGES)
    else:
        scope = CaseScope.LISTED if cases else CaseScope.NONE
    if cases:
        stages |= set(ALL_STAGES)
    if scope is CaseScope.NONE:
        return scope, []
    return scope, [s for s in ALL_STAGES if s in stages]


def plan_for_paths(
    paths: Iterable[str], *, impact: ImpactConfig, layout: CorpusLayout | None
) -> RunPlan:
    """The run plan for a PR's changed paths (rules in the module docstring).

    ``layout`` places the evaluated corpus in the repository; without it a
    corpus change cannot be pinned to one case and runs every case. An empty
    path list runs nothing. The plan does not depend on the order of
    ``paths``. Never raises.
    """
    unique = sorted(set(paths))
    if not unique:
        return RunPlan(
            scope=CaseScope.NONE, reasons=["the PR diff changes no files: nothing to evaluate"]
        )
    changes = _sort_changes(unique, impact, layout)
    everything = _everything_reasons(changes.groups)
    rescore = _rescore_reasons(changes.groups)
    targeted = _target_cases(changes, layout)
    reasons = everything + rescore + _case_reasons(changes, layout) + _target_reasons(changes)
    listed = set(changes.cases) | targeted
    scope, stages = _scope_and_stages(
        everything=bool(everything), rescore=bool(rescore), cases=bool(listed)
    )
    docs = changes.groups.get("docs")
    if docs:
        only_docs = len(docs) == len(unique)
        reasons.append(
            DOCS_ONLY if only_docs else f"docs changed ({_listing(docs)}): no effect on the run"
        )
    if scope is CaseScope.NONE and not reasons:
        reasons.append("no change affects this corpus: nothing to evaluate")
    return RunPlan(
        scope=scope,
        case_ids=sorted(listed) if scope is CaseScope.LISTED else [],
        stages=stages,
        reasons=reasons,
        paths=changes.impacts,
    )
