"""Small corpora written into tmp_path: a target tree, two agents, and the cases a test asks for."""

from __future__ import annotations

import difflib
from pathlib import Path

CALC = """\
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def total(items):
    result = 0
    for i in range(len(items)):
        result += items[i]
    return result
"""

STORE = """\
class Store:
    def __init__(self):
        self.items = []
        self.count = 0

    def add(self, item):
        if item is None:
            raise ValueError("no item")
        self.items.append(item)
        self.count += 1

    def snapshot(self):
        return list(self.items)
"""

TARGET_FILES: dict[str, bytes] = {
    "pkg/__init__.py": b"",
    "pkg/calc.py": CALC.encode(),
    "pkg/store.py": STORE.encode(),
    "pkg/old_name.py": b"VALUE = 1\n",
    "pkg/gone.py": b"GONE = True\n",
    "data/crlf.txt": b"one\r\ntwo\r\nthree\r\n",
    "data/nonl.txt": b"first\nlast",
}

CONFIG = """\
name = "mini"
target = "target"
cases = "cases"
test_command = ["python3", "-m", "pytest", "-q"]

[pairing]
baseline = "baseline"
candidate = "candidate"

[[agents]]
name = "baseline"
family = "alpha"
mode = "command"
command = ["python3", "/agent/agent.py"]
path = "agents/baseline"

[[agents]]
name = "candidate"
family = "beta"
mode = "replay"
reports = "recorded/candidate"
env = ["API_KEY"]
"""


def case_toml(case_id: str, *, title: str = "A bug", expected: str | None = None) -> str:
    """The text of a valid case.toml."""
    text = f'id = "{case_id}"\ntitle = "{title}"\nhints = ["pkg/calc.py"]\n'
    return text + (f'expected_category = "{expected}"\n' if expected else "")


def edit(path: str, old: str, new: str, source: str | None = None) -> bytes:
    """A unified diff (a/ b/ headers) replacing the first ``old`` line of a target file with ``new``."""
    before = source if source is not None else TARGET_FILES[path].decode()
    lines = before.splitlines(keepends=True)
    after = list(lines)
    index = next(i for i, line in enumerate(lines) if line.strip() == old.strip())
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    if new:
        after[index] = indent + new.strip() + "\n"
    else:
        del after[index]
    diff = difflib.unified_diff(lines, after, fromfile=f"a/{path}", tofile=f"b/{path}")
    return "".join(diff).encode()


def write_corpus(
    root: Path,
    cases: dict[str, tuple[str | None, bytes | None]] | None = None,
    *,
    config: str = CONFIG,
) -> Path:
    """Write a corpus folder; each case is (case.toml text or None, bug.patch bytes or None)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.toml").write_text(config)
    for rel, data in TARGET_FILES.items():
        path = root / "target" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / "agents" / "baseline").mkdir(parents=True, exist_ok=True)
    (root / "agents" / "baseline" / "agent.py").write_text("print('hi')\n")
    (root / "recorded" / "candidate").mkdir(parents=True, exist_ok=True)
    (root / "cases").mkdir(exist_ok=True)
    for case_id, (toml, patch) in (cases or {}).items():
        folder = root / "cases" / case_id
        folder.mkdir(parents=True, exist_ok=True)
        if toml is not None:
            (folder / "case.toml").write_text(toml)
        if patch is not None:
            (folder / "bug.patch").write_bytes(patch)
    return root


def good_case(case_id: str, expected: str | None = "comparison_operator") -> tuple[str, bytes]:
    """A case whose patch is valid and a comparison-operator change."""
    return case_toml(case_id, expected=expected), edit("pkg/calc.py", "if x < lo:", "if x <= lo:")
