"""The sandbox stage's entry point: its inputs and how its result is kept."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any

from pydantic import Field

from bughunt.errors import TerminalError
from bughunt.hashing import hash_tree
from bughunt.models import AgentVersion, ContractCheck, Observation, Row
from corpus import TREE_EXCLUDE, Corpus
from ledger import Ledger, StageInputs, StageRecord, arrow_to_rows
from tasks.classify import ClassifyResult
from tasks.hash_corpus import HashResult
from tasks.sandbox._result import SandboxResult
from tasks.sandbox._settings import SandboxSettings
from tasks.sandbox._stage import SandboxCases, run_sandbox


class SandboxInputs(StageInputs):
    """The corpus, the cases the plan selected with their hashes, and the two agents."""

    corpus: Corpus
    """The loaded corpus."""
    classify: ClassifyResult
    """The classify stage's result: the planned cases."""
    hashed: HashResult
    """The hash-corpus stage's result: each case's hash."""
    agents: list[AgentVersion]
    """The agents whose reports are run (baseline, candidate)."""
    case_ids: list[str] | None = None
    """The cases of this batch or shard; ``None``: every planned case."""
    known_checks: dict[str, ContractCheck] = Field(exclude=True)
    """Contract checks of earlier runs by case hash, read by the flow before the shards run
    (``known_checks``): a shard reads no ledger while the flow writes others'."""
    corpus_content: str | None = Field(default=None, exclude=True)
    """The corpus folder's content hash as the run recorded it when it started; a stage that
    finds other content at the corpus's path (a worker with another checkout, a corpus changed
    during the run) stops before running anything. ``None``: not checked."""


class CorpusMismatch(TerminalError):
    """The corpus a stage reads is not the one its run was started on."""


_VERIFIED: set[tuple[str, str]] = set()
"""(corpus folder, content hash) pairs this process has found to match: the whole folder is
read once per process and run content, not once per shard (a shard of 5 cases of a corpus of
10,000 would otherwise hash all 10,000)."""
_VERIFIED_LOCK = threading.Lock()


def check_corpus_content(corpus: Corpus, expected: str) -> None:
    """Raise :class:`CorpusMismatch`, naming the folder and this host, unless the corpus
    folder's content here hashes to ``expected`` (the same hash a run's inputs record).

    Checked once per process for each (folder, hash): a worker verifies the first shard it
    gets of a run's corpus, and trusts the folder for the shards after it.
    """
    key = (str(corpus.root), expected)
    with _VERIFIED_LOCK:
        if key in _VERIFIED:
            return
    found = hash_tree(corpus.root, exclude=TREE_EXCLUDE)
    if found == expected:
        with _VERIFIED_LOCK:
            _VERIFIED.add(key)
        return
    raise CorpusMismatch(
        f"the corpus here (host {socket.gethostname()}) is not the one the run started "
        f"on: its content hashes to {found[:12]}, the run's to {expected[:12]}; give every "
        "worker the flow host's checkout of the corpus at the same path (nothing was run)",
        file=str(corpus.root),
    )


def run(
    inputs: SandboxInputs,
    settings: SandboxSettings,
    progress: Callable[[int, int], None] | None = None,
) -> SandboxResult:
    """Every planned case × agent in hardened containers (earlier contract checks reused).

    ``progress(done, total)`` is told after each pair. A corpus whose content is not
    ``inputs.corpus_content`` raises :class:`CorpusMismatch` first.
    """
    if inputs.corpus_content is not None:
        check_corpus_content(inputs.corpus, inputs.corpus_content)
    return run_sandbox(
        inputs.corpus,
        cases=SandboxCases(
            ids=inputs.classify.planned_case_ids if inputs.case_ids is None else inputs.case_ids,
            hashes=inputs.hashed.hashes(),
            known_checks=inputs.known_checks,
        ),
        agents=inputs.agents,
        run_id=inputs.run_id,
        settings=settings,
        progress=progress,
    )


def _rows(_inputs: SandboxInputs, result: SandboxResult) -> list[Row]:
    runs = [p.agent_run for p in result.pairs if p.agent_run is not None]
    return [*result.observations(), *result.checks, *runs]


def _restore(payload: dict[str, Any], store: Ledger, run_id: str) -> dict[str, Any]:
    """Each pair's observations, read back from ``observations`` (in the order written).

    Only the payload's own cases are read: a run's shards are restored one by one, and
    reading the whole run's observations for each would make a resume quadratic.
    """
    cases = sorted({p["case_id"] for p in payload["pairs"]})
    if not cases:
        return {"pairs": []}
    table = store.query_arrow(
        "SELECT * FROM observations WHERE run_id = ? AND source = 'sandbox' "
        "AND list_contains(?, case_id) ORDER BY rowid",
        [run_id, cases],
    )
    by_pair: dict[tuple[str | None, str | None, int], list[dict[str, Any]]] = {}
    for obs in arrow_to_rows(Observation, table):
        by_pair.setdefault((obs.case_id, obs.agent_version, obs.sample or 0), []).append(
            obs.model_dump(mode="json", by_alias=True)
        )
    pairs = [
        {
            **p,
            "observations": by_pair.get((p["case_id"], p["agent_version"], p.get("sample", 0)), []),
        }
        for p in payload["pairs"]
    ]
    return {"pairs": pairs}


def without_outputs(result: SandboxResult) -> SandboxResult:
    """``result`` with each execution's captured output left in the ledger.

    Outputs are the stage's bulk (up to twice the output cap per execution, and
    a reproduction test decides how much it prints); no later stage reads them,
    and the report reads them back from ``observations`` (``write_outputs``). So
    a run holds one shard's outputs at a time, never every shard's.
    """
    if not any(o.output is not None for p in result.pairs for o in p.observations):
        return result
    return result.model_copy(
        update={
            "pairs": [
                p.model_copy(
                    update={
                        "observations": [
                            o if o.output is None else o.model_copy(update={"output": None})
                            for o in p.observations
                        ]
                    }
                )
                for p in result.pairs
            ]
        }
    )


RECORD: StageRecord[SandboxInputs, SandboxResult] = StageRecord(
    "sandbox",
    SandboxResult,
    rows=_rows,
    payload_exclude={"pairs": {"__all__": {"observations"}}},
    restore_rows=_restore,
    in_memory=without_outputs,
)
"""Observations, contract checks and agent runs go to their tables; the rest is the payload.
Once written, the run keeps the result without the executions' outputs."""
