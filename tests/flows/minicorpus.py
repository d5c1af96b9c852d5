"""A small copy of the demo corpus in a folder of its own, for flow tests.

The copy sits at ``<root>/corpus/<name>`` under a minimal repository root
(``<root>/pyproject.toml``), so PR-diff paths such as
``corpus/<name>/cases/<id>/case.toml`` map to that case exactly as they do in
the real repository (tasks/classify, "PR impact").
"""

from __future__ import annotations

import difflib
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

DEMO = ROOT / "corpus" / "demo"

DEFAULT_CASES: tuple[str, ...] = (
    "cmp-same-day-posting",
    "obo-top-expenses",
    "state-next-id",
)
"""Three cases of different categories whose recorded reports exist for both agents (none of
them the demo's hang: its every buggy execution waits out the deadline, and no test using
these needs one)."""


@dataclass(frozen=True, slots=True)
class MiniCorpus:
    """Where a mini corpus was built."""

    repo: Path
    """Its repository root (holds ``pyproject.toml``)."""
    corpus: Path
    """The corpus folder (holds ``corpus.toml``)."""
    cases: tuple[str, ...]
    """Case ids it holds, sorted."""

    def rel(self, path: Path) -> str:
        """``path`` relative to the repository root, POSIX."""
        return path.relative_to(self.repo).as_posix()

    def touch_case(self, case_id: str) -> str:
        """Append a comment to a case's ``case.toml``; return the change as a git-style diff."""
        if case_id not in self.cases:
            raise ValueError(f"{case_id!r} is not in this mini corpus: {self.cases}")
        file = self.corpus / "cases" / case_id / "case.toml"
        before = file.read_text()
        after = before + "# touched by a test PR\n"
        file.write_text(after)
        rel = self.rel(file)
        lines = difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{rel}",
            tofile=f"b/{rel}",
        )
        return f"diff --git a/{rel} b/{rel}\n" + "".join(lines)


def build_minicorpus(
    dest: Path, cases: Sequence[str] = DEFAULT_CASES, name: str = "mini"
) -> MiniCorpus:
    """Copy corpus/demo to ``dest/corpus/<name>`` keeping only ``cases``; raise on an unknown id."""
    known = {p.name for p in (DEMO / "cases").iterdir() if p.is_dir()}
    unknown = sorted(set(cases) - known)
    if unknown or not cases:
        raise ValueError(f"unknown or no case ids {unknown}; the demo corpus has {sorted(known)}")
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "pyproject.toml").write_text('[project]\nname = "minicorpus"\nversion = "0"\n')
    corpus = dest / "corpus" / name
    shutil.copytree(DEMO, corpus, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    for case_dir in (corpus / "cases").iterdir():
        if case_dir.name not in cases:
            shutil.rmtree(case_dir)
    return MiniCorpus(repo=dest, corpus=corpus, cases=tuple(sorted(cases)))
