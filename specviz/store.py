"""The DuckDB store: benchmark runs and per-request rows in one embedded file, and a SQL sandbox.

* Schema versioned in ``meta``; :data:`MIGRATIONS` bring any older file forward on open.
* ``runs``: one row per benchmark run, columns :data:`specviz.ingest.RUN_COLUMNS`.
  ``requests``: per-request rows where a file has them. ``imports``: one row per imported file.
* Imports are transactional (a file goes in whole or not at all) and idempotent by content hash.
* :meth:`Store.query` runs a user's SQL in a separate, locked-down in-memory DuckDB that holds Arrow
  copies of the tables: one statement, SELECT/WITH/EXPLAIN/DESCRIBE/SUMMARIZE/SHOW only, no file or
  network access, no extensions, no settings, a memory and thread limit, a time limit enforced
  with ``interrupt()`` and a row cap.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from . import ingest

__all__ = ["Store", "ImportResult", "QueryResult", "QueryError", "SCHEMA_VERSION", "MIGRATIONS"]

_RUNS_DDL = ", ".join(f"{name} {kind}" for name, kind in ingest.RUN_COLUMNS.items())
REQUEST_COLUMNS = {"run_id": "VARCHAR", "ttft_ms": "DOUBLE", "itl_ms": "DOUBLE", "tpot_ms": "DOUBLE",
                   "e2el_ms": "DOUBLE", "input_tokens": "DOUBLE", "output_tokens": "DOUBLE", "extra": "JSON"}
_REQUESTS_DDL = ", ".join(f"{name} {kind}" for name, kind in REQUEST_COLUMNS.items())

# Each entry brings the schema from version i to i + 1. Append; never edit a released step.
MIGRATIONS: tuple[str, ...] = (
    f"""
    CREATE TABLE imports (content_hash VARCHAR PRIMARY KEY, source_file VARCHAR, source_format VARCHAR,
                          imported_at TIMESTAMP, runs INTEGER, requests BIGINT, warnings JSON);
    CREATE TABLE runs ({_RUNS_DDL}, PRIMARY KEY (run_id));
    CREATE TABLE requests ({_REQUESTS_DDL});
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

# Dimensions that tell the runs of a per-request CSV apart.
_RUN_DIMENSIONS = ("label", "workload", "engine", "engine_version", "target_model", "draft_model",
                   "spec_method", "num_speculative_tokens", "gpu", "temperature", "concurrency",
                   "request_rate")
_QUANTILES = (("mean", None), ("p50", 0.5), ("p90", 0.9), ("p99", 0.99))
_ALLOWED_SQL = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}


@dataclass
class ImportResult:
    """What happened to one file."""

    file: str
    status: str  # "imported" or "skipped"
    format: str = ""
    runs: int = 0
    requests: int = 0
    warnings: list[str] = field(default_factory=list)
    message: str = ""
    unmatched_columns: list[str] = field(default_factory=list)  # CSV columns kept only in extra


@dataclass
class QueryResult:
    """Rows of a sandboxed query; ``truncated`` when the row cap cut them."""

    frame: pd.DataFrame
    truncated: bool
    seconds: float


class QueryError(ValueError):
    """A refused or failed user query, with a message for the user."""


def _check_size(name: str, size: int, max_bytes: int | None) -> None:
    if max_bytes is not None and size > max_bytes:
        raise ingest.IngestError(name, f"{size:,} bytes is over the {max_bytes:,}-byte upload limit")


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
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + lock_timeout_s
        while True:
            try:
                self._con = duckdb.connect(self.path)
                break
            except duckdb.IOException as exc:
                if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self._generation = 0
        self._sandbox: tuple[tuple[int, str, int], duckdb.DuckDBPyConnection] | None = None
        self._sandbox_lock = threading.Lock()
        self._migrate()

    # ----------------------------------------------------------------------------- schema
    def _migrate(self) -> None:
        cur = self._con.cursor()
        cur.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
        row = cur.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise RuntimeError(f"{self.path} has schema version {version}; this specviz knows up to "
                               f"{SCHEMA_VERSION}: upgrade specviz")
        for step in range(version, SCHEMA_VERSION):
            cur.execute("BEGIN TRANSACTION")
            try:
                cur.execute(MIGRATIONS[step])
                cur.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(step + 1)])
                cur.execute("COMMIT")
            except BaseException:
                _rollback(cur)
                raise

    @property
    def schema_version(self) -> int:
        """The schema version of the open file."""
        return int(self._con.cursor().execute(
            "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])

    def close(self) -> None:
        """Close the file (and the SQL sandbox)."""
        if self._sandbox is not None:
            self._sandbox[1].close()
        self._con.close()

    # ----------------------------------------------------------------------------- imports
    def import_path(self, path: Path, max_bytes: int | None = None,
                    csv_mapping: dict[str, str] | None = None) -> ImportResult:
        """:meth:`import_file` for a file on disk, named as given; a CSV is read where it lies."""
        path = Path(path)
        _check_size(str(path), path.stat().st_size, max_bytes)  # before reading it into memory
        return self.import_file(str(path), path.read_bytes(), None, csv_mapping, _path=path)

    def import_file(self, name: str, data: bytes, max_bytes: int | None = None,
                    csv_mapping: dict[str, str] | None = None, replace: bool = False,
                    _path: Path | None = None) -> ImportResult:
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

        Returns
        -------
        ImportResult
            ``status="skipped"`` if the same content was imported before.

        Raises
        ------
        specviz.ingest.IngestError
            If the file is too large, empty, binary, malformed or of no known shape; nothing is written.
        """
        _check_size(name, len(data), max_bytes)
        content_hash = hashlib.sha256(data).hexdigest()
        cur = self._con.cursor()
        if not replace and cur.execute("SELECT 1 FROM imports WHERE content_hash = ?", [content_hash]).fetchone():
            return ImportResult(name, "skipped", message="already imported")
        fmt = ingest.detect_format(name, data)
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        unmatched: list[str] = []
        cur.execute("BEGIN TRANSACTION")
        try:
            if replace:
                _delete_import(cur, content_hash)
            if fmt == "csv":
                runs, requests, warnings, unmatched = self._import_csv(cur, name, data, content_hash, now,
                                                                       csv_mapping or {}, _path)
            else:
                parsed = ingest.parse(name, data)
                runs, requests, warnings = self._insert_parsed(cur, name, parsed, content_hash, now)
            cur.execute("INSERT INTO imports VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [content_hash, name, fmt, now, runs, requests, json.dumps(warnings)])
            cur.execute("COMMIT")
        except BaseException as exc:
            _rollback(cur)
            if isinstance(exc, duckdb.Error) and content_hash[:12] in str(exc):
                # Another thread is importing the same content (the key of its imports row, or the
                # run ids, which start with the hash's first 12 characters): it may not be committed yet.
                return self._await_concurrent_import(cur, name, fmt, content_hash)
            if isinstance(exc, duckdb.Error):  # the file's values, not the store, were at fault
                raise ingest.IngestError(name, f"could not be stored ({str(exc).splitlines()[0]})") from None
            raise
        self._generation += 1
        return ImportResult(name, "imported", fmt, runs, requests, warnings, unmatched_columns=unmatched)

    def _await_concurrent_import(self, cur: duckdb.DuckDBPyConnection, name: str, fmt: str,
                                 content_hash: str, wait_s: float = 10.0) -> ImportResult:
        """Wait for a concurrent import of the same content to commit, then report it as done."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if cur.execute("SELECT 1 FROM imports WHERE content_hash = ?", [content_hash]).fetchone():
                return ImportResult(name, "skipped", fmt, message="already imported")
            time.sleep(0.05)
        raise ingest.IngestError(name, "another import of the same content did not finish; try again")

    def _insert_parsed(self, cur: duckdb.DuckDBPyConnection, name: str, parsed: ingest.Parsed,
                       content_hash: str, now: datetime) -> tuple[int, int, list[str]]:
        if not parsed.runs:
            raise ingest.IngestError(name, "the file holds no runs")
        rows = []
        for index, run in enumerate(parsed.runs):
            row = {column: run.get(column) for column in ingest.RUN_COLUMNS}
            row.update(run_id=f"{content_hash[:12]}-{index}", source_file=name,
                       source_format=parsed.format, imported_at=now, content_hash=content_hash,
                       extra=json.dumps(run.get("extra") or {}, default=str))
            rows.append(row)
        frame = pd.DataFrame(rows, columns=list(ingest.RUN_COLUMNS))
        casts = ", ".join(f"CAST({_quote(c)} AS {t}) AS {_quote(c)}" for c, t in ingest.RUN_COLUMNS.items())
        cur.register("incoming_runs", frame)
        cur.execute(f"INSERT INTO runs SELECT {casts} FROM incoming_runs")
        cur.unregister("incoming_runs")
        if parsed.requests:
            requests = pd.DataFrame(parsed.requests)
            requests["run_id"] = [f"{content_hash[:12]}-{i}" for i in requests.pop("run_index")]
            cur.register("incoming_requests", requests)
            cur.execute("INSERT INTO requests BY NAME SELECT * FROM incoming_requests")
            cur.unregister("incoming_requests")
        return len(rows), len(parsed.requests), parsed.warnings

    def _import_csv(self, cur: duckdb.DuckDBPyConnection, name: str, data: bytes, content_hash: str,
                    now: datetime, csv_mapping: dict[str, str],
                    path: Path | None) -> tuple[int, int, list[str], list[str]]:
        """A user's CSV through DuckDB: columns matched by synonym, units converted, one row per run
        or, for per-request files, grouped into runs by their dimension columns. The file is read
        in one pass (a bytes upload is written to a temporary file first)."""
        if path is not None:
            return self._import_csv_file(cur, name, str(path), content_hash, now, csv_mapping)
        with tempfile.NamedTemporaryFile(suffix=".csv") as tmp:
            tmp.write(data)
            tmp.flush()
            return self._import_csv_file(cur, name, tmp.name, content_hash, now, csv_mapping)

    def _import_csv_file(self, cur: duckdb.DuckDBPyConnection, name: str, source: str, content_hash: str,
                         now: datetime, csv_mapping: dict[str, str]) -> tuple[int, int, list[str], list[str]]:
        warnings: list[str] = []
        reader = "read_csv(?, header = true)"
        try:
            described = cur.execute(f"DESCRIBE SELECT * FROM {reader}", [source]).fetchall()
        except duckdb.Error as exc:
            raise ingest.IngestError(name, f"could not be read as CSV ({str(exc).splitlines()[0]})") from None
        mapped: dict[str, tuple[str, str, float]] = {}  # canonical → (source column, type, factor)
        unknown = []
        for column, kind, *_ in described:
            synonym = ingest.CSV_SYNONYMS.get(ingest.normalise_name(column))
            key = csv_mapping.get(column) or (synonym[0] if synonym else None)
            factor = synonym[1] if synonym and key == synonym[0] else 1.0
            if key and key not in mapped and (key in ingest.RUN_COLUMNS or key.startswith("request:")):
                mapped[key] = (column, kind, factor)
            else:
                unknown.append(column)
        per_request = any(k.startswith("request:") and k.endswith("_ms") for k in mapped)
        measures = [k for k in mapped if k not in _RUN_DIMENSIONS and k not in ("label", "workload")]
        if not measures:
            raise ingest.IngestError(name, "no recognisable result columns: expected names such as "
                                           "concurrency, output_throughput, p50_itl_ms, ttft_ms "
                                           "(map your columns on the explorer page)")
        for canonical, (column, _, factor) in mapped.items():
            if factor == 1.0 and canonical.endswith("_ms") and not ingest.normalise_name(column).endswith("ms"):
                warnings.append(f"'{column}' has no unit in its name: read as milliseconds")
            elif factor == 0.01:
                warnings.append(f"'{column}' read as a percentage and stored as a fraction")

        def value(canonical: str) -> str:
            column, kind, factor = mapped[canonical]
            target = ingest.RUN_COLUMNS.get(canonical, "DOUBLE")
            if target == "VARCHAR":
                return f"CAST({_quote(column)} AS VARCHAR)"
            source_value = f"replace(CAST({_quote(column)} AS VARCHAR), ',', '')" if kind == "VARCHAR" else _quote(column)
            number = f"TRY_CAST({source_value} AS DOUBLE) * {factor!r}" if factor != 1.0 or kind == "VARCHAR" \
                else f"CAST({_quote(column)} AS DOUBLE)"
            if target in ("INTEGER", "BIGINT"):  # whole numbers that fit, else NULL
                return f"CASE WHEN {number} >= 0 AND {number} = floor({number}) THEN TRY_CAST({number} AS {target}) END"
            return f"CASE WHEN {number} >= 0 THEN {number} END"

        extra = (f"to_json(struct_pack({', '.join(f'{_quote(c)} := {_quote(c)}' for c in unknown)}))"
                 if unknown else "NULL")
        prefix = content_hash[:12]
        dims = [d for d in _RUN_DIMENSIONS if d in mapped]
        try:
            if per_request:
                selects = [f"{value(k)} AS {_quote(k.removeprefix('request:'))}" for k in mapped]
                # Rows are grouped by an integer hash of their dimensions; the text run_id is built
                # only while inserting (1M strings in a staged table cost more than the parse).
                group = f"hash({', '.join(value(d) for d in dims)})" if dims else "0"
                cur.execute(f"CREATE OR REPLACE TEMP TABLE staged AS SELECT {', '.join(selects)}, "
                            f"{extra}::JSON AS extra, {group} AS run_group FROM {reader}", [source])
                run_id = f"'{prefix}-' || CAST(run_group AS VARCHAR)"
                requests = cur.execute("SELECT count(*) FROM staged").fetchone()[0]
                if not requests:
                    raise ingest.IngestError(name, "the CSV has a header but no rows")
                metrics = [k.removeprefix("request:") for k in mapped if k.startswith("request:") and k.endswith("_ms")]
                aggregates = ["count(*) AS num_requests"]
                for metric in metrics:
                    for stat, q in _QUANTILES:
                        fn = f"avg({metric})" if q is None else f"quantile_cont({metric}, {q})"
                        aggregates.append(f"{fn} AS {stat}_{metric.removesuffix('_ms')}_ms")
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
                    raise ingest.IngestError(name, "the CSV has a header but no rows")
                if "acceptance_rate" in mapped:
                    over = cur.execute("SELECT count(*) FROM runs WHERE content_hash = ? AND acceptance_rate > 1",
                                       [content_hash]).fetchone()[0]
                    if over:
                        cur.execute("UPDATE runs SET acceptance_rate = acceptance_rate / 100 "
                                    "WHERE content_hash = ? AND acceptance_rate > 1", [content_hash])
                        warnings.append(f"{over} acceptance rates above 1 read as percentages")
        except duckdb.InvalidInputException as exc:  # a malformed row deep in the file
            raise ingest.IngestError(name, f"could not be read as CSV ({str(exc).splitlines()[0]})") from None
        finally:
            cur.execute("DROP TABLE IF EXISTS staged")
        if unknown:
            warnings.append(f"columns kept in extra (no canonical match): {', '.join(unknown)}")
        return runs, requests, warnings, unknown

    def seed_examples(self, paths: list[Path]) -> list[ImportResult]:
        """Import the shipped example files once, on a store's first use; never again after that,
        so examples a user removed stay removed."""
        cur = self._con.cursor()
        if cur.execute("SELECT 1 FROM meta WHERE key = 'examples_seeded'").fetchone():
            return []
        results = [self.import_file(f"examples/{p.name}", p.read_bytes()) for p in paths]
        cur.execute("INSERT OR REPLACE INTO meta VALUES ('examples_seeded', 'yes')")
        return results

    def remove_import(self, content_hash: str) -> int:
        """Delete one imported file's runs and requests (one transaction); returns the runs removed."""
        cur = self._con.cursor()
        cur.execute("BEGIN TRANSACTION")
        try:
            removed = _delete_import(cur, content_hash)
            cur.execute("COMMIT")
        except BaseException:
            _rollback(cur)
            raise
        self._generation += 1
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

    # ----------------------------------------------------------------------------- sandbox
    def _sandbox_connection(self, memory_limit: str, threads: int) -> duckdb.DuckDBPyConnection:
        """A locked-down in-memory DuckDB with Arrow copies of the tables, rebuilt after imports
        (and when asked for other limits: a locked configuration cannot be changed)."""
        key = (self._generation, memory_limit, threads)
        if self._sandbox is not None and self._sandbox[0] == key:
            return self._sandbox[1]
        if self._sandbox is not None:
            self._sandbox[1].close()
        source = self._con.cursor()
        box = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False,
                                                 "autoload_known_extensions": False})
        for table in ("runs", "requests", "imports"):
            arrow = source.sql(f"SELECT * FROM {table}").to_arrow_table()
            box.register("incoming", arrow)
            box.execute(f"CREATE TABLE {table} AS SELECT * FROM incoming")
            box.unregister("incoming")
        box.execute(f"SET memory_limit = {_sql_text(memory_limit)}")
        box.execute(f"SET threads = {int(threads)}")
        box.execute("SET enable_external_access = false")
        box.execute("SET lock_configuration = true")
        self._sandbox = (key, box)
        return box

    def query(self, sql: str, *, timeout_s: float = 5.0, max_rows: int = 10_000,
              memory_limit: str = "1GB", threads: int = 1) -> QueryResult:
        """Run one read-only statement of a user's SQL in the sandbox.

        Raises
        ------
        QueryError
            If the text is not exactly one SELECT/WITH/EXPLAIN/DESCRIBE/SUMMARIZE/SHOW statement,
            touches files, settings or extensions, runs past ``timeout_s``, or fails; the message
            says which.
        """
        try:
            with duckdb.connect(":memory:") as parser:
                statements = parser.extract_statements(sql)
        except duckdb.ParserException as exc:
            raise QueryError(f"the SQL does not parse: {str(exc).splitlines()[0]}") from None
        if len(statements) != 1:
            raise QueryError(f"one statement at a time, please ({len(statements)} given)")
        kind = statements[0].type
        if kind not in _ALLOWED_SQL:
            raise QueryError(f"only read-only queries (SELECT, WITH, EXPLAIN, DESCRIBE, SUMMARIZE, SHOW) "
                             f"run here; this is {kind.name}")
        with self._sandbox_lock:
            box = self._sandbox_connection(memory_limit, threads)
            cursor = box.cursor()
            timer = threading.Timer(timeout_s, cursor.interrupt)
            start = time.perf_counter()
            timer.start()
            try:
                cursor.execute(sql)
                rows = cursor.fetchmany(max_rows + 1)
                columns = [d[0] for d in cursor.description or []]
            except duckdb.InterruptException:
                raise QueryError(f"stopped after the {timeout_s:g} s time limit") from None
            except duckdb.PermissionException:
                raise QueryError("files, network and settings are not reachable from the SQL console; "
                                 "query the tables runs, requests and imports") from None
            except duckdb.Error as exc:
                raise QueryError(str(exc).splitlines()[0]) from None
            finally:
                timer.cancel()
                cursor.close()
        frame = pd.DataFrame(rows[:max_rows], columns=columns)
        return QueryResult(frame, len(rows) > max_rows, time.perf_counter() - start)
