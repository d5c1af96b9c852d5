#!/usr/bin/env python3
"""Scripted bug-hunting agent for the bughunt demo corpus (no LLM, stdlib only).

Contract: BUGHUNT_TREE is a writable copy of the buggy target tree WITHOUT its
test suite (the suite is the corpus's oracle and is held out: no ``tests/``,
no ``test_*.py``, no ``conftest.py``); BUGHUNT_CASE is a JSON file
{"id", "title", "hints"}. The agent writes exactly one JSON bug report to the
file BUGHUNT_REPORT names (stdout when unset), prints diagnostics on stderr,
and exits 0. It needs python3 and pytest, nothing else.

Both styles hunt the same way: they read the package's own documentation.
Every ``>>>`` example in a docstring states documented behaviour; the agent
runs those examples against the buggy tree (in a child process, hash seed
fixed, an alarm per example), and an example whose output differs from its
documentation is a symptom of the bug. It then writes a pytest file that
replays the example without the docstring (the sandbox may strip docstrings
when it rewrites a tree), runs that file once on the buggy tree, and files
the report. Same tree + same case => byte-identical report (object addresses
masked, timings dropped).

--style baseline  (agent_version "baseline", family scripted-alpha)
    * Runs EVERY documented example of every module of the package, modules in
      path order, docstrings in source order, and takes the FIRST failing
      example. Ignores the hints and the case title.
    * repro_test = a replay of the WHOLE module holding that example: one test
      per docstring, every example of it in order, run in the module's
      namespace (``from <module> import *``); an example's documented output
      is checked as the ``repr`` of its value, a documented traceback as the
      last line of the exception's traceback. Not minimal, but it carries
      every bit of set-up along.
    * Wordy report: long summary, ten restated steps, the tail of its own
      pytest run pasted into ``actual``; ``root_cause`` is left empty. When the
      first failure in module order is not the one the title describes, the
      report is about that other symptom (it is still the same bug).
    * Weak spot: the replay checks values, not printed output. An example
      that prints (``>>> print(format_balance_sheet(...))``) has the value
      None, so its check fails on every tree, and with it the whole-module
      replay fails on the CLEAN tree too: the case is not reproduced.
      (Demo corpus: report.py's tour prints a balance sheet, so the cases whose
      only symptoms are in report.py, obo-paginate-offset and obo-top-expenses,
      are missed.)

--style candidate  (agent_version "candidate", family scripted-beta)
    * Trusts the hints: runs only the examples of the hinted modules
      (``<pkg>/<mod>.py``; every module when there is no usable hint). Among
      the failing examples it picks the one whose text (owner name, source,
      documented output) shares the most words with the case title (ties:
      first in source order).
    * repro_test = ONE crisp test: the example's docstring set-up (the
      examples before it, run as plain statements; documented exceptions
      under ``pytest.raises``), then the failing example as the assertion a
      human writes: ``assert expr == <documented output>``,
      ``pytest.raises(Error)`` plus the message, ``capsys`` for printed
      output. It imports just the names the example sources use. Short steps,
      a one-line title and a root cause (the owner function, its file and
      line, the deepest package frame when an exception escaped).
    * Weak spot 1: the documented output is pasted in as a Python expression,
      but only names used in the example's SOURCE are imported. An output
      spelled with other names (``datetime.date(2025, 1, 1)``,
      ``[Entry(...)]``) raises NameError on the clean tree, so the repro fails
      on both trees. (Demo corpus: other-december-rollover, whose best
      example is ``Period.month(2024, 12).end``, and state-entries-alias,
      whose example shows ``[Entry(tx_id=1, date=datetime.date(...), ...)]``.)
    * Weak spot 2: if every example of the hinted modules passes (a misleading
      hint), it files a speculative report whose repro only imports the
      hinted module; that passes on the buggy tree, i.e. it reproduces
      nothing. (Demo corpus: exc-parse-amount-error, hinted at money.py.)
"""

import argparse
import ast
import builtins
import json
import os
import re
import signal
import subprocess
import sys

PROBE_TIMEOUT = 120
PYTEST_TIMEOUT = 120
EXAMPLE_ALARM = 10  # seconds one documented example may run in the probe
REPRO_FILE = "test_bughunt_repro.py"
STOP_WORDS = {
    "the", "a", "an", "of", "is", "are", "and", "or", "to", "in", "on", "for",
    "its", "it", "as", "by", "be", "not", "too", "test", "with", "into", "also",
    "so", "at", "instead",
}
ADDRESS_RE = re.compile(r" at 0x[0-9a-fA-F]+")


def log(*parts):
    print("[agent]", *parts, file=sys.stderr, flush=True)


def mask(text):
    """Object addresses differ from run to run: mask them (determinism)."""
    return ADDRESS_RE.sub(" at 0x...", text)


def child_env():
    # PYTHONHASHSEED fixes set and dict-of-set orderings in outputs (determinism).
    return dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")


# ------------------------------------------------------ the probe (child process)
class _ExampleTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _ExampleTimeout(f"example ran longer than {EXAMPLE_ALARM} s")


def _docstring_holders(source):
    """(qualname, docstring node, def line) in source order; the module is ``""``."""
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                doc = _doc_node(child)
                if doc is not None:
                    found.append((name, doc, child.lineno))
                if isinstance(child, ast.ClassDef):
                    visit(child, name + ".")

    module = ast.parse(source)
    doc = _doc_node(module)
    if doc is not None:
        found.append(("", doc, 1))
    visit(module, "")
    found.sort(key=lambda item: item[1].lineno)
    return found


def _doc_node(node):
    body = getattr(node, "body", [])
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if isinstance(body[0].value.value, str):
            return body[0].value
    return None


def probe(paths):
    """Run every documented example of the modules at ``paths``; print JSON results.

    Runs in the tree (cwd) with the tree first on sys.path. A module that does
    not import is reported with its error and no examples.
    """
    import doctest
    import importlib
    import traceback

    tree = os.getcwd()
    sys.path.insert(0, tree)
    signal.signal(signal.SIGALRM, _on_alarm)

    class Runner(doctest.DocTestRunner):
        def __init__(self):
            super().__init__(verbose=False, optionflags=0)
            self.outcomes = {}

        def report_start(self, out, test, example):
            signal.alarm(EXAMPLE_ALARM)

        def report_success(self, out, test, example, got):
            signal.alarm(0)
            self.outcomes[id(example)] = {"status": "pass", "got": got}

        def report_failure(self, out, test, example, got):
            signal.alarm(0)
            if got.startswith("Traceback (most recent call last):"):
                last = [line for line in got.splitlines() if line.strip()][-1]
                got = "Traceback (most recent call last):\n  ...\n" + last + "\n"
            self.outcomes[id(example)] = {"status": "fail", "got": mask(got)}

        def report_unexpected_exception(self, out, test, example, exc_info):
            signal.alarm(0)
            line = traceback.format_exception_only(*exc_info[:2])[-1].strip()
            frame = ""
            for entry in traceback.extract_tb(exc_info[2]):
                path = os.path.abspath(entry.filename)
                if path.startswith(tree + os.sep):
                    rel = os.path.relpath(path, tree).replace(os.sep, "/")
                    frame = f"{rel}:{entry.lineno} in {entry.name}()"
            self.outcomes[id(example)] = {
                "status": "error",
                "got": mask("Traceback (most recent call last):\n  ...\n" + line + "\n"),
                "frame": frame,
            }

    results = []
    parser = doctest.DocTestParser()
    for path in paths:
        module_name = path[:-3].replace("/", ".")
        if module_name.endswith(".__init__"):
            module_name = module_name[: -len(".__init__")]
        entry = {"path": path, "module": module_name, "error": "", "names": {}, "docstrings": []}
        results.append(entry)
        try:
            module = importlib.import_module(module_name)
            with open(os.path.join(tree, path), encoding="utf-8") as handle:
                holders = _docstring_holders(handle.read())
        except Exception as exc:
            entry["error"] = mask(traceback.format_exception_only(type(exc), exc)[-1].strip())
            continue
        for name, value in sorted(vars(module).items()):
            if not name.startswith("__"):
                origin = getattr(value, "__module__", None)
                entry["names"][name] = origin if isinstance(origin, str) else module_name
        runner = Runner()
        for qualname, node, def_line in holders:
            examples = parser.get_examples(node.value, qualname or module_name)
            if not examples:
                continue
            test = doctest.DocTest(
                examples, dict(vars(module)), qualname or module_name, path, node.lineno - 1,
                node.value,
            )
            runner.run(test, out=lambda text: None, clear_globs=True)
            signal.alarm(0)
            records = []
            for example in examples:
                outcome = runner.outcomes.get(id(example), {"status": "skipped", "got": ""})
                records.append({
                    "line": node.lineno + example.lineno,
                    "source": example.source,
                    "want": mask(example.want),
                    "exc_msg": example.exc_msg,
                    **outcome,
                })
            entry["docstrings"].append({
                "qualname": qualname, "line": node.lineno, "def_line": def_line,
                "examples": records,
            })
    json.dump(results, sys.stdout, sort_keys=True)


def run_probe(tree, paths):
    cmd = [sys.executable, os.path.abspath(__file__), "--probe", *paths]
    log("running documented examples of", ", ".join(paths))
    proc = subprocess.run(
        cmd, cwd=tree, env=child_env(), capture_output=True, text=True, timeout=PROBE_TIMEOUT
    )
    if proc.returncode != 0:
        raise RuntimeError(f"probe failed: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout)


# ------------------------------------------------------------------ the tree
def packages_in(tree):
    return sorted(
        name for name in os.listdir(tree)
        if os.path.isfile(os.path.join(tree, name, "__init__.py"))
    )


def modules_in(tree):
    """Every ``.py`` file of every package, as sorted POSIX paths."""
    found = []
    for package in packages_in(tree):
        for root, dirs, files in os.walk(os.path.join(tree, package)):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
            for name in files:
                if name.endswith(".py"):
                    found.append(os.path.relpath(os.path.join(root, name), tree).replace(os.sep, "/"))
    return sorted(found)


def failures(results):
    """(module entry, docstring, index of the example) of every failing example, in order."""
    found = []
    for module in results:
        for doc in module["docstrings"]:
            for index, example in enumerate(doc["examples"]):
                if example["status"] in ("fail", "error"):
                    found.append((module, doc, index))
    return found


def owner(module, doc):
    return f"{module['module']}.{doc['qualname']}" if doc["qualname"] else module["module"]


# ------------------------------------------------------------- example code
def statement(source):
    """An example's source as statements that can be indented safely."""
    source = source.rstrip("\n")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.end_lineno != node.lineno:  # indenting would change the string
                return ast.unparse(tree)
    return source


def expression(source):
    """The example's source as one expression, or None if it is a statement."""
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError:
        return None
    text = statement(source)
    if "\n" in text:
        text = ast.unparse(tree)
    if isinstance(tree.body, ast.Tuple) and not text.startswith("("):
        text = f"({text})"
    return text


def is_print(source):
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError:
        return False
    call = tree.body
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "print"


def exception_line(exc_msg):
    return (exc_msg or "").strip().splitlines()[-1] if (exc_msg or "").strip() else ""


def indent(text, prefix="    "):
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def one_line(text, limit=200):
    """``text`` on one line (spaces inside a line kept), cut at ``limit`` characters."""
    text = " ".join(line.strip() for line in (text or "").strip().splitlines())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def documented(example):
    """What the docstring documents for the example, as a verb phrase."""
    if example["exc_msg"] is not None:
        return "raises " + exception_line(example["exc_msg"])
    return f"gives {one_line(example['want'])}" if example["want"].strip() else "gives no output"


def observed(example):
    """What the example did on the buggy tree, as a verb phrase."""
    got = example["got"]
    if got.startswith("Traceback"):
        return "raises " + got.strip().splitlines()[-1]
    return f"gives {one_line(got)}" if got.strip() else "gives no output"


def slug(text):
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "module"


# ------------------------------------------------------- running the repro
def run_repro(tree, source):
    """Run the repro on the buggy tree; return (exit code, E-lines, summary line)."""
    path = os.path.join(tree, REPRO_FILE)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short", REPRO_FILE]
    log("running:", " ".join(cmd[1:]))
    try:
        proc = subprocess.run(
            cmd, cwd=tree, env=child_env(), capture_output=True, text=True, timeout=PYTEST_TIMEOUT
        )
        output, code = mask(proc.stdout), proc.returncode
    except subprocess.TimeoutExpired:
        output, code = "", -1
    finally:
        os.remove(path)
    errors = [line[1:].strip() for line in output.splitlines() if line.startswith("E ")]
    tail = [
        re.sub(r" in \d+(\.\d+)?s\b", "", line)  # drop timings: reports must be deterministic
        for line in output.strip().splitlines()[-4:]
        if line.strip()
    ]
    return code, errors, tail


# ------------------------------------------------------------------- reports
def smoke_report(case, style, tree, note):
    packages = packages_in(tree)
    hints = case.get("hints") or []
    module = packages[0] if packages else "ledgerlite"
    if hints and hints[0].endswith(".py"):
        module = hints[0][:-3].replace("/", ".")
    repro = (
        "# bughunt repro (%s): no failing example found, speculative smoke test\n"
        "import importlib\n\n\n"
        "def test_hinted_module_imports():\n"
        "    module = importlib.import_module(%r)\n"
        "    assert module is not None\n" % (style, module)
    )
    return {
        "case_id": case["id"],
        "agent_version": style,
        "title": f"Suspected defect in {module}",
        "summary": f"{note} The report is speculative: no example was seen failing.",
        "steps": [f"Import {module}."],
        "expected": "The module behaves as its docstrings document.",
        "actual": "Not observed: every documented example that was run passed.",
        "root_cause": "",
        "repro_test": repro,
    }


def import_report(case, style, module):
    """A module of the buggy tree does not even import: that is the reproduction."""
    repro = (
        f"# bughunt repro ({style}): {module['module']} does not import\n"
        f"import importlib\n\n\n"
        f"def test_module_imports():\n"
        f"    importlib.import_module({module['module']!r})\n"
    )
    return {
        "case_id": case["id"],
        "agent_version": style,
        "title": f"{module['module']} fails to import: {module['error']}"[:160],
        "summary": f"Importing {module['module']} raises {module['error']}.",
        "steps": [f"python3 -c 'import {module['module']}'"],
        "expected": f"{module['module']} imports.",
        "actual": module["error"],
        "root_cause": f"{module['path']} raises at import time.",
        "repro_test": repro,
    }


BASELINE_HELPERS = '''import contextlib as _contextlib
import traceback as _traceback

from {module} import *  # the examples run in the module's namespace


def _check(value, expected):
    """An example's documented output is the repr of its value."""
    assert repr(value) == expected, f"{{value!r}} != {{expected}}"


@_contextlib.contextmanager
def _raises(expected):
    """The example raises; the last line of its traceback is ``expected``."""
    try:
        yield
    except Exception as exc:
        got = _traceback.format_exception_only(type(exc), exc)[-1].strip()
        assert got == expected, got
    else:
        raise AssertionError(f"did not raise: {{expected}}")
'''


def baseline_replay(module, doc):
    """One test function replaying every example of ``doc`` in order."""
    name = doc["qualname"] or "module docstring"
    lines = [
        f"def test_{slug(doc['qualname'] or 'module_docstring')}():",
        f'    """{name}, {module["path"]}:{doc["line"]}."""',
    ]
    for example in doc["examples"]:
        expr = expression(example["source"])
        if example["exc_msg"] is not None:
            lines.append(f"    with _raises({exception_line(example['exc_msg'])!r}):")
            lines.append(indent(statement(example["source"]), "        "))
        elif example["want"] and expr is not None:
            lines.append(f"    _check({expr}, {example['want'].rstrip(chr(10))!r})")
        else:
            lines.append(indent(statement(example["source"])))
    return "\n".join(lines) + "\n"


def baseline_report(case, tree):
    results = run_probe(tree, modules_in(tree))
    broken = [module for module in results if module["error"]]
    if broken:
        return import_report(case, "baseline", broken[0])
    found = failures(results)
    if not found:
        return smoke_report(case, "baseline", tree, "Every documented example of the package passed.")
    module, doc, index = found[0]
    example = doc["examples"][index]
    where = f"{module['path']}:{example['line']}"
    who = owner(module, doc)
    tests = [baseline_replay(module, d) for d in module["docstrings"]]
    repro = (
        f"# bughunt repro (baseline): every documented example of {module['path']}, replayed in order\n"
        f"# first failing example: {where} ({who})\n"
        f"# run from the tree root: python3 -m pytest -q {REPRO_FILE}\n"
        + BASELINE_HELPERS.format(module=module["module"])
        + "".join("\n\n" + test for test in tests)
    )
    code, errors, tail = run_repro(tree, repro)
    source = one_line(example["source"])
    count = sum(len(d["examples"]) for m in results for d in m["docstrings"])
    return {
        "case_id": case["id"],
        "agent_version": "baseline",
        "title": f"Documented example fails in {who} ({case['title']})",
        "summary": (
            f"While investigating the reported problem \"{case['title']}\", the agent read the "
            f"documentation of the target package and ran every one of its {count} documented "
            f"examples, module by module and docstring by docstring, from the root of the tree. "
            f"The first example that did not behave as documented was `{source}` in the "
            f"docstring of {who} at {where}: the documentation says it {documented(example)}, but "
            f"on this tree it {observed(example)}. "
            f"{len(found)} of the documented examples failed in total. Every example of "
            f"{module['path']} is attached as the reproduction, replayed in order as a pytest "
            f"file, so that the whole documented behaviour of that module can be re-checked "
            f"as it is. This indicates a defect in the library code exercised by {who}."
        ),
        "steps": [
            "Take a copy of the buggy source tree.",
            "Open a shell and change into the root folder of the copied tree.",
            "Collect the >>> examples from the docstrings of every module of the package.",
            "Run each example in the namespace of its module, in order.",
            f"Observe that the first example that fails is `{source}` at {where}.",
            f"Open the file {module['path']} and read the docstring of {who}.",
            f"Compare: the docstring says the example {documented(example)}; here it {observed(example)}.",
            f"Copy the attached reproduction file to {REPRO_FILE} at the root of the tree.",
            f"Run: python3 -m pytest -q {REPRO_FILE}",
            "Observe that the reproduction fails in the same way as the documented example.",
        ],
        "expected": f"The example `{source}` documented in {who} ({where}) {documented(example)}.",
        "actual": "\n".join(
            [f"It {observed(example)}."]
            + errors
            + [f"--- pytest {REPRO_FILE} on the buggy tree (exit {code}, tail) ---"]
            + tail
        ),
        "root_cause": "",
        "repro_test": repro,
    }


def stem(word):
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def words(text):
    return {stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP_WORDS}


def title_score(doc, example, title):
    text = " ".join([doc["qualname"], example["source"], example["want"], example["exc_msg"] or ""])
    return len(words(title) & words(text))


def needed_names(sources):
    """Names the sources read but never bind (builtins aside), sorted."""
    loaded, bound = set(), set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                bound.add(node.name)
    return sorted(loaded - bound - set(dir(builtins)))


def called_names(source):
    """Names of the plain functions a source calls, in order of appearance."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    calls.sort(key=lambda node: (node.lineno, node.col_offset))
    names = []
    for call in calls:
        if isinstance(call.func, ast.Name) and call.func.id not in names:
            names.append(call.func.id)
    return names


def import_block(module, sources, exceptions):
    """Import lines for what the example sources use: stdlib, pytest, then the package."""
    packages = {module["module"].split(".")[0]}
    origins = {}
    for name in needed_names(sources):
        if name in module["names"]:
            origin = module["names"][name]
            if origin.startswith("_") or origin == "builtins":
                origin = module["module"]
            origins.setdefault(origin, set()).add(name)
    for dotted in exceptions:
        origin, _, name = dotted.rpartition(".")
        if origin:
            origins.setdefault(origin, set()).add(name)
    stdlib = [o for o in sorted(origins) if o.split(".")[0] not in packages]
    local = [o for o in sorted(origins) if o.split(".")[0] in packages]
    groups = [
        [f"from {o} import {', '.join(sorted(origins[o]))}" for o in stdlib],
        ["import pytest"] if exceptions else [],
        [f"from {o} import {', '.join(sorted(origins[o]))}" for o in local],
    ]
    return "\n\n".join("\n".join(group) for group in groups if group)


def split_exception(exc_msg):
    line = exception_line(exc_msg)
    name, _, detail = line.partition(":")
    return name.strip(), detail.strip()


def candidate_test(module, doc, index):
    """Imports + one test: the docstring's set-up, then the failing example as an assert."""
    examples = doc["examples"][: index + 1]
    body, exceptions, uses_capsys = [], [], False
    for example in examples[:-1]:
        if example["exc_msg"] is not None:
            dotted = split_exception(example["exc_msg"])[0]
            exceptions.append(dotted)
            body.append(f"with pytest.raises({dotted.rpartition('.')[2]}):")
            body.append(indent(statement(example["source"])))
        else:
            body.append(statement(example["source"]))
    last = examples[-1]
    expr = expression(last["source"])
    want = last["want"].rstrip("\n")
    if last["exc_msg"] is not None:
        dotted, detail = split_exception(last["exc_msg"])
        exceptions.append(dotted)
        body.append(f"with pytest.raises({dotted.rpartition('.')[2]}) as excinfo:")
        body.append(indent(statement(last["source"])))
        if detail:
            body.append(f"assert str(excinfo.value) == {detail!r}")
    elif want and expr is not None and is_print(last["source"]):
        uses_capsys = True
        body.append("capsys.readouterr()")
        body.append(statement(last["source"]))
        body.append(f"assert capsys.readouterr().out == {last['want']!r}")
    elif want and expr is not None:
        if want in ("True", "False", "None"):
            body.append(f"assert {expr} is {want}")
        elif "\n" not in want and expression(want) is not None:
            body.append(f"assert {expr} == {want}")
        else:
            body.append(f"assert repr({expr}) == {want!r}")
    else:
        body.append(statement(last["source"]))
    sources = [e["source"] for e in examples]
    imports = import_block(module, sources, exceptions)
    name = "test_" + slug(doc["qualname"] or module["module"].rpartition(".")[2])
    signature = f"def {name}(capsys):" if uses_capsys else f"def {name}():"
    return imports + "\n\n\n" + signature + "\n" + indent("\n".join(body)) + "\n"


def hinted_modules(tree, hints):
    paths = []
    for hint in hints:
        hint = hint.strip().lstrip("./")
        if hint.endswith(".py") and os.path.isfile(os.path.join(tree, hint)) and hint not in paths:
            paths.append(hint)
    return paths


def candidate_report(case, tree):
    hints = case.get("hints") or []
    paths = hinted_modules(tree, hints) or modules_in(tree)
    results = run_probe(tree, paths)
    broken = [module for module in results if module["error"]]
    if broken:
        return import_report(case, "candidate", broken[0])
    found = failures(results)
    if not found:
        return smoke_report(
            case, "candidate", tree, f"Every documented example of {', '.join(paths)} passes."
        )
    title = case.get("title", "")
    scored = [(title_score(doc, doc["examples"][i], title), -n) for n, (_, doc, i) in enumerate(found)]
    module, doc, index = found[scored.index(max(scored))]
    example = doc["examples"][index]
    who = owner(module, doc)
    where = f"{module['path']}:{example['line']}"
    repro = (
        f"# bughunt repro (candidate): documented example of {who} ({where})\n"
        + candidate_test(module, doc, index)
    )
    code, errors, _ = run_repro(tree, repro)
    source = one_line(example["source"])
    suspect = f"{who} ({module['path']}:{doc['def_line']})"
    if not doc["qualname"]:  # a module docstring: suspect the module's functions it calls
        called = [name for name in called_names(example["source"])
                  if module["names"].get(name) == module["module"]]
        if called:
            suspect = f"{', '.join(called)} in {module['path']}"
    if example.get("frame"):
        root_cause = f"`{source}` raises from {example['frame']}, called through {suspect}."
    else:
        root_cause = (
            f"{suspect} no longer does what its documentation says; the defect is in it or "
            f"in what it calls."
        )
    return {
        "case_id": case["id"],
        "agent_version": "candidate",
        "title": one_line(f"{who}: `{source}` {observed(example)}; documented: {documented(example)}", 160),
        "summary": f"The documented example `{source}` of {who} ({where}) {observed(example)} on the buggy tree; its docstring says it {documented(example)}.",
        "steps": [
            f"From the tree root run: python3 -m pytest -q {REPRO_FILE}",
            f"See it fail (exit {code}): {errors[0] if errors else 'the assertion fails'}",
        ],
        "expected": f"`{source}` {documented(example)}.",
        "actual": f"`{source}` {observed(example)}.",
        "root_cause": root_cause,
        "repro_test": repro,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--style", choices=["baseline", "candidate"])
    parser.add_argument("--probe", nargs="+", metavar="MODULE_PATH", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:
        probe(args.probe)
        return 0
    if args.style is None:
        parser.error("--style is required")
    tree = os.environ["BUGHUNT_TREE"]
    with open(os.environ["BUGHUNT_CASE"], encoding="utf-8") as handle:
        case = json.load(handle)
    log("style", args.style, "case", case.get("id"), "tree", tree)
    try:
        if args.style == "baseline":
            report = baseline_report(case, tree)
        else:
            report = candidate_report(case, tree)
    except Exception as exc:  # never crash without a report
        log("internal error:", repr(exc))
        report = smoke_report(case, args.style, tree, f"Agent error: {exc!r}.")
    text = json.dumps(report, indent=2, sort_keys=True) + "\n"
    target = os.environ.get("BUGHUNT_REPORT")
    if target:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
