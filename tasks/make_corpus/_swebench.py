"""``bughunt corpus import --format swebench``: public bug benchmarks as a corpus (docs/corpus.md#import).

An instance in the SWE-bench format (``instance_id``, ``repo``,
``base_commit``, ``patch`` — the fix —, ``test_patch``, ``FAIL_TO_PASS``,
``PASS_TO_PASS``, optionally ``problem_statement``) becomes one target and
one case, from a local git checkout of its repository:

- the **target** is the base commit with the fix and the test patch applied:
  the fixed code with the tests that show the bug;
- the **injected bug** (``bug.patch``) is the fix reversed, and nothing else;
- the target's **oracle** is the files of the ``FAIL_TO_PASS`` tests and every
  file the test patch touches, held out of the agent's tree; its
  ``test_command`` runs ``FAIL_TO_PASS`` and ``PASS_TO_PASS`` by node id, so the
  clean tree must pass both and the buggy tree fails the first.

A bad instance (a missing field, a repository not in ``--repos``, a commit
it lacks, a patch that does not apply) is skipped with its line and reason;
the others are imported. Nothing of an instance is read on the host before it
is checked: both patches go through classify's validation
(:func:`tasks.classify.patch.validate_patch`: relative paths inside the tree, no
``..``, no symlink, applies) before a file they name is read, and a file is
read only when it is a regular file (:mod:`bughunt.safeio`). The corpus is
written into a folder next to ``--out`` and moved into place whole.
"""

from __future__ import annotations

import difflib
import io
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bughunt import jsontext
from bughunt.errors import InputError
from bughunt.models import Case
from bughunt.safeio import TREE_FILE_LIMIT, copy_tree, read_input, read_text_input
from tasks.classify import check_target_tree
from tasks.classify.patch import ParsedPatch, git_apply_argv, git_apply_env, validate_patch
from tasks.make_corpus._write import (
    TargetTable,
    agent_tables,
    check_out,
    corpus_name_of,
    staged,
    toml_value,
    write_corpus_toml,
)

PYTEST = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"]


class Instance(BaseModel):
    """One SWE-bench-style instance (other fields are ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    instance_id: str = Field(min_length=1, max_length=200)
    repo: str = Field(pattern=r"^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$")
    base_commit: str = Field(pattern=r"^[0-9a-f]{7,40}$")
    patch: str = Field(min_length=1)
    test_patch: str = Field(min_length=1)
    FAIL_TO_PASS: list[str] = Field(min_length=1)
    PASS_TO_PASS: list[str] = []
    problem_statement: str | None = None

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        """SWE-bench's files give these lists as JSON text inside the JSON."""
        return jsontext.loads(value) if isinstance(value, str) else value

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS")
    @classmethod
    def _node_ids(cls, value: list[str]) -> list[str]:
        """Node ids only: an option would change how pytest runs the suite, and a file outside
        the tree would be missing from the oracle held out of the agent's tree."""
        for node in value:
            file = node.split("::")[0]
            if not node.strip() or node.startswith("-"):
                raise ValueError(f"{node!r} is not a pytest node id (an option or empty)")
            if file.startswith("/") or ".." in file.split("/"):
                raise ValueError(f"{node!r} names a file outside the repository")
        return value

    @field_validator("repo")
    @classmethod
    def _repo(cls, value: str) -> str:
        """``owner/name`` with neither part ``.`` or ``..`` (it names a folder in ``--repos``)."""
        if {".", ".."} & set(value.split("/")):
            raise ValueError(f"{value!r} is not owner/name (a part is . or ..)")
        return value


class Skipped(BaseModel):
    """An instance that was not imported, and why."""

    model_config = ConfigDict(frozen=True)

    line: int
    """1-based line (JSON lines) or array position + 1."""
    instance_id: str | None
    reason: str


class ImportSummary(BaseModel):
    """What one import wrote."""

    model_config = ConfigDict(frozen=True)

    cases: list[str]
    """Case ids written (one target each)."""
    skipped: list[Skipped]
    """Instances not imported, each with its line and reason."""
    out: str
    """The corpus folder."""


def read_instances(file: Path) -> list[tuple[int, dict[str, Any] | str]]:
    """Each instance of a JSON array or JSON-lines file with its line, or why it is unreadable."""
    text = read_text_input(file, what="an import file")
    if text.lstrip().startswith("["):
        try:
            items = jsontext.loads(text)
        except jsontext.JsonTextError as exc:
            raise InputError(str(exc), file=str(file), line=exc.line) from None
        return [(i + 1, x if isinstance(x, dict) else "not an object") for i, x in enumerate(items)]
    out: list[tuple[int, dict[str, Any] | str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = jsontext.loads(line)
        except jsontext.JsonTextError as exc:
            out.append((number, f"not JSON: {exc}"))
            continue
        out.append((number, value if isinstance(value, dict) else "not an object"))
    return out


def import_swebench(file: Path, *, repos: Path, out: Path, agents_from: Path) -> ImportSummary:
    """The instances of ``file`` as a corpus in ``out`` (see the module); ``repos`` holds a
    git checkout per repository, as ``<owner>__<name>`` or ``<name>``."""
    check_out(out)
    agents = agent_tables(agents_from)
    instances = read_instances(file)
    targets: list[TargetTable] = []
    cases: list[str] = []
    skipped: list[Skipped] = []
    with staged(out) as work:
        for line, raw in instances:
            if isinstance(raw, str):
                skipped.append(Skipped(line=line, instance_id=None, reason=raw))
                continue
            try:
                instance = Instance.model_validate(raw)
            except ValidationError as exc:
                skipped.append(Skipped(line=line, instance_id=_id_of(raw), reason=_field(exc)))
                continue
            case_id = _case_id(instance.instance_id)
            try:
                if case_id in cases:
                    raise InputError(f"instance id {instance.instance_id!r} is given twice")
                targets.append(_import_one(instance, case_id, repos=repos, out=work))
            except InputError as exc:
                reason = exc.describe()
                skipped.append(Skipped(line=line, instance_id=instance.instance_id, reason=reason))
                continue
            cases.append(case_id)
        write_corpus_toml(work, corpus_name_of(file.stem), targets, agents)
    return ImportSummary(cases=cases, skipped=skipped, out=str(out))


def _id_of(raw: dict[str, Any]) -> str | None:
    value = raw.get("instance_id")
    return value if isinstance(value, str) else None


def _field(exc: ValidationError) -> str:
    """The first error of an instance's validation, as ``field <name>: <message>``."""
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"field {where}: {first['msg']}"


def _case_id(instance_id: str) -> str:
    """A case id (and target name) of an instance id: ``Django__Django-11099`` → ``django__django-11099``."""
    return re.sub(r"[^a-z0-9._-]+", "-", instance_id.lower()).strip("-.")[:120] or "instance"


def _checkout(repos: Path, repo: str) -> Path:
    owner, name = repo.split("/")
    for candidate in (repos / f"{owner}__{name}", repos / name):
        if (candidate / ".git").exists():
            return candidate
    raise InputError(f"no git checkout of {repo} in {repos} (as {owner}__{name} or {name})")


def _git(checkout: Path, *args: str) -> bytes:
    proc = subprocess.run(
        ["git", "-C", str(checkout), *args], capture_output=True, timeout=120, check=False
    )
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(f"git {args[0]} failed: {said[-1] if said else proc.returncode}")
    return proc.stdout


def _apply(tree: Path, patch: str, what: str) -> None:
    proc = subprocess.run(
        git_apply_argv(check=False),
        cwd=tree,
        input=patch.encode(),
        capture_output=True,
        env=git_apply_env(tree),
        timeout=60,
        check=False,
    )
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(
            f"the {what} does not apply to the base commit: {said[-1] if said else ''}"
        )


def _import_one(instance: Instance, case_id: str, *, repos: Path, out: Path) -> TargetTable:
    """Write one instance's target tree and case; the target's table to list.

    Everything is checked before anything is written or a named file read: the
    case id and title, both patches' paths (classify's validation, against the
    base tree), the tree itself (no symlink: a target holds none). An
    :class:`InputError` says why the instance is skipped.
    """
    title = _title(instance)
    try:
        Case(case_id=case_id, title=title)  # the id and title a case may have
    except ValidationError as exc:
        raise InputError(f"not a usable case: {_field(exc)}") from None
    checkout = _checkout(repos, instance.repo)
    archive = _git(checkout, "archive", "--format=tar", instance.base_commit)
    with tempfile.TemporaryDirectory(prefix="bughunt-import-") as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        _extract(archive, tree)
        check_target_tree(tree, shown_as=f"{instance.repo}@{instance.base_commit}")
        fix = validate_patch(instance.patch.encode(), tree, file="patch")
        tests_patch = validate_patch(instance.test_patch.encode(), tree, file="test_patch")
        fix_files = _modified_files(fix)
        before = {path: _text(tree, path) for path in fix_files}
        _apply(tree, instance.patch, "fix (patch)")
        _apply(tree, instance.test_patch, "test patch")
        bug = "".join(
            "".join(
                difflib.unified_diff(
                    _text(tree, path).splitlines(keepends=True),
                    before[path].splitlines(keepends=True),
                    f"a/{path}",
                    f"b/{path}",
                )
            )
            for path in fix_files
        )
        try:
            copy_tree(tree, out / "targets" / case_id)
        except InputError:  # a file over the limit: the instance is skipped, not half-kept
            shutil.rmtree(out / "targets" / case_id, ignore_errors=True)
            raise
    folder = out / "cases" / case_id
    folder.mkdir(parents=True)
    (folder / "bug.patch").write_text(bug)
    (folder / "case.toml").write_text(
        f"id = {toml_value(case_id)}\ntitle = {toml_value(title)}\n"
        f"target = {toml_value(case_id)}\n# imported from {instance.instance_id}\n"
    )
    tests = [*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS]
    oracle = sorted(
        {t.split("::")[0] for t in instance.FAIL_TO_PASS} | {f.path for f in tests_patch.files}
    )
    return TargetTable(
        name=case_id, path=f"targets/{case_id}", test_command=[*PYTEST, *tests], oracle=oracle
    )


def _extract(archive: bytes, tree: Path) -> None:
    """``git archive``'s tar into ``tree``; a member the ``data`` filter refuses (a link out
    of the tree, an absolute path) is an :class:`InputError`."""
    try:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
    except tarfile.TarError as exc:
        raise InputError(f"the base commit's tree cannot be extracted safely: {exc}") from None


def _text(tree: Path, path: str) -> str:
    """The UTF-8 text of the regular file ``path`` of ``tree`` (never followed)."""
    try:
        data = read_input(tree / path, limit=TREE_FILE_LIMIT, what="a fixed file", follow=False)
    except InputError as exc:
        raise InputError(f"{path}: {exc.message}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(
            f"{path} is not UTF-8 text: a bug.patch can only be made of UTF-8 files"
        ) from None


def _modified_files(parsed: ParsedPatch) -> Sequence[str]:
    """The files the fix modifies; a fix that adds, deletes or renames files is not supported."""
    odd = [f.path for f in parsed.files if f.status.value != "modified"]
    if odd:
        raise InputError(
            f"the fix adds, deletes or renames files ({', '.join(odd)}): only modified files "
            "can be reversed into an injected bug"
        )
    return [f.path for f in parsed.files]


def _title(instance: Instance) -> str:
    """The problem statement's first line, else the first failing test's name."""
    for line in (instance.problem_statement or "").splitlines():
        if line.strip():
            return line.strip()[:200]
    return f"{instance.FAIL_TO_PASS[0]} fails"
