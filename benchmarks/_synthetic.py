"""A synthetic corpus of many small cases, generated from the demo target.

Each case is one mutation of one line of a ``ledgerlite`` module — a
comparison operator flipped (``<`` ↔ ``<=``, ``==`` ↔ ``!=``, …), an
integer literal off by one, ``+`` ↔ ``-``, ``and`` ↔ ``or``, ``True`` ↔
``False`` — kept only when it *changes behaviour*: the module's own test
file, copied to the tree root as the reproduction test, fails on the mutated
tree (and passes on the clean one). Distinct lines first; a second mutation
of an already used line only when the lines run out. Past the target's
behaviour-changing mutants (some 240), the cases go round them again as
*variants*: the same mutation plus one comment line naming the variant at
the end of the module, so every case's buggy tree, patch and reports are its
own (a corpus of thousands of cases for scale measurements) while its bug and
its reproduction are the original mutant's.

Two replay agents hand in reports for every case: ``baseline-recorded``
(the whole test file, the demo baseline agent's style, a long report) and
``candidate-recorded`` (the same test, a terse report), so both reproduce
and the judge has two different texts to compare.

Whether a mutant is killed is decided by running pytest on the host, once:
the results are cached in ``benchmarks/.work/`` by the target's content
hash (and each mutant's own key), so later runs only write files.
"""

from __future__ import annotations

import difflib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tokenize
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from bughunt.hashing import hash_tree

ROOT = Path(__file__).resolve().parent.parent
DEMO_TARGET = ROOT / "corpus" / "demo" / "target"
WORK = Path(__file__).resolve().parent / ".work"
REPRO = "test_bughunt_repro.py"
PYTEST = ("-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", REPRO)

_OPS = {
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "==": "!=",
    "!=": "==",
    "+": "-",
    "-": "+",
    "+=": "-=",
    "-=": "+=",
    "*": "//",
}
_NAMES = {"True": "False", "False": "True", "and": "or", "or": "and", "min": "max", "max": "min"}
_CATEGORY = {"cmp": "comparison_operator", "obo": "off_by_one", "ret": "return_value"}


@dataclass(frozen=True, slots=True)
class Mutant:
    """One mutation of one line."""

    module: str
    """Module file, relative to the target (``ledgerlite/period.py``)."""
    line: int
    """1-based line number."""
    col: int
    """0-based column of the mutated token."""
    old: str
    """The token."""
    new: str
    """Its replacement."""
    kind: str
    """``cmp``, ``obo``, ``arith``, ``logic``, ``cond``, ``sign`` or ``ret``."""
    variant: int = 0
    """0: the mutation alone; n > 0: plus the comment line ``# synthetic variant n`` at the end
    of the module (behaviour unchanged: whether the mutant is killed is the original's)."""

    @property
    def key(self) -> str:
        """Stable identity of the mutation (the kill cache's key; a variant shares it)."""
        return f"{self.module}:{self.line}:{self.col}:{self.old}>{self.new}"

    def case_id(self, n: int) -> str:
        """``mut-007-period-l050-cmp``: sortable, readable, unique."""
        stem = Path(self.module).stem
        return f"mut-{n:03d}-{stem}-l{self.line:03d}-{self.kind}"

    def apply(self, source: str) -> str:
        """``source`` with this mutation made."""
        lines = source.splitlines(keepends=True)
        text = lines[self.line - 1]
        assert text[self.col : self.col + len(self.old)] == self.old, self.key
        lines[self.line - 1] = text[: self.col] + self.new + text[self.col + len(self.old) :]
        if self.variant:
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n"
            lines.append(f"# synthetic variant {self.variant}\n")
        return "".join(lines)

    def patch(self, source: str) -> str:
        """The unified diff that injects this mutation (``a/``, ``b/`` prefixes)."""
        diff = difflib.unified_diff(
            source.splitlines(keepends=True),
            self.apply(source).splitlines(keepends=True),
            fromfile=f"a/{self.module}",
            tofile=f"b/{self.module}",
        )
        return "".join(diff)


def test_file_for(target: Path, module: str) -> Path | None:
    """``tests/test_<stem>.py`` of a module, if the target has one."""
    path = target / "tests" / f"test_{Path(module).stem}.py"
    return path if path.is_file() else None


def candidates(target: Path) -> list[Mutant]:
    """Every mutation of every module with a test file: first per line, round-robin by module.

    The order is deterministic: distinct lines across modules first, then
    the remaining mutations of lines already used.
    """
    per_module: list[list[Mutant]] = []
    seconds: list[Mutant] = []
    for path in sorted((target / "ledgerlite").glob("*.py")):
        module = path.relative_to(target).as_posix()
        if test_file_for(target, module) is None:
            continue
        firsts: list[Mutant] = []
        seen_lines: set[int] = set()
        for m in _mutations(module, path.read_text(encoding="utf-8")):
            if m.line in seen_lines:
                seconds.append(m)
            else:
                seen_lines.add(m.line)
                firsts.append(m)
        per_module.append(firsts)
    ordered: list[Mutant] = []
    for i in range(max((len(f) for f in per_module), default=0)):
        ordered.extend(f[i] for f in per_module if i < len(f))
    return ordered + seconds


def _mutations(module: str, source: str) -> Iterator[Mutant]:
    """Every single-token mutant of ``source``, in token order."""
    prev: tokenize.TokenInfo | None = None
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for i, tok in enumerate(tokens):
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        yield from _condition_mutants(module, source, tokens, i, prev, after)
        yield from _value_mutants(module, source, tokens, i, prev, after)
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            prev = tok


def _condition_mutants(
    module: str,
    source: str,
    tokens: Sequence[tokenize.TokenInfo],
    i: int,
    prev: tokenize.TokenInfo | None,
    after: tokenize.TokenInfo | None,
) -> Iterator[Mutant]:
    """``not x`` → ``x`` and ``in`` → ``not in`` (conditions inverted)."""
    tok = tokens[i]
    (line, col), text = tok.start, tok.string
    if tok.type == tokenize.NAME and text == "not" and after is not None:
        # never the ``not`` of ``not in`` / ``is not``
        joined = (prev is not None and prev.string == "is") or after.string == "in"
        if not joined and after.start[0] == line:
            gap = source.splitlines()[line - 1][col : after.start[1]]
            yield Mutant(module, line, col, gap, "", "cond")
    elif (
        tok.type == tokenize.NAME
        and text == "in"
        and not (prev is not None and prev.string == "not")
        and not _in_for(tokens, i)
    ):
        yield Mutant(module, line, col, "in", "not in", "cond")


def _value_mutants(
    module: str,
    source: str,
    tokens: Sequence[tokenize.TokenInfo],
    i: int,
    prev: tokenize.TokenInfo | None,
    after: tokenize.TokenInfo | None,
) -> Iterator[Mutant]:
    """Operators swapped, signs dropped, returns emptied, numbers off by one, names swapped."""
    tok = tokens[i]
    (line, col), text = tok.start, tok.string
    if tok.type == tokenize.OP and text in _OPS:
        yield from _operator_mutants(module, tok, prev, after)
    elif tok.type == tokenize.NAME and text == "return" and after is not None:
        yield from _return_mutants(module, source, tokens, i, after)
    elif tok.type == tokenize.NUMBER and text.isdigit():
        yield Mutant(module, line, col, text, str(int(text) + 1), "obo")
        if int(text) > 0:
            yield Mutant(module, line, col, text, str(int(text) - 1), "obo")
    elif tok.type == tokenize.NAME and text in _NAMES:
        yield Mutant(module, line, col, text, _NAMES[text], "logic")


_BEFORE_UNARY = ("return", "in", "not", "and", "or", "if", "else", "lambda")
"""Names after which ``+`` or ``-`` is a sign, not an operator."""


def _operator_mutants(
    module: str,
    tok: tokenize.TokenInfo,
    prev: tokenize.TokenInfo | None,
    after: tokenize.TokenInfo | None,
) -> Iterator[Mutant]:
    """A binary operator swapped, or a unary minus dropped (``-x`` → ``x``)."""
    (line, col), text = tok.start, tok.string
    unary = text in "+-" and (
        prev is None
        or (prev.type == tokenize.OP and prev.string not in (")", "]", "}"))
        or (prev.type == tokenize.NAME and prev.string in _BEFORE_UNARY)
    )
    if not unary:
        kind = "arith" if text in "+-" else "cmp"
        yield Mutant(module, line, col, text, _OPS[text], kind)
    elif text == "-" and after is not None and after.start == tok.end:
        yield Mutant(module, line, col, "-", "", "sign")


def _return_mutants(
    module: str,
    source: str,
    tokens: Sequence[tokenize.TokenInfo],
    i: int,
    after: tokenize.TokenInfo,
) -> Iterator[Mutant]:
    """``return <expr>`` → ``return None``, for an expression on this line only."""
    line = tokens[i].start[0]
    rest = source.splitlines()[line - 1][after.start[1] :]
    ends = next((t for t in tokens[i:] if t.type == tokenize.NEWLINE), None)
    if after.start[0] == line and ends is not None and ends.start[0] == line:
        expr = rest[: ends.start[1] - after.start[1]].rstrip()
        if expr and expr != "None" and "#" not in expr:
            yield Mutant(module, line, after.start[1], expr, "None", "ret")


def _in_for(tokens: Sequence[tokenize.TokenInfo], i: int) -> bool:
    """Whether the ``in`` at ``tokens[i]`` belongs to a ``for`` (loop or comprehension)."""
    depth = 0
    for tok in reversed(tokens[:i]):
        if tok.type == tokenize.OP and tok.string in ")]}":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in "([{":
            if depth == 0:
                return False
            depth -= 1
        elif tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            return False
        elif depth == 0 and tok.type == tokenize.NAME and tok.string in ("for", "if", "and", "or"):
            return tok.string == "for"
    return False


def _pytest(workdir: Path) -> int:
    # No plugin autoload: the venv's plugins (hypothesis, timeout, ...) triple pytest's start.
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    try:
        done = subprocess.run(
            [sys.executable, *PYTEST],
            cwd=workdir,
            env=env,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return -1  # a hang is not a clean kill: skip the mutant
    return done.returncode


def _killed(target: Path, mutants: Sequence[Mutant], workers: int) -> dict[str, bool]:
    """Which mutants the module's test file (run at the tree root) kills, one tree per worker."""
    out: dict[str, bool] = {}
    with tempfile.TemporaryDirectory(prefix="bughunt-mutants-") as tmp:
        trees = []
        for w in range(workers):
            tree = Path(tmp) / f"w{w}"
            shutil.copytree(target, tree, ignore=shutil.ignore_patterns("__pycache__"))
            trees.append(tree)
        clean: dict[str, bool] = {}
        for module in sorted({m.module for m in mutants}):
            test = test_file_for(target, module)
            assert test is not None
            shutil.copyfile(test, trees[0] / REPRO)
            clean[module] = _pytest(trees[0]) == 0  # the repro must pass on the clean tree

        def check(job: tuple[Path, list[Mutant]]) -> None:
            tree, batch = job
            for m in batch:
                if not clean[m.module]:
                    out[m.key] = False
                    continue
                original = (target / m.module).read_text(encoding="utf-8")
                test = test_file_for(target, m.module)
                assert test is not None
                shutil.copyfile(test, tree / REPRO)
                (tree / m.module).write_text(m.apply(original), encoding="utf-8")
                try:
                    out[m.key] = _pytest(tree) == 1
                finally:
                    (tree / m.module).write_text(original, encoding="utf-8")

        jobs = [(trees[w], list(mutants[w::workers])) for w in range(workers)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(check, jobs))
    return out


def killed_mutants(
    target: Path, count: int, *, workers: int | None = None, fewer: bool = False
) -> list[Mutant]:
    """The first ``count`` behaviour-changing mutants of ``target``, in candidate order.

    Raises ``SystemExit`` when the target has fewer, unless ``fewer`` (then it
    returns them all). Kill results are cached in ``benchmarks/.work/`` (by
    target hash and mutant).
    """
    workers = workers or os.cpu_count() or 2
    # A mutant's fate depends only on the target and the mutant (its key).
    key = hash_tree(target, exclude=("__pycache__", ".pytest_cache"))
    cache_file = WORK / f"mutants-{key[:16]}.json"
    known: dict[str, bool] = {}
    if cache_file.is_file():
        known = json.loads(cache_file.read_text())
    pool = candidates(target)
    chosen: list[Mutant] = []
    i = 0
    while len(chosen) < count and i < len(pool):
        # Check enough unknown candidates for what is still missing (plus a margin).
        window = pool[i : i + max(2 * (count - len(chosen)), workers)]
        unknown = [m for m in window if m.key not in known]
        if unknown:
            known.update(_killed(target, unknown, workers))
            WORK.mkdir(parents=True, exist_ok=True)
            cache_file.write_text(json.dumps(known, sort_keys=True, indent=0))
        for m in window:
            if len(chosen) < count and known[m.key]:
                chosen.append(m)
        i += len(window)
    if len(chosen) < count and not fewer:
        raise SystemExit(f"the target has only {len(chosen)} behaviour-changing mutants")
    return chosen


def _report(m: Mutant, case_id: str, test: str, style: str) -> dict[str, object]:
    stem = Path(m.module).stem
    where = f"{m.module}, line {m.line}"
    suffix = f" (variant {m.variant})" if m.variant else ""
    if style == "baseline":
        return {
            "case_id": case_id,
            "agent_version": "baseline",
            "title": f"Test failure in tests/test_{stem}.py after a change in {m.module}{suffix}",
            "summary": (
                "The agent ran the test suite of the target project from the root of the tree. "
                f"A test in tests/test_{stem}.py failed. The whole test file is attached as the "
                f"reproduction so that every test in it can be re-run as it is. The failure "
                f"points at code in {m.module}."
            ),
            "steps": [
                "Take a copy of the buggy source tree.",
                "Change into the root folder of the copied tree.",
                f"Copy the attached file to {REPRO} at the root of the tree.",
                f"Run: python3 -m pytest -q {REPRO}",
                "Observe that at least one test fails.",
            ],
            "expected": f"All tests in tests/test_{stem}.py pass.",
            "actual": "At least one test fails.",
            "root_cause": "",
            "repro_test": test,
        }
    return {
        "case_id": case_id,
        "agent_version": "candidate",
        "title": f"{where}: `{m.old}` should not be `{m.new}`{suffix}",
        "summary": f"{where} uses `{m.new}` where `{m.old}` is meant; tests/test_{stem}.py fails.",
        "steps": [f"python3 -m pytest -q {REPRO}", "See it fail."],
        "expected": f"tests/test_{stem}.py passes.",
        "actual": "It fails.",
        "root_cause": f"{where}: `{m.new}` instead of `{m.old}`.",
        "repro_test": test,
    }


CORPUS_TOML = """\
name = "synthetic"
target = "target"
cases = "cases"
test_command = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]

[pairing]
baseline = "baseline-recorded"
candidate = "candidate-recorded"

[[agents]]
name = "baseline-recorded"
family = "scripted-alpha"
mode = "replay"
reports = "recorded/baseline"

[[agents]]
name = "candidate-recorded"
family = "scripted-beta"
mode = "replay"
reports = "recorded/candidate"
"""


def write_case(dest: Path, target: Path, n: int, m: Mutant, case_id: str | None = None) -> str:
    """Write one case (case.toml, bug.patch) and its two recorded reports; its id."""
    case_id = case_id or m.case_id(n)
    source = (target / m.module).read_text(encoding="utf-8")
    test_file = test_file_for(target, m.module)
    assert test_file is not None
    test = test_file.read_text(encoding="utf-8")
    folder = dest / "cases" / case_id
    folder.mkdir(parents=True, exist_ok=True)
    category = _CATEGORY.get(m.kind)
    title = f"{m.module} line {m.line}: {m.old} became {m.new}" + (
        f" (variant {m.variant})" if m.variant else ""
    )
    # JSON strings are TOML basic strings: quotes and backslashes in code stay escaped.
    toml = f"id = {json.dumps(case_id)}\ntitle = {json.dumps(title)}\nhints = [{json.dumps(m.module)}]\n"
    if category:
        toml += f"expected_category = {json.dumps(category)}\n"
    (folder / "case.toml").write_text(toml, encoding="utf-8")
    (folder / "bug.patch").write_text(m.patch(source), encoding="utf-8")
    for style in ("baseline", "candidate"):
        reports = dest / "recorded" / style
        reports.mkdir(parents=True, exist_ok=True)
        body = json.dumps(_report(m, case_id, test, style), indent=2, sort_keys=True)
        (reports / f"{case_id}.json").write_text(body + "\n", encoding="utf-8")
    return case_id


def build_corpus(dest: Path, cases: int, *, spare: int = 0) -> tuple[list[str], list[Mutant]]:
    """A corpus of ``cases`` mutants at ``dest``; returns its case ids and ``spare`` unused mutants.

    Past the target's behaviour-changing mutants, cases go round them again as variants
    (``Mutant.variant``), and so do the spares.
    """
    killed = killed_mutants(DEMO_TARGET, cases + spare, fewer=True)
    if not killed:
        raise SystemExit("the target has no behaviour-changing mutant")
    mutants = [
        replace(killed[n % len(killed)], variant=n // len(killed)) for n in range(cases + spare)
    ]
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(
        DEMO_TARGET, dest / "target", ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
    )
    (dest / "corpus.toml").write_text(CORPUS_TOML, encoding="utf-8")
    ids = [write_case(dest, DEMO_TARGET, n, m) for n, m in enumerate(mutants[:cases])]
    return ids, mutants[cases:]
