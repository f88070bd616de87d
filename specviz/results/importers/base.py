"""What every importer makes of a file (:class:`specviz.results.importers.source.Source`, the file
read once within bounds): :class:`Parsed`, canonical run dicts (keys from
:data:`specviz.results.schema.RUN_COLUMNS`; times in ms, acceptance as a fraction) with ``extra``, the
JSON text of every source field that has no column, per-request rows and notices; the
:class:`RunBuilder` that makes them, the values it reads (numbers, nested keys, floats of a request
column) and the names formats share.

Errors are :class:`IngestError` (a :class:`specviz.errors.SpecvizError`: a message key of the
translation layer and its parameters, always the file's name); notices are
:class:`specviz.errors.Notice`.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import reprlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import duckdb
import numpy as np
import pandas as pd

from specviz import settings
from specviz.i18n import whole_characters
from specviz.errors import Notice, SpecvizError, out_of_room
from specviz.results.schema import CONCURRENCY_MOST, INTEGER_COLUMNS, RUN_COLUMNS, TEXT_COLUMNS

if TYPE_CHECKING:  # a format reads a source, which is made in .source (which imports this module)
    from .source import Source

__all__ = ["IngestError", "check_run_count", "disagreements", "UnrecognisedColumnsError", "as_ingest_error", "Parsed", "Format",
           "RunBuilder", "normalise_name", "preview", "number", "dig", "find_key", "floats", "request_column",
           "request_extra", "extra_json", "not_stored", "nesting_depth", "STATISTIC_PREFIXES", "TOKENS_PER_SEC_COLUMNS"]

# A statistic's name in a result file, as the prefix of the canonical columns it fills (``p50_itl_ms``
# of a ``median_itl_ms``): vLLM's and SGLang's bench, inference-perf.
STATISTIC_PREFIXES = {"mean": "mean", "median": "p50", "p50": "p50", "p90": "p90", "p99": "p99"}
# Throughputs named per second, as inference-perf's reports and the llm-d benchmark report v0.1 name them.
TOKENS_PER_SEC_COLUMNS = {"output_tokens_per_sec": "output_throughput", "total_tokens_per_sec": "total_token_throughput",
                          "requests_per_sec": "request_throughput"}


class IngestError(SpecvizError):
    """A file that cannot be imported: ``key`` says why, the parameter ``file`` names it."""

    def __init__(self, key: str, file: str, **params: Any) -> None:
        super().__init__(key, file=file, **params)
        self.file = file


class UnrecognisedColumnsError(IngestError):
    """A CSV none of whose columns names a result; ``columns`` are its column names as read, for
    the page's mapping step."""

    def __init__(self, file: str, columns: list[str]) -> None:
        super().__init__("ingest.csv_no_columns", file)
        self.columns = columns


def check_run_count(name: str, runs: int) -> None:
    """Refuse a file of more runs than ``SPECVIZ_IMPORT_MAX_RUNS``: every later reader of the store
    pays for each (a 40 MB per-run CSV of 2M rows made 2M runs, and the Explorer then took 4.75 GB)."""
    most = settings.get("SPECVIZ_IMPORT_MAX_RUNS")
    if runs > most:
        raise IngestError("ingest.too_many_runs", name, runs=runs, limit=most)


def as_ingest_error(name: str, exc: BaseException) -> IngestError:
    """The error of file ``name`` for any exception raised while reading it, by its type.

    Parameters
    ----------
    name : str
        The file's name as the user gave it.
    exc : BaseException
        What reading it raised; an :class:`IngestError` is returned unchanged.

    Returns
    -------
    IngestError
        Naming the file and saying what was wrong.
    """
    if isinstance(exc, IngestError):
        return exc
    if out_of_room(exc):  # writing an upload's private copy or a spill, not reading it
        return IngestError("ingest.no_room", name, detail=exc.strerror if isinstance(exc, OSError) else str(exc))
    if isinstance(exc, OSError):
        return IngestError("ingest.unreadable", name, detail=exc.strerror or str(exc))
    if isinstance(exc, RecursionError):
        return IngestError("ingest.too_deep", name)
    if isinstance(exc, MemoryError):
        return IngestError("ingest.no_memory", name)
    if isinstance(exc, OverflowError):
        return IngestError("ingest.number_too_large", name)
    if isinstance(exc, UnicodeEncodeError):  # JSON may escape half a character: "\\ud800"
        return IngestError("ingest.lone_surrogate", name)
    if isinstance(exc, UnicodeError):
        return IngestError("ingest.not_utf8", name)
    detail = (str(exc).splitlines() or [""])[0][:200]
    return IngestError("ingest.failed", name, kind=type(exc).__name__, detail=detail)


# DuckDB's refusal of a record longer than its buffer (``maximum_object_size``), with that length.
_OBJECT_SIZE = re.compile(r'"maximum_object_size" of \d+ bytes exceeded.*\(>(\d+) bytes\)')


def duckdb_read_error(name: str, exc: duckdb.Error, memory: int) -> IngestError:
    """The error of a per-request file ``name`` that DuckDB, given ``memory`` bytes, failed to read.

    Returns
    -------
    IngestError
        ``ingest.duckdb_memory`` where DuckDB ran out of its ``memory`` (a share of
        ``SPECVIZ_IMPORT_MEMORY_BYTES``, not the machine's: a line of 3.5M gaps, 21 MB, needs more
        than 256 MiB), ``ingest.record_too_large`` (with DuckDB's buffer in bytes) for a record
        longer than its ``maximum_object_size``, else ``ingest.json_malformed``.
    """
    if isinstance(exc, duckdb.OutOfMemoryException):
        return IngestError("ingest.duckdb_memory", name, memory_mb=memory / 1e6)
    over = _OBJECT_SIZE.search(str(exc))
    if over:
        return IngestError("ingest.record_too_large", name, limit=int(over[1]))
    return IngestError("ingest.json_malformed", name)


@dataclass
class Parsed:
    """What one file holds: its format, canonical runs, per-request rows and notices.

    ``requests`` has the columns ``run_index`` (the position of its run in ``runs``) and any of
    :data:`specviz.results.schema.REQUEST_COLUMNS` but ``run_id`` (NaN where unknown), or none at all.
    A user's CSV (format ``csv``) has no runs here: the store reads it with DuckDB.
    """

    format: str
    runs: list[dict[str, Any]]
    requests: pd.DataFrame = field(default_factory=pd.DataFrame)
    warnings: list[Notice] = field(default_factory=list)


@dataclass(frozen=True)
class Format:
    """One import format: ``sniff`` says how sure it is that a source is of this format (0: not
    at all, 1: certain), ``parse`` reads it. One module of :mod:`specviz.results.importers` each.
    ``claims``, where a format has it, says from the file's head alone that it is certainly of
    this format: the registry then neither decodes the file nor asks the other formats."""

    name: str
    sniff: Callable[["Source"], float]
    parse: Callable[["Source"], Parsed]
    claims: Callable[["Source"], bool] | None = None


def normalise_name(name: str) -> str:
    """Column or key name → lower snake case: ``"TTFT (ms)"`` → ``"ttft_ms"``."""
    return re.sub(r"[^0-9a-z]+", "_", name.strip().lower()).strip("_")


def dig(obj: Any, *keys: str) -> dict[str, Any]:
    """The object at ``obj[k1][k2]…``, or {} where a step is missing or not an object."""
    for key in keys:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj if isinstance(obj, dict) else {}


def number(value: Any) -> float | None:
    """A float from a number or numeric text (thousands separators allowed; ``inf`` kept), else
    None: also for NaN and for integers too large for a float."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        if text.lower() in ("inf", "+inf", "infinity"):
            return math.inf
        try:
            value = float(text)
        except ValueError:
            return None
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an integer of more than 308 digits
            return None
        return number if not math.isnan(number) else None
    return None


_MAX_EXACT_INT = 2**53  # the largest whole number a float holds exactly
# A column of 32-bit integers holds less: a draft length of 2**40 had refused its whole file with
# DuckDB's conversion error (an attack pass).
_INTEGER_MOST = {column: 2**31 for column, kind in RUN_COLUMNS.items() if kind == "INTEGER"}
# Warnings quote a value in at most 40 characters; reprlib never renders a large or deep value whole.
_PREVIEW = reprlib.Repr()
_PREVIEW.maxlevel, _PREVIEW.maxlist, _PREVIEW.maxdict, _PREVIEW.maxlong = 2, 4, 4, 40


# The scale of a figure a file writes in percent (vLLM's and AIPerf's acceptance rates).
PERCENT = 0.01


def preview(value: Any) -> str:
    """A value quoted in at most 40 characters, for a notice: never a large or deep value rendered whole."""
    return (value if isinstance(value, str) else _PREVIEW.repr(value))[:40]


# A JSON string (skipped as it is) or a bare non-finite number token as json.dumps writes them.
_NON_FINITE = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


def nesting_depth(value: Any) -> int:
    """How deep lists and objects nest in a JSON value: 0 for a number or a text, 1 for a flat list or
    object. Counted without recursion, so a value nested past Python's recursion limit is counted too."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth + 1)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def extra_json(extra: dict[str, Any]) -> str:
    """``extra`` as compact JSON text that DuckDB's JSON type accepts: Python writes non-finite
    floats as bare ``NaN``/``Infinity``, which is not JSON (SGLang writes ``"request_rate":
    Infinity``), so they become the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``; half
    characters become U+FFFD."""
    try:
        text = json.dumps(extra, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:  # a non-finite float somewhere: quote those tokens, outside strings only
        text = json.dumps(extra, separators=(",", ":"), ensure_ascii=False)
        text = _NON_FINITE.sub(lambda m: f'"{m[1]}"' if m[1] else m[0], text)
    return whole_characters(text)


def request_extra(extra: dict[str, Any]) -> str | None:
    """A request row's ``extra``: the values of ``extra`` that are set (not None, empty or false), as
    the JSON text a run's ``extra`` is written in; None where none is."""
    kept = {key: value for key, value in extra.items() if value}
    return extra_json(kept) if kept else None


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')  # every string of a JSON text, in order


def _cut_strings(text: str, limit: int) -> str:
    """JSON ``text`` with every string in it longer than ``limit`` characters cut there (read on the
    text, not the value: a value nested past Python's recursion limit is cut all the same)."""
    def cut(found: re.Match) -> str:
        if len(found.group()) <= limit + 2:  # no longer than the limit, escapes or not
            return found.group()
        value = json.loads(found.group())
        return found.group() if len(value) <= limit else json.dumps(value[:limit], ensure_ascii=False)
    return _JSON_STRING.sub(cut, text)


# The share of a run's counted requests its rate × duration may come to before it is said to disagree
# (:func:`disagreements`): wide, for tools count a span from the first request
# sent or the first response, and some count failed requests in the rate.
_REQUESTS_IMPLIED = (0.5, 2.0)


def _shown(value: float, places: int) -> str:
    """A figure of a notice: with thousands separators and ``places`` decimals, or in powers of ten past
    10¹² (a rate of 1e308 had been 309 digits)."""
    return f"{value:,.{places}f}" if abs(value) < 1e12 else f"{value:.3g}"


def disagreements(run: dict[str, Any]) -> list[Notice]:
    """The figures of one run (its canonical columns, None where absent) that contradict each other,
    each a notice naming its ``field``; the figures are stored as the file gives them.

    - ``warn.throughput_disagrees``: the requests its rate implies over its span, rate × duration,
      outside :data:`_REQUESTS_IMPLIED` of the requests it counts (the completed, the failed too where
      given): every tool divides the requests it counts by that span, so one of the three figures is
      off. An analyst's pass: a report of 500 requests in 50 s said 2,262 req/s.
    - ``warn.latency_disagrees``: a mean request latency no longer than the mean time to the first
      token while tokens followed the first (a mean TPOT above 0): a request's latency is its TTFT
      plus the gaps after it, so the first mean is the second's plus a positive sum whenever any
      request had a second token. llm-d's example report gives 36.9 ms for both (and its TPOT).
    """
    found = []
    rate, span, counted = (run.get(c) for c in ("request_throughput", "duration_s", "num_requests"))
    # No span (a run of 0 s) or none a rate can be taken over: nothing to weigh (a duration of 0 had
    # divided by zero and refused its file: an attack pass).
    if rate is not None and span is not None and counted and 0 < span < math.inf:
        implied, (low, high) = rate * span, _REQUESTS_IMPLIED
        if not low * counted <= implied <= high * (counted + (run.get("failed_requests") or 0)):
            found.append(Notice("warn.throughput_disagrees", field="request_throughput", rate=_shown(rate, 2),
                                duration=_shown(span, 2), implied=_shown(implied, 0), requests=f"{counted:,}",
                                counted_rate=_shown(counted / span, 2)))
    e2el, ttft, tpot = (run.get(c) for c in ("mean_e2el_ms", "mean_ttft_ms", "mean_tpot_ms"))
    if e2el is not None and ttft is not None and tpot is not None and tpot > 0 and e2el <= ttft:
        found.append(Notice("warn.latency_disagrees", field="mean_e2el_ms", e2el=_shown(e2el, 2), ttft=_shown(ttft, 2),
                            tpot=_shown(tpot, 2)))
    return found


class RunBuilder:
    """Collects one run's canonical fields, checks each value, keeps the rest in ``extra``.

    What is stored is bounded, so that a file cannot make every later reader of the store pay for
    it (a model name of 50 MB and an ``extra`` value of 100 MB were imported): a text field is cut
    at ``SPECVIZ_STORED_TEXT_CHARS``, a text in ``extra`` at ``SPECVIZ_STORED_VALUE_CHARS``, and a run's
    ``extra`` past ``SPECVIZ_STORED_EXTRA_BYTES`` loses its largest values; each cut is a warning
    that names the field.
    """

    def __init__(self, warnings: list[Notice]) -> None:
        self.row: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}
        self.warnings = warnings

    def warn_once(self, key: str, field: str, **params: Any) -> None:
        """One warning per field and kind for the whole file, not one per run."""
        if not any(w.key == key and w.params.get("field") == field for w in self.warnings):
            self.warnings.append(Notice(key, field=field, **params))

    def set(self, column: str, value: Any, scale: float = 1.0, source: str | None = None) -> None:
        if value is None:
            return
        source = source or column
        if column in TEXT_COLUMNS:
            if isinstance(value, (str, int, float)):
                text, limit = whole_characters(str(value)), settings.get("SPECVIZ_STORED_TEXT_CHARS")
                if len(text) > limit:
                    self.warn_once("warn.cut_text", whole_characters(source), limit=limit)
                    text = text[:limit]
                self.row[column] = text
            else:  # a list or object would be rendered whole, however large or deep
                self._reject(source, value, "text")
            return
        if column == "per_position_acceptance":
            rates = [number(v) for v in value] if isinstance(value, list) else None
            if rates is None or any(r is None or not 0 <= r <= 1 for r in rates):
                self._reject(source, value, "fractions")
            else:
                self.row[column] = rates
            return
        amount = number(value)
        amount = None if amount is None else amount * scale  # 1e308 s in ms is no longer finite
        if amount is None or (math.isinf(amount) and column != "request_rate"):
            self._reject(source, value, "finite")
        elif amount < 0:
            self._reject(source, value, "negative")
        elif column in INTEGER_COLUMNS and (amount != int(amount) or amount >= _INTEGER_MOST.get(column, _MAX_EXACT_INT)):
            self._reject(source, value, "whole")
        elif column == "concurrency" and amount > CONCURRENCY_MOST:
            self._reject(source, value, "concurrency")
        elif column in ("acceptance_rate", "zero_accept_rate") and amount > 1:
            # Said in the file's own unit: vLLM and AIPerf write the rate in percent.
            self._reject(source, value, "percentage" if scale == PERCENT else "fraction")
        else:
            self.row[column] = int(amount) if column in INTEGER_COLUMNS else amount

    def _reject(self, source: str, value: Any, expected: str) -> None:
        self.warnings.append(Notice(f"warn.rejected.{expected}", source=whole_characters(source),
                                    value=whole_characters(repr(preview(value)))))
        self.extra[source] = value

    def keep(self, key: str, value: Any) -> None:
        self.extra[key] = value

    def build(self) -> dict[str, Any]:
        """The run, with ``extra`` as JSON text (its texts and its size bounded): the source's objects
        need not outlive parsing. Figures the run contradicts itself with are said, once a file
        (:func:`disagreements`)."""
        for notice in disagreements(self.row):
            self.warn_once(notice.key, **notice.params)
        value_chars, most = settings.get("SPECVIZ_STORED_VALUE_CHARS"), settings.get("SPECVIZ_STORED_EXTRA_BYTES")
        deepest = settings.get("SPECVIZ_STORED_EXTRA_DEPTH")
        parts = {}  # each key's '"key":value', its strings cut
        for key, value in self.extra.items():
            if (depth := nesting_depth(value)) > deepest:  # every later reader would recurse through it
                self.warn_once("warn.cut_extra_depth", whole_characters(str(key)), depth=depth, limit=deepest)
                value = f"(not stored: nested {depth:,} deep)"
            part = extra_json({key: value})[1:-1]
            parts[key] = _cut_strings(part, value_chars)
            if parts[key] != part:
                self.warn_once("warn.cut_extra_value", whole_characters(str(key)), limit=value_chars)
        text = "{" + ",".join(parts.values()) + "}"
        if len(text.encode()) > most:  # the largest values go first, and the warning names them
            dropped = []
            for size, key in sorted(((len(p.encode()), k) for k, p in parts.items()), reverse=True):
                parts[key] = extra_json({key: not_stored(size)})[1:-1]
                dropped.append(whole_characters(str(key)))
                text = "{" + ",".join(parts.values()) + "}"
                if len(text.encode()) <= most:
                    break
            named = ", ".join(dropped[:5]) + (f" (+{len(dropped) - 5})" if len(dropped) > 5 else "")
            self.warn_once("warn.cut_extra", named, count=len(dropped), limit=most)
        return {**self.row, "extra": text}


def not_stored(size: int) -> str:
    """What a run's ``extra`` keeps of a value left out for its size (``SPECVIZ_STORED_EXTRA_BYTES``):
    data, not a message, the same in every language, so that the stored run does not depend on one."""
    return f"(not stored: {size:,} bytes)"


def floats(arrays: list[Any], scale: float = 1.0) -> np.ndarray:
    """The entries of JSON arrays, one array after another, as floats times ``scale``; NaN where
    an entry is not a finite number ≥ 0 (numeric text is read as :func:`number` reads it).
    Filled straight from the entries: no list of them, no object per entry."""
    entries = itertools.chain.from_iterable
    count = sum(map(len, arrays))
    numbers = None
    if set(map(type, entries(arrays))) <= {int, float}:  # the usual case: one C loop
        try:
            numbers = np.fromiter(entries(arrays), np.float64, count)
        except OverflowError:  # an integer of more than 308 digits: read one by one below
            pass
    if numbers is None:
        numbers = np.fromiter((math.nan if x is None else x for x in map(number, entries(arrays))),
                              np.float64, count)
    with np.errstate(over="ignore", invalid="ignore"):  # 1e308 s in ms is inf, refused just below
        numbers *= scale
    numbers[~(np.isfinite(numbers) & (numbers >= 0))] = np.nan
    return numbers


def request_column(values: Any, n: int, scale: float = 1.0, most: float = math.inf) -> np.ndarray:
    """``n`` per-request values from a JSON array (NaN past its end, or for all if it is none), NaN
    too where a value is past ``most``."""
    column = np.full(n, np.nan)
    if isinstance(values, list):
        head = values[:n]
        column[:len(head)] = floats([head], scale)
    column[column > most] = np.nan
    return column


def find_key(obj: Any, key: str) -> Any:
    """First non-null value under ``key`` anywhere in nested dicts, depth first (genai-perf moved
    its config keys); iterative, so that no nesting depth can exhaust the stack."""
    stack = [obj]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get(key) is not None:
                return node[key]
            stack.extend(v for v in reversed(node.values()) if isinstance(v, dict))
    return None


