"""The DuckDB store: benchmark runs and per-request rows in one embedded file.

* Schema versioned in ``meta``; :data:`MIGRATIONS` bring any older file forward on open.
* ``runs``: one row per benchmark run, columns :data:`specviz.schema.RUN_COLUMNS`.
  ``requests``: per-request rows where a file has them. ``imports``: one row per imported file.
* Imports are transactional (a file goes in whole or not at all) and idempotent by content hash.
* :meth:`Store.query` runs a user's SQL in :mod:`specviz.sandbox` over Arrow copies of the tables.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from . import importers, sandbox
from .errors import Notice, SpecvizError
from .importers import user_csv
from .importers.base import IngestError
from .schema import MIGRATIONS, REQUEST_COLUMNS, RUN_COLUMNS, SCHEMA_VERSION

__all__ = ["Store", "StoreError", "ImportResult", "SCHEMA_VERSION", "MIGRATIONS"]

class StoreError(SpecvizError):
    """The store cannot be opened or written; the file is left as it was."""


_QUANTILES = (("mean", None), ("p50", 0.5), ("p90", 0.9), ("p99", 0.99))


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


@dataclass
class ImportResult:
    """What happened to one file."""

    file: str
    status: str  # "imported" or "skipped"
    format: str = ""
    runs: int = 0
    requests: int = 0
    warnings: list[Notice] = field(default_factory=list)
    message: str = ""
    unmatched_columns: list[str] = field(default_factory=list)  # CSV columns kept only in extra


def _check_size(name: str, size: int, max_bytes: int | None) -> None:
    if max_bytes is not None and size > max_bytes:
        raise IngestError("ingest.too_large", name, size=size, limit=max_bytes)


_NOT_REGULAR = ((stat.S_ISDIR, "directory"), (stat.S_ISCHR, "device"), (stat.S_ISBLK, "device"),
                (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"))


def _require_regular(name: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = next((kind for test, kind in _NOT_REGULAR if test(mode)), "other")
        raise IngestError(f"ingest.not_regular.{kind}", name)


def _read_regular_file(path: Path, max_bytes: int | None) -> bytes:
    """The content of a regular file (symlinks followed), read with a bound: a device such as
    /dev/zero, a FIFO, a socket or a directory is refused before it is read."""
    name = str(path)
    try:
        _require_regular(name, os.stat(path).st_mode)
        # O_NONBLOCK: a FIFO put in the file's place after the stat cannot block the open.
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
            info = os.fstat(file.fileno())
            _require_regular(name, info.st_mode)  # what was opened, not only what was looked at
            _check_size(name, info.st_size, max_bytes)  # before reading it into memory
            data = file.read(info.st_size + 1)
    except (OSError, MemoryError) as exc:
        raise importers.as_ingest_error(name, exc) from None
    if len(data) > info.st_size:
        raise IngestError("ingest.grew", name)
    return data


def _delete_import(cur: duckdb.DuckDBPyConnection, content_hash: str) -> int:
    """Delete one imported file's runs, requests and imports row (inside the caller's transaction)."""
    removed = cur.execute("SELECT count(*) FROM runs WHERE content_hash = ?", [content_hash]).fetchone()[0]
    cur.execute("DELETE FROM requests WHERE run_id IN (SELECT run_id FROM runs WHERE content_hash = ?)",
                [content_hash])
    cur.execute("DELETE FROM runs WHERE content_hash = ?", [content_hash])
    cur.execute("DELETE FROM imports WHERE content_hash = ?", [content_hash])
    return removed


def _rollback(cur: duckdb.DuckDBPyConnection) -> None:
    """Roll back if a transaction is still open (a failed COMMIT has already ended it)."""
    try:
        cur.execute("ROLLBACK")
    except duckdb.TransactionException:
        pass


def _sql_text(value: Any) -> str:
    return "NULL" if value is None else "'" + str(value).replace("'", "''") + "'"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Store:
    """One DuckDB file of runs. Safe to share between threads: each call uses its own cursor.

    Parameters
    ----------
    path : str or Path
        The database file (created with the current schema if missing) or ``":memory:"``.
    lock_timeout_s : float
        How long to wait for another process that holds the file (DuckDB allows one writer process).
    """

    def __init__(self, path: str | Path, lock_timeout_s: float = 10.0) -> None:
        self.path = str(path)
        self._con, self.read_only = self._connect(lock_timeout_s)
        self._snapshot_cache: tuple[tuple[int, int], sandbox.Snapshot] | None = None
        self._snapshot_lock = threading.Lock()
        try:
            self._migrate()
        except BaseException:
            self._con.close()
            raise

    def _connect(self, lock_timeout_s: float) -> tuple[duckdb.DuckDBPyConnection, bool]:
        """Open the file read-write, or read-only where it cannot be written; refuse what is not a
        DuckDB file before DuckDB touches it (it would try to load an extension for an SQLite file),
        and a DuckDB file that is not a specviz store before it is opened for writing: an existing
        file is first looked at read-only (which replays a pending WAL in memory, writing nothing)."""
        if self.path == ":memory:":
            return duckdb.connect(self.path, config=sandbox.NO_EXTENSIONS), False
        path = Path(self.path)
        deadline = time.monotonic() + lock_timeout_s
        if path.exists():
            if not path.is_file():
                raise StoreError("store.not_a_file", path=self.path)
            with open(path, "rb") as f:
                head = f.read(16)
            if head.startswith(b"SQLite format 3"):
                raise StoreError("store.sqlite", path=self.path)
            if head and head[8:12] != b"DUCK":
                raise StoreError("store.not_duckdb", path=self.path)
            read_only = not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK)
            if head:  # an empty file is a new store: DuckDB writes its header
                look = self._open(True, deadline, lock_timeout_s)
                try:
                    self._inspect(look)
                finally:
                    look.close()
        else:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError("store.folder", path=str(path.parent), detail=exc.strerror) from None
            if not os.access(path.parent, os.W_OK):
                raise StoreError("store.folder", path=str(path.parent), detail="not writable")
            read_only = False
        return self._open(read_only, deadline, lock_timeout_s), read_only

    def _open(self, read_only: bool, deadline: float, lock_timeout_s: float) -> duckdb.DuckDBPyConnection:
        while True:
            try:
                return duckdb.connect(self.path, read_only=read_only, config=sandbox.NO_EXTENSIONS)
            except duckdb.Error as exc:
                # DuckDB has no type of its own for "another process holds the file".
                if not isinstance(exc, duckdb.IOException) or "lock" not in str(exc).lower():
                    raise StoreError("store.cannot_open", path=self.path, detail=str(exc).splitlines()[0]) from None
                if time.monotonic() > deadline:
                    raise StoreError("store.locked", path=self.path, seconds=lock_timeout_s) from None
                time.sleep(0.1)

    def _inspect(self, con: duckdb.DuckDBPyConnection) -> int:
        """The schema version of an open file: 0 if it holds nothing (or only the ``meta`` table a
        first initialisation left empty); :class:`StoreError` for anything that is not a specviz
        store (other tables, views, macros, sequences, types or schemas, a ``meta`` of another
        shape or without a schema version) or whose version is not a number."""
        cur = con.cursor()
        try:
            objects = cur.execute(_OBJECTS_SQL).fetchall()
            if not objects:
                return 0
            names = [f"{kind} {name if schema in ('main', name) else schema + '.' + name}"
                     for kind, schema, name in objects]
            foreign = StoreError("store.foreign", path=self.path, tables=", ".join(sorted(names)[:5]))
            tables = {name for kind, schema, name in objects if kind == "table" and schema == "main"}
            if "meta" not in tables:
                raise foreign
            columns = cur.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
                                  "current_database() AND schema_name = 'main' AND table_name = 'meta' "
                                  "ORDER BY column_index").fetchall()
            if columns != [("key", "VARCHAR"), ("value", "VARCHAR")]:
                raise foreign
            rows = cur.execute("SELECT value FROM meta WHERE key = 'schema_version' LIMIT 2").fetchall()
            if not rows:  # a first initialisation cut short left an empty meta, and nothing else
                if len(objects) == 1 and not cur.execute("SELECT count(*) FROM meta").fetchone()[0]:
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
        finally:
            cur.close()

    # ----------------------------------------------------------------------------- schema
    def _migrate(self) -> None:
        """Bring the schema to :data:`SCHEMA_VERSION`; refuse, without writing, a file that is not a
        specviz store or comes from a newer specviz."""
        cur = self._con.cursor()
        version = self._inspect(self._con)
        if version > SCHEMA_VERSION:
            raise StoreError("store.newer", path=self.path, version=version, known=SCHEMA_VERSION)
        if version < SCHEMA_VERSION and self.read_only:
            raise StoreError("store.read_only_old", path=self.path, version=version, known=SCHEMA_VERSION)
        for step in range(version, SCHEMA_VERSION):
            cur.execute("BEGIN TRANSACTION")
            try:
                if step == 0:  # in the first step's transaction: no file is left with meta alone
                    cur.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
                cur.execute(MIGRATIONS[step])
                cur.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(step + 1)])
                cur.execute("COMMIT")
            except BaseException:
                _rollback(cur)
                raise

    def _require_writable(self) -> None:
        if self.read_only:
            raise StoreError("store.read_only", path=self.path)

    @property
    def schema_version(self) -> int:
        """The schema version of the open file."""
        return int(self._con.cursor().execute(
            "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])

    def close(self) -> None:
        """Close the file and release the console's copy of the tables."""
        if self._snapshot_cache is not None:
            self._snapshot_cache[1].close()
        self._con.close()

    # ----------------------------------------------------------------------------- imports
    def import_path(self, path: Path, max_bytes: int | None = None,
                    csv_mapping: dict[str, str] | None = None) -> ImportResult:
        """:meth:`import_file` for a file on disk, named as given.

        Only a regular file is read (symlinks followed), and no more than its size when opened
        plus one byte, which ``max_bytes`` bounds. The path is opened once: what is imported is
        the content read then (never the path again, which DuckDB would expand as a glob or a ``~``
        and which another file may have taken by then).

        Raises
        ------
        specviz.importers.IngestError
            As :meth:`import_file`, and if the path is missing, unreadable, or a device, FIFO,
            socket or directory.
        """
        path = Path(path)
        data = _read_regular_file(path, max_bytes)
        name = os.fsencode(path).decode("utf-8", "replace")  # stored: bytes of no UTF-8 name become U+FFFD
        return self.import_file(name, data, None, csv_mapping)

    def import_file(self, name: str, data: bytes, max_bytes: int | None = None,
                    csv_mapping: dict[str, str] | None = None, replace: bool = False,
                    origin: str = "user") -> ImportResult:
        """Import one result file, whole or not at all.

        Parameters
        ----------
        name : str
            The file's name as the user gave it (stored as ``source_file``; never used as a path).
        data : bytes
            Its content.
        max_bytes : int, optional
            Refuse larger files.
        csv_mapping : dict, optional
            For a plain CSV: the user's column name → canonical column, for names the synonyms miss.
        replace : bool
            Import content that is already stored again (with a new mapping): its old runs and
            requests are deleted in the same transaction.
        origin : str
            ``"user"``, or ``"example"`` for the shipped examples (:data:`specviz.schema.ORIGINS`).

        Returns
        -------
        ImportResult
            ``status="skipped"`` if the same content was imported before.

        Raises
        ------
        specviz.importers.IngestError
            For anything wrong with the file: too large, empty, binary, malformed, of no known
            shape, too deeply nested, too dense for ``SPECVIZ_IMPORT_MEMORY_BYTES``, and any other
            exception reading it raised (:class:`specviz.importers.UnrecognisedColumnsError` for a CSV
            none of whose columns is recognised); nothing is written.
        """
        self._require_writable()
        _check_size(name, len(data), max_bytes)
        content_hash = hashlib.sha256(data).hexdigest()
        cur = self._con.cursor()
        if not replace and cur.execute("SELECT 1 FROM imports WHERE content_hash = ?", [content_hash]).fetchone():
            return ImportResult(name, "skipped", message="already imported")
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        unmatched: list[str] = []
        fmt = ""
        try:
            parsed = importers.parse(name, data)  # before the transaction, which stays short
            fmt = parsed.format
            cur.execute("BEGIN TRANSACTION")
            if replace:
                _delete_import(cur, content_hash)
            if fmt == "csv":
                runs, requests, warnings, unmatched = self._import_csv(cur, name, data, content_hash, now,
                                                                       csv_mapping or {})
            else:
                runs, requests, warnings = self._insert_parsed(cur, name, parsed, content_hash, now)
            cur.execute("INSERT INTO imports (content_hash, source_file, source_format, imported_at, runs, requests, "
                        "warnings, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [content_hash, name, fmt, now, runs, requests,
                         json.dumps([w.to_json() for w in warnings]), origin])
            cur.execute("COMMIT")
        except BaseException as exc:
            _rollback(cur)  # nothing to undo if the file failed before BEGIN
            if isinstance(exc, duckdb.Error) and content_hash[:12] in str(exc):
                # Another thread is importing the same content (the key of its imports row, or the
                # run ids, which start with the hash's first 12 characters): it may not be committed yet.
                return self._await_concurrent_import(cur, name, fmt, content_hash)
            if isinstance(exc, duckdb.IOException):  # the disk, not the file: full, or a write refused
                raise StoreError("store.write_failed", detail=str(exc).splitlines()[0]) from None
            if isinstance(exc, duckdb.Error):  # the file's values, not the store, were at fault
                raise IngestError("ingest.not_stored", name, detail=str(exc).splitlines()[0]) from None
            if isinstance(exc, Exception) and not isinstance(exc, SpecvizError):
                # Anything else reading this file raised (deep nesting, a huge number, no memory
                # left, a parser's bug) is this file's error, not the batch's end. KeyboardInterrupt
                # and SystemExit go on; so does a SpecvizError, which is about the store, not the file.
                raise importers.as_ingest_error(name, exc) from None
            raise
        return ImportResult(name, "imported", fmt, runs, requests, warnings, unmatched_columns=unmatched)

    def _await_concurrent_import(self, cur: duckdb.DuckDBPyConnection, name: str, fmt: str,
                                 content_hash: str, wait_s: float = 10.0) -> ImportResult:
        """Wait for a concurrent import of the same content to commit, then report it as done."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if cur.execute("SELECT 1 FROM imports WHERE content_hash = ?", [content_hash]).fetchone():
                return ImportResult(name, "skipped", fmt, message="already imported")
            time.sleep(0.05)
        raise IngestError("ingest.concurrent", name)

    def _insert_parsed(self, cur: duckdb.DuckDBPyConnection, name: str, parsed: importers.Parsed,
                       content_hash: str, now: datetime) -> tuple[int, int, list[Notice]]:
        if not parsed.runs:
            raise IngestError("ingest.no_runs", name)
        prefix = content_hash[:12]
        # Column by column, and only the columns some run has (the rest are NULL): a dict of every
        # column for each run would cost more than the run itself.
        present = {column for run in parsed.runs for column in run}
        columns: dict[str, Any] = {column: [run.get(column) for run in parsed.runs]
                                   for column in RUN_COLUMNS if column in present}
        columns.update(run_id=[f"{prefix}-{index}" for index in range(len(parsed.runs))], source_file=name,
                       source_format=parsed.format, imported_at=now, content_hash=content_hash)
        casts = ", ".join(f"CAST({_quote(c)} AS {RUN_COLUMNS[c]}) AS {_quote(c)}" for c in columns)
        cur.register("incoming_runs", pd.DataFrame(columns))
        cur.execute(f"INSERT INTO runs BY NAME SELECT {casts} FROM incoming_runs")
        cur.unregister("incoming_runs")
        if not parsed.requests.empty:  # run ids are made by DuckDB, not as a Python string per request
            cur.register("incoming_requests", parsed.requests)
            cur.execute(f"INSERT INTO requests BY NAME SELECT '{prefix}-' || CAST(run_index AS VARCHAR) AS run_id, "
                        "* EXCLUDE (run_index) FROM incoming_requests")
            cur.unregister("incoming_requests")
        return len(parsed.runs), len(parsed.requests), parsed.warnings

    def _import_csv(self, cur: duckdb.DuckDBPyConnection, name: str, data: bytes, content_hash: str,
                    now: datetime, csv_mapping: dict[str, str]) -> tuple[int, int, list[str], list[str]]:
        """A user's CSV through DuckDB: columns matched by synonym, units converted, one row per run
        or, for per-request files, grouped into runs by their dimension columns. DuckDB reads, in
        one pass, a private copy of exactly the bytes that were checked and hashed: a temporary
        file with no name, given to it as ``/proc/self/fd/N`` (no glob or ``~`` for it to expand,
        nothing another process can put in its place)."""
        with tempfile.TemporaryFile() as tmp:
            tmp.write(data)
            tmp.flush()
            return self._import_csv_file(cur, name, f"/proc/self/fd/{tmp.fileno()}", content_hash, now,
                                         csv_mapping)

    def _import_csv_file(self, cur: duckdb.DuckDBPyConnection, name: str, source: str, content_hash: str,
                         now: datetime, csv_mapping: dict[str, str]
                         ) -> tuple[int, int, list[Notice], list[str]]:
        reader = "read_csv(?, header = true)"
        try:
            described = cur.execute(f"DESCRIBE SELECT * FROM {reader}", [source]).fetchall()
        except duckdb.Error as exc:
            raise IngestError("ingest.csv_unreadable", name, detail=str(exc).splitlines()[0]) from None
        plan = user_csv.plan_columns(name, [(column, kind) for column, kind, *_ in described], csv_mapping)
        mapped, unknown, warnings = plan.mapped, plan.unknown, list(plan.notices)

        def value(canonical: str) -> str:
            column, kind, factor = mapped[canonical]
            target = RUN_COLUMNS.get(canonical, "DOUBLE")
            if target == "VARCHAR":
                return f"CAST({_quote(column)} AS VARCHAR)"
            # Text, and whatever else DuckDB's sniffer saw (a DATE for "inf", a BOOLEAN), is read as
            # a number where it is one (thousands separators dropped), else NULL.
            number = (f"CAST({_quote(column)} AS DOUBLE)" if kind in ("BIGINT", "DOUBLE")
                      else f"TRY_CAST(replace(CAST({_quote(column)} AS VARCHAR), ',', '') AS DOUBLE)")
            if factor != 1.0:
                number = f"{number} * {factor!r}"
            if target in ("INTEGER", "BIGINT"):  # whole numbers that fit, else NULL
                return f"CASE WHEN {number} >= 0 AND {number} = floor({number}) THEN TRY_CAST({number} AS {target}) END"
            finite = "" if canonical == "request_rate" else f" AND isfinite({number})"  # as the JSON parsers
            return f"CASE WHEN {number} >= 0{finite} THEN {number} END"

        extra = (f"to_json(struct_pack({', '.join(f'{_quote(c)} := {_quote(c)}' for c in unknown)}))"
                 if unknown else "NULL")
        prefix = content_hash[:12]
        dims = [d for d in user_csv.RUN_DIMENSIONS if d in mapped]
        try:
            if plan.per_request:
                selects = [f"{value(k)} AS {_quote(k.removeprefix('request:'))}" for k in mapped]
                # Rows are grouped by an integer hash of their dimensions; the text run_id is built
                # only while inserting (1M strings in a staged table cost more than the parse).
                group = f"hash({', '.join(value(d) for d in dims)})" if dims else "0"
                cur.execute(f"CREATE OR REPLACE TEMP TABLE staged AS SELECT {', '.join(selects)}, "
                            f"{extra}::JSON AS extra, {group} AS run_group FROM {reader}", [source])
                run_id = f"'{prefix}-' || CAST(run_group AS VARCHAR)"
                requests = cur.execute("SELECT count(*) FROM staged").fetchone()[0]
                if not requests:
                    raise IngestError("ingest.csv_no_rows", name)
                metrics = [k.removeprefix("request:") for k in mapped if k.startswith("request:") and k.endswith("_ms")]
                aggregates = ["count(*) AS num_requests"]
                for metric in metrics:
                    for statistic, q in _QUANTILES:
                        fn = f"avg({metric})" if q is None else f"quantile_cont({metric}, {q})"
                        aggregates.append(f"{fn} AS {statistic}_{metric.removesuffix('_ms')}_ms")
                columns = [_quote(d) for d in dims]
                cur.execute(f"""
                    INSERT INTO runs BY NAME
                    SELECT {run_id} AS run_id, {_sql_text(name)} AS source_file, 'csv' AS source_format,
                           TIMESTAMP '{now}' AS imported_at, '{content_hash}' AS content_hash,
                           {', '.join(columns + aggregates)}, '{{}}'::JSON AS extra
                    FROM staged GROUP BY run_group{', ' + ', '.join(columns) if columns else ''}""")
                request_cols = [c for c in REQUEST_COLUMNS if c not in ("run_id", "extra") and f"request:{c}" in mapped]
                cur.execute(f"INSERT INTO requests BY NAME SELECT {run_id} AS run_id, {', '.join(request_cols)}, "
                            f"extra FROM staged")
                cur.execute("DROP TABLE staged")  # after a failure, the rollback drops it
                runs = cur.execute("SELECT count(*) FROM runs WHERE content_hash = ?", [content_hash]).fetchone()[0]
            else:
                selects = [f"{value(k)} AS {_quote(k)}" for k in mapped]
                cur.execute(f"""
                    INSERT INTO runs BY NAME
                    SELECT '{prefix}-' || (row_number() OVER () - 1) AS run_id, {_sql_text(name)} AS source_file,
                           'csv' AS source_format, TIMESTAMP '{now}' AS imported_at,
                           '{content_hash}' AS content_hash, {', '.join(selects)},
                           coalesce({extra}::JSON, '{{}}'::JSON) AS extra
                    FROM {reader}""", [source])
                runs, requests = cur.execute("SELECT count(*) FROM runs WHERE content_hash = ?",
                                             [content_hash]).fetchone()[0], 0
                if not runs:
                    raise IngestError("ingest.csv_no_rows", name)
                if "acceptance_rate" in mapped:
                    over = cur.execute("SELECT count(*) FROM runs WHERE content_hash = ? AND acceptance_rate > 1",
                                       [content_hash]).fetchone()[0]
                    if over:
                        cur.execute("UPDATE runs SET acceptance_rate = acceptance_rate / 100 "
                                    "WHERE content_hash = ? AND acceptance_rate > 1", [content_hash])
                        warnings.append(Notice("warn.csv_percent_rows", rows=over))
        except duckdb.InvalidInputException as exc:  # a malformed row deep in the file
            raise IngestError("ingest.csv_unreadable", name, detail=str(exc).splitlines()[0]) from None
        return runs, requests, warnings, unknown

    def seed_examples(self, paths: list[Path]) -> list[ImportResult]:
        """Import the shipped example files once, on a store's first use; never again after that,
        so examples a user removed stay removed."""
        cur = self._con.cursor()
        if cur.execute("SELECT 1 FROM meta WHERE key = 'examples_seeded'").fetchone():
            return []
        results = [self.import_file(f"examples/{p.name}", p.read_bytes(), origin="example") for p in paths]
        cur.execute("INSERT OR REPLACE INTO meta VALUES ('examples_seeded', 'yes')")
        return results

    def remove_import(self, content_hash: str) -> int:
        """Delete one imported file's runs and requests (one transaction); returns the runs removed."""
        self._require_writable()
        cur = self._con.cursor()
        cur.execute("BEGIN TRANSACTION")
        try:
            removed = _delete_import(cur, content_hash)
            cur.execute("COMMIT")
        except BaseException:
            _rollback(cur)
            raise
        return removed

    # ----------------------------------------------------------------------------- reading
    def runs(self) -> pd.DataFrame:
        """Every run with its canonical columns, oldest import first."""
        return self._con.cursor().execute(
            "SELECT * FROM runs ORDER BY imported_at, source_file, length(run_id), run_id").df()

    def imports(self) -> pd.DataFrame:
        """One row per imported file."""
        return self._con.cursor().execute("SELECT * FROM imports ORDER BY imported_at").df()

    def request_summary(self) -> pd.DataFrame:
        """Per run: request count and p50/p99 of TTFT and ITL from the ``requests`` table."""
        return self._con.cursor().execute("""
            SELECT r.run_id, any_value(runs.concurrency) AS concurrency, count(*) AS requests,
                   quantile_cont(ttft_ms, 0.5) AS p50_ttft_ms, quantile_cont(ttft_ms, 0.99) AS p99_ttft_ms,
                   quantile_cont(itl_ms, 0.5) AS p50_itl_ms, quantile_cont(itl_ms, 0.99) AS p99_itl_ms
            FROM requests r JOIN runs USING (run_id) GROUP BY r.run_id ORDER BY r.run_id""").df()

    # ----------------------------------------------------------------------------- console
    def _snapshot(self) -> sandbox.Snapshot:
        """The tables for the SQL sandbox, made again only when an import or a removal changed them
        (by this process or another)."""
        cur = self._con.cursor()
        version = cur.execute("SELECT count(*), bit_xor(hash(content_hash || CAST(imported_at AS VARCHAR))) "
                              "FROM imports").fetchall()[0]
        with self._snapshot_lock:
            if self._snapshot_cache is None or self._snapshot_cache[0] != version:
                fresh = sandbox.Snapshot({table: cur.sql(f"SELECT * FROM {table}").to_arrow_table()
                                          for table in ("runs", "requests", "imports")})
                self._snapshot_cache = (version, fresh)
            return self._snapshot_cache[1]

    def query(self, sql: str, limits: sandbox.Limits | None = None) -> sandbox.QueryResult:
        """Run one read-only statement of a user's SQL over ``runs``, ``requests`` and ``imports``
        in the sandbox (:mod:`specviz.sandbox`); the time limit includes preparing the copy.

        Raises
        ------
        specviz.sandbox.QueryError
            If the statement is refused, fails, or exceeds a limit; its key says which.
        """
        started = time.monotonic()
        limits = limits or sandbox.Limits.from_settings()
        sandbox.check_sql(sql, limits.max_sql_chars)  # before the copy is made: a refusal costs nothing
        return sandbox.run_query(sql, self._snapshot(), limits, started)
