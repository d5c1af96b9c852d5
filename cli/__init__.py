"""The ``bughunt`` command line (Typer). Each command group lives in its own module."""

from __future__ import annotations

import os

from bughunt.prefect_env import prefect_defaults

# Before the commands below import Prefect, which reads its settings once.
prefect_defaults(os.path.join(".bughunt", "prefect"))

import typer  # noqa: E402  (after the Prefect defaults above)

from cli import (  # noqa: E402
    _corpus,
    _flakes,
    _hash,
    _judge,
    _ledger_cmds,
    _outcomes,
    _probe,
    _report,
    _run,
    _sandbox,
    _simulate,
)
from cli._common import OneLineErrors  # noqa: E402

app = typer.Typer(
    name="bughunt",
    cls=OneLineErrors,
    help="Is the candidate bug-hunting agent better than the baseline, and how sure are we?",
    epilog=(
        "Exit codes: 0 done. 1 done, with something to look at: bad lines in a records "
        "file (reported by file and line, the rest kept), a report that did not reproduce, "
        "a gate regression. 2 bad input, nothing stored: a file that cannot be read, a "
        "ledger that is not a whole ledger, a bad option or value, any bad line with "
        "--strict; one line on stderr names the file, line or field. `run pr` also exits "
        "3 (review failed) and 4 (inconclusive)."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_outcomes.register(app)
_corpus.register(app)
_hash.register(app)
_flakes.register(app)
_simulate.register(app)
_judge.register(app)
_report.register(app)
_probe.register(app)
_sandbox.register(app)
_ledger_cmds.register(app)
_run.register(app)


def main() -> None:
    """Console entry point."""
    app()


__all__ = ["app", "main"]
