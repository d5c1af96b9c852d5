"""What a run starts from, checked before anything runs (docs/architecture.md#a-run-id-means-one-set-of-inputs).

:func:`prepare` loads and checks everything a run is given (the ledger file,
the corpus, the agents, the judges, the gate, the run id's earlier inputs)
without Prefect and without writing, so the CLI refuses bad input before
Prefect's server starts and the flow starts from the same checks.

Giving an existing run id resumes that run: finished stages are restored and
the rest run, and every observation and verdict joins the ones stored. That
is sound only when the inputs are the ones the run started with; a changed
corpus, agent, report, judge or setting would mix two evaluations under one
id. So a run records what defines it (:func:`run_inputs`) with its first
event, and a later start of the same id with other inputs is refused
(:func:`check_same_inputs`) before anything is stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bughunt.errors import InputError
from bughunt.hashing import hash_json, sha256_bytes
from bughunt.models import AgentVersion, PipelineStage, RunInfo, RunKind
from corpus import (
    CACHE_FILE,
    TREE_EXCLUDE,
    Corpus,
    agent_secrets,
    hash_cache_at,
    load_corpus,
    model_key,
)
from flows._runner import check_runner_env
from flows.params import RunParams, new_run_id, run_seed
from judging.judges import JudgeConfig, build_judge, load_judges
from ledger import Ledger, runs_folder
from tasks.classify import CaseScope, plan_for_diff
from tasks.gate import GateThresholds, load_gate_thresholds
from tasks.sandbox import corpus_images

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


_NO_DEFAULT = object()


def _default(key: str) -> Any:
    """A run parameter's default, as JSON: what a run recorded before the parameter existed had.

    A run started by an older bughunt did not record a parameter added since;
    it ran with that parameter's default, so resuming it with the default is
    resuming it with the same inputs.
    """
    field = RunParams.model_fields.get(key)
    if field is None or field.is_required():
        return _NO_DEFAULT
    value = field.get_default(call_default_factory=True)
    return value.value if hasattr(value, "value") else value


def recorded_inputs(store: Ledger, run_id: str) -> dict[str, Any] | None:
    """What ``run_id`` recorded as its inputs when it started; ``None`` for a new run id (or one
    recorded before runs recorded their inputs)."""
    if store.check(writing=True) == 0:
        return None
    for event in store.read(RunInfo, "WHERE run_id = ? ORDER BY recorded_at", [run_id]):
        recorded = event.parameters.get(INPUTS_KEY)
        if isinstance(recorded, dict):
            return recorded
    return None


def _sharding(
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
    if store.check(writing=True) == 0:  # a new ledger: no run to compare with
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


@dataclass(frozen=True, slots=True)
class Prepared:
    """A run's checked inputs, ready for its first stage."""

    store: Ledger
    run_id: str
    params: RunParams
    """The parameters with the seed filled in (drawn from the run id when not given)."""
    corpus: Corpus
    baseline: AgentVersion
    candidate: AgentVersion
    judges: list[JudgeConfig]
    gate: GateThresholds
    hash_cache: str
    """The corpus hash cache file, beside the ledger (a stat identity means something only here)."""
    inputs: dict[str, Any]
    """What defines the run (:func:`run_inputs`), recorded with its first event."""


def _agent(corpus: Corpus, name: str | None, role: str) -> AgentVersion:
    pairing = corpus.config.pairing
    wanted = name or (pairing.baseline if role == "baseline" else pairing.candidate)
    for a in corpus.config.agents:
        if a.name == wanted:
            return a
    known = ", ".join(a.name for a in corpus.config.agents)
    raise InputError(
        f"no agent named {wanted!r} for the {role}; the corpus has: {known}",
        file=str(corpus.config_file),
    )


def _judges(params: RunParams) -> list[JudgeConfig]:
    """The judge's (or jury's) configurations; fails now on a missing key or bad config."""
    configs = load_judges(Path(params.judges_config) if params.judges_config else None)
    resolved = configs.resolve(params.judge)
    for config in resolved:
        build_judge(config)
    return list(resolved)


def prepare(
    params: RunParams,
    kind: RunKind,
    pr_diff: bytes | None = None,
    *,
    shard_default: int | None = None,
    shard_tail_default: bool = False,
) -> Prepared:
    """Load and check what the run is given; nothing is written, nothing runs.

    Raises a :class:`~bughunt.errors.BughuntError` naming the file, line or
    field for a ledger that is not a whole ledger, a report folder that is a file, a bad corpus, an unknown
    agent or judge, an agent's secret missing from the environment, a judge without its key, a bad gate table, a run id
    started before with other inputs, or task-runner settings it cannot run with (a Dask scheduler without a Prefect
    server).

    ``shard_default`` is the shard size a new run takes when none is given (the
    flow's, from its task runner); ``shard_tail_default`` whether it shrinks its last shards
    when it does not say. A run started before keeps the size and the tail it recorded.
    """
    check_runner_env()
    judges = _judges(params)  # first: a mistyped judge is answered before the corpus loads
    store = Ledger(params.ledger)
    store.check(writing=True)
    if params.out is not None and Path(params.out).exists() and not Path(params.out).is_dir():
        raise InputError("the report folder is a file", file=params.out, field="out")
    run_id = params.run_id or new_run_id(kind.value)
    if params.seed is None:  # recorded with the run's parameters, so a resume reuses it
        params = params.model_copy(update={"seed": run_seed(run_id)})
    # recorded too: a resume cuts the same shards
    params = _sharding(store, run_id, params, shard_default, shard_tail_default)
    corpus = load_corpus(params.corpus)
    baseline = _agent(corpus, params.baseline, "baseline")
    candidate = _agent(corpus, params.candidate, "candidate")
    for agent in (baseline, candidate):  # a missing secret stops the run before any container
        agent_secrets(agent, corpus=corpus)
        model_key(agent, corpus=corpus)
    # Each environment's recipe (package names, a hashed requirements file): no engine, no network.
    # A bad agent environment stops the run; a bad target's costs its cases (the sandbox stage
    # reports them unscored with the reason).
    corpus_images(corpus, [baseline, candidate], target_errors={})
    gate = load_gate_thresholds()
    home = runs_folder(store.path)  # the cache is saved only into a folder that exists
    home.mkdir(exist_ok=True)
    hash_cache = str(home / CACHE_FILE)
    inputs = run_inputs(params, kind, corpus, judges, gate, pr_diff, hash_cache)
    check_same_inputs(store, run_id, inputs)
    return Prepared(
        store, run_id, params, corpus, baseline, candidate, judges, gate, hash_cache, inputs
    )


def evaluates_nothing(run: Prepared, pr_diff: bytes) -> bool:
    """Whether a PR's plan runs neither the sandbox nor the score stage (a docs-only change).

    The classify stage makes the same plan from the same diff, so such a run
    needs no flow run and no Prefect server: ``bughunt run pr`` then runs it
    in this process (``run_pipeline(..., orchestrated=False)``). Raises
    :class:`InputError` for a diff that cannot be parsed, as the stage would.
    """
    plan = plan_for_diff(run.corpus, pr_diff)
    evaluating = {PipelineStage.SANDBOX, PipelineStage.SCORE} & set(plan.stages)
    return plan.scope is CaseScope.NONE or not evaluating
