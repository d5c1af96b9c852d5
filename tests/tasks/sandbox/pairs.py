"""One agent on one case through the real sandbox stage: what several sandbox tests need."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from corpus import load_corpus
from tasks.sandbox import PairResult, SandboxCases, SandboxSettings, run_sandbox


def one_pair(root: Path, agent: str, case: str, *, run_id: str, **settings: Any) -> PairResult:
    """``agent`` of the corpus at ``root`` on ``case``, as a run's sandbox stage runs it."""
    corpus = load_corpus(root)
    chosen = next(a for a in corpus.config.agents if a.name == agent)
    result = run_sandbox(
        corpus,
        cases=SandboxCases(ids=[case], hashes={}),
        agents=[chosen],
        run_id=run_id,
        settings=SandboxSettings(**settings),
    )
    (pair,) = result.pairs
    return pair
