"""Attack suite of the SQL console (specviz.results.sandbox through Store.query).

Every statement below either is refused or fails with a QueryError, or returns a bounded result;
none changes the data, writes a file, discloses a host path or outlives its time limit.
"""

import contextlib
import dataclasses
import hashlib
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from specviz import i18n
from specviz.cli.common import frame_rows
from specviz.results import export, frame_bytes, query_server, sandbox
from specviz.results.sandbox import Limits, QueryError
from specviz.results.store import Store

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "samples"
SAMPLE_FILES = ["vllm_bench_nerdalert.jsonl", "guidellm_benchmarks.json", "profile_export_genai_perf.csv",
                "llmperf_Yi-1-5-34B_550_150_summary.json"]
LIMITS = Limits(timeout_s=3.0, max_rows=1000, max_bytes=2_000_000, memory_bytes=800_000_000, workers=2)
# Filling 400 MB of DuckDB's memory takes a single thread 2.5 s here: how soon a query meets the
# memory limit depends on the machine, so the time limit must not decide which limit it meets.
MEMORY_ATTACK_LIMITS = dataclasses.replace(LIMITS, timeout_s=60.0)
# An attack refused for its time meets the limit as surely at 1 s as at 3, and 2 s sooner.
TIME_ATTACK_LIMITS = dataclasses.replace(LIMITS, timeout_s=1.0)
RUNS = 12
# What a disclosed host detail would look like in a result or a message.
HOST_DETAIL = re.compile(r"/(root|home|work|tmp|usr|etc|proc|var)\b|" + re.escape(str(ROOT)))


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sandbox")
    s = Store(folder / "specviz.duckdb")
    for name in SAMPLE_FILES:
        s.import_file(name, (SAMPLES / name).read_bytes())
    yield s
    s.close()


def fingerprint(s: Store) -> tuple[int, str]:
    runs = s.runs()
    return len(runs), hashlib.sha256(runs.drop(columns=["imported_at"]).to_json().encode()).hexdigest()


def tree(path: Path) -> set[str]:
    """Every file and folder under ``path`` except the virtual environment and git's own."""
    found = set()
    for folder, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d not in (".venv", ".git", "artifacts", ".pytest_cache", ".hypothesis")]
        found |= {os.path.join(folder, n) for n in dirs + files}
    return found


# (statement, the error key it must end with, or None where a bounded result is fine)
WRITES_IN_DISGUISE = [
    ("WITH x AS (DELETE FROM runs RETURNING 1) SELECT count(*) FROM x", "sql.modifies"),
    ("WITH x AS (UPDATE runs SET label = 'x' RETURNING 1) SELECT * FROM x", "sql.modifies"),
    ("WITH x AS (INSERT INTO runs (run_id) VALUES ('x') RETURNING 1) SELECT * FROM x", "sql.modifies"),
    ("SELECT * FROM (WITH x AS (DELETE FROM runs RETURNING 1) SELECT * FROM x)", "sql.modifies"),
    ("SELECT (WITH x AS (DELETE FROM requests RETURNING 1) SELECT count(*) FROM x)", "sql.modifies"),
    ("WITH a AS (SELECT 1), b AS (DELETE FROM imports RETURNING 1) SELECT * FROM a", "sql.modifies"),
    ("WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3), "
     "d AS (DELETE FROM runs RETURNING 1) SELECT * FROM r", "sql.parse"),
    ("SELECT 1 UNION ALL (WITH d AS (DELETE FROM runs RETURNING 1) SELECT count(*) FROM d)", "sql.modifies"),
    ("EXPLAIN ANALYZE SELECT * FROM runs", "sql.explain_analyze"),
    ("EXPLAIN ANALYZE DELETE FROM runs", "sql.explain_analyze"),
    ("EXPLAIN  analyze COPY runs TO 'x.csv'", "sql.explain_analyze"),
    ("EXPLAIN ANALYSE UPDATE runs SET label = 'x'", "sql.explain_analyze"),
    ("EXPLAIN DELETE FROM runs", "sql.explain_options"),
    ("EXPLAIN (FORMAT json) SELECT 1", "sql.explain_options"),
    ("EXPLAIN WITH x AS (DELETE FROM runs RETURNING 1) SELECT * FROM x", "sql.modifies"),
    ("/* comment */ EXPLAIN ANALYZE SELECT 1", "sql.explain_analyze"),
    ("DELETE FROM runs", "sql.kind"),
    # A PIVOT without its IN list creates an ENUM of the values first (DuckDB's MULTI statement):
    # refused, as a write, and not as "this is SELECT" (an attack pass).
    ("SELECT * FROM (PIVOT (SELECT 1 k, 2 v) ON k USING sum(v))", "sql.multi"),
    ("PIVOT (SELECT 1 k, 2 v) ON k USING sum(v)", "sql.multi"),
    ("UPDATE runs SET label = 'x'", "sql.kind"),
    ("UPDATE EXTENSIONS", "sql.kind"),  # a kind duckdb's Python enum does not list: a raw ValueError before
    ("INSERT INTO runs (run_id) VALUES ('x')", "sql.kind"),
    ("INSERT OR REPLACE INTO imports SELECT * FROM imports", "sql.kind"),
    ("CREATE TABLE t AS SELECT * FROM runs", "sql.kind"),
    ("CREATE TEMP TABLE t AS SELECT 1", "sql.kind"),
    ("CREATE VIEW v AS SELECT 1", "sql.kind"),
    ("CREATE MACRO m(a) AS a + 1", "sql.kind"),
    ("CREATE SEQUENCE s", "sql.kind"),
    ("CREATE TYPE mood AS ENUM ('a')", "sql.kind"),
    ("CREATE SCHEMA s", "sql.kind"),
    ("DROP TABLE runs", "sql.kind"),
    ("ALTER TABLE runs ADD COLUMN x INTEGER", "sql.kind"),
    ("TRUNCATE runs", "sql.kind"),
    ("BEGIN TRANSACTION", "sql.kind"),
    ("CHECKPOINT", "sql.kind"),
    ("VACUUM", "sql.kind"),
    ("DETACH memory", "sql.kind"),
    ("USE system", "sql.kind"),
    ("PIVOT runs ON source_format USING count(*)", "sql.multi"),
    ("SELECT 1; DELETE FROM runs", "sql.count"),
    ("SELECT 1 -- a comment\n; DROP TABLE runs", "sql.count"),
    ("SELECT 1; SELECT 2", "sql.count"),
    ("", "sql.no_query"), ("-- only a comment", "sql.no_query"),
    ("SELEC 1", "sql.parse"),
    ("SELECT 'unterminated", "sql.parse"),
]
FILES_AND_NETWORK = [
    ("SELECT * FROM read_csv('/etc/passwd')", "sql.permission"),
    ("SELECT * FROM read_csv_auto('/etc/passwd')", "sql.permission"),
    ("SELECT * FROM read_text('/etc/hostname')", "sql.permission"),
    ("SELECT * FROM read_blob('/etc/hostname')", "sql.permission"),
    ("SELECT * FROM read_json('/etc/passwd')", "sql.permission"),
    ("SELECT * FROM read_json_auto('/proc/self/environ')", "sql.permission"),
    ("SELECT * FROM read_ndjson('/proc/self/cmdline')", "sql.permission"),
    ("SELECT * FROM read_parquet('/tmp/x.parquet')", "sql.permission"),
    ("SELECT * FROM parquet_scan('/tmp/x.parquet')", "sql.permission"),
    ("SELECT * FROM parquet_metadata('/tmp/x.parquet')", "sql.permission"),
    ("SELECT * FROM sniff_csv('/etc/passwd')", "sql.permission"),
    ("SELECT * FROM glob('/*')", "sql.permission"),
    ("SELECT * FROM glob('*')", "sql.permission"),
    # Looked up as a table where files are out of reach: said to be a file, not DuckDB's "Catalog Error".
    ("SELECT * FROM '/etc/passwd'", "sql.permission"),
    ('SELECT * FROM "/etc/passwd"', "sql.permission"),
    ("SELECT * FROM 'data/specviz.duckdb'", None),
    ("SELECT * FROM read_csv('data/gpus.csv')", "sql.permission"),
    ("SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')", None),
    ("SELECT * FROM 'https://127.0.0.1:9/x.parquet'", None),
    ("SELECT * FROM read_parquet('s3://bucket/x.parquet')", None),
    ("SELECT * FROM sqlite_scan('/tmp/x.db', 't')", None),
    ("SELECT * FROM postgres_scan('host=127.0.0.1', 'public', 't')", None),
    ("SELECT * FROM delta_scan('/tmp/x')", None),
    ("SELECT * FROM iceberg_scan('/tmp/x')", None),
    ("COPY runs TO '/tmp/out.csv'", "sql.kind"),
    ("COPY (SELECT 1) TO 'out.csv'", "sql.kind"),
    ("COPY runs FROM '/etc/passwd'", "sql.kind"),
    ("EXPORT DATABASE '/tmp/x'", "sql.kind"),
    ("IMPORT DATABASE '/tmp/x'", "sql.kind"),
    ("ATTACH '/tmp/other.duckdb'", "sql.kind"),
    ("ATTACH 'data/specviz.duckdb' AS s", "sql.kind"),
    ("ATTACH ':memory:' AS m", "sql.kind"),
    ("INSTALL httpfs", "sql.kind"),
    ("LOAD httpfs", "sql.kind"),
    ("FORCE INSTALL sqlite", "sql.kind"),
    ("SELECT * FROM duckdb_extensions()", "sql.denied_function"),
    ("SELECT * FROM query('SELECT * FROM read_csv(''/etc/passwd'')')", "sql.denied_function"),
    ("SELECT * FROM query_table('runs')", "sql.denied_function"),
    ("CALL sql_auto_complete('SEL')", "sql.kind"),
]
SETTINGS = [
    ("SET enable_external_access = true", "sql.kind"),
    ("SET lock_configuration = false", "sql.kind"),
    ("SET memory_limit = '100GB'", "sql.kind"),
    ("SET threads = 64", "sql.kind"),
    ("SET GLOBAL temp_directory = '/tmp/spill'", "sql.kind"),
    ("RESET threads", "sql.kind"),
    ("RESET ALL", "sql.parse"),
    ("PRAGMA database_list", "sql.kind"),
    ("PRAGMA enable_profiling", "sql.kind"),
    ("PRAGMA memory_limit = '100GB'", "sql.kind"),
    ("CALL pragma_database_list()", "sql.kind"),
    ("SELECT * FROM pragma_database_list()", "sql.denied_function"),
    ("SELECT * FROM pragma_database_size()", "sql.denied_function"),
    ("SELECT * FROM pragma_storage_info('runs')", "sql.denied_function"),
    ("SELECT * FROM duckdb_settings()", "sql.denied_function"),
    ("SELECT value FROM duckdb_settings() WHERE name = 'temp_directory'", "sql.denied_function"),
    ("SELECT current_setting('temp_directory')", "sql.denied_function"),
    ("SELECT current_setting('home_directory')", "sql.denied_function"),
    ("SELECT CURRENT_SETTING('extension_directory')", "sql.denied_function"),
    ("SELECT * FROM duckdb_databases()", "sql.denied_function"),
    ("SELECT * FROM duckdb_temporary_files()", "sql.denied_function"),
    ("SELECT * FROM duckdb_memory()", "sql.denied_function"),
    ("SELECT * FROM duckdb_secrets()", "sql.denied_function"),
    ("SELECT * FROM which_secret('s3://x', 's3')", "sql.denied_function"),
    ("SELECT getenv('HOME')", "sql.denied_function"),
    ("SELECT getenv('PATH')", "sql.denied_function"),
    ("SELECT * FROM (SELECT getenv('USER'))", "sql.denied_function"),
    ("SELECT list_transform([1], x -> current_setting('home_directory'))", "sql.denied_function"),
    ("CREATE SECRET s (TYPE s3, KEY_ID 'x', SECRET 'y')", "sql.kind"),
    # Found by the attack pass: built-in views over the settings, and SQL run from a serialized tree.
    ("SELECT * FROM pg_catalog.pg_settings", "sql.denied_function"),
    ("SELECT * FROM duckdb_settings", "sql.denied_function"),
    ("SELECT * FROM main.pragma_database_list", "sql.denied_function"),
    ("SELECT * FROM duckdb_profiling_settings()", "sql.denied_function"),
    ("SELECT get_block_size('memory')", "sql.denied_function"),
    ("SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT current_setting(''memory_limit'')'))",
     "sql.denied_function"),
    ("WITH " + ",".join(f"a{i} AS (SELECT 1)" for i in range(15000)) + " SELECT 1", "sql.too_long"),
]
EXHAUSTION = [
    # Single function calls that allocate past any memory limit.
    ("SELECT length(repeat('x', 1500000000))", "sql.memory"),
    ("SELECT length(repeat(repeat('x', 100000), 30000))", "sql.memory"),
    ("SELECT list_aggr(range(400000000), 'sum')", "sql.memory"),
    ("SELECT length(list(range)) FROM range(400000000)", "sql.memory"),
    ("SELECT length(string_agg(repeat('x', 1000), '')) FROM range(3000000)", "sql.memory"),
    ("SELECT array_length(list_value(range(300000000)))", "sql.memory"),
    # Spilling: a large sort or join has no temp directory to go to.
    ("SELECT sum(x) FROM (SELECT random() AS x FROM range(300000000) ORDER BY x)", "sql.memory"),
    ("SELECT count(*) FROM (SELECT DISTINCT random() FROM range(300000000))", "sql.memory"),
    # Time.
    ("SELECT count(*) FROM range(100000000000)", "sql.timeout"),
    ("SELECT sum(a.range * b.range) FROM range(200000) a, range(200000) b", "sql.timeout"),
    ("WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r", None),
    ("SELECT count(*) FROM runs a, runs b, runs c, runs d, runs e, runs f, runs g, runs h, runs i", None),
    ("SELECT regexp_matches(repeat('a', 100000), '(a+)+b')", None),
    # Result size: rows and bytes are capped, the rest is cut.
    ("SELECT * FROM range(100000000)", None),
    ("SELECT repeat('x', 1000000) FROM range(1000)", None),
    ("SELECT repeat('x', 100000000)", None),
    ("SELECT * FROM requests, range(100000)", None),
    # Parser: deeply nested text.
    ("SELECT " + "(" * 5000 + "1" + ")" * 5000, None),
    ("SELECT 1 IN (" + ", ".join(["1"] * 100000) + ")", None),
]
DISCLOSURE_READS = [
    "SELECT version()", "SELECT current_database()", "SELECT * FROM duckdb_schemas()",
    "SELECT * FROM duckdb_views()", "SELECT * FROM duckdb_functions() LIMIT 50",
    "SHOW ALL TABLES", "SHOW TABLES", "DESCRIBE runs", "SUMMARIZE requests", "SELECT * FROM information_schema.tables",
    "SELECT * FROM duckdb_columns()", "SELECT current_schema()",
    "SELECT * FROM runs", "SELECT * FROM imports",
]
ATTACKS = WRITES_IN_DISGUISE + FILES_AND_NETWORK + SETTINGS + EXHAUSTION


def test_the_suite_has_at_least_100_statements():
    assert len(ATTACKS) + len(DISCLOSURE_READS) >= 100 and len(ATTACKS) >= 100


@pytest.mark.parametrize("sql, key", ATTACKS, ids=[f"{i:03d}" for i in range(len(ATTACKS))])
def test_attack(loaded, sql, key):
    before, files_before = fingerprint(loaded), tree(ROOT)
    try:
        result = loaded.query(sql, {"sql.memory": MEMORY_ATTACK_LIMITS, "sql.timeout": TIME_ATTACK_LIMITS}.get(key, LIMITS))
    except QueryError as exc:
        assert key is None or exc.key == key, (exc.key, str(exc))
        assert not HOST_DETAIL.search(str(exc)), str(exc)
    else:
        assert key is None, f"ran, but should have been refused with {key}"
        assert len(result.frame) <= LIMITS.max_rows
        assert not HOST_DETAIL.search(result.frame.to_json(default_handler=str, date_format="iso"))
    assert fingerprint(loaded) == before
    assert tree(ROOT) == files_before


@pytest.mark.parametrize("sql", DISCLOSURE_READS)
def test_reads_disclose_no_host_detail(loaded, sql):
    frame = loaded.query(sql, LIMITS).frame
    assert not frame.empty
    assert not HOST_DETAIL.search(frame.to_json(default_handler=str, date_format="iso"))


class TestCheckSql:
    @pytest.mark.parametrize("sql", ["SELECT 1", "WITH x AS (SELECT 1) SELECT * FROM x", "FROM runs",
                                     "VALUES (1)", "EXPLAIN SELECT 1", "DESCRIBE runs", "SUMMARIZE runs",
                                     "SHOW TABLES", "(SELECT 1) UNION (SELECT 2)"])
    def test_reading_statements_pass(self, sql):
        sandbox.check_sql(sql)

    @pytest.mark.parametrize("sql, kind", [("INSTALL httpfs", "INSTALL"), ("/* a comment */ load httpfs", "LOAD"),
                                           ("UPDATE EXTENSIONS", "UPDATE"), ("  copy runs TO 'x.csv'", "COPY"),
                                           ("WITH x AS (SELECT 1) INSERT INTO runs (run_id) SELECT 'y' FROM x",
                                            "WITH … INSERT"),
                                           ("with x as (select 1) delete from runs", "WITH … DELETE")])
    def test_a_refused_statement_is_named_as_it_was_written(self, sql, kind):
        """DuckDB files INSTALL under LOAD: the console said "this is LOAD" to a user who typed INSTALL;
        and "this is WITH" to a WITH that inserts, where WITH stands among the kinds it runs."""
        with pytest.raises(sandbox.QueryError) as refused:
            sandbox.check_sql(sql)
        assert (refused.value.key, refused.value.params) == ("sql.kind", {"kind": kind})

    @pytest.mark.parametrize("sql", [
        "SELECT 1 FROM runs GROUP BY ROLLUP(" + ",".join(f"c{i}" for i in range(254)) + "), ROLLUP("
        + ",".join(f"c{i}" for i in range(254, 510)) + ")",
        "SELECT 1 FROM runs GROUP BY " + ",".join(f"p{i}" for i in range(600)) + ", CUBE("
        + ",".join(f"c{i}" for i in range(12)) + ")"])
    def test_a_parse_that_grows_past_the_limits_is_stopped_in_the_query_s_process(self, loaded, sql):
        """An attack pass and a review: DuckDB expands grouping sets while it parses, and the parse ran
        in the app's process, unbounded (1.5 KB of two ROLLUPs: 2.4 GB; a CUBE of 12 beside 600 plain
        columns, 3 KB: 163 s of CPU). It runs in the query's process now, stopped at its limits."""
        before = fingerprint(loaded)
        with pytest.raises(QueryError) as stopped:
            loaded.query(sql, TIME_ATTACK_LIMITS)
        # Stopped at the time limit, or at the memory limit, which DuckDB's parser reports as its own
        # allocation failure ("Out of Memory Error: Allocation failure").
        said = str(stopped.value.params.get("detail", ""))
        assert stopped.value.key in ("sql.timeout", "sql.memory") or "allocat" in said.lower(), (stopped.value.key, said)
        assert fingerprint(loaded) == before

    def test_a_lambda_arrow_is_told_the_new_syntax_not_a_setting(self, loaded):
        """An attack pass: DuckDB's "Use SET lambda_syntax=… to revert" was passed on (the console refuses
        SET), and its documentation's address read "https:/<path>"."""
        with pytest.raises(sandbox.QueryError) as refused:
            loaded.query("SELECT list_reduce([1, 2], (x, y) -> x + y)", LIMITS)
        detail = str(refused.value.params["detail"])
        assert "lambda x, i: x + i" in detail and "SET" not in detail and "<path>" not in detail
        assert "https://duckdb.org/docs/" in detail

    def test_a_division_by_zero_is_told_try_not_a_setting(self, loaded):
        """An attack pass: "…, or SET error_on_division_by_zero=false to return NULL …" was passed on."""
        with pytest.raises(sandbox.QueryError) as refused:
            loaded.query("SELECT 1 // 0", LIMITS)
        detail = str(refused.value.params["detail"])
        assert detail.endswith("Use TRY(...) to return NULL for this expression.") and "SET" not in detail

    @pytest.mark.parametrize("function", ["enable_logging", "disable_logging", "enable_profiling", "checkpoint",
                                          "force_checkpoint", "add_grammar_extension"])
    def test_functions_that_change_the_connection_are_refused_in_specviz_s_words(self, function):
        """An attack pass: enable_logging() had been refused by the locked configuration, in DuckDB's
        words ("Cannot change configuration option …")."""
        with pytest.raises(sandbox.QueryError) as refused:
            sandbox.check_sql(f"SELECT * FROM {function}()")
        assert refused.value.key == "sql.denied_function" and refused.value.params["name"] == function

    def test_a_deep_syntax_tree_is_walked_without_recursion(self):
        sandbox.check_sql("SELECT " + " + ".join(["1"] * 990))  # DuckDB parses up to depth 1000

    def test_a_tree_past_duckdb_s_depth_is_refused_without_advice_the_console_refuses(self):
        """An attack pass: a SELECT nested 2,000 deep was told to 'Use "SET max_expression_depth TO x"',
        which the console refuses; the limit is said, the advice not."""
        with pytest.raises(sandbox.QueryError) as refused:
            sandbox.check_sql("SELECT " + "(" * 2000 + "1" + ")" * 2000)
        assert refused.value.key == "sql.parse"
        assert refused.value.params["detail"] == "Parser Error: Max expression depth limit of 1000 exceeded."


@pytest.fixture
def started(monkeypatch) -> list[query_server.QueryProcess]:
    """The query processes the sandbox starts during the test, in order."""
    processes = []
    monkeypatch.setattr(sandbox, "start_query_process",
                        lambda *args: processes.append(query_server.start_query_process(*args)) or processes[-1])
    return processes


def running(pid: int) -> bool:
    """Whether process ``pid`` runs: not ended, nor a zombie that its new parent has yet to reap (a
    server's orphans go to the machine's init, which in a container may reap none)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def server_pid() -> int:
    """This process's query server (started if it is not running)."""
    return query_server._running_server().process.pid


class TestServerFaults:
    """A server that dies, stops or forks a process that meets a fault: each query ends within its
    bounds with a message, and the next one gets a new server (an attack pass found waits of the time
    limit plus 30 s, and one without end)."""

    def test_a_server_killed_while_a_request_waits_is_replaced_at_once(self):
        import pyarrow as pa

        tables = sandbox.Snapshot({"t": pa.table({"x": [5]})})
        old = server_pid()
        os.kill(old, signal.SIGSTOP)  # the request waits, unread, until the server is killed
        answer = []
        asking = threading.Thread(target=lambda: answer.append(
            sandbox.run_query("SELECT x FROM t", tables, dataclasses.replace(LIMITS, timeout_s=10))))
        asking.start()
        time.sleep(0.5)
        os.kill(old, signal.SIGKILL)
        asking.join(timeout=60)
        # Answered by a new server, well within the limit (it had waited the limit and 30 s more).
        assert answer[0].frame.x[0] == 5 and answer[0].seconds < 8 and server_pid() != old
        tables.close()

    def test_a_stopped_server_is_replaced_before_and_during_a_query(self, monkeypatch, started):
        import pyarrow as pa

        monkeypatch.setattr(sandbox, "_START_LIMIT_S", 1.0)
        monkeypatch.setattr(query_server, "_REPORT_TIMEOUT_S", 1.0)
        tables = sandbox.Snapshot({"t": pa.table({"x": [5]})})
        old = server_pid()
        os.kill(old, signal.SIGSTOP)  # before: it forks nothing
        try:
            with pytest.raises(QueryError) as stopped:
                sandbox.run_query("SELECT x FROM t", tables, dataclasses.replace(LIMITS, timeout_s=1))
            assert stopped.value.key == "sql.timeout"
        finally:
            with contextlib.suppress(ProcessLookupError):  # killed, as it should be
                os.kill(old, signal.SIGCONT)
        assert sandbox.run_query("SELECT x FROM t", tables, LIMITS).frame.x[0] == 5 and server_pid() != old
        # During: the query's process answers and ends, but its stopped server cannot say so; the
        # answer stands, the wait for the report is bounded, and the next query has a new server.
        old, asked = server_pid(), len(started)
        answer = []
        asking = threading.Thread(target=lambda: answer.append(sandbox.run_query(
            "SELECT sum(i) AS s FROM range(200000000) t(i)", tables, dataclasses.replace(LIMITS, timeout_s=30))))
        asking.start()
        deadline = time.monotonic() + 20
        while len(started) == asked:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.kill(old, signal.SIGSTOP)
        asking.join(timeout=60)
        assert answer[0].frame.s[0] == 200000000 * (200000000 - 1) // 2 and started[-1].returncode == -signal.SIGKILL
        assert sandbox.run_query("SELECT x FROM t", tables, LIMITS).frame.x[0] == 5 and server_pid() != old
        tables.close()

    @pytest.mark.parametrize("ended, said", [("query", "fault (SIGSEGV)"), ("server", "ended during the query")])
    def test_a_fault_or_a_dead_server_during_a_query_is_said_as_such(self, started, ended, said):
        """A query's process ended by a fault: said as one (it had read as the memory limit), and its
        server retired. A server killed during a query: its query's process dies with it (no orphan
        runs on), and the query says so."""
        import pyarrow as pa

        tables = sandbox.Snapshot({"t": pa.table({"x": [5]})})
        old = server_pid()
        refused = []
        asking = threading.Thread(target=lambda: refused.append(pytest.raises(
            QueryError, sandbox.run_query, "SELECT count(*) FROM range(100000000000)", tables,
            dataclasses.replace(LIMITS, timeout_s=20))))
        asking.start()
        deadline = time.monotonic() + 20
        while not started:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.3)  # past its start, into the statement
        os.kill(*((started[0].pid, signal.SIGSEGV) if ended == "query" else (old, signal.SIGKILL)))
        asking.join(timeout=60)
        assert refused[0].value.key == "sql.failed" and said in str(refused[0].value)
        # Killed: its pipes close as it begins to exit, and its memory goes a moment later.
        while running(started[0].pid):
            assert time.monotonic() < deadline + 30, "the query's process outlived its server"
            time.sleep(0.05)
        assert sandbox.run_query("SELECT x FROM t", tables, LIMITS).frame.x[0] == 5 and server_pid() != old
        tables.close()


    def test_a_retired_server_finishes_the_queries_it_runs(self, started):
        """A fault retires the server; a query it runs meanwhile still answers."""
        import pyarrow as pa

        tables = sandbox.Snapshot({"t": pa.table({"x": [5]})})
        old = server_pid()
        outcomes: dict[str, Any] = {}

        def ask(name: str, sql: str) -> None:
            try:
                outcomes[name] = sandbox.run_query(sql, tables, dataclasses.replace(LIMITS, timeout_s=30))
            except QueryError as exc:
                outcomes[name] = exc

        asking = [threading.Thread(target=ask, args=("faulted", "SELECT count(*) FROM range(100000000000)")),
                  threading.Thread(target=ask, args=("other", "SELECT sum(i) AS s FROM range(300000000) t(i)"))]
        asking[0].start()
        deadline = time.monotonic() + 20
        while len(started) < 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        asking[1].start()
        while len(started) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.kill(started[0].pid, signal.SIGSEGV)
        for thread in asking:
            thread.join(timeout=60)
        assert "fault (SIGSEGV)" in str(outcomes["faulted"])
        assert outcomes["other"].frame.s[0] == 300000000 * (300000000 - 1) // 2
        assert sandbox.run_query("SELECT x FROM t", tables, LIMITS).frame.x[0] == 5 and server_pid() != old
        tables.close()


    def test_a_server_is_retired_after_its_share_of_queries(self, monkeypatch):
        """No server forks without end: the layout one query may learn serves few others."""
        import pyarrow as pa

        monkeypatch.setattr(query_server, "_FORKS_PER_SERVER", 2)
        query_server.stop_server()
        tables = sandbox.Snapshot({"t": pa.table({"x": [5]})})
        servers = []
        for _ in range(3):
            servers.append(server_pid())
            assert sandbox.run_query("SELECT x FROM t", tables, LIMITS).frame.x[0] == 5
        assert servers[0] == servers[1] != servers[2]
        tables.close()


class TestRunQuery:
    def test_rows_cap(self, loaded):
        result = loaded.query("SELECT * FROM range(25)", Limits(max_rows=10))
        assert len(result.frame) == 10 and result.truncated == "rows"

    def test_bytes_cap(self, loaded):
        result = loaded.query("SELECT repeat('x', 100000) AS s FROM range(100)", Limits(max_bytes=1_000_000))
        assert 0 < len(result.frame) < 100 and result.truncated == "bytes"
        assert result.frame.s.str.len().sum() <= 1_000_000

    def test_the_caller_reads_a_result_without_copying_it(self):
        """The caller held the child's output, a copy of it and a copy of its rows: three times the
        byte cap at its peak (153 MB at 50 MB) while the rows became a frame."""
        import tracemalloc

        import pyarrow as pa

        tables = sandbox.Snapshot({"t": pa.table({"x": [1]})})
        limits = Limits(max_bytes=4_000_000, timeout_s=30)
        sandbox.run_query("SELECT 'warm' AS s", tables, limits)
        tracemalloc.start()
        try:
            result = sandbox.run_query("SELECT repeat('x', 100000) AS s FROM range(100)", tables, limits)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            tables.close()
        assert result.truncated == "bytes" and peak < 1.5 * limits.max_bytes

    def test_the_caller_s_frame_has_one_chunk_a_column(self, loaded):
        """Each chunk of each column is Arrow objects of its own in the caller: 4,000 text columns of
        1,343 rows, sent in 64-row batches, held 183 MB for 48 MB of data (93 MB in one chunk each)."""
        frame = loaded.query("SELECT 'row ' || i AS s FROM range(1000) t(i)", LIMITS).frame
        assert len(frame) == 1000 and frame.s.array.__arrow_array__().num_chunks == 1

    @pytest.mark.parametrize("sql", [
        "SELECT map(list_transform(range(2000), lambda x: x::FLOAT),"
        " list_transform(range(2000), lambda x: x::FLOAT)) AS m FROM range(1000)",
        "SELECT {" + ", ".join(f"c{i}: (i - 1000)::BIGINT" for i in range(100)) + "} AS s FROM range(10000) t(i)"])
    def test_the_byte_cap_counts_the_python_numbers_of_structs_and_maps(self, sql):
        """A struct's numbers are Python ints and floats in its dict, a map's in its tuples (24-36 bytes
        each, counted as 4 or 8): with a 2 MB cap the caller kept 2.7 MB of Python objects."""
        import tracemalloc

        import pyarrow as pa

        tables = sandbox.Snapshot({"t": pa.table({"x": [1]})})
        limits = Limits(max_bytes=2_000_000, timeout_s=30)
        sandbox.run_query("SELECT {'a': 1.5} AS s, map([1], [2]) AS m", tables, limits)
        tracemalloc.start()
        try:
            result = sandbox.run_query(sql, tables, limits)
            held = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
            tables.close()
        assert result.truncated == "bytes" and held <= limits.max_bytes

    def test_a_wide_result_is_cut_by_the_byte_cap_not_refused(self, loaded):
        """The cap counts what is sent: 2,000 columns were counted at their 512 kB of data a 64-row batch,
        sent with 112 kB of metadata more each, past the parent's 1 MB allowance (sql.too_large). Each
        column also counts the 4 kB the caller holds for it: 8 MB of the 16 MB cap."""
        result = loaded.query("SELECT " + ", ".join(["1"] * 2000) + " FROM range(10000)",
                              Limits(max_bytes=16_000_000, timeout_s=30))
        assert result.truncated == "bytes" and 0 < len(result.frame) < 10000

    def test_the_byte_cap_counts_the_column_names(self, loaded):
        """The caller makes a Python str of each name, four bytes a character with an emoji in it: a
        PIVOT of 18 kB of SQL made 10,000 columns whose names were 18 MB of UTF-8 and 72 MB of str."""
        names = ", ".join(f'{i} AS "😀{c * 4000}"' for i, c in enumerate("abcd"))
        with pytest.raises(sandbox.QueryError) as refused:
            loaded.query(f"SELECT {names}", Limits(max_bytes=50_000))
        assert refused.value.key == "sql.row_too_large"

    def test_not_one_row_within_the_byte_cap_is_refused(self, loaded):
        # It came back as a result of 0 rows, which the page offered as "the first 0 rows" and a CSV.
        with pytest.raises(sandbox.QueryError) as refused:
            loaded.query("SELECT repeat('x', 2000000) AS big", Limits(max_bytes=1_000_000))
        assert (refused.value.key, refused.value.params) == ("sql.row_too_large", {"bytes": 1_000_000})

    def test_a_query_sees_new_imports(self, tmp_path):
        s = Store(tmp_path / "x.duckdb")
        assert s.query("SELECT count(*) AS n FROM runs").frame.n[0] == 0
        s.import_file("g.json", (SAMPLES / "guidellm_benchmarks.json").read_bytes())
        assert s.query("SELECT count(*) AS n FROM runs").frame.n[0] == 1
        s.close()

    def test_sessions_cannot_affect_each_other(self, loaded):
        """Eight queries at once from different threads all see the same, whole data."""
        answers, errors = [], []

        def ask() -> None:
            try:
                answers.append(loaded.query("SELECT count(*) AS n FROM runs", Limits(timeout_s=30)).frame.n[0])
            except QueryError as exc:
                errors.append(exc)

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors and answers == [RUNS] * 8

    def test_the_time_limit_counts_the_statement_not_the_process_s_start(self):
        """The first query of a process starts the fork server (Python, DuckDB, Arrow: about 0.5 s
        of one core): with a 0.2 s limit a trivial statement still answers, and a long one still
        stops at the limit."""
        import pyarrow as pa

        tight = dataclasses.replace(LIMITS, timeout_s=0.2)
        tables = sandbox.Snapshot({"t": pa.table({"x": [42]})})
        query_server.stop_server()
        result = sandbox.run_query("SELECT x AS answer FROM t", tables, tight)
        assert result.frame.answer[0] == 42 and result.seconds > 0.2  # the start alone took longer
        with pytest.raises(QueryError) as stopped:
            sandbox.run_query("SELECT count(*) FROM range(100000000000)", tables, tight)
        assert stopped.value.key == "sql.timeout"
        tables.close()

    def test_each_query_has_a_process_of_its_own_and_none_outlives_its_query(self, started):
        """Each query runs in a process forked for it, which has ended when the answer is back; the
        server that forks them is a child of the caller's process, one thread, and ends with it."""
        import pyarrow as pa

        tables = sandbox.Snapshot({"t": pa.table({"x": [1, 2]})})
        assert sandbox.run_query("SELECT sum(x) AS s FROM t", tables, LIMITS).frame.s[0] == 3
        assert sandbox.run_query("SELECT max(x) AS m FROM t", tables, LIMITS).frame.m[0] == 2
        first, second = started
        assert first.pid != second.pid and first.returncode == second.returncode == 0
        assert not running(first.pid) and not running(second.pid)
        server = query_server._running_server().process.pid
        assert os.listdir(f"/proc/{server}/task") == [str(server)]
        tables.close()
        # A process that used the console and exited leaves no server and no query process behind.
        child = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
            import sys; sys.path.insert(0, {str(ROOT)!r})
            import pyarrow as pa
            from specviz.results import query_server, sandbox
            tables = sandbox.Snapshot({{"t": pa.table({{"x": [7]}})}})
            print(sandbox.run_query("SELECT x FROM t", tables).frame.x[0], query_server._running_server().process.pid)
            """)], capture_output=True, text=True, timeout=60)
        answer, orphan = child.stdout.split()
        assert answer == "7"
        deadline = time.monotonic() + 10
        while Path(f"/proc/{orphan}").exists() and b"query_server" in Path(f"/proc/{orphan}/cmdline").read_bytes():
            assert time.monotonic() < deadline, "the server outlived the process that started it"
            time.sleep(0.05)

    def test_a_heavy_query_delays_another_by_at_most_its_time_limit(self, loaded):
        """One slot: the light query waits for the heavy one to be killed at its 2 s limit, then runs
        within its own 10 s; a light query with a 0.5 s limit gives up with 'busy' instead."""
        heavy = threading.Thread(target=lambda: pytest.raises(
            QueryError, loaded.query, "SELECT count(*) FROM range(100000000000)", Limits(timeout_s=2, workers=1)))
        heavy.start()
        try:
            threading.Event().wait(0.3)
            with pytest.raises(QueryError) as busy:
                loaded.query("SELECT 1", Limits(timeout_s=0.5, workers=1))
            assert busy.value.key == "sql.busy"
            waited = loaded.query("SELECT 42 AS a", Limits(timeout_s=10, workers=1))
            # The wait is said apart; how long it is depends on the machine's load (0.47 s once, with a
            # second test run beside this one), not only on the heavy query's limit.
            assert waited.frame.a[0] == 42 and 0 < waited.waited_s < waited.seconds
        finally:
            heavy.join()
        # No one else ran: a held slot would cost the heavy query's 2 s limit. The wait is the slot's alone,
        # not the store's copy of its tables (which took 0.67 s once with the whole suite beside it).
        assert loaded.query("SELECT 1 AS a", Limits(timeout_s=10, workers=1)).waited_s < 0.5

    def test_a_time_limit_met_after_a_wait_says_the_wait(self, loaded):
        """An attack pass: a query that waited 5.2 s for a slot was "stopped at the 5 s time limit"
        after 10.2 s. One slot: a heavy query holds it to its 1.5 s limit; another waits for it, then
        meets its own 3 s limit, and says both (at 2 s each, the wait with the heavy process's end on a
        loaded machine had passed the second's limit: busy, once in a full run)."""
        heavy = threading.Thread(target=lambda: pytest.raises(
            QueryError, loaded.query, "SELECT count(*) FROM range(100000000000)", Limits(timeout_s=1.5, workers=1)))
        heavy.start()
        try:
            # Until the heavy query holds the slot (a loaded machine starts its thread late): a probe
            # that may not wait is then busy (one that got the slot may meet its own short limit).
            while True:
                try:
                    loaded.query("SELECT 1", Limits(timeout_s=0.01, workers=1))
                except QueryError as probe:
                    if probe.key == "sql.busy":
                        break
            with pytest.raises(QueryError) as stopped:
                loaded.query("SELECT count(*) FROM range(100000000000)", Limits(timeout_s=3, workers=1))
        finally:
            heavy.join()
        assert stopped.value.key == "sql.timeout_waited"
        assert stopped.value.params["seconds"] == 3 and stopped.value.params["waited"] >= 0.5
        assert str(stopped.value).startswith("stopped at the 3 s time limit of its own run, after ")

    def test_time_before_the_slot_is_not_said_to_be_a_wait_for_other_sessions(self):
        """The page says waited_s is time other sessions' queries held every slot: the time from the
        click to the request for a slot (the check, the store's copy of its tables: 0.1-0.5 s on the
        Explorer with nobody else querying) is the query's own, in ``seconds``, not in ``waited_s``."""
        import pyarrow as pa

        tables = sandbox.Snapshot({"t": pa.table({"x": [42]})})
        result = sandbox.run_query("SELECT x FROM t", tables, LIMITS, started=time.monotonic() - 1.0)
        assert result.seconds > 1.0 and result.waited_s < 0.2
        tables.close()

    def test_memory_of_the_query_process_stays_under_its_limit(self, loaded, started):
        with pytest.raises(QueryError) as exc:
            loaded.query("SELECT length(repeat('x', 1500000000))", LIMITS)
        assert exc.value.key == "sql.memory"
        (process,) = started
        assert 0 < process.peak_bytes <= LIMITS.memory_bytes

    def test_the_memory_limit_counts_from_what_the_libraries_hold(self, loaded):
        """The libraries reserve about 1 GB of address space here before any query (thread stacks
        and allocator arenas, more on a machine with more cores): counted in the limit, a
        100 MB limit would fail every query, and one machine's fitting limit fails another's."""
        small = dataclasses.replace(LIMITS, memory_bytes=100_000_000)
        assert loaded.query("SELECT count(*) AS n FROM runs", small).frame.n[0] == len(loaded.runs())
        with pytest.raises(QueryError) as exc:
            loaded.query("SELECT length(repeat('x', 150000000))", dataclasses.replace(small, timeout_s=60.0))
        assert exc.value.key == "sql.memory"

    def test_a_query_longer_than_the_progress_bar_delay_still_answers(self, loaded):
        """DuckDB prints a progress bar to standard output after 2 s unless told not to, which would
        come before the answer."""
        frame = loaded.query("SELECT sum(i) AS s FROM range(400000000) t(i)", Limits(timeout_s=60)).frame
        assert frame.s[0] == 400000000 * (400000000 - 1) // 2

    def test_each_column_counts_what_the_caller_holds_for_it(self, loaded):
        """A frame takes about 4 kB a column beyond its values: one row of 300 small columns is 1.2 MB
        in the caller, past a 1 MB cap, though its data are a few kB."""
        wide = "SELECT " + ", ".join(f"{i} AS c{i}" for i in range(300))
        with pytest.raises(QueryError) as refused:
            loaded.query(wide, Limits(max_bytes=1_000_000))
        assert refused.value.key == "sql.row_too_large"
        assert loaded.query(wide, Limits(max_bytes=2_000_000)).frame.shape == (1, 300)

    # Each result is 3 MB or more (30M list elements, 10M struct fields, 2 MB of text in its second row) against a 1 MB cap.
    @pytest.mark.parametrize("sql", ["SELECT repeat([NULL], 3000) AS l FROM range(10000)",
                                     "SELECT {" + ", ".join(f"c{i}: NULL" for i in range(1000)) + "} AS s FROM range(10000)",
                                     "SELECT CASE WHEN i = 1 THEN repeat('x', 1900000) ELSE 'a' END AS v FROM range(64) t(i)"])
    def test_the_byte_cap_bounds_what_the_caller_holds(self, loaded, sql):
        result = loaded.query(sql, Limits(max_bytes=1_000_000, timeout_s=30))
        assert result.truncated == "bytes"
        assert result.frame.memory_usage(index=False, deep=True).sum() <= 1_000_000

    @pytest.mark.parametrize("sql", [
        "SELECT i, (i % 100)::TINYINT AS t, i / 3 AS f, i % 2 = 0 AS b, 'row ' || i AS s, 'dòng ' || i || ' 😀' AS u FROM range(200) t(i)",
        "SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE i END AS n, CASE WHEN i % 3 = 0 THEN NULL ELSE i % 2 = 0 END AS b,"
        " CASE WHEN i % 3 = 0 THEN NULL ELSE repeat('x', i) END AS s, NULL AS z FROM range(200) t(i)",
        "SELECT [i, i + 1] AS l, range(i % 7) AS r, [repeat('y', i % 5)] AS ls, {'a': i, 'b': 'é' || i} AS st,"
        " map([i], ['v' || i]) AS m, [i, i]::INT[2] AS a FROM range(200) t(i)",
        "SELECT i::DECIMAL(18, 3) AS d, (i * 1e20)::DECIMAL(38, 0) AS h, TIME '10:00:00' + INTERVAL (i) SECOND AS tm,"
        " ('x' || (i % 2))::ENUM('x0', 'x1') AS e, uuid() AS id, {'k': [i], 'n': NULL} AS nested FROM range(200) t(i)",
        # A Categorical holds every category of its ENUM, with a hash table: one row of 200 values was counted
        # 2,326 bytes (as text), which pandas counts 10,588.
        "SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE ('v' || (i % 200))::ENUM("
        + ", ".join(f"'v{i}'" for i in range(200)) + ") END AS e, ['x'::ENUM('x', 'y')] AS l FROM range(200) t(i)",
    ])
    def test_the_count_of_a_frame_s_bytes_bounds_what_pandas_makes_of_it(self, sql):
        """The query process counts the frame its rows become without pandas: for every kind of
        column, and for any run of its rows, the count is at least what pandas counts."""
        import duckdb

        batch = duckdb.sql(sql).to_arrow_table().combine_chunks().to_batches()[0]
        for start, length in [(0, 200), (0, 1), (57, 3), (120, 80), (199, 1), (10, 0)]:
            rows = batch.slice(start, length)
            assert frame_bytes.shown_bytes(rows) >= frame_bytes.as_frame(rows).memory_usage(index=False, deep=True).sum()

    def test_the_query_process_never_loads_pandas(self):
        """It counts the rows' bytes from Arrow: pandas was half of its start. The server that every
        query process is a copy of has loaded DuckDB and Arrow, and no file of pandas."""
        import pyarrow as pa

        tables = sandbox.Snapshot({"t": pa.table({"s": ["a", None]})})
        sandbox.run_query("SELECT s, [s] AS l, {'s': s} AS st FROM t", tables, LIMITS)
        maps = Path(f"/proc/{query_server._running_server().process.pid}/maps").read_text()
        assert "pyarrow" in maps and "duckdb" in maps and "/pandas/" not in maps
        tables.close()

    @pytest.mark.parametrize("sql, shown", [
        ("SELECT 340282366920938463463374607431768211455::UHUGEINT AS v", "340282366920938463463374607431768211455"),
        ("SELECT '101'::BIT AS v", "101"), ("SELECT union_value(k := 1) AS v", "1"),
        ("SELECT INTERVAL 3 DAY AS v", "3 days"), ("SELECT '\\xAA'::BLOB AS v", "\\xAA"),
        ("SELECT 12345678901234567890123456789012345678901234567890::VARINT AS v",
         "12345678901234567890123456789012345678901234567890"),  # was its bytes
        ("SELECT 'infinity'::TIMESTAMP AS v", "infinity"),  # was 294247-01-10 04:00:54
        ("SELECT '-infinity'::DATE AS v", "-infinity"), ("SELECT DATE '5877641-01-01' AS v", "5877641-01-01"),  # refused
        ("SELECT TIMESTAMP '2026-12-01 17:30:00' AS v", "2026-12-01 17:30:00"),
        # Inside a STRUCT, MAP or LIST too: a UNION in a STRUCT aborted the query process (said to be
        # out of memory), one in a MAP and an infinite DATE or TIMESTAMP raised pandas' errors in the caller.
        ("SELECT {'a': union_value(k := 'x')} AS v", "{'a': x}"),
        ("SELECT map([1], [union_value(k := 1)]) AS v", "{1=1}"),
        ("SELECT {'d': 'infinity'::DATE} AS v", "{'d': infinity}"),
        ("SELECT map([1], ['-infinity'::TIMESTAMP]) AS v", "{1=-infinity}"),
        ("SELECT [{'u': 340282366920938463463374607431768211455::UHUGEINT}] AS v",
         "[{'u': 340282366920938463463374607431768211455}]"),
        # A time of nanoseconds has no datetime.time: ArrowInvalid in the caller's to_pandas.
        ("SELECT '23:59:59.999999999'::TIME_NS AS v", "23:59:59.999999999"),
        ("SELECT ['23:59:59.999999999'::TIME_NS] AS v", "['23:59:59.999999999']"),
        # DuckDB's end of day, 24:00:00, has no datetime.time (ValueError); VARIANT and GEOMETRY came as bytes.
        ("SELECT TIME '24:00:00' AS v", "24:00:00"), ("SELECT {'t': TIME '24:00:00'} AS v", "{'t': '24:00:00'}"),
        ("SELECT {'a': [1]}::VARIANT AS v", "{'a': [1]}"), ("SELECT 'POINT(1 2)'::GEOMETRY AS v", "POINT (1 2)"),
    ])
    def test_types_pandas_or_json_would_get_wrong_come_back_as_text(self, loaded, sql, shown):
        assert loaded.query(sql, LIMITS).frame.v[0] == shown

    def test_whole_numbers_beside_a_null_stay_whole(self, loaded):
        """Arrow's default made them floats: 16.0 and NaN in the console, "[1.0, NaN, 3.0]" in a CSV
        cell, which is no JSON; a UBIGINT past 2⁵³ lost its last digits."""
        frame = loaded.query("SELECT CASE WHEN i = 1 THEN NULL ELSE i * 16 END::INT AS n, [1, NULL, 3]::BIGINT[] AS l, "
                             "[[i, NULL]] AS ll, CASE WHEN i = 1 THEN NULL ELSE 18446744073709551615 END::UBIGINT AS u "
                             "FROM range(2) t(i)", LIMITS).frame
        assert str(frame.n.dtype) == "Int32" and frame.n.tolist() == [0, pd.NA]
        assert frame.u.tolist() == [18446744073709551615, pd.NA]
        assert frame.l[0].tolist() == [1, None, 3] and frame.ll[1][0].tolist() == [1, None]
        assert export.csv_text(frame).splitlines() == ['"n","l","ll","u"', '"0","[1, null, 3]","[[0, null]]","18446744073709551615"',
                                                     '"","[1, null, 3]","[[1, null]]",""']
        assert frame_rows(frame) == [{"n": 0, "l": [1, None, 3], "ll": [[0, None]], "u": 18446744073709551615},
                                     {"n": None, "l": [1, None, 3], "ll": [[1, None]], "u": None}]

    def test_a_name_the_result_repeats_is_made_unique(self, loaded):
        """A table keeps one column per name: the second label was dropped without a word."""
        frame = loaded.query("SELECT a.label, b.label, 1 AS label FROM runs a, runs b LIMIT 1", LIMITS).frame
        assert list(frame.columns) == ["label", "label (2)", "label (3)"] and frame["label (3)"][0] == 1

    def test_messages_name_no_path(self, loaded):
        with pytest.raises(QueryError) as exc:
            loaded.query("SELECT * FROM duckdb_extensions() WHERE install_path <> ''", LIMITS)
        assert not HOST_DETAIL.search(str(exc.value))
        assert sandbox._scrub('Cannot access "/root/.duckdb/extensions/v2"') == 'Cannot access "<path>"'

    @pytest.mark.parametrize("sql, hint", [("SELECT source_file, p99_ttft FROM runs", 'Candidate bindings: "p99_ttft_ms"'),
                                           ("SELECT * FROM run", 'Did you mean "runs"?')])
    def test_a_mistyped_name_keeps_duckdb_s_hint(self, loaded, sql, hint):
        """The first line alone had said only that the name was not found (an analyst's pass)."""
        with pytest.raises(QueryError) as exc:
            loaded.query(sql, LIMITS)
        assert hint in str(exc.value) and "LINE 1" not in str(exc.value) and "\n" not in str(exc.value)

    def test_a_query_process_that_ends_without_an_answer_is_said_in_the_reader_s_language(self):
        @dataclasses.dataclass(frozen=True)
        class Unreadable(Limits):  # a field the query process's Limits does not take: it ends at once
            unknown: int = 3

        with pytest.raises(QueryError) as exc:
            sandbox.run_query("SELECT 1", sandbox.Snapshot({}), Unreadable())
        assert exc.value.key == "sql.failed"
        assert str(exc.value) == "DuckDB could not run it: the query process ended with exit code 1"
        vietnamese = i18n.t(exc.value.key, "vi", **exc.value.params)
        assert "exit code" not in vietnamese and i18n.t("sql.detail.exit_code", "vi", code=1) in vietnamese
