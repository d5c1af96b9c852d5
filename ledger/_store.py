"""The ledger file: open, migrate, bulk-write, query (docs/ledger.md).

DuckDB lets one process write a file at a time, and a reader cannot open a
file another process is writing. So a connection lives only as long as one
batch or one query, and opening waits and retries while another process
holds the lock, up to a bounded timeout, then says who to wait for.

Opening, checking and a user's read-only query need DuckDB alone; pyarrow and
the row models (about a quarter of a second to import) are imported by the
methods that write or read rows, so ``bughunt sql`` does not pay for them.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import duckdb
from tenacity import (
    Retrying,
    retry_if_exception,
    stop_after_delay,
    wait_random_exponential,
)

from bughunt.errors import (
    InputError,
    LedgerFileError,
    LedgerLockedError,
    ReadOnlyQueryError,
    TerminalError,
)
from bughunt.safeio import special_file
from ledger._file import (
    check_blocks,
    check_is_ledger,
    check_whole,
    is_damage,
    is_unwritable,
    unreadable,
    unwritable,
)
from ledger._migrate import check_version, current_version, known_migrations, migrate

if TYPE_CHECKING:
    import pyarrow as pa

    from bughunt.models import Row

R = TypeVar("R", bound="Row")
T = TypeVar("T")

DEFAULT_PATH = ".bughunt/ledger.duckdb"
DEFAULT_LOCK_TIMEOUT_S = 120.0


@cache
def _tables() -> frozenset[str]:
    """The ledger tables rows are written to: one per row model."""
    from bughunt.models import ROW_MODELS

    return frozenset(m.__table__ for m in ROW_MODELS)


# Statement types a read-only query may contain. DuckDB classifies them for us
# (``extract_statements``), which is sturdier than matching keywords.
_READ_ONLY = {"SELECT", "EXPLAIN", "PRAGMA"}


def default_path() -> Path:
    """``BUGHUNT_LEDGER`` if set, else ``.bughunt/ledger.duckdb``."""
    return Path(os.environ.get("BUGHUNT_LEDGER") or DEFAULT_PATH)


RUNS_SUFFIX = ".runs"


def runs_folder(ledger: Path) -> Path:
    """The folder named after a ledger file that holds what its runs leave on disk.

    ``/some/dir/x.duckdb`` keeps its run folders (``x.runs/<run id>/``) and the corpus hash
    cache (``x.runs/.hash-cache.json``, which no run id can be named) in ``/some/dir/x.runs/``,
    so two ledgers in one folder (``/tmp`` say) never mix their runs or caches.
    """
    stem = ledger.name if ledger.suffix == RUNS_SUFFIX else ledger.stem
    return ledger.parent / f"{stem}{RUNS_SUFFIX}"


_Signature = tuple[int, int, int, int]

_TRUSTED: dict[str, tuple[_Signature, int, bool]] = {}
"""Ledger files this process found whole (or left so after its own write), by resolved path:
the file's (device, inode, size, mtime) then, its schema version, and whether every block was
read (:func:`~ledger._file.check_blocks`, before a write). An unchanged file is not inspected
again; any change (another process's write, a copy put in its place, a truncation) makes it a
stranger, inspected on the next open."""


def _signature(path: Path) -> _Signature | None:
    """The file's identity and state, or ``None`` while a write-ahead log is beside it (its
    content is then not all in the file)."""
    try:
        if Path(f"{path}.wal").exists():
            return None
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


LOCK_TIMEOUT_VAR = "BUGHUNT_LOCK_TIMEOUT"


def lock_timeout(given: float | None = None) -> float:
    """How long to wait for another process's lock: ``given``, else ``BUGHUNT_LOCK_TIMEOUT``,
    else :data:`DEFAULT_LOCK_TIMEOUT_S`. Anything but a finite number of seconds, 0 or more
    (``nan`` would wait forever, a negative value never), raises :class:`InputError` naming
    the variable."""
    text = os.environ.get(LOCK_TIMEOUT_VAR) if given is None else str(given)
    if not text:
        return DEFAULT_LOCK_TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise InputError(
            f"give a number of seconds, 0 or more, like 120 (got {text!r})", field=LOCK_TIMEOUT_VAR
        )
    return seconds


def _is_lock_error(exc: BaseException) -> bool:
    text = str(exc)
    return isinstance(exc, duckdb.IOException) and ("lock" in text.lower() or "Conflicting" in text)


class Ledger:
    """One DuckDB ledger file. Cheap to create; connections are short-lived."""

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, lock_timeout_s: float | None = None
    ) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.lock_timeout_s = lock_timeout(lock_timeout_s)
        self._schemas: dict[str, pa.Schema] = {}

    # --- connections -------------------------------------------------------

    def _connect(self, *, read_only: bool) -> duckdb.DuckDBPyConnection:
        if self.path.is_dir():
            raise LedgerFileError("is a folder, not a ledger file", file=str(self.path))
        # DuckDB opens the file by name, so this is checked before: a FIFO would block the
        # open for ever, a device (or a link to one) would be read or written as a database.
        special = special_file(self.path)
        if special is not None:
            raise LedgerFileError(f"is {special}, not a ledger file", file=str(self.path))

        def attempt() -> duckdb.DuckDBPyConnection:
            config: dict[str, Any] = {}
            if read_only:
                config["enable_external_access"] = False
            return duckdb.connect(str(self.path), read_only=read_only, config=config)

        retrying = Retrying(
            retry=retry_if_exception(_is_lock_error),
            wait=wait_random_exponential(multiplier=0.02, max=1.0),
            stop=stop_after_delay(self.lock_timeout_s),
            reraise=True,
        )
        try:
            return retrying(attempt)
        except duckdb.IOException as exc:
            if _is_lock_error(exc):
                raise LedgerLockedError(
                    f"another process held the ledger lock for more than "
                    f"{self.lock_timeout_s:.0f} s; wait for it to finish or raise "
                    f"BUGHUNT_LOCK_TIMEOUT (DuckDB said: {exc})",
                    file=str(self.path),
                ) from exc
            raise unreadable(self.path, exc) from exc
        except duckdb.Error as exc:
            raise unreadable(self.path, exc) from exc

    def _inspect(self, con: duckdb.DuckDBPyConnection, *, writing: bool) -> int:
        check_whole(con, self.path)
        if writing:
            check_blocks(con, self.path)
        version = check_version(con, str(self.path))
        check_is_ledger(con, self.path, version)
        if not writing and version == 0:
            raise LedgerFileError(
                "holds no ledger yet (an empty database): run `bughunt migrate` "
                "or point --ledger / BUGHUNT_LEDGER at a ledger",
                file=str(self.path),
            )
        return version

    def check_readable(self) -> None:
        """Refuse a path that holds no whole ledger to read, changing nothing.

        Raises :class:`TerminalError` when there is no file, and
        :class:`LedgerFileError` for a folder, a file that is not DuckDB, a
        truncated or damaged file, a database that is not a ledger, or an empty
        database (no ledger yet).
        """
        self._checked_version(writing=False)

    def check_writable(self) -> None:
        """Refuse a path a ledger cannot be written to, changing nothing (as
        :meth:`writable_version` does)."""
        self._checked_version(writing=True)

    def writable_version(self) -> int:
        """The schema version a write to this path starts from: 0 for a file that does not
        exist yet (the write makes it) or an empty database. Changes nothing.

        Raises :class:`LedgerFileError` for a folder, a path whose folder cannot be
        made, a file that is not DuckDB, a truncated or damaged file, or a
        database that is not a ledger.
        """
        return self._checked_version(writing=True)

    def _checked_version(self, *, writing: bool) -> int:
        """The file's schema version once it is known to be a whole ledger (or, when
        ``writing``, a path one can be made at: version 0)."""
        if not self.path.exists() and writing:
            self._check_can_make()
            return 0
        if not self.path.exists():
            raise TerminalError(
                "no ledger here yet: run `bughunt run nightly` or `bughunt ingest` first, "
                "or point --ledger / BUGHUNT_LEDGER at an existing file",
                file=str(self.path),
            )
        con = self._connect(read_only=True)
        try:
            with self._damage_named():
                return self._inspect(con, writing=writing)
        finally:
            con.close()

    @contextmanager
    def _damage_named(self) -> Iterator[None]:
        """A DuckDB error that means the file is damaged becomes a LedgerFileError naming it."""
        try:
            yield
        except duckdb.Error as exc:
            if is_unwritable(exc):
                raise unwritable(self.path, exc) from exc
            if is_damage(exc):
                raise unreadable(self.path, exc) from exc
            raise

    def _check_can_make(self) -> None:
        """Refuse a new ledger path whose folder cannot be made (a file is in the way)."""
        for folder in self.path.parents:
            if folder.exists():
                if not folder.is_dir():
                    raise LedgerFileError(
                        f"cannot be made: {folder} is a file, not a folder", file=str(self.path)
                    )
                return

    @contextmanager
    def _checked(
        self, con: duckdb.DuckDBPyConnection, *, writing: bool
    ) -> Iterator[duckdb.DuckDBPyConnection]:
        """``con`` once the file is known to be a whole ledger; damage found later is named too.

        The inspection (whole blocks, schema version, a ledger at all) is
        skipped when the file is exactly as this process last found or left
        it (:data:`_TRUSTED`): it costs tens of milliseconds per open, and a
        run opens the ledger for every checkpoint.
        """
        key = str(self.path.resolve())
        latest = len(known_migrations())
        trusted = _TRUSTED.get(key)
        signature = _signature(self.path)
        version = None
        blocks = False
        if trusted is not None and signature is not None and trusted[0] == signature:
            version, blocks = trusted[1], trusted[2]
        ok = False
        try:
            with self._damage_named():
                if version is None or (not writing and version == 0):
                    version = self._inspect(con, writing=writing)
                    blocks = blocks or writing
                elif writing and not blocks:  # found whole by a read: its blocks never read
                    check_blocks(con, self.path)
                    blocks = True
                if writing and version < latest:
                    migrate(con, str(self.path))
                    version = latest
                yield con
            ok = True
        finally:
            con.close()
            _TRUSTED.pop(key, None)
            after = _signature(self.path) if ok else None
            if after is not None and version is not None:
                _TRUSTED[key] = (after, version, blocks)

    @contextmanager
    def writer(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A migrated read-write connection, closed on exit (releases the file lock)."""
        self._check_can_make()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._checked(self._connect(read_only=False), writing=True) as con:
            yield con

    @contextmanager
    def reader(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only connection, closed on exit. The file must exist."""
        if not self.path.exists():
            raise TerminalError(
                "no ledger here yet: run `bughunt run nightly` or `bughunt ingest` first, "
                "or point --ledger / BUGHUNT_LEDGER at an existing file",
                file=str(self.path),
            )
        with self._checked(self._connect(read_only=True), writing=False) as con:
            yield con

    def migrate(self) -> None:
        """Create the file if missing and apply every missing migration."""
        with self.writer():
            pass

    # --- writes --------------------------------------------------------------

    def _schema(self, con: duckdb.DuckDBPyConnection, table: str) -> pa.Schema:
        if table not in self._schemas:
            cols = con.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = ? ORDER BY ordinal_position",
                [table],
            ).fetchall()
            if not cols:
                raise TerminalError(f"ledger has no table {table!r}", file=str(self.path))
            import pyarrow as pa

            from ledger._codec import arrow_type

            self._schemas[table] = pa.schema([(name, arrow_type(t)) for name, t in cols])
        return self._schemas[table]

    def write_arrow(self, batches: Mapping[str, pa.Table]) -> dict[str, int]:
        """Append Arrow tables to ledger tables, all in one transaction.

        Columns are matched by name; a column the table lacks fails the whole
        write and nothing is stored. Returns rows written per table.
        """
        with self.writer() as con:
            return self._insert(con, batches)

    def _insert(
        self, con: duckdb.DuckDBPyConnection, batches: Mapping[str, pa.Table]
    ) -> dict[str, int]:
        counts: dict[str, int] = {}
        con.execute("BEGIN TRANSACTION")
        try:
            for table, data in batches.items():
                if table not in _tables():
                    raise TerminalError(f"not a ledger table: {table!r}")
                con.register("_bughunt_batch", data)
                try:
                    # Identifiers come from the closed _tables() set above, never from input.
                    con.execute(f'INSERT INTO "{table}" BY NAME SELECT * FROM _bughunt_batch')  # noqa: S608
                finally:
                    con.unregister("_bughunt_batch")
                counts[table] = counts.get(table, 0) + data.num_rows
            con.execute("COMMIT")
        except BaseException:
            # A fatal error (a full disk) may have ended the transaction and closed the
            # database to writes already: nothing was stored, and the first error says why.
            with suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise
        return counts

    def write(self, rows: Sequence[Row]) -> dict[str, int]:
        """Append pydantic rows (any mix of row models) in one transaction, through Arrow."""
        from ledger._codec import rows_to_arrow

        by_model: dict[type[Row], list[Row]] = defaultdict(list)
        for row in rows:
            by_model[type(row)].append(row)
        with self.writer() as con:
            batches = {
                model.__table__: rows_to_arrow(model, group, self._schema(con, model.__table__))
                for model, group in by_model.items()
            }
            return self._insert(con, batches)

    # --- reads -----------------------------------------------------------------

    def query_arrow(
        self,
        sql: str,
        params: Sequence[Any] | None = None,
        *,
        needs: tuple[int, str] | None = None,
    ) -> pa.Table:
        """Run a read-only query and return Arrow.

        ``needs=(version, what)``: the query reads what migration ``version`` made; a ledger
        at an older schema version raises :class:`TerminalError` saying ``what`` needs it and
        to run ``bughunt migrate`` (a reader never migrates).
        """
        with self.reader() as con:
            if needs is not None:
                version = current_version(con)
                if version < needs[0]:
                    raise TerminalError(
                        f"the ledger is at schema version {version}; {needs[1]} need "
                        f"{needs[0]}: run `bughunt migrate`",
                        file=str(self.path),
                    )
            return con.sql(sql, params=list(params) if params else None).to_arrow_table()

    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """Run a read-only query and return plain rows."""
        return list(self.query_arrow(sql, params).to_pylist())

    def read(self, model: type[R], where: str = "", params: Sequence[Any] | None = None) -> list[R]:
        """Every row of ``model``'s table (optionally filtered) as model instances."""
        # The table name is a class constant; ``where`` is code, never user input.
        sql = f'SELECT * FROM "{model.__table__}" {where}'  # noqa: S608
        from ledger._codec import arrow_to_rows

        return arrow_to_rows(model, self.query_arrow(sql, params))

    def user_query(
        self, sql: str, *, timeout_s: float | None = None, max_rows: int | None = None
    ) -> list[dict[str, Any]]:
        """Run a statement typed by a user (``bughunt sql``): read-only, or refused.

        Refused before running: anything but SELECT / EXPLAIN / PRAGMA, and
        more than one statement. The connection is read-only with external
        access off, so even a SELECT cannot write files or attach databases.
        The rows come back as Python values straight from DuckDB (no Arrow:
        the command stays light). At most ``max_rows + 1`` rows are fetched
        (one more than asked tells the caller there are more); a query still
        running after ``timeout_s`` is stopped and raises
        :class:`ReadOnlyQueryError` saying so. Ctrl-C stops it too
        (``KeyboardInterrupt``): the query runs in a thread, so the main thread
        is free to hear the signal and interrupt DuckDB.
        """
        _check_read_only(sql)
        with self.reader() as con:

            def run() -> list[dict[str, Any]]:
                con.execute(sql)
                if con.description is None:  # a PRAGMA that returns nothing
                    return []
                columns = [d[0] for d in con.description]
                found = con.fetchall() if max_rows is None else con.fetchmany(max_rows + 1)
                return [dict(zip(columns, row, strict=True)) for row in found]

            try:
                return _interruptible(con, run, timeout_s)
            except duckdb.Error as exc:
                raise ReadOnlyQueryError(_first_line(str(exc))) from exc

    def user_export(
        self,
        sql: str,
        write: Callable[[pa.RecordBatchReader], T],
        *,
        timeout_s: float | None = None,
        batch_rows: int = 100_000,
    ) -> T:
        """``write`` given a user's read-only statement (checked as :meth:`user_query` checks
        it) as a stream of Arrow record batches, read while the connection is open
        (``bughunt export``); what ``write`` returned. Stopped, as :meth:`user_query` is, after
        ``timeout_s`` (:class:`ReadOnlyQueryError`) or on Ctrl-C (``KeyboardInterrupt``).
        """
        _check_read_only(sql)
        with self.reader() as con:

            def run() -> T:
                reader: pa.RecordBatchReader = con.sql(sql).to_arrow_reader(batch_rows)
                return write(reader)

            try:
                return _interruptible(con, run, timeout_s)
            except duckdb.Error as exc:
                raise ReadOnlyQueryError(_first_line(str(exc))) from exc

    def relations(self) -> list[str]:
        """The names of the ledger's tables and views (what ``bughunt export --table`` takes)."""
        rows = self.query(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'main' ORDER BY table_name"
        )
        return [str(r["table_name"]) for r in rows]


def _first_line(text: str) -> str:
    """DuckDB's message without the query it quotes on the lines below."""
    return text.strip().splitlines()[0] if text.strip() else text


def _interruptible(
    con: duckdb.DuckDBPyConnection, work: Callable[[], T], timeout_s: float | None
) -> T:
    """``work()`` on ``con`` in a thread, interrupted after ``timeout_s`` or on Ctrl-C.

    DuckDB runs a query without returning to Python, so neither a timer in
    this thread nor Python's SIGINT handler would get a turn: the main thread
    waits in short steps instead, and calls ``con.interrupt()`` (which makes
    the query raise ``duckdb.InterruptException``) when the time is up, and
    raises :class:`ReadOnlyQueryError` saying so; on Ctrl-C it interrupts the
    query and raises ``KeyboardInterrupt`` again.
    """
    done: dict[str, Any] = {}
    # Completion is an Event, not Thread.join/is_alive: a join that Ctrl-C interrupts leaves
    # is_alive() False while the thread still runs (CPython 3.11).
    finished = threading.Event()

    def target() -> None:
        try:
            done["value"] = work()
        except BaseException as exc:  # handed to the waiting thread
            done["error"] = exc
        finally:
            finished.set()

    thread = threading.Thread(target=target, name="bughunt-user-query", daemon=True)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    thread.start()
    try:
        while not finished.wait(0.05):
            if deadline is not None and time.monotonic() >= deadline:
                _stop(con, finished)
                # Whatever the interrupted work raised (DuckDB's error, or pyarrow's while it
                # read batches), the reason is the time.
                raise ReadOnlyQueryError(
                    f"stopped: the query ran longer than {timeout_s:g} s (raise --timeout)"
                ) from done.get("error")
    except KeyboardInterrupt:
        _stop(con, finished)
        raise
    if "error" in done:
        raise done["error"]
    return cast(T, done["value"])


def _stop(con: duckdb.DuckDBPyConnection, finished: threading.Event) -> None:
    """Interrupt ``con`` until its query's thread has ``finished`` (an interrupt that comes
    before the query starts, or between two of its calls, is lost)."""
    while not finished.is_set():
        try:
            con.interrupt()
            finished.wait(0.05)
        except KeyboardInterrupt:  # Ctrl-C again: it is being stopped
            continue


def _check_read_only(sql: str) -> None:
    """Refuse, before running, anything but one SELECT / EXPLAIN / PRAGMA statement."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise ReadOnlyQueryError(f"could not parse the query: {exc}") from exc
    if len(statements) != 1:
        raise ReadOnlyQueryError(f"give exactly one statement (got {len(statements)})")
    kind = statements[0].type.name
    if kind not in _READ_ONLY:
        raise ReadOnlyQueryError(
            f"only read-only statements are allowed here (SELECT, EXPLAIN, PRAGMA); this is {kind}"
        )
