"""Probe pairs from real report texts (for probing real judges on the corpus).

- position: a report vs a near-identical copy (whitespace and final
  punctuation normalised; identical when the report already is);
- verbosity: a report vs the same report padded with restated steps, a
  restated summary and an irrelevant log, to about twice the words — the same
  information, more text;
- cross-family: reports of the same case by agents of different families,
  for :func:`~judging.bias._probes.run_self_probe`.

Quality is unknown for these pairs (``None``): a simulated judge cannot
score them, a real judge does not need it. Choices are seeded.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence

import numpy as np

from bughunt.models import BugReport, ProbeKind
from judging.bias._pairsets import ProbeItem, ProbePair
from judging.bias._strategies import Side

_LOG_LINES = (
    "INFO  scheduler: heartbeat ok (queue depth 0)",
    "DEBUG cache: warmed 128 entries in 0.41 s",
    "INFO  http: GET /healthz 200 1.2 ms",
    "DEBUG gc: collected 312 objects, 0 uncollectable",
    "INFO  metrics: flushed 24 series to the local sink",
    "DEBUG config: using default locale settings",
    "INFO  worker: idle, waiting for the next job",
    "DEBUG pool: 4 of 8 connections in use",
)
_MAX_TEXT = 19_000  # below BugReport's 20,000-character limit on ``actual``


def report_words(report: BugReport) -> int:
    """Words the judge sees: every text field and the reproduction test (at least 1)."""
    parts = [report.title, report.summary, *report.steps, report.expected, report.actual]
    parts += [report.root_cause, report.repro_test]
    return max(1, sum(len(p.split()) for p in parts))


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]+", " ", text.strip())
    return text if not text or text[-1] in ".!?:`)" else text + "."


def neutral_variant(report: BugReport) -> BugReport:
    """A copy differing only in whitespace and final punctuation of its prose fields."""
    return report.model_copy(
        update={
            "summary": _tidy(report.summary),
            "steps": [_tidy(s) for s in report.steps],
            "expected": _tidy(report.expected),
            "actual": _tidy(report.actual),
        }
    )


def pad_report(report: BugReport, *, ratio: float = 2.0, seed: int = 0) -> BugReport:
    """The report padded with restatements and irrelevant log lines to ``ratio`` × its words.

    No new fact is added. Field limits are respected, so a very long report
    may end up shorter than asked; measure the result with :func:`report_words`.
    """
    rng = np.random.Generator(np.random.PCG64(seed))
    target = round(report_words(report) * ratio)
    steps = list(report.steps)
    steps += [f"To restate step {i}: {s}" for i, s in enumerate(report.steps, 1)][
        : 200 - len(steps)
    ]
    summary = report.summary
    if summary:
        summary = f"{summary}\n\nIn other words, as summarised above: {summary}"[:50_000]
    padded = report.model_copy(update={"steps": steps, "summary": summary})
    words = report_words(padded)
    header = "\n\nUnrelated service log captured during the run:"
    text = report.actual + header
    if words >= target or len(text) > _MAX_TEXT:
        return padded
    words += len(header.split())
    added = 0
    while words < target:
        stamp = f"12:{added // 60 % 60:02d}:{added % 60:02d}"
        line = f"\n{stamp} {_LOG_LINES[int(rng.integers(len(_LOG_LINES)))]}"
        if len(text) + len(line) > _MAX_TEXT:
            break
        text, words, added = text + line, words + len(line.split()), added + 1
    return padded.model_copy(update={"actual": text})


def _item(report: BugReport, family: str, label: str) -> ProbeItem:
    return ProbeItem(label=label, family=family, words=report_words(report), report=report)


def _pick(reports: Sequence[BugReport], n: int | None, rng: np.random.Generator) -> list[BugReport]:
    ordered = sorted(reports, key=lambda r: (r.case_id, r.agent_version))
    if n is None or n >= len(ordered):
        return ordered
    idx = sorted(rng.choice(len(ordered), size=n, replace=False).tolist())
    return [ordered[i] for i in idx]


def position_pairs(
    reports: Sequence[BugReport],
    families: Mapping[str, str],
    *,
    n: int | None = None,
    seed: int = 0,
) -> list[ProbePair]:
    """Up to ``n`` reports (seeded choice), each against its near-identical copy."""
    rng = np.random.Generator(np.random.PCG64(seed))
    out = []
    for r in _pick(reports, n, rng):
        fam = families[r.agent_version]
        out.append(
            ProbePair(
                pair_id=f"position-{r.case_id}-{r.agent_version}",
                kind=ProbeKind.POSITION,
                a=_item(r, fam, "original"),
                b=_item(neutral_variant(r), fam, "copy"),
                case_id=r.case_id,
            )
        )
    return out


def verbosity_pairs(
    reports: Sequence[BugReport],
    families: Mapping[str, str],
    *,
    n: int | None = None,
    ratio: float = 2.0,
    seed: int = 0,
) -> list[ProbePair]:
    """Up to ``n`` reports against their padded selves; the padded side is the favoured one."""
    rng = np.random.Generator(np.random.PCG64(seed))
    out = []
    for r in _pick(reports, n, rng):
        fam = families[r.agent_version]
        plain, padded = (
            _item(r, fam, "original"),
            _item(pad_report(r, ratio=ratio, seed=seed), fam, "padded"),
        )
        a, b, side = (padded, plain, Side.A) if rng.random() < 0.5 else (plain, padded, Side.B)
        out.append(
            ProbePair(
                pair_id=f"verbosity-{r.case_id}-{r.agent_version}",
                kind=ProbeKind.VERBOSITY,
                a=a,
                b=b,
                favoured=side,
                case_id=r.case_id,
            )
        )
    return out


def cross_family_pairs(
    reports: Sequence[BugReport], families: Mapping[str, str]
) -> list[ProbePair]:
    """Every two reports of one case whose authors' families differ (sorted, deterministic)."""
    by_case: dict[str, list[BugReport]] = {}
    for r in sorted(reports, key=lambda r: (r.case_id, r.agent_version)):
        by_case.setdefault(r.case_id, []).append(r)
    out = []
    for case_id, rs in by_case.items():
        for x, y in itertools.combinations(rs, 2):
            fx, fy = families[x.agent_version], families[y.agent_version]
            if fx != fy:
                out.append(
                    ProbePair(
                        pair_id=f"self-{case_id}-{x.agent_version}-{y.agent_version}",
                        kind=ProbeKind.SELF,
                        a=_item(x, fx, x.agent_version),
                        b=_item(y, fy, y.agent_version),
                        case_id=case_id,
                    )
                )
    return out
