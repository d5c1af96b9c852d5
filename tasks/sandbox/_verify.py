"""One pair or the corpus contract, checked now, exactly as the stage would: ``bughunt verify``
(a recorded report, or a command agent, on one case) and ``bughunt corpus check``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from bughunt.errors import InputError
from bughunt.models import AgentMode, AgentVersion, ContractCheck, ContractStatus
from bughunt.safeio import read_input
from corpus import Corpus, agent_secrets, model_key
from tasks.sandbox._agents import AGENT_OUTPUT_CAP, parse_report
from tasks.sandbox._contract_checks import checks_in_images, unbuilt_targets
from tasks.sandbox._jobs import make_jobs
from tasks.sandbox._pairs import AgentAccess, run_jobs
from tasks.sandbox._result import PairResult
from tasks.sandbox._settings import SandboxSettings
from tasks.sandbox._stage_engine import stage_engine


def verify_report(
    corpus: Corpus, case_id: str, report_file: Path, *, run_id: str, settings: SandboxSettings
) -> PairResult:
    """One recorded report against one case, exactly as the stage would run it.

    ``report_file`` is read as a replay agent's report; an unusable report
    is the pair's ``error`` with its reason, like in a run, found before the
    engine is asked for anything (no image is built for a report that cannot run).
    """
    agent = AgentVersion(
        name="verify", family="unknown", mode=AgentMode.REPLAY, reports=str(report_file.parent)
    )
    data = read_input(report_file, limit=4 * AGENT_OUTPUT_CAP, what="a bug report")
    report = parse_report(data, source=str(report_file), agent=agent)
    jobs, failed = make_jobs(corpus, [case_id], [agent], {}, settings)
    if failed:
        return failed[0]
    if isinstance(report, str):
        return PairResult.failed(
            jobs[0].key,
            f"no usable report: {report}",
            unusable_reason=report,
        )
    job = dataclasses.replace(jobs[0], report=report)
    with stage_engine(corpus, [], run_id=run_id, settings=settings) as engine:
        return run_jobs([job], engine, run_id=run_id, settings=settings)[0]


def verify_agent(
    corpus: Corpus, case_id: str, agent: AgentVersion, *, run_id: str, settings: SandboxSettings
) -> PairResult:
    """One command agent on one case, exactly as a run would: its environment image, secrets,
    gateway (with its key), then its report's reproduction test; the pair keeps its transcript.

    A missing secret or key raises :class:`~bughunt.errors.InputError` before anything runs.
    """
    if agent.mode is not AgentMode.COMMAND:
        raise InputError(
            f"agent {agent.name} is a replay agent: give its report with --report",
            field="agent",
        )
    access = AgentAccess(
        secrets={agent.name: agent_secrets(agent, corpus=corpus)},
        model_keys={agent.name: model_key(agent, corpus=corpus)},
    )
    jobs, failed = make_jobs(corpus, [case_id], [agent], {}, settings)
    if failed:
        return failed[0]
    with stage_engine(corpus, [agent], run_id=run_id, settings=settings) as engine:
        return run_jobs(jobs, engine, run_id=run_id, settings=settings, access=access)[0]


def check_corpus(
    corpus: Corpus, case_hashes: Mapping[str, str], *, run_id: str, settings: SandboxSettings
) -> list[ContractCheck]:
    """The corpus contract of every loaded case, checked now (``bughunt corpus check``), each
    target's in its own image; a case whose target's environment cannot be built is broken."""
    with stage_engine(corpus, [], run_id=run_id, settings=settings) as engine:
        unbuilt = unbuilt_targets(corpus, [c.case_id for c in corpus.cases], engine.images)
        todo = [c.case_id for c in corpus.cases if c.case_id not in unbuilt]
        checks = checks_in_images(
            corpus, todo, case_hashes, engine=engine, settings=settings, recorded_as=None
        )
    checks += [
        ContractCheck(
            case_hash=case_hashes.get(case_id, ""),
            case_id=case_id,
            corpus=corpus.name,
            status=ContractStatus.BROKEN,
            reason=reason,
        )
        for case_id, reason in unbuilt.items()
    ]
    return sorted(checks, key=lambda c: c.case_id)
