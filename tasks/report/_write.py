"""The report stage's files, and a past run's summary read back from the ledger.

Per run: ``report.md``, ``report.html`` and ``summary.json`` in one folder
(default ``<ledger folder>/<ledger name>.runs/<run id>/``). The flow stores the RunSummary
as the payload of the ``report`` stage in ``stage_outputs``; ``load_summary``
reads it back, so ``bughunt report`` re-renders a past run from the ledger
alone and writes the same ``summary.json`` byte for byte.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bughunt.errors import InputError, TerminalError
from bughunt.models import run_id_name
from bughunt.outfile import write_output
from ledger import Ledger, runs_folder
from tasks.report._model import RunSummary
from tasks.report._render import render_html, render_markdown
from tasks.report._summary import outputs_path, transcript_path
from tasks.report.runs import History
from tasks.sandbox import PairResult, SandboxResult

REPORT_STAGE = "report"
"""Stage name whose ``stage_outputs`` payload is the run's RunSummary."""

MD_NAME = "report.md"
HTML_NAME = "report.html"
JSON_NAME = "summary.json"


@dataclass(frozen=True, slots=True)
class ReportPaths:
    """The three files of one run's report."""

    md: Path
    html: Path
    json: Path


def canonical(summary: RunSummary) -> RunSummary:
    """``summary`` with every map in key order: what a round trip through the ledger gives.

    The ledger stores JSON payloads with sorted keys, so a summary read back
    has its dicts (per category, calls by status, …) sorted. Writing the
    canonical form makes ``summary.json`` the same bytes either way.
    """
    data = json.loads(json.dumps(summary.model_dump(mode="json"), sort_keys=True))
    return RunSummary.model_validate(data)


def summary_json(summary: RunSummary) -> str:
    """``summary.json``: the canonical summary as ``model_dump_json(indent=2)``, newline-terminated."""
    return canonical(summary).model_dump_json(indent=2) + "\n"


def report_payload(summary: RunSummary) -> dict[str, Any]:
    """The ``report`` stage's ``stage_outputs`` payload: the summary as JSON data."""
    return summary.model_dump(mode="json")


def default_out_dir(ledger: Ledger, run_id: str) -> Path:
    """``<ledger folder>/<ledger name>.runs/<run id>``: a run's outputs live beside the ledger
    that holds it, in the folder named after it (:func:`ledger.runs_folder`).

    Raises :class:`InputError` for a run id that is not a name
    (:func:`~bughunt.models.run_id_name`): it would leave that folder.
    """
    try:
        name = run_id_name(run_id)
    except ValueError as exc:
        raise InputError(str(exc), file=str(ledger.path), field="run_id") from None
    return runs_folder(ledger.path) / name


REPORT_MODE = 0o644
"""Mode of the report files: readable by everyone, like the ledger file DuckDB makes."""


def _write_atomic(path: Path, text: str) -> None:
    # A reader (or a crash) never sees half a report: written beside it, then renamed. What is
    # in the way and is not a regular file (a device, a FIFO) is refused, never renamed over.
    data = text.encode("utf-8")
    write_output(path, lambda out: out.write(data), field="out", mode=REPORT_MODE)


def write_report(
    summary: RunSummary, history: History, out_dir: str | os.PathLike[str]
) -> ReportPaths:
    """Render and write ``report.md``, ``report.html`` and ``summary.json`` into ``out_dir``.

    Creates ``out_dir`` when missing; replaces earlier files of the same
    names, each atomically (a symlink's target is written; a device, FIFO or
    folder in the way is an :class:`InputError` naming it). Returns the three paths.
    """
    summary = canonical(summary)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = ReportPaths(md=out / MD_NAME, html=out / HTML_NAME, json=out / JSON_NAME)
    _write_atomic(paths.md, render_markdown(summary, history))
    _write_atomic(paths.html, render_html(summary, history))
    _write_atomic(paths.json, summary_json(summary))
    return paths


def find_summary(ledger: Ledger, run_id: str) -> RunSummary | None:
    """The RunSummary the ``report`` stage stored for ``run_id``; ``None`` when there is none.

    A run whose report stage never finished (or an id only ingested records
    carry) has none. Raises ``TerminalError`` when the stored payload is not
    a valid summary. Read-only.
    """
    rows = ledger.query(
        "SELECT run_id, payload FROM stage_outputs WHERE stage = ? AND run_id = ? "
        "ORDER BY recorded_at DESC LIMIT 1",
        [REPORT_STAGE, run_id],
    )
    return _summary_of(ledger, rows[0]) if rows else None


def load_summary(ledger: Ledger, run_id: str | None = None) -> RunSummary:
    """The RunSummary the ``report`` stage stored for ``run_id`` (the latest run's when ``None``).

    When a run has several ``report`` rows (a resumed run), the latest counts.
    Raises ``TerminalError`` naming the run when there is none, or when the
    stored payload is not a valid summary. Read-only.
    """
    if run_id is not None:
        found = find_summary(ledger, run_id)
        if found is not None:
            return found
    else:
        rows = ledger.query(
            "SELECT run_id, payload FROM stage_outputs WHERE stage = ? "
            "ORDER BY recorded_at DESC, run_id DESC LIMIT 1",
            [REPORT_STAGE],
        )
        if rows:
            return _summary_of(ledger, rows[0])
    which = f"run {run_id!r}" if run_id else "any run"
    raise TerminalError(
        f"no report stored for {which}: the report stage has not finished there",
        file=str(ledger.path),
    )


def _summary_of(ledger: Ledger, row: dict[str, Any]) -> RunSummary:
    try:
        payload = row["payload"]
        data = json.loads(payload) if isinstance(payload, str) else payload
        return RunSummary.model_validate(data)
    except ValueError as exc:
        raise TerminalError(
            f"the stored report of run {row['run_id']!r} is not a valid summary: {exc}",
            file=str(ledger.path),
        ) from exc


def write_transcripts(sandbox: SandboxResult | Sequence[PairResult], out_dir: Path) -> list[Path]:
    """Each command agent's transcript: ``transcripts/<case>/<agent>.txt``, its output then its calls.

    The text is already scrubbed of every secret (the sandbox stage's); case
    ids and agent names are names (their patterns), never paths. Returns the
    files written.
    """
    written = []
    for pair in _pairs(sandbox):
        if pair.transcript is None:
            continue
        path = out_dir / transcript_path(pair.case_id, pair.agent_version, pair.sample)
        path.parent.mkdir(parents=True, exist_ok=True)
        run = pair.agent_run
        sample = f" (sample {pair.sample})" if pair.sample else ""
        head = [
            f"agent {pair.agent_version} on case {pair.case_id}{sample}",
            f"ended: {run.ended if run else pair.unusable_reason or 'report'}",
            f"seconds: {pair.agent_seconds}",
        ]
        if run is not None:
            head.append(
                f"model requests: {run.requests} forwarded; tunnels: {run.tunnels}; "
                f"refused: {run.refused}; "
                f"tokens in {run.tokens_in}, out {run.tokens_out}; cost {run.cost}; model {run.model}"
            )
        calls = "\n".join(json.dumps(call, sort_keys=True) for call in pair.calls)
        text = "\n".join(
            [
                *head,
                "",
                "--- output (stdout and stderr) ---",
                pair.transcript,
                "",
                f"--- gateway requests ({len(pair.calls)}) ---",
                calls,
                "",
            ]
        )
        _write_atomic(path, text)
        written.append(path)
    return written


OUTPUTS_CHUNK = 200
"""Pairs whose outputs are read from the ledger at once by :func:`write_outputs`."""


def write_outputs(
    sandbox: SandboxResult | Sequence[PairResult],
    out_dir: Path,
    ledger: Ledger | None = None,
) -> list[Path]:
    """Each pair's reproduction-test executions: ``outputs/<case>/<agent>.txt``.

    One block per execution, in tree, rewrite and repeat order: what ran, its
    status, exit code and seconds, then its captured output (capped by the
    sandbox; the test's own text, so untrusted, and written as plain text
    only). A pair whose test never ran has no file. Returns the files written.

    With ``ledger``, outputs are read from its ``observations`` rows (by
    observation id, :data:`OUTPUTS_CHUNK` pairs at a time): a run keeps its
    sandbox result without them once written. Without, from the observations
    themselves.
    """
    pairs = [p for p in _pairs(sandbox) if p.observations]
    written = []
    for start in range(0, len(pairs), OUTPUTS_CHUNK):
        chunk = pairs[start : start + OUTPUTS_CHUNK]
        outputs = _stored_outputs(ledger, chunk) if ledger is not None else None
        for pair in chunk:
            written.append(_write_pair_outputs(pair, out_dir, outputs))
    return written


def _stored_outputs(ledger: Ledger, pairs: Sequence[PairResult]) -> dict[str, str | None]:
    ids = [o.observation_id for p in pairs for o in p.observations]
    table = ledger.query_arrow(
        "SELECT observation_id, output FROM observations WHERE list_contains(?, observation_id)",
        [ids],
    )
    found = dict(
        zip(
            table.column("observation_id").to_pylist(),
            table.column("output").to_pylist(),
            strict=True,
        )
    )
    missing = [i for i in ids if i not in found]
    if missing:  # the pairs' rows are written before any report: a gap is a broken ledger
        raise TerminalError(
            f"{len(missing)} execution(s) of the run are not in the ledger (first: "
            f"{missing[0]}); their outputs cannot be written",
            file=str(ledger.path),
        )
    return found


def _write_pair_outputs(
    pair: PairResult, out_dir: Path, outputs: dict[str, str | None] | None
) -> Path:
    path = out_dir / outputs_path(pair.case_id, pair.agent_version, pair.sample)
    path.parent.mkdir(parents=True, exist_ok=True)
    sample = f" (sample {pair.sample})" if pair.sample else ""
    lines = [
        f"reproduction test of {pair.agent_version} on case {pair.case_id}{sample}",
        f"outcome: {pair.outcome.value}" + (f" ({pair.reason})" if pair.reason else ""),
        f"test sha256: {pair.test_hash}",
        f"executions: {len(pair.observations)}",
    ]
    runs = sorted(
        pair.observations,
        key=lambda o: (str(o.tree), -1 if o.rewrite is None else o.rewrite, o.repeat or 0),
    )
    for o in runs:
        tree = f"{o.tree}" + (f", rewrite {o.rewrite}" if o.rewrite is not None else "")
        output = o.output if outputs is None else outputs[o.observation_id]
        lines += [
            "",
            f"--- {tree}, repeat {o.repeat}: {o.status.value}, exit {o.exit_code}, "
            f"{o.duration_s}s ---",
            output or "(no output)",
        ]
    _write_atomic(path, "\n".join(lines) + "\n")
    return path


def _pairs(sandbox: SandboxResult | Sequence[PairResult]) -> Sequence[PairResult]:
    return sandbox.pairs if isinstance(sandbox, SandboxResult) else sandbox
