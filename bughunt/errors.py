"""One base exception with transient and terminal kinds.

Prefect retries :class:`TransientError` only. Every error carries the ids a
user needs to find what went wrong (run, case, file and line, field).
"""

from __future__ import annotations


class BughuntError(Exception):
    """Base of every error bughunt raises on purpose."""

    def __init__(
        self,
        message: str,
        *,
        run_id: str | None = None,
        case_id: str | None = None,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.run_id = run_id
        self.case_id = case_id
        self.file = file
        self.line = line
        self.field = field
        super().__init__(self.describe())

    def describe(self) -> str:
        """The message prefixed with where it happened (``file:line``, field, case, run)."""
        where: list[str] = []
        if self.file is not None:
            where.append(f"{self.file}:{self.line}" if self.line is not None else self.file)
        if self.field is not None:
            where.append(f"field {self.field!r}")
        if self.case_id is not None:
            where.append(f"case {self.case_id}")
        if self.run_id is not None:
            where.append(f"run {self.run_id}")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class TransientError(BughuntError):
    """Infrastructure that may work on a second try (a held lock, a busy engine)."""


class TerminalError(BughuntError):
    """Bad input or a broken contract: trying again gives the same answer."""


class LedgerLockedError(TransientError):
    """Another process held the ledger's write lock for longer than we wait."""


class LedgerSchemaError(TerminalError):
    """The ledger file was written by a newer bughunt, or its migrations are damaged."""


class LedgerFileError(TerminalError):
    """The ledger path is not a whole bughunt ledger: a folder, not DuckDB, truncated, damaged."""


class ReadOnlyQueryError(TerminalError):
    """A statement given to ``bughunt sql`` would change the ledger."""


class InputError(TerminalError):
    """A file, line or field given by a user or an agent is not valid (docs/architecture.md#bad-input)."""
