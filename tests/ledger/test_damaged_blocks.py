"""A ledger with a damaged block is never written to, even after this process read it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from bughunt.errors import LedgerFileError
from bughunt.models import RunInfo, RunKind, RunStatus
from ledger import Ledger
from tests.cli.test_one_line_errors import _damaged


def test_a_read_first_does_not_vouch_for_a_write(tmp_path: Path) -> None:
    """A read that never touches the damaged block trusts the file for reads only: the write
    after it still reads every block, refuses, and leaves the file as it was."""
    path = _damaged(tmp_path / "ledger.duckdb")
    store = Ledger(path)
    assert store.query("SELECT count(*) AS n FROM runs") == [{"n": 0}]
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(LedgerFileError, match="damaged block"):
        store.write([RunInfo(run_id="r1", kind=RunKind.ADHOC, status=RunStatus.COMPLETED)])
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
