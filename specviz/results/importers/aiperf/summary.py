"""AIPerf's summaries of a run, of a sweep and of repetitions: a run per file, or per combination
of a sweep.

``profile_export_aiperf.json``
    One object. Each metric is a block keyed by its tag (``time_to_first_token``,
    ``inter_token_latency`` (stored as TPOT: each request's (latency − TTFT) / (output tokens − 1)),
    ``inter_chunk_latency`` (stored as ITL: the gaps between streamed chunks, as vLLM's ITL),
    ``request_latency``, ``request_throughput``, ``output_token_throughput``,
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

Sources: as in :mod:`specviz.results.importers.aiperf`.
"""

from __future__ import annotations

import re
from typing import Any

from specviz.errors import Notice

from ..base import IngestError, Parsed, RunBuilder, check_run_count, dig, number, preview
from ..source import Source
# The same block reader as genai-perf's CSV, with its measured memory costs.
from ..genai_perf import metric_name, metric_rows
from .runs import MS, RATE, SECONDS, apply_cell, cell_settings, histogram_figures, set_config

# AIPerf's inter_token_latency is each request's (latency − TTFT) / (output tokens − 1), what vLLM calls
# TPOT; its inter_chunk_latency, the gaps between streamed chunks, is vLLM's ITL (with speculation a
# chunk holds several tokens, so the two differ by about the acceptance length).
_LATENCIES = {"time_to_first_token": "ttft", "inter_token_latency": "tpot", "inter_chunk_latency": "itl",
              "request_latency": "e2el"}
_STATS = {"avg": "mean", "p50": "p50", "p90": "p90", "p99": "p99"}
# Blocks whose ``avg`` is a run's value (rates are per second, counts whole).
_SCALARS = {"request_throughput": "request_throughput", "output_token_throughput": "output_throughput",
            "total_token_throughput": "total_token_throughput", "request_count": "num_requests",
            "error_request_count": "failed_requests"}
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
# A statistic flattened into its metric's key by AIPerf's aggregations (``time_to_first_token_p99``).
_FLATTENED = re.compile(r"(?P<tag>.+)_(?P<stat>avg|min|max|std|sum|p\d+)")
# A column of the sweep's CSV: a flattened statistic, then what over the trials.
SWEEP_COLUMN = re.compile(r"(?P<key>.+_(?:avg|min|max|std|sum|p\d+))_(?P<field>mean|std|min|max|cv)")
# AIPerf's display units of the tags a run's figures need a unit for (its JSON writes them; its CSVs
# name them in the header or, the sweep's, not at all).
_DISPLAY_UNITS = {**dict.fromkeys(_LATENCIES, "ms"), "benchmark_duration": "sec",
                  **dict.fromkeys(_ACCEPTANCE_RATE, "%")}


def _scale(tag: str, block: dict[str, Any], units: dict[str, float], warnings: list[Notice]) -> float | None:
    """The factor for a block's unit, or None (and a notice) for a unit not in ``units``."""
    unit = block.get("unit")
    scale = units.get(unit) if isinstance(unit, str) else None
    if scale is None:
        warnings.append(Notice("warn.aiperf_unit", source=tag, unit=preview(unit)))
    return scale


def _figures(run: RunBuilder, doc: dict[str, Any], warnings: list[Notice]) -> None:
    """A run's figures from metric blocks by tag beside other top-level keys (a summary, the CSV's
    rows read into the same shape, a sweep cell's or an aggregate's statistics by tag)."""
    blocks = {tag: block for tag, block in doc.items() if isinstance(block, dict)}
    for tag, short in _LATENCIES.items():
        scale = _scale(tag, blocks[tag], MS, warnings) if tag in blocks else None
        if scale is not None:
            for stat, canonical in _STATS.items():
                run.set(f"{canonical}_{short}_ms", blocks[tag].get(stat), scale, source=f"{tag}.{stat}")
    for tag, column in _SCALARS.items():
        run.set(column, dig(blocks, tag).get("avg"), source=f"{tag}.avg")
    if "benchmark_duration" in blocks:
        scale = _scale("benchmark_duration", blocks["benchmark_duration"], SECONDS, warnings)
        if scale is not None:
            run.set("duration_s", blocks["benchmark_duration"].get("avg"), scale, source="benchmark_duration.avg")
    length = next((t for t in _ACCEPTANCE_LENGTH if t in blocks), None)
    if length:
        run.set("acceptance_length", blocks[length].get("avg"), source=f"{length}.avg")
    rate = next((t for t in _ACCEPTANCE_RATE if t in blocks), None)
    scale = _scale(rate, blocks[rate], RATE, warnings) if rate else None
    if scale is not None:
        run.set("acceptance_rate", blocks[rate].get("avg"), scale, source=f"{rate}.avg")
    positions, zero = histogram_figures(doc.get("pooled_spec_decode_acceptance_histogram"))
    run.set("zero_accept_rate", zero, source="pooled_spec_decode_acceptance_histogram")
    run.set("per_position_acceptance", positions, source="pooled_spec_decode_acceptance_histogram")
    if "input_config" in blocks:
        set_config(run, blocks["input_config"])


def _run(doc: dict[str, Any], warnings: list[Notice], cell: dict[str, Any]) -> dict[str, Any]:
    """The run of a summary, every key kept in ``extra`` (the blocks whole), with its sweep cell's settings."""
    run = RunBuilder(warnings)
    _figures(run, doc, warnings)
    if (gpu := telemetry_gpu(doc.get("telemetry_data"))) is not None:
        run.set("gpu", gpu, source="telemetry_data")
    for key, value in doc.items():
        run.keep(key, value)
    apply_cell(run, cell)
    return run.build()


def telemetry_gpu(telemetry: Any) -> str | None:
    """The GPU of a run with GPU telemetry on (``telemetry_data.endpoints.<host>.gpus.<gpu>.gpu_name``,
    AIPerf 0.3: "NVIDIA RTX 6000 Ada Generation"), where every GPU it read has that one name; None
    otherwise (no telemetry, or GPUs of several names, which no one column can hold)."""
    endpoints = telemetry.get("endpoints") if isinstance(telemetry, dict) else None
    gpus = [gpu for endpoint in (endpoints.values() if isinstance(endpoints, dict) else ())
            if isinstance(endpoint, dict) and isinstance(endpoint.get("gpus"), dict)
            for gpu in endpoint["gpus"].values() if isinstance(gpu, dict)]
    names = {name.strip() for gpu in gpus if isinstance(name := gpu.get("gpu_name"), str)}
    return names.pop() if len(names) == 1 and "" not in names else None


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


def parse_sweep(source: Source, doc: dict[str, Any]) -> Parsed:
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
        apply_cell(run, {str(k).rsplit(".", 1)[-1]: v for k, v in combination["parameters"].items()})
        runs.append(run.build())
    return Parsed("aiperf", runs, warnings=warnings)


def parse_aggregate(source: Source, doc: dict[str, Any]) -> Parsed:
    """The one run of ``profile_export_aiperf_aggregate.json``: the mean over a cell's trials of each
    statistic, its load from the cell folder (the file names none)."""
    source.charge_runs(1)
    warnings: list[Notice] = []
    run = RunBuilder(warnings)
    _figures(run, _blocks(doc["metrics"]), warnings)
    for key, value in doc.items():
        run.keep(key, value)
    apply_cell(run, cell_settings(source.name))
    return Parsed("aiperf", [run.build()], warnings=warnings)


def parse_sweep_csv(source: Source) -> Parsed:
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
        fields = [SWEEP_COLUMN.fullmatch(name) for name in header]
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
    return parse_sweep(source, {"aggregation_type": "sweep", "per_combination_metrics": combinations})


def parse_csv(source: Source) -> Parsed:
    """``profile_export_aiperf.csv``: the metric rows into blocks by tag (a row of ``Metric,Value``
    into ``{unit, avg}``), read as the JSON is."""
    doc: dict[str, dict[str, Any]] = {}
    for header, row in metric_rows(source, "ingest.aiperf_csv_malformed"):
        if row is not None and header[0] == "metric" and len(row) >= 2:
            unit = _UNIT.search(row[0])
            tag = _CSV_TAGS.get(metric_name(row[0]), metric_name(row[0]))
            doc[tag] = {"unit": unit[1] if unit else None,
                        **{("avg" if h == "value" else h): number(v) for h, v in zip(header[1:], row[1:])}}
    if not doc:
        raise IngestError("ingest.aiperf_no_table", source.name)
    return parse_summary(source, doc)


def parse_summary(source: Source, doc: dict[str, Any]) -> Parsed:
    """The one run of ``profile_export_aiperf.json`` (or of its CSV's rows in the same shape)."""
    source.charge_runs(1)
    warnings: list[Notice] = []
    return Parsed("aiperf", [_run(doc, warnings, cell_settings(source.name))], warnings=warnings)
