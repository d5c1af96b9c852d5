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
the others are imported.
"""

from __future__ import annotations

import difflib
import io
import re
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
from tasks.classify import git_apply_argv, git_apply_env, parse_patch
from tasks.make_corpus._write import (
    TargetTable,
    agent_tables,
    check_out,
    corpus_name_of,
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
    text = file.read_text(encoding="utf-8")
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
    out.mkdir(parents=True, exist_ok=True)
    targets: list[TargetTable] = []
    cases: list[str] = []
    skipped: list[Skipped] = []
    for line, raw in read_instances(file):
        if isinstance(raw, str):
            skipped.append(Skipped(line=line, instance_id=None, reason=raw))
            continue
        try:
            instance = Instance.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            reason = f"field {where}: {first['msg']}"
            skipped.append(Skipped(line=line, instance_id=raw.get("instance_id"), reason=reason))
            continue
        case_id = _case_id(instance.instance_id)
        try:
            if case_id in cases:
                raise InputError(f"instance id {instance.instance_id!r} is given twice")
            targets.append(_import_one(instance, case_id, repos=repos, out=out))
        except InputError as exc:
            skipped.append(Skipped(line=line, instance_id=instance.instance_id, reason=exc.message))
            continue
        cases.append(case_id)
    name = corpus_name_of(file.stem)
    write_corpus_toml(out, name, targets, agents)
    return ImportSummary(cases=cases, skipped=skipped, out=str(out))


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
    """Write one instance's target tree and case; the target's table to list."""
    checkout = _checkout(repos, instance.repo)
    archive = _git(checkout, "archive", "--format=tar", instance.base_commit)
    fix_files = _modified_files(instance.patch)
    with tempfile.TemporaryDirectory(prefix="bughunt-import-") as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        before = {path: (tree / path).read_text(encoding="utf-8") for path in fix_files}
        _apply(tree, instance.patch, "fix (patch)")
        _apply(tree, instance.test_patch, "test patch")
        bug = "".join(
            "".join(
                difflib.unified_diff(
                    (tree / path).read_text(encoding="utf-8").splitlines(keepends=True),
                    before[path].splitlines(keepends=True),
                    f"a/{path}",
                    f"b/{path}",
                )
            )
            for path in fix_files
        )
        target = out / "targets" / case_id
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-a", str(tree), str(target)], check=True, timeout=120)
    folder = out / "cases" / case_id
    folder.mkdir(parents=True)
    (folder / "bug.patch").write_text(bug)
    title = _title(instance)
    Case(case_id=case_id, title=title)  # the id and title a case may have, checked here
    (folder / "case.toml").write_text(
        f"id = {toml_value(case_id)}\ntitle = {toml_value(title)}\n"
        f"target = {toml_value(case_id)}\n# imported from {instance.instance_id}\n"
    )
    tests = [*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS]
    oracle = sorted(
        {t.split("::")[0] for t in instance.FAIL_TO_PASS}
        | {f.path for f in parse_patch(instance.test_patch).files}
    )
    return TargetTable(
        name=case_id, path=f"targets/{case_id}", test_command=[*PYTEST, *tests], oracle=oracle
    )


def _modified_files(patch: str) -> Sequence[str]:
    """The files the fix modifies; a fix that adds, deletes or renames files is not supported."""
    parsed = parse_patch(patch)
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
