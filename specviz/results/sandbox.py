"""The SQL console's sandbox: one user statement over a read-only copy of the data, bounded in
memory, time and result size, in a process of its own.

Layers, each of which holds on its own:

1. **Parse.** DuckDB's parser must find exactly one statement of type SELECT (which includes WITH,
   VALUES, DESCRIBE, SUMMARIZE and SHOW) or ``EXPLAIN`` of one. Its syntax tree
   (``json_serialize_sql``) must hold only query nodes that read (no ``DELETE``/``UPDATE``/``INSERT``
   inside a common table expression) and none of :data:`DENIED_FUNCTIONS` (settings, the
   environment, SQL run from a string). ``EXPLAIN ANALYZE`` (which executes) and EXPLAIN options
   are refused. The parse runs in the query's own process (layer 2), within its bounds: DuckDB
   expands grouping sets while it parses, which took an app's process to gigabytes.
2. **Process.** Every query runs in a new process of its own, forked from a server that has loaded
   the libraries and never runs a query itself (:mod:`specviz.results.query_server`), with an
   address-space limit (``RLIMIT_AS``, which also bounds single function calls such as a huge
   ``repeat``) set above what the libraries reserved before the statement is read (that share
   varies from machine to machine with thread stacks and allocator arenas), a file-size limit of
   zero (``RLIMIT_FSIZE``: not one byte can be written to any file), a CPU-time limit, an
   environment that names nothing of the host and no bytecode writing. The parent kills it at the
   time limit, which runs from the call (the user's click), including the wait for one of
   ``Limits.workers`` slots: a heavy query delays another user's by at most its own time limit.
3. **Data.** The tables are Arrow IPC streams in sealed memory files (``memfd``, sealed against
   any write or resize), made once per version of the data; the child maps them without a copy and
   registers them as Arrow views, which no statement can modify. Each query gets a fresh process, so
   no session can affect another.
4. **DuckDB.** In memory, ``enable_external_access=false`` (no files, no network), extension
   autoload and autoinstall off, no temp directory and a zero spill size (nothing spills to disk),
   a memory limit, one thread, path settings pointed at nothing, and the configuration locked.
5. **Result.** At most ``max_rows`` rows and ``max_bytes`` bytes of Arrow data come back (a query
   whose first row alone is larger is refused); the parent stops reading past that. Error messages are scrubbed of file paths.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import re
import resource
import signal
import threading
import time
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Mapping, Sequence

from specviz.errors import Notice, SpecvizError

from .frame_bytes import COLUMN_BYTES, as_frame, rows_that_fit, shown_bytes
from .query_server import start_query_process

if TYPE_CHECKING:  # pandas loads only where a result becomes a frame
    import pandas as pd

__all__ = ["Limits", "Snapshot", "QueryResult", "QueryError", "DENIED_FUNCTIONS", "NO_EXTENSIONS", "check_length",
           "check_sql", "distinct_names", "run_query"]

# For every DuckDB connection specviz opens: DuckDB would otherwise download and load extensions on
# its own (for an SQLite file, a remote URL, a file format it lacks).
NO_EXTENSIONS = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}

# Functions, and the built-in views over them, that disclose the host (settings, environment,
# databases and their paths, extensions, secrets, temp files), run SQL from a string or a
# serialized tree, which would skip the checks of the syntax tree, or change the connection's
# settings or state (the locked configuration refuses those too, but in DuckDB's words: an attack
# pass, "the configuration has been locked" for enable_logging()).
DENIED_FUNCTIONS = frozenset({
    "getenv", "current_setting", "duckdb_settings", "duckdb_databases", "duckdb_extensions",
    "duckdb_secrets", "duckdb_temporary_files", "duckdb_memory", "duckdb_external_file_cache",
    "duckdb_logs", "which_secret", "query", "query_table", "sql_auto_complete", "duckdb_profiling_settings",
    "get_block_size", "json_execute_serialized_sql", "pg_settings",
    "enable_logging", "disable_logging", "truncate_duckdb_logs", "enable_profiling", "disable_profiling",
    "add_grammar_extension", "remove_grammar_extension", "duckdb_grammar_extensions",
    "duckdb_extension_repositories", "duckdb_secret_types", "duckdb_secret_type_parameters", "checkpoint",
    "force_checkpoint",
})
_DENIED_PREFIXES = ("pragma_",)
# Query nodes that only read; a data-modifying CTE shows up as DELETE_/UPDATE_/INSERT_QUERY_NODE.
_READING_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"})
_NODE_TYPE = re.compile(r'[{,]"type":"([A-Z_]+_NODE)"')
_FUNCTION_NAME = re.compile(r'[{,]"function_name":"([^"\\]*)"')
_TABLE_NAME = re.compile(r'[{,]"table_name":"([^"\\]*)"')
# DuckDB's message as the page shows it: its hints lists a few names (Candidate bindings), never pages.
_DETAIL_CHARS = 600
# DuckDB's advice to change a setting ('Use "SET max_expression_depth TO x" to increase …', "Use SET
# lambda_syntax='ENABLE_SINGLE_ARROW' to revert …"), to its sentence's end, or as its last clause
# ("Use TRY(...) to return NULL …, or SET error_on_division_by_zero=false to return NULL …": an
# attack pass).
_SET_HINT = re.compile(r'\s*Use "?SET\b[^.]*\.|,?\s+or "?SET\b[^.]*(?=\.)')
# A file path, which is scrubbed, or a web address (DuckDB's documentation), which is kept whole.
_PATH_OR_URL = re.compile(r"(?P<url>https?://\S+)|(?:[A-Za-z]:)?(?:/[\w.~+-]+){2,}/?")
_MISSING_TABLE = re.compile(r"Catalog Error: Table with name (?P<name>.+) does not exist")
_HEADER_LIMIT = 1 << 16  # bytes of the child's status line
# The query process's own start (Python, DuckDB, Arrow and the tables: about 0.5 s of one core
# here) is not the statement's time: the time limit counts from the child's "ready" line. The
# start has a bound of its own, for a machine so loaded that even it does not finish.
_READY = b"ready\n"
_START_LIMIT_S = 30.0
# Signals that end a query process for a fault (a bad address, instruction or arithmetic), not a limit:
# an allocation past the address-space limit ends it with SIGABRT, which is said as memory.
_CRASHES = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE})
_AS_TEXT = ("UHUGEINT", "BIT", "BLOB", "UNION", "INTERVAL", "TIME", "BIGNUM", "DATE", "VARIANT", "GEOMETRY")


class QueryError(SpecvizError):
    """A refused or failed console query; ``key`` says which (``sql.*`` in the catalogue)."""


@dataclass(frozen=True)
class Limits:
    """Bounds of one console query.

    Attributes
    ----------
    timeout_s : float
        The longest wait for a free slot, counted from the call, and then the statement's own wall
        time, counted from when its process is ready (:func:`run_query`).
    max_rows, max_bytes : int
        Result size: rows, and bytes (of Arrow data, or of the pandas frame it becomes, whichever is
        larger).
    memory_bytes : int
        Address space the query may take in the child process, beyond what Python, DuckDB, Arrow
        and the mapped tables hold before it runs; DuckDB's own memory limit is half of it,
        so that ordinary large queries end with DuckDB's message before the operating system's
        limit.
    workers : int
        Console queries that may run at once in this process; the others wait.
    max_sql_chars : int
        Length of the statement's text.
    """

    timeout_s: float = 5.0
    max_rows: int = 10_000
    max_bytes: int = 50_000_000
    memory_bytes: int = 2_000_000_000
    workers: int = 2
    max_sql_chars: int = 20_000

    @classmethod
    def from_settings(cls) -> "Limits":
        """The limits set in :mod:`specviz.settings`."""
        from specviz import settings

        return cls(timeout_s=settings.get("SPECVIZ_SQL_TIMEOUT_S"), max_rows=settings.get("SPECVIZ_SQL_MAX_ROWS"),
                   max_bytes=settings.get("SPECVIZ_SQL_MAX_BYTES"),
                   memory_bytes=settings.get("SPECVIZ_SQL_MEMORY_BYTES"),
                   workers=settings.get("SPECVIZ_SQL_WORKERS"),
                   max_sql_chars=settings.get("SPECVIZ_SQL_MAX_CHARS"))


@dataclass
class QueryResult:
    """Rows of a console query; ``truncated`` names the cap that cut them ("rows", "bytes") or is "";
    ``seconds`` is the whole time from the click, ``waited_s`` the part spent waiting for a free slot
    (other sessions' queries ran)."""

    frame: pd.DataFrame
    truncated: str
    seconds: float
    waited_s: float = 0.0


# ------------------------------------------------------------------------------------ layer 1
def _check_tree(parser: Any, sql: str) -> None:
    """Refuse a SELECT whose syntax tree modifies data or calls a denied function.

    The tree is DuckDB's compact JSON, read with patterns rather than decoded: a tree as deep as
    the parser allows would exhaust Python's recursion limit in ``json.loads``. A key is always
    preceded by ``{`` or ``,`` there, while a quote inside a string value is always escaped, so
    text in the user's literals cannot pose as a key.
    """
    tree = parser.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0]
    if tree.startswith('{"error":true'):
        raise QueryError("sql.not_a_query", detail=_scrub(json.loads(tree).get("error_message", "")))
    for kind in _NODE_TYPE.findall(tree):
        if kind not in _READING_NODES:
            raise QueryError("sql.modifies", node=kind.removesuffix("_QUERY_NODE").removesuffix("_NODE"))
    for name in _FUNCTION_NAME.findall(tree) + _TABLE_NAME.findall(tree):
        if name.lower() in DENIED_FUNCTIONS or name.lower().startswith(_DENIED_PREFIXES):
            raise QueryError("sql.denied_function", name=name)


def _first_word(sql: str, kind: Any = None) -> str:
    """A refused statement's kind as the user wrote it, its first word past comments (DuckDB files
    INSTALL under LOAD, which named a statement the user had not typed); after a WITH, what DuckDB
    read it to be (``kind``, its statement type: "WITH … INSERT"), for a WITH alone reads as a query."""
    import duckdb

    starts = [offset for offset, token in duckdb.tokenize(sql) if token != duckdb.token_type.comment]
    first = sql[starts[0]:].split(None, 1)[0].upper()[:40] if starts else "?"
    return f"{first} … {kind.name}" if first == "WITH" and kind is not None else first


def check_length(sql: str, max_chars: int = 20_000) -> None:
    """Refuse a statement longer than ``max_chars``, unparsed: in the caller, before any copy of the
    data is made (:func:`check_sql` parses in the query's own process).

    Raises
    ------
    QueryError
        ``sql.too_long``.
    """
    if len(sql) > max_chars:
        raise QueryError("sql.too_long", chars=len(sql), limit=max_chars)


def check_sql(sql: str, max_chars: int = 20_000) -> None:
    """Refuse a statement the console does not run (layer 1 of the module docstring).

    :func:`run_query` calls it in the query's own process, within its bounds of memory and time:
    DuckDB's parser takes seconds on a few hundred kilobytes of common table expressions, and
    expands ROLLUP, CUBE and GROUPING SETS while it parses (an attack pass: 1.5 KB of two ROLLUPs,
    65,535 sets, took the app's process to 2.4 GB in 16 s; a CUBE of 12 columns beside 600 plain ones,
    3 KB, 163 s of CPU), which it did in the app's process before.

    Raises
    ------
    QueryError
        ``sql.too_long``, ``sql.parse``, ``sql.no_query``, ``sql.count``, ``sql.kind``, ``sql.multi``, ``sql.explain_analyze``,
        ``sql.not_a_query``, ``sql.modifies`` or ``sql.denied_function``.
    """
    import duckdb

    check_length(sql, max_chars)

    with duckdb.connect(":memory:", config=NO_EXTENSIONS) as parser:
        try:
            statements = parser.extract_statements(sql)
        except duckdb.Error as exc:
            raise QueryError("sql.parse", detail=_scrub(str(exc))) from None
        if not statements:  # a blank box, or comments alone: no query, not "0 statements" (an analyst's pass)
            raise QueryError("sql.no_query")
        if len(statements) != 1:
            raise QueryError("sql.count", count=len(statements))
        try:
            kind = statements[0].type
        except ValueError:  # a kind this duckdb's Python enum does not list (UPDATE EXTENSIONS: 29)
            raise QueryError("sql.kind", kind=_first_word(sql)) from None
        if kind == duckdb.StatementType.EXPLAIN:
            # The word after EXPLAIN decides: ANALYZE executes; anything but a SELECT is refused.
            starts = [offset for offset, token in duckdb.tokenize(sql) if token != duckdb.token_type.comment]
            second = sql[starts[1]:starts[2] if len(starts) > 2 else None].strip().upper() if len(starts) > 1 else ""
            if second in ("ANALYZE", "ANALYSE"):
                raise QueryError("sql.explain_analyze")
            inner = sql[starts[1]:] if len(starts) > 1 else ""
            try:
                inner_statements = parser.extract_statements(inner)
            except duckdb.Error:
                inner_statements = []
            if len(inner_statements) != 1 or inner_statements[0].type != duckdb.StatementType.SELECT:
                raise QueryError("sql.explain_options")
            _check_tree(parser, inner)
        elif kind == duckdb.StatementType.SELECT:
            _check_tree(parser, sql)
        elif kind == duckdb.StatementType.MULTI:
            # A PIVOT without its IN list is run by DuckDB as several statements, the first making an
            # ENUM type of the values found: refused, as every write, but not as "this is SELECT".
            raise QueryError("sql.multi")
        else:
            raise QueryError("sql.kind", kind=_first_word(sql, kind))


# ------------------------------------------------------------------------------ parent side
@cache
def _slots(workers: int) -> threading.BoundedSemaphore:
    return threading.BoundedSemaphore(workers)


def _scrub(text: str) -> str:
    """DuckDB's message up to its first blank line, on one line and without file paths (DuckDB
    names directories in some of its errors): its hints stay ("Candidate bindings: "p99_ttft_ms"",
    "Did you mean "runs"?"), the query it quotes with a caret under the place does not, nor a hint to
    change a setting with SET, which the console refuses (an attack pass: a query nested 2,000 deep
    was told to 'Use "SET max_expression_depth TO x"'; a lambda with an arrow to "Use SET lambda_syntax=…",
    its documentation's address read as "https:/<path>")."""
    one_line = _SET_HINT.sub("", " ".join(text.split("\n\n", 1)[0].split()))
    return _PATH_OR_URL.sub(lambda found: found["url"] or "<path>", one_line)[:_DETAIL_CHARS]


class Snapshot:
    """Tables as Arrow IPC streams in sealed memory files, for any number of queries.

    Parameters
    ----------
    tables : mapping of str to pyarrow.Table
    """

    def __init__(self, tables: Mapping[str, Any]) -> None:
        import pyarrow as pa

        self.fds: dict[str, int] = {}
        for name, table in tables.items():
            fd = os.memfd_create(f"specviz-{name}", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
            with pa.OSFile(f"/proc/self/fd/{fd}", "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK
                        | fcntl.F_SEAL_SEAL)
            self.fds[name] = fd

    def close(self) -> None:
        """Release the memory (a query process already started keeps its own mapping)."""
        fds, self.fds = self.fds, {}
        for fd in fds.values():
            os.close(fd)

    # A newer snapshot replaces this one while a query may still be starting with it: the memory
    # goes when the last reference does, never under a running call.
    __del__ = close


def run_query(sql: str, tables: Snapshot, limits: Limits = Limits(),
              started: float | None = None) -> QueryResult:
    """Run one statement of a user's SQL over ``tables`` in a child process, which checks it first
    (:func:`check_sql`, within the child's bounds; the caller checks its length, :func:`check_length`,
    before it makes the snapshot).

    Parameters
    ----------
    sql : str
        The user's text.
    tables : Snapshot
        The data the query sees.
    limits : Limits
    started : float, optional
        ``time.monotonic()`` of the user's click; the time limit runs from there (default: now).

    Returns
    -------
    QueryResult

    Raises
    ------
    QueryError
        No free slot before the time limit (``sql.busy``), stopped at
        the time limit (``sql.timeout``; ``sql.timeout_waited`` with the wait for a slot before it), out of memory (``sql.memory``), failed in DuckDB
        (``sql.failed``, message scrubbed of paths; ``sql.detail.exit_code`` its detail where the query
        process ended without one), a result over the byte cap (``sql.too_large``) or whose first row
        alone is over it (``sql.row_too_large``).
    """
    started = time.monotonic() if started is None else started
    deadline = started + limits.timeout_s
    slots = _slots(limits.workers)
    # The wait for a slot alone: what came before it since ``started`` (the check, the store's copy of
    # its tables) is the query's time, not a wait for other sessions' queries, as the page says it is.
    asked = time.monotonic()
    if not slots.acquire(timeout=max(0.0, deadline - asked)):
        raise QueryError("sql.busy", seconds=limits.timeout_s, workers=limits.workers)
    waited = time.monotonic() - asked
    try:
        header, payload = _exchange(sql, tables, limits, deadline)
    except QueryError as error:
        raise _with_wait(error, waited, limits) from None
    finally:
        slots.release()
    if not header.get("ok"):
        raise _with_wait(QueryError(header.get("key", "sql.failed"), **header.get("params", {})), waited, limits)
    import pyarrow as pa

    frame = as_frame(pa.ipc.open_stream(pa.py_buffer(payload)).read_all())
    return QueryResult(frame, header.get("truncated", ""), time.monotonic() - started, waited)


# A wait for a slot shorter than this is not said beside a time limit met.
_WAIT_SAID_S = 0.5


def _with_wait(error: QueryError, waited: float, limits: Limits) -> QueryError:
    """``error``, or where it is the time limit met after a wait for a slot, ``sql.timeout_waited``
    with the wait (an attack pass: "stopped at the 5 s time limit" after 10.2 s, 5.2 of them waiting)."""
    if error.key != "sql.timeout" or waited < _WAIT_SAID_S:
        return error
    return QueryError("sql.timeout_waited", seconds=limits.timeout_s, waited=round(waited, 1), workers=limits.workers)


def _exchange(sql: str, tables: Snapshot, limits: Limits,
              deadline: float) -> tuple[dict[str, Any], bytes | memoryview]:
    """Take a child, hand it the query and the tables, read its answer within the bounds."""
    request = {"sql": sql, "tables": list(tables.fds), "limits": asdict(limits)}
    try:
        child = start_query_process(list(tables.fds.values()), max(0.0, deadline - time.monotonic()) + _START_LIMIT_S)
    except TimeoutError:
        raise QueryError("sql.timeout", seconds=limits.timeout_s) from None
    except OSError:
        raise QueryError("sql.failed", detail=Notice("sql.detail.no_server")) from None
    try:
        child.stdin.write(json.dumps(request).encode() + b"\n")
        child.stdin.close()
    except BrokenPipeError:  # the child ended early; its exit code tells why
        pass
    cap = _HEADER_LIMIT + limits.max_bytes + (1 << 20)  # Arrow framing beyond the data's own bytes
    output = bytearray()
    # Until the child is ready: the slot's wait and a start of at most _START_LIMIT_S; then the
    # statement's own time limit, counted from the ready line (a trivial query on a loaded machine
    # met the limit in the start of its process).
    timer = threading.Timer(max(0.0, deadline - time.monotonic()) + _START_LIMIT_S, child.kill)
    timer.start()
    ready = False
    try:
        while len(output) <= cap:
            chunk = child.stdout.read1(1 << 20)
            if not chunk:
                break
            output += chunk
            if not ready and output.startswith(_READY):
                ready, output = True, output[len(_READY):]
                timer.cancel()
                deadline = time.monotonic() + limits.timeout_s
                timer = threading.Timer(limits.timeout_s, child.kill)
                timer.start()
        if len(output) > cap:
            child.kill()
    finally:
        timer.cancel()
        child.stdout.close()
        code = child.wait()
    if len(output) > cap:
        raise QueryError("sql.too_large", bytes=limits.max_bytes)
    if code == -signal.SIGXCPU or (code != 0 and time.monotonic() >= deadline):
        raise QueryError("sql.timeout", seconds=limits.timeout_s)
    # The rows stay where they were read (a view, not a copy: two copies of a result at the byte
    # cap had the caller hold three times the cap, 153 MB at 50 MB, as it turned them into a frame).
    newline = output.find(b"\n")
    line, payload = (output, b"") if newline < 0 else (output[:newline], memoryview(output)[newline + 1:])
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict):
        if child.lost:
            raise QueryError("sql.failed", detail=Notice("sql.detail.server_lost"))
        if -code in _CRASHES:  # a fault in the libraries, not a limit (the server is replaced for it)
            raise QueryError("sql.failed", detail=Notice("sql.detail.crashed", signal=signal.Signals(-code).name))
        if code < 0:  # ended by a signal: an allocation past the address-space limit aborts
            raise QueryError("sql.memory", bytes=limits.memory_bytes)
        raise QueryError("sql.failed", detail=Notice("sql.detail.exit_code", code=code))
    return header, payload


# ------------------------------------------------------------------------------- child side
def _limit_files_and_cpu(limits: Limits) -> None:
    """Bounds that hold from the request on: not one byte written to any file, and CPU time (the
    start's allowance and the statement's; :func:`_limit_statement_cpu` lowers it once started)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    cpu = math.ceil(_START_LIMIT_S + limits.timeout_s) + 1
    # The hard limit a second past the soft one: at the soft limit the kernel sends SIGXCPU, which the
    # parent reads as the time limit; at equal limits it sends SIGKILL, which tells nothing.
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def _limit_statement_cpu(limits: Limits) -> None:
    """Lower the CPU limit to what the start used plus the statement's time limit (and a second)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = math.ceil(used.ru_utime + used.ru_stime + limits.timeout_s) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def _limit_address_space(budget: int) -> None:
    """Cap the address space at what the process holds now plus ``budget`` bytes.

    The libraries' own reservations (a stack and a malloc arena for each thread DuckDB starts,
    Arrow's allocator) differ between machines: an absolute cap that leaves room for them on one
    machine fails another's imports, as a CI runner showed ("failed to map segment from shared
    object"). Measured from here, the cap bounds what the statement takes, alike everywhere.
    """
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    held = int(status["VmSize"].split()[0]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (held + budget, held + budget))


def _as_text(kind: Any) -> bool:
    """Whether a column of DuckDB type ``kind`` is shown as text: one of :data:`_AS_TEXT`, or a nested
    type that holds one at any depth (walked without recursion)."""
    pending = [kind]
    while pending:
        kind = pending.pop()
        if str(kind).startswith(_AS_TEXT):
            return True
        if kind.id in ("struct", "map", "list", "array", "union"):
            pending += [child for _, child in kind.children if not isinstance(child, (int, str, list))]
    return False


def distinct_names(names: Sequence[Any]) -> list[Any]:
    """``names`` with each repeat numbered, "label (2)", "label (3)", skipping a number another name
    already holds: a table keeps one column of each name (a query's result here, and the names that
    read alike once their invisible characters are escaped: :func:`specviz.results.export.visible_frame`)."""
    taken, seen, out = set(names), set(), []
    for name in names:
        if name in seen:
            number = 2
            while f"{name} ({number})" in taken:
                number += 1
            name = f"{name} ({number})"
            taken.add(name)
        seen.add(name)
        out.append(name)
    return out


def _displayable(relation: Any) -> Any:
    """The result with the columns that Arrow, pandas or JSON would get wrong or refuse cast to text
    (UHUGEINT reads back as -1, BIT, BLOB and BIGNUM (VARINT) are not text, UNION has no pandas form,
    INTERVAL no JSON form, VARIANT and GEOMETRY come as bytes, TIME WITH TIME ZONE loses its offset,
    a TIME of 24:00:00 raises ValueError and a TIME_NS with nanoseconds ArrowInvalid in ``to_pandas``,
    a DATE or TIMESTAMP may be infinite or of a year pandas cannot hold; "TIME" covers them all),
    also where a STRUCT, MAP, LIST or ARRAY holds one (a UNION in a STRUCT aborted the query process
    in Arrow's ``StructArray.flatten``, which the parent reported as out of memory; an infinite DATE
    in a STRUCT raised pandas' ValueError in the caller), and a name the result repeats made unique
    (:func:`distinct_names`: a table keeps one column of each name)."""
    as_text = [_as_text(kind) for kind in relation.types]
    names = distinct_names(relation.columns)
    if not any(as_text) and names == list(relation.columns):
        return relation
    columns = [f'{"CAST(#%d AS VARCHAR)" % (i + 1) if text else "#%d" % (i + 1)} AS '
               + '"' + name.replace('"', '""') + '"' for i, (name, text) in enumerate(zip(names, as_text))]
    return relation.project(", ".join(columns))


def load_query_libraries() -> None:
    """What every query process needs before its request, done once in the fork server
    (:mod:`specviz.results.query_server`): DuckDB and Arrow loaded, and Arrow's compute functions and
    allocator set up by a first count (of a batch made by DuckDB: one made from Python values would
    load pandas), with no thread left running."""
    import duckdb
    import pyarrow as pa

    pa.set_cpu_count(1)  # conversions on the calling thread: no thread (and arena) starts under the cap
    with duckdb.connect(":memory:", config={**NO_EXTENSIONS, "threads": 1}) as warm:
        shown_bytes(warm.sql("SELECT 'up' AS warm").to_arrow_table().to_batches()[0])


def run_in_query_process(stdin: BinaryIO, stdout: BinaryIO, table_fds: Sequence[int]) -> None:
    """In a query process forked by the server: read the request (none where the parent ended or
    gave up), run the query locked down over the tables ``table_fds`` (the request names them in
    this order), write a status line and the Arrow result."""
    import duckdb
    import pyarrow as pa

    line = stdin.readline()
    if not line:
        return
    request = json.loads(line)
    limits = Limits(**request["limits"])
    _limit_files_and_cpu(limits)

    def answer(header: dict[str, Any], batches: list[Any] | None = None, schema: Any = None) -> None:
        stdout.write(json.dumps(header).encode() + b"\n")
        if schema is not None:
            with pa.ipc.new_stream(stdout, schema) as writer:
                for batch in batches or []:
                    writer.write_batch(batch)
        stdout.flush()

    # DuckDB's own limit sits below the address-space cap, so that it ends most queries first.
    duck_limit = max(64 << 20, limits.memory_bytes // 2)
    con = duckdb.connect(":memory:", config={**NO_EXTENSIONS, "threads": 1, "temp_directory": "",
                                             "memory_limit": f"{duck_limit}B"})
    for name, fd in zip(request["tables"], table_fds, strict=True):
        # Zero-copy: the table's buffers point into the mapping, which lives as long as the process.
        con.register(name, pa.ipc.open_stream(pa.memory_map(f"/proc/self/fd/{fd}")).read_all())
        os.close(fd)
    for statement in ("SET max_temp_directory_size = '0B'", "SET secret_directory = '/nonexistent'",
                      "SET extension_directory = '/nonexistent'", "SET home_directory = '/nonexistent'",
                      "SET allow_persistent_secrets = false", "SET enable_progress_bar = false",
                      "SET enable_external_access = false", "SET lock_configuration = true"):
        con.execute(statement)
    _limit_address_space(limits.memory_bytes)
    _limit_statement_cpu(limits)
    stdout.write(_READY)  # the statement's time starts here
    stdout.flush()
    cursor = con  # registered views belong to this connection; a cursor() would not see them
    # DuckDB stops itself a little before the parent's kill, so that a slow query ends with a message;
    # a short limit keeps most of its time (at 0.2 s the interrupt had come at 0.05 s, and a trivial
    # statement on a loaded machine met it).
    timer = threading.Timer(max(0.8 * limits.timeout_s, limits.timeout_s - 0.25), cursor.interrupt)
    timer.start()
    try:
        check_sql(request["sql"], limits.max_sql_chars)  # in this process's bounds, timed with the statement
        reader = _displayable(cursor.sql(request["sql"])).to_arrow_reader(64)  # small batches: rows can be large
        # The schema is sent too (column names, nested types: 288 kB for 6,000 columns), and the
        # caller makes a Python str of each name (at most 80 + 4 bytes a byte of UTF-8): 10,000 names
        # a PIVOT made of 18 kB of SQL, 18 MB of UTF-8 with an emoji each, were 72 MB of str there.
        names = sum(COLUMN_BYTES + 80 + 4 * len(name.encode()) for name in reader.schema.names)
        batches, rows, size, truncated = [], 0, reader.schema.serialize().size + names, ""
        for batch in reader:
            if rows + batch.num_rows > limits.max_rows:
                batch, truncated = batch.slice(0, limits.max_rows - rows), "rows"
            shown = shown_bytes(batch)  # counted once a batch: at 6,000 columns a count takes 0.1-0.2 s
            if size + shown > limits.max_bytes:
                fit = rows_that_fit(batch, limits.max_bytes - size)
                batch, truncated = batch.slice(0, fit), "bytes"
                shown = shown_bytes(batch)
            batches.append(batch)
            rows, size = rows + batch.num_rows, size + shown
            if truncated:
                break
        if truncated == "bytes" and rows == 0:  # refused: not "the first 0 rows", and a CSV of none
            answer({"ok": False, "key": "sql.row_too_large", "params": {"bytes": limits.max_bytes}})
        else:
            # One chunk a column in the caller's frame, not one a 64 rows: each chunk of each column
            # is Arrow objects of its own there (4,000 text columns of 1,343 rows, 48 MB of data,
            # held 183 MB in 84,000 chunks).
            batches = pa.Table.from_batches(batches, reader.schema).combine_chunks().to_batches()
            answer({"ok": True, "truncated": truncated}, batches, reader.schema)
    except QueryError as exc:  # refused by the checks of layer 1
        answer({"ok": False, "key": exc.key, "params": exc.params})
    except duckdb.InterruptException:
        answer({"ok": False, "key": "sql.timeout", "params": {"seconds": limits.timeout_s}})
    except (duckdb.OutOfMemoryException, MemoryError):
        answer({"ok": False, "key": "sql.memory", "params": {"bytes": limits.memory_bytes}})
    except duckdb.PermissionException:
        answer({"ok": False, "key": "sql.permission"})
    except duckdb.CatalogException as exc:
        # FROM '/etc/passwd' is looked up as a table once files are out of reach: said as the file it is.
        missing = _MISSING_TABLE.match(str(exc))
        if missing and "/" in missing["name"]:
            answer({"ok": False, "key": "sql.permission"})
        else:
            answer({"ok": False, "key": "sql.failed", "params": {"detail": _scrub(str(exc))}})
    except Exception as exc:  # DuckDB's errors, also as Arrow's OSError while streaming; conversions
        answer({"ok": False, "key": "sql.failed", "params": {"detail": _scrub(str(exc))}})
    finally:
        timer.cancel()

