"""``genai-perf``: NVIDIA genai-perf's ``profile_export_genai_perf.csv`` and ``.json``.

The CSV holds blocks separated by blank lines: one with a ``Metric,avg,min,max,p99,…`` header (a
row per latency metric, display names with units such as ``Time To First Token (ms)``), one with
``Metric,Value`` (throughputs and counts); numbers may carry thousands separators and quotes
(``"1,146.31"``); newer versions add p10/p5/p1 columns and GPU telemetry blocks. The JSON holds
each metric as an object ``{unit, avg, p50, …}`` keyed by its tag, and ``input_config``. Its Inter
Token Latency is stored as TPOT (below).
AIPerf, genai-perf's successor, writes the same shape with more keys: see
:mod:`specviz.results.importers.aiperf`, which outbids this module for its files.
"""

from __future__ import annotations

import csv
import re
from typing import Any, Iterator

from specviz.errors import Notice

from .base import Format, IngestError, Parsed, RunBuilder, find_key, normalise_name, number, preview
from .source import Source, characters, csv_rows, lines, width

__all__ = ["FORMAT", "metric_name", "metric_rows"]

# genai-perf's "Inter Token Latency" is each request's (latency − TTFT) / (output tokens − 1)
# (genai_perf/profile_data_parser/llm_profile_data_parser.py), what vLLM calls TPOT, not its ITL (the gaps
# between streamed chunks).
_METRICS = {"time_to_first_token": "ttft", "inter_token_latency": "tpot", "request_latency": "e2el"}
_STATS = {"avg": "mean", "p50": "p50", "p90": "p90", "p99": "p99"}
# Memory of the CSV through csv and the block reader, measured with ru_maxrss: 1M rows
# "x000001,1" (a distinct metric each) took 473 B a row all told, one metric row of 1M fields
# 138 B a field.
_ROW_BYTES, _FIELD_BYTES = 400, 100
# Each metric row is kept in ``extra`` under its block's header names, so a long header is
# repeated in every row: measured with VmHWM, parsing and storing took up to 8.2x the header
# bytes a row (10 to 300 rows under 1,000 names of 1,000 characters), and one row under 10,000
# names of 180 characters (1.8 MB) 25 MB all told: 12x the header a row bounds both.
_EXTRA_FACTOR = 12


def metric_name(label: str) -> str:
    """``"Time To First Token (ms)"`` → ``"time_to_first_token"`` (units in brackets dropped)."""
    return normalise_name(re.sub(r"\(.*?\)", "", label))


def _run(metrics: dict[str, dict[str, Any]], scalars: dict[str, Any], config: Any,
         warnings: list[Notice]) -> dict[str, Any]:
    run = RunBuilder(warnings)
    for key, stats in metrics.items():
        short = _METRICS.get(key)
        if short:
            for stat, canonical in _STATS.items():
                run.set(f"{canonical}_{short}_ms", stats.get(stat), source=f"{key}.{stat}")
        run.keep(key, stats)
    run.set("output_throughput", scalars.get("output_token_throughput"), source="output_token_throughput")
    run.set("request_throughput", scalars.get("request_throughput"), source="request_throughput")
    run.set("num_requests", scalars.get("request_count"), source="request_count")
    for key, value in scalars.items():
        run.keep(key, value)
    if config is not None:
        run.keep("input_config", config)
        run.set("concurrency", find_key(config, "concurrency"), source="input_config.concurrency")
        model = find_key(config, "model") or find_key(config, "model_names")
        run.set("target_model", model[0] if isinstance(model, list) and model else model)
        endpoint = find_key(config, "endpoint_type")
        run.set("endpoint", endpoint if isinstance(endpoint, str) else None, source="input_config.endpoint_type")
    return run.build()


def _is_csv(source: Source) -> bool:
    return not source.is_json and metric_name(source.head.lstrip().split("\n", 1)[0].split(",")[0]) == "metric"


def sniff(source: Source) -> float:
    """0.8 for a CSV that starts with a ``Metric`` column, or JSON of metric objects with units."""
    if _is_csv(source):
        return 0.8
    docs = source.documents
    doc = docs[0] if len(docs) == 1 else None
    return 0.8 if isinstance(doc, dict) and any(isinstance(v, dict) and "unit" in v for v in doc.values()) else 0.0


def parse(source: Source) -> Parsed:
    if _is_csv(source):
        return _parse_csv(source)
    docs = source.documents
    if len(docs) != 1:
        raise IngestError("ingest.one_document", source.name, format="genai-perf", count=len(docs))
    source.charge_runs(1)
    metrics, scalars = {}, {}
    for key, value in docs[0].items():
        if isinstance(value, dict) and "unit" in value:
            if "avg" in value and len(value) <= 3 and key.endswith(("throughput", "count")):
                scalars[key] = value.get("avg")
            else:
                metrics[key] = value
    warnings: list[Notice] = []
    return Parsed("genai-perf", [_run(metrics, scalars, docs[0].get("input_config"), warnings)], warnings=warnings)


def metric_rows(source: Source, malformed_key: str) -> Iterator[tuple[list[str], list[str] | None]]:
    """The rows of a CSV written as blocks under their own header rows, blank lines between them
    (genai-perf's and AIPerf's exports): ``(header, None)`` at each header (names normalised),
    then ``(header, row)`` for each of its rows. The memory of the text, the rows and, per row of a
    ``Metric`` block, keeping it in ``extra`` under its header's names is charged as they are read.

    Raises
    ------
    IngestError
        ``malformed_key`` for a field over csv's 128 KiB limit or a stray quote;
        ``ingest.csv_cut_short`` for a file that ends without a line end in a row shorter than its
        header: cut short.
    """
    counts = source.counts
    # The text and, at most as large, the fields' contents; then the rows and fields kept.
    source.charge(2 * characters(counts) * width(counts) + _ROW_BYTES * lines(counts)
                  + _FIELD_BYTES * int(counts[ord(",")]))
    header: list[str] | None = None  # of the current block; a blank line ends a block
    header_bytes = 0
    # A file cut mid-row (a copy still being written, a download that stopped) ends without a line
    # end in a row shorter than its header: its last figure may be cut too ("35." of 35.23), and the
    # blocks after it are gone. Read as it is, it had imported as a whole run.
    cut = not source.text.endswith(("\n", "\r"))
    try:
        rows = csv_rows(source.text)
        following = next(rows, None)
        while following is not None:
            row, following = following, next(rows, None)
            if not any(cell.strip() for cell in row):
                header = None
            elif header is None:
                header = [normalise_name(h) for h in row]
                header_bytes = sum(len(h.encode("utf-8", "surrogatepass")) + 4 for h in header)
                yield header, None
            else:
                if cut and following is None and len(row) < len(header):
                    raise IngestError("ingest.csv_cut_short", source.name, row=preview(",".join(row[:3])), cells=len(row),
                                      columns=len(header))
                if header[0] == "metric":
                    source.charge(_EXTRA_FACTOR * header_bytes)
                yield header, row
    except csv.Error as exc:
        raise IngestError(malformed_key, source.name, detail=str(exc)) from None


def _cell(text: str) -> float | str | None:
    """A table cell: a number, None where blank, else its text, which the run then refuses with a
    warning that quotes it (read as None here, it vanished: a table of 'abc' imported as an empty run)."""
    if not text.strip():
        return None
    value = number(text)
    return text if value is None else value


def _parse_csv(source: Source) -> Parsed:
    """The ``Metric,avg,…`` block's rows as metrics, the ``Metric,Value`` block's as scalars.

    Raises
    ------
    IngestError
        ``ingest.genai_no_table`` without such a block; ``ingest.genai_no_figures`` where none of the
        metrics a run reads is in them, ``ingest.genai_no_figures_refused`` where none of those is a
        number (its first refused cell quoted)."""
    warnings: list[Notice] = []
    metrics: dict[str, dict[str, Any]] = {}
    scalars: dict[str, Any] = {}
    for header, row in metric_rows(source, "ingest.genai_csv_malformed"):
        if row is None:
            if header[0] != "metric":
                warnings.append(Notice("warn.genai_block_skipped", start=preview(header[:2])))
        elif header[:2] == ["metric", "value"]:
            if len(row) >= 2:
                scalars[metric_name(row[0])] = _cell(row[1])
        elif header[0] == "metric":
            metrics[metric_name(row[0])] = {h: _cell(v) for h, v in zip(header[1:], row[1:])}
    if not metrics and not scalars:
        raise IngestError("ingest.genai_no_table", source.name)
    source.charge_runs(1)
    run = _run(metrics, scalars, None, warnings)
    if not any(isinstance(value, (int, float)) for key, value in run.items() if key != "extra"):
        refused = next((w.params for w in warnings if w.key.startswith("warn.rejected.")), None)
        if refused is None:
            raise IngestError("ingest.genai_no_figures", source.name)
        raise IngestError("ingest.genai_no_figures_refused", source.name, source=refused["source"], value=refused["value"])
    return Parsed("genai-perf", [run], warnings=warnings)


FORMAT = Format("genai-perf", sniff, parse)
