"""docs/corpus.md and the loader agree on what a case.toml requires."""

from __future__ import annotations

import re

from bughunt.models import Case
from tests.conftest import ROOT

DOC = (ROOT / "docs" / "corpus.md").read_text("utf-8")


def _case_table() -> dict[str, str]:
    section = DOC.split("## `cases/<case_id>/case.toml`", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (yes|no) \|", section, re.MULTILINE)
    return dict(rows)


def test_required_keys_in_the_docs_are_the_loaders() -> None:
    """Each documented key is required in the docs exactly when the model requires it."""
    table = _case_table()
    fields = {
        "id": "case_id",
        "title": "title",
        "hints": "hints",
        "expected_category": "expected_category",
    }
    assert set(table) == set(fields)
    for key, name in fields.items():
        required = Case.model_fields[name].is_required()
        assert (table[key] == "yes") is required, key


def test_the_documented_id_pattern_is_the_loaders() -> None:
    """The id pattern in the docs is the one the loader enforces."""
    pattern = next(
        m.pattern for m in Case.model_fields["case_id"].metadata if hasattr(m, "pattern")
    )
    assert f"`{pattern}`" in DOC
