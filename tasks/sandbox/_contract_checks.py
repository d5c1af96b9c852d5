"""The corpus contract as a stage run checks it: each target's suite in its own image, on the
run's executors; checks known from earlier runs are reused (docs/sandbox.md#the-corpus-contract).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bughunt.models import ContractCheck, ContractStatus
from corpus import Corpus
from tasks.sandbox._contract import SuiteRuns, check_contract
from tasks.sandbox._settings import SandboxSettings
from tasks.sandbox._stage_engine import StageEngine
from tasks.sandbox.engine import RunImages, pool_size


def contract_checks(
    corpus: Corpus,
    case_ids: Sequence[str],
    case_hashes: Mapping[str, str],
    *,
    engine: StageEngine,
    run_id: str,
    settings: SandboxSettings,
    known: Mapping[str, ContractCheck],
) -> tuple[list[ContractCheck], dict[str, str], dict[str, ContractCheck]]:
    """New contract checks (of cases whose hash ``known`` lacks), the reason per case that
    breaks the contract, and every case's check (new or known); nothing when the run does not
    check the contract."""
    if not settings.check_contract:
        return [], {}, {}
    rewrites = settings.rewrite_repeats > 0

    def reusable(check: ContractCheck | None) -> bool:
        # A run that rewrites needs the level a check without rewrites did not look for.
        return check is not None and not (
            rewrites and check.status is ContractStatus.OK and check.rewrite_level is None
        )

    todo = [c for c in case_ids if not reusable(known.get(case_hashes.get(c) or "\0"))]
    new = checks_in_images(
        corpus, todo, case_hashes, engine=engine, settings=settings, recorded_as=run_id
    )
    by_case = {c.case_id: c for c in new}
    for case_id in case_ids:
        cached = known.get(case_hashes.get(case_id, ""))
        if case_id not in by_case and cached is not None and reusable(cached):
            by_case[case_id] = cached
    broken = {
        case_id: f"the case breaks the corpus contract: {check.reason}"
        for case_id, check in by_case.items()
        if check.status is ContractStatus.BROKEN
    }
    return [c for c in new if c.case_hash], broken, by_case


def checks_in_images(
    corpus: Corpus,
    case_ids: Sequence[str],
    case_hashes: Mapping[str, str],
    *,
    engine: StageEngine,
    settings: SandboxSettings,
    recorded_as: str | None,
) -> list[ContractCheck]:
    """The contract checks of ``case_ids``, each target's suite on its executor of ``engine``;
    each check names ``recorded_as`` (a run's id; None for ``bughunt corpus check``). The
    rewrite levels are looked for by ``corpus check`` and by a run that rewrites."""
    return check_contract(
        corpus,
        case_ids,
        case_hashes,
        executor={name: runner for name, (runner, _id) in engine.executors.items()},
        runs=SuiteRuns(
            timeout_s=settings.suite_timeout_s,
            workers=pool_size(settings.workers),
            run_id=recorded_as,
            levels=recorded_as is None or settings.rewrite_repeats > 0,
        ),
    )


def unbuilt_targets(corpus: Corpus, case_ids: Sequence[str], images: RunImages) -> dict[str, str]:
    """The reason per case whose target's environment could not be built."""
    wanted = set(case_ids)
    return {
        case.case_id: f"the environment of target {name} could not be built: {reason}"
        for name, reason in images.failed.items()
        for case in corpus.cases_of(name)
        if case.case_id in wanted
    }
