"""Stage 1 on a whole corpus in one call: validate and label every case, and plan the run.

:func:`classify_corpus` is the body of the ``classify`` Prefect task: plain
data in, plain data out, no ledger, no Prefect import.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bughunt.errors import InputError
from bughunt.models import BugCategory
from corpus import DEFAULT_MAX_PATCH_BYTES, Corpus, LoadedCase, RejectedCase
from tasks.classify._impact import (
    CaseScope,
    CorpusLayout,
    ImpactConfig,
    RunPlan,
    full_plan,
    load_impact_config,
    plan_for_paths,
)
from tasks.classify._rules import Evidence, categorize
from tasks.classify._target import check_target_tree
from tasks.classify.patch import (
    DEFAULT_APPLY_TIMEOUT_S,
    FileStatus,
    ParsedPatch,
    changed_paths,
    validate_patch,
)


@dataclass(frozen=True, slots=True)
class PatchLimits:
    """How far a case's patch is checked: its size, and how long ``git apply --check`` may take."""

    max_bytes: int = DEFAULT_MAX_PATCH_BYTES
    """A patch over this many bytes is rejected unread."""
    apply_timeout: float = DEFAULT_APPLY_TIMEOUT_S
    """Seconds ``git apply --check`` may take."""


DEFAULT_PATCH_LIMITS = PatchLimits()


class FileSummary(BaseModel):
    """One file a case's patch touches."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    path: str
    """Path after the patch (before it, for a deleted file), relative to the target."""
    old_path: str | None = None
    """Path before a rename or copy."""
    status: FileStatus
    """modified, added, deleted, renamed or copied."""
    language: str
    """Language from the extension (``unknown`` when not known)."""
    hunks: int
    """Hunks in this file."""
    added: int
    """Lines added."""
    removed: int
    """Lines removed."""


class CaseClassification(BaseModel):
    """A case whose patch is valid: its category and size figures."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    case_id: str
    """Case id."""
    title: str
    """Case title."""
    category: BugCategory
    """Category from the rules (``tasks.classify`` module docs)."""
    rule: str
    """The deciding rule in words."""
    evidence: Evidence | None = None
    """The change that decided it."""
    expected_category: BugCategory | None = None
    """The category the corpus author intends, when given."""
    matches_expected: bool | None = None
    """Whether ``category`` is the expected one; ``None`` when none is given."""
    files: list[FileSummary]
    """Files touched, in patch order."""
    hunks: int
    """Hunks over all files."""
    added: int
    """Lines added over all files."""
    removed: int
    """Lines removed over all files."""
    languages: list[str]
    """Languages of the files touched, sorted."""


class ClassifyResult(BaseModel):
    """What the classify stage hands on: labelled cases, rejected cases, and the run plan."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    corpus: str
    """Corpus name."""
    corpus_root: str
    """Corpus folder."""
    cases: list[CaseClassification] = Field(default_factory=list)
    """Cases with a valid patch, sorted by id."""
    rejected: list[RejectedCase] = Field(default_factory=list)
    """Cases that cannot run (bad case file or bad patch), sorted by id, each with its reason."""
    plan: RunPlan
    """Which cases and stages run, and why."""
    planned_case_ids: list[str] = Field(default_factory=list)
    """The plan applied to this corpus: valid cases it selects, sorted (rejected ones never)."""
    # Not ``keys``: a field of that name makes ``dict(result)`` (Prefect does it) call it.
    case_keys: dict[str, str] = Field(default_factory=dict)
    """Case id → classify key (``tasks/classify/_incremental.py``); empty when not computed."""
    classified: int = 0
    """Cases validated and labelled by this run."""
    reused: int = 0
    """Cases whose earlier result was reused (same classify key): not validated again."""

    def categories(self) -> dict[str, BugCategory | None]:
        """Case id → bug category of every labelled case (``None``: no rule matched)."""
        return {c.case_id: c.category for c in self.cases}


def summarize(case: LoadedCase, patch: ParsedPatch) -> CaseClassification:
    """Category, files and size figures of a case whose patch is already validated."""
    decision = categorize(patch)
    expected = case.case.expected_category
    return CaseClassification(
        case_id=case.case_id,
        title=case.case.title,
        category=decision.category,
        rule=decision.rule,
        evidence=decision.evidence,
        expected_category=expected,
        matches_expected=None if expected is None else decision.category == expected,
        files=[
            FileSummary(
                path=f.path,
                old_path=f.old_path
                if f.status in (FileStatus.RENAMED, FileStatus.COPIED)
                else None,
                status=f.status,
                language=f.language,
                hunks=len(f.hunks),
                added=f.added,
                removed=f.removed,
            )
            for f in patch.files
        ],
        hunks=patch.hunks,
        added=patch.added,
        removed=patch.removed,
        languages=sorted({f.language for f in patch.files}),
    )


def classify_case(
    case: LoadedCase,
    *,
    corpus_root: Path,
    target: Path,
    limits: PatchLimits = DEFAULT_PATCH_LIMITS,
) -> CaseClassification | RejectedCase:
    """Validate one case's patch against ``target`` and label it; a bad patch is returned rejected.

    Never raises on the patch's content, whatever its bytes. Raises
    :class:`~bughunt.errors.TerminalError` only if ``git`` is missing.
    """
    try:
        file = case.patch_path.relative_to(corpus_root).as_posix()
    except ValueError:
        file = case.patch_path.as_posix()
    try:
        patch = validate_patch(
            case.patch,
            target,
            file=file,
            max_bytes=limits.max_bytes,
            apply_timeout=limits.apply_timeout,
        )
    except InputError as exc:
        return RejectedCase(
            case_id=case.case_id,
            file=exc.file or file,
            line=exc.line,
            reason=exc.message,
            stage="validate",
        )
    return summarize(case, patch)


def find_repo_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git``, else ``pyproject.toml``; or None."""
    start = start.resolve()
    chain = [start, *start.parents]
    for marker in (".git", "pyproject.toml"):
        for folder in chain:
            if (folder / marker).exists():
                return folder
    return None


def corpus_layout(corpus: Corpus, repo_root: Path) -> CorpusLayout | None:
    """Where ``corpus`` sits under ``repo_root``; ``None`` when it is not inside it."""
    root = repo_root.resolve()
    if not corpus.root.is_relative_to(root) or not corpus.config.cases.is_relative_to(root):
        return None
    ids = {c.case_id for c in corpus.cases} | {r.case_id for r in corpus.rejected}
    targets = tuple(
        (
            t.name,
            t.path.relative_to(root).as_posix(),
            frozenset(c.case_id for c in corpus.cases_of(t.name)),
        )
        for t in corpus.targets
        if t.path.is_relative_to(root)
    )
    return CorpusLayout(
        root=corpus.root.relative_to(root).as_posix(),
        cases=corpus.config.cases.relative_to(root).as_posix(),
        case_ids=frozenset(ids),
        targets=targets,
    )


def plan_for_diff(
    corpus: Corpus,
    pr_diff: bytes,
    *,
    impact: ImpactConfig | None = None,
    repo_root: Path | None = None,
) -> RunPlan:
    """The run plan of a PR diff for ``corpus``.

    ``repo_root`` defaults to :func:`find_repo_root` of the corpus folder;
    ``impact`` defaults to that root's ``pyproject.toml`` (or the built-in
    globs). Raises :class:`InputError` when the diff is too large or cannot
    be parsed, or when ``pyproject.toml``'s impact table is invalid: a PR run
    must not guess what changed.
    """
    return plan_for_changed(corpus, changed_paths(pr_diff), impact=impact, repo_root=repo_root)


def plan_for_changed(
    corpus: Corpus,
    paths: Iterable[str],
    *,
    impact: ImpactConfig | None = None,
    repo_root: Path | None = None,
) -> RunPlan:
    """The run plan for ``corpus`` of a PR's changed paths (:func:`changed_paths` of its diff).

    ``repo_root`` and ``impact`` default as in :func:`plan_for_diff`. Raises
    :class:`InputError` only when ``impact`` is not given and ``pyproject.toml``'s impact
    table is invalid.
    """
    root = repo_root or find_repo_root(corpus.root)
    if impact is None:
        impact = load_impact_config(root / "pyproject.toml" if root else None)
    layout = corpus_layout(corpus, root) if root else None
    return plan_for_paths(paths, impact=impact, layout=layout)


def _target_errors(corpus: Corpus) -> dict[str, InputError]:
    """Why each target tree that cannot be used (a symlink in it) cannot, by target name."""
    errors = {}
    for target in corpus.targets:
        try:
            check_target_tree(target.path, shown_as=corpus.relative(target.path))
        except InputError as exc:
            errors[target.name] = exc
    return errors


@dataclass(frozen=True, slots=True)
class Reuse:
    """What a classify run may take from earlier runs instead of validating a case again."""

    keys: Mapping[str, str]
    """Case id → classify key (kept in the result)."""
    earlier: Mapping[str, CaseClassification | RejectedCase]
    """Classify key → an earlier result for the same case id."""


def classify_corpus(
    corpus: Corpus,
    pr_diff: bytes | None = None,
    *,
    impact: ImpactConfig | None = None,
    repo_root: Path | None = None,
    limits: PatchLimits = DEFAULT_PATCH_LIMITS,
    reuse: Reuse | None = None,
    changed: Iterable[str] | None = None,
) -> ClassifyResult:
    """Validate and label every case of ``corpus`` and plan the run, in one call.

    Without ``pr_diff`` the plan is every case, every stage (a nightly run);
    ``changed``, a PR's changed paths parsed already, stands for its diff.
    A case whose patch fails validation joins the loader's rejected cases
    with its reason; the others are still labelled. A target tree holding a
    symlink (``tasks/classify/_target.py``) is checked first, once: then every
    case on that target is rejected with that reason, naming the link and where it points,
    before anything else is done with it (the plan and the loader's
    rejections are kept, nothing is planned). ``reuse.keys`` (case id →
    classify key) are kept in the result; a case whose key is in
    ``reuse.earlier`` (key → an earlier result for the same case id) takes that
    result instead of being validated again. Raises :class:`InputError` only for a broken PR
    diff or impact config (see :func:`plan_for_diff`), and
    :class:`~bughunt.errors.TerminalError` when ``git`` is missing.
    """
    if changed is not None:
        plan = plan_for_changed(corpus, changed, impact=impact, repo_root=repo_root)
    elif pr_diff is not None:
        plan = plan_for_diff(corpus, pr_diff, impact=impact, repo_root=repo_root)
    else:
        plan = full_plan("no PR diff: every case, every stage")
    labelled: list[CaseClassification] = []
    rejected = list(corpus.rejected)
    keys = dict(reuse.keys) if reuse is not None else {}
    earlier_results = reuse.earlier if reuse is not None else {}
    classified = reused = 0
    bad_targets = _target_errors(corpus)
    for case in corpus.cases:
        target = corpus.target_of(case).path
        bad_target = bad_targets.get(case.target)
        if bad_target is not None:  # every case on this target: none of them can be evaluated
            rejected.append(
                RejectedCase(
                    case_id=case.case_id,
                    file=bad_target.file or corpus.relative(target),
                    reason=bad_target.message,
                    stage="validate",
                )
            )
            classified += 1
            continue
        key = keys.get(case.case_id)
        earlier = earlier_results.get(key) if key is not None else None
        if earlier is not None and earlier.case_id == case.case_id:
            result: CaseClassification | RejectedCase = earlier
            reused += 1
        else:
            result = classify_case(
                case,
                corpus_root=corpus.root,
                target=target,
                limits=limits,
            )
            classified += 1
        if isinstance(result, CaseClassification):
            labelled.append(result)
        else:
            rejected.append(result)
    labelled.sort(key=lambda c: c.case_id)
    rejected.sort(key=lambda r: r.case_id)
    planned = [c.case_id for c in labelled if plan.selects(c.case_id)]
    if plan.scope is CaseScope.NONE or not plan.stages:
        planned = []
    return ClassifyResult(
        corpus=corpus.name,
        corpus_root=str(corpus.root),
        cases=labelled,
        rejected=rejected,
        plan=plan,
        planned_case_ids=planned,
        case_keys=keys,
        classified=classified,
        reused=reused,
    )
