"""Thresholds from [tool.bughunt.flakes]: defaults, overrides, and errors that name the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bughunt.errors import InputError
from tasks.flakes import FlakeThresholds, load_thresholds
from tests.conftest import ROOT


def write(folder: Path, text: str) -> Path:
    path = folder / "pyproject.toml"
    path.write_text(text)
    return path


def test_defaults_without_a_file(tmp_path: Path) -> None:
    """No pyproject.toml, or none with the section: the documented defaults."""
    assert load_thresholds(tmp_path) == FlakeThresholds()
    write(tmp_path, "[project]\nname = 'x'\n")
    assert load_thresholds(tmp_path / "pyproject.toml") == FlakeThresholds(
        min_flips=2, min_runs=5, clear_after_runs=10, clear_after_days=14
    )


def test_section_overrides_some_keys(tmp_path: Path) -> None:
    """Keys that are set override; the others keep their defaults."""
    write(tmp_path, "[tool.bughunt.flakes]\nmin_flips = 3\nclear_after_days = 7\n")
    assert load_thresholds(tmp_path) == FlakeThresholds(min_flips=3, clear_after_days=7)


def test_current_folder_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a path, the pyproject.toml of the current folder is read."""
    write(tmp_path, "[tool.bughunt.flakes]\nmin_runs = 9\n")
    monkeypatch.chdir(tmp_path)
    assert load_thresholds().min_runs == 9


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("[tool.bughunt.flakes]\nmin_flip = 3\n", "tool.bughunt.flakes.min_flip", "Extra inputs"),
        ("[tool.bughunt.flakes]\nmin_flips = 0\n", "tool.bughunt.flakes.min_flips", "greater than"),
        ("[tool.bughunt.flakes]\nmin_runs = 'many'\n", "tool.bughunt.flakes.min_runs", "integer"),
        ("[tool.bughunt]\nflakes = 3\n", "tool.bughunt.flakes", "must be a table"),
    ],
)
def test_bad_section_names_file_and_key(
    tmp_path: Path, text: str, field: str, message: str
) -> None:
    """An unknown key or a bad value is an InputError naming the file and the key."""
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=message) as info:
        load_thresholds(tmp_path)
    assert info.value.file == str(path) and info.value.field == field


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    """A pyproject.toml that is not TOML is an InputError naming it."""
    path = write(tmp_path, "[tool.bughunt.flakes\n")
    with pytest.raises(InputError, match="invalid TOML") as info:
        load_thresholds(path)
    assert info.value.file == str(path)


def test_docs_show_the_defaults() -> None:
    """docs/ledger.md's threshold example carries the defaults the code uses."""
    text = (ROOT / "docs" / "ledger.md").read_text()
    block = text.split("```toml\n[tool.bughunt.flakes]\n", 1)[1].split("```", 1)[0]
    documented = {k: int(v) for k, v in re.findall(r"^(\w+) = (\d+)", block, flags=re.MULTILINE)}
    assert documented == FlakeThresholds().model_dump()
