"""What a run starts from, loaded and checked once, before anything runs.

:func:`prepare` loads and checks everything a run is given (the ledger file,
the corpus, the agents, the judges, the project's configuration, the PR
diff, the run id's earlier inputs) without Prefect and without writing, so
the CLI refuses bad input before Prefect's server starts. The CLI then hands
the prepared run to the flow it starts (:func:`handed_over`), which does not
load it again; a flow run started any other way (a deployment) prepares
itself. Either way the flow settles the shard size its task runner calls for
(:func:`for_runner`) without loading anything again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bughunt.errors import InputError
from bughunt.models import AgentVersion, PipelineStage, RunKind
from corpus import CACHE_FILE, Corpus, agent_secrets, load_corpus, model_key
from flows._config import RunConfig, run_config
from flows._inputs import (
    OPERATIONAL,
    check_same_inputs,
    corpus_content,
    run_inputs,
    with_sharding,
)
from flows._runner import check_runner_env
from flows.params import RunParams, new_run_id, run_seed
from judging.judges import JudgeConfig, build_judge, load_judges
from ledger import Ledger, runs_folder
from tasks.classify import CaseScope, plan_for_changed
from tasks.classify.patch import changed_paths
from tasks.sandbox.engine import corpus_images


@dataclass(frozen=True, slots=True)
class Prepared:
    """A run's checked inputs, ready for its first stage."""

    store: Ledger
    run_id: str
    kind: RunKind
    requested: RunParams
    """The parameters as given (what a flow run handed this run is started with)."""
    params: RunParams
    """The parameters with the seed filled in (drawn from the run id when not given), and the
    shard size and tail (:func:`~flows._inputs.with_sharding`)."""
    corpus: Corpus
    baseline: AgentVersion
    candidate: AgentVersion
    judges: list[JudgeConfig]
    config: RunConfig
    """The project's configuration the run runs with (gate, flake thresholds, impact globs)."""
    hash_cache: str
    """The corpus hash cache file, beside the ledger (a stat identity means something only here)."""
    changed: list[str] | None
    """The paths a PR's diff changes, parsed once here (``None``: no PR diff)."""
    diff_file: str | None
    """Where the PR's diff was read from (``None``: no PR diff)."""
    inputs: dict[str, Any]
    """What defines the run (:func:`~flows._inputs.run_inputs`), recorded with its first event."""


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


def _seeded(params: RunParams, run_id: str) -> RunParams:
    """``params`` with the seed drawn from the run id when not given (recorded with the run's
    parameters, so a resume reuses it)."""
    if params.seed is not None:
        return params
    return params.model_copy(update={"seed": run_seed(run_id)})


def prepare(
    params: RunParams,
    kind: RunKind,
    pr_diff: bytes | None = None,
    *,
    diff_file: str = "PR diff",
    shard_default: int | None = None,
    shard_tail_default: bool = False,
) -> Prepared:
    """Load and check what the run is given; nothing is written, nothing runs.

    Raises a :class:`~bughunt.errors.BughuntError` naming the file, line or
    field for a PR diff that is not a diff (named as ``diff_file``), a ledger
    that is not a whole ledger, a report folder that is a file, a bad corpus,
    an unknown agent or judge, an agent's secret missing from the environment,
    a judge without its key, a bad gate, flakes or (for a PR) impact table, a
    run id started before with other inputs, or task-runner settings it cannot
    run with (a Dask scheduler without a Prefect server).

    ``shard_default`` is the shard size a new run takes when none is given (the
    flow's, from its task runner); ``shard_tail_default`` whether it shrinks its last shards
    when it does not say. A run started before keeps the size and the tail it recorded.
    """
    # first: not a diff at all is bad input, before anything else is looked at
    changed = changed_paths(pr_diff, file=diff_file) if pr_diff is not None else None
    check_runner_env()
    judges = _judges(params)  # first: a mistyped judge is answered before the corpus loads
    store = Ledger(params.ledger)
    store.check_writable()
    if params.out is not None and Path(params.out).exists() and not Path(params.out).is_dir():
        raise InputError("the report folder is a file", file=params.out, field="out")
    run_id = params.run_id or new_run_id(kind.value)
    # recorded too: a resume cuts the same shards
    seeded = _seeded(params, run_id)
    sharded = with_sharding(store, run_id, seeded, shard_default, shard_tail_default)
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
    config = run_config(corpus, pr=pr_diff is not None)
    home = runs_folder(store.path)  # the cache is saved only into a folder that exists
    home.mkdir(exist_ok=True)
    hash_cache = str(home / CACHE_FILE)
    content = corpus_content(corpus, hash_cache)
    inputs = run_inputs(sharded, kind, content, judges, config, pr_diff)
    check_same_inputs(store, run_id, inputs)
    return Prepared(
        store=store,
        run_id=run_id,
        kind=kind,
        requested=params,
        params=sharded,
        corpus=corpus,
        baseline=baseline,
        candidate=candidate,
        judges=judges,
        config=config,
        hash_cache=hash_cache,
        changed=changed,
        diff_file=diff_file if pr_diff is not None else None,
        inputs=inputs,
    )


def for_runner(run: Prepared, shard_default: int | None, shard_tail_default: bool) -> Prepared:
    """``run`` with the shard size and tail a new run takes on the flow's task runner when it
    gives none (see :func:`prepare`); nothing is loaded again.

    Raises :class:`InputError` when the run id was started before with other inputs.
    """
    seeded = _seeded(run.requested, run.run_id)
    params = with_sharding(run.store, run.run_id, seeded, shard_default, shard_tail_default)
    if params == run.params:
        return run
    inputs = {**run.inputs, **params.model_dump(mode="json", exclude=set(OPERATIONAL))}
    check_same_inputs(run.store, run.run_id, inputs)
    return dataclasses.replace(run, params=params, inputs=inputs)


def evaluates_nothing(run: Prepared) -> bool:
    """Whether a PR's plan runs neither the sandbox nor the score stage (a docs-only change).

    The classify stage makes the same plan from the same changed paths and
    impact globs, so such a run needs no flow run and no Prefect server:
    ``bughunt run pr`` then runs it in this process
    (``run_pipeline(..., orchestrated=False)``). A run without a PR diff
    evaluates every case.
    """
    if run.changed is None:
        return False
    plan = plan_for_changed(run.corpus, run.changed, impact=run.config.impact)
    evaluating = {PipelineStage.SANDBOX, PipelineStage.SCORE} & set(plan.stages)
    return plan.scope is CaseScope.NONE or not evaluating


_HANDED: list[Prepared] = []
"""Runs the CLI prepared for the flow run it is starting in this process. A flow's parameters
are what Prefect records and shows (the run's options); a loaded corpus and an open ledger
are not parameters, so they reach the flow here."""


@contextmanager
def handed_over(run: Prepared) -> Iterator[None]:
    """Within the block, a flow run started with ``run``'s parameters, kind and diff takes
    ``run`` (:func:`handed`) instead of preparing it again."""
    _HANDED.append(run)
    try:
        yield
    finally:
        _HANDED.remove(run)


def handed(params: RunParams, kind: RunKind, diff_file: str | None = None) -> Prepared | None:
    """The run handed over for these parameters, kind and diff file (:func:`handed_over`);
    ``None`` when none was (the flow prepares it)."""
    for run in _HANDED:
        if run.requested == params and run.kind is kind and run.diff_file == diff_file:
            return run
    return None
