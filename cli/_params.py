"""Command options derived from a parameters model: ``bughunt run`` declares none of its own.

Every field of :class:`flows.RunParams` becomes one option — its name
(``test_timeout_s`` → ``--test-timeout-s``, or the field's ``option`` extra),
its type, default, bounds and help (the field's docstring) — so adding a run
parameter is a one-place change to the model.

Typer reads a command's parameters from its signature; a command built here
gets a signature made from the model's fields (hand-written code, because no
Typer or pydantic helper turns a model into options).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import annotated_types
import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from cli._common import fail

M = TypeVar("M", bound=BaseModel)


def option_name(name: str, field: FieldInfo) -> str:
    """The command-line name of a field: its ``option`` extra, else ``--`` + dashed name."""
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    explicit = extra.get("option")
    return str(explicit) if explicit else "--" + name.replace("_", "-")


def _bounds(field: FieldInfo) -> dict[str, Any]:
    """Typer's inclusive ``min``/``max`` from the field's ``ge``/``le`` (strict bounds are
    left to the model, which names the field when a value breaks them)."""
    out: dict[str, Any] = {}
    for meta in field.metadata:
        if isinstance(meta, annotated_types.Ge):
            out["min"] = meta.ge
        elif isinstance(meta, annotated_types.Le):
            out["max"] = meta.le
    return out


def model_options(model: type[BaseModel]) -> list[inspect.Parameter]:
    """One keyword parameter per field, annotated with its Typer option."""
    params = []
    for name, field in model.model_fields.items():
        help_text = (field.description or "").replace("``", "")
        option = typer.Option(option_name(name, field), help=help_text, **_bounds(field))
        params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=Annotated[field.annotation, option],
                default=field.get_default(call_default_factory=True),
            )
        )
    return params


def with_model_options(model: type[M]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command every field of ``model`` as an option; it receives them as ``params``.

    The decorated function takes ``params: model`` plus options of its own
    (declared as usual). A value the model refuses exits 2 naming the option.
    """

    def decorate(fn: Callable[..., None]) -> Callable[..., None]:
        own = [
            p
            for p in inspect.signature(fn, eval_str=True).parameters.values()
            if p.name != "params"
        ]
        own_names = {p.name for p in own}
        fields = model_options(model)

        @functools.wraps(fn)
        def command(**kwargs: Any) -> None:
            mine = {k: kwargs.pop(k) for k in list(kwargs) if k in own_names}
            try:
                params = model.model_validate(kwargs)
            except ValidationError as exc:
                err = exc.errors()[0]
                name = str(err["loc"][0]) if err["loc"] else ""
                where = option_name(name, model.model_fields[name]) if name in kwargs else name
                fail(f"{where}: {err['msg']}")
            fn(params=params, **mine)

        # Required options of the command's own first, then the model's (all keyword-only).
        ordered = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own] + fields
        ordered.sort(key=lambda p: p.default is not inspect.Parameter.empty)
        command.__signature__ = inspect.Signature(ordered)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in ordered}
        del command.__wrapped__  # Typer must read this signature, not ``fn``'s
        return command

    return decorate
