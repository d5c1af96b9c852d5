"""A case's buggy tree in memory: the target's files once, each case its changed files only."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from corpus import load_corpus
from tasks.sandbox import SandboxSettings
from tasks.sandbox._jobs import make_jobs
from tasks.sandbox.trees._trees import apply_patch, read_tree

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "corpus" / "demo"

PATCH = b"""\
--- a/pkg/b.py
+++ b/pkg/b.py
@@ -1 +1 @@
-VALUE = 1
+VALUE = 2
"""


def test_a_buggy_tree_holds_the_clean_trees_bytes_for_every_file_its_patch_left(
    tmp_path: Path,
) -> None:
    """With the clean tree as ``base``, the unchanged files are the very bytes objects of the
    clean tree, the patched one its own; the content is what ``git apply`` made either way."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("A = 'unchanged' * 100\n")
    (tmp_path / "pkg" / "b.py").write_text("VALUE = 1\n")
    clean = read_tree(tmp_path)
    alone = apply_patch(tmp_path, PATCH, file="bug.patch")
    shared = apply_patch(tmp_path, PATCH, file="bug.patch", base=clean)
    assert shared == alone and shared["pkg/b.py"] == b"VALUE = 2\n"
    assert shared["pkg/a.py"] is clean["pkg/a.py"]
    assert alone["pkg/a.py"] is not clean["pkg/a.py"]


def test_the_stages_jobs_hold_the_target_once_not_once_per_case() -> None:
    """Every job of the demo corpus made at once (as a stage makes them, before any runs): what
    they keep is far less than one copy of its target per case."""
    corpus = load_corpus(DEMO)
    ids = sorted(c.case_id for c in corpus.cases)
    size = {
        t.name: sum(len(b) for b in read_tree(t.path).values())
        for t in (corpus.target_of(c) for c in corpus.cases)
    }
    copies = sum(size[corpus.target_of(c).name] for c in corpus.cases)  # one target per case
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        jobs, failed = make_jobs(corpus, ids, corpus.config.agents[:2], {}, SandboxSettings())
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert not failed and len(ids) >= 10 and len(jobs) == 2 * len(ids)
    assert kept < copies / 3, (kept, copies)
