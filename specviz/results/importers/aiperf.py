"""``aiperf``: the result files of NVIDIA AIPerf (genai-perf's successor), ``aiperf profile``: a
run's three, its sweeps' and repetitions' aggregates, and the server's metrics it exported.

``profile_export_aiperf.json``
    One object. Each metric is a block keyed by its tag (``time_to_first_token``,
    ``inter_token_latency``, ``request_latency``, ``request_throughput``, ``output_token_throughput``,
    ``total_token_throughput``, ``request_count``, ``error_request_count``, ``benchmark_duration``,
    …) in display units (``ms``, ``sec``, ``requests/sec``, ``tokens/sec``, ``%``, ``ratio``):
    record metrics carry ``unit, avg, p1, p5, p10, p25, p50, p75, p90, p95, p99, min, max, std``
    (schema 1.1 adds ``count`` and ``sum``), derived and aggregate ones ``unit`` and ``avg`` only.
    Beside them: ``schema_version`` and ``aiperf_version`` (the client's version, not the engine's;
    both absent before schema 1.0), ``benchmark_id``, ``run_info`` (schema 1.2), ``telemetry_data``,
    ``was_cancelled``, ``error_summary``, ``start_time``, ``end_time``, ``warmup_metrics`` (1.4) and
    ``input_config``: since the v2 configuration ``models.items[].name``, ``endpoint.type`` (``chat``,
    ``completions``, …) and ``phases[]`` (``name``, ``type``: ``concurrency``, ``poisson``,
    ``gamma``, ``constant``, ``user_centric`` or ``fixed_schedule``, ``concurrency``, ``rate``; the
    warmup phase has ``exclude_from_results: true``); before it ``endpoint.model_names``,
    ``endpoint.type`` and ``loadgen.concurrency``/``loadgen.request_rate``. With vLLM serving
    per-request speculative-decoding stats: ``spec_decode_acceptance_length`` (per-request mean,
    ratio), ``spec_decode_token_weighted_acceptance_length`` (run level: 1 + accepted / steps),
    ``spec_decode_draft_acceptance_rate`` and ``spec_decode_overall_draft_acceptance_rate`` (in
    percent), ``spec_decode_zero_step_requests`` (a count of requests, not a share) and
    ``pooled_spec_decode_acceptance_histogram`` ({accepted drafts j: verify steps}).
``profile_export_aiperf.csv``
    Blocks separated by blank lines: ``Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std``
    (``sum`` after ``max`` in newer versions; percentiles ascending, where genai-perf's run from p99
    down and have no ``std``) with a row per record metric, then ``Metric,Value`` for the others,
    then after two blank lines, with GPU telemetry on, ``Endpoint,GPU_Index,…,Metric,avg,…`` (one row
    per GPU and metric, which no run column holds: skipped). Metrics are named by their display
    header with the unit in brackets (``Time to First Token (ms)``; none for counts: ``Request
    Count``); numbers written ``%.2f``, integers as they are; lines end in ``\\r\\n``.
``profile_export.jsonl``
    One record per request: ``{"metadata": {session_num, x_request_id, conversation_id, turn_index,
    request_start_ns, request_ack_ns, request_end_ns, worker_id, record_processor_id,
    benchmark_phase ("warmup" or "profiling"), was_cancelled, …}, "metrics": {tag: {"value", "unit"}},
    "error": null or {code, type, message}}``; a failed request has an ``error`` and few metrics.
    With per-request speculative-decoding stats from the server (vLLM's
    ``--per-request-spec-decode-metrics``), ``metrics`` holds ``spec_decode_acceptance_length``,
    ``spec_decode_draft_acceptance_rate`` (percent), ``spec_decode_steps``,
    ``spec_decode_accepted_draft_tokens`` and ``spec_decode_draft_tokens``, and at ``--export-level
    records`` the line carries the engine-neutral record itself, ``"spec_decode_acceptance": {engine,
    mean_acceptance_length, draft_acceptance_rate (a fraction), acceptance_histogram ({"j": verify
    steps that accepted j draft tokens}, may be null), num_accepted_draft_tokens, num_draft_tokens,
    num_spec_steps, num_spec_tokens (γ, may be null), completion_tokens, per_step_accepted,
    per_step_drafted}`` (null where the request ran no verify step). Each request's row takes its
    own acceptance from the record, else from the metrics; its histogram and γ go in the row's
    ``extra`` (the per-step arrays, which grow with the output, are not kept). A request whose rate
    is outside [0, 1] or whose length is outside [1, γ + 1] makes the file an error naming the
    line and the field. The file is claimed from its first line and read by DuckDB's
    ``read_json_objects`` (a file of 1M requests is 1.6 GB of JSON, which Python's ``json`` would
    hold as about 15 GB of objects); a text that is no number is NaN, numeric text is read. The
    run's figures are pooled over its requests (1 + Σ accepted / Σ steps, Σ accepted / Σ drafted),
    and per position from their pooled histogram: position i is accepted by the steps that
    accepted more than i tokens.

``profile_export_aiperf_sweep.json`` (in ``sweep_aggregate/``)
    A parameter sweep (``--concurrency 10,20,30``, a grid of several parameters): ``aggregation_type:
    "sweep"``, ``num_profile_runs``, ``num_successful_runs``, ``failed_runs``, ``metadata``
    (``sweep_parameters``, ``num_combinations``), ``best_configurations``, ``pareto_optimal`` and
    ``per_combination_metrics``, a list of ``{parameters: {name: value}, metrics}``; a parameter is
    named by its configuration path (``phases.profiling.concurrency``) or its leaf. ``metrics`` holds
    each statistic flattened into its key, ``{tag}_{stat}: {mean, std, min, max, cv, ci_low, ci_high,
    unit}`` over the trials, or with one trial a block per tag with ``mean``, ``avg`` and the
    percentiles. A run per combination: its statistics as a summary's (each the mean over the
    trials; the spread kept in ``extra``), its parameters by leaf name in ``extra.sweep``, a
    concurrency or rate as the load. A layout of one parameter (``metadata.parameter_name`` and
    ``parameter_values``, ``per_value_metrics`` by ``str(value)``) is not read: it was written only on
    the branch of AIPerf's pull request #699 (Lokiiiiii/aiperf, ``orchestrator/aggregation/sweep.py``
    at 052264bf), whose merge (59cbdf47) and every release since write ``per_combination_metrics``.
``profile_export_aiperf_sweep.csv``
    Its first block is the same table, a row per combination: the parameters, then
    ``{tag}_{stat}_{mean|std|min|max|cv}`` (no units: times in AIPerf's display units); then
    ``Best Configurations``, ``Pareto Optimal Points`` and ``Metadata`` blocks, not read.
``profile_export_aiperf_aggregate.json`` (``aggregate/<cell>/`` or ``<cell>/aggregate/``)
    The confidence aggregate over a cell's trials (``--num-profile-runs``): ``schema_version`` 1.0,
    ``aiperf_version``, ``metadata`` (``aggregation_type: "confidence"``, ``num_profile_runs``,
    ``confidence_level``, ``run_labels``, …) and ``metrics`` flattened as the sweep's (with ``se``
    and ``t_critical``). One run; its load from the cell's folder.
Sweep cells
    AIPerf names a cell's folder ``{leaf parameter}_{value}``, joined by ``__`` in a grid
    (``concurrency_10__isl_512``): every file in such a folder gets the cell's settings in
    ``extra.sweep``, and its concurrency or rate as the load where the file gives none.
    :func:`left_out` says which files of a folder repeat another's runs (a cell is one run).
``server_metrics_export.json``
    The server's Prometheus metrics during the run (``--server-metrics``): ``aiperf_version``,
    ``benchmark_id``, ``summary`` (``endpoints_configured``, ``endpoints_successful``, ``start_time``,
    ``end_time``), ``input_config`` and ``metrics`` by name, each ``{type, description, unit,
    series: [{endpoint_url, labels, stats, timeslices}]}``; a counter's ``stats`` are ``total`` (its
    increase over the profiling period, warmup excluded, a reset counted from zero), ``rate`` and
    the rates of its time slices, a gauge's ``avg``, ``min``, ``max``, ``std`` and percentiles.
    The spec-decode counters' increase is one live-style window over the run: each series' total
    (a gauge's mean) becomes one snapshot, every endpoint apart as an ``instance`` label, read by
    :func:`specviz.live.exposition.spec_decode_states` exactly as a scrape is, summed over replicas:
    a run per model with the acceptance rate and length, per position, the zero-accept share and
    γ, its load and endpoint from ``input_config`` (or its cell), the counts in
    ``extra.server_metrics``. It is a run, not rows of the store's ``windows``: a window is
    recorded from a source the recorder polls and belongs to no imported file, so it could be
    neither removed with its import nor paired with a load; as a run it sits beside the AIPerf run
    of the same cell (the same ``benchmark_id``), which holds the client's latencies.
``server_metrics_export.csv``
    The same series: ``#`` comment lines, then a section per type under ``Endpoint,Type,Metric,Unit``,
    the type's statistics, a column per label and ``Description``; read as the JSON is, without
    the period and configuration the CSV does not hold.

Sources: ai-dynamo/aiperf at db4f6397 (2025-10-10, 0.1.1): ``aiperf/exporters/json_exporter.py``,
``csv_exporter.py``, ``aiperf/post_processors/record_export_results_processor.py``,
``aiperf/common/models/export_models.py`` and ``record_models.py``, ``aiperf/common/constants.py``
(``STAT_KEYS``), ``aiperf/common/config/user_config.py``, ``endpoint_config.py``,
``loadgen_config.py``, ``aiperf/common/enums/metric_enums.py`` (time units ``ns``, ``us``, ``ms``,
``sec``), ``aiperf/metrics/metric_dicts.py`` (statistics: numpy's linear percentiles) and
``aiperf/metrics/types/*.py`` (tags and headers); later versions under ``src/aiperf``:
``metrics/types/spec_decode_metrics.py`` (1849cd1b), ``common/models/export_models.py`` (896729cf,
schema 1.1; a later stored version, its commit not given by the index: schema 1.4 with
``pooled_spec_decode_acceptance_histogram``), ``exporters/metrics_json_exporter.py`` (047d59dd),
``exporters/metrics_csv_exporter.py`` (309c4e8c), ``common/constants.py`` (0562da4a),
``config/phases.py`` (aa0efdfd), ``config/models.py`` (9ee60500), ``common/models/record_models.py``
(f86c6c0d; ``MetricRecordInfo.spec_decode_acceptance`` in a later stored version, its commit not
given by the index), ``common/models/spec_decode_models.py`` (0786f0ca),
``tests/unit/spec_decode/test_vllm_adapter.py`` (70656622), ``docs/reference/json-export-schema.md``
(db6edabf), ``docs/reference/spec-decode-acceptance.md`` (19a5101a; the per-request record in
0786f0ca), ``docs/tutorials/working-with-profile-exports.md`` (13992dbd); sweeps and aggregates:
``exporters/aggregate/aggregate_sweep_json_exporter.py`` (4f2a10ab),
``aggregate_confidence_json_exporter.py`` (008358d8), ``orchestrator/aggregation/sweep.py``
(0285ca31), ``confidence.py`` (4460964b), ``search_recipes/post_process.py`` (both layouts of a
cell's metrics; its commit not given by the index), ``docs/api/sweep-aggregates.md`` (7691a759; the
artifact layout and cell names); the server's metrics: ``server_metrics/json_exporter.py``
(19e4b776), ``csv_exporter.py`` (0dbe24a7), ``_counter_stats.py`` (745695dd) and
``common/models/server_metrics_models.py`` (its commit not given by the index).
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath
from typing import Any, Iterable

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from specviz import settings
from specviz.errors import Notice, SpecvizError
from specviz.live import exposition

from .base import (Format, IngestError, Parsed, RunBuilder, Source, check_run_count, dig, normalise_name, number,
                   preview)
# The same block reader as genai-perf's CSV, with its measured memory costs.
from .genai_perf import metric_name, metric_rows

__all__ = ["FORMAT", "cell_settings", "left_out"]

_LATENCIES = {"time_to_first_token": "ttft", "inter_token_latency": "itl", "request_latency": "e2el"}
_STATS = {"avg": "mean", "p50": "p50", "p90": "p90", "p99": "p99"}
# Blocks whose ``avg`` is a run's value (rates are per second, counts whole).
_SCALARS = {"request_throughput": "request_throughput", "output_token_throughput": "output_throughput",
            "total_token_throughput": "total_token_throughput", "request_count": "num_requests",
            "error_request_count": "failed_requests"}
# AIPerf's time units (MetricTimeUnit), in milliseconds and in seconds.
_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "sec": 1e3}
_SECONDS = {unit: scale / 1e3 for unit, scale in _MS.items()}
_RATE = {"%": 0.01, "ratio": 1.0}
# Run-level, token-weighted figures first (vLLM's own benchmark computes its acceptance the same
# way, from the server's counters), then the mean of the per-request figures.
_ACCEPTANCE_LENGTH = ("spec_decode_token_weighted_acceptance_length", "spec_decode_acceptance_length")
_ACCEPTANCE_RATE = ("spec_decode_overall_draft_acceptance_rate", "spec_decode_draft_acceptance_rate")
# The CSV's display headers that are not their tag.
_CSV_TAGS = {"acceptance_length": "spec_decode_acceptance_length",
             "token_weighted_acceptance_length": "spec_decode_token_weighted_acceptance_length",
             "draft_acceptance_rate": "spec_decode_draft_acceptance_rate",
             "overall_draft_acceptance_rate": "spec_decode_overall_draft_acceptance_rate"}
_UNIT = re.compile(r"\(([^()]*)\)\s*$")
_PERCENTILE = re.compile(r"p(\d+)")
_CONFIG_KEYS = {"phases", "models", "loadgen"}  # AIPerf's, in either configuration; not genai-perf's
_METADATA_KEYS = {"benchmark_phase", "request_start_ns", "session_num"}
# Per request (charged a line of the file before DuckDB reads it): the columns taken out of DuckDB
# as Arrow (31 of 8 B), the numpy columns built from them and the DataFrame (about 200 B), the
# store's copy (about 100 B); DuckDB's own reading is bounded by its memory limit. Measured at 1M
# lines of 1.6 KB: peak RSS 0.82-0.92 GB in all (0.17 GB before the import).
_REQUEST_BYTES = 512
# Each request's acceptance column: the field of its ``spec_decode_acceptance`` record, and the
# per-request metric of the same figure with the units it may be in (AIPerf's rate is in percent).
_REQUEST_ACCEPTANCE = {
    "drafts": ("num_spec_steps", "spec_decode_steps", None),
    "draft_tokens": ("num_draft_tokens", "spec_decode_draft_tokens", None),
    "accepted_tokens": ("num_accepted_draft_tokens", "spec_decode_accepted_draft_tokens", None),
    "acceptance_rate": ("draft_acceptance_rate", "spec_decode_draft_acceptance_rate", _RATE),
    "acceptance_length": ("mean_acceptance_length", "spec_decode_acceptance_length", None)}
_MOST_POSITIONS = 64  # no draft is longer; a histogram key past it is no draft position
_DUCKDB_BYTES = 256 << 20  # the least memory DuckDB is given to read a per-request file
# A request's histogram that is one of counts: each key a draft position up to _MOST_POSITIONS (as
# text: DuckDB writes the object back compact), each count a number ≥ 0; at least one.
_COUNT = r'"(?:[0-9]|[1-5][0-9]|6[0-4])":[0-9][0-9.eE+]*'
_COUNTS = f"coalesce(regexp_full_match(histogram, '\\{{{_COUNT}(?:,{_COUNT})*\\}}'), false)"
# A sweep cell folder's part, ``{leaf parameter}_{value}``, and the folders of repetitions that look alike.
_CELL_PART = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9_]*?)_(?P<value>-?\d+(?:\.\d+)?)")
_NOT_CELLS = {"trial", "run", "search_iter"}
_CELL_LOADS = {"concurrency": "concurrency", "request_rate": "request_rate", "rate": "request_rate"}
# A statistic flattened into its metric's key by AIPerf's aggregations (``time_to_first_token_p99``).
_FLATTENED = re.compile(r"(?P<tag>.+)_(?P<stat>avg|min|max|std|sum|p\d+)")
# Where AIPerf writes the same run twice in one folder: a file → the file beside it that is read.
_AGGREGATE, _SWEEP = "profile_export_aiperf_aggregate.json", "profile_export_aiperf_sweep.json"
_BESIDE = {"profile_export_aiperf.csv": "profile_export_aiperf.json",
           "profile_export.jsonl": "profile_export_aiperf.json",
           "server_metrics_export.csv": "server_metrics_export.json",
           "profile_export_aiperf_aggregate.csv": _AGGREGATE, "profile_export_aiperf_sweep.csv": _SWEEP}
_CELL_FILES = {"profile_export_aiperf.json", "profile_export_aiperf.csv", "profile_export.jsonl", _AGGREGATE}
_REPETITION = re.compile(r"(?:trial|run)_\d+")
# A column of the sweep's CSV: a flattened statistic, then what over the trials.
_SWEEP_COLUMN = re.compile(r"(?P<key>.+_(?:avg|min|max|std|sum|p\d+))_(?P<field>mean|std|min|max|cv)")
# AIPerf's display units of the tags a run's figures need a unit for (its JSON writes them; its CSVs
# name them in the header or, the sweep's, not at all).
# The server's metrics: the statistic of each Prometheus type that is its value over the profiling
# period (a counter's increase, a gauge's mean; histograms are not read), and the statistics' columns
# of the CSV's sections (the other columns between Unit and Description are labels).
_SERVER_STATS = {"counter": "total", "gauge": "avg", "unknown": "avg"}
_SERVER_STAT_COLUMN = re.compile(r"total|rate(?:_avg|_min|_max|_std)?|avg|min|max|std|count(?:_rate)?|sum(?:_rate)?"
                                 r"|p\d+(?:_estimate)?")
_SERVER_CSV = "# AIPerf Server Metrics Export"
_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_LABEL_ESCAPES = re.compile(r'[\\"\n]')
_ESCAPED = {"\\": "\\\\", '"': '\\"', "\n": "\\n"}
_DISPLAY_UNITS = {**dict.fromkeys(_LATENCIES, "ms"), "benchmark_duration": "sec",
                  **dict.fromkeys(_ACCEPTANCE_RATE, "%")}


def _is_summary(doc: Any) -> bool:
    """Metric blocks with units beside ``aiperf_version`` or AIPerf's ``input_config``."""
    if not isinstance(doc, dict) or not any(isinstance(v, dict) and "unit" in v for v in doc.values()):
        return False
    config = doc.get("input_config")
    return isinstance(doc.get("aiperf_version"), str) or (
        isinstance(config, dict) and not _CONFIG_KEYS.isdisjoint(config))


def _is_sweep(doc: Any) -> bool:
    """``profile_export_aiperf_sweep.json``: a list of ``per_combination_metrics`` beside AIPerf's
    sweep sections."""
    return (isinstance(doc, dict) and isinstance(doc.get("per_combination_metrics"), list)
            and (doc.get("aggregation_type") == "sweep" or "pareto_optimal" in doc or "best_configurations" in doc))


def _is_aggregate(doc: Any) -> bool:
    """``profile_export_aiperf_aggregate.json``: ``metrics`` of a confidence aggregation over trials."""
    return (isinstance(doc, dict) and isinstance(doc.get("metrics"), dict)
            and dig(doc, "metadata").get("aggregation_type") == "confidence")


def _is_server_metrics(doc: Any) -> bool:
    """``server_metrics_export.json``: Prometheus metrics by name, each a ``type`` and its ``series``,
    beside AIPerf's ``summary`` of the endpoints scraped."""
    metrics = doc.get("metrics") if isinstance(doc, dict) else None
    return (isinstance(metrics, dict) and isinstance(doc.get("summary"), dict)
            and any(isinstance(m, dict) and isinstance(m.get("series"), list) and "type" in m
                    for m in metrics.values()))


def _is_record(doc: Any) -> bool:
    """A line of ``profile_export.jsonl``: ``metadata`` of a request beside ``metrics``."""
    return (isinstance(doc, dict) and "metrics" in doc and isinstance(doc.get("metadata"), dict)
            and not _METADATA_KEYS.isdisjoint(doc["metadata"]))


def _first_cells(source: Source) -> list[str]:
    """The first line's cells, their names normalised."""
    return [normalise_name(cell) for cell in source.head.lstrip().split("\n", 1)[0].split(",")]


def _is_csv(source: Source) -> bool:
    """A header of ascending percentiles and ``std`` (genai-perf's descend, without ``std``), a
    first block of ``Metric,Value`` with AIPerf's unit of request throughput (genai-perf writes
    ``(per sec)``), or a sweep's statistics over trials (``request_throughput_avg_mean``)."""
    if source.is_json:
        return False
    cells = _first_cells(source)
    if any(map(_SWEEP_COLUMN.fullmatch, cells)) or source.head.startswith(_SERVER_CSV):
        return True
    percentiles = [int(m[1]) for m in map(_PERCENTILE.fullmatch, cells) if m]
    if cells[0] == "metric" and "std" in cells and len(percentiles) > 1 and percentiles == sorted(percentiles):
        return True
    return cells == ["metric", "value"] and "Request Throughput (requests/sec)" in source.head


def claims(source: Source) -> bool:
    """Whether the first line alone is an AIPerf per-request record: the registry then takes the
    file for AIPerf's without decoding it whole (a per-request file of 1M lines is 1.6 GB of JSON,
    and :func:`_parse_records` reads it with DuckDB)."""
    if not source.is_json:
        return False
    first = source.head.lstrip().partition("\n")[0]
    try:
        return _is_record(json.loads(first))
    except (ValueError, RecursionError):
        return False


def sniff(source: Source) -> float:
    """0.95 for a summary JSON or per-request JSON lines, 0.9 for the CSV (genai-perf bids 0.8 for
    the first and the last, vLLM 0.8 and SGLang 0.95 for JSON lines with their own keys)."""
    if not source.is_json:
        return 0.9 if _is_csv(source) else 0.0
    docs = source.documents
    # Summaries joined into JSON lines are claimed too, to be refused as such by parse.
    claimed = docs and any(test(docs[0]) for test in (_is_record, _is_summary, _is_sweep, _is_aggregate,
                                                      _is_server_metrics))
    return 0.95 if claimed else 0.0


def _scale(tag: str, block: dict[str, Any], units: dict[str, float], warnings: list[Notice]) -> float | None:
    """The factor for a block's unit, or None (and a notice) for a unit not in ``units``."""
    unit = block.get("unit")
    scale = units.get(unit) if isinstance(unit, str) else None
    if scale is None:
        warnings.append(Notice("warn.aiperf_unit", source=tag, unit=preview(unit)))
    return scale


def _histogram_figures(histogram: Any, gamma: float | None = None) -> tuple[list[float] | None, float | None]:
    """From a histogram of verify steps by the draft tokens each accepted (``{"j": steps}``, the
    keys JSON text): the share of steps that accepted position i (a step that accepted j tokens
    accepted positions 0 to j − 1, as vLLM's ``num_accepted_tokens_per_pos`` counts them), for i
    below γ (the largest j where γ is not known), and the share that accepted none. ``(None,
    None)`` where it is no histogram of counts; no per-position shares where a j exceeds γ or
    :data:`_MOST_POSITIONS`."""
    if not isinstance(histogram, dict) or not all(isinstance(k, str) and k.isdigit() for k in histogram):
        return None, None
    steps = [number(v) for v in histogram.values()]
    if not steps or any(n is None or n < 0 for n in steps):
        return None, None
    total = sum(steps)
    if not 0 < total < math.inf:
        return None, None
    accepted = [int(k) for k in histogram]
    zero = sum(n for j, n in zip(accepted, steps) if j == 0) / total
    positions = max(accepted) if gamma is None else gamma
    if max(accepted) > positions or not 0 < positions <= _MOST_POSITIONS:
        return None, zero
    counts = np.zeros(int(positions) + 1)
    np.add.at(counts, accepted, steps)
    return (np.cumsum(counts[::-1])[::-1][1:] / total).tolist(), zero


def _agreed(values: Iterable[Any]) -> Any:
    """The one value the measured phases share, or None where they differ or none has one."""
    present = [v for v in values if v is not None]
    return present[0] if present and all(v == present[0] for v in present) else None


def _model(models: Any, legacy: Any) -> str | None:
    """The model names: ``models.items[].name`` (or a list of names), else ``endpoint.model_names``."""
    if isinstance(models, dict):
        models = models.get("items")
    if not isinstance(models, list):
        models = legacy if isinstance(legacy, list) else [models]
    names = [m.get("name") if isinstance(m, dict) else m for m in models]
    return ", ".join(n for n in names if isinstance(n, str)) or None


def _config(run: RunBuilder, config: dict[str, Any]) -> None:
    """Load, model and endpoint type from ``input_config``; the phases AIPerf leaves out of its
    results (warmup) do not count."""
    phases = config.get("phases")
    if isinstance(phases, list):
        measured = [p for p in phases if isinstance(p, dict) and p.get("exclude_from_results") is not True
                    and "warmup" not in (p.get("kind"), p.get("name"))]
        # Concurrency is the load only in a concurrency phase; beside a rate it is a cap on the
        # requests in flight (kept in extra with input_config), not the load.
        run.set("concurrency", _agreed(p.get("concurrency") for p in measured if p.get("type") == "concurrency"),
                source="input_config.phases.concurrency")
        run.set("request_rate", _agreed(p.get("rate") for p in measured if p.get("type") != "concurrency"),
                source="input_config.phases.rate")
    else:
        loadgen = dig(config, "loadgen")
        run.set("concurrency", loadgen.get("concurrency"), source="input_config.loadgen.concurrency")
        run.set("request_rate", loadgen.get("request_rate"), source="input_config.loadgen.request_rate")
    endpoint = dig(config, "endpoint")
    run.set("target_model", _model(config.get("models"), endpoint.get("model_names")), source="input_config.models")
    run.set("endpoint", endpoint.get("type"), source="input_config.endpoint.type")


def _figures(run: RunBuilder, doc: dict[str, Any], warnings: list[Notice]) -> None:
    """A run's figures from metric blocks by tag beside other top-level keys (a summary, the CSV's
    rows read into the same shape, a sweep cell's or an aggregate's statistics by tag)."""
    blocks = {tag: block for tag, block in doc.items() if isinstance(block, dict)}
    for tag, short in _LATENCIES.items():
        scale = _scale(tag, blocks[tag], _MS, warnings) if tag in blocks else None
        if scale is not None:
            for stat, canonical in _STATS.items():
                run.set(f"{canonical}_{short}_ms", blocks[tag].get(stat), scale, source=f"{tag}.{stat}")
    for tag, column in _SCALARS.items():
        run.set(column, dig(blocks, tag).get("avg"), source=f"{tag}.avg")
    if "benchmark_duration" in blocks:
        scale = _scale("benchmark_duration", blocks["benchmark_duration"], _SECONDS, warnings)
        if scale is not None:
            run.set("duration_s", blocks["benchmark_duration"].get("avg"), scale, source="benchmark_duration.avg")
    length = next((t for t in _ACCEPTANCE_LENGTH if t in blocks), None)
    if length:
        run.set("acceptance_length", blocks[length].get("avg"), source=f"{length}.avg")
    rate = next((t for t in _ACCEPTANCE_RATE if t in blocks), None)
    scale = _scale(rate, blocks[rate], _RATE, warnings) if rate else None
    if scale is not None:
        run.set("acceptance_rate", blocks[rate].get("avg"), scale, source=f"{rate}.avg")
    positions, zero = _histogram_figures(doc.get("pooled_spec_decode_acceptance_histogram"))
    run.set("zero_accept_rate", zero, source="pooled_spec_decode_acceptance_histogram")
    run.set("per_position_acceptance", positions, source="pooled_spec_decode_acceptance_histogram")
    if "input_config" in blocks:
        _config(run, blocks["input_config"])


def _exposition_text(series: Iterable[tuple[str, dict[str, Any], Any]]) -> str:
    """Series ``(metric, labels, value)`` as Prometheus exposition text, for
    :func:`specviz.live.exposition.parse`: values that are no finite number, and labels whose name
    is no label name, are left out."""
    lines = []
    for metric, labels, value in series:
        amount = number(value)
        if amount is None or not math.isfinite(amount) or not _METRIC_NAME.fullmatch(metric):
            continue
        pairs = ",".join(f'{name}="{_LABEL_ESCAPES.sub(lambda m: _ESCAPED[m[0]], str(text))}"'
                         for name, text in labels.items() if _LABEL_NAME.fullmatch(str(name)))
        lines.append(f"{metric}{{{pairs}}} {amount!r}")
    return "\n".join(lines) + "\n"


def _server_runs(source: Source, text: str, config: dict[str, Any], keep: dict[str, Any],
                 seconds: float | None) -> Parsed:
    """A run per model of the server's speculative-decoding counters' increase over the profiling
    period (what :func:`specviz.live.exposition.spec_decode_states` makes of one snapshot of them):
    acceptance rate and length, per position, zero-accept share, γ; load and model from the
    configuration, or the cell."""
    try:
        states = exposition.spec_decode_states(exposition.parse(text))
    except SpecvizError as exc:
        raise IngestError("ingest.aiperf_server_metrics", source.name, reason=Notice(exc.key, **exc.params)) from None
    check_run_count(source.name, len(states))
    source.charge_runs(len(states))
    warnings: list[Notice] = []
    runs = []
    for state in states:
        run = RunBuilder(warnings)
        _config(run, config)
        run.set("engine", state.engine.split("-")[0], source="server metrics")
        run.set("target_model", state.model_name or None, source="model_name")  # the server's name for it
        for column in ("acceptance_rate", "acceptance_length", "per_position_acceptance", "zero_accept_rate"):
            run.set(column, getattr(state, column), source=f"server metrics: {column}")
        gamma = state.num_speculative_tokens
        run.set("num_speculative_tokens", gamma if gamma is not None and gamma == round(gamma) else None,
                source="server metrics: draft tokens / drafts")
        run.set("duration_s", seconds, source="summary.start_time, end_time")
        run.keep("server_metrics", {"drafts": state.drafts, "draft_tokens": state.draft_tokens,
                                    "accepted_tokens": state.accepted_tokens, "alpha_iid": state.alpha_iid,
                                    "engine": state.engine, "summed_labels": list(state.summed_labels)})
        for key, value in keep.items():
            run.keep(key, value)
        _apply_cell(run, cell_settings(source.name))
        runs.append(run.build())
        warnings += [n for n in state.notices if all((n.key, n.params) != (w.key, w.params) for w in warnings)]
    return Parsed("aiperf", runs, warnings=warnings)


def _parse_server_json(source: Source, doc: dict[str, Any]) -> Parsed:
    """``server_metrics_export.json``: each counter series' ``stats.total`` (its increase over the
    profiling period) and each gauge's ``stats.avg``, the series of every endpoint apart (as an
    ``instance`` label, summed over as Prometheus's would be)."""
    series = []
    for metric, data in doc["metrics"].items():
        if not isinstance(data, dict) or not isinstance(data.get("series"), list):
            continue
        stat = _SERVER_STATS.get(data["type"]) if isinstance(data.get("type"), str) else None
        for entry in data["series"]:
            if stat and isinstance(entry, dict):
                labels = entry.get("labels") if isinstance(entry.get("labels"), dict) else {}
                series.append((metric, {**labels, "instance": entry.get("endpoint_url", "")},
                               dig(entry, "stats").get(stat)))
    summary = dig(doc, "summary")
    try:
        seconds = (datetime.fromisoformat(summary["end_time"]) - datetime.fromisoformat(summary["start_time"])
                   ).total_seconds()
    except (KeyError, TypeError, ValueError, OverflowError):
        seconds = None
    keep = {key: doc.get(key) for key in ("aiperf_version", "benchmark_id", "summary", "input_config")}
    return _server_runs(source, _exposition_text(series), dig(doc, "input_config"), keep, seconds)


def _parse_server_csv(source: Source) -> Parsed:
    """``server_metrics_export.csv``: ``#`` comments, then a section per metric type under its own
    header, ``Endpoint,Type,Metric,Unit``, the type's statistics, a column per label,
    ``Description``; read as the JSON is (a counter's ``total``, a gauge's ``avg``)."""
    source.charge(source.size)  # the copy without the comment lines
    body = b"\n".join(line for line in source.data.splitlines() if not line.lstrip().startswith(b"#"))
    series = []
    for header, row in metric_rows(Source(source.name, body), "ingest.aiperf_csv_malformed"):
        if row is None or header[:3] != ["endpoint", "type", "metric"] or "description" not in header:
            continue
        cells = dict(zip(header, row))
        stat = _SERVER_STATS.get(cells.get("type", ""))
        labels = {name: cell for name, cell in zip(header[4:header.index("description")], row[4:])
                  if cell and not _SERVER_STAT_COLUMN.fullmatch(name)}
        if stat:
            series.append((cells["metric"], {**labels, "instance": cells["endpoint"]}, cells.get(stat)))
    return _server_runs(source, _exposition_text(series), {}, {}, None)


def _apply_cell(run: RunBuilder, cell: dict[str, Any]) -> None:
    """A sweep cell's settings: in ``extra`` as ``sweep``, and its concurrency or rate as the load
    where the file gives none (a concurrency beside a rate the file gives is a cap, not the load)."""
    if not cell:
        return
    run.keep("sweep", cell)
    if "concurrency" not in run.row and "request_rate" not in run.row:
        for name, column in _CELL_LOADS.items():
            if name in cell:
                run.set(column, cell[name], source=f"sweep.{name}")


def _run(doc: dict[str, Any], warnings: list[Notice], cell: dict[str, Any]) -> dict[str, Any]:
    """The run of a summary, every key kept in ``extra`` (the blocks whole), with its sweep cell's settings."""
    run = RunBuilder(warnings)
    _figures(run, doc, warnings)
    for key, value in doc.items():
        run.keep(key, value)
    _apply_cell(run, cell)
    return run.build()


def cell_settings(file_name: str) -> dict[str, Any]:
    """The swept settings of the innermost sweep cell folder in a file's path: ``{"concurrency":
    10, "isl": 512}`` from ``…/concurrency_10__isl_512/profile_export_aiperf.json`` (AIPerf names a
    cell ``{leaf parameter}_{value}``, joined by ``__`` in a grid; numbers as numbers); empty where
    no folder is a cell (``trial_0001`` and ``run_0001`` are a repetition's, not a cell's)."""
    for part in reversed(PurePath(file_name.replace("\\", "/")).parts[:-1]):
        pieces = [_CELL_PART.fullmatch(piece) for piece in part.split("__")]
        if all(pieces) and not any(m["name"] in _NOT_CELLS for m in pieces):
            return {m["name"]: number(m["value"]) for m in pieces}
    return {}


def _blocks(metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The statistics of a sweep cell or an aggregate as blocks by tag, each statistic its mean over
    the trials: a flattened ``{tag}_{stat}: {mean, std, …, unit}`` into ``{tag: {stat: mean, unit}}``;
    a single-trial cell's ``{tag: {mean, avg, p1…p99, unit}}`` as it is."""
    blocks: dict[str, dict[str, Any]] = {}
    for key, block in metrics.items():
        if not isinstance(block, dict):
            continue
        flattened = _FLATTENED.fullmatch(key) if "avg" not in block else None
        if flattened:
            tag = blocks.setdefault(flattened["tag"], {"unit": block.get("unit")})
            tag[flattened["stat"]] = block.get("mean")
        else:
            blocks[key] = {"avg": block.get("mean"), **block}
    return blocks


def _parse_sweep(source: Source, doc: dict[str, Any]) -> Parsed:
    """A run per parameter combination of ``profile_export_aiperf_sweep.json``: its statistics (the
    mean over its trials) as a summary's, its parameters by their leaf name as its cell's."""
    combinations = doc["per_combination_metrics"]
    check_run_count(source.name, len(combinations))
    source.charge_runs(len(combinations))
    warnings: list[Notice] = []
    runs = []
    for index, combination in enumerate(combinations):
        if not (isinstance(combination, dict) and isinstance(combination.get("parameters"), dict)
                and isinstance(combination.get("metrics"), dict)):
            raise IngestError("ingest.aiperf_sweep_entry", source.name, entry=index + 1)
        run = RunBuilder(warnings)
        _figures(run, _blocks(combination["metrics"]), warnings)
        for key in ("aggregation_type", "num_profile_runs", "num_successful_runs"):
            run.keep(key, doc.get(key))
        run.keep("parameters", combination["parameters"])
        run.keep("metrics", combination["metrics"])
        _apply_cell(run, {str(k).rsplit(".", 1)[-1]: v for k, v in combination["parameters"].items()})
        runs.append(run.build())
    return Parsed("aiperf", runs, warnings=warnings)


def _parse_aggregate(source: Source, doc: dict[str, Any]) -> Parsed:
    """The one run of ``profile_export_aiperf_aggregate.json``: the mean over a cell's trials of each
    statistic, its load from the cell folder (the file names none)."""
    source.charge_runs(1)
    warnings: list[Notice] = []
    run = RunBuilder(warnings)
    _figures(run, _blocks(doc["metrics"]), warnings)
    for key, value in doc.items():
        run.keep(key, value)
    _apply_cell(run, cell_settings(source.name))
    return Parsed("aiperf", [run.build()], warnings=warnings)


def _parse_sweep_csv(source: Source) -> Parsed:
    """The first block of ``profile_export_aiperf_sweep.csv``, a row per parameter combination: the
    parameters in the columns before the first statistic, then ``{tag}_{stat}_{field}`` (``field``
    the mean, std, min, max or cv over the trials), read as the sweep's JSON is. The CSV writes no
    units: the times are in AIPerf's display units (:data:`_DISPLAY_UNITS`)."""
    combinations = []
    for header, row in metric_rows(source, "ingest.aiperf_csv_malformed"):
        if row is None:
            if combinations:
                break
            continue
        fields = [_SWEEP_COLUMN.fullmatch(name) for name in header]
        first = next((i for i, found in enumerate(fields) if found), None)
        if first is None:  # a block of the sections after the table, the table empty
            break
        metrics: dict[str, dict[str, Any]] = {}
        for found, cell in zip(fields[first:], row[first:]):
            if found:
                tag = _FLATTENED.fullmatch(found["key"])["tag"]
                metrics.setdefault(found["key"], {"unit": _DISPLAY_UNITS.get(tag)})[found["field"]] = number(cell)
        parameters = {name: cell if number(cell) is None else number(cell) for name, cell in zip(header[:first], row)}
        combinations.append({"parameters": parameters, "metrics": metrics})
    if not combinations:
        raise IngestError("ingest.aiperf_no_table", source.name)
    return _parse_sweep(source, {"aggregation_type": "sweep", "per_combination_metrics": combinations})


def _parse_csv(source: Source) -> Parsed:
    """The metric rows into blocks by tag (a row of ``Metric,Value`` into ``{unit, avg}``)."""
    if any(map(_SWEEP_COLUMN.fullmatch, _first_cells(source))):
        return _parse_sweep_csv(source)
    if source.head.startswith(_SERVER_CSV):
        return _parse_server_csv(source)
    doc: dict[str, dict[str, Any]] = {}
    for header, row in metric_rows(source, "ingest.aiperf_csv_malformed"):
        if row is not None and header[0] == "metric" and len(row) >= 2:
            unit = _UNIT.search(row[0])
            tag = _CSV_TAGS.get(metric_name(row[0]), metric_name(row[0]))
            doc[tag] = {"unit": unit[1] if unit else None,
                        **{("avg" if h == "value" else h): number(v) for h, v in zip(header[1:], row[1:])}}
    if not doc:
        raise IngestError("ingest.aiperf_no_table", source.name)
    source.charge_runs(1)
    warnings: list[Notice] = []
    return Parsed("aiperf", [_run(doc, warnings, cell_settings(source.name))], warnings=warnings)


_PATHS: list[str] = []  # each JSON path a record's values are read from, all at once (one parse a record)


def _at(path: str) -> str:
    """SQL of the text at a JSON path of a record, from the list read at once (:data:`_PATHS`)."""
    if path not in _PATHS:
        _PATHS.append(path)
    return f"v[{_PATHS.index(path) + 1}]"


def _number(path: str, scales: dict[str, float] | None = None, unit: str = "") -> str:
    """SQL of the number at a JSON path of a record (numeric text too), NaN where it is missing or
    no number; with ``scales``, times the scale of the unit at the path ``unit`` (NaN for another)."""
    value = f"coalesce(TRY_CAST({_at(path)} AS DOUBLE), 'NaN')"
    if scales is None:
        return value
    cases = " ".join(f"WHEN '{name}' THEN {value} * {scale!r}" for name, scale in scales.items())
    return f"CASE {_at(unit)} {cases} ELSE 'NaN'::DOUBLE END"


def _metric(tag: str, scales: dict[str, float] | None = None) -> str:
    """SQL of a record's ``metrics[tag].value`` (a time converted by its own unit)."""
    return _number(f"$.metrics.{tag}.value", scales, f"$.metrics.{tag}.unit")


# Each record's values: its times, its tokens, its own acceptance (the record's, then the metrics'),
# its γ, start and end.
_RECORD_COLUMNS = {
    "ttft_ms": _metric("time_to_first_token", _MS), "itl_ms": _metric("inter_token_latency", _MS),
    "e2el_ms": _metric("request_latency", _MS), "input_tokens": _metric("input_sequence_length"),
    "output_tokens": _metric("output_sequence_length"),
    **{f"own_{column}": _number(f"$.spec_decode_acceptance.{field_name}")
       for column, (field_name, _, _) in _REQUEST_ACCEPTANCE.items()},
    **{f"reported_{column}": _metric(tag, units) for column, (_, tag, units) in _REQUEST_ACCEPTANCE.items()},
    "gamma": _number("$.spec_decode_acceptance.num_spec_tokens"),
    "start_ns": _number("$.metadata.request_start_ns"), "end_ns": _number("$.metadata.request_end_ns")}
_HISTOGRAM = _at("$.spec_decode_acceptance.acceptance_histogram")  # its JSON text
# The counts of a histogram's first keys, read with the record's other values (no second pass over
# the histograms where no γ reaches past them).
_READ_KEYS = 16
_HISTOGRAM_KEYS = ", ".join(f'TRY_CAST({_at(f"$.spec_decode_acceptance.acceptance_histogram.{j}")} AS DOUBLE) AS h{j}'
                            for j in range(_READ_KEYS))
# What a record is (as :func:`_is_record` says it): the types of the record, its metadata, error and
# metrics, and of three metadata keys (NULL where a key is missing).
_RECORD_KINDS = f"""
    coalesce(t[1] = 'OBJECT' AND t[2] = 'OBJECT' AND t[4] IS NOT NULL
             AND (t[5] IS NOT NULL OR t[6] IS NOT NULL OR t[7] IS NOT NULL), false) AS record,
    coalesce({_at("$.metadata.benchmark_phase")} = 'warmup', false) AS warmup,
    coalesce(t[3] <> 'NULL', false) OR coalesce(t[4] <> 'OBJECT', true) AS failed"""
_RECORD_READ = """json_extract_string(json, ?) AS v,
    json_type(json, ['$', '$.metadata', '$.error', '$.metrics', '$.metadata.benchmark_phase',
                     '$.metadata.request_start_ns', '$.metadata.session_num']) AS t"""


@dataclass
class _Records:
    """What :func:`_read_records` read of a per-request file."""

    lines: int  # documents read
    warmup: int
    failed: int  # measured requests that failed
    first_stray: int | None  # the line of the first document that is no record
    kept: dict[str, np.ndarray]  # the measured requests that succeeded, by column, in the file's order
    extra: pa.ChunkedArray | None  # their histograms and γ as JSON text (null where none), if any has one
    pooled: dict[str, float]  # those histograms summed


def _read_records(source: Source) -> _Records:
    """Every record of a per-request file, read by DuckDB from the source's :attr:`~Source.reader_path` (never
    decoded by Python, nor held whole; each record parsed twice, for its values at every path of
    :data:`_PATHS` at once and for the types of its parts), kept in a table of DuckDB's until the
    successful measured requests' columns (:data:`_RECORD_COLUMNS`) are taken out as Arrow (their
    ``extra`` never becomes a Python string each), once their memory is charged for the records
    DuckDB counted. DuckDB may take three quarters of
    ``SPECVIZ_IMPORT_MEMORY_BYTES`` (at least :data:`_DUCKDB_BYTES`, its working memory) and spills
    past it to the temporary folder: at 1M lines its table of the records is some 600 MB, and with
    half of the default 1 GB it spilled (the read took 8.5 s instead of 4.0 s).

    Raises
    ------
    IngestError
        ``ingest.json_malformed`` where DuckDB cannot read the JSON, ``ingest.no_memory`` where it
        runs out of memory.
    """
    file = f"read_json_objects('{source.reader_path}', format = 'auto')"
    memory = max(settings.get("SPECVIZ_IMPORT_MEMORY_BYTES") * 3 // 4, _DUCKDB_BYTES)
    with duckdb.connect(config={"memory_limit": f"{memory}B", "temp_directory": tempfile.gettempdir()}) as con:
        try:
            con.execute("SET enable_progress_bar = false")
            con.execute(f"""
                CREATE TEMP TABLE read AS
                SELECT {_RECORD_KINDS}, {", ".join(f"{sql} AS {name}" for name, sql in _RECORD_COLUMNS.items())},
                       {_HISTOGRAM} AS histogram, {_HISTOGRAM_KEYS}
                FROM (SELECT {_RECORD_READ} FROM {file})""", [_PATHS])
            # Read in parallel and stored in the file's order (DuckDB keeps insertion order): a
            # document's line is its row's place.
            con.execute("CREATE TEMP VIEW records AS SELECT rowid + 1 AS line, * FROM read")
            lines, warmup, failed, first_stray = con.execute("""
                SELECT count(*), count(*) FILTER (warmup), count(*) FILTER (failed AND NOT warmup),
                       min(line) FILTER (NOT record)
                FROM records""").fetchall()[0]
            source.charge(_REQUEST_BYTES * lines)  # before any is taken out of DuckDB
            # The keys a histogram may have: up to the largest γ where every one has its γ (a key past
            # its γ is no count of accepted drafts), else up to the most positions.
            counted = f"FROM records WHERE record AND NOT warmup AND NOT failed AND {_COUNTS}"
            gamma = con.execute(f"SELECT max(gamma) FILTER (isfinite(gamma)), bool_and(isfinite(gamma)) {counted}"
                                ).fetchall()[0]
            most = int(min(gamma[0], _MOST_POSITIONS)) if gamma[1] else _MOST_POSITIONS
            if most < _READ_KEYS:
                sums = con.execute(f"SELECT {', '.join(f'sum(h{j})' for j in range(most + 1))} {counted}").fetchall()[0]
            else:
                keys = ", ".join(f"sum(TRY_CAST(h[{j + 1}] AS DOUBLE))" for j in range(most + 1))
                sums = con.execute(f"SELECT {keys} FROM (SELECT json_extract_string(histogram, ?) AS h {counted})",
                                   [[f'$."{j}"' for j in range(most + 1)]]).fetchall()[0]
            pooled = {str(j): total for j, total in enumerate(sums) if total is not None}
            kept = con.sql(f"""
                SELECT line, {", ".join(_RECORD_COLUMNS)}, CASE WHEN {_COUNTS} THEN
                    CASE WHEN gamma >= 0 AND isfinite(gamma) AND gamma = round(gamma)
                         THEN json_object('acceptance_histogram', json(histogram), 'num_spec_tokens', gamma)
                         ELSE json_object('acceptance_histogram', json(histogram)) END::VARCHAR END AS extra
                FROM records WHERE record AND NOT warmup AND NOT failed""").to_arrow_table()  # in insertion order
        except duckdb.OutOfMemoryException:
            raise IngestError("ingest.no_memory", source.name) from None
        except duckdb.Error:
            raise IngestError("ingest.json_malformed", source.name) from None
    columns = {name: kept.column(name).to_numpy() for name in ("line", *_RECORD_COLUMNS)}
    extra = kept.column("extra")
    return _Records(lines, warmup, failed, first_stray, columns, extra if extra.null_count < len(extra) else None,
                    pooled)


def _acceptance(source: Source, read: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each kept request's own acceptance: its ``spec_decode_acceptance`` record's where it has one,
    else its ``spec_decode_*`` metrics' (the rate from percent).

    Raises
    ------
    IngestError
        ``ingest.request_out_of_range`` naming the first request (its line) whose acceptance rate
        is outside [0, 1] or whose acceptance length is below 1, ``ingest.request_acceptance_length``
        the first whose length is above γ + 1.
    """
    columns = {column: np.where(np.isnan(read[f"own_{column}"]), read[f"reported_{column}"], read[f"own_{column}"])
               for column in _REQUEST_ACCEPTANCE}
    gamma = read["gamma"].copy()
    with np.errstate(over="ignore", invalid="ignore"):
        gamma[~(np.isfinite(gamma) & (gamma >= 0) & (gamma == np.round(gamma)))] = np.nan  # a draft length: whole
        rate, length = columns["acceptance_rate"], columns["acceptance_length"]
        checks = [("acceptance_rate", ~np.isnan(rate) & ~((rate >= 0) & (rate <= 1)), "ingest.request_out_of_range",
                   {"low": "0", "high": "1"}),
                  ("acceptance_length", ~np.isnan(length) & ~((length >= 1) & np.isfinite(length)),
                   "ingest.request_out_of_range",
                   {"low": "1", "high": "γ + 1"}),
                  ("acceptance_length", length > gamma + 1, "ingest.request_acceptance_length", None)]
    for column, bad, key, bounds in checks:
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            field_name, tag, _ = _REQUEST_ACCEPTANCE[column]
            own = not np.isnan(read[f"own_{column}"][i])
            raise IngestError(key, source.name, record=int(read["line"][i]),
                              field=f"spec_decode_acceptance.{field_name}" if own else f"metrics.{tag}.value",
                              value=f"{columns[column][i]:g}",
                              **(bounds or {"gamma": f"{gamma[i]:g}", "most": f"{gamma[i] + 1:g}"}))
    for column in ("drafts", "draft_tokens", "accepted_tokens"):
        columns[column][~(np.isfinite(columns[column]) & (columns[column] >= 0))] = np.nan
    columns["gamma"] = gamma
    return columns


def _pooled(numerator: np.ndarray, denominator: np.ndarray) -> float | None:
    """Σ numerator / Σ denominator over the requests that have both, or None without a denominator."""
    both = ~(np.isnan(numerator) | np.isnan(denominator))
    total = denominator[both].sum()
    return float(numerator[both].sum() / total) if total > 0 else None


def _parse_records(source: Source) -> Parsed:
    """One run of the profiling records: latency statistics computed as AIPerf computes them
    (numpy's linear percentiles), throughputs over the span from the first request's start to the
    last response (AIPerf's ``benchmark_duration``), acceptance pooled over requests (per position
    from their pooled histograms); the successful requests as rows, with their own acceptance. The
    file is read by DuckDB (:func:`_read_records`)."""
    source.charge_runs(1)
    read = _read_records(source)
    if read.first_stray is not None:
        raise IngestError("ingest.aiperf_record", source.name, record=read.first_stray)
    kept, failed = read.kept, read.failed
    n = len(kept["line"])
    if not n and not failed:
        raise IngestError("ingest.aiperf_warmup_only", source.name)
    with np.errstate(invalid="ignore"):
        columns = {name: np.where(kept[name] >= 0, kept[name], np.nan)
                   for name in ("ttft_ms", "itl_ms", "e2el_ms", "input_tokens", "output_tokens")}
    for column in columns.values():
        column[~np.isfinite(column)] = np.nan
    acceptance = _acceptance(source, kept)
    gammas = acceptance.pop("gamma")
    warnings: list[Notice] = []
    run = RunBuilder(warnings)
    # Sums past the largest float are inf (and inf / inf NaN): the builder refuses both.
    with np.errstate(over="ignore", invalid="ignore"):
        for name, short in (("ttft_ms", "ttft"), ("itl_ms", "itl"), ("e2el_ms", "e2el")):
            values = columns[name][~np.isnan(columns[name])]
            if values.size:
                run.set(f"mean_{short}_ms", float(values.mean()))
                for p, value in zip((50, 90, 99), np.percentile(values, [50, 90, 99])):
                    run.set(f"p{p}_{short}_ms", float(value))
        run.set("num_requests", n)
        run.set("failed_requests", failed)
        starts, ends = kept["start_ns"], kept["end_ns"]
        span = ends[np.isfinite(ends)].max(initial=-math.inf) - starts[np.isfinite(starts)].min(initial=math.inf)
        if 0 < span < math.inf:
            seconds = span / 1e9
            run.set("duration_s", seconds)
            run.set("request_throughput", n / seconds)
            if not np.isnan(columns["output_tokens"]).all():
                run.set("output_throughput", float(np.nansum(columns["output_tokens"])) / seconds)
        accepted = acceptance["accepted_tokens"]
        mean_accepted = _pooled(accepted, acceptance["drafts"])  # accepted drafts per verify step; +1 for the bonus
        run.set("acceptance_length", None if mean_accepted is None else 1 + mean_accepted,
                source="accepted draft tokens / verify steps")
        run.set("acceptance_rate", _pooled(accepted, acceptance["draft_tokens"]),
                source="accepted draft tokens / draft tokens")
    present = gammas[~np.isnan(gammas)]  # _agreed's answer, without a Python loop over 1M requests
    gamma = float(present[0]) if present.size and (present == present[0]).all() else None
    positions, zero = _histogram_figures(read.pooled, gamma)
    run.set("zero_accept_rate", zero, source="spec_decode_acceptance.acceptance_histogram")
    run.set("per_position_acceptance", positions, source="spec_decode_acceptance.acceptance_histogram")
    run.set("num_speculative_tokens", gamma, source="spec_decode_acceptance.num_spec_tokens")
    run.keep("records", read.lines)
    run.keep("warmup_records", read.warmup)
    if read.pooled:
        run.keep("pooled_spec_decode_acceptance_histogram", read.pooled)
    _apply_cell(run, cell_settings(source.name))
    measured = {name: column for name, column in acceptance.items() if not np.isnan(column).all()}
    requests = pd.DataFrame({"run_index": np.zeros(n, dtype=np.int64), **columns, **measured,
                             **({} if read.extra is None else {"extra": pd.arrays.ArrowExtensionArray(read.extra)})})
    return Parsed("aiperf", [run.build()], requests, warnings)


def parse(source: Source) -> Parsed:
    if not source.is_json:
        return _parse_csv(source)
    if claims(source):
        return _parse_records(source)
    docs = source.documents
    if docs and _is_record(docs[0]):
        return _parse_records(source)
    if len(docs) != 1:
        raise IngestError("ingest.one_document", source.name, format="aiperf", count=len(docs))
    if _is_sweep(docs[0]):
        return _parse_sweep(source, docs[0])
    if _is_aggregate(docs[0]):
        return _parse_aggregate(source, docs[0])
    if _is_server_metrics(docs[0]):
        return _parse_server_json(source, docs[0])
    source.charge_runs(1)
    warnings: list[Notice] = []
    return Parsed("aiperf", [_run(docs[0], warnings, cell_settings(source.name))], warnings=warnings)


def _aggregate_of(path: PurePath, present: set[PurePath]) -> PurePath | None:
    """The ``profile_export_aiperf_aggregate.json`` of the cell a repetition's file belongs to:
    ``<base>/profile_runs/trial_N/<cell>/`` (repeated) is aggregated in ``<base>/aggregate/<cell>/``,
    ``<cell>/profile_runs/trial_N/`` (independent) in ``<cell>/aggregate/``, and a run without a sweep,
    ``<base>/profile_runs/run_N/``, in ``<base>/aggregate/``."""
    parts = path.parts
    for i in range(len(parts) - 2):
        if parts[i] == "profile_runs" and _REPETITION.fullmatch(parts[i + 1]):
            root, cell = path.parents[len(parts) - 1 - i], parts[i + 2:-1]
            for candidate in (root.joinpath("aggregate", *cell, _AGGREGATE),
                              root.joinpath(*cell, "aggregate", _AGGREGATE)):
                if candidate in present:
                    return candidate
    return None


def left_out(files: list[PurePath]) -> dict[PurePath, tuple[str, PurePath]]:
    """The AIPerf files among the result files found under a folder that another file or folder
    already holds the runs of, each with why (a reason of :class:`specviz.results.importers.LeftOut`)
    and that holder, so that each run is imported once and a sweep's cell is one run:

    * ``aiperf_copy``: beside ``profile_export_aiperf.json``, its ``.csv`` (the same figures) and
      ``profile_export.jsonl`` (the same requests' run; imported on its own it adds their rows);
      beside ``server_metrics_export.json``, ``profile_export_aiperf_aggregate.json`` or the
      sweep's JSON, the CSV of the same;
    * ``aiperf_trial``: a repetition's files (``profile_runs/trial_N`` or ``run_N``) where the
      aggregate over the repetitions of its cell is there: the cell's run is the aggregate;
    * ``aiperf_sweep``: ``profile_export_aiperf_sweep.json`` (in ``<base>/sweep_aggregate/`` or
      ``<base>/aggregate/sweep_aggregate/``) where ``<base>`` holds a run of a cell read from its
      own files: the cells are read from those (the sweep's summary has no model, endpoint nor
      per-request rows).
    """
    present = set(files)
    left: dict[PurePath, tuple[str, PurePath]] = {}
    for path in files:
        beside = path.parent / _BESIDE.get(path.name, path.name)
        aggregate = _aggregate_of(path, present)
        if aggregate:
            left[path] = ("aiperf_trial", aggregate)
        elif beside != path and beside in present:
            left[path] = ("aiperf_copy", beside)
    cells = [p for p in files if p.name in _CELL_FILES and p not in left]
    for sweep in (p for p in files if p.name == _SWEEP and p not in left):
        base = sweep.parent.parent.parent if sweep.parent.parent.name == "aggregate" else sweep.parent.parent
        if any(cell.is_relative_to(base) for cell in cells):
            left[sweep] = ("aiperf_sweep", base)
    # A copy beside a file that is itself left out is read where that one is.
    return {path: (reason, left[holder][1] if holder in left else holder) for path, (reason, holder) in left.items()}


FORMAT = Format("aiperf", sniff, parse, claims)
