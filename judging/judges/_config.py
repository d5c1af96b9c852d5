"""Named judges and juries from configuration (docs/judges.md).

Judges are tables, in a ``pyproject.toml``::

    [tool.bughunt.judges.gpt]
    backend = "openai"
    family = "gpt"
    base_url = "https://api.example.com/v1"
    model = "gpt-4.1-mini"
    api_key_env = "EXAMPLE_API_KEY"

    [tool.bughunt.juries.panel]
    members = ["gpt", "claude"]

or in a separate TOML file with the same tables at the top level
(``[judges.gpt]``, ``[juries.panel]``). The table name is the judge's name.
A judge named ``sim`` (the simulated judge, family ``sim``) always exists, so
the default needs no configuration. API keys are never configuration: a
judge names the environment variable that holds its key.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bughunt.config import read_toml
from bughunt.errors import InputError
from judging.judges._contract import DEFAULT_DEADLINE_S
from judging.judges._identity import (
    COMMAND_MODEL,
    SIM_ENDPOINT,
    JudgeIdentity,
    command_endpoint,
    openai_endpoint,
    sim_model,
)
from judging.judges._protocol import Judge

if TYPE_CHECKING:
    from judging.bias import SimParams

Backend = Literal["sim", "openai", "command"]
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
DEFAULT_JUDGE = "sim"
DEFAULT_MAX_IN_FLIGHT = 8


class JudgeConfig(BaseModel):
    """One named judge."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    name: str = Field(pattern=NAME_PATTERN, max_length=80)
    """Name used in every ledger row and on the command line (the table name)."""
    backend: Backend = "sim"
    """``sim`` (simulated, no network), ``openai`` (OpenAI-compatible endpoint) or ``command``."""
    family: str = Field(min_length=1, max_length=80)
    """Model family of the judge (self-preference; a jury's members differ in family)."""
    required: bool = False
    """A required judge fails closed where another would leave the pair ``over_budget``."""
    base_url: str | None = None
    """``openai``: endpoint base URL, e.g. ``http://127.0.0.1:8000/v1`` (SDK default if unset)."""
    model: str | None = None
    """``openai``: model name sent with each request. ``command``: the model the command
    uses, declared so that changing it changes the cache key (optional)."""
    api_key_env: str = "OPENAI_API_KEY"
    """``openai``: name of the environment variable holding the API key; empty for no key."""
    structured: Literal["auto", "on", "off"] = "auto"
    """``openai``: ask for a JSON-schema answer (``auto`` falls back to plain if refused)."""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """``openai``: sampling temperature; not sent when unset (the endpoint's default)."""
    max_tokens: int | None = Field(default=None, ge=1)
    """``openai``: cap on answer tokens; not sent when unset."""
    command: list[str] | None = None
    """``command``: argument vector of the executable (no shell)."""
    seed: int = 0
    """``sim``: seed of the simulated judge's draws."""
    sim_params: dict[str, float] = Field(default_factory=dict)
    """``sim``: scoring parameters overriding the simulated judge's defaults (docs/judge-bias.md) (s, b_pos, b_len, b_self, m)."""
    deadline_s: float = Field(default=DEFAULT_DEADLINE_S, gt=0, le=3_600)
    """Seconds one call may take over all its attempts."""
    max_in_flight: int = Field(default=DEFAULT_MAX_IN_FLIGHT, ge=1, le=64)
    """Calls of this judge sent at the same time."""

    @model_validator(mode="after")
    def _backend_fields(self) -> JudgeConfig:
        if self.backend == "openai" and not self.model:
            raise ValueError("an openai judge needs 'model'")
        if self.backend == "command" and not self.command:
            raise ValueError("a command judge needs 'command' (a list of arguments)")
        return self

    def identity(self, environ: Mapping[str, str] | None = None) -> JudgeIdentity:
        """The model and endpoint this judge's calls are cached under: the ones the judge
        :func:`build_judge` makes of it reports, named without building it (no key is read).

        ``environ`` (default the process's) gives an ``openai`` judge without
        ``base_url`` its ``OPENAI_BASE_URL``. Bad ``sim_params`` raise
        :class:`InputError` naming the field.
        """
        if self.backend == "openai":
            assert self.model is not None  # checked above
            return JudgeIdentity(self.model, openai_endpoint(self.base_url, environ))
        if self.backend == "command":
            assert self.command is not None  # checked above
            return JudgeIdentity(self.model or COMMAND_MODEL, command_endpoint(self.command))
        params = _sim_params(self).model_dump()
        return JudgeIdentity(sim_model(self.family, params, self.seed), SIM_ENDPOINT)


class JuryConfig(BaseModel):
    """A named list of judges of different families."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    name: str = Field(pattern=NAME_PATTERN, max_length=80)
    """Jury name (the table name)."""
    members: list[str] = Field(min_length=2)
    """Names of the member judges."""


BUILTIN_JUDGES: dict[str, JudgeConfig] = {
    DEFAULT_JUDGE: JudgeConfig(name=DEFAULT_JUDGE, backend="sim", family="sim"),
}


class JudgesConfig(BaseModel):
    """Every judge and jury known to a run: the built-ins plus the configured ones."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    judges: dict[str, JudgeConfig] = Field(default_factory=lambda: dict(BUILTIN_JUDGES))
    """Judges by name."""
    juries: dict[str, JuryConfig] = Field(default_factory=dict)
    """Juries by name."""
    source: str | None = None
    """File the configuration came from, if any."""

    def judge(self, name: str) -> JudgeConfig:
        """The judge called ``name``; a clear error listing the known ones otherwise."""
        if name in self.judges:
            return self.judges[name]
        known = ", ".join(sorted(self.judges)) or "none"
        hint = f" (did you mean the jury {name!r}?)" if name in self.juries else ""
        raise InputError(f"no judge named {name!r}{hint}; known judges: {known}", file=self.source)

    def jury(self, name: str) -> list[JudgeConfig]:
        """The members of jury ``name``, checked to exist and to differ in family."""
        if name not in self.juries:
            known = ", ".join(sorted(self.juries)) or "none"
            raise InputError(f"no jury named {name!r}; known juries: {known}", file=self.source)
        members = [self.judge(m) for m in self.juries[name].members]
        seen: dict[str, str] = {}
        for m in members:
            if m.family in seen:
                raise InputError(
                    f"jury {name!r} has two judges of family {m.family!r} "
                    f"({seen[m.family]!r} and {m.name!r}); a jury's members must differ in family",
                    file=self.source,
                    field=f"juries.{name}.members",
                )
            seen[m.family] = m.name
        return members

    def resolve(self, name: str) -> list[JudgeConfig]:
        """A judge (one member) or a jury (its members) by name."""
        if name in self.juries and name not in self.judges:
            return self.jury(name)
        return [self.judge(name)]


def _tables(doc: Mapping[str, Any], pyproject: bool) -> tuple[Any, Any, str]:
    if pyproject:
        tool = doc.get("tool", {})
        bughunt = tool.get("bughunt", {}) if isinstance(tool, dict) else {}
        if not isinstance(bughunt, dict):
            bughunt = {}
        return bughunt.get("judges", {}), bughunt.get("juries", {}), "tool.bughunt."
    return doc.get("judges", {}), doc.get("juries", {}), ""


def _named(
    table: Any, kind: str, singular: str, prefix: str, source: str
) -> dict[str, dict[str, Any]]:
    if not isinstance(table, dict):
        raise InputError(f"'{prefix}{kind}' must be a table of tables", file=source)
    out: dict[str, dict[str, Any]] = {}
    for name, body in table.items():
        if not isinstance(body, dict):
            raise InputError(
                f"'{prefix}{kind}.{name}' must be a table",
                file=source,
                field=f"{prefix}{kind}.{name}",
            )
        if "name" in body and body["name"] != name:
            raise InputError(
                f"the table name is the {singular}'s name; remove name = {body['name']!r}",
                file=source,
                field=f"{prefix}{kind}.{name}.name",
            )
        out[name] = {**body, "name": name}
    return out


def _validation_error(exc: ValidationError, prefix: str, source: str | None) -> InputError:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return InputError(message, file=source, field=f"{prefix}{where}".rstrip("."))


def parse_judges(doc: Mapping[str, Any], *, pyproject: bool, source: str) -> JudgesConfig:
    """Judges and juries from a parsed TOML document (built-ins included).

    Raises :class:`InputError` naming the file and field on a bad table.
    """
    judges_t, juries_t, prefix = _tables(doc, pyproject)
    judges = dict(BUILTIN_JUDGES)
    for name, body in _named(judges_t, "judges", "judge", prefix, source).items():
        try:
            judges[name] = JudgeConfig.model_validate(body)
        except ValidationError as exc:
            raise _validation_error(exc, f"{prefix}judges.{name}.", source) from exc
    juries: dict[str, JuryConfig] = {}
    for name, body in _named(juries_t, "juries", "jury", prefix, source).items():
        try:
            juries[name] = JuryConfig.model_validate(body)
        except ValidationError as exc:
            raise _validation_error(exc, f"{prefix}juries.{name}.", source) from exc
    config = JudgesConfig(judges=judges, juries=juries, source=source)
    for name in juries:
        config.jury(name)  # every member exists and families differ
    return config


def load_judges(path: Path | None = None) -> JudgesConfig:
    """Judges from ``path``, or from ``./pyproject.toml`` when ``path`` is ``None``.

    A file named ``pyproject.toml`` is read under ``[tool.bughunt]``; any
    other file at its top level. No file (and no ``path``) gives the built-in
    ``sim`` judge only. A missing ``path``, bad TOML or a bad table raises
    :class:`InputError` naming the file.
    """
    if path is None:
        path = Path("pyproject.toml")
        if not path.is_file():
            return JudgesConfig()
    source = str(path)
    if not path.exists():
        raise InputError("judge configuration file not found", file=source)
    doc = read_toml(path, display=source)
    return parse_judges(doc, pyproject=path.name == "pyproject.toml", source=source)


def build_judge(
    config: JudgeConfig,
    environ: Mapping[str, str] | None = None,
    withhold: Collection[str] = (),
    max_connections: int | None = None,
) -> Judge:
    """The backend object for one configured judge.

    ``max_connections``: an ``openai`` judge's connection pool, the calls a
    stage sends it at once (default: its own ``max_in_flight``).

    An ``openai`` judge reads its key from ``environ[config.api_key_env]``
    here, once; a missing variable is an :class:`InputError` naming it (the
    value is never echoed). A ``command`` judge scrubs that variable's value,
    when set, from its answers and errors (the command inherits it), and its
    command never gets the host variables ``withhold`` names (the agents'
    secrets and model keys, which are theirs alone).
    """
    env = os.environ if environ is None else environ
    if config.backend == "openai":
        from judging.judges._openai import OpenAIJudge

        api_key: str | None = None
        if config.api_key_env:
            api_key = env.get(config.api_key_env)
            if not api_key:
                raise InputError(
                    f"environment variable {config.api_key_env} is not set; judge "
                    f'{config.name!r} reads its API key from it (set api_key_env = "" '
                    f"for an endpoint that needs no key)",
                    field="api_key_env",
                )
        return OpenAIJudge(
            config, api_key=api_key, max_connections=max_connections or config.max_in_flight
        )
    if config.backend == "command":
        from judging.judges._command import CommandJudge

        # The command inherits the environment, its key too: never let it reach a row.
        key = env.get(config.api_key_env, "") if config.api_key_env else ""
        return CommandJudge(
            config,
            secrets={config.api_key_env: key} if key else None,
            withhold=[name for name in withhold if name != config.api_key_env],
        )
    from judging.judges._sim import SimJudge

    return SimJudge(
        name=config.name,
        family=config.family,
        params=_sim_params(config),
        seed=config.seed,
        required=config.required,
    )


def _sim_params(config: JudgeConfig) -> SimParams:
    """A ``sim`` judge's parameters; :class:`InputError` naming the field when one is bad."""
    from judging.bias import SimParams

    try:
        return SimParams.model_validate(config.sim_params)
    except ValidationError as exc:
        raise _validation_error(exc, f"judges.{config.name}.sim_params.", None) from exc


def close_judges(judges: Iterable[Judge]) -> None:
    """Release what each judge holds open (an ``openai`` judge's connections and event loop);
    a judge without a ``close`` holds nothing."""
    for judge in judges:
        close = getattr(judge, "close", None)
        if callable(close):
            close()
