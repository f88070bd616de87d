"""Benchmark result files into canonical run rows: formats detected by content, not by name.

Formats: ``vllm-bench`` (``vllm bench serve --save-result`` / ``benchmark_serving.py``, one JSON
object or JSON lines), ``guidellm`` (benchmarks JSON, schema of GuideLLM 0.2-0.3), ``genai-perf``
(``profile_export_genai_perf.csv`` and ``.json``), ``llmperf`` (``*_summary.json``) and ``csv`` (a
user's own table; handled by :mod:`specviz.store` with DuckDB, through :data:`CSV_SYNONYMS`).

Every parser returns :class:`Parsed`: canonical run dicts (keys from :data:`RUN_COLUMNS`; times in
ms, acceptance as a fraction) plus ``extra``, the JSON text of every source field that has no
column, and warnings. A file that cannot be read raises :class:`IngestError` naming the file.

Memory stays bounded whatever the content: before a JSON document (or a genai-perf CSV) is decoded,
the memory its Python objects would take is estimated from a histogram of its bytes and the file
is refused above ``SPECVIZ_IMPORT_MEMORY_BYTES``; per-request arrays become numpy columns.
"""

from __future__ import annotations

import codecs
import csv
import itertools
import json
import math
import re
import reprlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import pandas as pd

from . import settings

__all__ = [
    "IngestError",
    "UnrecognisedColumnsError",
    "as_ingest_error",
    "Parsed",
    "RUN_COLUMNS",
    "LATENCY_METRICS",
    "FORMATS",
    "CSV_SYNONYMS",
    "detect_format",
    "parse",
    "normalise_name",
    "csv_header",
]

LATENCY_METRICS = ("ttft", "itl", "tpot", "e2el")
_STATS = ("mean", "p50", "p90", "p99")

# Canonical run columns and their DuckDB types (the store creates the table from this).
RUN_COLUMNS: dict[str, str] = {
    "run_id": "VARCHAR", "source_file": "VARCHAR", "source_format": "VARCHAR",
    "imported_at": "TIMESTAMP", "content_hash": "VARCHAR", "label": "VARCHAR", "workload": "VARCHAR",
    "engine": "VARCHAR", "engine_version": "VARCHAR", "target_model": "VARCHAR", "draft_model": "VARCHAR",
    "spec_method": "VARCHAR", "num_speculative_tokens": "INTEGER", "gpu": "VARCHAR",
    "temperature": "DOUBLE", "concurrency": "DOUBLE", "request_rate": "DOUBLE",
    "num_requests": "BIGINT", "failed_requests": "BIGINT", "duration_s": "DOUBLE",
    "request_throughput": "DOUBLE", "output_throughput": "DOUBLE", "total_token_throughput": "DOUBLE",
    **{f"{s}_{m}_ms": "DOUBLE" for m in LATENCY_METRICS for s in _STATS},
    "acceptance_rate": "DOUBLE", "acceptance_length": "DOUBLE", "per_position_acceptance": "DOUBLE[]",
    "zero_accept_rate": "DOUBLE", "extra": "JSON",
}
_TEXT = {k for k, v in RUN_COLUMNS.items() if v == "VARCHAR"}
_INTEGER = {k for k, v in RUN_COLUMNS.items() if v in ("INTEGER", "BIGINT")}
_MAX_EXACT_INT = 2**53

FORMATS = ("vllm-bench", "guidellm", "genai-perf", "llmperf", "csv")


class IngestError(ValueError):
    """A file that cannot be imported; the message names the file and says what was expected."""

    def __init__(self, file: str, message: str) -> None:
        super().__init__(f"{file}: {message}")
        self.file = file


class UnrecognisedColumnsError(IngestError):
    """A CSV none of whose columns names a result; ``columns`` are its column names as read, for
    a mapping step."""

    def __init__(self, file: str, message: str, columns: list[str]) -> None:
        super().__init__(file, message)
        self.columns = columns


def as_ingest_error(name: str, exc: Exception) -> IngestError:
    """The error of file ``name`` for any exception raised while reading it, in plain words.

    Parameters
    ----------
    name : str
        The file's name as the user gave it.
    exc : Exception
        What reading it raised; an :class:`IngestError` is returned unchanged.

    Returns
    -------
    IngestError
        Naming the file and saying what was wrong.
    """
    if isinstance(exc, IngestError):
        return exc
    if isinstance(exc, OSError):
        return IngestError(name, f"it cannot be read ({exc.strerror or exc})")
    if isinstance(exc, RecursionError):
        return IngestError(name, "its data is nested too deeply to read (more than about 1,000 levels)")
    if isinstance(exc, MemoryError):
        return IngestError(name, "reading it needs more memory than this machine has free")
    if isinstance(exc, OverflowError):
        return IngestError(name, "it holds a number too large to handle")
    if isinstance(exc, UnicodeEncodeError):  # JSON may escape half a character: "\\ud800"
        return IngestError(name, "it holds text that is not valid Unicode (such as a lone \\ud800 escape)")
    if isinstance(exc, UnicodeError):
        return IngestError(name, "it is not valid UTF-8 text; expected JSON, JSON lines or CSV")
    detail = (str(exc).splitlines() or [""])[0][:200]
    return IngestError(name, f"it could not be imported ({type(exc).__name__}: {detail})")


@dataclass
class Parsed:
    """What one file holds: its format, canonical runs, per-request rows and warnings.

    ``requests`` has the columns ``run_index`` (the position of its run in ``runs``), ``ttft_ms``,
    ``itl_ms``, ``input_tokens`` and ``output_tokens`` (NaN where unknown), or none at all.
    """

    format: str
    runs: list[dict[str, Any]]
    requests: pd.DataFrame = field(default_factory=pd.DataFrame)
    warnings: list[str] = field(default_factory=list)


def normalise_name(name: str) -> str:
    """Column or key name → lower snake case: ``"TTFT (ms)"`` → ``"ttft_ms"``."""
    return re.sub(r"[^0-9a-z]+", "_", name.strip().lower()).strip("_")


def _dig(obj: Any, *keys: str) -> dict[str, Any]:
    """The object at ``obj[k1][k2]…``, or {} where a step is missing or not an object."""
    for key in keys:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj if isinstance(obj, dict) else {}


def _number(value: Any) -> float | None:
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


# Warnings quote a value in at most 40 characters; reprlib never renders a large or deep value whole.
_PREVIEW = reprlib.Repr()
_PREVIEW.maxlevel, _PREVIEW.maxlist, _PREVIEW.maxdict, _PREVIEW.maxlong = 2, 4, 4, 40


def _preview(value: Any) -> str:
    return (value if isinstance(value, str) else _PREVIEW.repr(value))[:40]


# A JSON string (skipped as it is) or a bare non-finite number token as json.dumps writes them.
_NON_FINITE = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')
# Half a character: JSON may write one ("\ud800"), and json.loads keeps it, but it is not Unicode
# and cannot be stored (json.loads joins the halves of a whole character into one).
_SURROGATE = re.compile("[\ud800-\udfff]")


def _storable(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def _extra_json(extra: dict[str, Any]) -> str:
    """``extra`` as compact JSON text that DuckDB's JSON type accepts: Python writes non-finite
    floats as bare ``NaN``/``Infinity``, which is not JSON (SGLang writes ``"request_rate":
    Infinity``), so they become the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``; half
    characters become U+FFFD."""
    try:
        text = json.dumps(extra, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:  # a non-finite float somewhere: quote those tokens, outside strings only
        text = json.dumps(extra, separators=(",", ":"), ensure_ascii=False)
        text = _NON_FINITE.sub(lambda m: f'"{m[1]}"' if m[1] else m[0], text)
    return _storable(text)


class _RunBuilder:
    """Collects one run's canonical fields, checks each value, keeps the rest in ``extra``."""

    def __init__(self, warnings: list[str]) -> None:
        self.row: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}
        self.warnings = warnings

    def set(self, column: str, value: Any, scale: float = 1.0, source: str | None = None) -> None:
        if value is None:
            return
        source = source or column
        if column in _TEXT:
            if isinstance(value, (str, int, float)):
                self.row[column] = _storable(str(value))
            else:  # a list or object would be rendered whole, however large or deep
                self._reject(source, value, "a text value")
            return
        if column == "per_position_acceptance":
            rates = [_number(v) for v in value] if isinstance(value, list) else None
            if rates is None or any(r is None or not 0 <= r <= 1 for r in rates):
                self._reject(source, value, "a list of fractions between 0 and 1")
            else:
                self.row[column] = rates
            return
        number = _number(value)
        number = None if number is None else number * scale  # 1e308 s in ms is no longer finite
        if number is None or (math.isinf(number) and column != "request_rate"):
            self._reject(source, value, "a finite number")
        elif number < 0:
            self._reject(source, value, "a number ≥ 0")
        elif column in _INTEGER and (number != int(number) or number >= _MAX_EXACT_INT):
            self._reject(source, value, "a whole number")
        elif column in ("acceptance_rate", "zero_accept_rate") and number > 1:
            self._reject(source, value, "a fraction between 0 and 1")
        else:
            self.row[column] = int(number) if column in _INTEGER else number

    def _reject(self, source: str, value: Any, expected: str) -> None:
        self.warnings.append(_storable(f"'{source}' = {_preview(value)!r} is not {expected}; kept in extra only"))
        self.extra[source] = value

    def keep(self, key: str, value: Any) -> None:
        self.extra[key] = value

    def build(self) -> dict[str, Any]:
        """The run, with ``extra`` as JSON text: the source's objects need not outlive parsing."""
        return {**self.row, "extra": _extra_json(self.extra)}


# ---------------------------------------------------------------------------------------- vLLM
_VLLM_STAT = {"mean": "mean", "median": "p50", "p50": "p50", "p90": "p90", "p99": "p99"}
_VLLM_FIELDS = {
    "backend": "engine", "endpoint_type": "engine", "label": "label", "model_id": "target_model",
    "num_prompts": None, "request_rate": "request_rate", "max_concurrency": "concurrency",
    "duration": "duration_s", "completed": "num_requests", "failed": "failed_requests",
    "request_throughput": "request_throughput", "output_throughput": "output_throughput",
    "total_token_throughput": "total_token_throughput",
    "spec_decode_acceptance_length": "acceptance_length",
    "spec_decode_per_position_acceptance_rates": "per_position_acceptance",
    # common --metadata keys (the user chooses them; these names are the obvious ones)
    "gpu": "gpu", "workload": "workload", "temperature": "temperature", "draft_model": "draft_model",
    "spec_method": "spec_method", "num_speculative_tokens": "num_speculative_tokens",
    "engine_version": "engine_version", "vllm_version": "engine_version",
}
_VLLM_MARKERS = {"request_throughput", "output_throughput", "mean_ttft_ms", "completed"}
_VLLM_DETAIL = {"ttfts", "itls", "input_lens", "output_lens", "generated_texts", "errors", "start_times"}


def _vllm_run(obj: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    run = _RunBuilder(warnings)
    for key, value in obj.items():
        match = re.fullmatch(r"(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)_ms", key)
        if match and match.group(1) in _VLLM_STAT and value is not None:
            run.set(f"{_VLLM_STAT[match.group(1)]}_{match.group(2)}_ms", value, source=key)
            continue
        if key == "spec_decode_acceptance_rate" and value is not None:
            run.set("acceptance_rate", value, scale=0.01, source=key)  # vLLM writes a percentage
            continue
        if key in _VLLM_DETAIL:
            continue
        column = _VLLM_FIELDS.get(key)
        if column and value is not None:
            run.set(column, value, source=key)
        if not column or value is None:
            run.keep(key, value)
    if run.row.get("per_position_acceptance") and "num_speculative_tokens" not in run.row:
        run.set("num_speculative_tokens", len(run.row["per_position_acceptance"]))
    return run.build()


def _floats(arrays: list[Any], scale: float = 1.0) -> np.ndarray:
    """The entries of JSON arrays, one array after another, as floats times ``scale``; NaN where
    an entry is not a finite number ≥ 0 (numeric text is read as :func:`_number` reads it).
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
        numbers = np.fromiter((math.nan if x is None else x for x in map(_number, entries(arrays))),
                              np.float64, count)
    with np.errstate(over="ignore", invalid="ignore"):  # 1e308 s in ms is inf, refused just below
        numbers *= scale
    numbers[~(np.isfinite(numbers) & (numbers >= 0))] = np.nan
    return numbers


def _request_column(values: Any, n: int, scale: float = 1.0) -> np.ndarray:
    """``n`` per-request values from a JSON array (NaN past its end, or for all if it is none)."""
    column = np.full(n, np.nan)
    if isinstance(values, list):
        head = values[:n]
        column[:len(head)] = _floats([head], scale)
    return column


def _vllm_requests(obj: dict[str, Any], run_index: int) -> pd.DataFrame | None:
    """Per-request rows from ``--save-detailed`` arrays (``ttfts`` in seconds, ``itls`` a list of
    per-token gaps in seconds for each request), built column by column: a few numbers per token
    and per request, and no Python object for either."""
    ttfts = obj.get("ttfts")
    if not isinstance(ttfts, list):
        return None
    n = len(ttfts)
    itls = obj.get("itls") if isinstance(obj.get("itls"), list) else []
    per_request = [x if isinstance(x, list) else () for x in itertools.islice(itls, n)]
    lengths = np.fromiter(map(len, per_request), np.int64, len(per_request))
    gaps = _floats(per_request, 1e3)
    valid = ~np.isnan(gaps)
    gaps[~valid] = 0.0
    # Sums over each request's slice; reduceat needs the slices that are not empty.
    has_gaps = lengths > 0
    starts = (np.cumsum(lengths) - lengths)[has_gaps]
    itl_ms = np.full(n, np.nan)
    if starts.size:
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # 0/0: no valid gap
            itl_ms[:len(per_request)][has_gaps] = (np.add.reduceat(gaps, starts)
                                                   / np.add.reduceat(valid, starts, dtype=np.int64))
    itl_ms[~np.isfinite(itl_ms)] = np.nan
    return pd.DataFrame({"run_index": np.full(n, run_index), "ttft_ms": _request_column(ttfts, n, 1e3),
                         "itl_ms": itl_ms, "input_tokens": _request_column(obj.get("input_lens"), n),
                         "output_tokens": _request_column(obj.get("output_lens"), n)})


def _parse_vllm(objects: list[Any], name: str) -> Parsed:
    warnings: list[str] = []
    runs, frames = [], []
    for index, obj in enumerate(objects):
        if not isinstance(obj, dict) or not (_VLLM_MARKERS & obj.keys()):
            raise IngestError(name, f"record {index + 1} is not a vllm bench result (no throughput or latency keys)")
        runs.append(_vllm_run(obj, warnings))
        frame = _vllm_requests(obj, index)
        if frame is not None:
            frames.append(frame)
    requests = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if frames and requests.ttft_ms.isna().any():
        warnings.append("some per-request TTFTs were missing or negative and were left empty")
    return Parsed("vllm-bench", runs, requests, warnings)


# ------------------------------------------------------------------------------------ GuideLLM
_GUIDELLM_LATENCY = {"time_to_first_token_ms": ("ttft", 1.0), "inter_token_latency_ms": ("itl", 1.0),
                     "time_per_output_token_ms": ("tpot", 1.0), "request_latency": ("e2el", 1e3)}


def _parse_guidellm(doc: dict[str, Any], name: str) -> Parsed:
    warnings: list[str] = []
    runs = []
    for index, bench in enumerate(doc["benchmarks"]):
        metrics = bench.get("metrics") if isinstance(bench, dict) else None
        if not isinstance(metrics, dict) or not all(
                isinstance(v, dict) and "successful" in v for v in metrics.values()):
            raise IngestError(name, "this GuideLLM benchmarks file has a schema other than 0.2-0.3 "
                                    "(metrics split into successful/errored/incomplete/total); "
                                    "newer schemas are not supported yet")
        run = _RunBuilder(warnings)
        ok = lambda metric: _dig(metrics, metric, "successful")
        strategy = _dig(bench, "args", "strategy")
        kind = strategy.get("type_")
        label = [v for v in (kind, strategy.get("rate") or strategy.get("streams")) if isinstance(v, (str, int, float))]
        run.set("label", " ".join(map(str, label)) or None)
        if kind == "synchronous":
            run.set("concurrency", 1)
        elif kind == "concurrent":
            run.set("concurrency", strategy.get("streams"), source="strategy.streams")
        if kind in ("constant", "poisson"):
            run.set("request_rate", strategy.get("rate"), source="strategy.rate")
        worker = _dig(bench, "worker")
        run.set("target_model", worker.get("backend_model"))
        run.set("engine", worker.get("backend_type"))
        totals = _dig(bench, "request_totals")
        run.set("num_requests", totals.get("successful"), source="request_totals.successful")
        run.set("failed_requests", totals.get("errored"), source="request_totals.errored")
        run.set("duration_s", bench.get("duration"), source="duration")
        run.set("request_throughput", ok("requests_per_second").get("mean"), source="requests_per_second")
        run.set("output_throughput", ok("output_tokens_per_second").get("mean"), source="output_tokens_per_second")
        run.set("total_token_throughput", ok("tokens_per_second").get("mean"), source="tokens_per_second")
        for metric, (short, scale) in _GUIDELLM_LATENCY.items():
            dist = ok(metric)
            pct = _dig(dist, "percentiles")
            for stat, value in (("mean", dist.get("mean")), ("p50", dist.get("median")),
                                ("p90", pct.get("p90")), ("p99", pct.get("p99"))):
                run.set(f"{stat}_{short}_ms", value, scale=scale, source=f"{metric}.{stat}")
        run.keep("measured_concurrency", ok("request_concurrency").get("mean"))
        run.keep("run_id", bench.get("run_id"))
        run.keep("benchmark_id", bench.get("id_"))
        run.keep("request_loader", bench.get("request_loader"))
        runs.append(run.build())
    return Parsed("guidellm", runs, warnings=warnings)


# ----------------------------------------------------------------------------------- genai-perf
_GENAI_METRICS = {"time_to_first_token": "ttft", "inter_token_latency": "itl", "request_latency": "e2el"}
_GENAI_STATS = {"avg": "mean", "p50": "p50", "p90": "p90", "p99": "p99"}


def _genai_run(metrics: dict[str, dict[str, Any]], scalars: dict[str, Any], config: Any,
               warnings: list[str]) -> dict[str, Any]:
    run = _RunBuilder(warnings)
    for key, stats in metrics.items():
        short = _GENAI_METRICS.get(key)
        if short:
            for stat, canonical in _GENAI_STATS.items():
                run.set(f"{canonical}_{short}_ms", stats.get(stat), source=f"{key}.{stat}")
        run.keep(key, stats)
    run.set("output_throughput", scalars.get("output_token_throughput"), source="output_token_throughput")
    run.set("request_throughput", scalars.get("request_throughput"), source="request_throughput")
    run.set("num_requests", scalars.get("request_count"), source="request_count")
    for key, value in scalars.items():
        run.keep(key, value)
    if config is not None:
        run.keep("input_config", config)
        concurrency = _find_key(config, "concurrency")
        run.set("concurrency", concurrency, source="input_config.concurrency")
        model = _find_key(config, "model") or _find_key(config, "model_names")
        run.set("target_model", model[0] if isinstance(model, list) and model else model)
    return run.build()


def _find_key(obj: Any, key: str) -> Any:
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


def _parse_genai_csv(text: str, name: str, estimate: int = 0) -> Parsed:
    """``estimate``: the memory already charged for the file; each metric row adds what keeping
    it in ``extra`` under its block's header names costs, checked as the rows are read."""
    warnings: list[str] = []
    metrics: dict[str, dict[str, Any]] = {}
    scalars: dict[str, Any] = {}
    header: list[str] | None = None  # of the current block; a blank line ends a block
    header_bytes = 0
    cap = settings.get("SPECVIZ_IMPORT_MEMORY_BYTES")
    try:
        for row in _csv_rows(text):
            if not any(cell.strip() for cell in row):
                header = None
            elif header is None:
                header = [normalise_name(h) for h in row]
                header_bytes = sum(len(h.encode("utf-8", "surrogatepass")) + 4 for h in header)
                if header[0] != "metric":
                    warnings.append(f"a block starting {_preview(row[:2])} is not a genai-perf table and was skipped")
            elif header[:2] == ["metric", "value"]:
                if len(row) >= 2:
                    scalars[_genai_metric_name(row[0])] = _number(row[1])
            elif header[0] == "metric":
                estimate += _GENAI_EXTRA_FACTOR * header_bytes
                if estimate > cap:
                    _check_memory(name, estimate)
                metrics[_genai_metric_name(row[0])] = {h: _number(v) for h, v in zip(header[1:], row[1:])}
    except csv.Error as exc:  # a field over csv's 128 KiB limit, a stray quote
        raise IngestError(name, f"the genai-perf CSV is malformed ({exc})") from None
    _check_memory(name, estimate)
    if not metrics and not scalars:
        raise IngestError(name, "no genai-perf metric table found (expected a 'Metric,avg,…' block)")
    return Parsed("genai-perf", [_genai_run(metrics, scalars, None, warnings)], warnings=warnings)


# A line with its end (\r\n, \n or a lone \r, as a file opened with newline="" splits), or a last
# line without one; never empty.
_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


def _csv_rows(text: str) -> Iterator[list[str]]:
    """The rows of CSV text, fed to the reader line by line from the text itself (``io.StringIO``
    would hold a copy of it at four bytes a character)."""
    return csv.reader(m.group() for m in _LINE.finditer(text))


def _genai_metric_name(label: str) -> str:
    """``"Time To First Token (ms)"`` → ``"time_to_first_token"`` (units in brackets dropped)."""
    return normalise_name(re.sub(r"\(.*?\)", "", label))


def _parse_genai_json(doc: dict[str, Any], name: str) -> Parsed:
    warnings: list[str] = []
    metrics, scalars = {}, {}
    for key, value in doc.items():
        if isinstance(value, dict) and "unit" in value:
            if "avg" in value and len(value) <= 3 and key.endswith(("throughput", "count")):
                scalars[key] = value.get("avg")
            else:
                metrics[key] = value
    return Parsed("genai-perf", [_genai_run(metrics, scalars, doc.get("input_config"), warnings)],
                  warnings=warnings)


# -------------------------------------------------------------------------------------- llmperf
_LLMPERF_LATENCY = {"ttft": "ttft", "inter_token_latency": "itl", "end_to_end_latency": "e2el"}


def _parse_llmperf(doc: dict[str, Any], name: str) -> Parsed:
    warnings: list[str] = []
    run = _RunBuilder(warnings)
    run.set("label", doc.get("name"))
    run.set("target_model", doc.get("model"))
    run.set("concurrency", doc.get("num_concurrent_requests"), source="num_concurrent_requests")
    run.set("num_requests", doc.get("results_num_completed_requests"), source="results_num_completed_requests")
    run.set("failed_requests", doc.get("results_number_errors"), source="results_number_errors")
    run.set("output_throughput", doc.get("results_mean_output_throughput_token_per_s"),
            source="results_mean_output_throughput_token_per_s")
    per_min = _number(doc.get("results_num_completed_requests_per_min"))
    if per_min is not None:
        run.set("request_throughput", per_min / 60, source="results_num_completed_requests_per_min")
    for key, short in _LLMPERF_LATENCY.items():
        for stat, suffix in (("mean", "mean"), ("p50", "quantiles_p50"), ("p90", "quantiles_p90"),
                             ("p99", "quantiles_p99")):
            source = f"results_{key}_s_{suffix}"
            run.set(f"{stat}_{short}_ms", doc.get(source), scale=1e3, source=source)  # seconds → ms
    for key, value in doc.items():
        run.keep(key, value)
    return Parsed("llmperf", [run.build()], warnings=warnings)


# ------------------------------------------------------------------------------------ detection
# Memory that decoding costs, estimated from how often each byte occurs before anything is decoded.
# json.loads, measured with tracemalloc on CPython 3.11 over arrays of 1M elements of one shape
# (the text itself not counted), per element: [] 64 B, {} 72 B, [0] 96 B, {"":0} 192 B,
# {"":[]} 248 B, {"":{}} 256 B, an int above 256 36 B, a float 32 B, "ab" 59 B, "ĉ" 85 B,
# a distinct key with its value 115-160 B (dicts double as they grow).
# Charging each '{' a dict, each '[' a list, each ',' and ':' an element and each '"' half a
# string header covers every one of them (tests/test_ingest.py checks each against tracemalloc).
_DICT_BYTES, _LIST_BYTES, _ELEMENT_BYTES, _QUOTE_BYTES = 96, 56, 48, 32
# Building and storing one run (its dict, the store's row), beyond what the other charges cover,
# measured with ru_maxrss over a whole import: 970 B a run for 600,000 minimal vllm records
# ({"completed":1} a line), 1.8 KB for 100,000 of nerdalert's full records.
_RUN_BYTES = 4096
# genai-perf's CSV through csv and _parse_genai_csv, measured the same way: 1M rows "x000001,1"
# (a distinct metric each) took 473 B a row all told, one metric row of 1M fields 138 B a field.
_CSV_ROW_BYTES, _CSV_FIELD_BYTES = 400, 100
# A user's CSV, read by the store's DuckDB (rows staged, or inserted as runs), measured with
# ru_maxrss: 10M rows of one column held 73 B a row, 2.45M rows of eight columns 208 B a row.
_DUCKDB_ROW_BYTES, _DUCKDB_CELL_BYTES = 100, 32
# A user's CSV keeps each row's unknown columns in ``extra``, as DuckDB's
# to_json(struct_pack(...)): every row repeats their names. The text is bounded by, per row, the
# names' bytes and _EXTRA_CELL_CHARS a cell (quotes, colon, comma, null or a number's digits), plus
# the file's text, escaped (its values); measured with VmHWM, building and storing it took up to
# 4.9x that text beyond the other charges (3,000 rows of 999 unknown 60-character columns staged per
# request: 1.1 to 1.4 GB from one run to the next; 30,000 rows: 6.6 GB, 4.3 GB as runs).
_EXTRA_CELL_CHARS, _DUCKDB_EXTRA_FACTOR = 24, 7
# DuckDB's buffers for each column, whatever the rows: 1,000 columns of 3 rows took 70 MB.
_DUCKDB_COLUMN_BYTES = 100_000
# Reading a header line: its text at up to 4 bytes a character, and the fields split from it.
_HEADER_BYTES_PER_BYTE = 12
# genai-perf's CSV keeps each metric row in ``extra`` under its block's header names, so a long
# header is repeated in every row: measured with VmHWM, parsing and storing took up to 8.2x the
# header bytes a row (10 to 300 rows under 1,000 names of 1,000 characters), and one row under
# 10,000 names of 180 characters (1.8 MB) 25 MB all told: 12x the header a row bounds both.
_GENAI_EXTRA_FACTOR = 12
# Storing ``extra``: DuckDB parses each JSON text to check it; with ru_maxrss, a 10 MB extra held
# 45 B per value for [0,0,…], 37 B for [[],[],…] and ["ab","ab",…] (values counted by ',' and ':').
_STORED_VALUE_BYTES = 48


def _byte_histogram(data: bytes) -> np.ndarray:
    """How often each byte value occurs in ``data`` (256 counts), counted 1 MiB at a time so that
    the integer copy numpy's bincount makes stays small."""
    view = np.frombuffer(data, dtype=np.uint8)
    counts = np.zeros(256, dtype=np.int64)
    for start in range(0, len(view), 1 << 20):
        counts += np.bincount(view[start:start + (1 << 20)], minlength=256)
    return counts


def _characters(counts: np.ndarray) -> int:
    """Characters of UTF-8 text with this byte histogram (continuation bytes 0x80-0xBF start none)."""
    return int(counts.sum() - counts[0x80:0xC0].sum())


def _width(counts: np.ndarray) -> int:
    """Bytes a character takes in the str that decoding UTF-8 text with this byte histogram makes:
    1, 2 or 4 by the widest character (lead bytes from 0xC4 start characters above U+00FF, from
    0xF0 characters above U+FFFF)."""
    return 4 if counts[0xF0:].any() else 2 if counts[0xC4:0xF0].any() else 1


def _escaped_width(data: bytes) -> int:
    """The same for the widest character a \\uXXXX escape in JSON text writes: 4 for a surrogate
    (half of a character above U+FFFF), 2 above U+00FF, else 1. One such escape makes its whole
    string that wide, however plain its other characters (an escaped backslash before a u only
    overcounts)."""
    if b"\\u" not in data:
        return 1
    if any(data.count(b"\\u" + bytes(p)) for p in itertools.product(b"dD", b"89aAbB")):
        return 4
    return 1 if data.count(b"\\u00") == data.count(b"\\u") else 2


def _lines(counts: np.ndarray) -> int:
    """Lines of a text with this byte histogram, whether they end in \\n, \\r\\n or \\r."""
    return int(max(counts[ord("\n")], counts[ord("\r")]))


def _json_memory(data: bytes, counts: np.ndarray) -> int:
    """Upper estimate of the memory json.loads needs for ``data`` (``counts``, its byte histogram):
    the decoded text, the contents of its strings and the objects."""
    characters, width = _characters(counts), _width(counts)
    escaped = _escaped_width(data)
    # Contents: at most every character, as wide as an escape makes its string. json builds a
    # string that has escapes in a buffer up to 1.25x its size, copied once more where an escape
    # widens it; measured on one 2M-character string: 2.25x, 4.75x and 7.25x the text.
    contents = characters * (max(width, escaped) + (width if escaped > width else 0))
    if counts[ord("\\")]:
        contents = contents * 4 // 3
    return int(characters * width + contents
               + _DICT_BYTES * counts[ord("{")] + _LIST_BYTES * counts[ord("[")]
               + _ELEMENT_BYTES * (counts[ord(",")] + counts[ord(":")]) + _QUOTE_BYTES * counts[ord('"')])


def _check_memory(name: str, needed: int) -> None:
    cap = settings.get("SPECVIZ_IMPORT_MEMORY_BYTES")
    if needed > cap:
        raise IngestError(name, f"reading it would take about {needed / 1e6:,.0f} MB of memory, over the "
                                f"{cap / 1e6:,.0f} MB limit (SPECVIZ_IMPORT_MEMORY_BYTES): its content is "
                                "far denser than a benchmark result's")


_BLANK = re.compile(r"[ \t\n\r]*")


def _json_documents(name: str, text: str) -> Iterator[Any]:
    """The documents of JSON text: one, or JSON lines (one after another), decoded as they are read.

    Raises
    ------
    IngestError
        If the JSON is malformed, nested too deeply or holds an integer of more than 4,300 digits
        (both refused by Python's json).
    """
    decoder = json.JSONDecoder()
    end = _BLANK.match(text).end()
    while True:
        try:
            doc, end = decoder.raw_decode(text, end)
        except json.JSONDecodeError:
            raise IngestError(name, "the JSON is malformed or truncated") from None
        except ValueError:  # the only other ValueError of json: an integer over 4,300 digits
            raise IngestError(name, "it holds an integer of more than 4,300 digits") from None
        except RecursionError as exc:
            raise as_ingest_error(name, exc) from None
        yield doc
        end = _BLANK.match(text, end).end()
        if end == len(text):
            return


_HEAD_BYTES = 65536  # enough to tell the formats apart; a large CSV is not decoded here in full


def _head_text(name: str, data: bytes) -> str:
    """The first 64 KiB as text, once the checks every file passes are done.

    Raises
    ------
    IngestError
        If the file is empty, binary, UTF-16/32 or not UTF-8.
    """
    head = data[:_HEAD_BYTES]
    if not head.strip() and not data.strip():
        raise IngestError(name, "the file is empty")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # a UTF-32 BOM starts the same
        raise IngestError(name, "the file is UTF-16 or UTF-32 text; save it as UTF-8")
    if b"\x00" in head:
        raise IngestError(name, "this is a binary file; expected JSON, JSON lines or CSV text")
    try:  # a character may straddle the cut: the incremental decoder keeps its start back
        return codecs.getincrementaldecoder("utf-8-sig")().decode(head, final=len(data) <= _HEAD_BYTES)
    except UnicodeDecodeError:
        raise IngestError(name, "the file is not UTF-8 text; expected JSON, JSON lines or CSV") from None


def _decode(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise IngestError(name, "the file is not UTF-8 text; expected JSON, JSON lines or CSV") from None


def _json_format(doc: Any) -> str | None:
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("benchmarks"), list):
        return "guidellm"
    if any(k.startswith("results_") for k in doc) and "num_concurrent_requests" in doc:
        return "llmperf"
    # genai-perf also has a request_throughput key, but as an object with a unit: test it first.
    if any(isinstance(v, dict) and "unit" in v for v in doc.values()):
        return "genai-perf"
    if _VLLM_MARKERS & doc.keys():
        return "vllm-bench"
    return None


def _sniff(name: str, data: bytes) -> tuple[str, list[Any] | None, int]:
    """The format; for JSON the documents (decoded once, within the memory limit) and the memory
    estimated for them and the runs they make."""
    stripped = _head_text(name, data).lstrip()
    if stripped[:1] not in "{[":
        first_line = stripped.split("\n", 1)[0]
        return ("genai-perf" if normalise_name(first_line.split(",")[0]) == "metric" else "csv"), None, 0
    estimate = _json_memory(data, _byte_histogram(data))
    _check_memory(name, estimate)
    docs: list[Any] = []
    formats: set[str | None] = set()
    for doc in _json_documents(name, _decode(name, data)):
        formats.add(_json_format(doc))
        if None in formats or len(formats) > 1:  # stop at the first record of another shape
            raise IngestError(name, "JSON of an unknown shape: expected a vllm bench result "
                                    "(request_throughput, mean_ttft_ms …), GuideLLM's {\"benchmarks\": […]}, "
                                    "llmperf's *_summary.json or genai-perf's profile_export_genai_perf.json")
        docs.append(doc)
    fmt = formats.pop()
    # Before the runs are built: a run costs more than its few bytes of JSON.
    estimate += _RUN_BYTES * (len(docs[0]["benchmarks"]) if fmt == "guidellm" else len(docs))
    _check_memory(name, estimate)
    return fmt, docs, estimate


def detect_format(name: str, data: bytes) -> str:
    """The format of a result file, from its content (see :data:`FORMATS`).

    JSON is parsed whole; for CSV only the first 64 KiB are looked at (DuckDB checks the rest as
    it reads).

    Raises
    ------
    IngestError
        If the file is empty, binary, not UTF-8, JSON of no known tool, or JSON whose decoding
        would take more memory than ``SPECVIZ_IMPORT_MEMORY_BYTES``.
    """
    return _sniff(name, data)[0]


def parse(name: str, data: bytes) -> Parsed:
    """Parse a result file; JSON is decoded once.

    Returns
    -------
    Parsed
        The runs; for a user's own CSV (format ``csv``) none: its rows are read by the store's
        DuckDB path (:meth:`specviz.store.Store.import_file`).

    Raises
    ------
    IngestError
        If the file is not one of the formats, of the right format but the wrong shape, or would
        take more memory than ``SPECVIZ_IMPORT_MEMORY_BYTES`` to read.
    """
    fmt, docs, estimate = _sniff(name, data)
    if fmt == "csv":
        counts = _byte_histogram(data)
        rows = _lines(counts) + 1
        estimate = int(_DUCKDB_ROW_BYTES * rows + _DUCKDB_CELL_BYTES * counts[ord(",")])
        # The header line is read whole below (to count its columns): its text and fields first.
        _check_memory(name, estimate + _HEADER_BYTES_PER_BYTE * _header_line_bytes(data))
        header = csv_header(name, data)
        most = settings.get("SPECVIZ_IMPORT_MAX_COLUMNS")
        if len(header) > most:
            raise IngestError(name, f"the CSV has more than {most:,} columns, the most that are read "
                                    "(SPECVIZ_IMPORT_MAX_COLUMNS)")
        estimate += _DUCKDB_COLUMN_BYTES * len(header)
        unknown = _unknown_columns(header)
        if unknown:
            # Values: the file's text at most, escaped (a quote or backslash doubled, a control
            # character as \\u00XX).
            escapes = int(counts[ord('"')] + counts[ord("\\")] + 5 * (counts[:32].sum() - counts[10] - counts[13]))
            extra_text = (rows * sum(len(c.encode("utf-8", "surrogatepass")) + _EXTRA_CELL_CHARS for c in unknown)
                          + len(data) + escapes)
            estimate += _DUCKDB_EXTRA_FACTOR * extra_text
        _check_memory(name, estimate)
        return Parsed("csv", [])
    parsers: dict[str, Callable[[Any, str], Parsed]] = {
        "guidellm": _parse_guidellm, "llmperf": _parse_llmperf, "genai-perf": _parse_genai_json}
    if docs is None:  # genai-perf's CSV
        counts = _byte_histogram(data)
        # The text and, at most as large, the fields' contents; then the rows and fields kept.
        estimate = (2 * _characters(counts) * _width(counts) + _CSV_ROW_BYTES * _lines(counts)
                    + _CSV_FIELD_BYTES * int(counts[ord(",")]))
        _check_memory(name, estimate)
        parsed = _parse_genai_csv(_decode(name, data), name, estimate)
    elif fmt == "vllm-bench":
        parsed = _parse_vllm(docs, name)
    elif len(docs) != 1:
        raise IngestError(name, f"{fmt} writes one JSON document per file, found {len(docs)}")
    else:
        parsed = parsers[fmt](docs[0], name)
    # The store's DuckDB parses each extra again to check it is JSON.
    _check_memory(name, estimate + _STORED_VALUE_BYTES * sum(
        run["extra"].count(",") + run["extra"].count(":") for run in parsed.runs))
    return parsed


# ------------------------------------------------------------------------------------------ CSV
def csv_header(name: str, data: bytes) -> list[str]:
    """The column names of a CSV file: its first row, read whole (past the first 64 KiB if it is
    longer) and no further, for the page's mapping step and the column limit.

    Raises
    ------
    IngestError
        If the file is empty, binary or not UTF-8, or its header is malformed (a name over
        csv's 128 KiB field limit, a quote never closed).
    """
    _head_text(name, data)  # the checks every file passes
    try:
        return next(csv.reader(_byte_lines(data)), [])
    except UnicodeDecodeError:
        raise IngestError(name, "the file is not UTF-8 text; expected JSON, JSON lines or CSV") from None
    except csv.Error as exc:
        raise IngestError(name, f"the CSV header is malformed ({exc})") from None


_BYTE_LINE = re.compile(rb"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


def _byte_lines(data: bytes) -> Iterator[str]:
    """The lines of ``data`` (as :data:`_LINE` splits text), each decoded only when it is asked for."""
    for index, match in enumerate(_BYTE_LINE.finditer(data)):
        yield match.group().decode("utf-8-sig" if index == 0 else "utf-8")


def _header_line_bytes(data: bytes) -> int:
    """The length in bytes of the first line (to its first \\n or \\r)."""
    ends = [i for i in (data.find(b"\n"), data.find(b"\r")) if i >= 0]
    return min(ends) if ends else len(data)


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


def _synonyms() -> dict[str, tuple[str, float]]:
    """Normalised CSV column name → (canonical column, factor to canonical units)."""
    table: dict[str, tuple[str, float]] = {}

    def add(canonical: str, names: Iterable[str], factor: float = 1.0) -> None:
        for n in names:
            table[normalise_name(n)] = (canonical, factor)

    add("label", ["label", "name", "run", "run_name", "experiment"])
    add("workload", ["workload", "task", "dataset", "task_type"])
    add("engine", ["engine", "backend", "server"])
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
"""CSV column synonyms: names with ``request:`` map to per-request columns of the ``requests`` table."""
