"""Commands over a corpus: ``classify`` and ``corpus check``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cli._common import JsonOpt, console, fail, guarded, print_json, print_rows
from corpus import load_corpus
from tasks.classify import ClassifyResult, changed_paths, classify_corpus

corpus_app = typer.Typer(
    help="Check a corpus before any verdict is given on it.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.command("classify")(classify)
    app.add_typer(corpus_app, name="corpus")


@corpus_app.command("check")
@guarded
def check(
    corpus: Annotated[Path, typer.Option(help="Corpus folder.")] = Path("corpus/demo"),
    workers: Annotated[
        int | None, typer.Option(min=1, help="Suite runs at once (default: CPU count).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check the corpus contract of every case in the sandbox: exit 0 when every case keeps it.

    The target's test_command must pass on the clean tree (twice, and on a
    behaviour-preserving rewrite) and fail or hang alike twice on each buggy
    tree; an equivalent patch, a failing or non-deterministic suite, or a bug a
    visible test reveals breaks it (exit 1, each case with its reason).
    """
    from flows import new_run_id
    from tasks.hash_corpus import hash_loaded_corpus
    from tasks.sandbox import SandboxSettings, check_corpus

    loaded = load_corpus(corpus)
    hashes = hash_loaded_corpus(loaded, {}, None).hashes()
    checks = check_corpus(
        loaded, hashes, run_id=new_run_id("check"), settings=SandboxSettings(workers=workers)
    )
    broken = [c for c in checks if c.status != "ok"]
    if as_json:
        print_json([c.model_dump(mode="json") for c in checks])
    else:
        for c in checks:
            what = (
                f"ok ({c.symptom}, {len(c.failing_tests)} failing)"
                if c.status == "ok"
                else f"BROKEN: {c.reason}"
            )
            _say(f"{c.case_id}: {what}")
        for rejected in loaded.rejected:
            _say(f"{rejected.case_id}: rejected: {rejected.describe()}")
        _say(f"{len(checks) - len(broken)} of {len(checks)} cases keep the corpus contract")
    if broken or loaded.rejected:
        raise typer.Exit(1)


def _say(text: str) -> None:
    # soft_wrap: long reasons stay one line each (greppable), the terminal wraps them.
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _print(result: ClassifyResult) -> None:
    rows: list[dict[str, Any]] = [
        {
            "case": case.case_id,
            "category": case.category,
            "expected": "" if case.matches_expected is not False else case.expected_category,
            "files": len(case.files),
            "hunks": case.hunks,
            "+": case.added,
            "-": case.removed,
        }
        for case in result.cases
    ]
    print_rows(rows, title=f"corpus {result.corpus}: {len(result.cases)} cases classified")
    for case in result.cases:
        if case.matches_expected is False:
            where = ""
            if case.evidence:
                ev = case.evidence
                where = f" because {ev.file}:{ev.line}: {case.rule}"
            _say(
                f"{case.case_id}: labelled {case.category}, "
                f"case.toml expects {case.expected_category}{where}"
            )
    if result.rejected:
        _say(f"{len(result.rejected)} rejected (not run):")
        for rejected in result.rejected:
            _say(f"  {rejected.case_id}: {rejected.describe()}")
    plan = result.plan
    _say(f"plan: {plan.describe()}")
    for reason in plan.reasons:
        _say(f"  - {reason}")
    skipped = [c for c in plan.case_ids if c not in result.planned_case_ids]
    if skipped:
        _say(f"  planned but rejected: {', '.join(skipped)}")


@guarded
def classify(
    corpus: Annotated[Path, typer.Option(help="Corpus folder.")] = Path("corpus/demo"),
    diff: Annotated[
        Path | None,
        typer.Option(
            "--diff",
            help="A PR's unified diff: plan only the cases and stages it calls for.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Validate and label every case of a corpus, list rejected cases, and print the run plan."""
    loaded = load_corpus(corpus)
    pr_diff: bytes | None = None
    if diff is not None:
        try:
            pr_diff = diff.read_bytes()
        except OSError as exc:
            fail(f"{diff}: cannot read: {exc.strerror or exc}")
        changed_paths(pr_diff, file=str(diff))  # not a diff at all: bad input, named by file
    result = classify_corpus(loaded, pr_diff)
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        _print(result)
