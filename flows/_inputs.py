"""A run id means one set of inputs (docs/operations.md#resuming-a-run).

Giving an existing run id resumes that run: finished stages are restored and
the rest run, and every observation and verdict joins the ones stored. That
is sound only when the inputs are the ones the run started with; a changed
corpus, agent, report, judge or setting would mix two evaluations under one
id. So a run records what defines it (:func:`run_inputs`) with its first
event, and a later start of the same id with other inputs is refused
(:func:`check_same_inputs`) before anything is stored.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from bughunt.errors import InputError
from bughunt.hashing import hash_json, sha256_bytes
from bughunt.models import RunInfo, RunKind
from corpus import TREE_EXCLUDE, Corpus, hash_cache_at
from flows.params import RunParams
from judging.judges import JudgeConfig
from ledger import Ledger

OPERATIONAL: frozenset[str] = frozenset(
    {
        "corpus",  # its path: the content is compared instead
        "ledger",
        "out",
        "run_id",
        "workers",
        "refresh_judge",
        "judges_config",  # its path: the judges it defines are compared instead
        "judge_deadline_s",
        "max_in_flight",
        "max_judge_calls",
        "max_sandbox_seconds",
    }
)
"""Run parameters a resumed run may change: where things are and how fast or far it goes,
never what is evaluated or how it is decided."""

INPUTS_KEY = "inputs"
"""Key of the inputs in the parameters a run's events record."""


def run_inputs(
    params: RunParams,
    kind: RunKind,
    corpus: Corpus,
    judges: list[JudgeConfig],
    gate: BaseModel,
    pr_diff: bytes | None,
    hash_cache: str | None,
) -> dict[str, Any]:
    """What defines a run: its kind and settings, and hashes of its corpus folder, judges and diff.

    The corpus folder is hashed whole (cases, target, agents, their recorded
    reports and scripts), through the stat cache at ``hash_cache``.
    """
    with hash_cache_at(hash_cache) as cache:
        corpus_hash = cache.hash_tree(corpus.root, exclude=TREE_EXCLUDE)
    return {
        "kind": kind.value,
        **params.model_dump(mode="json", exclude=set(OPERATIONAL)),
        "corpus_content": corpus_hash,
        "judges": hash_json([j.model_dump(mode="json") for j in judges]),
        "gate": gate.model_dump(mode="json"),
        "pr_diff": sha256_bytes(pr_diff) if pr_diff is not None else None,
    }


def _show(value: Any) -> str:
    text = str(value)
    return text[:12] if isinstance(value, str) and len(text) == 64 else text


def check_same_inputs(store: Ledger, run_id: str, inputs: dict[str, Any]) -> None:
    """Refuse to resume ``run_id`` with inputs other than those it recorded.

    Raises :class:`InputError` naming each input that differs (old → new).
    A new run id, or a run recorded before its inputs were (which has none
    to compare), passes.
    """
    if not store.path.exists():
        return
    for event in store.read(RunInfo, "WHERE run_id = ?", [run_id]):
        recorded = event.parameters.get(INPUTS_KEY)
        if not isinstance(recorded, dict) or recorded == inputs:
            continue
        changed = [
            f"{key}: {_show(recorded.get(key))} → {_show(inputs.get(key))}"
            for key in sorted({*recorded, *inputs})
            if recorded.get(key) != inputs.get(key)
        ]
        raise InputError(
            f"run {run_id} was started with other inputs ({'; '.join(changed)}); "
            "resume it with the same inputs, or give a new --run-id (nothing was run)",
            field="run_id",
        )
