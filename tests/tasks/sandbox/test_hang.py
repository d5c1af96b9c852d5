"""A hang is a symptom: consistent deadline hits on the buggy tree reproduce the bug (real Docker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bughunt.models import ReproOutcome, Status, Symptom
from corpus import load_corpus
from tasks.sandbox import SandboxSettings, verify_report
from tasks.sandbox.reproduction._reproduce import HANG_REASON, HANG_SHARE, decide_outcome

P, F, E, T = Status.PASS, Status.FAIL, Status.ERROR, Status.TIMEOUT

LOOP = """\
def countdown(n):
    steps = 0
    while n > 0:
        n -= 1
        steps += 1
    return steps
"""
PATCH = """\
--- a/pkg/loop.py
+++ b/pkg/loop.py
@@ -1,6 +1,6 @@
 def countdown(n):
     steps = 0
     while n > 0:
-        n -= 1
+        n -= 0
         steps += 1
     return steps
"""
CORPUS = """\
name = "hangs"
target = "target"
cases = "cases"
test_command = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]

[pairing]
baseline = "recorded"
candidate = "other"

[[agents]]
name = "recorded"
family = "alpha"
mode = "replay"
reports = "reports"

[[agents]]
name = "other"
family = "beta"
mode = "replay"
reports = "reports"
"""
CASE = "loop-never-ends"
HANGS = (
    "from pkg.loop import countdown\n\n\ndef test_countdown_ends():\n    assert countdown(3) == 3\n"
)
SLOW_CLEAN = (
    "import time\nfrom pkg.loop import countdown\n\n\n"
    "def test_countdown_ends():\n    time.sleep(1.5)\n    assert countdown(3) == 3\n"
)


def _corpus(root: Path) -> Path:
    (root / "target" / "pkg").mkdir(parents=True)
    (root / "target" / "pkg" / "__init__.py").write_text("")
    (root / "target" / "pkg" / "loop.py").write_text(LOOP)
    (root / "target" / "tests").mkdir()
    (root / "target" / "tests" / "test_loop.py").write_text(HANGS)
    case = root / "cases" / CASE
    case.mkdir(parents=True)
    (case / "case.toml").write_text(f'id = "{CASE}"\ntitle = "countdown never ends"\n')
    (case / "bug.patch").write_text(PATCH)
    (root / "reports").mkdir()
    (root / "corpus.toml").write_text(CORPUS)
    return root


def _report(root: Path, test: str) -> Path:
    path = root / "reports" / f"{CASE}.json"
    path.write_text(
        json.dumps(
            {
                "case_id": CASE,
                "agent_version": "recorded",
                "title": "countdown never returns",
                "summary": "countdown(3) loops forever.",
                "steps": ["call countdown(3)"],
                "expected": "3",
                "actual": "no return",
                "repro_test": test,
            }
        )
    )
    return path


@pytest.mark.parametrize(
    "buggy,clean,slow,outcome",
    [
        ([T, T, T], [P, P, P], 0, ReproOutcome.REPRODUCED),
        ([T, T, T], [P, P, P], 1, ReproOutcome.ERROR),
        ([T, F, T], [P, P, P], 0, ReproOutcome.ERROR),
        ([T, T, T], [T, P, P], 0, ReproOutcome.ERROR),
        ([T, T, T], [F, F, F], 0, ReproOutcome.ERROR),
    ],
)
def test_hang_rule(
    buggy: list[Status], clean: list[Status], slow: int, outcome: ReproOutcome
) -> None:
    """Only every buggy execution timing out with every clean one passing quickly is a hang."""
    assert decide_outcome(buggy, clean, [T], [P], slow_clean=slow)[0] is outcome


def test_a_hang_must_also_hold_on_the_rewrites() -> None:
    """A rewritten buggy tree that fails instead of hanging is not a consistent hang."""
    assert decide_outcome([T, T], [P, P], [F], [P])[0] is ReproOutcome.ERROR


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_an_infinite_loop_is_reproduced_as_a_hang(tmp_path: Path, run_id: str) -> None:
    """The buggy tree loops until the per-test deadline, the clean one returns: reproduced, hang."""
    root = _corpus(tmp_path)
    settings = SandboxSettings(repeats=2, test_timeout_s=3, seed=1)
    pair = verify_report(
        load_corpus(root), CASE, _report(root, HANGS), run_id=run_id, settings=settings
    )
    assert pair.outcome is ReproOutcome.REPRODUCED, [
        (o.tree, o.status, o.duration_s) for o in pair.observations
    ]
    assert pair.symptom is Symptom.HANG and pair.reason == HANG_REASON
    buggy = [o for o in pair.observations if o.tree == "buggy"]
    assert all(
        o.status is Status.TIMEOUT and o.duration_s is not None and o.duration_s >= 3 for o in buggy
    )


@pytest.mark.docker
@pytest.mark.usefixtures("sandbox_image")
def test_a_slow_but_passing_clean_tree_is_not_taken_for_a_hang(tmp_path: Path, run_id: str) -> None:
    """Clean passes that take over a quarter of the deadline make the pair an error, not a hang."""
    root = _corpus(tmp_path)
    settings = SandboxSettings(repeats=1, test_timeout_s=3, seed=1)
    assert HANG_SHARE * settings.test_timeout_s < 1.5
    pair = verify_report(
        load_corpus(root), CASE, _report(root, SLOW_CLEAN), run_id=run_id, settings=settings
    )
    assert pair.outcome is ReproOutcome.ERROR and pair.symptom is None
    assert "passed only slowly" in (pair.reason or "")
