"""``bughunt judge calibrate``: a judge under a strategy measured against human labels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from bughunt.models import (
    CallStatus,
    JudgeCalibration,
    Strategy,
)
from bughunt.spans import ttl_seconds
from cli._common import (
    JsonOpt,
    JudgeCacheTtlOpt,
    JudgesConfigOpt,
    LedgerOpt,
    RefreshJudgeOpt,
    guarded,
    print_json,
    print_rows,
)
from judging.calibration import LabelSet, read_labels
from judging.judges import DEFAULT_JUDGE

EXPLAIN: tuple[str, ...] = (
    "accuracy: pairs where label and verdict both pick a report, share picking the same one",
    "agreement: scored pairs whose verdict equals the label, ties included (a tie matches only a tie)",
    "kappa: Cohen's kappa over scored pairs, three classes (first, second, tie); seeded bootstrap interval",
    "position consistency: pairs with the same verdict in both orders (one call each way, every judge)",
    "intervals: Wilson 95% over pairs, percentile bootstrap 95% for kappa",
)


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def _value(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def figure_rows(row: JudgeCalibration) -> list[dict[str, Any]]:
    """The table of a calibration's figures: value, 95% interval and the pairs each rests on."""
    return [
        {
            "figure": name,
            "value": _value(value),
            "95% interval": _interval(low, high),
            "n": n,
        }
        for name, value, low, high, n in (
            ("accuracy", row.accuracy, row.accuracy_low, row.accuracy_high, row.accuracy_n),
            ("agreement", row.agreement, row.agreement_low, row.agreement_high, row.scored),
            ("kappa (3 classes)", row.kappa, row.kappa_low, row.kappa_high, row.scored),
            (
                "position consistency",
                row.consistency,
                row.consistency_low,
                row.consistency_high,
                row.consistency_n,
            ),
        )
    ]


def _print_text(
    row: JudgeCalibration, labels: LabelSet, unscored: list[tuple[str, str]], store: Path
) -> None:
    counts = labels.counts()
    typer.echo(
        f"calibration of {row.judge} under {row.strategy.value} against {row.labels_file} "
        f"(sha256 {row.labels_hash[:12]})"
    )
    typer.echo(
        f"labels: {row.n} pairs; first better {counts['first']}, second better "
        f"{counts['second']}, tie {counts['tie']}"
    )
    print_rows(figure_rows(row))
    typer.echo(
        f"scored {row.scored} of {row.n}; the judge said tie on {row.judge_ties} pair(s) the "
        f"labels decide (not in accuracy; in agreement and kappa as disagreements)"
    )
    typer.echo(f"unscored {row.unscored} (a failed judge call: never a tie, never a wrong answer)")
    for pair_id, reason in unscored:
        typer.echo(f"  {pair_id}: {reason}")
    for line in EXPLAIN:
        typer.echo(line)
    typer.echo(f"stored as run {row.run_id} in {store}")


@guarded
def calibrate_command(  # noqa: PLR0913 - typer maps each parameter to a command-line option
    labels: Annotated[
        Path,
        typer.Option(
            "--labels",
            help="JSON Lines of labelled report pairs: id, first, second, better (docs/judges.md).",
            show_default=False,
        ),
    ],
    judge: Annotated[
        str, typer.Option("--judge", help="Judge or jury to measure.")
    ] = DEFAULT_JUDGE,
    strategy: Annotated[
        Strategy, typer.Option("--strategy", help="Strategy whose verdicts are compared.")
    ] = Strategy.SWAP,
    k: Annotated[int, typer.Option("--k", min=1, help="Votes of the majority strategy.")] = 5,
    seed: Annotated[
        int,
        typer.Option(
            "--seed", min=0, help="Seed of the random_order coin and the kappa bootstrap."
        ),
    ] = 0,
    judges_config: JudgesConfigOpt = None,
    deadline: Annotated[
        float | None,
        typer.Option("--deadline", min=0.1, help="Seconds per call (default: the judge's, 90)."),
    ] = None,
    refresh_judge: RefreshJudgeOpt = False,
    judge_cache_ttl: JudgeCacheTtlOpt = None,
    ledger: LedgerOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Measure a judge under a judging strategy against human preference labels on report
    pairs: accuracy, agreement and Cohen's kappa against the labels, and position
    consistency, each with a 95% interval over pairs.

    A failed judge call leaves its pair unscored (counted, never a tie or a wrong
    answer). The calibration and every judge call are stored in the ledger as an
    ad-hoc run. A bad labels file is a one-line error naming the file and line
    (exit 2); exit 1 when no pair could be scored.
    """
    from flows.ledger_writes import CalibrationOptions, calibrate_judges
    from ledger import Ledger

    label_set = read_labels(labels)
    store = Ledger(ledger)
    done = calibrate_judges(
        label_set,
        judge,
        options=CalibrationOptions(
            strategy=strategy,
            k=k,
            seed=seed,
            deadline_s=deadline,
            refresh=refresh_judge,
            cache_ttl_s=ttl_seconds(judge_cache_ttl),
        ),
        labels_file=str(labels),
        ledger=store,
        judges_config=judges_config,
    )
    unscored = [(o.id, o.reason or "unscored") for o in done.outcomes if o.verdict is None]
    if as_json:
        print_json(
            {
                "calibration": done.row.model_dump(mode="json"),
                "labels": label_set.counts(),
                "calls": len(done.calls),
                "failed_calls": sum(1 for c in done.calls if c.status is not CallStatus.JUDGED),
                "degraded_reason": done.degraded_reason,
                "pairs": [
                    {
                        "id": o.id,
                        "label": o.label.value,
                        "verdict": None if o.verdict is None else o.verdict.value,
                        "consistent": o.consistent,
                        "reason": o.reason,
                    }
                    for o in done.outcomes
                ],
            }
        )
    else:
        _print_text(done.row, label_set, unscored, store.path)
        if done.degraded_reason:
            typer.echo(f"degraded: {done.degraded_reason}")
    if done.row.scored == 0:
        raise typer.Exit(1)
