"""The corpus format (``corpus.toml`` + ``cases/<id>/{case.toml,bug.patch}``) and its loader.

A broken ``corpus.toml`` is fatal: :func:`load_corpus` raises
:class:`~bughunt.errors.InputError` naming the file, the field and, for TOML
syntax errors, the line. A broken case is not: it becomes a
:class:`RejectedCase` with its reason and the other cases load (docs/architecture.md#bad-input).

Every path in ``corpus.toml`` is relative to the file and must stay inside the
corpus folder once symlinks are resolved: the sandbox mounts these folders,
and a ``../`` or a symlink must not bring the host's files in.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bughunt.config import read_toml
from bughunt.errors import InputError
from bughunt.models import AgentEnvironment, AgentMode, AgentVersion, BugCategory, Case
from bughunt.safeio import read_input
from corpus._network import check_network
from corpus._oracle import DEFAULT_ORACLE

CORPUS_FILE = "corpus.toml"
CASE_FILE = "case.toml"
PATCH_FILE = "bug.patch"

DEFAULT_MAX_PATCH_BYTES = 1024 * 1024
"""Largest ``bug.patch`` accepted (1 MiB); larger ones are rejected unread."""

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)


class PairingConfig(_Model):
    """Which two agent versions a run compares."""

    baseline: str = Field(min_length=1)
    """Name of the baseline agent version (one of ``[[agents]]``)."""
    candidate: str = Field(min_length=1)
    """Name of the candidate agent version (one of ``[[agents]]``)."""


LEGACY_TARGET = "target"
"""The name of a corpus's one target when ``corpus.toml`` gives it inline (``target = ...``)."""

_TARGET_FIELDS = ("target", "test_command", "oracle", "test_timeout_s", "visible_tests")


class TargetConfig(_Model):
    """One target tree cases are injected into (``[[targets]]``), with how its suite runs."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=80)
    """Target name; a case names it (``target`` in case.toml) when the corpus has several."""
    path: Path
    """Folder of the target tree (absolute after loading)."""
    test_command: list[str] = Field(min_length=1)
    """Argument vector that runs the target's own tests (no shell)."""
    oracle: list[str] = Field(default_factory=lambda: list(DEFAULT_ORACLE), min_length=1)
    """Patterns (relative to the target) of the tests that reveal bugs; held out of agents' trees."""
    test_timeout_s: float | None = Field(default=None, gt=0, le=3_600)
    """Per-test deadline of reproduction tests on this target (a run's ``--test-timeout`` wins)."""
    visible_tests: list[str] = Field(default_factory=list)
    """Patterns of oracle files agents may see; a case whose bug one of them reveals is refused."""
    environment: AgentEnvironment | None = None
    """Debian packages and hashed Python requirements the target's suite and reproduction
    tests need, built into an image FROM the sandbox base (docs/corpus.md#targets)."""


class CorpusConfig(_Model):
    """``corpus.toml``; after :func:`load_corpus` every path in it is absolute and ``targets``
    holds every target (the inline form's one target too)."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=80)
    """Corpus name, shown in reports."""
    cases: Path
    """Folder holding one folder per case."""
    targets: list[TargetConfig] = Field(default_factory=list)
    """The target trees (``[[targets]]``); each case names its own."""
    target: Path | None = None
    """Inline form of a corpus with one target: its folder (with ``test_command``, ``oracle``,
    ``test_timeout_s``, ``visible_tests`` beside it). Moved into ``targets`` on loading."""
    test_command: list[str] | None = Field(default=None, min_length=1)
    """Inline form: the one target's test command."""
    oracle: list[str] | None = Field(default=None, min_length=1)
    """Inline form: the one target's oracle patterns."""
    test_timeout_s: float | None = Field(default=None, gt=0, le=3_600)
    """Inline form: the one target's per-test deadline."""
    visible_tests: list[str] | None = None
    """Inline form: the one target's visible oracle files."""
    pairing: PairingConfig
    """Baseline and candidate agent versions."""
    agents: list[AgentVersion] = Field(min_length=1)
    """Every agent version the corpus knows; ``path`` and ``reports`` are absolute after loading."""


class LoadedCase(BaseModel):
    """One case that loaded: its metadata and the bytes of its patch (not yet validated)."""

    model_config = ConfigDict(frozen=True, ser_json_bytes="base64", val_json_bytes="base64")

    case: Case
    """Metadata from ``case.toml``."""
    target: str = LEGACY_TARGET
    """Name of the target the case's patch applies to."""
    case_dir: Path
    """The case's folder."""
    patch_path: Path
    """Its ``bug.patch``."""
    patch: bytes = Field(repr=False)
    """Raw bytes of ``bug.patch``, at most the loader's size limit."""

    @property
    def case_id(self) -> str:
        """The case's id (its folder name)."""
        return self.case.case_id


class RejectedCase(BaseModel):
    """A case that cannot be evaluated, and why (docs/architecture.md#bad-input: an unscored case with its reason)."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    case_id: str
    """The case folder's name."""
    file: str
    """File at fault, relative to the corpus folder (e.g. ``cases/x/bug.patch``)."""
    reason: str
    """What is wrong, in words."""
    line: int | None = None
    """1-based line in ``file``, when one is at fault."""
    field: str | None = None
    """Field at fault (e.g. ``title``), when one is."""
    stage: Literal["load", "validate"] = "load"
    """Whether the loader or the patch validation rejected it."""

    def describe(self) -> str:
        """``cases/x/bug.patch:3, field 'title': reason`` — where first, then what."""
        return InputError(self.reason, file=self.file, line=self.line, field=self.field).describe()


class Corpus(BaseModel):
    """A loaded corpus: its config, the cases that loaded, and the ones that did not."""

    model_config = ConfigDict(frozen=True)

    root: Path
    """The corpus folder (absolute, symlinks resolved)."""
    config_file: Path
    """Its ``corpus.toml``."""
    config: CorpusConfig
    """The parsed config, paths absolute."""
    cases: list[LoadedCase]
    """Cases that loaded, sorted by id."""
    rejected: list[RejectedCase]
    """Cases that did not load, sorted by id, each with its reason."""

    @property
    def name(self) -> str:
        """The corpus name from ``corpus.toml``."""
        return self.config.name

    @property
    def targets(self) -> list[TargetConfig]:
        """Every target of the corpus."""
        return self.config.targets

    def target_of(self, case: LoadedCase | str) -> TargetConfig:
        """The target a case (or a target name) applies to."""
        name = case if isinstance(case, str) else case.target
        for target in self.config.targets:
            if target.name == name:
                return target
        raise KeyError(f"corpus {self.name!r} has no target {name!r}")

    def cases_of(self, target: str) -> list[LoadedCase]:
        """The cases that apply to one target."""
        return [c for c in self.cases if c.target == target]

    def relative(self, path: Path) -> str:
        """``path`` relative to the corpus folder when inside it, else as given (POSIX)."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


# --- errors ------------------------------------------------------------------


def _loc(loc: tuple[int | str, ...]) -> str:
    """Pydantic's ``('agents', 1, 'mode')`` as ``agents[1].mode``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def validation_error(exc: ValidationError, *, file: str) -> InputError:
    """One :class:`InputError` naming every failing field path and its offending value.

    ``field`` is the first failing path (``agents[1].mode``); the message
    lists all of them, so one run shows every mistake in the file.
    """
    parts: list[str] = []
    first: str | None = None
    for err in exc.errors(include_url=False):
        path = _loc(tuple(err["loc"]))
        first = first or path or None
        got = "" if err["type"] == "missing" else f" (got {_short(err.get('input'))})"
        parts.append(f"{path or '<top level>'}: {err['msg']}{got}")
    return InputError("; ".join(parts), file=file, field=first)


# --- corpus.toml -------------------------------------------------------------


def _inside(
    root: Path, raw: Path, *, file: str, field: str, kind: str, folder: bool = True
) -> Path:
    """Resolve ``raw`` against ``root``; it must exist, be a folder (a file when not
    ``folder``) and stay inside ``root``."""
    if raw.is_absolute():
        raise InputError(
            f"must be relative to {CORPUS_FILE}, got {str(raw)!r}", file=file, field=field
        )
    path = (root / raw).resolve()
    if not path.is_relative_to(root):
        raise InputError(
            f"{str(raw)!r} escapes the corpus folder (resolves to {path})", file=file, field=field
        )
    if not (path.is_dir() if folder else path.is_file()):
        what = (
            "does not exist" if not path.exists() else f"is not a {'folder' if folder else 'file'}"
        )
        raise InputError(f"{kind} {str(raw)!r} {what}", file=file, field=field)
    return path


def _check_env_names(agent: AgentVersion, *, at: str, file: str) -> None:
    """Every name in the agent's ``env`` list is an environment variable name."""
    for j, name in enumerate(agent.env):
        if not _ENV_NAME.match(name):
            raise InputError(
                f"not an environment variable name: {name!r} (list names, never values)",
                file=file,
                field=f"{at}.env[{j}]",
            )


def _command_fields(agent: AgentVersion, root: Path, *, at: str, file: str) -> dict[str, Any]:
    """A mode 'command' agent's checks; its ``path`` and requirements file made absolute."""
    if not agent.command:
        raise InputError("mode 'command' needs a command", file=file, field=f"{at}.command")
    if agent.reports is not None:
        raise InputError(
            "only mode 'replay' takes recorded reports", file=file, field=f"{at}.reports"
        )
    check_network(agent, at=at, file=file)
    update: dict[str, Any] = {}
    if agent.environment is not None:
        update.update(_environment_fields(agent, root, at=at, file=file))
    if agent.path is None:
        return update
    path = _inside(root, Path(agent.path), file=file, field=f"{at}.path", kind="agent path")
    return {**update, "path": str(path)}


def _environment_fields(agent: AgentVersion, root: Path, *, at: str, file: str) -> dict[str, Any]:
    """An agent environment's checks: its requirements file inside the corpus, made absolute."""
    assert agent.environment is not None
    return _environment(agent.environment, root, at=at, file=file)


def _environment(env: AgentEnvironment, root: Path, *, at: str, file: str) -> dict[str, Any]:
    """An environment (an agent's or a target's) with its requirements file inside the corpus,
    made absolute: ``{"environment": ...}``, or nothing to update without a file."""
    if env.requirements is None:
        return {}
    field = f"{at}.environment.requirements"
    path = _inside(
        root, Path(env.requirements), file=file, field=field, kind="requirements file", folder=False
    )
    return {"environment": env.model_copy(update={"requirements": str(path)})}


def _unique(seen: dict[str, int], name: str, i: int, *, what: str, at: str, file: str) -> None:
    """``name`` (of the ``what`` at index ``i``) is not taken yet; then it is."""
    if name in seen:
        raise InputError(
            f"duplicate {what} name {name!r} (also {what}s[{seen[name]}])",
            file=file,
            field=f"{at}.name",
        )
    seen[name] = i


def _replay_fields(agent: AgentVersion, root: Path, *, at: str, file: str) -> dict[str, str]:
    """A mode 'replay' agent's checks; its ``reports`` folder made absolute."""
    if agent.reports is None:
        raise InputError("mode 'replay' needs a reports folder", file=file, field=f"{at}.reports")
    # A replay agent never runs: a deadline or limits would be silently ignored.
    for key in ("command", "path", "timeout_s", "memory_mb", "cpus", "environment", "network"):
        if getattr(agent, key) is not None:
            raise InputError("only mode 'command' takes this field", file=file, field=f"{at}.{key}")
    reports = _inside(
        root, Path(agent.reports), file=file, field=f"{at}.reports", kind="reports folder"
    )
    return {"reports": str(reports)}


def _check_pairing(pairing: PairingConfig, known: Iterable[str], *, file: str) -> None:
    """Baseline and candidate name two different agents among ``known``."""
    names = set(known)
    for role in ("baseline", "candidate"):
        name = getattr(pairing, role)
        if name not in names:
            raise InputError(
                f"names unknown agent {name!r}; known: {', '.join(sorted(names))}",
                file=file,
                field=f"pairing.{role}",
            )
    if pairing.baseline == pairing.candidate:
        raise InputError(
            "baseline and candidate must be two different agents",
            file=file,
            field="pairing.candidate",
        )


def _check_agents(config: CorpusConfig, root: Path, *, file: str) -> list[AgentVersion]:
    """Mode-specific fields present, names unique, folders inside the corpus; paths made absolute."""
    seen: dict[str, int] = {}
    resolved: list[AgentVersion] = []
    for i, agent in enumerate(config.agents):
        at = f"agents[{i}]"
        _unique(seen, agent.name, i, what="agent", at=at, file=file)
        _check_env_names(agent, at=at, file=file)
        if agent.mode is AgentMode.COMMAND:
            update = _command_fields(agent, root, at=at, file=file)
        else:
            update = _replay_fields(agent, root, at=at, file=file)
        resolved.append(agent.model_copy(update=update))
    _check_pairing(config.pairing, seen, file=file)
    return resolved


def _check_agent_folders(
    agents: Sequence[AgentVersion],
    targets: Sequence[TargetConfig],
    cases: Path,
    *,
    root: Path,
    file: str,
) -> None:
    """No command agent's folder contains, or lies inside, a target, the cases or recorded reports.

    The folder is copied into the agent's workspace: one that holds a target
    would hand it the oracle and the clean tree, the cases every
    ``bug.patch``, a replay agent's folder the recorded reports.
    """
    guarded = [(f"target {t.name}'s folder", Path(t.path)) for t in targets]
    guarded.append(("the cases folder", cases))
    guarded += [
        (f"agent {a.name}'s recorded reports", Path(a.reports)) for a in agents if a.reports
    ]
    for i, agent in enumerate(agents):
        if agent.path is None or agent.mode is not AgentMode.COMMAND:
            continue
        folder = Path(agent.path)
        for what, path in guarded:
            if folder == path or folder in path.parents or path in folder.parents:
                inside = (
                    "is" if folder == path else ("holds" if folder in path.parents else "is inside")
                )
                raise InputError(
                    f"agent path {_shown(folder, root)!r} {inside} {what} "
                    f"({_shown(path, root)!r}): an agent must not see targets, cases or recorded "
                    "reports",
                    file=file,
                    field=f"agents[{i}].path",
                )


def _shown(path: Path, root: Path) -> str:
    """``path`` relative to the corpus folder (``.`` for the folder itself)."""
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def load_config(config_file: Path) -> CorpusConfig:
    """Parse and check ``corpus.toml``; every path in the result is absolute.

    Raises :class:`InputError` naming the file and the field (or line, for
    TOML syntax) on any problem: invalid TOML, a missing, unknown or invalid
    field, a folder that does not exist or escapes the corpus, a duplicate
    agent name, a mode-specific field missing, pairing naming an unknown agent.
    """
    file = str(config_file)
    data = read_toml(config_file, display=file)
    try:
        config = CorpusConfig.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, file=file) from None
    root = config_file.parent.resolve()
    targets = _check_targets(config, root, file=file)
    cases = _inside(root, config.cases, file=file, field="cases", kind="cases folder")
    agents = _check_agents(config, root, file=file)
    _check_agent_folders(agents, targets, cases, root=root, file=file)
    inline = dict.fromkeys(_TARGET_FIELDS)
    return config.model_copy(
        update={**inline, "targets": targets, "cases": cases, "agents": agents}
    )


def _check_targets(config: CorpusConfig, root: Path, *, file: str) -> list[TargetConfig]:
    """The corpus's targets, paths absolute: ``[[targets]]``, or the inline form's one target.

    The two forms are exclusive; names are unique; every folder and
    requirements file stays inside the corpus.
    """
    inline = {k: getattr(config, k) for k in _TARGET_FIELDS if getattr(config, k) is not None}
    if config.targets and inline:
        raise InputError(
            f"give the targets either inline ({', '.join(inline)}) or as [[targets]], not both",
            file=file,
            field=next(iter(inline)),
        )
    if not config.targets:
        for needed in ("target", "test_command"):
            if needed not in inline:
                raise InputError(
                    "Field required (a corpus needs [[targets]], or an inline target and test_command)",
                    file=file,
                    field=needed,
                )
        path = inline.pop("target")
        targets = [TargetConfig(name=LEGACY_TARGET, path=path, **inline)]
        fields = {"path": "target"}
    else:
        targets = config.targets
        fields = {}
    seen: dict[str, int] = {}
    out = []
    for i, target in enumerate(targets):
        at = f"targets[{i}]" if config.targets else ""
        _unique(seen, target.name, i, what="target", at=at, file=file)
        field = fields.get("path") or f"{at}.path"
        path = _inside(root, target.path, file=file, field=field, kind="target folder")
        update: dict[str, Any] = {"path": path}
        if target.environment is not None:
            update.update(_environment(target.environment, root, at=at, file=file))
        out.append(target.model_copy(update=update))
    return out


# --- cases -------------------------------------------------------------------


class _CaseFile(_Model):
    """``case.toml`` as written; ``id`` is the folder name."""

    id: str
    title: str
    hints: list[str] = Field(default_factory=list)
    expected_category: BugCategory | None = None
    target: str | None = None


def _reject(root: Path, case_dir: Path, file: Path, reason: str, **kw: Any) -> RejectedCase:
    return RejectedCase(
        case_id=case_dir.name, file=file.relative_to(root).as_posix(), reason=reason, **kw
    )


def _case_target(named: str | None, targets: Sequence[str]) -> tuple[str, str | None]:
    """The target a case applies to, or why it names none the corpus has."""
    if named is None and len(targets) == 1:
        return targets[0], None
    if named is not None and named in targets:
        return named, None
    known = ", ".join(targets)
    if named is None:
        return "", f"names no target, and the corpus has {len(targets)}: {known}"
    return "", f"names unknown target {named!r}; the corpus has: {known}"


def _unusable_files(root: Path, case_dir: Path, files: Iterable[Path]) -> RejectedCase | None:
    """A case folder that is a symlink, or a case file that is one or is missing."""
    if case_dir.is_symlink():
        return _reject(root, case_dir, case_dir, "case folder is a symbolic link")
    for path in files:
        if path.is_symlink():
            return _reject(
                root, case_dir, path, "is a symbolic link; a case file must be a regular file"
            )
        if not os.path.lexists(path):
            return _reject(root, case_dir, path, "missing")
    return None


def load_case(
    case_dir: Path,
    *,
    root: Path,
    max_patch_bytes: int,
    targets: Sequence[str] = (LEGACY_TARGET,),
) -> LoadedCase | RejectedCase:
    """Load one case folder; never raises on bad content — returns a :class:`RejectedCase`.

    Rejected: a case folder, ``case.toml`` or ``bug.patch`` that is a symlink
    or missing; invalid TOML; a missing, unknown or invalid field; an ``id``
    that is not the folder name; a ``target`` not among ``targets`` (or none
    named when the corpus has several); a ``bug.patch`` over ``max_patch_bytes``
    (checked with ``stat`` before reading, so a huge file costs nothing).
    The patch's content is not checked here (see ``tasks.classify``).
    """
    toml_path = case_dir / CASE_FILE
    patch_path = case_dir / PATCH_FILE
    rel_toml = toml_path.relative_to(root).as_posix()
    unusable = _unusable_files(root, case_dir, (toml_path, patch_path))
    if unusable is not None:
        return unusable
    try:
        raw = _CaseFile.model_validate(read_toml(toml_path, display=rel_toml, follow=False))
        case = Case(
            case_id=raw.id,
            title=raw.title,
            hints=raw.hints,
            expected_category=raw.expected_category,
        )
    except InputError as exc:
        return _reject(root, case_dir, toml_path, exc.message, line=exc.line, field=exc.field)
    except ValidationError as exc:
        err = validation_error(exc, file=rel_toml)
        # Case names the id "case_id"; the file calls it "id".
        field = "id" if err.field == "case_id" else err.field
        message = err.message.replace("case_id:", "id:")
        return _reject(root, case_dir, toml_path, message, field=field)
    if case.case_id != case_dir.name:
        return _reject(
            root,
            case_dir,
            toml_path,
            f"id {case.case_id!r} is not the folder name {case_dir.name!r}",
            field="id",
        )
    target, why = _case_target(raw.target, targets)
    if why is not None:
        return _reject(root, case_dir, toml_path, why, field="target")
    size = patch_path.stat().st_size
    if size > max_patch_bytes:
        return _reject(
            root,
            case_dir,
            patch_path,
            f"{size} bytes is over the {max_patch_bytes}-byte patch limit (not read)",
        )
    try:
        data = read_input(patch_path, limit=max_patch_bytes, what="a bug.patch", follow=False)
    except InputError as exc:
        return _reject(root, case_dir, patch_path, exc.message)
    return LoadedCase(
        case=case, case_dir=case_dir, patch_path=patch_path, patch=data, target=target
    )


def load_corpus(path: Path | str, *, max_patch_bytes: int = DEFAULT_MAX_PATCH_BYTES) -> Corpus:
    """Load a corpus from its folder or its ``corpus.toml``.

    Raises :class:`InputError` (file, field, line) when ``corpus.toml`` is
    missing or broken — nothing can run without it. Each case folder (every
    non-hidden folder under ``cases``) either loads or is listed in
    ``rejected`` with its reason; one bad case never stops the others.
    """
    path = Path(path)
    config_file = path if path.name == CORPUS_FILE else path / CORPUS_FILE
    if not os.path.lexists(config_file):
        raise InputError(f"no {CORPUS_FILE} here (is this a corpus folder?)", file=str(config_file))
    config = load_config(config_file)
    root = config_file.parent.resolve()
    loaded: list[LoadedCase] = []
    rejected: list[RejectedCase] = []
    with os.scandir(config.cases) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        # Hidden folders and caches are tooling, not cases; plain files (a README) are notes.
        if entry.name.startswith((".", "__")) or not (entry.is_dir() or entry.is_symlink()):
            continue
        case_dir = Path(entry.path)
        if entry.is_symlink() and not case_dir.is_dir():
            continue
        result = load_case(
            case_dir,
            root=root,
            max_patch_bytes=max_patch_bytes,
            targets=[t.name for t in config.targets],
        )
        if isinstance(result, LoadedCase):
            loaded.append(result)
        else:
            rejected.append(result)
    return Corpus(
        root=root, config_file=config_file, config=config, cases=loaded, rejected=rejected
    )
