"""Benchmark result files into canonical run rows: formats detected by content, not by name.

Formats: ``vllm-bench`` (``vllm bench serve --save-result`` / ``benchmark_serving.py``, one JSON
object or JSON lines), ``guidellm`` (benchmarks JSON, schema of GuideLLM 0.2-0.3), ``genai-perf``
(``profile_export_genai_perf.csv`` and ``.json``), ``llmperf`` (``*_summary.json``) and ``csv`` (a
user's own table; handled by :mod:`specviz.store` with DuckDB, through :data:`CSV_SYNONYMS`).

Every parser returns :class:`Parsed`: canonical run dicts (keys from :data:`RUN_COLUMNS`; times in
ms, acceptance as a fraction) plus ``extra`` with every source field that has no column, and
warnings. A file that cannot be read raises :class:`IngestError` naming the file.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

__all__ = [
    "IngestError",
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


@dataclass
class Parsed:
    """What one file holds: its format, canonical runs, per-request rows and warnings."""

    format: str
    runs: list[dict[str, Any]]
    requests: list[dict[str, Any]] = field(default_factory=list)
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
    """A finite float from a number or numeric text (thousands separators allowed), else None."""
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
        number = float(value)
        return number if not math.isnan(number) else None
    return None


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
            self.row[column] = str(value)
            return
        if column == "per_position_acceptance":
            rates = [_number(v) for v in value] if isinstance(value, list) else None
            if rates is None or any(r is None or not 0 <= r <= 1 for r in rates):
                self._reject(source, value, "a list of fractions between 0 and 1")
            else:
                self.row[column] = rates
            return
        number = _number(value)
        if number is None or (math.isinf(number) and column != "request_rate"):
            self._reject(source, value, "a finite number")
            return
        number *= scale
        if number < 0:
            self._reject(source, value, "a number ≥ 0")
        elif column in _INTEGER and (number != int(number) or number >= _MAX_EXACT_INT):
            self._reject(source, value, "a whole number")
        elif column in ("acceptance_rate", "zero_accept_rate") and number > 1:
            self._reject(source, value, "a fraction between 0 and 1")
        else:
            self.row[column] = int(number) if column in _INTEGER else number

    def _reject(self, source: str, value: Any, expected: str) -> None:
        self.warnings.append(f"'{source}' = {str(value)[:40]!r} is not {expected}; kept in extra only")
        self.extra[source] = value

    def keep(self, key: str, value: Any) -> None:
        self.extra[key] = value

    def build(self) -> dict[str, Any]:
        return {**self.row, "extra": self.extra}


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


def _vllm_run(obj: dict[str, Any], warnings: list[str], requests: list[dict[str, Any]],
              run_index: int) -> dict[str, Any]:
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
    _vllm_requests(obj, run_index, requests, warnings)
    return run.build()


def _vllm_requests(obj: dict[str, Any], run_index: int, requests: list[dict[str, Any]],
                   warnings: list[str]) -> None:
    """Per-request rows from ``--save-detailed`` arrays (ttfts in seconds, itls per token)."""
    ttfts = obj.get("ttfts")
    if not isinstance(ttfts, list):
        return
    lists = {k: obj.get(k) if isinstance(obj.get(k), list) else [] for k in ("itls", "input_lens", "output_lens")}
    for i, ttft in enumerate(ttfts):
        itls = lists["itls"][i] if i < len(lists["itls"]) and isinstance(lists["itls"][i], list) else []
        gaps = [g for g in (_number(x) for x in itls) if g is not None]
        first = _number(ttft)
        requests.append({
            "run_index": run_index,
            "ttft_ms": first * 1e3 if first is not None and first >= 0 else None,
            "itl_ms": 1e3 * sum(gaps) / len(gaps) if gaps else None,
            "input_tokens": _number(lists["input_lens"][i]) if i < len(lists["input_lens"]) else None,
            "output_tokens": _number(lists["output_lens"][i]) if i < len(lists["output_lens"]) else None,
        })
    if any(r["ttft_ms"] is None for r in requests):
        warnings.append("some per-request TTFTs were missing or negative and were left empty")


def _parse_vllm(objects: list[Any], name: str) -> Parsed:
    warnings: list[str] = []
    runs, requests = [], []
    for index, obj in enumerate(objects):
        if not isinstance(obj, dict) or not (_VLLM_MARKERS & obj.keys()):
            raise IngestError(name, f"record {index + 1} is not a vllm bench result (no throughput or latency keys)")
        runs.append(_vllm_run(obj, warnings, requests, index))
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
        run.set("label", f"{kind} {strategy.get('rate') or strategy.get('streams') or ''}".strip())
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
    """First value under ``key`` anywhere in nested dicts (genai-perf moved its config keys)."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for value in obj.values():
            found = _find_key(value, key)
            if found is not None:
                return found
    return None


def _parse_genai_csv(text: str, name: str) -> Parsed:
    warnings: list[str] = []
    blocks = [b for b in re.split(r"\r?\n\s*\r?\n", text.strip()) if b.strip()]
    metrics: dict[str, dict[str, Any]] = {}
    scalars: dict[str, Any] = {}
    for block in blocks:
        rows = list(csv.reader(io.StringIO(block)))
        header = [normalise_name(h) for h in rows[0]]
        if header[:2] == ["metric", "value"]:
            for row in rows[1:]:
                if len(row) >= 2:
                    scalars[_genai_metric_name(row[0])] = _number(row[1])
        elif header and header[0] == "metric":
            for row in rows[1:]:
                if row:
                    key = _genai_metric_name(row[0])
                    metrics[key] = {h: _number(v) for h, v in zip(header[1:], row[1:])}
        else:
            warnings.append(f"a block starting {rows[0][:2]} is not a genai-perf table and was skipped")
    if not metrics and not scalars:
        raise IngestError(name, "no genai-perf metric table found (expected a 'Metric,avg,…' block)")
    return Parsed("genai-perf", [_genai_run(metrics, scalars, None, warnings)], warnings=warnings)


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
def _json_documents(text: str) -> list[Any] | None:
    """One JSON document, or JSON lines; None if the text is neither."""
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        pass
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        return [json.loads(line) for line in lines] if len(lines) > 1 else None
    except json.JSONDecodeError:
        return None


def _decode(name: str, data: bytes) -> str:
    if not data.strip():
        raise IngestError(name, "the file is empty")
    if b"\x00" in data[:4096]:
        raise IngestError(name, "this is a binary file; expected JSON, JSON lines or CSV text")
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


_HEAD_BYTES = 65536  # enough to tell the formats apart; a large CSV is not decoded here in full


def detect_format(name: str, data: bytes) -> str:
    """The format of a result file, from its content (see :data:`FORMATS`).

    JSON is parsed whole; for CSV only the first 64 KiB are looked at (DuckDB checks the rest as
    it reads).

    Raises
    ------
    IngestError
        If the file is empty, binary, not UTF-8, or JSON of no known tool.
    """
    head = data[:_HEAD_BYTES]
    if not head.strip() and not data.strip():
        raise IngestError(name, "the file is empty")
    if b"\x00" in head:
        raise IngestError(name, "this is a binary file; expected JSON, JSON lines or CSV text")
    try:
        # A multi-byte character may straddle the cut: decode the head up to it strictly.
        text_head = head.decode("utf-8-sig") if len(data) <= _HEAD_BYTES else \
            head[:-4].decode("utf-8-sig") if head[:-4] else ""
    except UnicodeDecodeError:
        raise IngestError(name, "the file is not UTF-8 text; expected JSON, JSON lines or CSV") from None
    stripped = text_head.lstrip()
    if stripped[:1] in "{[":
        docs = _json_documents(_decode(name, data))
        if docs is None:
            raise IngestError(name, "the JSON is malformed or truncated")
        formats = {_json_format(d) for d in docs}
        if len(formats) == 1 and None not in formats:
            return formats.pop()
        raise IngestError(name, "JSON of an unknown shape: expected a vllm bench result "
                                "(request_throughput, mean_ttft_ms …), GuideLLM's {\"benchmarks\": […]}, "
                                "llmperf's *_summary.json or genai-perf's profile_export_genai_perf.json")
    first_line = stripped.split("\n", 1)[0]
    return "genai-perf" if normalise_name(first_line.split(",")[0]) == "metric" else "csv"


def parse(name: str, data: bytes) -> Parsed:
    """Parse a JSON-based or genai-perf CSV result file (``csv`` goes through the store's DuckDB path).

    Raises
    ------
    IngestError
        If the file is not one of the formats, or of the right format but the wrong shape.
    """
    fmt = detect_format(name, data)
    text = _decode(name, data)
    if fmt == "csv":
        raise IngestError(name, "a plain CSV is imported by the store (specviz.store.Store.import_file)")
    if fmt == "genai-perf" and not text.lstrip().startswith("{"):
        return _parse_genai_csv(text, name)
    docs = _json_documents(text) or []
    parsers: dict[str, Callable[[Any, str], Parsed]] = {
        "guidellm": _parse_guidellm, "llmperf": _parse_llmperf, "genai-perf": _parse_genai_json}
    if fmt == "vllm-bench":
        return _parse_vllm(docs, name)
    if len(docs) != 1:
        raise IngestError(name, f"{fmt} writes one JSON document per file, found {len(docs)}")
    return parsers[fmt](docs[0], name)


# ------------------------------------------------------------------------------------------ CSV
def csv_header(name: str, data: bytes) -> list[str]:
    """The column names of a CSV file (its first row), for the page's mapping step."""
    text = _decode(name, data)
    return next(csv.reader(io.StringIO(text)), [])


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
