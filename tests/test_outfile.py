"""Files a user names are written without replacing what is not a regular file.

Never the machine's own ``/dev/null``: every device here is one the test makes
(``mknod`` of the same numbers) in its own folder.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bughunt.errors import InputError
from bughunt.models import RunInfo, RunKind, RunStatus
from bughunt.outfile import write_output
from cli import app
from corpus._hash_cache import HashCache
from ledger import Ledger
from tasks.report import RunSummary, write_report
from tasks.report.runs import History
from tests.tasks.report.conftest import make_history, make_summary

runner = CliRunner()


@pytest.fixture(scope="module")
def summary() -> RunSummary:
    """The report tests' fixture night."""
    return make_summary()


@pytest.fixture(scope="module")
def history() -> History:
    """Its history."""
    return make_history()


NULL = os.makedev(1, 3)
FULL = os.makedev(1, 7)


def _device(path: Path, numbers: int = NULL) -> Path:
    os.mknod(path, stat.S_IFCHR | 0o666, numbers)
    return path


def _is_device(path: Path) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


def _export(ledger: Ledger, out: Path, fmt: str = "csv") -> tuple[int, str, str]:
    ledger.write([RunInfo(run_id="r1", kind=RunKind.ADHOC, status=RunStatus.COMPLETED)])
    result = runner.invoke(
        app,
        [
            "export",
            "--table",
            "runs",
            "--out",
            str(out),
            "--format",
            fmt,
            "--ledger",
            str(ledger.path),
        ],
    )
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
def test_export_to_a_device_streams_into_it(ledger: Ledger, tmp_path: Path, fmt: str) -> None:
    """`export --out` a character device writes into it; the device node stays a device."""
    out = _device(tmp_path / "null")
    code, stdout, stderr = _export(ledger, out, fmt)
    assert code == 0, stderr
    assert _is_device(out)
    assert "wrote 1 row(s)" in stdout


def test_export_through_a_symlink_keeps_the_link(ledger: Ledger, tmp_path: Path) -> None:
    """A symlink (as /dev/stdout is) to a device stays a link, and the device a device."""
    device = _device(tmp_path / "null")
    link = tmp_path / "stdout"
    link.symlink_to(device)
    code, _, stderr = _export(ledger, link)
    assert code == 0, stderr
    assert link.is_symlink() and _is_device(device)


def test_export_through_a_symlink_to_a_file_writes_the_file(ledger: Ledger, tmp_path: Path) -> None:
    """A symlink to a regular file: the file gets the rows, the link stays a link."""
    target = tmp_path / "rows.csv"
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    code, _, stderr = _export(ledger, link)
    assert code == 0, stderr
    assert link.is_symlink()
    assert target.read_text().splitlines()[1].startswith('"r1"')


def test_export_to_a_fifo_streams_to_its_reader(ledger: Ledger, tmp_path: Path) -> None:
    """A FIFO with a reader gets the rows in order and stays a FIFO."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    try:
        for _ in range(200):  # until the reader has the FIFO open
            code, _, stderr = _export(ledger, fifo)
            if "nobody is reading" not in stderr:
                break
            threading.Event().wait(0.02)
    finally:
        if not got and reader.is_alive():
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # let the reader end
        reader.join(5)
    assert code == 0, stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert b'"r1"' in got[0]


def test_export_to_a_fifo_nobody_reads_is_refused(ledger: Ledger, tmp_path: Path) -> None:
    """A FIFO without a reader is one line, never a hang."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, _, stderr = _export(ledger, fifo)
    assert code == 2
    assert stderr.count("\n") == 1 and "nobody is reading" in stderr and str(fifo) in stderr


def test_export_to_a_full_device_is_one_line(ledger: Ledger, tmp_path: Path) -> None:
    """A device that refuses the bytes (as /dev/full does) is one line naming it."""
    out = _device(tmp_path / "full", FULL)
    code, _, stderr = _export(ledger, out)
    assert code == 2
    assert stderr.count("\n") == 1 and str(out) in stderr and "No space left" in stderr
    assert _is_device(out)


@pytest.mark.parametrize(
    "make",
    [
        lambda p: p.mkdir(),
        lambda p: p.symlink_to(p.parent / "nowhere"),
    ],
    ids=["folder", "dangling-link"],
)
def test_export_refuses_what_it_cannot_write(
    ledger: Ledger, tmp_path: Path, make: Callable[[Path], None]
) -> None:
    """A folder or a dangling link is refused in one line naming it; nothing is made."""
    out = tmp_path / "out.csv"
    make(out)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, _, stderr = _export(ledger, out)
    assert code == 2
    assert stderr.count("\n") == 1 and str(out) in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_report_refuses_a_device_in_its_folder(
    summary: RunSummary, history: History, tmp_path: Path
) -> None:
    """A report file that is a device node is refused, never renamed over."""
    out = tmp_path / "report"
    out.mkdir()
    device = _device(out / "report.md")
    with pytest.raises(InputError, match="character device"):
        write_report(summary, history, out)
    assert _is_device(device)


def test_report_refuses_a_planted_symlink(
    summary: RunSummary, history: History, tmp_path: Path
) -> None:
    """A report file that is a symlink is refused: neither the link nor its target is written."""
    out = tmp_path / "report"
    out.mkdir()
    target = tmp_path / "precious"
    target.write_text("keep")
    (out / "summary.json").symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"):
        write_report(summary, history, out)
    assert (out / "summary.json").is_symlink() and target.read_text() == "keep"


def test_hash_cache_leaves_a_device_alone(tmp_path: Path) -> None:
    """The hash cache is not saved over a device at its path (it is disposable: skipped)."""
    device = _device(tmp_path / ".hash-cache.json")
    HashCache().save(device)
    assert _is_device(device)


def test_write_output_replaces_a_regular_file_atomically(tmp_path: Path) -> None:
    """A regular file is replaced whole, with the mode asked for; no temporary file is left."""
    out = tmp_path / "x.txt"
    out.write_text("old")
    write_output(out, lambda f: f.write(b"new"), field="out", mode=0o640)
    assert out.read_text() == "new" and out.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]
