"""The ``bughunt`` command line (Typer). Each command group lives in its own module.

The modules are imported only when their command runs (:class:`_LazyRoot`):
``bughunt --help`` lists the commands from :data:`COMMANDS` without importing
any of them, and ``bughunt sql`` imports the ledger but not Prefect, scipy,
matplotlib or the docker SDK. A test keeps :data:`COMMANDS` in step with the
commands' own docstrings.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, Mapping
from typing import Any

from flows.prefect_env import prefect_defaults

# Before any command imports Prefect, which reads its settings once.
prefect_defaults(os.path.join(".bughunt", "prefect"))

import typer  # noqa: E402  (after the Prefect defaults above)
import typer.main  # noqa: E402
from typer import _click as click  # noqa: E402  (typer vendors its own click; commands are its)

from cli._common import OneLineErrors  # noqa: E402

COMMANDS: dict[str, tuple[str, str]] = {
    # name: (module whose register() adds it, the first paragraph of its help)
    "ingest": (
        "cli._outcomes",
        "Store outcome records in the ledger with their provenance (file, line, time, batch).",
    ),
    "summarize": (
        "cli._outcomes",
        "Summarise outcome records from files, without touching the ledger.",
    ),
    "summary": (
        "cli._outcomes",
        "Summarise outcome records stored in the ledger (all, one batch, or one run).",
    ),
    "conflicts": (
        "cli._outcomes",
        "Disputed identities over all history: which, since when, from which sources.",
    ),
    "unscored": (
        "cli._outcomes",
        "Unscored cases over all history: which, why, since when, from which sources.",
    ),
    "classify": (
        "cli._corpus",
        "Validate and label every case of a corpus, list rejected cases, and print the run plan.",
    ),
    "hash": (
        "cli._hash",
        "Print every case's content hash and the corpus hash, and what changed since the "
        "latest manifest of this corpus in the ledger (new / changed / removed).",
    ),
    "report": (
        "cli._report",
        "Write report.md, report.html and summary.json of a past run, from the ledger alone.",
    ),
    "runs": (
        "cli._report",
        "List runs, newest first: kind, start, duration, corpus, agents, headline, gate, report.",
    ),
    "probe": (
        "cli._probe",
        "Position consistency and the four-way table on near-identical pairs (both orders), the "
        "verbosity padding attack, and — for a jury — self-preference; Wilson intervals over "
        "pairs.",
    ),
    "sql": (
        "cli._sql",
        "Run a read-only SQL query on the ledger and print the rows; writes are refused.",
    ),
    "export": (
        "cli._ledger_cmds",
        "Write a ledger table or a read-only query's rows to a CSV, Parquet or JSON Lines file.",
    ),
    "schema": ("cli._ledger_cmds", "Print the JSON schema of a domain model."),
    "migrate": (
        "cli._ledger_cmds",
        "Create the ledger file if needed and apply every missing schema migration.",
    ),
    "cache": (
        "cli._cache",
        "The judge cache: what it holds, and clearing, pruning or adopting its answers.",
    ),
    "corpus": ("cli._corpus", "Check a corpus before any verdict is given on it."),
    "flakes": (
        "cli._flakes",
        "List test keys by flake state, with their evidence (runs, passes, fails, flips, rate).",
    ),
    "simulate": (
        "cli._simulate",
        "Compute every judging strategy on the simulated judge, exactly and by seeded Monte Carlo.",
    ),
    "judge": (
        "cli._judge",
        "Check the configured judges and calibrate them against human labels (docs/judges.md).",
    ),
    "sandbox": ("cli._sandbox", "The sandbox image untrusted code runs in."),
    "run": ("cli._run", "Run a flow in this process on Prefect's local API."),
}
"""Every top-level command, in the order ``--help`` lists them."""


class _Commands(Mapping[str, click.Command]):
    """The root's commands by name, each module imported the first time one of its commands
    is looked up; while the root's help is drawn, light stand-ins carrying the listed help."""

    def __init__(self) -> None:
        self._loaded: dict[str, click.Command] = {}
        self.listing = False

    def __getitem__(self, name: str) -> click.Command:
        if name not in COMMANDS:
            raise KeyError(name)
        if self.listing:
            return typer.core.TyperCommand(name, help=COMMANDS[name][1])
        if name not in self._loaded:
            self._load(COMMANDS[name][0])
        return self._loaded[name]

    def _load(self, module: str) -> None:
        holder = typer.Typer()
        importlib.import_module(module).register(holder)
        group = typer.main.get_group(holder)
        for name, command in group.commands.items():
            self._loaded[name] = command

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class _LazyRoot(OneLineErrors):
    """The root group: commands from :data:`COMMANDS`, their modules imported on use."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands: _Commands = _Commands()  # type: ignore[assignment]  # read-only by design

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:  # noqa: ARG002 - click's signature; this group refuses every command
        raise TypeError("commands are listed in cli.COMMANDS")

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.commands.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.commands.listing = False


app = typer.Typer(
    name="bughunt",
    cls=_LazyRoot,
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


@app.callback()
def _root() -> None:
    """Is the candidate bug-hunting agent better than the baseline, and how sure are we?"""


def main() -> None:
    """Console entry point."""
    app()


__all__ = ["COMMANDS", "app", "main"]
