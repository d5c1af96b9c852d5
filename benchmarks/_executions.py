"""The sandbox stage's executions on the demo corpus, replayed elsewhere at the same parallelism.

The sandbox benchmarks compare the stage with another way of running exactly
the same executions (one ``docker run --rm`` each, the bare host). Both need
the same things: the stage run once to learn its executions, the workspace of
each one (the tree it ran on, as shown or rewritten, with the test at its
root), and the stage timed again on the same pairs. A pair whose test hit its
deadline is left out of the timed runs: its deadline waits are the same
everywhere and only dilute a ratio.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bughunt.models import AgentMode, AgentVersion, Status, Tree
from corpus import Corpus, load_corpus
from tasks.sandbox import PairResult, SandboxCases, SandboxResult, SandboxSettings, run_sandbox
from tasks.sandbox.reproduction import TEST_FILE, case_trees, rewrite_plan
from tasks.sandbox.trees import Files, apply_patch, read_tree

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "corpus" / "demo"


@dataclass(frozen=True)
class Execution:
    """One execution the stage ran: its workspace, its image, what it gave."""

    files: Files
    """The tree it ran on (as shown or rewritten) with the test at its root."""
    image_id: str
    """The image it ran in (a target with an environment has its own)."""
    status: Status
    """The stage's status of it."""


@dataclass(frozen=True)
class Executions:
    """What the stage ran on the demo corpus, and how to time it again."""

    corpus: Corpus
    agents: list[AgentVersion]
    settings: SandboxSettings
    first: SandboxResult
    """The discovery run (every pair, the hanging ones included)."""
    first_s: float
    kept: list[PairResult]
    """Pairs with executions and no deadline hit: the timed ones."""
    runs: list[Execution]
    """Every execution of the kept pairs."""

    def time_stage(self, run_id: str) -> float:
        """Wall seconds of the stage on the kept pairs (one call per agent: its own cases)."""
        start = time.perf_counter()
        for agent in self.agents:
            ids = [p.case_id for p in self.kept if p.agent_version == agent.name]
            if ids:
                run_sandbox(
                    self.corpus,
                    cases=SandboxCases(ids=ids, hashes={}),
                    agents=[agent],
                    run_id=run_id,
                    settings=self.settings,
                )
        return time.perf_counter() - start


def hangs(pair: PairResult) -> bool:
    """Whether any execution of the pair was stopped at its deadline."""
    return any(o.status is Status.TIMEOUT for o in pair.observations)


def demo_executions(repeats: int, workers: int, cases: int | None = None) -> Executions:
    """Run the stage once on the demo corpus's replay agents (the first ``cases`` cases, or
    all) and collect every execution of the pairs that did not hang."""
    corpus = load_corpus(DEMO)
    agents = [a for a in corpus.config.agents if a.mode is AgentMode.REPLAY]
    # The contract check is its own cost (suite runs), not executions: left out everywhere.
    settings = SandboxSettings(repeats=repeats, workers=workers, check_contract=False)
    ids = sorted(c.case_id for c in corpus.cases)[:cases]
    start = time.perf_counter()
    first = run_sandbox(
        corpus,
        cases=SandboxCases(ids=ids, hashes={}),
        agents=agents,
        run_id="bench-stage",
        settings=settings,
    )
    first_s = time.perf_counter() - start
    kept = [p for p in first.pairs if p.report is not None and p.observations and not hangs(p)]
    return Executions(
        corpus, agents, settings, first, first_s, kept, _executions(corpus, first.seed, kept)
    )


def _executions(corpus: Corpus, seed: int, pairs: Sequence[PairResult]) -> list[Execution]:
    """Each execution, its workspace rebuilt with the stage's own tree functions and seed."""
    cleans = {t.name: read_tree(t.path) for t in corpus.targets}
    by_case = {c.case_id: c for c in corpus.cases}
    trees = {}
    for case_id in sorted({p.case_id for p in pairs}):
        case = by_case[case_id]
        target = corpus.target_of(case)
        buggy = apply_patch(target.path, case.patch, file=case_id)
        both = (buggy, cleans[target.name])
        plan = rewrite_plan(None, both, target)  # no contract check: the strongest level
        trees[case_id] = case_trees(*both, seed=seed, case_id=case_id, plan=plan)
    out = []
    for pair in pairs:
        assert pair.report is not None
        test = pair.report.repro_test.encode()
        t = trees[pair.case_id]
        for o in pair.observations:  # exactly the executions the stage ran
            shown = t.buggy if o.tree is Tree.BUGGY else t.clean
            rewritten = t.rewritten_buggy if o.tree is Tree.BUGGY else t.rewritten_clean
            files = rewritten if o.rewrite is not None and rewritten is not None else shown
            if "variant" in o.annotations:  # the tree as shown with its decoy's lines
                files = _with_decoy(shown, o.annotations["variant"])
            assert o.image_id is not None
            out.append(Execution({**files, TEST_FILE: test}, o.image_id, o.status))
    return out


def _with_decoy(files: Files, variant: dict[str, Any]) -> Files:
    """A variant's tree from its observation: its decoy's and its twin's lines replaced by the
    text recorded."""
    edits = [
        (variant["path"], line, text)
        for line, text in zip(variant["lines"], variant["text"], strict=True)
    ]
    edits += [tuple(edit) for edit in (variant.get("twin") or {}).get("lines", [])]
    out = dict(files)
    for path in {path for path, _line, _text in edits}:
        lines = out[path].splitlines(keepends=True)
        for where, line, text in edits:
            if where == path:
                lines[line - 1] = text.encode("utf-8")
        out[path] = b"".join(lines)
    return out
