"""Packages whose names are imported on first use (``bughunt.lazy``)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from bughunt.lazy import declared_names
from tests.conftest import ROOT

LAZY_PACKAGES = sorted(
    ".".join(init.relative_to(ROOT).parent.parts)
    for init in ROOT.glob("*/**/__init__.py")
    if ".venv" not in init.parts and "lazy_names(globals())" in init.read_text(encoding="utf-8")
)


def test_the_lazy_packages_are_found() -> None:
    """The packages the tests below walk include the stages, the judges, the flows and the
    ledger (a glob that found none would make them pass on nothing)."""
    assert {"flows", "ledger", "tasks.sandbox", "tasks.score", "judging.judges"} <= set(
        LAZY_PACKAGES
    ), LAZY_PACKAGES


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_every_exported_name_resolves_and_an_unknown_one_is_an_attribute_error(
    name: str,
) -> None:
    """``__all__`` is the TYPE_CHECKING block's names, each one importable from the module it
    names; any other name is an AttributeError."""
    package: ModuleType = importlib.import_module(name)
    assert package.__file__ is not None
    declared = declared_names(Path(package.__file__).read_text(encoding="utf-8"))
    assert package.__all__ == sorted(declared) and declared
    for exported in package.__all__:
        assert getattr(package, exported) is not None, exported
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(package, "no_such_name")  # noqa: B009


@pytest.mark.parametrize(
    ("block", "why"),
    [
        ("    from m import A\n", "write `A as A`"),
        ("    from m import A as B\n", "write `A as A`"),
        ("    from .m import A as A\n", "only absolute"),
        ("    import m\n", "only absolute"),
    ],
)
def test_a_name_that_would_not_be_exported_is_refused_with_its_line(block: str, why: str) -> None:
    """An import the type checker would not read as a re-export, or one the lazy table cannot
    name a module for, is an error naming the file and line, not a name missing at run time."""
    source = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n" + block
    with pytest.raises(ValueError, match=rf"pkg/__init__.py:4: .*{why}"):
        declared_names(source, "pkg/__init__.py")


def test_only_the_type_checking_block_declares() -> None:
    """Eager imports and other blocks are not lazy names."""
    source = (
        "from typing import TYPE_CHECKING\nimport os\n"
        "if TYPE_CHECKING:\n    from a.b import X as X, y as y\n"
        "if os.name:\n    from c import Z\n"
    )
    assert declared_names(source) == {"X": "a.b", "y": "a.b"}


def test_opening_the_ledger_imports_neither_arrow_nor_the_row_models() -> None:
    """A fresh interpreter that makes a ledger and queries it has not imported pyarrow or the
    row models; reading rows as models then imports them."""
    probe = (
        "import sys, tempfile, os\n"
        "from ledger import Ledger\n"
        "path = os.path.join(tempfile.mkdtemp(), 'l.duckdb')\n"
        "store = Ledger(path)\n"
        "with store.writer():\n"
        "    pass\n"
        "rows = store.user_query('SELECT count(*) AS n FROM runs')\n"
        "print(rows, 'pyarrow' in sys.modules, 'bughunt.models' in sys.modules)\n"
        "from bughunt.models import RunInfo\n"
        "print(store.read(RunInfo), 'pyarrow' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["[{'n': 0}] False False", "[] True"]
