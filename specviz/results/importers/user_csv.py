"""``csv``: a user's own table of results, one row per run or one row per request.

Columns are matched by name (:data:`CSV_SYNONYMS`: ``p50_itl_ms``, ``TTFT (ms)``, ``gamma``, …,
with units converted) or by a mapping the user gives; a file with per-request latency columns
(``ttft_ms``, ``itl_ms``) is grouped into runs by its dimension columns. This module decides what
each column means (:func:`plan_columns`); the store reads the rows with DuckDB, which is why a
million rows import in about a second, and executes the plan.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from specviz import settings
from specviz.errors import Notice
from specviz.results.schema import RUN_COLUMNS

from .base import Format, IngestError, Parsed, UnrecognisedColumnsError, normalise_name
from .source import Source, byte_lines, header_line_bytes, occurrences

__all__ = ["FORMAT", "CSV_SYNONYMS", "csv_header", "header_line", "ragged_row", "table_problem", "other_delimiter", "plan_columns", "ColumnPlan", "RUN_DIMENSIONS",
           "MAPPABLE_COLUMNS", "check_mapping", "charge_as_runs"]

# The run columns the store fills in for every row (its id, its file and import, the columns kept
# in extra, whether the user stated its speculation): a file's column in their place would clash with
# the store's own value.
_STORE_FILLED = frozenset({"run_id", "source_file", "source_format", "imported_at", "content_hash", "extra",
                           "speculation_by_user"})
MAPPABLE_COLUMNS: tuple[str, ...] = tuple(c for c in RUN_COLUMNS if c not in _STORE_FILLED)
"""The canonical run columns a user may map a CSV column to, in the schema's order: every one of
:data:`specviz.results.schema.RUN_COLUMNS` but those the store fills in itself (``run_id``, ``source_file``,
``source_format``, ``imported_at``, ``content_hash``, ``extra``, ``speculation_by_user``), which
:func:`check_mapping` refuses."""

# Dimensions that tell the runs of a per-request CSV apart.
RUN_DIMENSIONS = ("label", "workload", "engine", "endpoint", "engine_version", "target_model", "draft_model",
                  "spec_method", "num_speculative_tokens", "gpu", "temperature", "concurrency", "request_rate",
                  "synthetic_acceptance")

# Memory of a CSV read by the store's DuckDB, measured with VmHWM beyond what the process held
# before. Its buffers grow with the rows up to a few hundred MB (eight columns per request: 10 rows
# 20 MB, 30,000 rows 21 MB, 100,000 rows 37-52 MB, 300,000 rows 59 MB, 1M 211-244 MB, 2M-5M
# 272-378 MB; four as runs: 30,000 rows 44 MB, 100,000 rows 108-115 MB, 300,000 rows 169 MB, 1M
# 327 MB), then by about 22 B a row (one column: 10M rows 240-314 MB) to 45 B (eight: 10M rows
# 600-641 MB). Charged: the buffers, at most _BUFFER_MOST, then per row and cell. Measured again on
# 2026-12-02, with the requests table's five acceptance columns of schema 4 (NULL in a CSV's rows):
# eight columns, 2M rows 354-427 MB (the higher under load), 10M rows 0.82 GB as before.
_BUFFER_BASE, _BUFFER_ROW_BYTES, _BUFFER_MOST = 50_000_000, 1_000, 360_000_000
_ROW_BYTES, _CELL_BYTES = 24, 5
# A row inserted as a run is also a key of the runs table's index (71 B a key): eight columns as
# runs, 3M rows took 300-410 MB, 10M rows 1,113-1,142 MB.
_RUN_ROW_BYTES = 64
# Unknown columns are kept in each row's ``extra``, as DuckDB's to_json(struct_pack(...)): every
# row repeats their names. The text is bounded by, per row, the names' bytes and _EXTRA_CELL_CHARS
# a cell (quotes, colon, comma, null or a number's digits), plus the file's text, escaped (its
# values); measured with VmHWM, building and storing it took up to 4.9x that text beyond the other
# charges (3,000 rows of 999 unknown 60-character columns per request: 1.1 to 1.4 GB staged, 1.06
# GB streamed; 30,000 rows: 6.6 GB staged, 4.3 GB as runs).
_EXTRA_CELL_CHARS, _EXTRA_FACTOR = 24, 7
# DuckDB's buffers for each column, whatever the rows: 1,000 columns of 3 rows took 70 MB.
_COLUMN_BYTES = 100_000
# Reading a header line: its text at up to 4 bytes a character, and the fields split from it.
_HEADER_BYTES_PER_BYTE = 12
# Sniffing: the lines of the head that are compared, and the longest column name taken for one.
_SNIFF_LINES, _LONGEST_NAME = 20, 200


def _synonyms() -> dict[str, tuple[str, float]]:
    """Normalised CSV column name → (canonical column, factor to canonical units)."""
    table: dict[str, tuple[str, float]] = {}

    def add(canonical: str, names: Iterable[str], factor: float = 1.0) -> None:
        for n in names:
            table[normalise_name(n)] = (canonical, factor)

    add("label", ["label", "name", "run", "run_name", "experiment"])
    add("workload", ["workload", "task", "dataset", "task_type"])
    add("engine", ["engine", "backend", "server"])
    add("endpoint", ["endpoint", "endpoint_type", "api", "llm_api"])
    add("engine_version", ["engine_version", "version", "vllm_version"])
    add("target_model", ["target_model", "model", "model_id", "model_name"])
    add("draft_model", ["draft_model", "speculative_model", "draft"])
    add("spec_method", ["spec_method", "method", "speculative_method"])
    add("num_speculative_tokens", ["num_speculative_tokens", "gamma", "num_spec_tokens", "draft_length", "k"])
    add("gpu", ["gpu", "hardware", "accelerator", "device"])
    add("temperature", ["temperature", "temp"])
    add("concurrency", ["concurrency", "max_concurrency", "num_concurrent_requests", "users", "batch_size",
                        "batch", "streams"])
    add("request_rate", ["request_rate", "qps", "rate"])
    add("num_requests", ["num_requests", "requests", "completed", "num_prompts"])
    add("failed_requests", ["failed_requests", "failed", "errors", "num_errors"])
    add("duration_s", ["duration_s", "duration", "duration_sec", "elapsed_s"])
    add("duration_s", ["duration_ms"], 1e-3)
    add("request_throughput", ["request_throughput", "requests_per_second", "req_s", "rps"])
    add("output_throughput", ["output_throughput", "output_tokens_per_second", "output_tok_s",
                              "tokens_per_second", "tok_s", "throughput"])
    add("total_token_throughput", ["total_token_throughput", "total_tokens_per_second"])
    add("acceptance_length", ["acceptance_length", "mean_acceptance_length", "accept_length",
                              "tokens_per_step", "mean_accepted_tokens"])
    add("acceptance_rate", ["acceptance_rate", "accept_rate", "draft_acceptance_rate"])
    add("acceptance_rate", ["acceptance_rate_pct", "acceptance_rate_percent", "accept_rate_pct"], 0.01)
    add("zero_accept_rate", ["zero_accept_rate", "zero_accept_share"])
    add("synthetic_acceptance", ["synthetic_acceptance", "synthetic", "simulated_acceptance"])
    long_names = {"ttft": ["ttft", "time_to_first_token"], "itl": ["itl", "inter_token_latency"],
                  "tpot": ["tpot", "time_per_output_token"], "e2el": ["e2el", "e2e_latency", "latency",
                                                                      "request_latency", "end_to_end_latency"]}
    for short, names in long_names.items():
        for n in names:
            for stat, aliases in (("mean", ["mean", "avg", "average"]), ("p50", ["p50", "median"]),
                                  ("p90", ["p90"]), ("p99", ["p99"])):
                for a in aliases:
                    add(f"{stat}_{short}_ms", [f"{a}_{n}_ms", f"{n}_{a}_ms", f"{a}_{n}", f"{n}_{a}"])
                    add(f"{stat}_{short}_ms", [f"{a}_{n}_s", f"{n}_{a}_s"], 1e3)
            add(f"request:{short}_ms", [f"{n}_ms", n])
            add(f"request:{short}_ms", [f"{n}_s", f"{n}_sec"], 1e3)
    add("request:input_tokens", ["input_tokens", "prompt_tokens", "input_len", "input_length"])
    add("request:output_tokens", ["output_tokens", "completion_tokens", "output_len", "output_length"])
    return table


CSV_SYNONYMS: dict[str, tuple[str, float]] = _synonyms()


def csv_header(source: Source) -> list[str]:
    """The column names of a CSV file: its first row, read whole (past the first 64 KiB if it is
    longer) and no further, for the page's mapping step and the column limit.

    Raises
    ------
    IngestError
        If the file is empty, binary or not UTF-8, or its header is malformed (a name over
        csv's 128 KiB field limit, a quote never closed).
    """
    source.head  # the checks every file passes
    try:
        return next((row for row in csv.reader(byte_lines(source.pieces())) if not _blank(row)), [])
    except UnicodeDecodeError:
        raise IngestError("ingest.not_utf8", source.name) from None
    except csv.Error as exc:
        raise IngestError("ingest.csv_header_malformed", source.name, detail=str(exc)) from None


def _blank(row: list[str]) -> bool:
    return not any(field.strip() for field in row)


def header_line(source: Source) -> int:
    """The line a CSV file's header starts on, its first row that is not blank (1 for most files; a
    quoted header cell over two lines starts on the first of them)."""
    rows = csv.reader(byte_lines(source.pieces()))
    ended = 0  # the line the row before ended on
    try:
        for row in rows:
            if not _blank(row):
                return ended + 1
            ended = rows.line_num
    except (csv.Error, UnicodeDecodeError):
        pass
    return 1


def ragged_row(source: Source) -> tuple[int, int, int] | None:
    """The first row of a CSV file whose fields are not as many as its header's (its first row that
    is not blank), as (its line, its fields, the header's), or None if there is none (or the file
    cannot be read as CSV at all)."""
    rows = csv.reader(byte_lines(source.pieces()))
    try:
        header = next((row for row in rows if not _blank(row)), [])
        for row in rows:
            if row and len(row) != len(header):
                return rows.line_num, len(row), len(header)
    except (csv.Error, UnicodeDecodeError):
        return None
    return None


@dataclass
class ColumnPlan:
    """What each column of a CSV means: ``mapped`` is canonical column → (the file's column, its
    DuckDB type, the factor to canonical units); ``unknown`` columns are kept in ``extra``."""

    mapped: dict[str, tuple[str, str, float]] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)

    @property
    def per_request(self) -> bool:
        """Whether rows are requests (a per-request latency column), grouped into runs."""
        return any(k.startswith("request:") and k.endswith("_ms") for k in self.mapped)


def check_mapping(name: str, mapping: dict[str, str]) -> None:
    """Refuse a user's mapping to a column the store fills in itself, before the file is read:
    DuckDB would otherwise fail mid-import on a column given twice.

    Raises
    ------
    IngestError
        ``ingest.csv_mapping_reserved``, naming the first such column and its target.
    """
    for column, canonical in mapping.items():
        if canonical in _STORE_FILLED:
            raise IngestError("ingest.csv_mapping_reserved", name, column=column, field=canonical)


def plan_columns(name: str, columns: Iterable[tuple[str, str]], mapping: dict[str, str]) -> ColumnPlan:
    """Match a CSV's columns (name, DuckDB type) to canonical columns: the user's ``mapping`` first,
    then :data:`CSV_SYNONYMS`; the first column for each canonical one wins.

    Raises
    ------
    UnrecognisedColumnsError
        If no column is a result (a throughput, a latency, an acceptance figure): the page offers
        the mapping step with the file's column names.
    """
    plan = ColumnPlan()
    described = list(columns)
    for column, kind in described:
        synonym = CSV_SYNONYMS.get(normalise_name(column))
        key = mapping.get(column) or (synonym[0] if synonym else None)
        factor = synonym[1] if synonym and key == synonym[0] else 1.0
        if key and key not in plan.mapped and (key in RUN_COLUMNS or key.startswith("request:")):
            plan.mapped[key] = (column, kind, factor)
        else:
            plan.unknown.append(column)
    if not any(k not in RUN_DIMENSIONS and k not in ("label", "workload") for k in plan.mapped):
        raise UnrecognisedColumnsError(name, [column for column, _ in described])
    for canonical, (column, _, factor) in plan.mapped.items():
        if factor == 1.0 and canonical.endswith("_ms") and not normalise_name(column).endswith("ms"):
            plan.notices.append(Notice("warn.csv_no_unit", column=column))
        elif factor == 0.01:
            plan.notices.append(Notice("warn.csv_percent", column=column))
    if plan.unknown:
        plan.notices.append(Notice("warn.csv_extra_columns", columns=", ".join(plan.unknown)))
    return plan


def _known(column: str) -> bool:
    return normalise_name(column) in CSV_SYNONYMS


def sniff(source: Source) -> float:
    """0.1 (the fallback) for a table: a header of at least two short, non-empty names (or one
    that names a known column), and rows most of which have as many fields as the header. A
    README, a console log or an HTML page is not one."""
    if source.is_json:
        return 0.0
    try:
        rows = list(itertools.islice(csv.reader(io.StringIO(source.head, newline="")), _SNIFF_LINES + 1))
    except csv.Error:  # a field over csv's limit: not a table this importer reads
        return 0.0
    cut = not source.head_is_whole
    if cut and len(rows) > 1:
        rows = rows[:-1]  # the head may end inside its last line
    if not rows:
        return 0.0
    header = rows[0][:-1] if cut and len(rows) == 1 else rows[0]  # a header longer than the head
    if not rows[0] or not all(0 < len(name.strip()) <= _LONGEST_NAME for name in header):
        return 0.0
    if len(rows[0]) < 2 and not _known(rows[0][0]):
        return 0.0
    widths = Counter(len(row) for row in rows[1:] if row)
    if widths:
        width, count = widths.most_common(1)[0]
        if width != len(rows[0]) or count < 0.8 * sum(widths.values()):
            return 0.0
    return 0.1


def table_problem(source: Source) -> IngestError | None:
    """Why a table of comma-separated fields is not one :func:`sniff` takes, where its header has two
    fields or more and most of its rows as many: a column with no name (a spreadsheet's trailing comma), a name longer than
    ``_LONGEST_NAME`` characters, a row among the first ``_SNIFF_LINES`` with other fields than the
    header's, or a quote never closed; None where it is none of these (an attack pass: each had been
    "not a benchmark result file of a known format")."""
    if source.is_json:
        return None
    try:
        rows = list(itertools.islice(csv.reader(io.StringIO(source.head, newline="")), _SNIFF_LINES + 1))
    except csv.Error as exc:
        return IngestError("ingest.csv_header_malformed", source.name, detail=str(exc))
    header = next((row for row in rows if not _blank(row)), [])
    widths = Counter(len(row) for row in rows[rows.index(header) + 1:] if row) if header else Counter()
    if len(header) < 2 or not widths or widths.most_common(1)[0][0] != len(header):
        return None  # no table: most rows are not of the header's width (a log line with a comma)
    for index, name in enumerate(header, start=1):
        if not name.strip():
            return IngestError("ingest.csv_unnamed_column", source.name, column=index)
        if len(name.strip()) > _LONGEST_NAME:
            return IngestError("ingest.csv_long_name", source.name, column=index, length=len(name.strip()),
                               most=_LONGEST_NAME)
    if (ragged := ragged_row(source)) is not None and ragged[0] <= _SNIFF_LINES + 1:
        line, fields, columns = ragged
        return IngestError("ingest.csv_ragged", source.name, line=line, fields=fields, columns=columns)
    return None


# Separators a spreadsheet writes where the decimal mark is a comma (Vietnamese, German, French…).
_OTHER_DELIMITERS = {";": "semicolon", "\t": "tab", "|": "pipe"}


def other_delimiter(source: Source) -> str | None:
    """The name of the separator (``semicolon``, ``tab``, ``pipe``) of a table whose fields are not
    separated by commas, as this importer reads them: a header of one field when split at commas,
    of two or more at the separator, and rows of as many; None for anything else."""
    if source.is_json:
        return None
    lines = source.head.splitlines()[:_SNIFF_LINES + 1]
    if len(lines) > 1 and not source.head_is_whole:
        lines = lines[:-1]  # the head may end inside its last line
    try:
        if not lines or len(next(csv.reader(lines[:1]))) > 1:
            return None
        for delimiter, name in _OTHER_DELIMITERS.items():
            rows = [row for row in csv.reader(lines, delimiter=delimiter) if row]
            if len(rows) > 1 and len(rows[0]) > 1 and all(len(row) == len(rows[0]) for row in rows):
                return name
    except csv.Error:
        return None
    return None


def parse(source: Source) -> Parsed:
    """Check a user's CSV before the store reads it: the memory DuckDB will take (rows, cells,
    columns, the ``extra`` text of unknown columns) and the number of columns."""
    # The header line is read whole (to count its columns): its text and fields first.
    source.fits(_HEADER_BYTES_PER_BYTE * header_line_bytes(source.pieces()))
    header = csv_header(source)
    most = settings.get("SPECVIZ_IMPORT_MAX_COLUMNS")
    if len(header) > most:
        raise IngestError("ingest.csv_too_many_columns", source.name, most=most)
    # Rows as requests (a file of runs costs more: :func:`charge_as_runs`). A row's cells past its
    # first are charged as its commas were (DuckDB refuses a row with more fields than the header).
    rows = source.line_ends + 1
    source.charge(min(_BUFFER_MOST, _BUFFER_BASE + _BUFFER_ROW_BYTES * rows) + _ROW_BYTES * rows
                  + _CELL_BYTES * rows * (len(header) - 1) + _COLUMN_BYTES * len(header))
    unknown = _unknown_columns(header)
    if unknown:
        # Values: the file's text at most, escaped (a quote or backslash doubled, a control
        # character as \\u00XX).
        escapes = 0
        for piece in source.pieces():
            view = np.frombuffer(piece, np.uint8)
            controls = int(np.count_nonzero((view < 32) & (view != ord("\n")) & (view != ord("\r"))))
            escapes += occurrences(piece, ord('"')) + occurrences(piece, ord("\\")) + 5 * controls
        extra_text = (rows * sum(len(c.encode("utf-8", "surrogatepass")) + _EXTRA_CELL_CHARS for c in unknown)
                      + source.size + escapes)
        source.charge(_EXTRA_FACTOR * extra_text)
    return Parsed("csv", [])


def charge_as_runs(source: Source) -> None:
    """Charge what inserting a CSV's rows as runs costs beyond reading them as requests (what
    :func:`parse` charged): the store knows which once it has the user's mapping.

    Raises
    ------
    IngestError
        If that takes the estimate over ``SPECVIZ_IMPORT_MEMORY_BYTES``.
    """
    source.charge(_RUN_ROW_BYTES * (source.line_ends + 1))


def _unknown_columns(header: list[str]) -> list[str]:
    """The columns the store's CSV import keeps in ``extra`` when no mapping is given: those no
    synonym names, and a second one for the same canonical column."""
    seen: set[str] = set()
    unknown = []
    for column in header:
        synonym = CSV_SYNONYMS.get(normalise_name(column))
        if synonym and synonym[0] not in seen:
            seen.add(synonym[0])
        else:
            unknown.append(column)
    return unknown


FORMAT = Format("csv", sniff, parse)
