"""The ``bughunt`` command line (Typer). Each command group lives in its own module."""

from __future__ import annotations

import contextlib
import os

# Prefect reads its settings once, when first imported, and the commands below
# import it: its defaults for this process must be in the environment first.
# The local API starts in ~5 s on an idle 2-core machine; give a busy one time
# (Prefect counts only its own sleeps against this, so it is generous already).
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
# Offline machines: no usage analytics (its heartbeat only logs errors here).
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_UI_ENABLED", "false")
# Prefect's local state under .bughunt/ unless the user points elsewhere.
# (Prefect makes that folder as it is imported and warns when its parent is missing.)
if "PREFECT_API_URL" not in os.environ and "PREFECT_HOME" not in os.environ:
    os.environ["PREFECT_HOME"] = os.path.abspath(os.path.join(".bughunt", "prefect"))
    with contextlib.suppress(OSError):  # a read-only folder: Prefect then says so itself
        os.makedirs(os.environ["PREFECT_HOME"], exist_ok=True)

import typer

from bughunt.cli import (
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

app = typer.Typer(
    name="bughunt",
    help="Is the candidate bug-hunting agent better than the baseline, and how sure are we?",
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
