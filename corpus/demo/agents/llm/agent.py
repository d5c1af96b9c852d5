#!/usr/bin/env python3
"""Reference LLM bug-hunting agent: a small tool-using loop over the chat-completions API.

The worked example of docs/agents.md. It runs in the sandbox like any
command-mode agent (docs/corpus.md, "Command mode: the contract"):

* ``BUGHUNT_TREE``: a writable copy of the buggy tree, WITHOUT the target's
  tests (the oracle is held out); ``BUGHUNT_CASE``: ``{"id", "title",
  "hints"}``; ``BUGHUNT_REPORT``: where the one JSON bug report goes (stdout
  when unset).
* ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``: read by the ``openai`` SDK. In
  the sandbox they point at the agent's gateway on 127.0.0.1 and hold a
  placeholder; the gateway adds the real key, which never enters the
  container.
* ``BUGHUNT_LLM_MODEL`` (or ``--model``): the model to ask, default
  ``gpt-4o-mini``.

The model gets the case (its first user message starts ``Case: <id>``) and
five tools:

``list_files(path)``      files under a folder of the tree (recursive, capped)
``read_file(path, start_line)``  a file of the tree (capped; page with start_line)
``write_test(source)``    the candidate reproduction test (kept in a scratch folder)
``run_test()``            runs it on the buggy tree as the sandbox will
                          (``test_bughunt_repro.py`` at the tree root, pytest from
                          there, timeout) and returns the exit code and the tail
``submit_report(...)``    writes the report and ends the loop

Each step (one model call and the tools it asked for) is logged on stderr:
that log is the agent's transcript. At most ``--max-steps`` model calls
(default 20). Nothing the model answers crashes the loop: an answer without a
tool call, arguments that are not a JSON object, an unknown tool or a tool's
failure all go back to the model as an error message. When the model never
submits (steps spent, the API refusing, e.g. a spent budget) but a test was
written, the agent files that test in a report that says so; with no test
at all it exits 1 without a report. Same model answers => same report: the
tool results are deterministic (sorted listings, pytest timings dropped,
fixed hash seed).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

DEFAULT_MODEL = "gpt-4o-mini"
MAX_STEPS = 20
REPRO_FILE = "test_bughunt_repro.py"
READ_CAP_CHARS = 24_000  # what one read_file returns at most
READ_CAP_LINES = 600
LIST_CAP = 400  # entries one list_files returns at most
TAIL_CHARS = 3_000  # of pytest's output returned by run_test
TEST_TIMEOUT_S = 120  # one run_test, wall clock
LOG_CHARS = 300  # of a tool call's arguments or result shown per transcript line
SKIP_DIRS = {"__pycache__", ".git", ".pytest_cache", ".mypy_cache"}
# BugReport's limits (bughunt/models.py): a longer field would make the report invalid.
FIELD_CAPS = {
    "title": 2_000,
    "summary": 50_000,
    "expected": 20_000,
    "actual": 20_000,
    "root_cause": 20_000,
    "repro_test": 200_000,
}
TIMING_RE = re.compile(r" in \d+(\.\d+)?s\b")
ADDRESS_RE = re.compile(r" at 0x[0-9a-fA-F]+")

SYSTEM_PROMPT = """You are a bug hunter. A bug was injected into a Python source tree; \
you are told its symptom. Find it and prove it with ONE pytest file that FAILS on this \
(buggy) tree because of the bug and would PASS on the correct code.

The tree's own test suite has been removed: write your own test. The test file is run as \
`test_bughunt_repro.py` at the root of the tree, with `python3 -m pytest` run from there, \
so `import <package>` works; use only the standard library, pytest and the package.

Work with the tools: list_files and read_file to study the code, write_test to save your \
test, run_test to run it on the buggy tree (it should fail, for the bug's reason), then \
submit_report. Always answer with a tool call. You have at most {steps} model calls."""

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "list_files",
            "description": "List the files under a folder of the tree (recursive; paths relative to the tree root).",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "folder, '.' for the tree root"}},
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": f"Read a text file of the tree (at most {READ_CAP_LINES} lines per call).",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "path relative to the tree root"},
                    "start_line": {"type": "integer", "description": "first line to show (1-based)", "minimum": 1},
                },
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_test",
            "description": "Save the candidate reproduction test: the full source of one pytest file. Replaces the previous one.",
            "parameters": {
                "type": "object",
                "properties": {"source": {"type": "string"}},
                "required": ["source"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_test",
            "description": "Run the saved test on the buggy tree; returns pytest's exit code and the tail of its output.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "submit_report",
            "description": "File the bug report and finish. repro_test defaults to the saved test.",
            "parameters": {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "one line"},
                    "summary": {"type": "string", "description": "what is wrong"},
                    "steps": {"type": "array", "items": {"type": "string"}, "description": "steps to reproduce"},
                    "expected": {"type": "string"},
                    "actual": {"type": "string"},
                    "root_cause": {"type": "string", "description": "suspected cause: file, function, line"},
                    "repro_test": {"type": "string", "description": "full source of the pytest file"},
                },
                "required": ["title", "summary", "steps", "expected", "actual", "root_cause"],
            },
        },
    },
]


def log(*parts: object) -> None:
    print("[llm-agent]", *parts, file=sys.stderr, flush=True)


def short(text: str, limit: int = LOG_CHARS) -> str:
    """One line of at most ``limit`` characters, for the transcript."""
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= limit else flat[:limit] + f"... ({len(text)} chars)"


class ToolError(Exception):
    """A tool cannot do what was asked; the message goes back to the model."""


class Workbench:
    """The tools, over one tree: every path stays inside it."""

    def __init__(self, tree: str, case: dict, agent_name: str, report_path: str | None) -> None:
        self.tree = os.path.realpath(tree)
        self.case = case
        self.agent_name = agent_name
        self.report_path = report_path
        self.scratch = tempfile.mkdtemp(prefix="bughunt-llm-")
        self.test_path = os.path.join(self.scratch, REPRO_FILE)
        self.test_source: str | None = None
        self.report: dict | None = None

    # --- paths ------------------------------------------------------------
    def _inside(self, path: object) -> str:
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path must be a non-empty string relative to the tree root")
        full = os.path.realpath(os.path.join(self.tree, path.strip().lstrip("/")))
        if full != self.tree and not full.startswith(self.tree + os.sep):
            raise ToolError(f"{path!r} is outside the tree")
        return full

    def _rel(self, full: str) -> str:
        return os.path.relpath(full, self.tree).replace(os.sep, "/")

    # --- tools -------------------------------------------------------------
    def list_files(self, path: str = ".") -> str:
        root = self._inside(path)
        if not os.path.isdir(root):
            raise ToolError(f"{path!r} is not a folder of the tree")
        found = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            found.extend(self._rel(os.path.join(folder, name)) for name in sorted(files))
        shown = found[:LIST_CAP]
        more = f"\n... and {len(found) - LIST_CAP} more" if len(found) > LIST_CAP else ""
        return ("\n".join(shown) or "(no files)") + more

    def read_file(self, path: str, start_line: int = 1) -> str:
        full = self._inside(path)
        if not os.path.isfile(full):
            raise ToolError(f"{path!r} is not a file of the tree (list_files shows what there is)")
        if not isinstance(start_line, int) or isinstance(start_line, bool) or start_line < 1:
            raise ToolError("start_line must be a positive integer")
        with open(full, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines(keepends=True)
        chosen, size = [], 0
        for line in lines[start_line - 1 :]:
            if len(chosen) >= READ_CAP_LINES or size + len(line) > READ_CAP_CHARS:
                break
            chosen.append(line)
            size += len(line)
        text = "".join(chosen)
        end = start_line - 1 + len(chosen)
        if end < len(lines):
            text += f"\n[... lines {end + 1}-{len(lines)} not shown: read_file with start_line={end + 1}]"
        return text or f"(no lines from line {start_line}; the file has {len(lines)})"

    def write_test(self, source: str) -> str:
        if not isinstance(source, str) or not source.strip():
            raise ToolError("source must be the full text of a pytest file")
        if len(source) > FIELD_CAPS["repro_test"]:
            raise ToolError(f"the test is over {FIELD_CAPS['repro_test']} characters")
        try:
            ast.parse(source)
        except SyntaxError as exc:
            raise ToolError(f"not valid Python: line {exc.lineno}: {exc.msg}") from None
        with open(self.test_path, "w", encoding="utf-8") as handle:
            handle.write(source)
        self.test_source = source
        return f"saved ({len(source)} characters, {source.count(chr(10)) + 1} lines); run_test runs it"

    def run_test(self) -> str:
        if self.test_source is None:
            raise ToolError("no test yet: write_test first")
        target = os.path.join(self.tree, REPRO_FILE)
        if os.path.lexists(target):
            raise ToolError(f"the tree already holds a {REPRO_FILE}; cannot run the test beside it")
        shutil.copyfile(self.test_path, target)
        # As the sandbox runs a reproduction: from the tree root, the tree on sys.path.
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short", REPRO_FILE]
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
        try:
            proc = subprocess.run(
                cmd, cwd=self.tree, env=env, capture_output=True, text=True, timeout=TEST_TIMEOUT_S,
                errors="replace",
            )
        except subprocess.TimeoutExpired:
            return f"timed out after {TEST_TIMEOUT_S} s (a hang on the buggy tree is a symptom too)"
        finally:
            os.remove(target)
        output = ADDRESS_RE.sub(" at 0x...", TIMING_RE.sub("", proc.stdout + proc.stderr)).strip()
        meaning = {
            0: "passed on the buggy tree: it does NOT show the bug",
            1: "a test failed on the buggy tree (check it fails for the bug's reason)",
            2: "interrupted: often the file does not import or collect",
            5: "no tests were collected",
        }.get(proc.returncode, "pytest error")
        tail = output[-TAIL_CHARS:]
        return f"exit {proc.returncode}: {meaning}\n{tail}"

    def submit_report(self, title: str, summary: str, steps: list, expected: str, actual: str,
                      root_cause: str = "", repro_test: str = "") -> str:
        fields = {"title": title, "summary": summary, "expected": expected, "actual": actual,
                  "root_cause": root_cause, "repro_test": repro_test or (self.test_source or "")}
        for name, value in fields.items():
            if not isinstance(value, str):
                raise ToolError(f"{name} must be a string")
        if not fields["title"].strip():
            raise ToolError("title must not be empty")
        if not fields["repro_test"].strip():
            raise ToolError("no repro_test given and none saved with write_test")
        if isinstance(steps, str):
            steps = [line for line in steps.splitlines() if line.strip()]
        if not isinstance(steps, list) or not all(isinstance(step, str) for step in steps):
            raise ToolError("steps must be a list of strings")
        report = {name: value[: FIELD_CAPS[name]] for name, value in fields.items()}
        report["title"] = " ".join(report["title"].split())[: FIELD_CAPS["title"]]
        report.update(case_id=self.case.get("id", ""), agent_version=self.agent_name, steps=steps[:200])
        self.write(report)
        return "report filed"

    # --- the report ---------------------------------------------------------
    def write(self, report: dict) -> None:
        text = json.dumps(report, indent=2, sort_keys=True) + "\n"
        if self.report_path:
            with open(self.report_path, "w", encoding="utf-8") as handle:
                handle.write(text)
        else:
            sys.stdout.write(text)
        self.report = report

    def unfinished_report(self, why: str) -> bool:
        """File the saved test when the model never submitted; False when there is none."""
        if self.test_source is None:
            return False
        self.write({
            "case_id": self.case.get("id", ""),
            "agent_version": self.agent_name,
            "title": f"Unfinished hunt: {self.case.get('title', '')}"[: FIELD_CAPS["title"]],
            "summary": f"The agent stopped before filing a report ({why}); this is the last test it wrote.",
            "steps": [f"From the tree root run: python3 -m pytest -q {REPRO_FILE}"],
            "expected": "",
            "actual": "",
            "root_cause": "",
            "repro_test": self.test_source,
        })
        return True


def call_tool(bench: Workbench, name: object, raw_arguments: object) -> str:
    """Run one tool call; its result text, or an error message. Never raises."""
    tools = {"list_files", "read_file", "write_test", "run_test", "submit_report"}
    if name not in tools:
        return f"error: unknown tool {name!r}; the tools are {', '.join(sorted(tools))}"
    try:
        arguments = json.loads(raw_arguments or "{}") if isinstance(raw_arguments, str | None) else None
    except ValueError as exc:
        return f"error: the arguments are not valid JSON ({exc}); send a JSON object"
    if not isinstance(arguments, dict):
        return "error: the arguments must be a JSON object"
    try:
        return getattr(bench, name)(**arguments)
    except TypeError as exc:  # missing or unexpected arguments
        return f"error: bad arguments for {name}: {exc}"
    except ToolError as exc:
        return f"error: {exc}"
    except Exception as exc:  # a tool's own failure is the model's to hear about, not a crash
        return f"error: {name} failed: {type(exc).__name__}: {exc}"


def first_message(case: dict) -> str:
    hints = case.get("hints") or []
    return "\n".join([
        f"Case: {case.get('id', '')}",
        f"Title: {case.get('title', '')}",
        f"Hints: {', '.join(hints) if hints else '(none)'}",
        "",
        "The symptom above was reported against the package in this tree. Find the bug, "
        "write a pytest file that fails on this tree because of it, run it, and submit your report.",
    ])


def assistant_message(message: object) -> dict:
    """The model's answer as a plain message to send back (only the fields the API takes)."""
    out: dict = {"role": "assistant", "content": getattr(message, "content", None) or ""}
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        out["tool_calls"] = [
            {"id": call.id, "type": "function",
             "function": {"name": call.function.name, "arguments": call.function.arguments}}
            for call in calls
            if getattr(call, "function", None) is not None
        ]
    return out


def hunt(client: object, model: str, bench: Workbench, max_steps: int) -> str | None:
    """The loop; None once a report is filed, else why it stopped."""
    messages: list[dict] = [
        {"role": "system", "content": SYSTEM_PROMPT.format(steps=max_steps)},
        {"role": "user", "content": first_message(bench.case)},
    ]
    for step in range(1, max_steps + 1):
        try:
            answer = client.chat.completions.create(
                model=model, messages=messages, tools=TOOLS, tool_choice="auto", temperature=0
            )
            choices = list(answer.choices or [])
        except Exception as exc:  # the SDK's APIError family, or an answer it cannot read
            log(f"step {step}: the model API failed: {type(exc).__name__}: {short(str(exc))}")
            return f"the model API failed at step {step}: {type(exc).__name__}"
        usage = getattr(answer, "usage", None)
        tokens = f"{usage.prompt_tokens}+{usage.completion_tokens} tokens" if usage else "no usage"
        served = getattr(answer, "model", None)
        if not choices or getattr(choices[0], "message", None) is None:
            nudge = "error: the answer had no message; call a tool"
            log(f"step {step}/{max_steps}: {served}, {tokens}: no message -> {nudge}")
            messages.append({"role": "user", "content": nudge})
            continue
        message = choices[0].message
        log(f"step {step}/{max_steps}: {served}, {tokens}")
        if message.content:
            log("  says:", short(message.content))
        sent = assistant_message(message)
        messages.append(sent)
        if not sent.get("tool_calls"):
            nudge = "error: answer with a tool call (submit_report when you are done)"
            log(f"  no tool call -> {nudge}")
            messages.append({"role": "user", "content": nudge})
            continue
        for call in sent["tool_calls"]:
            name, raw = call["function"]["name"], call["function"]["arguments"]
            log(f"  {name}({short(raw or '', LOG_CHARS)})")
            result = call_tool(bench, name, raw)
            log(f"  -> {short(result)}")
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        if bench.report is not None:
            return None
    return f"{max_steps} steps spent without a report"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("BUGHUNT_LLM_MODEL") or DEFAULT_MODEL,
                        help=f"model name (default: $BUGHUNT_LLM_MODEL, else {DEFAULT_MODEL})")
    parser.add_argument("--max-steps", type=int, default=MAX_STEPS, help="most model calls")
    parser.add_argument("--name", default="llm", help="agent_version written in the report")
    args = parser.parse_args(argv)
    tree = os.environ["BUGHUNT_TREE"]
    with open(os.environ["BUGHUNT_CASE"], encoding="utf-8") as handle:
        case = json.load(handle)
    bench = Workbench(tree, case, args.name, os.environ.get("BUGHUNT_REPORT"))
    log(f"case {case.get('id')} model {args.model} max steps {args.max_steps}")
    try:
        from openai import OpenAI

        # Base URL and key from OPENAI_BASE_URL / OPENAI_API_KEY (in the sandbox: the gateway).
        client = OpenAI(timeout=120.0, max_retries=2)
        stopped = hunt(client, args.model, bench, args.max_steps)
    finally:
        shutil.rmtree(bench.scratch, ignore_errors=True)
    if stopped is None:
        log("report filed")
        return 0
    if bench.unfinished_report(stopped):
        log(f"stopped ({stopped}); filed the last test written")
        return 0
    log(f"stopped ({stopped}); no test was written, no report")
    return 1


if __name__ == "__main__":
    sys.exit(main())
