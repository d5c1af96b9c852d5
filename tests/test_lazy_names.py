"""Packages whose names are imported on first use (``bughunt.lazy``): ``ledger`` and ``flows``."""

from __future__ import annotations

import subprocess
import sys

import pytest

import flows
import ledger
from tests.conftest import ROOT


@pytest.mark.parametrize("package", [ledger, flows], ids=lambda p: p.__name__)
def test_every_exported_name_resolves_and_an_unknown_one_is_an_attribute_error(
    package: object,
) -> None:
    for name in package.__all__:  # type: ignore[attr-defined]
        assert getattr(package, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(package, "no_such_name")  # noqa: B009


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
