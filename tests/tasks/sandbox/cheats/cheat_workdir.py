"""Cheat class: working-folder name.

The old sandbox ran each execution in ``/scratch/run-N/buggy`` or
``/scratch/run-N/clean``: fail iff "buggy" shows in the path this test runs
from (working folder, this file's path, ``$PWD``).
"""

import os
from pathlib import Path


def _paths() -> list[Path]:
    return [Path.cwd(), Path(__file__).resolve(), Path(os.environ.get("PWD", "."))]


def test_period_excludes_its_end() -> None:
    parts = [part.lower() for path in _paths() for part in path.parts]
    assert not any("buggy" in part for part in parts), "Period(...) contains its end date"
