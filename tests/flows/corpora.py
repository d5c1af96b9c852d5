"""Small corpora built from the demo corpus for flow tests (a full nightly takes minutes)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from tests.conftest import ROOT

DEMO = ROOT / "corpus" / "demo"

SEVEN = [
    "cmp-withdraw-exact-balance",
    "cmp-period-end-inclusive",
    "cond-zero-amount-posting",
    "exc-rollback-wrong-exception",
    "ret-credit-balance-sign",
    "state-entries-alias",
    "state-next-id",
]
"""Seven demo cases whose recorded baseline reports reproduce their bugs."""

DEMO_CASES = sorted(p.name for p in (DEMO / "cases").iterdir() if p.is_dir())
"""Every demo case."""


def mini_corpus(
    repo: Path,
    cases: Sequence[str],
    *,
    extra_agents: str = "",
    pairing: tuple[str, str] | None = None,
) -> Path:
    """``repo/corpus/demo``: the demo corpus with only ``cases`` (optional extra agents, pairing).

    ``repo`` gets the project's pyproject.toml, so PR diffs map to impact classes
    by the same repo-relative paths as in this repository.
    """
    dest = repo / "corpus" / "demo"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    for case in (dest / "cases").iterdir():
        if case.name not in cases:
            shutil.rmtree(case)
    toml = (dest / "corpus.toml").read_text()
    if pairing is not None:
        toml = toml.replace('baseline = "baseline"\n', f'baseline = "{pairing[0]}"\n', 1)
        toml = toml.replace('candidate = "candidate-recorded"', f'candidate = "{pairing[1]}"', 1)
    (dest / "corpus.toml").write_text(toml + extra_agents)
    return dest


def broken_reports(dest: Path, cases: Sequence[str], agent: str = "broken") -> str:
    """Replay reports whose tests pass everywhere (reproduce nothing); returns the agent table."""
    folder = dest / "recorded" / agent
    folder.mkdir(parents=True)
    for case in cases:
        base = json.loads((DEMO / "recorded" / "baseline" / f"{case}.json").read_text())
        base["repro_test"] = "def test_nothing():\n    assert True\n"
        base["title"] = "Something may be wrong"
        (folder / f"{case}.json").write_text(json.dumps(base))
    return (
        f'\n[[agents]]\nname = "{agent}"\nfamily = "scripted-gamma"\nmode = "replay"\n'
        f'reports = "recorded/{agent}"\n'
    )


def copied_reports(dest: Path, agent: str = "baseline-copy") -> str:
    """The baseline's recorded reports under another agent name and family."""
    shutil.copytree(dest / "recorded" / "baseline", dest / "recorded" / agent)
    return (
        f'\n[[agents]]\nname = "{agent}"\nfamily = "scripted-delta"\nmode = "replay"\n'
        f'reports = "recorded/{agent}"\n'
    )


def case_diff(case: str) -> bytes:
    """A PR diff that touches one case's folder (the plan: that case only)."""
    return (
        f"diff --git a/corpus/demo/cases/{case}/case.toml b/corpus/demo/cases/{case}/case.toml\n"
        f"--- a/corpus/demo/cases/{case}/case.toml\n+++ b/corpus/demo/cases/{case}/case.toml\n"
        "@@ -1 +1,2 @@\n"
        f' id = "{case}"\n+# touched\n'
    ).encode()


def path_diff(path: str) -> bytes:
    """A PR diff adding one line to ``path``."""
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1,2 @@\n line\n+added\n"
    ).encode()


def broken_corpus(repo: Path, cases: Sequence[str] = SEVEN) -> Path:
    """The demo corpus with ``cases``, the recorded baseline against a candidate whose tests
    reproduce nothing (``broken``)."""
    corpus = mini_corpus(repo, cases, pairing=("baseline-recorded", "broken"))
    (corpus / "corpus.toml").write_text(
        (corpus / "corpus.toml").read_text() + broken_reports(corpus, cases)
    )
    return corpus
