"""The line tracer on the host's interpreter: what it records, when, and what makes a trace partial.

Each test runs ``python -c <trace.py> <module>`` in a folder standing for the
tree, with descriptor 7 open on a file as the cell opens it, and reads the
records back through the same reader the sandbox uses.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from harness import trace_program
from tasks.sandbox.evidence import Trace, read_trace

MOD = """\
def f(x):
    if x > 1:
        return 2
    return 3


def unused():
    return 4
"""


def _run(
    tree: Path, main: str, *, fd: bool = True, module: tuple[str, ...] = ("main_mod",)
) -> tuple[subprocess.CompletedProcess[str], bytes]:
    (tree / "mod.py").write_text(MOD)
    (tree / "main_mod.py").write_text(main)
    out = tree.parent / f"{tree.name}.trace"
    out.write_bytes(b"")
    # The shell opens descriptor 7 on the file, as the cell's wrapper does.
    opened = '7>"$TRACE_TO"' if fd else ""
    done = subprocess.run(
        [
            "sh",
            "-c",
            f'exec "$@" {opened}',
            "sh",
            sys.executable,
            "-c",
            trace_program(),
            *module,
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "PYTHONPATH": "",
            "TRACE_TO": str(out),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # the venv's plugins are not the image's
        },
    )
    return done, out.read_bytes()


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "work"
    tree.mkdir(parents=True)
    return tree


def test_it_records_the_lines_of_the_tree_that_ran_and_no_others(tmp_path: Path) -> None:
    done, records = _run(_tree(tmp_path), "import mod\nprint(mod.f(5))\n")
    assert done.returncode == 0 and done.stdout == "2\n"
    trace = read_trace(records)
    # f's first branch ran, its last line and unused() never did; nothing outside the tree.
    assert trace == Trace(
        {"main_mod.py": frozenset({1, 2}), "mod.py": frozenset({1, 2, 3, 7})}, None
    )


def test_the_module_runs_as_python_m_would_run_it(tmp_path: Path) -> None:
    main = "import sys\nprint(sys.argv[0].endswith('main_mod.py'), sys.path[0])\nprint(__name__)\n"
    done, _records = _run(_tree(tmp_path), main)
    assert done.stdout.split("\n")[:2] == [f"True {tmp_path / 'work'}", "__main__"]


def test_threads_are_traced(tmp_path: Path) -> None:
    main = "import threading, mod\nt = threading.Thread(target=mod.unused)\nt.start(); t.join()\n"
    _done, records = _run(_tree(tmp_path), main)
    assert 8 in read_trace(records).ran["mod.py"]


def test_what_makes_a_trace_partial(tmp_path: Path) -> None:
    started = _run(_tree(tmp_path / "a"), "import subprocess\nsubprocess.run(['true'])\n")[1]
    assert "another program" in str(read_trace(started).partial)
    replaced = _run(_tree(tmp_path / "b"), "import sys, mod\nsys.settrace(None)\nmod.f(0)\n")[1]
    assert "replaced" in str(read_trace(replaced).partial)
    killed = _run(_tree(tmp_path / "c"), "import os, mod\nmod.f(0)\nos._exit(0)\n")[1]
    trace = read_trace(killed)
    assert "ended early" in str(trace.partial) and 4 in trace.ran["mod.py"]


def test_without_its_descriptor_it_runs_the_module_untraced(tmp_path: Path) -> None:
    done, records = _run(_tree(tmp_path), "import mod\nprint(mod.f(0))\n", fd=False)
    assert done.returncode == 0 and done.stdout == "3\n" and records == b""


def test_a_failing_module_keeps_its_exit_status_and_its_trace(tmp_path: Path) -> None:
    done, records = _run(_tree(tmp_path), "import mod\nraise SystemExit(mod.f(0))\n")
    assert done.returncode == 3 and read_trace(records).partial is None


def test_it_is_python_3_9_syntax() -> None:
    source = trace_program()
    ast.parse(source, feature_version=(3, 9))
    assert "import tasks" not in source and "import bughunt" not in source


PYTEST_TEST = """\
import pytest

import mod


@pytest.fixture
def closing():
    yield
    mod.unused()


def test_it(closing):
    assert mod.f(5) == 3
"""


def test_under_pytest_it_traces_collection_setup_call_and_teardown(tmp_path: Path) -> None:
    """The plugin's windows: the import (collection), the test and its fixture's teardown run
    traced; pytest's report of the failure does not, and adds no warning of its own."""
    tree = _tree(tmp_path)
    (tree / "test_x.py").write_text(PYTEST_TEST)
    done, records = _run(tree, "", module=("pytest", "-q", "-p", "no:cacheprovider", "test_x.py"))
    assert done.returncode == 1 and "1 failed in" in done.stdout and "warning" not in done.stdout
    trace = read_trace(records)
    assert trace.partial is None
    assert trace.ran["mod.py"] == frozenset({1, 2, 3, 7, 8})
    assert {1, 3, 6, 7, 13} <= trace.ran["test_x.py"]  # imports, the fixture, the test
