"""Inside an execution: which lines of the tree the reproduction test executed.

Run as the execution's program (``python3 -c <this file's text> pytest …``):
it installs a line tracer for the files under the working folder (the tree),
then runs the named module as ``python3 -m`` would. Every execution that
decides a verdict runs under it, on every tree, so a test that asks whether it
is traced (``sys.gettrace()``, an audit hook) gets the same answer everywhere.

What it writes, to file descriptor 7 (the cell opens it; without it nothing is
traced and nothing written), one record a line, as it goes, so a process
killed at its deadline still leaves what it had run:

- ``F <index> <path>``: a file of the tree, relative to the working folder;
- ``<index> <line>``: a line of that file ran, the first time it did;
- ``E <flags>`` at a normal exit: ``S`` when the process started another
  program (its lines are not traced), ``R`` when another tracer replaced this
  one (a test or target that traces itself).

A missing ``E`` record means the trace is incomplete (killed, ``os._exit``).
The trace is what the test's process reports about itself: the host treats
it as evidence that a line ran, never as proof of what a test depends on.

Cost: the tracer is installed only when the first code of the tree is
executed (an audit hook on ``exec``), so the test runner's start-up runs
untraced; a code object all of whose lines have been seen is not traced
again. Standard library only and Python 3.9+: it runs on the target's own
interpreter.
"""

from __future__ import annotations

import atexit
import os
import runpy
import sys
import threading
from collections.abc import Callable, Iterator
from types import CodeType, FrameType, ModuleType
from typing import Any

FD = 7
"""The descriptor the records go to."""

Tracer = Callable[[FrameType, str, Any], Any]

_AUDITED = frozenset(
    ("exec", "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn")
)
"""The audit events the tracer acts on: the first code of the tree, and other programs started."""


def _code_lines(code: CodeType) -> set[int]:
    """The lines a line event can report for ``code`` itself (not its nested code)."""
    if hasattr(code, "co_lines"):
        lines = {line for _start, _end, line in code.co_lines() if line is not None}
    else:  # Python 3.9
        import dis

        lines = {line for _offset, line in dis.findlinestarts(code)}
    if code.co_name != "<module>":
        # A function's own first line (its def or first decorator) runs in the
        # enclosing code, never as a line event of its own.
        lines.discard(code.co_firstlineno)
    return lines


class LineTrace:
    """The tracer of one process: files by index, lines seen, a line tracer per code object."""

    def __init__(self, root: str, fd: int) -> None:
        self.root = root.rstrip("/") + "/"
        self.fd = fd
        self.files: dict[str, int] = {}
        """Index of each file seen so far; -1 for a file outside the tree."""
        self.seen: dict[int, set[int]] = {}
        self.tracers: dict[tuple[int, int, str], list[list[Any]]] = {}
        """(file, first line, name) → [code object, its line tracer or None once all its lines
        were seen] for each code object of the tree seen so far (a code object's own hash
        hashes its constants, and ``id()`` is an audit event: both too slow for every call)."""
        self.tracer: Tracer | None = None
        self.paused = False
        self.replaced = False
        self.broken = False
        self.installed = False
        self.started_program = False

    def _write(self, text: str) -> None:
        if self.broken:
            return
        try:
            os.write(self.fd, text.encode("utf-8", "surrogateescape"))
        except OSError:
            self.broken = True  # the descriptor is gone: the trace ends without its E record

    def _index(self, filename: str) -> int:
        index = -1
        if filename.startswith(self.root) and "\n" not in filename:
            index = len(self.seen)
            self.seen[index] = set()
            self._write(f"F {index} {filename[len(self.root) :]}\n")
        self.files[filename] = index
        return index

    def global_trace(self) -> Tracer:
        """The function ``sys.settrace`` calls at every call in the process: a closure over
        plain locals, since for most calls it only finds that the file is not the tree's."""
        files_get = self.files.get
        on_tree = self._on_tree

        def trace(frame: FrameType, _event: str, _arg: Any) -> Tracer | None:
            code = frame.f_code
            index = files_get(code.co_filename, -2)
            if index == -1:
                return None
            return on_tree(code, index)

        return trace

    def _on_tree(self, code: CodeType, index: int) -> Tracer | None:
        """A frame of ``code`` started: its line tracer, or None when it is not the tree's or all
        its lines were seen (a file name's hash is cached, a code object's is not: it hashes
        its constants; so code objects are found by identity under their line and name)."""
        if index == -2:
            index = self._index(code.co_filename)
            if index < 0:
                return None
        key = (index, code.co_firstlineno, code.co_name)
        entries = self.tracers.setdefault(key, [])
        for entry in entries:
            if entry[0] is code:
                tracer: Tracer | None = entry[1]
                return tracer
        entry = [code, None]
        entries.append(entry)
        pending = _code_lines(code) - self.seen[index]
        entry[1] = self._local(entry, index, pending) if pending else None
        return entry[1]  # type: ignore[no-any-return]

    def _local(self, entry: list[Any], index: int, pending: set[int]) -> Tracer:
        seen = self.seen[index]

        def local(frame: FrameType, event: str, _arg: Any) -> Tracer | None:
            if event == "line":
                line = frame.f_lineno
                if line not in seen:
                    seen.add(line)
                    self._write(f"{index} {line}\n")
                pending.discard(line)
                if not pending:
                    entry[1] = None
                    frame.f_trace_lines = False
            return local

        return local

    def install(self) -> None:
        """Trace from now on, in this thread and in every thread started later."""
        if not self.installed:
            self.installed = True
            self.tracer = self.global_trace()
            self.resume()

    def resume(self) -> None:
        """Trace again after :meth:`pause` (nothing before the tree's first code ran)."""
        if self.installed and not self.replaced:
            sys.settrace(self.tracer)
            threading.settrace(self.tracer)
            self.paused = False

    def pause(self) -> None:
        """Stop tracing for a while, noting whether another tracer had taken the place."""
        if self.installed and not self.paused:
            self.replaced = self.replaced or sys.gettrace() is not self.tracer
            sys.settrace(None)
            threading.settrace(None)
            self.paused = True

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        """The audit hook: install on the tree's first code, note programs started."""
        if event not in _AUDITED:  # every audit event of the process comes here
            return
        if event == "exec":
            code = args[0] if args else None
            if isinstance(code, CodeType) and code.co_filename.startswith(self.root):
                self.install()
        else:
            self.started_program = True

    def finish(self) -> None:
        """The closing record, with what makes the trace partial."""
        self.pause()
        flags = ("S" if self.started_program else "") + ("R" if self.replaced else "")
        self._write(f"E {flags or '-'}\n")


def pytest_plugin(traced: LineTrace) -> ModuleType:
    """A pytest plugin that traces only where the tree's code runs for the test.

    That is collection (importing the test and the tree: module-level lines)
    and each test's setup, call and teardown; not pytest's own reporting,
    which for a failing test formats its traceback in tens of thousands of
    calls that a tracer would slow down and that run none of the tree's code.
    """
    import pytest

    def window() -> Iterator[None]:
        traced.resume()
        yield
        traced.pause()

    # pluggy passes a hook implementation only the arguments it names: here none.
    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection() -> Iterator[None]:
        yield from window()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup() -> Iterator[None]:
        yield from window()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call() -> Iterator[None]:
        yield from window()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown() -> Iterator[None]:
        yield from window()

    # Already imported, so pytest would warn that it cannot rewrite its asserts (it has none).
    plugin = ModuleType(PLUGIN, "Where the line tracer traces. PYTEST_DONT_REWRITE")
    hooks = (pytest_collection, pytest_runtest_setup, pytest_runtest_call, pytest_runtest_teardown)
    for hook in hooks:
        setattr(plugin, hook.__name__, hook)
    return plugin


PLUGIN = "_bughunt_trace"
"""The name the tracer's pytest plugin is registered under (``-p``)."""


def main(argv: list[str]) -> None:
    """Trace the tree under the working folder and run module ``argv[0]`` with ``argv[1:]``."""
    root = os.getcwd()
    try:
        os.fstat(FD)
    except OSError:
        traced = None
    else:
        traced = LineTrace(root, FD)
        sys.addaudithook(traced.audit)
        atexit.register(traced.finish)
    if sys.path and sys.path[0] == "":
        sys.path[0] = root  # as ``python3 -m`` has it
    if traced is not None and argv[0] == "pytest":
        sys.modules[PLUGIN] = pytest_plugin(traced)
        argv = [*argv, "-p", PLUGIN]
    sys.argv = list(argv)
    runpy.run_module(argv[0], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
