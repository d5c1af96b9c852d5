"""Commands over a corpus: ``classify`` and ``corpus check``."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress

from bughunt.models import BugCategory
from bughunt.safeio import read_input
from cli._common import JsonOpt, console, err_console, fail, guarded, print_json, print_rows
from corpus import load_corpus
from tasks.classify import ClassifyResult, classify_corpus
from tasks.classify.patch import changed_paths

if TYPE_CHECKING:
    from tasks.make_corpus import Verdict

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

    Per case (FAIL_TO_PASS): tests of the target's test_command must fail (or
    the suite hang) alike twice on the buggy tree and pass on the clean tree.
    Tests that fail on the clean tree are the target's known failures: listed
    once per target, left out of every case. An equivalent patch, a
    non-deterministic buggy suite, a clean suite that does not run, or a bug a
    visible test reveals breaks a case (exit 1, each case with its reason).
    Each kept case shows the rewrite level its trees keep their outcomes at.
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
        target_of = {case.case_id: case.target for case in loaded.cases}
        known: dict[str, list[str]] = {}
        for c in checks:
            known.setdefault(target_of.get(c.case_id, ""), c.known_failures)
        for target, tests in sorted(known.items()):
            if tests:
                shown = ", ".join(tests[:5]) + (
                    f" and {len(tests) - 5} more" if len(tests) > 5 else ""
                )
                _say(
                    f"target {target}: {len(tests)} known failure(s) on the clean tree, left "
                    f"out of every case: {shown}"
                )
        for c in checks:
            what = (
                f"ok ({c.symptom}, {len(c.failing_tests)} failing, rewrites {c.rewrite_level})"
                if c.status == "ok"
                else f"BROKEN: {c.reason}"
            )
            _say(f"{c.case_id}: {what}")
        for rejected in loaded.rejected:
            _say(f"{rejected.case_id}: rejected: {rejected.describe()}")
        _say(f"{len(checks) - len(broken)} of {len(checks)} cases keep the corpus contract")
    if broken or loaded.rejected:
        raise typer.Exit(1)


@corpus_app.command("mutate")
@guarded
def mutate(  # noqa: PLR0913 - typer maps each parameter to a command-line option
    target: Annotated[
        Path, typer.Option(help="The target's source tree.", exists=True, file_okay=False)
    ],
    test_command: Annotated[
        str, typer.Option(help='Its suite, run from the tree\'s root, e.g. "python3 -m pytest -q".')
    ],
    out: Annotated[Path, typer.Option(help="Folder to write the corpus into (new or empty).")],
    max_cases: Annotated[int, typer.Option(min=1, max=10_000, help="Cases to keep.")] = 40,
    categories: Annotated[
        list[BugCategory] | None,
        typer.Option("--category", help="Only this category (repeat for several)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the mutants' order.")] = 0,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Suite runs at once (default: CPU count).")
    ] = None,
    suite_timeout: Annotated[
        float, typer.Option(min=1, max=3_600, help="Deadline of one suite run, in seconds.")
    ] = 120.0,
    agents_from: Annotated[
        Path, typer.Option(help="Corpus whose command agents the new corpus takes.")
    ] = Path("corpus/demo"),
    as_json: JsonOpt = False,
) -> None:
    """Write a corpus of fresh bugs: syntax-tree mutants of a target that its own suite kills.

    Each mutant runs the suite in the sandbox; kept when it fails the same way
    twice (or hangs while the clean tree is quick), dropped when equivalent,
    flaky or a duplicate. Exit 0 when the corpus holds --max-cases cases, 1
    when fewer could be made.
    """
    import os
    import shlex

    from flows import new_run_id
    from tasks.make_corpus import MutateSettings, mutate_target

    try:
        command = shlex.split(test_command)
    except ValueError as exc:  # an unbalanced quote or a trailing backslash
        fail(f"--test-command: cannot split it into words as a shell would: {exc}")
    if not command:
        fail("--test-command is empty")
    settings = MutateSettings(
        max_cases=max_cases,
        categories=categories,
        seed=seed,
        workers=workers or os.cpu_count(),
        suite_timeout_s=suite_timeout,
    )
    with _mutate_progress(as_json) as progress:
        summary = mutate_target(
            target,
            command,
            out=out,
            settings=settings,
            agents_from=agents_from,
            run_id=new_run_id("mutate"),
            progress=progress,
        )
    if as_json:
        print_json(summary.model_dump(mode="json"))
    else:
        counts = ", ".join(f"{n} {v}" for v, n in summary.verdicts.items())
        _say(f"tried {summary.tried} of {summary.proposed} mutants: {counts}")
        per = ", ".join(f"{c} {n}" for c, n in sorted(summary.per_category.items()))
        _say(f"kept {summary.kept} case(s) in {summary.out}: {per}")
    if summary.kept == 0:  # on stderr, so a --json consumer sees it too
        why = (
            f"its suite ({test_command}) fails on none of the {summary.tried} mutant(s) tried: "
            "do its tests exercise the code?"
            if summary.tried
            else "no mutant could be proposed (no Python source the operators apply to)"
        )
        err_console.print(f"{target}: no case written: {why}", markup=False, soft_wrap=True)
    if summary.kept < max_cases:
        raise typer.Exit(1)


@corpus_app.command("import")
@guarded
def import_(
    file: Annotated[
        Path, typer.Argument(help="Instances: a JSON array or JSON lines.", dir_okay=False)
    ],
    repos: Annotated[
        Path,
        typer.Option(
            help="Git checkouts, one per repository (<owner>__<name> or <name>).",
            exists=True,
            file_okay=False,
        ),
    ],
    out: Annotated[Path, typer.Option(help="Folder to write the corpus into (new or empty).")],
    format_: Annotated[
        str, typer.Option("--format", help="Instance format (swebench).")
    ] = "swebench",
    agents_from: Annotated[
        Path, typer.Option(help="Corpus whose command agents the new corpus takes.")
    ] = Path("corpus/demo"),
    as_json: JsonOpt = False,
) -> None:
    """Import a public bug benchmark's instances as a corpus: one target and one case each.

    The target is the base commit with the fix and the test patch applied, the
    injected bug the fix reversed, the oracle the FAIL_TO_PASS tests. Exit 0
    when every instance was imported, 1 when some were skipped (each named by
    line with its reason; the others are written).
    """
    from tasks.make_corpus import import_swebench

    if format_ != "swebench":
        fail(f"--format {format_!r}: only 'swebench' is known (see docs/corpus.md#import)")
    summary = import_swebench(file, repos=repos, out=out, agents_from=agents_from)
    if as_json:
        print_json(summary.model_dump(mode="json"))
    else:
        for s in summary.skipped:
            _say(f"{file}:{s.line}: skipped {s.instance_id or 'instance'}: {s.reason}")
        _say(f"imported {len(summary.cases)} instance(s) into {summary.out}")
    if summary.skipped:
        raise typer.Exit(1)


@contextlib.contextmanager
def _mutate_progress(
    quiet: bool,
) -> Iterator[Callable[[int, int, int, Mapping[Verdict, int]], None]]:
    """A progress bar on a terminal; elsewhere a line at least every 30 s (never with --json)."""
    last = [time.monotonic()]

    def line(kept: int, wanted: int, tried: int, counts: Mapping[Verdict, int]) -> None:
        now = time.monotonic()
        if quiet or (now - last[0] < 30 and kept < wanted):
            return
        last[0] = now
        shown = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        print(f"mutate: kept {kept}/{wanted}, tried {tried} ({shown})", file=sys.stderr)

    if quiet or not sys.stderr.isatty():
        yield line
        return
    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("mutants kept", total=None)

        def update(kept: int, wanted: int, tried: int, _counts: Mapping[Verdict, int]) -> None:
            bar.update(task, completed=kept, total=wanted, description=f"kept (tried {tried})")

        yield update


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
        pr_diff = read_input(diff, what="a PR diff")
        changed_paths(pr_diff, file=str(diff))  # not a diff at all: bad input, named by file
    result = classify_corpus(loaded, pr_diff)
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        _print(result)
