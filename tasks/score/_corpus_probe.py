"""Bias probes of a judge (or jury) on a corpus's recorded reports, outside any run.

What ``bughunt probe`` measures: the same probes a run makes (position and
verbosity on one judge; self-preference on a cross-family jury), on the
reports the corpus's replay agents recorded. A report's quality comes from
the latest reproduction outcome the ledger holds for it (read-only); the
calls and probe rows come back for the caller to write.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from bughunt.errors import InputError
from bughunt.models import AgentMode, BiasProbe, BugReport, JudgeCall, ReproOutcome
from corpus import Corpus
from judging.judges import Judge
from ledger import Ledger
from tasks.sandbox import recorded_report
from tasks.score._evidence import ReportEvidence, report_quality
from tasks.score._probe_stage import ProbeContext, probe_judge, probe_self_preference
from tasks.score._settings import ScoreSettings
from tasks.score.judge_cache import cache_cutoff, ledger_lookup


class CorpusProbeResult(BaseModel):
    """Every call the probes made (failures included) and the probe rows."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    calls: list[JudgeCall]
    """Every judge call, failures included (never counted in a probe)."""
    probes: list[BiasProbe]
    """One row per judge, probe and metric."""
    reports: int
    """Recorded reports the pairs were built from."""


def latest_outcomes(ledger: Ledger) -> dict[tuple[str, str], ReproOutcome]:
    """The latest reproduction outcome of each (case, agent) in the ledger (read-only)."""
    if not ledger.path.exists():
        return {}
    rows = ledger.query(
        "SELECT case_id, agent_version, arg_max(outcome, created_at) AS outcome "
        "FROM reproductions GROUP BY ALL"
    )
    return {(r["case_id"], r["agent_version"]): ReproOutcome(r["outcome"]) for r in rows}


def probe_corpus(
    corpus: Corpus,
    members: Sequence[Judge],
    *,
    run_id: str,
    settings: ScoreSettings,
    ledger: Ledger,
) -> CorpusProbeResult:
    """Probe ``members`` (one judge, or a jury) on the corpus's recorded reports.

    Raises :class:`InputError` naming the corpus when it has no recorded report.
    """
    known = latest_outcomes(ledger)
    reports: list[BugReport] = []
    quality: dict[tuple[str, str], float] = {}
    families: dict[str, str] = {}
    for agent in corpus.config.agents:
        if agent.mode is not AgentMode.REPLAY:
            continue
        families[agent.name] = agent.family
        for case in corpus.cases:
            got = recorded_report(agent, case.case_id)
            if isinstance(got, str):
                continue
            reports.append(got)
            outcome = known.get((case.case_id, agent.name))
            if outcome is not None:
                quality[(case.case_id, agent.name)] = report_quality(
                    ReportEvidence(
                        case_id=case.case_id,
                        agent_version=agent.name,
                        family=agent.family,
                        report=got,
                        outcome=outcome,
                    )
                )
    if not reports:
        raise InputError(
            "no recorded report: probes need replay agents' reports", file=str(corpus.config_file)
        )
    ctx = ProbeContext(
        families=families,
        quality=quality,
        run_id=run_id,
        settings=settings,
        cache=ledger_lookup(ledger, not_before=cache_cutoff(settings.cache_ttl_s)),
    )
    calls: list[JudgeCall] = []
    probes: list[BiasProbe] = []
    for member in members:
        c, p = probe_judge(member, reports, ctx)
        calls += c
        probes += p
    if len(members) > 1:
        c, p = probe_self_preference(members, reports, ctx)
        calls += c
        probes += p
    return CorpusProbeResult(calls=calls, probes=probes, reports=len(reports))
