"""The server's metrics that AIPerf exported beside a run: a run per model of its speculative-decoding
counters.

``server_metrics_export.json``
    The server's Prometheus metrics during the run (``--server-metrics``): ``aiperf_version``,
    ``benchmark_id``, ``summary`` (``endpoints_configured``, ``endpoints_successful``, ``start_time``,
    ``end_time``), ``input_config`` and ``metrics`` by name, each ``{type, description, unit,
    series: [{endpoint_url, labels, stats, timeslices}]}``; a counter's ``stats`` are ``total`` (its
    increase over the profiling period, warmup excluded, a reset counted from zero), ``rate`` and
    the rates of its time slices, a gauge's ``avg``, ``min``, ``max``, ``std`` and percentiles.
    The spec-decode counters' increase is one live-style window over the run: each series' total
    (a gauge's mean) becomes one snapshot, every endpoint apart as an ``instance`` label, read by
    :func:`specviz.live.states.spec_decode_states` exactly as a scrape is, summed over replicas:
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


Sources: as in :mod:`specviz.results.importers.aiperf`.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any, Iterable

from specviz.errors import Notice, SpecvizError
from specviz.live import exposition
from specviz.live.states import spec_decode_states

from ..base import IngestError, Parsed, RunBuilder, check_run_count, dig, number
from ..source import Source
from ..genai_perf import metric_rows
from .runs import apply_cell, cell_settings, set_config

# The server's metrics: the statistic of each Prometheus type that is its value over the profiling
# period (a counter's increase, a gauge's mean; histograms are not read), and the statistics' columns
# of the CSV's sections (the other columns between Unit and Description are labels).
_SERVER_STATS = {"counter": "total", "gauge": "avg", "unknown": "avg"}
_SERVER_STAT_COLUMN = re.compile(r"total|rate(?:_avg|_min|_max|_std)?|avg|min|max|std|count(?:_rate)?|sum(?:_rate)?"
                                 r"|p\d+(?:_estimate)?")
SERVER_CSV = "# AIPerf Server Metrics Export"
_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_LABEL_ESCAPES = re.compile(r'[\\"\n]')
_ESCAPED = {"\\": "\\\\", '"': '\\"', "\n": "\\n"}


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
    period (what :func:`specviz.live.states.spec_decode_states` makes of one snapshot of them):
    acceptance rate and length, per position, zero-accept share, γ; load and model from the
    configuration, or the cell."""
    try:
        states = spec_decode_states(exposition.parse(text))
    except SpecvizError as exc:
        raise IngestError("ingest.aiperf_server_metrics", source.name, reason=Notice(exc.key, **exc.params)) from None
    check_run_count(source.name, len(states))
    source.charge_runs(len(states))
    warnings: list[Notice] = []
    runs = []
    for state in states:
        run = RunBuilder(warnings)
        set_config(run, config)
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
        apply_cell(run, cell_settings(source.name))
        runs.append(run.build())
        warnings += [n for n in state.notices if all((n.key, n.params) != (w.key, w.params) for w in warnings)]
    return Parsed("aiperf", runs, warnings=warnings)


def parse_json(source: Source, doc: dict[str, Any]) -> Parsed:
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


def parse_csv(source: Source) -> Parsed:
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
