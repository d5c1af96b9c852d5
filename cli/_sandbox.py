"""``bughunt sandbox``: the sandbox image (docs/sandbox.md)."""

from __future__ import annotations

import logging
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bughunt.models import ReproOutcome
from cli._common import JsonOpt, console, err_console, fail, guarded, print_json

if TYPE_CHECKING:
    from corpus import Corpus
    from tasks.sandbox import PairResult

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
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            help="Then build every agent environment image this corpus needs (missing ones only).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Build the sandbox image if its recipe changed (or with --force); print its tag.

    With --corpus, also each agent environment image the corpus declares
    (docs/sandbox.md#agent-environments), one line per image.
    """
    # imported late: docker is only needed here
    from corpus import load_corpus
    from tasks.sandbox.engine import corpus_images, ensure_corpus_images, ensure_image

    loaded = load_corpus(corpus) if corpus is not None else None
    if loaded is not None:
        corpus_images(loaded)  # bad input in any environment stops before anything is built
    logger = logging.getLogger("bughunt.sandbox")
    handler = _ProgressHandler(level=logging.INFO)
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.INFO)
    try:
        result = ensure_image(force=force, base_image=base_image)
        what = f"built in {result.seconds:.1f} s" if result.built else "reused (already present)"
        console.print(
            f"{result.tag} {what} (image {result.image_id})", markup=False, soft_wrap=True
        )
        images = ensure_corpus_images(loaded, base=result.tag) if loaded is not None else None
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    envs = images.builds if images is not None else {}
    failed = images.failed if images is not None else {}
    for name, env in envs.items():
        what = f"built in {env.seconds:.1f} s" if env.built else "reused (already present)"
        # names: an agent, ``target:<name>``, or ``<agent>@<target>`` (an agent on a target)
        whose = name.replace(":", " ", 1) if name.startswith("target:") else f"agent {name}"
        console.print(f"{env.tag} {what} for {whose}", markup=False, soft_wrap=True)
    for name, reason in failed.items():
        err_console.print(f"target {name}: not built: {reason}", markup=False, soft_wrap=True)
    tunnelling = [
        a.name for a in (loaded.config.agents if loaded else []) if a.network and a.network.allow
    ]
    if tunnelling:  # their gateways run squid: its image too, so a run never builds it
        from tasks.sandbox.engine import connect, gateway_image

        tag = gateway_image(connect(), base=result.tag, agent=tunnelling[0])
        console.print(f"{tag} gateway image for {', '.join(tunnelling)}", markup=False)
    if failed:  # the other images are built; a run would leave these targets' cases unscored
        raise typer.Exit(1)


@sandbox_app.command("verify")
@guarded
def verify(  # noqa: PLR0913 - typer maps each parameter to a command-line option
    corpus: Annotated[Path, typer.Option(help="Corpus folder.")],
    case: Annotated[str, typer.Option("--case", help="Case id.")],
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Bug report JSON file.", exists=True, dir_okay=False),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Instead of --report: run this command agent of the corpus on the case "
            "(its environment, secrets and gateway, as in a run) and keep its transcript.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="With --agent: folder of its transcript (default .bughunt/verify/<id>)."
        ),
    ] = None,
    repeats: Annotated[int, typer.Option(min=1, max=20, help="Executions per tree.")] = 3,
    timeout: Annotated[float, typer.Option(min=1, help="Deadline of one execution (s).")] = 10.0,
    seed: Annotated[
        int | None,
        typer.Option(help="Seed of the execution order and the trees' rewrites (default: random)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run one report's reproduction test against one case: every execution and the verdict.

    The command to see why a report did or did not reproduce. Give the report
    (``--report``), or an agent of the corpus (``--agent``) to run it on the
    case first, as a run would, and keep its transcript (its output and its
    gateway's requests), whose path is printed. Exit 0 when it reproduced, 1
    otherwise (not reproduced, flaky or error; an agent that wrote no usable
    report), 2 for bad input (a report file that is not a usable report, an
    unknown agent, neither or both of --report and --agent: nothing runs).
    """
    from corpus import load_corpus
    from flows import new_run_id
    from tasks.sandbox import SandboxSettings, verify_report

    if (why := _options_error(report, agent, out)) is not None:
        fail(why)
    loaded = load_corpus(corpus)
    if (why := _unknown_case(loaded, case)) is not None:
        fail(why)
    run_id = new_run_id("verify")
    seed = seed if seed is not None else secrets.randbits(63)
    settings = SandboxSettings(repeats=repeats, test_timeout_s=timeout, seed=seed)
    transcript: Path | None = None
    if agent is not None:
        pair, transcript = _run_agent_pair(loaded, case, agent, run_id, settings, out, as_json)
    else:
        assert report is not None
        pair = verify_report(loaded, case, report, run_id=run_id, settings=settings)
        if pair.report is None:
            fail(f"report unusable: {pair.unusable_reason or pair.reason}")
    if as_json:
        print_json(_verify_json(case, report, agent, transcript, seed, pair))
    else:
        _print_executions(pair)
    if pair.outcome is not ReproOutcome.REPRODUCED:
        raise typer.Exit(1)


def _options_error(report: Path | None, agent: str | None, out: Path | None) -> str | None:
    """Why ``--report``, ``--agent`` and ``--out`` do not go together; None when they do."""
    if (report is None) == (agent is None):
        return "give exactly one of --report FILE and --agent NAME"
    if out is None:
        return None
    if agent is None:
        return f"--out {out}: only with --agent"
    if out.exists() and not out.is_dir():
        return f"--out {out}: is a file, not a folder"
    return None


def _unknown_case(loaded: Corpus, case: str) -> str | None:
    """Why ``case`` is not a case of the corpus (with its rejection, if any); None when it is."""
    if any(c.case_id == case for c in loaded.cases):
        return None
    rejected = [r for r in loaded.rejected if r.case_id == case]
    why = f" (rejected: {rejected[0].describe()})" if rejected else ""
    return f"no case {case!r} in {loaded.root}{why}"


def _verify_json(
    case: str,
    report: Path | None,
    agent: str | None,
    transcript: Path | None,
    seed: int,
    pair: PairResult,
) -> dict[str, Any]:
    """``sandbox verify --json``: what was verified, with what seed, and every execution."""
    return {
        "case_id": case,
        "report": str(report) if report is not None else None,
        "agent": agent,
        "transcript": str(transcript) if transcript is not None else None,
        "test_hash": pair.test_hash,
        "seed": seed,
        "rewrite_seed": pair.rewrite_seed,
        "outcome": pair.outcome.value,
        "reason": pair.reason,
        "executions": [_execution(o) for o in pair.observations],
    }


def _execution(o: Any) -> dict[str, Any]:
    return {
        "tree": o.tree.value if o.tree else None,
        "rewrite": o.rewrite,
        "repeat": o.repeat,
        "status": o.status.value,
        "exit_code": o.exit_code,
        "duration_s": o.duration_s,
        "reason": o.annotations.get("reason"),
        "output": o.output,
    }


def _print_executions(pair: Any) -> None:
    for o in pair.observations:
        note = o.annotations.get("reason")
        tree = (o.tree.value if o.tree else "?") + (" (rewritten)" if o.rewrite is not None else "")
        typer.echo(
            f"{tree} #{o.repeat}: {o.status.value} "
            f"(exit {o.exit_code}, {o.duration_s:.2f} s){' — ' + str(note) if note else ''}"
        )
        for line in (o.output or "").strip().splitlines()[-3:]:
            typer.echo(f"    {line}")
    typer.echo(f"verdict: {pair.outcome.value}" + (f" — {pair.reason}" if pair.reason else ""))


def _run_agent_pair(
    loaded: Any, case: str, agent: str, run_id: str, settings: Any, out: Path | None, quiet: bool
) -> tuple[Any, Path | None]:
    """``sandbox verify --agent``: the agent's pair on the case and its transcript's path."""
    from tasks.report import write_transcripts
    from tasks.sandbox import verify_agent

    chosen = next((a for a in loaded.config.agents if a.name == agent), None)
    if chosen is None:
        known = ", ".join(a.name for a in loaded.config.agents)
        fail(f"no agent {agent!r} in {loaded.config_file}; the corpus has: {known}")
    pair = verify_agent(loaded, case, chosen, run_id=run_id, settings=settings)
    written = write_transcripts([pair], out or Path(".bughunt") / "verify" / run_id)
    transcript = written[0] if written else None
    if transcript is not None and not quiet:
        typer.echo(f"transcript: {transcript}")
    if pair.report is None:
        typer.echo(f"agent {agent} wrote no usable report: {pair.unusable_reason or pair.reason}")
        raise typer.Exit(1)
    return pair, transcript
