"""``aiperf``: the result files of NVIDIA AIPerf (genai-perf's successor), ``aiperf profile``: a
run's three, its sweeps' and repetitions' aggregates, and the server's metrics it exported.

Each kind of file is read by a module of its own, whose docstring gives the file's layout:
:mod:`.summary` (a run's ``profile_export_aiperf.json`` and ``.csv``, a sweep's and a
repetitions' aggregates), :mod:`.records` (the per-request ``profile_export.jsonl``) and
:mod:`.server` (``server_metrics_export.json`` and ``.csv``); :mod:`.runs` holds what they share
(units, the configuration's load and model, the acceptance histogram, a sweep cell's settings).
This module tells the files apart (:func:`sniff`, :func:`claims`), sends each to its reader
(:func:`parse`) and says which files of a folder repeat another's runs (:func:`left_out`).

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
import re
from pathlib import PurePath
from typing import Any

from ..base import Format, IngestError, Parsed, dig, normalise_name
from ..source import Source
from . import records, server, summary
from .runs import cell_settings

__all__ = ["FORMAT", "cell_settings", "left_out"]

_PERCENTILE = re.compile(r"p(\d+)")
_CONFIG_KEYS = {"phases", "models", "loadgen"}  # AIPerf's, in either configuration; not genai-perf's
_METADATA_KEYS = {"benchmark_phase", "request_start_ns", "session_num"}
# Where AIPerf writes the same run twice in one folder: a file → the file beside it that is read.
_AGGREGATE, _SWEEP = "profile_export_aiperf_aggregate.json", "profile_export_aiperf_sweep.json"
_BESIDE = {"profile_export_aiperf.csv": "profile_export_aiperf.json",
           "profile_export.jsonl": "profile_export_aiperf.json",
           "server_metrics_export.csv": "server_metrics_export.json",
           "profile_export_aiperf_aggregate.csv": _AGGREGATE, "profile_export_aiperf_sweep.csv": _SWEEP}
_CELL_FILES = {"profile_export_aiperf.json", "profile_export_aiperf.csv", "profile_export.jsonl", _AGGREGATE}
_REPETITION = re.compile(r"(?:trial|run)_\d+")


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
    if any(map(summary.SWEEP_COLUMN.fullmatch, cells)) or source.head.startswith(server.SERVER_CSV):
        return True
    percentiles = [int(m[1]) for m in map(_PERCENTILE.fullmatch, cells) if m]
    if cells[0] == "metric" and "std" in cells and len(percentiles) > 1 and percentiles == sorted(percentiles):
        return True
    return cells == ["metric", "value"] and "Request Throughput (requests/sec)" in source.head


def claims(source: Source) -> bool:
    """Whether the first line alone is an AIPerf per-request record: the registry then takes the
    file for AIPerf's without decoding it whole (a per-request file of 1M lines is 1.6 GB of JSON,
    and :func:`.records.parse_records` reads it with DuckDB)."""
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


def parse(source: Source) -> Parsed:
    """A file of AIPerf's, by its reader: the CSVs by their first line, JSON by its keys."""
    if not source.is_json:
        if any(map(summary.SWEEP_COLUMN.fullmatch, _first_cells(source))):
            return summary.parse_sweep_csv(source)
        if source.head.startswith(server.SERVER_CSV):
            return server.parse_csv(source)
        return summary.parse_csv(source)
    if claims(source):
        return records.parse_records(source)
    docs = source.documents
    if docs and _is_record(docs[0]):
        return records.parse_records(source)
    if len(docs) != 1:
        raise IngestError("ingest.one_document", source.name, format="aiperf", count=len(docs))
    if _is_sweep(docs[0]):
        return summary.parse_sweep(source, docs[0])
    if _is_aggregate(docs[0]):
        return summary.parse_aggregate(source, docs[0])
    if _is_server_metrics(docs[0]):
        return server.parse_json(source, docs[0])
    return summary.parse_summary(source, docs[0])


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
      ``profile_export.jsonl`` (the same requests' run; imported on its own it adds their rows, and
      joins the summary's run where that gives its first request's time:
      :mod:`specviz.results.store.repeats`);
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
