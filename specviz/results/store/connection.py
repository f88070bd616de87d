"""The store's connections and transactions: one in-memory DuckDB per process (the hub) to which a
store file is attached for the span of each operation, the file checked and migrated once when a
store is made, and a transaction that commits whole or not at all.

Every operation opens its own connection and closes it when done, so the app, the command line and
a recorder can share one file: DuckDB lets one process at a time write a file and lets no other
process open it meanwhile, so each holds it only for one read or one transaction.
"""

from __future__ import annotations

import atexit
import itertools
import os
import re
import shutil
import tempfile
import threading
import time
import weakref
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import duckdb

from specviz.errors import Notice, SpecvizError, out_of_room
from specviz.results import sandbox
from specviz.results.schema import MIGRATIONS, SCHEMA_VERSION

__all__ = ["Connections", "StoreError", "hub_cursor", "sql_literal", "quote_identifier"]


class StoreError(SpecvizError):
    """The store cannot be opened or written; the file is left as it was."""


# Every object of the open file a user could have made (the current database's, not DuckDB's own).
_OBJECTS_SQL = """
SELECT 'table', schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database() AND NOT internal
UNION ALL SELECT 'view', schema_name, view_name FROM duckdb_views()
          WHERE database_name = current_database() AND NOT internal
UNION ALL SELECT 'sequence', schema_name, sequence_name FROM duckdb_sequences() WHERE database_name = current_database()
UNION ALL SELECT 'type', schema_name, type_name FROM duckdb_types() WHERE database_name = current_database() AND NOT internal
UNION ALL SELECT 'macro', schema_name, function_name FROM duckdb_functions()
          WHERE database_name = current_database() AND NOT internal
UNION ALL SELECT 'schema', schema_name, schema_name FROM duckdb_schemas()
          WHERE database_name = current_database() AND NOT internal
"""


def _tables_of(version: int) -> set[str]:
    """The tables a store of this schema version has."""
    return {"meta"} | {name.lower() for step in MIGRATIONS[:version]
                       for name in re.findall(r"CREATE TABLE (\w+)", step)}


def _preview(text: str | None) -> str:
    return repr(text) if text is None or len(text) <= 20 else repr(text[:20]) + "…"



def _rollback(cur: duckdb.DuckDBPyConnection) -> None:
    """Roll back if a transaction is still open (a failed COMMIT has already ended it)."""
    try:
        cur.execute("ROLLBACK")
    except duckdb.TransactionException:
        pass


def sql_literal(value: Any) -> str:
    """A value as an SQL literal (text quoted, NULL for None): for statements that take no parameters."""
    return "NULL" if value is None else "'" + str(value).replace("'", "''") + "'"


def quote_identifier(name: str) -> str:
    """A column or table name quoted for SQL."""
    return '"' + name.replace('"', '""') + '"'



_HUB_LOCK = threading.Lock()
_hub: duckdb.DuckDBPyConnection | None = None
_ALIASES = itertools.count()


_SPILL_PREFIX = "specviz-duckdb-"


def _remove_orphan_spill_folders() -> None:
    """Remove the spill folders of specviz processes that are gone: a process killed (SIGKILL, or
    SIGTERM, which runs no atexit) left its folder behind, empty or not. A folder is named after
    its process; one whose process still runs is another specviz's and is kept."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_SPILL_PREFIX}*-*"):
        pid = folder.name[len(_SPILL_PREFIX):].split("-", 1)[0]
        if not (pid.isascii() and pid.isdigit()) or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)  # no signal sent: whether the process exists
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:  # another user's process: not ours to clean
            continue


def hub_cursor() -> duckdb.DuckDBPyConnection:
    """A new connection to this process's one in-memory DuckDB (the hub), to which a store file is
    attached for the span of its operations: attaching a file takes a millisecond or two, while a
    DuckDB of its own for each connection would take tens (a new database registers every built-in
    function)."""
    global _hub
    with _HUB_LOCK:  # one hub per process, and its own connection is not for concurrent use
        if _hub is None:
            # What spills goes to a private folder: an in-memory DuckDB would make .tmp in the
            # working folder (a file opened on its own spilled beside itself).
            _remove_orphan_spill_folders()
            spill = tempfile.mkdtemp(prefix=f"{_SPILL_PREFIX}{os.getpid()}-")
            atexit.register(shutil.rmtree, spill, ignore_errors=True)
            _hub = duckdb.connect(":memory:", config={**sandbox.NO_EXTENSIONS, "temp_directory": spill})
        return _hub.cursor()


def _on_hub(sql: str) -> None:
    """Run one statement of the hub's own (an ATTACH or a DETACH) on a connection of its own."""
    with hub_cursor() as cur:
        cur.execute(sql)


class _SharedFile:
    """One store file as this process uses it: attached to the hub while at least one operation
    runs, detached (free for other processes) when the last one ends.

    The operations of this process share one attachment (DuckDB attaches a file once per
    database): a read joins whatever is attached; a write needs it read-write, so it waits until
    the reads of a read-only attachment are over, and reads that come after a waiting write wait
    for it (reads are short; an import should not wait behind a stream of them).
    """

    def __init__(self) -> None:
        self.alias = f"store_{next(_ALIASES)}"
        self._turn = threading.Condition()
        self._read_only: bool | None = None  # how the file is attached; None: it is not
        self._users = 0
        self._writers_waiting = 0

    def acquire(self, read_only: bool, deadline: float, attach: Callable[[bool], None]) -> bool:
        """Join the attachment, or make it with ``attach(read_only)`` if there is none (what that
        raises goes on); False if ``deadline`` (``time.monotonic()``) passed first."""
        def free() -> bool:
            return not self._writers_waiting if read_only else not self._users or self._read_only is False

        with self._turn:
            if not read_only:
                self._writers_waiting += 1
            try:
                if not self._turn.wait_for(free, max(0.0, deadline - time.monotonic())):
                    return False
                if not self._users:
                    attach(read_only)  # under the lock: whoever comes meanwhile needs the file too
                    self._read_only = read_only
                self._users += 1
                return True
            finally:
                if not read_only:
                    self._writers_waiting -= 1
                    self._turn.notify_all()  # reads held back for this write go on if it gave up

    def release(self) -> None:
        """End one operation; the last one detaches the file (a write's detach checkpoints it)."""
        with self._turn:
            self._users -= 1
            if not self._users:
                self._read_only = None
                self._turn.notify_all()
                try:
                    _on_hub(f"DETACH DATABASE {self.alias}")
                except duckdb.IOException:
                    # Detached, but the checkpoint that went with it failed (a full disk): what was
                    # committed is in the file's WAL, which the next open replays.
                    pass


# One _SharedFile per file while a Store of it exists, keyed by the resolved path (DuckDB resolves
# symbolic links too, and refuses to attach one file under two names).
_SHARED_FILES: weakref.WeakValueDictionary[str, _SharedFile] = weakref.WeakValueDictionary()
_SHARED_FILES_LOCK = threading.Lock()


def _shared_file(path: str) -> _SharedFile:
    with _SHARED_FILES_LOCK:
        shared = _SHARED_FILES.get(path)
        if shared is None:
            shared = _SHARED_FILES[path] = _SharedFile()
        return shared



class Connections:
    """A store file's connections, transactions, schema check and migrations; the base of
    :class:`specviz.results.store.Store`, whose docstring says how connections are shared.

    Parameters
    ----------
    path : str or Path
        The database file (created with the current schema if missing) or ``":memory:"``.
    lock_timeout_s : float
        How long one call waits for the file while another process holds it.

    Attributes
    ----------
    read_only : bool
        Whether the file can only be read here (a read-only file or folder): writes raise
        ``store.read_only``.
    """

    def __init__(self, path: str | Path, lock_timeout_s: float = 10.0) -> None:
        self.path = str(path)
        self.lock_timeout_s = lock_timeout_s
        self.read_only = False
        self._memory: duckdb.DuckDBPyConnection | None = None
        if self.path == ":memory:":
            self._memory = duckdb.connect(self.path, config=sandbox.NO_EXTENSIONS)
        else:
            # Absolute, as checked: DuckDB would read a leading ~ as the home folder, and a path
            # relative to a working folder that has changed since as another file.
            self._file = os.path.abspath(self.path)
            self._shared = _shared_file(os.path.realpath(self._file))
        try:
            self._prepare()
        except BaseException:
            self.close()
            raise

    def _prepare(self) -> None:
        """The first open: refuse what is not a DuckDB file before DuckDB touches it (it would try to
        load an extension for an SQLite file), and a DuckDB file that is not a specviz store before it
        is opened for writing: an existing file is first looked at read-only (which replays a pending
        WAL in memory, writing nothing). A file that cannot be written is used read-only; one of an
        older schema is migrated."""
        version = 0
        if self._memory is None and Path(self.path).exists():
            path = Path(self.path)
            if not path.is_file():
                raise StoreError("store.not_a_file", path=self.path)
            with open(path, "rb") as f:
                head = f.read(16)
            if head.startswith(b"SQLite format 3"):
                raise StoreError("store.sqlite", path=self.path)
            if head and head[8:12] != b"DUCK":
                raise StoreError("store.not_duckdb", path=self.path)
            self.read_only = not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK)
            if head:  # an empty file (DuckDB refuses to open one) is left to the connection's error
                with self._connection() as look:
                    version = self._inspect(look)
        elif self._memory is None:
            folder = Path(self.path).parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError("store.folder", path=str(folder), detail=exc.strerror) from None
            if not os.access(folder, os.W_OK):
                raise StoreError("store.folder", path=str(folder), detail=Notice("store.detail.not_writable"))
        self._check_version(version)
        if version < SCHEMA_VERSION:
            self._migrate()

    # ----------------------------------------------------------------------------- connections
    @contextmanager
    def _connection(self, read_only: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection for one operation (read-write if not ``read_only``), with the file as its
        default database; when the block ends it is closed, and the file is free again for other
        processes once no other operation of this one uses it.

        Raises
        ------
        StoreError
            ``store.read_only`` for a write to a read-only store; ``store.locked`` if another process
            held the file for ``lock_timeout_s``; ``store.busy`` if this process's own operations kept
            it waiting that long (reads of a read-only attachment keep a write waiting, a waiting
            write keeps the reads that come after it); ``store.cannot_open`` for any other failure.
        """
        if not read_only:
            self._require_writable()
        if self._memory is not None:
            cursor = self._memory.cursor()
            try:
                yield cursor
            finally:
                cursor.close()
            return
        deadline = time.monotonic() + self.lock_timeout_s
        if not self._shared.acquire(read_only or self.read_only, deadline,
                                    lambda attach_read_only: self._attach(attach_read_only, deadline)):
            raise StoreError("store.busy", path=self.path, seconds=self.lock_timeout_s)
        try:
            with hub_cursor() as con:
                con.execute(f"USE {self._shared.alias}")
                yield con
        finally:
            self._shared.release()

    def _attach(self, read_only: bool, deadline: float) -> None:
        """Attach the file to the hub, waiting until ``deadline`` while another process holds it."""
        options = "TYPE DUCKDB, READ_ONLY" if read_only else "TYPE DUCKDB"
        while True:
            try:
                _on_hub(f"ATTACH {sql_literal(self._file)} AS {self._shared.alias} ({options})")
                return
            except duckdb.Error as exc:
                # DuckDB has no type of its own for "another process holds the file".
                if not isinstance(exc, duckdb.IOException) or "lock" not in str(exc).lower():
                    raise StoreError("store.cannot_open", path=self.path, detail=str(exc).splitlines()[0]) from None
                if time.monotonic() > deadline:
                    raise StoreError("store.locked", path=self.path, seconds=self.lock_timeout_s) from None
                time.sleep(0.05)

    @contextmanager
    def _transaction(self, con: duckdb.DuckDBPyConnection | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """One transaction on ``con`` (default: a new read-write connection, closed afterwards):
        committed when the block ends, rolled back if it raises (and the exception passed on)."""
        with ExitStack() as stack:
            if con is None:
                con = stack.enter_context(self._connection(read_only=False))
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
                con.execute("COMMIT")
            except BaseException as exc:
                _rollback(con)
                if out_of_room(exc):
                    raise self.no_room(exc) from None
                raise

    def no_room(self, exc: BaseException) -> StoreError:
        """The error for a write refused for want of room (:func:`specviz.errors.out_of_room`), a
        failed COMMIT included (DuckDB raises it as a TransactionException, which read as another
        import's conflict): said as a full disk."""
        return StoreError("store.disk_full", path=self.path, detail=str(exc).splitlines()[0])

    def _inspect(self, con: duckdb.DuckDBPyConnection) -> int:
        """The schema version of an open file: 0 if it holds nothing (or only the ``meta`` table a
        first initialisation left empty); :class:`StoreError` for anything that is not a specviz
        store (other tables, views, macros, sequences, types or schemas, a ``meta`` of another
        shape or without a schema version) or whose version is not a number."""
        try:
            objects = con.execute(_OBJECTS_SQL).fetchall()
            if not objects:
                return 0
            names = [f"{kind} {name if schema in ('main', name) else schema + '.' + name}"
                     for kind, schema, name in objects]
            foreign = StoreError("store.foreign", path=self.path, tables=", ".join(sorted(names)[:5]))
            tables = {name for kind, schema, name in objects if kind == "table" and schema == "main"}
            if "meta" not in tables:
                raise foreign
            columns = con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
                                  "current_database() AND schema_name = 'main' AND table_name = 'meta' "
                                  "ORDER BY column_index").fetchall()
            if columns != [("key", "VARCHAR"), ("value", "VARCHAR")]:
                raise foreign
            rows = con.execute("SELECT value FROM meta WHERE key = 'schema_version' LIMIT 2").fetchall()
            if not rows:  # a first initialisation cut short left an empty meta, and nothing else
                if len(objects) == 1 and not con.execute("SELECT count(*) FROM meta").fetchone()[0]:
                    return 0
                raise foreign
            text = rows[0][0]
            if len(rows) > 1 or text is None or not re.fullmatch(r"[0-9]{1,9}", text):
                raise StoreError("store.bad_version", path=self.path, value=_preview(text))
            version = int(text)
            if version <= SCHEMA_VERSION and not _tables_of(version) <= tables or version == 0 and len(objects) > 1:
                raise foreign
            return version
        except duckdb.Error as exc:
            raise StoreError("store.cannot_open", path=self.path, detail=str(exc).splitlines()[0]) from None

    # ----------------------------------------------------------------------------- schema
    def _check_version(self, version: int) -> None:
        """Refuse a file from a newer specviz, and an older one that cannot be migrated here."""
        if version > SCHEMA_VERSION:
            raise StoreError("store.newer", path=self.path, version=version, known=SCHEMA_VERSION)
        if version < SCHEMA_VERSION and self.read_only:
            raise StoreError("store.read_only_old", path=self.path, version=version, known=SCHEMA_VERSION)

    def _migrate(self) -> None:
        """Bring the schema to :data:`SCHEMA_VERSION`, one transaction per step; the version is read
        again under the write lock (another process may have migrated the file since the look), and a
        file that is not a specviz store or comes from a newer specviz is refused without a write."""
        with self._connection(read_only=False) as con:
            version = self._inspect(con)
            self._check_version(version)
            for step in range(version, SCHEMA_VERSION):
                with self._transaction(con) as cur:
                    if step == 0:  # in the first step's transaction: no file is left with meta alone
                        cur.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
                    cur.execute(MIGRATIONS[step])
                    cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                                [str(step + 1)])

    def _require_writable(self) -> None:
        if self.read_only:
            raise StoreError("store.read_only", path=self.path)

    @property
    def schema_version(self) -> int:
        """The schema version of the file."""
        with self._connection() as con:
            return int(con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])

    def close(self) -> None:
        """Close an in-memory store's database; a store holds no connection to a file between calls."""
        if self._memory is not None:
            self._memory.close()
