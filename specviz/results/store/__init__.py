"""The DuckDB store: benchmark runs and per-request rows in one embedded file.

* Schema versioned in ``meta``; :data:`MIGRATIONS` bring any older file forward on open.
* ``runs``: one row per benchmark run, columns :data:`specviz.results.schema.RUN_COLUMNS`.
  ``requests``: per-request rows where a file has them. ``imports``: one row per imported file.
* Imports are transactional (a file goes in whole or not at all) and idempotent by content hash.
* Every operation opens its own connection and closes it when done, so the app, the command line
  and a recorder can share one file: DuckDB lets one process at a time write a file and lets no
  other process open it meanwhile, so each holds it only for one read or one transaction.
* :meth:`Store.query` runs a user's SQL in :mod:`specviz.results.sandbox` over Arrow copies of the tables.
* Live metrics (schema 3): :meth:`Store.record_scrape` stores a scrape's recognised series in
  ``snapshots`` and, per model, the window since the source's previous scrape in ``windows``, in one
  transaction; :meth:`Store.save_live_run` makes a time range of windows a run of format ``live``.
"""

from __future__ import annotations

import atexit
import hashlib
import itertools
import json
import os
import re
import shutil
import stat
import tempfile
import threading
import time
import weakref
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from specviz.results import importers, sandbox
from specviz.live import exposition
from specviz.model import spec
from specviz.errors import Notice, SpecvizError
from specviz.results.importers import user_csv
from specviz.results.importers.base import IngestError, occurrences, preview
from specviz.results.schema import (LIVE_FORMAT, MIGRATIONS, REQUEST_COLUMNS, RUN_COLUMNS, SCHEMA_VERSION, SNAPSHOT_COLUMNS,
                     WINDOW_COLUMNS)

__all__ = ["Store", "StoreError", "ImportResult", "RecordedScrape", "SCHEMA_VERSION", "MIGRATIONS",
           "CONSOLE_TABLES"]

CONSOLE_TABLES = ("runs", "requests", "imports", "snapshots", "windows")
"""The tables the SQL console (:meth:`Store.query`) sees."""

class StoreError(SpecvizError):
    """The store cannot be opened or written; the file is left as it was."""


# The percentiles a per-request CSV's runs get, beside the mean.
_PERCENTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99}

# What the tables hold, in one cheap read: every write to runs, requests or imports adds or removes an
# imports row (with a new imported_at), so this pair changes whenever the tables do. Reads kept
# between calls (runs, imports, the console's copy) are read again when it changes.
_IMPORTS_VERSION = "SELECT count(*), bit_xor(hash(content_hash || CAST(imported_at AS VARCHAR))) FROM imports"
# The console's copy holds the live tables too, which only grow (a recorder appends to them).
_CONSOLE_VERSION = ("SELECT *, (SELECT count(*) FROM snapshots), (SELECT max(time) FROM snapshots), "
                    f"(SELECT count(*) FROM windows), (SELECT max(time_end) FROM windows) FROM ({_IMPORTS_VERSION})")


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


def _copy_regular_file(path: Path, name: str, max_bytes: int | None) -> importers.CopiedSource:
    """A regular file (symlinks followed) read into a private copy, with a bound: a device such as
    /dev/zero, a FIFO, a socket or a directory is refused before it is read. Errors name the path."""
    shown = str(path)
    try:
        _require_regular(shown, os.stat(path).st_mode)
        # O_NONBLOCK: a FIFO put in the file's place after the stat cannot block the open.
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
            info = os.fstat(file.fileno())
            _require_regular(shown, info.st_mode)  # what was opened, not only what was looked at
            _check_size(shown, info.st_size, max_bytes)  # before reading any of it
            return importers.CopiedSource(name, file, info.st_size)
    except (OSError, MemoryError) as exc:
        raise importers.as_ingest_error(shown, exc) from None


def _delete_import(cur: duckdb.DuckDBPyConnection, content_hash: str) -> int:
    """Delete one imported file's runs, requests and imports row (inside the caller's transaction)."""
    removed = cur.execute("SELECT count(*) FROM runs WHERE content_hash = ?", [content_hash]).fetchone()[0]
    cur.execute("DELETE FROM requests WHERE run_id IN (SELECT run_id FROM runs WHERE content_hash = ?)",
                [content_hash])
    cur.execute("DELETE FROM runs WHERE content_hash = ?", [content_hash])
    cur.execute("DELETE FROM imports WHERE content_hash = ?", [content_hash])
    return removed


def _sweep_repeats(cur: duckdb.DuckDBPyConnection, parsed: importers.Parsed) -> dict[int, tuple[str, str]]:
    """The runs of a parsed file that a ``vllm bench sweep`` already stored from another of its
    files: index → (that file's name, the run's ``run_number``). A sweep writes each run twice, as
    ``run=N.json`` and inside ``summary.json``, and the page, which takes files and not folders,
    cannot leave one out as :func:`specviz.results.importers.result_files` does.

    Two runs are the same when both are sweep runs (``run_number`` in ``extra``, which only the
    sweep writes) with the same ``run_number`` and start ``date``, the same model, completed
    requests, duration and output throughput (the object is copied unchanged into the summary, so
    these are equal to the last bit; a different run differs at least in its duration), and the
    same swept settings where both files were named inside their sweep folder (a file uploaded on
    its own has none)."""
    if parsed.format != "vllm-bench" or not any('"run_number"' in run["extra"] for run in parsed.runs):
        return {}
    keys = ("target_model", "num_requests", "duration_s", "output_throughput")
    incoming = pd.DataFrame({"run_index": range(len(parsed.runs)), "extra": [run["extra"] for run in parsed.runs],
                             **{key: [run.get(key) for run in parsed.runs] for key in keys}})
    same = " AND ".join(f"r.{key} IS NOT DISTINCT FROM CAST(i.{key} AS {RUN_COLUMNS[key]})" for key in keys)
    cur.register("incoming_sweep", incoming)
    found = cur.execute(f"""
        WITH i AS (SELECT run_index, CAST(extra AS JSON) AS extra, {', '.join(keys)} FROM incoming_sweep)
        SELECT i.run_index, min(r.source_file), any_value(i.extra->>'run_number')
        FROM i JOIN runs r
          ON r.source_format = 'vllm-bench' AND (r.extra->>'run_number') = (i.extra->>'run_number')
         AND (r.extra->>'date') IS NOT DISTINCT FROM (i.extra->>'date') AND {same}
         AND ((r.extra->'sweep') IS NULL OR (i.extra->'sweep') IS NULL OR (r.extra->'sweep') = (i.extra->'sweep'))
        GROUP BY i.run_index""").fetchall()
    cur.unregister("incoming_sweep")
    return {index: (other, run_number) for index, other, run_number in found}


def _repeat_notices(repeated: dict[int, tuple[str, str]]) -> list[Notice]:
    """One notice for each file that already holds some of the runs, naming their run numbers."""
    by_file: dict[str, list[str]] = {}
    for index in sorted(repeated):
        other, run_number = repeated[index]
        by_file.setdefault(other, []).append(run_number)
    return [Notice("warn.sweep_run_repeated", other=other, runs=", ".join(numbers))
            for other, numbers in by_file.items()]


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


@dataclass(frozen=True)
class _CsvReading:
    """How DuckDB reads one CSV, sniffed once (a second sniff would cost a tenth of the read):
    ``sql``, a ``read_csv`` call with every option its sniffer found (``options``; None where DuckDB
    must sniff at each read), reads the file given as its first parameter (:meth:`params`);
    ``columns`` are (name, type); ``skip`` lines come before the header, and ``line_end`` ends a line.

    The ``text`` columns are read as text, as the file has them. A column that becomes text in the
    store must be: DuckDB reads a number column cast to VARCHAR straight as text in some plans
    ("-3618") and as a number turned into text in others ("-3618.0"), and a per-request file's
    runs are keyed on such text in two queries."""

    options: dict[str, Any] | None
    columns: list[tuple[str, str]]
    skip: int
    line_end: bytes
    text: frozenset[str] = frozenset()

    @property
    def sql(self) -> str:
        if self.options is None:
            return "read_csv(?, header = true, types = ?)" if self.text else "read_csv(?, header = true)"
        return f"read_csv(?, auto_detect = false, header = true, {', '.join(f'{k} = ?' for k in self.options)})"

    def params(self, path: str) -> list[Any]:
        as_text = {name: "VARCHAR" for name in self.text}
        if self.options is None:
            return [path, as_text] if self.text else [path]
        return [path, *({**self.options["columns"], **as_text} if key == "columns" else option
                         for key, option in self.options.items())]


def _csv_number(column: str, kind: str) -> str:
    """SQL for a CSV column as a number: a column DuckDB's sniffer typed as numbers as it is; text,
    and whatever else the sniffer saw (a DATE for "inf", a BOOLEAN), where it reads as one
    (thousands separators dropped), else NULL."""
    if kind in ("BIGINT", "DOUBLE"):
        return f"CAST({_quote(column)} AS DOUBLE)"
    return f"TRY_CAST(replace(CAST({_quote(column)} AS VARCHAR), ',', '') AS DOUBLE)"


def _csv_not_numbers(cur: duckdb.DuckDBPyConnection, reading: _CsvReading, path: str,
                     mapped: dict[str, tuple[str, str, float]]) -> list[Notice]:
    """A notice for each column mapped to a number whose non-empty cells are not all numbers: they
    are stored empty, which a user who mapped the column would not otherwise learn. Only columns the
    sniffer did not type as numbers can hold such cells, so a clean file costs no extra read."""
    suspects = [(canonical, column, kind) for canonical, (column, kind, _) in mapped.items()
                if RUN_COLUMNS.get(canonical, "DOUBLE") != "VARCHAR" and kind not in ("BIGINT", "DOUBLE")]
    if not suspects:
        return []
    counts = []
    for _, column, kind in suspects:
        text = f"CAST({_quote(column)} AS VARCHAR)"
        dropped = f"trim({text}) <> '' AND {_csv_number(column, kind)} IS NULL"
        counts += [f"count(*) FILTER (WHERE {dropped})", f"min(left({text}, 40)) FILTER (WHERE {dropped})"]
    found = cur.execute(f"SELECT {', '.join(counts)} FROM {reading.sql}", reading.params(path)).fetchone()
    return [Notice("warn.csv_not_numbers", column=column, field=canonical.removeprefix("request:"),
                   rows=found[2 * i], example=repr(preview(found[2 * i + 1])))
            for i, (canonical, column, _) in enumerate(suspects) if found[2 * i]]


def _sniff_csv(cur: duckdb.DuckDBPyConnection, name: str, path: str) -> _CsvReading:
    """Sniff a CSV with DuckDB, as ``read_csv`` would (its options are passed to it as parameters:
    the sniffer's own ``Prompt`` quotes no column name).

    Raises
    ------
    IngestError
        ``ingest.csv_unreadable`` if DuckDB cannot make a table of it.
    """
    try:
        delimiter, quote, escape, new_line, comment, skip, columns = cur.execute(
            "SELECT Delimiter, Quote, Escape, NewLineDelimiter, Comment, SkipRows, Columns "
            "FROM sniff_csv(?, header = true)", [path]).fetchone()
    except duckdb.Error as exc:
        raise IngestError("ingest.csv_unreadable", name, detail=str(exc).splitlines()[0]) from None
    described = [(column["name"], column["type"]) for column in columns]
    line_end = b"\r" if new_line == "\\r" else b"\n"
    if any(kind.startswith(("DATE", "TIME")) for _, kind in described):
        # Given a date or time format, DuckDB parses with it alone and refuses what its sniffer
        # read otherwise ("inf" as a DATE): such a file is sniffed again.
        return _CsvReading(None, described, skip, line_end)
    options = {"delim": delimiter, "quote": quote, "escape": escape, "new_line": new_line, "comment": comment,
               "skip": skip, "columns": dict(described)}
    return _CsvReading({key: "" if option == "(empty)" else option for key, option in options.items()},
                       described, skip, line_end)


def _lines_at(pieces: Iterable[bytes], numbers: list[int], end: bytes) -> bytes:
    """The lines of a content given in pieces at these numbers (from 0, ascending), each with its
    ``end``: line ends are counted a piece at a time, and only a piece that holds a wanted line is
    split."""
    wanted = iter(numbers)
    target = next(wanted, None)
    line, found = 0, []  # line: the number of the line the piece's next byte is in
    for piece in pieces:
        if target is None:
            break
        ends = occurrences(piece, end[0])
        if line + ends < target:
            line += ends
            continue
        start = 0
        while target is not None:
            stop = piece.find(end, start)
            if line == target:
                found.append(piece[start:] if stop < 0 else piece[start:stop + 1])
            if stop < 0:
                break
            if line == target:
                target = next(wanted, None)
            line, start = line + 1, stop + 1
    return b"".join(found)


def _csv_run_dimensions(source: importers.Source, reading: _CsvReading, path: str, query: str,
                        firsts: dict[str, int]) -> pa.Table:
    """The dimension values of each run of a per-request CSV: ``query`` (run_id and the dimensions,
    DISTINCT, from ``reading.sql``) over the header and the line of each run's first request, its
    row number in ``firsts``, lifted from the file; if that does not find every run (a quoted field
    over two lines, a blank line: rows and lines apart), over the whole file. Read on a connection
    of its own: an error there would end the import's transaction."""
    numbers = sorted({*range(reading.skip + 1), *(reading.skip + 1 + row for row in firsts.values())})
    with _hub_cursor() as side, tempfile.TemporaryFile() as sample:
        sample.write(_lines_at(source.pieces(), numbers, reading.line_end))
        sample.flush()
        try:
            found = side.sql(query, params=reading.params(f"/proc/self/fd/{sample.fileno()}")).to_arrow_table()
        except duckdb.Error:
            found = None
        if found is None or not set(found["run_id"].to_pylist()) >= firsts.keys():
            found = side.sql(query, params=reading.params(path)).to_arrow_table()
    if not set(found["run_id"].to_pylist()) >= firsts.keys():  # never a run without its dimensions
        raise IngestError("ingest.csv_unreadable", source.name, detail=Notice("ingest.detail.rows_differ"))
    return found


_HUB_LOCK = threading.Lock()
_hub: duckdb.DuckDBPyConnection | None = None
_ALIASES = itertools.count()


def _hub_cursor() -> duckdb.DuckDBPyConnection:
    """A new connection to this process's one in-memory DuckDB (the hub), to which a store file is
    attached for the span of its operations: attaching a file takes a millisecond or two, while a
    DuckDB of its own for each connection would take tens (a new database registers every built-in
    function)."""
    global _hub
    with _HUB_LOCK:  # one hub per process, and its own connection is not for concurrent use
        if _hub is None:
            # What spills goes to a private folder: an in-memory DuckDB would make .tmp in the
            # working folder (a file opened on its own spilled beside itself).
            spill = tempfile.mkdtemp(prefix="specviz-duckdb-")
            atexit.register(shutil.rmtree, spill, ignore_errors=True)
            _hub = duckdb.connect(":memory:", config={**sandbox.NO_EXTENSIONS, "temp_directory": spill})
        return _hub.cursor()


def _on_hub(sql: str) -> None:
    """Run one statement of the hub's own (an ATTACH or a DETACH) on a connection of its own."""
    with _hub_cursor() as cur:
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


# ----------------------------------------------------------------------------- live metrics
# An engine as SpecDecodeState names it → the namespace of its metrics, and back (for a series that
# belongs to no spec-decode group, such as a companion of a model that does not speculate).
_PREFIX_OF_ENGINE = {"vllm-v1": "vllm", "vllm-v0": "vllm", "llama.cpp": "llamacpp"}
_ENGINE_OF_PREFIX = {"llamacpp": "llama.cpp"}
# runs.engine of a live run: the engine's name as benchmark files give it (pairing compares them).
_RUN_ENGINE = {"vllm-v1": "vllm", "vllm-v0": "vllm"}
_SNAPSHOT_SCHEMA = pa.schema([("time", pa.timestamp("us")), ("source", pa.string()), ("engine", pa.string()),
                              ("model", pa.string()), ("metric", pa.string()), ("labels", pa.string()),
                              ("value", pa.float64())])
_WINDOW_SCHEMA = pa.schema([(name, {"TIMESTAMP": pa.timestamp("us"), "VARCHAR": pa.string(), "DOUBLE": pa.float64(),
                                    "DOUBLE[]": pa.list_(pa.float64()), "BOOLEAN": pa.bool_()}[kind])
                            for name, kind in WINDOW_COLUMNS.items()])
assert _SNAPSHOT_SCHEMA.names == list(SNAPSHOT_COLUMNS)


def _utc(moment: datetime | float) -> datetime:
    """A time as the store keeps it: naive UTC to the microsecond. Seconds since the epoch, an aware
    datetime, or a naive one (taken to be UTC already)."""
    if not isinstance(moment, datetime):
        moment = datetime.fromtimestamp(moment, timezone.utc)
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment


def _epoch(moment: datetime) -> float:
    return moment.replace(tzinfo=timezone.utc).timestamp()


@dataclass(frozen=True)
class RecordedScrape:
    """What :meth:`Store.record_scrape` stored.

    Attributes
    ----------
    time : datetime
        The scrape's time (naive UTC), as stored.
    series : int
        Rows added to ``snapshots``.
    window : bool
        Whether ``states`` are windows against the source's previous scrape (and were stored in
        ``windows``); False for a source's first scrape, whose ``states`` are totals since the
        server started (nothing goes into ``windows``).
    states : list of specviz.live.exposition.SpecDecodeState
        One per model.
    """

    time: datetime
    series: int
    window: bool
    states: list[exposition.SpecDecodeState]


def _snapshot_table(source: str, moment: datetime, snapshot: exposition.Snapshot,
                    states: list[exposition.SpecDecodeState]) -> pa.Table:
    """The rows of ``snapshots`` for one scrape: every recognised series, with its engine (as the
    model's state names it) and model."""
    engines = {(_PREFIX_OF_ENGINE.get(s.engine, s.engine), s.model_name): s.engine for s in states}
    columns: dict[str, list] = {name: [] for name in _SNAPSHOT_SCHEMA.names}
    for role, series in snapshot.series.items():
        for (prefix, labels), value in series.items():
            named = dict(labels)
            model = named.get("model_name", "")
            columns["engine"].append(engines.get((prefix, model), _ENGINE_OF_PREFIX.get(prefix, prefix)))
            columns["model"].append(model)
            columns["metric"].append(role)
            columns["labels"].append(json.dumps(named, sort_keys=True, ensure_ascii=False))
            columns["value"].append(value)
    rows = len(columns["value"])
    columns.update(time=[moment] * rows, source=[source] * rows)
    return pa.table(columns, schema=_SNAPSHOT_SCHEMA)


def _window_table(source: str, start: datetime, end: datetime, states: list[exposition.SpecDecodeState]) -> pa.Table:
    """The rows of ``windows``: one per model's window state."""
    ms = lambda seconds: None if seconds is None else seconds * 1000.0
    rows = [{"time_start": start, "time_end": end, "source": source, "engine": s.engine, "model": s.model_name,
             **{name: getattr(s, name) for name in WINDOW_COLUMNS if hasattr(s, name) and name not in
                ("source", "engine")},
             "itl_p50_ms": ms(s.itl_p50), "itl_p99_ms": ms(s.itl_p99)} for s in states]
    return pa.Table.from_pylist(rows, schema=_WINDOW_SCHEMA)


def _previous_snapshot(cur: duckdb.DuckDBPyConnection, source: str) -> exposition.Snapshot | None:
    """The latest stored scrape of ``source`` as a :class:`specviz.live.exposition.Snapshot`, or None."""
    rows = cur.execute("SELECT time, engine, metric, CAST(labels AS VARCHAR), value FROM snapshots "
                       "WHERE source = ? AND time = (SELECT max(time) FROM snapshots WHERE source = ?)",
                       [source, source]).fetchall()
    if not rows:
        return None
    series: dict[str, dict] = {role: {} for role in exposition.ROLES}
    for _, engine, metric, labels, value in rows:
        if metric in series:  # a role only a newer specviz reads is left out
            prefix = _PREFIX_OF_ENGINE.get(engine, engine)
            series[metric][prefix, tuple(sorted(json.loads(labels).items()))] = value
    return exposition.Snapshot(series=series, time=_epoch(rows[0][0]))


def _weighted(values: pd.Series, weights: pd.Series) -> float | None:
    """Σ value·weight / Σ weight over the rows where both are known and the weights sum above 0."""
    known = values.notna() & weights.notna()
    total = float(weights[known].sum())
    return float((values[known] * weights[known]).sum() / total) if total > 0 else None


def _live_run(frame: pd.DataFrame) -> tuple[dict[str, Any], dict[str, Any]]:
    """The canonical columns and the ``extra`` of one model's windows as one run.

    Counts are summed (acceptance from the sums, not a mean of ratios); per-position acceptance is
    weighted by each window's drafts, which gives the summed per-position counts over the summed
    drafts; throughput and running requests are weighted by each window's length (the mean over
    time). The engines' own gauges (SGLang reports acceptance only so) are averaged over time where
    no counts exist, and ``extra`` says so."""
    seconds = (frame.time_end - frame.time_start).dt.total_seconds()
    drafts, draft_tokens, accepted = (float(frame[c].sum()) if frame[c].notna().any() else None
                                      for c in ("drafts", "draft_tokens", "accepted_tokens"))
    extra: dict[str, Any] = {"windows": len(frame), "counter_resets": int(frame.counter_reset.fillna(False).sum()),
                             "engine_detail": frame.engine.iloc[0], "drafts": drafts, "draft_tokens": draft_tokens,
                             "accepted_tokens": accepted}
    rate = accepted / draft_tokens if accepted is not None and draft_tokens else None
    length = 1.0 + accepted / drafts if accepted is not None and drafts else None
    gamma = draft_tokens / drafts if draft_tokens is not None and drafts else None
    if drafts is None:  # no counts: the engine's gauges, averaged over time
        rate, length = _weighted(frame.acceptance_rate, seconds), _weighted(frame.acceptance_length, seconds)
        extra["acceptance_from"] = "engine gauges averaged over time"
    per_position = zero = None
    with_drafts = frame[frame.drafts.fillna(0) > 0]
    lists = with_drafts.per_position_acceptance
    if len(with_drafts) and lists.notna().all() and len({len(v) for v in lists}) == 1:
        counts = np.sum([np.asarray(v) * d for v, d in zip(lists, with_drafts.drafts)], axis=0)
        per_position = (counts / with_drafts.drafts.sum()).tolist()
        zero = 1.0 - per_position[0]
    if gamma is not None and length is not None and abs(gamma - round(gamma)) < 1e-9 and 1 <= length <= gamma + 1:
        extra["alpha_iid"] = float(spec.alpha_from_acceptance_length(length, round(gamma)))
    if gamma is not None and abs(gamma - round(gamma)) >= 1e-9:
        extra["num_speculative_tokens_mean"] = gamma
    extra["mean_waiting_requests"] = _weighted(frame.waiting_requests, seconds)
    extra["max_kv_cache_usage"] = None if frame.kv_cache_usage.isna().all() else float(frame.kv_cache_usage.max())
    run = {"engine": _RUN_ENGINE.get(frame.engine.iloc[0], frame.engine.iloc[0]),
           "target_model": frame.model.iloc[0] or None, "workload": "live",
           "num_speculative_tokens": round(gamma) if gamma is not None and abs(gamma - round(gamma)) < 1e-9 else None,
           "concurrency": _weighted(frame.running_requests, seconds),
           "output_throughput": _weighted(frame.generation_throughput, seconds),
           "duration_s": float(seconds.sum()), "acceptance_rate": rate, "acceptance_length": length,
           "per_position_acceptance": per_position, "zero_accept_rate": zero}
    return run, extra


class Store:
    """One DuckDB file of runs, shared with other threads and processes.

    A Store holds no connection between calls: each opens one (read-only to read, read-write to
    write), does its work and closes it, waiting up to ``lock_timeout_s`` for the file where another
    process holds it. The file is checked, and migrated to the current schema, once, when the Store
    is made. ``":memory:"`` is the exception: an in-memory database lives only as long as a
    connection, so that Store keeps one (and each call takes a cursor of it).

    A connection is a cursor of one in-memory DuckDB per process with the file attached to it
    (read-only or read-write) and made its default database; the operations of this process share
    the attachment, and the last one to end detaches the file.

    Parameters
    ----------
    path : str or Path
        The database file (created with the current schema if missing) or ``":memory:"``.
    lock_timeout_s : float
        How long one call waits for the file while another process holds it (DuckDB lets one
        process write a file, and no other open it while it does).

    Attributes
    ----------
    read_only : bool
        Whether the file can only be read here (a read-only file or folder): imports and removals
        raise ``store.read_only``.
    """

    def __init__(self, path: str | Path, lock_timeout_s: float = 10.0) -> None:
        self.path = str(path)
        self.lock_timeout_s = lock_timeout_s
        self.read_only = False
        self._snapshot_cache: tuple[tuple, sandbox.Snapshot] | None = None
        self._kept_reads: dict[str, tuple[tuple[int, int], pd.DataFrame]] = {}
        self._cache_lock = threading.Lock()
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
            with _hub_cursor() as con:
                con.execute(f"USE {self._shared.alias}")
                yield con
        finally:
            self._shared.release()

    def _attach(self, read_only: bool, deadline: float) -> None:
        """Attach the file to the hub, waiting until ``deadline`` while another process holds it."""
        options = "TYPE DUCKDB, READ_ONLY" if read_only else "TYPE DUCKDB"
        while True:
            try:
                _on_hub(f"ATTACH {_sql_text(self._file)} AS {self._shared.alias} ({options})")
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
            except BaseException:
                _rollback(con)
                raise

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
        """Release the console's copy of the tables (and an in-memory store's database); a Store
        holds no connection to a file between calls."""
        if self._snapshot_cache is not None:
            self._snapshot_cache[1].close()
            self._snapshot_cache = None
        if self._memory is not None:
            self._memory.close()

    # ----------------------------------------------------------------------------- imports
    def import_path(self, path: Path, max_bytes: int | None = None,
                    csv_mapping: dict[str, str] | None = None) -> ImportResult:
        """:meth:`import_file` for a file on disk, named as given.

        Only a regular file is read (symlinks followed), and no more than its size when opened
        plus one byte, which ``max_bytes`` bounds. The path is opened once, and what it holds is
        read a piece at a time into a private copy, hashed as it goes: what is imported is the
        content read then (never the path again, which DuckDB would expand as a glob or a ``~``
        and which another file may have taken by then), and a large CSV is never held in memory.

        Raises
        ------
        specviz.results.importers.IngestError
            As :meth:`import_file`, and if the path is missing, unreadable, or a device, FIFO,
            socket or directory.
        """
        self._require_writable()
        path = Path(path)
        name = os.fsencode(path).decode("utf-8", "replace")  # stored: bytes of no UTF-8 name become U+FFFD
        user_csv.check_mapping(name, csv_mapping or {})
        with _copy_regular_file(path, name, max_bytes) as source:
            return self.import_file(name, source, csv_mapping=csv_mapping)

    def import_file(self, name: str, data: bytes | importers.Source, max_bytes: int | None = None,
                    csv_mapping: dict[str, str] | None = None, replace: bool = False,
                    origin: str = "user") -> ImportResult:
        """Import one result file, whole or not at all.

        Parameters
        ----------
        name : str
            The file's name as the user gave it (stored as ``source_file``; never used as a path).
        data : bytes or specviz.results.importers.Source
            Its content, or a source that holds it (as :meth:`import_path` reads a file).
        max_bytes : int, optional
            Refuse larger files.
        csv_mapping : dict, optional
            For a plain CSV: the user's column name → canonical column, for names the synonyms miss
            (one of :data:`specviz.results.importers.user_csv.MAPPABLE_COLUMNS`).
        replace : bool
            Import content that is already stored again (with a new mapping): its old runs and
            requests are deleted in the same transaction.
        origin : str
            ``"user"``, or ``"example"`` for the shipped examples (:data:`specviz.results.schema.ORIGINS`).

        Returns
        -------
        ImportResult
            ``status="skipped"`` if the same content was imported before, and also if every run of
            the file is a ``vllm bench sweep`` run already stored from another file of the sweep
            (``run=0.json`` after the ``summary.json`` that repeats it; :func:`_sweep_repeats`).
            Then, as for the same content, nothing of the file is stored, not even its ``imports``
            row: what it holds is in the store once, under the other file, and if that file is
            removed, importing this one again stores its runs. The warnings name the other file.
            Where only some runs repeat (``summary.json`` after ``run=0.json``), the others are
            imported and a warning names the file that holds the repeats.

        Raises
        ------
        specviz.results.importers.IngestError
            For anything wrong with the file: too large, empty, binary, malformed, of no known
            shape, too deeply nested, too dense for ``SPECVIZ_IMPORT_MEMORY_BYTES``, and any other
            exception reading it raised (:class:`specviz.results.importers.UnrecognisedColumnsError` for a CSV
            none of whose columns is recognised), and a ``csv_mapping`` to a column the store fills
            in itself (``ingest.csv_mapping_reserved``, before the file is read); nothing is written.
        """
        self._require_writable()
        user_csv.check_mapping(name, csv_mapping or {})
        with ExitStack() as stack:
            source = data if isinstance(data, importers.Source) else stack.enter_context(importers.Source(name, data))
            _check_size(name, source.size, max_bytes)
            content_hash = source.content_hash
            if not replace and self._imported(content_hash):
                return ImportResult(name, "skipped", message="already imported")
            now = datetime.now(timezone.utc).replace(tzinfo=None)
            unmatched: list[str] = []
            fmt = ""
            try:
                # Parsed before the file is opened for writing: other processes wait only for the writes.
                parsed = importers.parse(name, source)
                fmt = parsed.format
                with self._transaction() as cur:
                    if replace:
                        _delete_import(cur, content_hash)
                    if fmt == "csv":
                        runs, requests, warnings, unmatched = self._import_csv(cur, source, content_hash, now,
                                                                               csv_mapping or {})
                    else:
                        repeated = _sweep_repeats(cur, parsed)
                        if repeated and len(repeated) == len(parsed.runs):
                            return ImportResult(name, "skipped", fmt, warnings=_repeat_notices(repeated),
                                                message="already imported from " + ", ".join(
                                                    sorted({other for other, _ in repeated.values()})))
                        runs, requests, warnings = self._insert_parsed(cur, name, parsed, content_hash, now,
                                                                       repeated.keys())
                        warnings = [*warnings, *_repeat_notices(repeated)]
                    cur.execute("INSERT INTO imports (content_hash, source_file, source_format, imported_at, runs, "
                                "requests, warnings, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                [content_hash, name, fmt, now, runs, requests,
                                 json.dumps([w.to_json() for w in warnings]), origin])
            except BaseException as exc:
                if isinstance(exc, (duckdb.ConstraintException, duckdb.TransactionException)):
                    # A key taken, or a write conflict: another thread, or a process since the check
                    # above, is importing the same content (the key of its imports row, or the run
                    # ids, which start with the hash's first 12 characters); it may not be committed yet.
                    return self._await_concurrent_import(name, fmt, content_hash)
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

    def _imported(self, content_hash: str, read_only: bool = True) -> bool:
        with self._connection(read_only) as con:
            return con.execute("SELECT 1 FROM imports WHERE content_hash = ?", [content_hash]).fetchone() is not None

    def _await_concurrent_import(self, name: str, fmt: str, content_hash: str, wait_s: float = 10.0) -> ImportResult:
        """Wait for a concurrent import of the same content to commit, then report it as done. Each
        look is a write connection: it joins this process's importing threads rather than waiting
        for them all to finish, and sees their commits at once."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self._imported(content_hash, read_only=False):
                return ImportResult(name, "skipped", fmt, message="already imported")
            time.sleep(0.05)
        raise IngestError("ingest.concurrent", name)

    def _insert_parsed(self, cur: duckdb.DuckDBPyConnection, name: str, parsed: importers.Parsed,
                       content_hash: str, now: datetime, left_out: Iterable[int] = ()) -> tuple[int, int, list[Notice]]:
        """Insert a parsed file's runs and requests but those of the runs ``left_out`` (by index):
        each run keeps the id of its place in the file, so its requests find it by their index."""
        if not parsed.runs:
            raise IngestError("ingest.no_runs", name)
        prefix = content_hash[:12]
        left_out = set(left_out)
        kept = [index for index in range(len(parsed.runs)) if index not in left_out]
        runs = [parsed.runs[index] for index in kept]
        # Column by column, and only the columns some run has (the rest are NULL): a dict of every
        # column for each run would cost more than the run itself.
        present = {column for run in runs for column in run}
        columns: dict[str, Any] = {column: [run.get(column) for run in runs]
                                   for column in RUN_COLUMNS if column in present}
        columns.update(run_id=[f"{prefix}-{index}" for index in kept], source_file=name,
                       source_format=parsed.format, imported_at=now, content_hash=content_hash)
        casts = ", ".join(f"CAST({_quote(c)} AS {RUN_COLUMNS[c]}) AS {_quote(c)}" for c in columns)
        cur.register("incoming_runs", pd.DataFrame(columns))
        cur.execute(f"INSERT INTO runs BY NAME SELECT {casts} FROM incoming_runs")
        cur.unregister("incoming_runs")
        requests = parsed.requests
        if left_out and not requests.empty:
            requests = requests[~requests.run_index.isin(list(left_out))]
        if not requests.empty:  # run ids are made by DuckDB, not as a Python string per request
            cur.register("incoming_requests", requests)
            cur.execute(f"INSERT INTO requests BY NAME SELECT '{prefix}-' || CAST(run_index AS VARCHAR) AS run_id, "
                        "* EXCLUDE (run_index) FROM incoming_requests")
            cur.unregister("incoming_requests")
        return len(runs), len(requests), parsed.warnings

    def _import_csv(self, cur: duckdb.DuckDBPyConnection, source: importers.Source, content_hash: str,
                    now: datetime, csv_mapping: dict[str, str]) -> tuple[int, int, list[Notice], list[str]]:
        """A user's CSV through DuckDB: columns matched by synonym, units converted, one row per run
        or, for per-request files, grouped into runs by their dimension columns. DuckDB reads the
        source's private copy, exactly the bytes that were checked and hashed, given to it as
        ``/proc/self/fd/N`` (no glob or ``~`` for it to expand, nothing another process can put in
        its place), and sniffs it once."""
        name = source.name
        path = f"/proc/self/fd/{source.private_copy.fileno()}"
        reading = _sniff_csv(cur, name, path)
        plan = user_csv.plan_columns(name, reading.columns, csv_mapping)
        mapped, unknown, warnings = plan.mapped, plan.unknown, list(plan.notices)
        reading = replace(reading, text=frozenset(column for canonical, (column, _, _) in mapped.items()
                                                  if RUN_COLUMNS.get(canonical) == "VARCHAR"))

        def value(canonical: str) -> str:
            column, kind, factor = mapped[canonical]
            target = RUN_COLUMNS.get(canonical, "DOUBLE")
            if target == "VARCHAR":
                return f"CAST({_quote(column)} AS VARCHAR)"
            number = _csv_number(column, kind)
            if factor != 1.0:
                number = f"{number} * {factor!r}"
            if target in ("INTEGER", "BIGINT"):  # whole numbers that fit, else NULL
                return f"CASE WHEN {number} >= 0 AND {number} = floor({number}) THEN TRY_CAST({number} AS {target}) END"
            finite = "" if canonical == "request_rate" else f" AND isfinite({number})"  # as the JSON parsers
            return f"CASE WHEN {number} >= 0{finite} THEN {number} END"

        extra = (f"to_json(struct_pack({', '.join(f'{_quote(c)} := {_quote(c)}' for c in unknown)}))"
                 if unknown else "NULL")
        prefix = content_hash[:12]
        stamp = (f"{_sql_text(name)} AS source_file, 'csv' AS source_format, TIMESTAMP '{now}' AS imported_at, "
                 f"'{content_hash}' AS content_hash")
        try:
            if not plan.per_request:
                user_csv.charge_as_runs(source)  # before DuckDB reads more than the sniffer's sample
            warnings += _csv_not_numbers(cur, reading, path, mapped)
            if plan.per_request:
                dims = [d for d in user_csv.RUN_DIMENSIONS if d in mapped]
                group = f"hash({', '.join(value(d) for d in dims)})" if dims else "0"
                run_id = f"'{prefix}-' || CAST({group} AS VARCHAR)"
                request_cols = [c for c in REQUEST_COLUMNS if c not in ("run_id", "extra") and f"request:{c}" in mapped]
                # Straight from the file into the store, nothing staged: the runs are made after,
                # from the requests.
                values = ", ".join(f"{value('request:' + c)} AS {c}" for c in request_cols)
                requests = cur.execute(f"INSERT INTO requests BY NAME SELECT {run_id} AS run_id, {values}, "
                                       f"{extra}::JSON AS extra FROM {reading.sql}", reading.params(path)).fetchone()[0]
                if not requests:
                    raise IngestError("ingest.csv_no_rows", name)
                metrics = [c for c in request_cols if c.endswith("_ms")]
                # Each metric's percentiles from one sort per run: quantile_cont of a list. Each run's
                # first request (the least rowid: they went in in the file's order) tells where to
                # find its dimensions.
                aggregates, unpacked = ["min(rowid) AS first_row", "count(*) AS num_requests"], []
                for metric in metrics:
                    short = metric.removesuffix("_ms")
                    aggregates += [f"avg({metric}) AS mean_{short}_ms",
                                   f"quantile_cont({metric}, {list(_PERCENTILES.values())}) AS {short}_percentiles"]
                    unpacked += [f"{short}_percentiles[{i}] AS {statistic}_{short}_ms"
                                 for i, statistic in enumerate(_PERCENTILES, start=1)]
                # This file's run ids sort between "prefix-" and "prefix.", apart from any other's.
                cur.execute(f"CREATE OR REPLACE TEMP TABLE csv_runs AS SELECT run_id, {', '.join(aggregates)} "
                            f"FROM requests WHERE run_id >= '{prefix}-' AND run_id < '{prefix}.' GROUP BY run_id")
                dimensions = ""
                if dims:
                    firsts = dict(cur.execute("SELECT run_id, first_row - min(first_row) OVER () FROM csv_runs")
                                  .fetchall())
                    query = (f"SELECT DISTINCT {run_id} AS run_id, "
                             f"{', '.join(f'{value(d)} AS {_quote(d)}' for d in dims)} FROM {reading.sql}")
                    cur.register("csv_dimensions", _csv_run_dimensions(source, reading, path, query, firsts))
                    dimensions = " JOIN csv_dimensions USING (run_id)"
                excluded = ", ".join(["first_row", *(f"{m.removesuffix('_ms')}_percentiles" for m in metrics)])
                cur.execute(f"INSERT INTO runs BY NAME SELECT * EXCLUDE ({excluded}), {', '.join(unpacked)}, "
                            f"{stamp}, '{{}}'::JSON AS extra FROM csv_runs{dimensions}")
                runs = cur.execute("SELECT count(*) FROM csv_runs").fetchone()[0]
                cur.execute("DROP TABLE csv_runs")  # after a failure, the rollback drops it
                if dims:
                    cur.unregister("csv_dimensions")
            else:
                selects = [f"{value(k)} AS {_quote(k)}" for k in mapped]
                cur.execute(f"""
                    INSERT INTO runs BY NAME
                    SELECT '{prefix}-' || (row_number() OVER () - 1) AS run_id, {stamp}, {', '.join(selects)},
                           coalesce({extra}::JSON, '{{}}'::JSON) AS extra
                    FROM {reading.sql}""", reading.params(path))
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
        with self._connection() as con:
            if con.execute("SELECT 1 FROM meta WHERE key = 'examples_seeded'").fetchone():
                return []
        results = [self.import_file(f"examples/{p.name}", p.read_bytes(), origin="example") for p in paths]
        with self._connection(read_only=False) as con:
            con.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('examples_seeded', 'yes')")
        return results

    def remove_import(self, content_hash: str) -> int:
        """Delete one imported file's runs and requests (one transaction); returns the runs removed."""
        with self._transaction() as cur:
            return _delete_import(cur, content_hash)

    def remove_examples(self) -> int:
        """Delete every import of the shipped examples (``imports.origin = 'example'``), whatever its
        file name, with their runs and requests, in one transaction; returns the runs removed. A
        user's file is never one of them, even under a name such as ``examples/x.csv``."""
        with self._transaction() as cur:
            examples = cur.execute("SELECT content_hash FROM imports WHERE origin = 'example'").fetchall()
            return sum(_delete_import(cur, content_hash) for (content_hash,) in examples)

    # ----------------------------------------------------------------------------- reading
    def _kept_read(self, sql: str) -> pd.DataFrame:
        """The result of ``sql``, read again only when an import or a removal (of this process or
        another) changed the tables since the last read: a page reads the runs on every rerun, and
        the version costs a tenth of the read. Each caller gets its own copy to change."""
        with self._connection() as con, self._transaction(con):
            version = con.execute(_IMPORTS_VERSION).fetchall()[0]
            with self._cache_lock:
                kept = self._kept_reads.get(sql)
                if kept is None or kept[0] != version:
                    kept = self._kept_reads[sql] = (version, con.execute(sql).df())
        return kept[1].copy()

    def runs(self) -> pd.DataFrame:
        """Every run with its canonical columns, oldest import first."""
        return self._kept_read("SELECT * FROM runs ORDER BY imported_at, source_file, length(run_id), run_id")

    def imports(self) -> pd.DataFrame:
        """One row per imported file."""
        return self._kept_read("SELECT * FROM imports ORDER BY imported_at")

    def request_summary(self) -> pd.DataFrame:
        """Per run: request count and p50/p99 of TTFT and ITL from the ``requests`` table."""
        with self._connection() as con:
            return con.execute("""
                SELECT r.run_id, any_value(runs.concurrency) AS concurrency, count(*) AS requests,
                       quantile_cont(ttft_ms, 0.5) AS p50_ttft_ms, quantile_cont(ttft_ms, 0.99) AS p99_ttft_ms,
                       quantile_cont(itl_ms, 0.5) AS p50_itl_ms, quantile_cont(itl_ms, 0.99) AS p99_itl_ms
                FROM requests r JOIN runs USING (run_id) GROUP BY r.run_id ORDER BY r.run_id""").df()

    # ----------------------------------------------------------------------------- console
    def _snapshot(self) -> sandbox.Snapshot:
        """The tables for the SQL sandbox, kept between calls (the Store outlives its connections)
        and made again only when an import or a removal changed them, or a recorder added snapshots
        or windows, in this process or another. The version of the tables and the copy are read in one transaction: a write of this
        process may share the attachment, and the copy must be of the version it is filed under."""
        with self._connection() as con, self._transaction(con):
            version = con.execute(_CONSOLE_VERSION).fetchall()[0]
            with self._cache_lock:
                if self._snapshot_cache is None or self._snapshot_cache[0] != version:
                    fresh = sandbox.Snapshot({table: con.sql(f"SELECT * FROM {table}").to_arrow_table()
                                              for table in CONSOLE_TABLES})
                    self._snapshot_cache = (version, fresh)
                return self._snapshot_cache[1]

    def query(self, sql: str, limits: sandbox.Limits | None = None) -> sandbox.QueryResult:
        """Run one read-only statement of a user's SQL over ``runs``, ``requests``, ``imports``,
        ``snapshots`` and ``windows`` (:data:`CONSOLE_TABLES`) in the sandbox (:mod:`specviz.results.sandbox`); the time limit includes preparing the copy.

        Raises
        ------
        specviz.results.sandbox.QueryError
            If the statement is refused, fails, or exceeds a limit; its key says which.
        """
        started = time.monotonic()
        limits = limits or sandbox.Limits.from_settings()
        sandbox.check_sql(sql, limits.max_sql_chars)  # before the copy is made: a refusal costs nothing
        return sandbox.run_query(sql, self._snapshot(), limits, started)

    # ----------------------------------------------------------------------------- live metrics
    def record_scrape(self, source: str, snapshot: exposition.Snapshot) -> RecordedScrape:
        """Store one scrape of ``source``: its recognised series in ``snapshots`` and, per model, the
        window since the source's previous stored scrape in ``windows`` (none for its first), in one
        transaction.

        Parameters
        ----------
        source : str
            The URL or file the scrape came from, as the recorder was given it: a source's scrapes
            are compared with each other only.
        snapshot : specviz.live.exposition.Snapshot
            The parsed scrape; its ``time`` (seconds since the epoch) is when it was taken (now, if
            it has none).

        Returns
        -------
        RecordedScrape
            The states stored as windows, or, for a first scrape, the totals since start.

        Raises
        ------
        SpecvizError
            ``prom.no_spec_decode`` if the scrape holds no speculative-decoding series (nothing is
            written); ``store.read_only`` and the store's other errors.
        """
        moment = _utc(time.time() if snapshot.time is None else snapshot.time)
        snapshot = replace(snapshot, time=_epoch(moment))  # as stored: to the microsecond
        totals = exposition.spec_decode_states(snapshot)  # refused before the file is taken
        with self._transaction() as cur:
            previous = _previous_snapshot(cur, source)
            states = totals if previous is None else exposition.spec_decode_states(snapshot, previous)
            rows = _snapshot_table(source, moment, snapshot, states)
            cur.register("incoming_snapshot", rows)
            cur.execute("INSERT INTO snapshots BY NAME SELECT * REPLACE (CAST(labels AS JSON) AS labels) "
                        "FROM incoming_snapshot")
            cur.unregister("incoming_snapshot")
            if previous is not None:
                cur.register("incoming_windows", _window_table(source, _utc(previous.time), moment, states))
                cur.execute("INSERT INTO windows BY NAME SELECT * FROM incoming_windows")
                cur.unregister("incoming_windows")
        return RecordedScrape(moment, rows.num_rows, previous is not None, states)

    def _live_read(self, table: str, order: str, time_column: str, source: str | None,
                   since: datetime | float | None, until: datetime | float | None = None) -> pd.DataFrame:
        where, params = [], []
        if source is not None:
            where.append("source = ?")
            params.append(source)
        if since is not None:
            where.append(f"{time_column} >= ?")
            params.append(_utc(since))
        if until is not None:
            where.append(f"{time_column} <= ?")
            params.append(_utc(until))
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        with self._connection() as con:
            return con.execute(f"SELECT * FROM {table}{clause} ORDER BY {order}", params).df()

    def snapshots(self, source: str | None = None, since: datetime | float | None = None) -> pd.DataFrame:
        """Rows of ``snapshots`` (every source, or one), taken at ``since`` or later (a datetime,
        naive meaning UTC, or seconds since the epoch), oldest first."""
        return self._live_read("snapshots", "time, source, metric, model, CAST(labels AS VARCHAR)", "time",
                               source, since)

    def windows(self, source: str | None = None, since: datetime | float | None = None,
                until: datetime | float | None = None) -> pd.DataFrame:
        """Rows of ``windows`` (every source, or one) that end at ``since`` or later and at
        ``until`` or earlier, oldest first."""
        return self._live_read("windows", "time_end, source, engine, model", "time_end", source, since, until)

    def live_sources(self) -> pd.DataFrame:
        """One row per recorded source: ``source``, ``first`` and ``last`` scrape, ``scrapes``."""
        with self._connection() as con:
            return con.execute("SELECT source, min(time) AS first, max(time) AS last, count(DISTINCT time) AS scrapes "
                               "FROM snapshots GROUP BY source ORDER BY last DESC").df()

    def save_live_run(self, source: str, start: datetime | float, end: datetime | float,
                      model: str | None = None, label: str | None = None) -> ImportResult:
        """Save the windows of ``source`` that lie wholly between ``start`` and ``end`` as runs of
        format ``live`` (one per engine and model, or only ``model``'s), so the explorer sets them
        beside benchmark runs; one transaction, with an ``imports`` row (``source_file`` is the
        source) that :meth:`remove_import` removes as any file's.

        Each run: acceptance rate, acceptance length and γ from the summed counts, per-position and
        zero-accept shares weighted by drafts, ``output_throughput`` the generated tokens per
        second and ``concurrency`` the mean running requests (both over time), ``duration_s`` the
        windows' time, ``workload`` "live", ``engine`` as benchmark files name it (vLLM V1 and V0:
        "vllm", the detail in ``extra.engine_detail``); ``extra`` also holds the source, the
        range, the window and counter-reset counts, α (i.i.d.), mean waiting requests and the
        highest KV-cache usage.

        Returns
        -------
        ImportResult
            ``status="skipped"`` if this range of this source (and model) was saved before.

        Raises
        ------
        StoreError
            ``store.live_no_windows`` if no window lies in the range; ``store.read_only``.
        """
        self._require_writable()
        start, end = _utc(start), _utc(end)
        frame = self.windows(source, since=start, until=end)
        frame = frame[frame.time_start >= start]
        if model is not None:
            frame = frame[frame.model == model]
        if frame.empty:
            raise StoreError("store.live_no_windows", source=source, start=start.isoformat(sep=" "),
                             end=end.isoformat(sep=" "),
                             model=model if model is not None else Notice("store.any_model"))
        content_hash = hashlib.sha256("\0".join([LIVE_FORMAT, source, start.isoformat(), end.isoformat(),
                                                 model if model is not None else "\0"]).encode()).hexdigest()
        if self._imported(content_hash):
            return ImportResult(source, "skipped", LIVE_FORMAT, message="already saved")
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        runs = []
        for (_, name), group in frame.groupby(["engine", "model"], sort=True):
            run, extra = _live_run(group)
            extra = {"source": source, "time_start": group.time_start.min().isoformat(),
                     "time_end": group.time_end.max().isoformat(), **extra}
            runs.append({**run, "label": label, "extra": json.dumps(extra, allow_nan=False)})
        parsed = importers.Parsed(format=LIVE_FORMAT, runs=runs, requests=pd.DataFrame(), warnings=[])
        try:
            with self._transaction() as cur:
                count, _, warnings = self._insert_parsed(cur, source, parsed, content_hash, now)
                cur.execute("INSERT INTO imports (content_hash, source_file, source_format, imported_at, runs, "
                            "requests, warnings, origin) VALUES (?, ?, ?, ?, ?, 0, '[]', 'user')",
                            [content_hash, source, LIVE_FORMAT, now, count])
        except (duckdb.ConstraintException, duckdb.TransactionException):
            return self._await_concurrent_import(source, LIVE_FORMAT, content_hash)
        return ImportResult(source, "imported", LIVE_FORMAT, count, 0, warnings)
