"""Reading ``[tool.bughunt.<section>]`` tables from a pyproject.toml, in one place.

Every configurable part (flake thresholds, the PR gate, impact globs, judges)
reads its table through here, so a bad file or value is reported the same
way everywhere: the file, the field and the offending value.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from bughunt.errors import InputError
from bughunt.safeio import CONFIG_LIMIT, read_input

M = TypeVar("M", bound=BaseModel)


def read_toml(path: Path, *, display: str, follow: bool = True) -> dict[str, Any]:
    """Parse a TOML file; a syntax error becomes an :class:`InputError` with its line.

    Raises :class:`InputError` (no line) when the file cannot be read, is not
    a regular file (a FIFO, a device: :func:`bughunt.safeio.read_input`), is
    over ``CONFIG_LIMIT`` bytes or is not UTF-8. ``follow=False``: a symlink
    is refused too (a file inside a corpus).
    """
    try:
        text = read_input(path, limit=CONFIG_LIMIT, what="a TOML file", follow=follow).decode(
            "utf-8"
        )
    except InputError as exc:
        raise InputError(exc.message, file=display) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", file=display) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib puts the position only in its message: "(at line 3, column 8)",
        # or "(at end of document)".
        match = re.search(r"at line (\d+)", str(exc))
        if match:
            line: int | None = int(match.group(1))
        elif "end of document" in str(exc):
            line = text.count("\n") + 1
        else:
            line = None
        raise InputError(f"invalid TOML: {exc}", file=display, line=line) from None


def pyproject_path(path: str | Path | None = None) -> Path:
    """``path`` itself when it is a file, else ``pyproject.toml`` in it (default: the cwd)."""
    target = Path(path) if path is not None else Path.cwd()
    return target / "pyproject.toml" if target.is_dir() else target


def tool_section(section: str, path: str | Path | None = None) -> tuple[dict[str, Any], str | None]:
    """The ``[tool.bughunt.<section>]`` table (empty when absent) and the file it came from.

    A missing file gives ``({}, None)``. Invalid TOML or a section that is not
    a table raises :class:`InputError` naming the file (and line for syntax).
    """
    target = pyproject_path(path)
    if not target.is_file():
        return {}, None
    data = read_toml(target, display=str(target))
    table: Any = data.get("tool", {}).get("bughunt", {})
    for part in section.split("."):
        table = table.get(part, {}) if isinstance(table, dict) else table
    if not isinstance(table, dict):
        raise InputError("must be a table", file=str(target), field=f"tool.bughunt.{section}")
    return table, str(target)


def load_section(model: type[M], section: str, path: str | Path | None = None) -> M:
    """``model`` validated from ``[tool.bughunt.<section>]``; its defaults where unset.

    An unknown key (when the model forbids extras) or a bad value raises
    :class:`InputError` naming the file, the key and the value given.
    """
    table, source = tool_section(section, path)
    try:
        return model.model_validate(table)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise InputError(
            f"{first['msg']} (got {first.get('input')!r})",
            file=source,
            field=f"tool.bughunt.{section}.{key}",
        ) from exc
