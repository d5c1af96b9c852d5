"""Nothing a record, a report or a file name holds reaches the terminal raw.

Every command prints through streams that show control characters
(``cli._common.VisibleStream``, ``VisibleConsole``); the reports use the same
function (:func:`bughunt.text.visible`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from bughunt.text import CONTROL, visible
from cli import app
from tasks.report._escape import md_escape

runner = CliRunner()

# OSC 52 (clipboard), OSC 8 (a link), a carriage return, clear screen and home, BEL, a one-byte
# CSI, a right-to-left override.
HOSTILE = (
    "\x1b]52;c;cm0gLXJmIH4=\x07"
    "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"
    "\rX\x1b[2J\x1b[H\x07\x9b31m\u202eevil"
)
RAW = re.compile(f"[{CONTROL}]")


def _raw(text: str) -> list[str]:
    """The control characters in ``text`` other than line breaks."""
    return [c for c in RAW.findall(text) if c != "\n"]


@pytest.fixture
def hostile_ledger(tmp_path: Path) -> tuple[Path, Path]:
    """A ledger holding records whose ids, notes and file name carry terminal sequences."""
    records = tmp_path / f"rec{HOSTILE[:9]}.jsonl"
    lines = [
        {"id": f"A{HOSTILE}", "status": "pass", "note": HOSTILE},
        {"id": f"A{HOSTILE}", "status": "fail", "note": "b"},
        {"case_id": f"u{HOSTILE}", "status": "timeout"},
    ]
    records.write_text("".join(json.dumps(r) + "\n" for r in lines))
    ledger = tmp_path / "l.duckdb"
    result = runner.invoke(app, ["ingest", str(records), "--ledger", str(ledger)])
    assert result.exit_code == 0, result.output
    assert not _raw(result.stdout + result.stderr)
    return ledger, records


@pytest.mark.parametrize(
    "command",
    [
        ["summary"],
        ["conflicts"],
        ["unscored"],
        ["sql", "SELECT * FROM observations"],
        ["sql", "SELECT * FROM conflicts"],
        ["sql", "SELECT 'x' || chr(27) || ']52;c;aGk=' || chr(7) AS y"],
    ],
    ids=lambda c: "-".join(c)[:20],
)
def test_stored_text_is_shown_not_obeyed(
    hostile_ledger: tuple[Path, Path], command: list[str]
) -> None:
    """Tables and text of stored records carry no raw control character; the ESC is shown."""
    ledger, _ = hostile_ledger
    result = runner.invoke(app, [*command, "--ledger", str(ledger)])
    assert result.exit_code == 0, result.output
    assert not _raw(result.stdout + result.stderr), result.stdout
    assert "␛" in result.stdout or "\\x1b" in result.stdout  # a list cell shows its repr


def test_summarize_shows_records_and_file_names(hostile_ledger: tuple[Path, Path]) -> None:
    """summarize (no ledger) prints the disputed ids and the file name with their controls shown."""
    _, records = hostile_ledger
    result = runner.invoke(app, ["summarize", str(records)])
    assert result.exit_code == 0, result.output
    assert not _raw(result.stdout + result.stderr)
    assert "␛]52" in result.stdout


def test_an_error_naming_a_hostile_file_is_shown(tmp_path: Path) -> None:
    """An error message carrying a file name with sequences prints them shown, on one line."""
    result = runner.invoke(app, ["sql", "SELECT 1", "--ledger", str(tmp_path / f"x{HOSTILE}")])
    assert result.exit_code == 2
    assert not _raw(result.stderr) and result.stderr.count("\n") == 1


def test_json_output_escapes_controls(hostile_ledger: tuple[Path, Path]) -> None:
    """--json output holds the text JSON-escaped, and reads back to the stored characters."""
    ledger, _ = hostile_ledger
    result = runner.invoke(app, ["conflicts", "--json", "--ledger", str(ledger)])
    assert result.exit_code == 0 and not _raw(result.stdout)
    assert "\u202e" in json.loads(result.stdout)[0]["identity"]


def test_markdown_report_text_keeps_no_control() -> None:
    """The Markdown report's escaping shows BEL, ESC, C1 and bidi characters too."""
    shown = md_escape(HOSTILE)
    assert not RAW.search(shown)
    assert "␇" in shown and "␛" in shown and "\\u202e" in shown


def test_html_report_text_keeps_no_control() -> None:
    """The HTML environment shows control characters in every value it prints."""
    from tasks.report._render import html_env

    out = html_env().from_string("<p>{{ v }}</p>").render(v=HOSTILE)
    assert not _raw(out) and "␛" in out


@given(st.text())
def test_visible_leaves_only_line_breaks_and_tabs(text: str) -> None:
    """Whatever the text, only a line break or tab of the controls survives visible()."""
    assert all(c in "\n\t" for c in RAW.findall(visible(text)))


@given(st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Cf"))))
def test_visible_keeps_printable_text(text: str) -> None:
    """Printable text of any script is unchanged."""
    assert visible(text) == text
