"""A user's CSV straight into the store through DuckDB (the fast path): the importer
(:mod:`specviz.results.importers.user_csv`) plans the columns, this module has DuckDB read the file
into ``runs`` (and ``requests`` for a per-request file) inside the import's transaction."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Callable, Iterable

import duckdb
import pyarrow as pa

from specviz import settings
from specviz.errors import Notice
from specviz.results import importers
from specviz.results.importers import user_csv
from specviz.results.importers.base import IngestError, check_run_count, disagreements, preview
from specviz.results.importers.source import byte_lines, occurrences
from specviz.results.schema import CONCURRENCY_MOST, REQUEST_COLUMNS, RUN_COLUMNS
from specviz.results.synthetic import mark_synthetic

from .connection import hub_cursor, quote_identifier, sql_literal

__all__ = ["import_csv"]

# The percentiles a per-request CSV's runs get, beside the mean.
_PERCENTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99}


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
            return "read_csv(?, header = true, delim = ',', types = ?)" if self.text else "read_csv(?, header = true, delim = ',')"
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
        return f"CAST({quote_identifier(column)} AS DOUBLE)"
    return f"TRY_CAST(replace(CAST({quote_identifier(column)} AS VARCHAR), ',', '') AS DOUBLE)"


def _csv_flag(column: str) -> str:
    """SQL for a CSV column as a yes/no flag: true, t, yes, y, 1 and false, f, no, n, 0 in any case,
    else NULL (the sniffer's BOOLEAN columns read the same)."""
    text = f"lower(trim(CAST({quote_identifier(column)} AS VARCHAR)))"
    return f"CASE WHEN {text} IN ('true', 't', 'yes', 'y', '1') THEN true WHEN {text} IN ('false', 'f', 'no', 'n', '0') THEN false END"


def _csv_not_numbers(cur: duckdb.DuckDBPyConnection, reading: _CsvReading, path: str,
                     mapped: dict[str, tuple[str, str, float]], value: Callable[[str], str]) -> list[Notice]:
    """A notice for each column mapped to a number (or a flag) whose non-empty cells are not all
    numbers (flags), and for each whose numbers are not all ones its field holds (``value``, the SQL
    of the stored value: below 0, not finite, not whole for a count, as the JSON importers refuse):
    they are stored empty, which a user would not otherwise learn. One read of the file, for a file
    with a column mapped to a number."""
    checked = [(canonical, column, kind) for canonical, (column, kind, _) in mapped.items()
               if RUN_COLUMNS.get(canonical, "DOUBLE") != "VARCHAR"]
    if not checked:
        return []
    counts, found_keys = [], []
    for canonical, column, kind in checked:
        text = f"CAST({quote_identifier(column)} AS VARCHAR)"
        flag = RUN_COLUMNS.get(canonical) == "BOOLEAN"
        read = _csv_flag(column) if flag else _csv_number(column, kind)
        conditions = [] if kind in ("BIGINT", "DOUBLE") else [
            ("warn.csv_not_flags" if flag else "warn.csv_not_numbers", f"trim({text}) <> '' AND {read} IS NULL")]
        if not flag:
            conditions.append(("warn.csv_out_of_range", f"{read} IS NOT NULL AND {value(canonical)} IS NULL"))
        for key, dropped in conditions:
            counts += [f"count(*) FILTER (WHERE {dropped})", f"min(left({text}, 40)) FILTER (WHERE {dropped})"]
            found_keys.append((key, canonical, column))
    found = cur.execute(f"SELECT {', '.join(counts)} FROM {reading.sql}", reading.params(path)).fetchone()
    return [Notice(key, column=column, field=canonical.removeprefix("request:"), rows=found[2 * i],
                   example=repr(preview(found[2 * i + 1])))
            for i, (key, canonical, column) in enumerate(found_keys) if found[2 * i]]


# DuckDB's read_csv reads lines of at most this many bytes (its max_line_size option's default, 2 MB).
_DUCKDB_LINE_BYTES = 2_097_152


def _unreadable(source: importers.Source, exc: duckdb.Error) -> IngestError:
    """What DuckDB could not read in a CSV: a line longer than it reads (named by its line: DuckDB's
    own words had named line 1 for a 3 MB field on line 2, an attack pass), text that is not UTF-8
    past the head every file's checks read, a row whose fields are not as many as the header's (a
    line cut short or edited), named by its line, else DuckDB's own words."""
    try:
        for number, line in enumerate(byte_lines(source.pieces()), start=1):
            if len(line) > _DUCKDB_LINE_BYTES // 4 and len(line.encode()) > _DUCKDB_LINE_BYTES:
                return IngestError("ingest.csv_line_too_long", source.name, line=number,
                                   most=f"{_DUCKDB_LINE_BYTES / 2**20:g} MiB")
    except UnicodeDecodeError:  # past the head the checks every file passes read
        return IngestError("ingest.not_utf8", source.name)
    ragged = user_csv.ragged_row(source)
    if ragged is not None:
        line, fields, columns = ragged
        return IngestError("ingest.csv_ragged", source.name, line=line, fields=fields, columns=columns)
    return IngestError("ingest.csv_unreadable", source.name, detail=str(exc).splitlines()[0])


def _sniff_csv(cur: duckdb.DuckDBPyConnection, source: importers.Source, path: str) -> _CsvReading:
    """Sniff a CSV with DuckDB, as ``read_csv`` would (its options are passed to it as parameters:
    the sniffer's own ``Prompt`` quotes no column name). Its fields are separated by commas, as
    :func:`specviz.results.importers.user_csv.sniff` took it: left to choose, DuckDB's sniffer read a
    file with one row short as a single column named after the whole header line.

    Raises
    ------
    IngestError
        ``ingest.csv_ragged`` or ``ingest.csv_unreadable`` if DuckDB cannot make a table of it;
        ``ingest.csv_not_one_table`` if it makes one from a later line than the header, or of other
        columns than the header's.
    """
    try:
        delimiter, quote, escape, new_line, comment, skip, columns = cur.execute(
            "SELECT Delimiter, Quote, Escape, NewLineDelimiter, Comment, SkipRows, Columns "
            "FROM sniff_csv(?, header = true, delim = ',')", [path]).fetchone()
    except duckdb.Error as exc:
        raise _unreadable(source, exc) from None
    described = [(column["name"], column["type"]) for column in columns]
    if skip != user_csv.header_line(source) - 1 or len(described) != len(user_csv.csv_header(source)):
        # DuckDB took its table from a later line than the header (the first line not blank), whose
        # rows it would leave out without a word (an attack pass: 30 runs under a first header, 5 under
        # a second of four columns, stored the 5), or read other columns than the header's: not one table.
        raise IngestError("ingest.csv_not_one_table", source.name, line=skip + 1)
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
    with hub_cursor() as side, tempfile.TemporaryFile() as sample:
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



def import_csv(cur: duckdb.DuckDBPyConnection, source: importers.Source, content_hash: str,
               now: datetime, csv_mapping: dict[str, str], stored_name: str) -> tuple[int, int, list[Notice], list[str]]:
    """A user's CSV through DuckDB: columns matched by synonym, units converted, one row per run
    or, for per-request files, grouped into runs by their dimension columns, stored as from
    ``stored_name``. DuckDB reads the source by its
    :attr:`~specviz.results.importers.Source.reader_path`, ``/proc/self/fd/N`` (no glob or ``~`` for
    it to expand, nothing another process can put in its place), and sniffs it once."""
    name = source.name
    path = source.reader_path
    reading = _sniff_csv(cur, source, path)
    plan = user_csv.plan_columns(name, reading.columns, csv_mapping)
    mapped, unknown, warnings = plan.mapped, plan.unknown, list(plan.notices)
    reading = replace(reading, text=frozenset(column for canonical, (column, _, _) in mapped.items()
                                              if RUN_COLUMNS.get(canonical) == "VARCHAR"))

    def value(canonical: str) -> str:
        column, kind, factor = mapped[canonical]
        target = RUN_COLUMNS.get(canonical, "DOUBLE")
        if target == "VARCHAR":  # one character past the bound, so that a cut can be told (_bound_text)
            return f"left(CAST({quote_identifier(column)} AS VARCHAR), {text_chars + 1})"
        if target == "BOOLEAN":
            return _csv_flag(column)
        number = _csv_number(column, kind)
        if factor != 1.0:
            number = f"{number} * {factor!r}"
        if target in ("INTEGER", "BIGINT"):  # whole numbers that fit, else NULL
            return f"CASE WHEN {number} >= 0 AND {number} = floor({number}) THEN TRY_CAST({number} AS {target}) END"
        finite = "" if canonical == "request_rate" else f" AND isfinite({number})"  # as the JSON parsers
        most = f" AND {number} <= {CONCURRENCY_MOST}" if canonical == "concurrency" else ""
        return f"CASE WHEN {number} >= 0{finite}{most} THEN {number} END"

    text_chars, value_chars = settings.get("SPECVIZ_STORED_TEXT_CHARS"), settings.get("SPECVIZ_STORED_VALUE_CHARS")
    kinds = dict(reading.columns)
    # A text among the other columns is read one character past the bound, so that a cut can be told.
    kept = [f"{quote_identifier(c[:text_chars])} := "
            + (f"left({quote_identifier(c)}, {value_chars + 1})" if kinds.get(c) == "VARCHAR" else quote_identifier(c))
            for c in unknown]
    texts = [c[:text_chars] for c in unknown if kinds.get(c) == "VARCHAR"]
    extra = f"to_json(struct_pack({', '.join(kept)}))" if unknown else "NULL"
    prefix = content_hash[:12]
    stamp = (f"{sql_literal(stored_name)} AS source_file, 'csv' AS source_format, TIMESTAMP '{now}' AS imported_at, "
             f"'{content_hash}' AS content_hash")
    try:
        if not plan.per_request:
            user_csv.charge_as_runs(source)  # before DuckDB reads more than the sniffer's sample
        warnings += _csv_not_numbers(cur, reading, path, mapped, value)
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
                         f"{', '.join(f'{value(d)} AS {quote_identifier(d)}' for d in dims)} FROM {reading.sql}")
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
            selects = [f"{value(k)} AS {quote_identifier(k)}" for k in mapped]
            cur.execute(f"""
                INSERT INTO runs BY NAME
                SELECT '{prefix}-' || (row_number() OVER () - 1) AS run_id, {stamp}, {', '.join(selects)},
                       coalesce({extra}::JSON, '{{}}'::JSON) AS extra
                FROM {reading.sql}""", reading.params(path))
            runs, requests = cur.execute("SELECT count(*) FROM runs WHERE content_hash = ?",
                                         [content_hash]).fetchone()[0], 0
            if not runs:
                raise IngestError("ingest.csv_no_rows", name)
            warnings += _impossible_acceptance(cur, content_hash, mapped)
            for column in _SHARES:  # a share above 1 (and at most 100, else left empty above) is a percentage
                if column in mapped:
                    # The column is this module's constant, never a user's text.
                    ((over,),) = cur.execute(f"SELECT count(*) FROM runs WHERE content_hash = ? AND {column} > 1",
                                             [content_hash]).fetchall()
                    if over:
                        cur.execute(f"UPDATE runs SET {column} = {column} / 100 WHERE content_hash = ? AND {column} > 1",
                                    [content_hash])
                        warnings.append(Notice("warn.csv_percent_rows", rows=over, column=column))
        check_run_count(name, runs)  # the transaction, rolled back, takes the runs out again
        warnings += _bound_text(cur, content_hash, mapped, texts, text_chars, value_chars)
        warnings += _mark_synthetic(cur, name, content_hash)
        warnings += _disagreements(cur, content_hash)
    except duckdb.InvalidInputException as exc:  # a malformed row deep in the file
        raise _unreadable(source, exc) from None
    return runs, requests, warnings, unknown


# Acceptance figures a run cannot have, as the JSON importers refuse them (RunBuilder's checks): a
# share of :data:`_SHARES` above 100 (one above 1 is then read as a percentage), tokens
# per step below 1, the target's own token, or above γ + 1 where the row gives γ. Negatives are
# left empty as the file is read.
_SHARES = ("acceptance_rate", "zero_accept_rate")
_IMPOSSIBLE = {"acceptance_rate": ("fraction", "acceptance_rate > 100"),
               "zero_accept_rate": ("fraction", "zero_accept_rate > 100"),
               "acceptance_length": ("length", "acceptance_length < 1 OR acceptance_length > num_speculative_tokens + 1")}


def _impossible_acceptance(cur: duckdb.DuckDBPyConnection, content_hash: str,
                           mapped: dict[str, tuple[str, str, float]]) -> list[Notice]:
    """Empty this import's acceptance figures that no run can have (:data:`_IMPOSSIBLE`), each kept as
    the file gave it in the run's ``extra`` under its column's name, with a warning per column that
    counts them: a rate of 150 read as 1.5, or an acceptance length of 0.2, had been stored and
    charted as they were."""
    notices = []
    for column, (kind, impossible) in _IMPOSSIBLE.items():
        if column not in mapped:
            continue
        # The column and its condition are this module's constants, never a user's text.
        where = f"content_hash = ? AND ({impossible})"
        ((rows,),) = cur.execute(f"SELECT count(*) FROM runs WHERE {where}", [content_hash]).fetchall()
        if rows:
            cur.execute(f"UPDATE runs SET extra = json_merge_patch(extra, json_object('{column}', {column})), "
                        f"{column} = NULL WHERE {where}", [content_hash])
            notices.append(Notice(f"warn.csv_impossible.{kind}", rows=rows, column=column))
    return notices


# The columns :func:`specviz.results.importers.base.disagreements` weighs against each other.
_WEIGHED = ("request_throughput", "duration_s", "num_requests", "failed_requests", "mean_e2el_ms", "mean_ttft_ms",
            "mean_tpot_ms")


def _disagreements(cur: duckdb.DuckDBPyConnection, content_hash: str) -> list[Notice]:
    """The figures of this import's runs that contradict each other, the first run of each kind said,
    as a JSON file's are (:func:`~specviz.results.importers.base.disagreements`: a CSV had said
    neither, an attack pass). The runs are at most ``SPECVIZ_IMPORT_MAX_RUNS``, read in batches."""
    said: dict[str, Notice] = {}
    rows = cur.execute(f"SELECT {', '.join(_WEIGHED)} FROM runs WHERE content_hash = ?", [content_hash])
    while batch := rows.fetchmany(10_000):
        for values in batch:
            for notice in disagreements(dict(zip(_WEIGHED, values))):
                said.setdefault(notice.key, notice)
    return list(said.values())


def _mark_synthetic(cur: duckdb.DuckDBPyConnection, name: str, content_hash: str) -> list[Notice]:
    """Flag this import's runs whose name, label or other columns say the acceptance was synthetic
    (:func:`specviz.results.synthetic.mark_synthetic`, as for the other formats; a run the file
    flagged itself keeps its flag). Only the runs whose text names a marker are read back."""
    rows = cur.execute("SELECT run_id, label, CAST(extra AS VARCHAR) AS extra FROM runs WHERE content_hash = ? "
                       "AND synthetic_acceptance IS NULL AND regexp_matches(coalesce(label, '') || "
                       "coalesce(CAST(extra AS VARCHAR), '') || ?, '(?i)synthetic|simulate_acc_len')",
                       [content_hash, name]).fetchall()
    runs = [{"run_id": run_id, "label": label, "extra": extra} for run_id, label, extra in rows]
    notices = mark_synthetic(runs, name)
    flagged = [run["run_id"] for run in runs if run.get("synthetic_acceptance")]
    if flagged:
        cur.execute("UPDATE runs SET synthetic_acceptance = true WHERE list_contains(?, run_id)", [flagged])
    return notices


def _bound_text(cur: duckdb.DuckDBPyConnection, content_hash: str, mapped: dict[str, tuple[str, str, float]],
                texts: list[str], text_chars: int, value_chars: int) -> list[Notice]:
    """Cut this import's text fields at ``text_chars`` and the texts among its other columns
    (``texts``, keys of ``extra``, of its runs or its requests) at ``value_chars`` (each was read one
    character longer, so a cut shows), and its runs' ``extra`` at ``SPECVIZ_STORED_EXTRA_BYTES``, with
    a warning for each field cut, as :class:`specviz.results.importers.base.RunBuilder` does for the
    other formats."""
    notices = []
    mine = {"runs": "content_hash = ?",
            "requests": "run_id IN (SELECT run_id FROM runs WHERE content_hash = ?)"}
    # The keys that hold a text past the bound, found in one pass over each table (a statement per
    # key took 36 s for a CSV of 999 other columns and 300 rows); each is then cut where it is long.
    long_keys = {key for table, where in mine.items() for (key,) in cur.execute(
        f"SELECT DISTINCT field.key FROM {table}, json_each({table}.extra) AS field WHERE {where} "
        f"AND field.type = 'VARCHAR' AND length(field.value ->> '$') > {value_chars}", [content_hash]).fetchall()}
    for key in (key for key in texts if key in long_keys):
        path = "$." + json.dumps(key)
        for table, where in mine.items():
            cur.execute(f"UPDATE {table} SET extra = json_merge_patch(extra, json_object(?, "
                        f"left(json_extract_string(extra, ?), {value_chars}))) "
                        f"WHERE {where} AND length(json_extract_string(extra, ?)) > {value_chars}",
                        [key, path, content_hash, path])
        notices.append(Notice("warn.cut_extra_value", field=key, limit=value_chars))
    for canonical in (c for c in mapped if RUN_COLUMNS.get(c) == "VARCHAR"):
        column = quote_identifier(canonical)
        cut = cur.execute(f"UPDATE runs SET {column} = left({column}, {text_chars}) "
                          f"WHERE content_hash = ? AND length({column}) > {text_chars}", [content_hash]).fetchone()[0]
        if cut:
            notices.append(Notice("warn.cut_text", field=mapped[canonical][0], limit=text_chars))
    most = settings.get("SPECVIZ_STORED_EXTRA_BYTES")
    cut = cur.execute("UPDATE runs SET extra = json_object('not stored', strlen(CAST(extra AS VARCHAR))) "
                      f"WHERE content_hash = ? AND strlen(CAST(extra AS VARCHAR)) > {most}",
                      [content_hash]).fetchone()[0]
    if cut:
        notices.append(Notice("warn.cut_extra", field="extra", count=cut, limit=most))
    return notices
