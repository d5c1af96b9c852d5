"""Options and output helpers shared by every command."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bughunt.errors import BughuntError
from bughunt.text import visible


class VisibleStream(io.TextIOBase):
    """A text stream whose control characters are shown, not obeyed (:func:`bughunt.text.visible`).

    While a command runs, ``sys.stdout`` and ``sys.stderr`` are these
    (:class:`OneLineErrors`), so nothing a command prints — ``typer.echo``,
    ``print``, an error message — can act on the reader's terminal, whatever
    stored text it carries, and a new command cannot forget it. Rich consoles
    write to the stream beneath (``rich_proxied_file``), their own styling
    intact; :class:`VisibleConsole` shows the text they are given.
    """

    def __init__(self, raw: Any) -> None:
        super().__init__()
        self.rich_proxied_file = raw

    @property
    def encoding(self) -> str:  # type: ignore[override]  # the stream beneath's
        return str(getattr(self.rich_proxied_file, "encoding", None) or "utf-8")

    @property
    def errors(self) -> str:  # type: ignore[override]  # the stream beneath's
        return getattr(self.rich_proxied_file, "errors", None) or "strict"

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click probes for a binary stream with b"": not one
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.rich_proxied_file.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self.rich_proxied_file.flush()

    def isatty(self) -> bool:
        return bool(self.rich_proxied_file.isatty())

    def fileno(self) -> int:
        return int(self.rich_proxied_file.fileno())

    def writable(self) -> bool:
        return True


class VisibleConsole(Console):
    """A rich console that shows control characters in every string it renders (cells,
    titles, messages) instead of passing them to the terminal."""

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Text:
        return super().render_str(visible(text), *args, **kwargs)


# Piped output is read by people too (logs, CI): give tables room instead of 80 columns.
console = VisibleConsole(width=None if sys.stdout.isatty() else 160)
err_console = VisibleConsole(stderr=True)

LedgerOpt = Annotated[
    Path | None,
    typer.Option(
        "--ledger",
        envvar="BUGHUNT_LEDGER",
        help="Ledger file (default .bughunt/ledger.duckdb).",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
JudgesConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--judges-config", help="TOML with [judges.*] / [juries.*] (default ./pyproject.toml)."
    ),
]
RefreshJudgeOpt = Annotated[bool, typer.Option("--refresh-judge", help="Bypass the judge cache.")]
JudgeCacheTtlOpt = Annotated[
    str | None,
    typer.Option(
        "--judge-cache-ttl",
        help="Reuse no cached judge answer older than this, e.g. 30d or 12h (default: no limit).",
        show_default=False,
    ),
]


T = TypeVar("T")


def _default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def print_json(value: Any) -> None:
    """Print ``value`` as indented JSON on stdout (no colour, machine-readable)."""
    typer.echo(json.dumps(value, indent=2, sort_keys=False, default=_default))


def print_rows(rows: list[dict[str, Any]], *, title: str | None = None) -> None:
    """Print rows as a table; every cell is plain text (no console markup)."""
    if not rows:
        console.print(f"{title + ': ' if title else ''}no rows", markup=False)
        return
    table = Table(title=title)
    for name in rows[0]:
        table.add_column(str(name), overflow="fold")
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row.values()))
    console.print(table)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print an error on stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn bughunt errors, and files that cannot be read, into a one-line message and exit 2."""
    try:
        yield
    except BughuntError as exc:
        fail(exc.describe())
    except OSError as exc:
        if exc.filename is None:
            raise
        fail(f"{exc.filename}: cannot read or write: {exc.strerror or exc}")


def _refuse_undecodable(args: Sequence[str]) -> None:
    """Exit 2 with one line on an argument that is not UTF-8 (Python keeps such bytes as lone
    surrogates): a query, a run id or a file name that the ledger, DuckDB or a report
    could not hold as text."""
    for arg in args:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            typer.echo(
                f"error: an argument is not UTF-8 text: {arg!r}; bughunt takes text and file "
                "names in UTF-8 (rename the file, or re-encode the text)",
                err=True,
            )
            sys.exit(2)


INTERRUPTED = 130
"""The exit code of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)."""


class OneLineErrors(typer.core.TyperGroup):
    """The root command group: a usage error (bad option, value or argument) is one line.

    Typer draws usage errors as a boxed panel under the usage text; a CI log
    or a script wants ``error: <what>`` and the exit code (2), as for every
    other bad input. Help (``--help``, or a group called with nothing) is unchanged.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        forward: dict[str, Any] = {
            "args": args,
            "prog_name": prog_name,
            "complete_var": complete_var,
            "windows_expand_args": windows_expand_args,
            **extra,
        }
        if not standalone_mode:
            return super().main(standalone_mode=False, **forward)
        out, err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = VisibleStream(out), VisibleStream(err)
        try:
            _refuse_undecodable(sys.argv[1:] if args is None else args)
            self._main(forward)
        finally:
            sys.stdout, sys.stderr = out, err

    def _main(self, forward: dict[str, Any]) -> NoReturn:
        try:
            code = super().main(standalone_mode=False, **forward)
        except typer.TyperException as exc:  # Typer's own click: UsageError, BadParameter, ...
            if type(exc).__name__ == "NoArgsIsHelpError":  # a group called bare: its help
                typer.echo(exc.format_message(), err=True)
                sys.exit(exc.exit_code)
            ctx = getattr(exc, "ctx", None)
            hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            typer.echo(f"error: {exc.format_message()}{hint}", err=True)
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.echo("aborted", err=True)
            sys.exit(1)
        except KeyboardInterrupt:  # Ctrl-C before or after the command ran
            code = INTERRUPTED
        if code == INTERRUPTED:  # Typer's answer to Ctrl-C in a command: the code, no word
            typer.echo("interrupted", err=True)
        sys.exit(code if isinstance(code, int) else 0)


def guarded(fn: Callable[..., T]) -> Callable[..., T]:
    """Decorator form of :func:`user_errors` (keeps the signature for Typer)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        with user_errors():
            return fn(*args, **kwargs)

    return wrapper
