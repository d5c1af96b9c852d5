"""The CLI fuzz table: every command, every file or name it takes, a table of bad values.

Each command's parameters are read from the CLI itself, so a new command or
option is fuzzed without a change here. A wholly bad input (a file that
cannot be read, a ledger that is not a whole ledger, a bad option) must exit
2 with one line on stderr naming what is wrong, store nothing, and never
show a traceback. Bad lines in an otherwise good records file are reported
by file and line, the rest is kept, and the exit is 1 (2 with ``--strict``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pytest
import typer
from typer.testing import CliRunner

from bughunt.models import Observation, Status
from cli import app
from ledger import Ledger
from ledger._file import HEADER_BYTES
from tests.conftest import ROOT

DEMO = ROOT / "corpus" / "demo"
CASE = "obo-top-expenses"

Make = Callable[[Path], str]
"""Makes a bad value in a scratch folder and returns it as the option's text."""


def _write(name: str, data: bytes) -> Make:
    def make(tmp: Path) -> str:
        (tmp / name).write_bytes(data)
        return str(tmp / name)

    return make


def _folder(tmp: Path) -> str:
    (tmp / "a-folder").mkdir()
    return str(tmp / "a-folder")


def _missing(tmp: Path) -> str:
    return str(tmp / "no-such-file")


def _under_a_file(tmp: Path) -> str:
    (tmp / "plain").write_text("x")
    return str(tmp / "plain" / "inside.duckdb")


def _good_ledger(tmp: Path) -> Path:
    path = tmp / "whole.duckdb"
    Ledger(path).write([Observation(observation_id="o1", case_id="c1", status=Status.PASS)])
    return path


def _truncated(tmp: Path) -> str:
    path = _good_ledger(tmp)
    os.truncate(path, HEADER_BYTES + 262_144)
    return str(path)


def _cut_mid_block(tmp: Path) -> str:
    path = _good_ledger(tmp)
    os.truncate(path, path.stat().st_size - 999)
    return str(path)


def _foreign(tmp: Path) -> str:
    con = duckdb.connect(str(tmp / "foreign.duckdb"))
    con.execute("CREATE TABLE payroll (who VARCHAR)")
    con.close()
    return str(tmp / "foreign.duckdb")


def _corpus_with(toml: str) -> Make:
    def make(tmp: Path) -> str:
        (tmp / "corpus").mkdir()
        (tmp / "corpus" / "corpus.toml").write_text(toml)
        return str(tmp / "corpus")

    return make


def _corpus_not_utf8(tmp: Path) -> str:
    (tmp / "corpus").mkdir()
    (tmp / "corpus" / "corpus.toml").write_bytes(b'name = "\xff"\n')
    return str(tmp / "corpus")


def _fifo(name: str) -> Make:
    """A FIFO: opening it to read blocks until a writer comes, unless O_NONBLOCK."""

    def make(tmp: Path) -> str:
        os.mkfifo(tmp / name)
        return str(tmp / name)

    return make


def _zero_device(name: str) -> Make:
    """A character device of its own that reads as /dev/zero's (major 1, minor 5): never ends."""

    def make(tmp: Path) -> str:
        os.mknod(tmp / name, 0o644 | stat.S_IFCHR, os.makedev(1, 5))
        return str(tmp / name)

    return make


def _dev_zero(_tmp: Path) -> str:
    return "/dev/zero"


def _link_to_device(name: str, device: str = "/dev/zero") -> Make:
    def make(tmp: Path) -> str:
        (tmp / name).symlink_to(device if device.startswith("/") else tmp / device)
        if not device.startswith("/"):
            _zero_device(device)(tmp)
        return str(tmp / name)

    return make


def _special(name: str) -> dict[str, Make]:
    """The special files every input file parameter must refuse in one line, unread."""
    return {
        "a FIFO": _fifo(name),
        "a device": _zero_device(name),
        "/dev/zero": _dev_zero,
        "a symlink to a device": _link_to_device(name),
    }


def _special_out(name: str) -> dict[str, Make]:
    """The same for a file bughunt writes (a ledger, --out): only devices of the test's own.
    Running as root, a writer that replaces its file by rename would turn the machine's
    /dev/zero into a regular file; a node in the scratch folder costs nothing."""
    return {
        "a FIFO": _fifo(name),
        "a device": _zero_device(name),
        "a symlink to a device": _link_to_device(name, device=f"{name}.dev"),
    }


def _corpus_holding(make_toml: Callable[[Path], None]) -> Make:
    def make(tmp: Path) -> str:
        (tmp / "corpus").mkdir()
        make_toml(tmp / "corpus" / "corpus.toml")
        return str(tmp / "corpus")

    return make


CORPUS_SPECIAL: dict[str, Make] = {
    "a FIFO": _fifo("corpus"),
    "/dev/zero": _dev_zero,
    "a FIFO as corpus.toml": _corpus_holding(os.mkfifo),
    "a device as corpus.toml": _corpus_holding(
        lambda p: os.mknod(p, 0o644 | stat.S_IFCHR, os.makedev(1, 5))
    ),
    "a symlink to a device as corpus.toml": _corpus_holding(lambda p: p.symlink_to("/dev/zero")),
}
"""Special files where a corpus folder, or its corpus.toml, is expected."""


def _target_holding(kind: str) -> Make:
    """A copy of the demo target with one special file among its sources."""

    def make(tmp: Path) -> str:
        target = tmp / "target"
        shutil.copytree(DEMO / "target", target, ignore=shutil.ignore_patterns("__pycache__"))
        path = target / "ledgerlite" / "zero.py"
        if kind == "fifo":
            os.mkfifo(path)
        else:
            os.mknod(path, 0o644 | stat.S_IFCHR, os.makedev(1, 5))
        return str(target)

    return make


DEEP = b"[" * 100_000 + b"]" * 100_000

BAD: dict[str, dict[str, Make]] = {
    "ledger": {
        "a folder": _folder,
        "a text file": _write("text.duckdb", b"not a database\n"),
        "an empty file": _write("empty.duckdb", b""),
        "random bytes": _write("random.duckdb", bytes(range(256)) * 64),
        "truncated at a block": _truncated,
        "truncated mid-block": _cut_mid_block,
        "another DuckDB database": _foreign,
        "a path under a file": _under_a_file,
        **_special_out("l.duckdb"),
    },
    "judges": {
        "a folder": _folder,
        "missing": _missing,
        "not TOML": _write("j.toml", b"[judges.x\n"),
        "not UTF-8": _write("j.toml", b'[judges.x]\nkind = "\xff"\n'),
        "a bad judge table": _write("j.toml", b'[judges.x]\nkind = "telepathy"\n'),
        **_special("j.toml"),
    },
    "corpus": {
        "missing": _missing,
        "a file": _write("corpus-file", b"x"),
        "no corpus.toml": _folder,
        "not TOML": _corpus_with("name = \n"),
        "not UTF-8": _corpus_not_utf8,
        "an unknown field": _corpus_with('name = "c"\ntarget = "t"\nbogus = 1\n'),
        **CORPUS_SPECIAL,
    },
    "diff": {
        "not a diff": _write("pr.diff", b"hello\n"),
        "empty": _write("pr.diff", b""),
        "binary": _write("pr.diff", bytes(range(256))),
        "a folder": _folder,
        "missing": _missing,
        **_special("pr.diff"),
    },
    "labels": {
        "nested 100,000 deep": _write("labels.jsonl", DEEP + b"\n"),
        "a duplicated key": _write("labels.jsonl", b'{"id": "a", "id": "b"}\n'),
        "a lone surrogate": _write("labels.jsonl", b'{"id": "\\ud800"}\n'),
        "not UTF-8": _write("labels.jsonl", b"\xff\xfe\n"),
        "empty": _write("labels.jsonl", b""),
        "a folder": _folder,
        "missing": _missing,
        **_special("labels.jsonl"),
    },
    "report": {
        "nested 100,000 deep": _write("r.json", DEEP),
        "a duplicated key": _write("r.json", b'{"title": "a", "title": "b"}'),
        "a lone surrogate": _write("r.json", b'{"title": "\\udfff"}'),
        "not JSON": _write("r.json", b"{"),
        "a folder": _folder,
        "missing": _missing,
        **_special("r.json"),
    },
    "records": {
        "a folder": _folder,
        "missing": _missing,
        **_special("records.jsonl"),
    },
    "import": {
        "a folder": _folder,
        "missing": _missing,
        "not UTF-8": _write("instances.jsonl", b"\xff\xfe\n"),
        **_special("instances.jsonl"),
    },
    "target": {
        "missing": _missing,
        "a target holding a FIFO": _target_holding("fifo"),
        "a target holding a device": _target_holding("device"),
        **_special("target"),
    },
    "run_id": {
        "a parent path": lambda _tmp: "../../x",
        "dot-dot": lambda _tmp: "..",
        "absolute": lambda _tmp: "/tmp/x",
        "a control character": lambda _tmp: "night\x1bly",
        "a newline": lambda _tmp: "a\nb",
        "a zero-width space": lambda _tmp: "a\u200bb",
    },
    "out": {
        "a file": _write("out-file", b"x"),
        **_special_out("out"),
    },
    "seconds": {
        "zero": lambda _tmp: "0",
        "negative": lambda _tmp: "-1",
        "not a number": lambda _tmp: "ten",
        "NaN": lambda _tmp: "nan",
        "infinite": lambda _tmp: "inf",
        "past the bound": lambda _tmp: "1e9",
    },
}
"""Bad values by the kind of input they stand for."""

KIND_OF = {
    "ledger": "ledger",
    "judges_config": "judges",
    "config": "judges",
    "corpus": "corpus",
    "diff": "diff",
    "labels": "labels",
    "report": "report",
    "files": "records",
    "run_id": "run_id",
    "out": "out",
    "file": "import",
    "target": "target",
    "agents_from": "corpus",
    "agent_timeout_s": "seconds",
    "test_timeout_s": "seconds",
}
"""Parameter name → kind of input."""


def _good_labels(tmp: Path) -> str:
    return str(shutil.copy(DEMO / "judge-labels.jsonl", tmp / "good-labels.jsonl"))


def _good_report(tmp: Path) -> str:
    return str(shutil.copy(DEMO / "recorded" / "candidate" / f"{CASE}.json", tmp / "good.json"))


def _good_diff(tmp: Path) -> str:
    (tmp / "good.diff").write_text(
        "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n"
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    return str(tmp / "good.diff")


def _good_records(tmp: Path) -> str:
    (tmp / "good.jsonl").write_text('{"case_id": "c1", "status": "pass"}\n')
    return str(tmp / "good.jsonl")


REQUIRED: dict[str, dict[str, Make]] = {
    "ingest": {"files": _good_records},
    "summarize": {"files": _good_records},
    "sql": {"query": lambda _tmp: "SELECT 1"},
    "schema": {"model": lambda _tmp: "Case"},
    "judge calibrate": {"labels": _good_labels},
    "sandbox verify": {
        "corpus": lambda _tmp: str(DEMO),
        "case": lambda _tmp: CASE,
        "report": _good_report,
    },
    "run pr": {"diff": _good_diff},
    "corpus mutate": {
        "target": lambda _tmp: str(DEMO / "target"),
        "test_command": lambda _tmp: "python3 -m pytest -q tests",
        "out": lambda tmp: str(tmp / "new-corpus"),
        "agents_from": lambda _tmp: str(DEMO),
    },
    "corpus import": {
        "file": _good_records,
        "repos": lambda tmp: str(tmp),
        "out": lambda tmp: str(tmp / "new-corpus"),
        "agents_from": lambda _tmp: str(DEMO),
    },
    "hash": {"record": lambda _tmp: ""},
    "export": {
        "table": lambda _tmp: "runs",
        "fmt": lambda _tmp: "csv",
        "ledger": lambda tmp: str(_good_ledger(tmp)),
    },
}
"""Good values of what a command needs besides the one bad input (``""``: a flag)."""


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]
    options: dict[str, str]
    """Parameter name → how it is given (``--ledger``, or ``""`` for an argument)."""


def _commands() -> Iterator[Command]:
    def walk(cmd: Any, path: tuple[str, ...]) -> Iterator[Command]:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in sorted(subs.items()):
                yield from walk(sub, (*path, name))
            return
        options = {
            p.name: (max(p.opts, key=len) if p.param_type_name == "option" else "")
            for p in cmd.params
            if p.name != "help"
        }
        yield Command(path, options)

    yield from walk(typer.main.get_command(app), ())


COMMANDS = list(_commands())


def _args(command: Command, values: dict[str, str]) -> list[str]:
    args = list(command.path)
    for name, value in values.items():
        flag = command.options[name]
        if not flag:
            args.append(value)
        elif value == "" and name == "record":
            args.append(flag)
        else:
            args.extend([flag, value])
    return args


NOT_FOR: dict[tuple[str, str], set[str]] = {
    ("export", "out"): {"a file", *_special_out("out")},
}
"""Rows a command's parameter does not take: export writes over a regular file, and streams into
a FIFO or a device as a shell's ``>`` does (``bughunt/outfile.py``, tested there)."""

CASES = [
    pytest.param(command, param, bad, id=f"{' '.join(command.path)} {param}={bad}")
    for command in COMMANDS
    for param in command.options
    if param in KIND_OF
    for bad in BAD[KIND_OF[param]]
    if bad not in NOT_FOR.get((" ".join(command.path), param), set())
]


def _tree_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_the_table_covers_every_command_that_takes_input() -> None:
    """Every command with a file, ledger or run id option is in the table; the table is large."""
    fuzzed = {" ".join(c.path) for c in COMMANDS if set(c.options) & set(KIND_OF)}
    assert fuzzed >= {"ingest", "summary", "run nightly", "run pr", "judge calibrate", "sql"}
    assert len(CASES) >= 150


@pytest.mark.parametrize(("command", "param", "bad"), CASES)
def test_a_wholly_bad_input_is_one_line_and_exit_2(
    command: Command, param: str, bad: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One line on stderr, exit 2, no traceback, nothing stored anywhere."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("BUGHUNT_LEDGER", str(work / "default-ledger.duckdb"))
    values = {name: make(work) for name, make in REQUIRED.get(" ".join(command.path), {}).items()}
    if "corpus" in command.options and "corpus" not in values:
        values["corpus"] = str(DEMO)
    values[param] = BAD[KIND_OF[param]][bad](work)
    before = _tree_digest(work)
    result = CliRunner().invoke(app, _args(command, values))
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback: {result.exception!r}"
    )
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2, (result.exit_code, result.stdout[-500:], result.stderr[-500:])
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    assert _tree_digest(work) == before  # nothing stored, nothing changed


def _mixed(tmp: Path) -> Path:
    lines = [
        b'{"case_id": "c1", "status": "pass"}',
        b'{"case_id": "c2", "status": "pass", "status": "fail"}',
        DEEP,
        b'{"case_id": "c\\ud800", "status": "fail"}',
        b'{"case_id": "c3", "status": NaN}',
        b"\xff\xfe",
        b'{"case_id": "c4", "status": "fail"}',
    ]
    path = tmp / "mixed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_bad_lines_cost_only_themselves(tmp_path: Path) -> None:
    """ingest keeps the good lines, names each bad one by file and line, and exits 1."""
    path, ledger = _mixed(tmp_path), tmp_path / "l.duckdb"
    result = CliRunner().invoke(app, ["ingest", str(path), "--ledger", str(ledger)])
    assert result.exit_code == 1
    bad = [line for line in result.stderr.splitlines() if line.startswith("bad line: ")]
    assert [line.split(": ")[1] for line in bad] == [f"{path}:{n}" for n in (2, 3, 4, 5, 6)]
    assert "key 'status' is given twice" in bad[0]
    stored = Ledger(ledger).query("SELECT case_id, status FROM observations ORDER BY case_id")
    assert stored == [{"case_id": "c1", "status": "pass"}, {"case_id": "c4", "status": "fail"}]


def test_strict_stores_nothing_and_exits_2(tmp_path: Path) -> None:
    """--strict: the same file stores nothing, exit 2."""
    path, ledger = _mixed(tmp_path), tmp_path / "l.duckdb"
    result = CliRunner().invoke(app, ["ingest", str(path), "--ledger", str(ledger), "--strict"])
    assert result.exit_code == 2 and not ledger.exists()


def test_summarize_reports_bad_lines_as_json(tmp_path: Path) -> None:
    """summarize counts the good lines and lists the bad ones with their lines, exit 1."""
    result = CliRunner().invoke(app, ["summarize", str(_mixed(tmp_path)), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert [b["line"] for b in data["bad_lines"]] == [2, 3, 4, 5, 6]
    assert data["observations"]["records"] == 2
