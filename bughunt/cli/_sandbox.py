"""``bughunt sandbox``: the sandbox image (DESIGN §7)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from bughunt.cli._common import JsonOpt, console, err_console, fail, guarded, print_json
from bughunt.models import AgentMode, AgentVersion, ReproOutcome, Tree

sandbox_app = typer.Typer(help="The sandbox image untrusted code runs in.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")


class _ProgressHandler(logging.Handler):
    """Build progress on stderr, plain text (the log can carry tool output)."""

    def emit(self, record: logging.LogRecord) -> None:
        err_console.print(record.getMessage(), markup=False, highlight=False, soft_wrap=True)


@sandbox_app.command("build")
@guarded
def build(
    force: Annotated[
        bool, typer.Option("--force", help="Rebuild even when the image already exists.")
    ] = False,
    base_image: Annotated[
        str | None,
        typer.Option(
            "--base-image",
            help="Build FROM this Debian-like image instead of a debootstrapped root filesystem.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Build the sandbox image if its recipe changed (or with --force); print its tag."""
    from tasks.sandbox import ensure_image  # imported late: docker is only needed here

    logger = logging.getLogger("bughunt.sandbox")
    handler = _ProgressHandler(level=logging.INFO)
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.INFO)
    try:
        result = ensure_image(force=force, base_image=base_image)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    what = f"built in {result.seconds:.1f} s" if result.built else "reused (already present)"
    console.print(f"{result.tag} {what} (image {result.image_id})", markup=False, soft_wrap=True)


@sandbox_app.command("verify")
@guarded
def verify(
    corpus: Annotated[Path, typer.Option(help="Corpus folder.")],
    case: Annotated[str, typer.Option("--case", help="Case id.")],
    report: Annotated[
        Path, typer.Option("--report", help="Bug report JSON file.", exists=True, dir_okay=False)
    ],
    repeats: Annotated[int, typer.Option(min=1, max=20, help="Executions per tree.")] = 3,
    timeout: Annotated[float, typer.Option(min=1, help="Deadline of one execution (s).")] = 10.0,
    as_json: JsonOpt = False,
) -> None:
    """Run one report's reproduction test against one case: every execution and the verdict.

    The command to see why a report did or did not reproduce. Exit 0 when it
    reproduced, 1 otherwise (not reproduced, flaky, error or unusable report).
    """
    from corpus import load_corpus
    from flows import new_run_id
    from tasks.sandbox import (
        Limits,
        connect,
        decide_outcome,
        ensure_image,
        reproduce,
    )
    from tasks.sandbox._agents import parse_report
    from tasks.sandbox._trees import apply_patch, read_tree

    loaded = load_corpus(corpus)
    found = [c for c in loaded.cases if c.case_id == case]
    if not found:
        rejected = [r for r in loaded.rejected if r.case_id == case]
        why = f" (rejected: {rejected[0].describe()})" if rejected else ""
        fail(f"no case {case!r} in {loaded.root}{why}")
    agent = AgentVersion(
        name="verify", family="unknown", mode=AgentMode.REPLAY, reports=str(report.parent)
    )
    parsed = parse_report(report.read_bytes(), source=str(report), agent=agent)
    if isinstance(parsed, str):
        fail(f"report unusable: {parsed}", code=1)
    client = connect()
    image = ensure_image(client)
    target = loaded.config.target
    buggy = apply_patch(target, found[0].patch, file=loaded.relative(found[0].patch_path))
    run_id = new_run_id("verify")
    test_hash, observations = reproduce(
        parsed,
        buggy=buggy,
        clean=read_tree(target),
        repeats=repeats,
        timeout_s=timeout,
        run_id=run_id,
        image=image.tag,
        image_id=image.image_id,
        limits=Limits(),
        client=client,
        case_id=case,
        case_hash=None,
        agent="verify",
    )
    outcome, reason = decide_outcome(
        [o.status for o in observations if o.tree is Tree.BUGGY],
        [o.status for o in observations if o.tree is Tree.CLEAN],
    )
    if as_json:
        print_json(
            {
                "case_id": case,
                "report": str(report),
                "test_hash": test_hash,
                "outcome": outcome.value,
                "reason": reason,
                "executions": [
                    {
                        "tree": o.tree.value if o.tree else None,
                        "repeat": o.repeat,
                        "status": o.status.value,
                        "exit_code": o.exit_code,
                        "duration_s": o.duration_s,
                        "reason": o.annotations.get("reason"),
                        "output": o.output,
                    }
                    for o in observations
                ],
            }
        )
    else:
        for o in observations:
            note = o.annotations.get("reason")
            typer.echo(
                f"{o.tree.value if o.tree else '?'} #{o.repeat}: {o.status.value} "
                f"(exit {o.exit_code}, {o.duration_s:.2f} s){' — ' + str(note) if note else ''}"
            )
            tail = (o.output or "").strip().splitlines()[-3:]
            for line in tail:
                typer.echo(f"    {line}")
        typer.echo(f"verdict: {outcome.value}" + (f" — {reason}" if reason else ""))
    if outcome is not ReproOutcome.REPRODUCED:
        raise typer.Exit(1)
