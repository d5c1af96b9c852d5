"""What defines a run, recorded with its first event and compared on a resume
(docs/architecture.md#a-run-id-means-one-set-of-inputs).

Giving an existing run id resumes that run: finished stages are restored and
the rest run, and every observation and verdict joins the ones stored. That
is sound only when the inputs are the ones the run started with; a changed
corpus, agent, report, judge, setting or configuration would mix two
evaluations under one id. So a run records what defines it
(:func:`run_inputs`) with its first event, and a later start of the same id
with other inputs is refused (:func:`check_same_inputs`) before anything is
stored. ``flows/_prepare.py`` loads what a run is given and calls these.
"""

from __future__ import annotations

from typing import Any

from bughunt.errors import InputError
from bughunt.hashing import hash_json, sha256_bytes
from bughunt.models import RunInfo, RunKind
from corpus import TREE_EXCLUDE, Corpus, hash_cache_at
from flows._config import UNRECORDED, RunConfig
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
        "judge_cache_ttl",
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


def corpus_content(corpus: Corpus, hash_cache: str | None) -> str:
    """The hash of the whole corpus folder (cases, target, agents, their recorded reports and
    scripts), read through the stat cache at ``hash_cache``."""
    with hash_cache_at(hash_cache) as cache:
        return cache.hash_tree(corpus.root, exclude=TREE_EXCLUDE)


def run_inputs(
    params: RunParams,
    kind: RunKind,
    corpus_hash: str,
    judges: list[JudgeConfig],
    config: RunConfig,
    pr_diff: bytes | None,
) -> dict[str, Any]:
    """What defines a run: its kind and settings, the project's configuration it runs with
    (:meth:`RunConfig.recorded`), and hashes of its corpus folder (:func:`corpus_content`),
    judges and diff."""
    return {
        "kind": kind.value,
        **params.model_dump(mode="json", exclude=set(OPERATIONAL)),
        "corpus_content": corpus_hash,
        "judges": hash_json([j.model_dump(mode="json") for j in judges]),
        **config.recorded(),
        "pr_diff": sha256_bytes(pr_diff) if pr_diff is not None else None,
    }


def _show(value: Any) -> str:
    text = str(value)
    return text[:12] if isinstance(value, str) and len(text) == 64 else text


_NO_DEFAULT = object()


def _default(key: str) -> Any:
    """A run parameter's or configuration's default, as JSON: what a run recorded before the
    parameter (or the configuration's entry) existed had.

    A run started by an older bughunt did not record a parameter added since;
    it ran with that parameter's default, so resuming it with the default is
    resuming it with the same inputs.
    """
    if key in UNRECORDED:
        return UNRECORDED[key]
    field = RunParams.model_fields.get(key)
    if field is None or field.is_required():
        return _NO_DEFAULT
    value = field.get_default(call_default_factory=True)
    return value.value if hasattr(value, "value") else value


def recorded_inputs(store: Ledger, run_id: str) -> dict[str, Any] | None:
    """What ``run_id`` recorded as its inputs when it started; ``None`` for a new run id (or one
    recorded before runs recorded their inputs)."""
    if store.writable_version() == 0:
        return None
    for event in store.read(RunInfo, "WHERE run_id = ? ORDER BY recorded_at", [run_id]):
        recorded = event.parameters.get(INPUTS_KEY)
        if isinstance(recorded, dict):
            return recorded
    return None


def with_sharding(
    store: Ledger, run_id: str, params: RunParams, size: int | None, tail: bool
) -> RunParams:
    """``params`` with the shard size and tail it does not give filled in: what the run recorded
    if it started before (a resume must cut the same shards, or its finished ones would not be
    found; ``None``, one even cut, for what a run recorded before it could say), else ``size``
    and ``tail``, the runner's defaults. The recorded inputs are read once, only when needed."""
    missing = [key for key in ("shard_size", "shard_tail") if getattr(params, key) is None]
    if not missing:
        return params
    earlier = recorded_inputs(store, run_id)
    if earlier is None:
        defaults: dict[str, Any] = {"shard_size": size, "shard_tail": tail}
        return params.model_copy(update={key: defaults[key] for key in missing})
    recorded_size, recorded_tail = earlier.get("shard_size"), earlier.get("shard_tail")
    resumed: dict[str, Any] = {
        "shard_size": recorded_size if type(recorded_size) is int else None,
        "shard_tail": recorded_tail if isinstance(recorded_tail, bool) else None,
    }
    return params.model_copy(update={key: resumed[key] for key in missing})


def check_same_inputs(store: Ledger, run_id: str, inputs: dict[str, Any]) -> None:
    """Refuse to resume ``run_id`` with inputs other than those it recorded.

    Raises :class:`InputError` naming each input that differs (old → new).
    A new run id, or a run recorded before its inputs were (which has none
    to compare), passes.
    """
    if store.writable_version() == 0:  # a new ledger: no run to compare with
        return
    for event in store.read(RunInfo, "WHERE run_id = ?", [run_id]):
        recorded = event.parameters.get(INPUTS_KEY)
        if not isinstance(recorded, dict) or recorded == inputs:
            continue
        changed = [
            f"{key}: {_show(recorded.get(key))} → {_show(inputs.get(key))}"
            for key in sorted({*recorded, *inputs})
            if recorded.get(key, _default(key)) != inputs.get(key, _default(key))
        ]
        if not changed:
            continue
        raise InputError(
            f"run {run_id} was started with other inputs ({'; '.join(changed)}); "
            "resume it with the same inputs, or give a new --run-id (nothing was run)",
            field="run_id",
        )
