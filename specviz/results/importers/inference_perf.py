"""``inference-perf``: kubernetes-sigs/inference-perf's reports (0.5).

``stage_N_lifecycle_metrics.json`` and ``summary_lifecycle_metrics.json``
    A run writes one for each stage of its load (each stage a request rate held for a duration)
    and one over all of them, each an object: ``benchmark_time_seconds``; ``load_summary``
    (``count``, ``requested_rate`` and ``achieved_rate`` in requests/s, ``send_duration``; the
    summary has no rate); ``successes`` with ``count``, ``latency.{request_latency,
    time_to_first_token, time_per_output_token, inter_token_latency,
    normalized_time_per_output_token}`` each ``{mean, min, max, median, p90, …}`` **in seconds**,
    and ``throughput.{output_tokens_per_sec, total_tokens_per_sec, requests_per_sec, …}``; and
    ``failures`` with ``count``. Each stage file is a run at its requested rate; the files of one run
    folder share its name as their label, so the explorer draws the stages as one line over rate.
    The summary is a run of its own, labelled as all stages, with no load.
``per_request_lifecycle_metrics.json``
    A JSON array, a request each: ``start_time`` and ``end_time`` (seconds on the client's clock),
    ``request`` and ``response`` (the bodies as text), ``info`` (``input_tokens``; the response's
    ``output_tokens`` and ``output_token_times`` under ``response_metrics``, ``response_info``
    before it; ``lora_adapter``, ``labels``) and ``error`` (``{error_type, error_msg}`` or null).
    Each request is a row: TTFT is the first token's time less the start, TPOT the first to the
    last token over ``output_tokens - 1``, ITL the mean gap between token times, E2E latency the
    end less the start, all in ms, as inference-perf's ``summarize_requests`` computes them (TTFT,
    TPOT and ITL only for a streamed request of more than one token time); a failed request keeps
    its error in the row's ``extra``. The file is **one run of its own**, labelled as the folder's
    summary is (all stages), its figures computed from its successful requests as inference-perf
    computes the summary's (numpy's linear percentiles; ITL over every gap, not over each
    request's mean). It is not split into the stages' runs: no request records its stage (the
    writer drops ``stage_id``), the stage reports record no times to match the requests' against,
    and a file is read on its own, without the stage files beside it.
``summary_prometheus_metrics.json`` and ``stage_N_prometheus_metrics.json``
    The model server's own view of the run, from Prometheus (``summarize_prometheus_metrics``):
    the lifecycle report's shape with ``benchmark_time_seconds`` 0, ``load_summary`` and
    ``failures`` empty, and ``successes`` of ``count``, ``rate`` (requests/s), ``prompt_len`` and
    ``output_len`` (``mean`` tokens, ``rate`` tokens/s), ``request_latency``,
    ``time_to_first_token``, ``time_per_output_token`` and ``inter_token_latency`` as ``{mean,
    median, p90, p99}`` in seconds, and the server's other figures (``kv_cache_usage_percentage``,
    ``request_queue_time``, ``num_preemptions_total``, ``prefix_cache_hit_percent``, …), which are
    kept in ``extra``. Each is a run of its own, labelled as the server's (``folder · Prometheus``),
    so that the server's figures are never drawn as the client's.

Sources: kubernetes-sigs/inference-perf v0.5.0 (e250731c): ``inference_perf/reportgen/base.py``
(``summarize_requests``, ``summarize_prometheus_metrics``, ``generate_prometheus_metrics_report``,
the per-request report), ``inference_perf/apis/base.py``; the per-request shape of 2026
(``info.request_metrics``, ``info.response_metrics``) at 7de5ef2e; the report-validation corpus of
0.5.0 (``tests/reportgen/validation/corpus/full-runs/``). Not read: the llm-d benchmark report
(``*.partial.stage_N.yaml``).
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from specviz.errors import Notice

from .base import Format, IngestError, Parsed, RunBuilder, Source, dig, floats, number, request_extra

__all__ = ["FORMAT"]

_LATENCIES = {"request_latency": "e2el", "time_to_first_token": "ttft", "time_per_output_token": "tpot",
              "inter_token_latency": "itl"}
_STATISTICS = {"mean": "mean", "median": "p50", "p50": "p50", "p90": "p90", "p99": "p99"}
_THROUGHPUTS = {"output_tokens_per_sec": "output_throughput", "total_tokens_per_sec": "total_token_throughput",
                "requests_per_sec": "request_throughput"}
_STAGE = re.compile(r"stage_(\d+)_(?:lifecycle|prometheus)_metrics\.json")
_REQUEST_KEYS = frozenset({"start_time", "end_time", "info", "error"})
# Per request, beyond the decoded JSON the source has charged: the float columns, the token times
# read as floats, the DataFrame and the store's copy (as aiperf's records, measured there).
_REQUEST_BYTES = 256


def _is_report(doc: Any) -> bool:
    return isinstance(doc, dict) and {"load_summary", "successes"} <= doc.keys()


def _is_requests(doc: Any) -> bool:
    return isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict) and _REQUEST_KEYS <= doc[0].keys()


def sniff(source: Source) -> float:
    """0.95 for one object with ``load_summary`` and ``successes``, or an array of request records."""
    docs = source.documents
    return 0.95 if len(docs) == 1 and (_is_report(docs[0]) or _is_requests(docs[0])) else 0.0


def _label(path: PurePath, stage: re.Match | None, server: bool) -> str:
    """The folder's name (the run's), ``· Prometheus`` for the server's figures, ``· all stages``
    for a file over all of them."""
    parts = [path.parent.name] if path.parent.name else []
    parts += ["Prometheus"] if server else []
    parts += [] if stage else ["all stages"]
    return " · ".join(parts)


def _lifecycle(doc: dict[str, Any], run: RunBuilder, stage: re.Match | None) -> None:
    load = dig(doc, "load_summary")
    successes = dig(doc, "successes")
    run.set("request_rate", load.get("requested_rate"), source="load_summary.requested_rate")
    run.set("duration_s", doc.get("benchmark_time_seconds"), source="benchmark_time_seconds")
    run.set("num_requests", successes.get("count"), source="successes.count")
    run.set("failed_requests", dig(doc, "failures").get("count"), source="failures.count")
    for name, short in _LATENCIES.items():
        for statistic, value in dig(successes, "latency", name).items():
            if statistic in _STATISTICS:
                run.set(f"{_STATISTICS[statistic]}_{short}_ms", value, scale=1000.0,
                        source=f"successes.latency.{name}.{statistic}")
    for name, column in _THROUGHPUTS.items():
        run.set(column, dig(successes, "throughput").get(name), source=f"successes.throughput.{name}")
    run.keep("stage", int(stage[1]) if stage else "all")
    run.keep("achieved_rate", load.get("achieved_rate"))
    for key in ("prompt_tokens", "output_tokens", "token_count_mismatches"):
        if key in successes:
            run.keep(key, successes[key])


def _prometheus(doc: dict[str, Any], run: RunBuilder, stage: re.Match | None) -> None:
    """The server's figures: its latencies in ms, its counts and rates; the rest kept as they are
    (``benchmark_time_seconds`` is always 0 here, not a duration)."""
    successes = dig(doc, "successes")
    run.set("num_requests", successes.get("count"), source="successes.count")
    run.set("request_throughput", successes.get("rate"), source="successes.rate")
    run.set("output_throughput", dig(successes, "output_len").get("rate"), source="successes.output_len.rate")
    rates = [number(dig(successes, key).get("rate")) for key in ("prompt_len", "output_len")]
    if None not in rates:
        run.set("total_token_throughput", sum(rates), source="successes.prompt_len.rate + output_len.rate")
    for key, value in successes.items():
        if key in _LATENCIES and isinstance(value, dict):
            for statistic, seconds in value.items():
                if statistic in _STATISTICS:
                    run.set(f"{_STATISTICS[statistic]}_{_LATENCIES[key]}_ms", seconds, scale=1000.0,
                            source=f"successes.{key}.{statistic}")
        elif key not in ("count", "rate"):
            run.keep(key, value)
    run.keep("stage", int(stage[1]) if stage else "all")
    run.keep("report", "prometheus")


def _first_last(times: list[list[Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each request's first and last token time (NaN for none) and how many it has."""
    counts = np.fromiter(map(len, times), np.int64, len(times))
    values = floats(times)
    ends = np.cumsum(counts)
    has = counts > 0
    first, last = np.full(len(times), np.nan), np.full(len(times), np.nan)
    first[has], last[has] = values[(ends - counts)[has]], values[ends[has] - 1]
    return first, last, counts


def _gaps(times: list[list[Any]]) -> np.ndarray:
    """Every gap between a request's consecutive token times, over all requests, in seconds."""
    values = floats(times)
    gaps = np.diff(values)
    boundaries = np.cumsum(np.fromiter(map(len, times), np.int64, len(times)))[:-1] - 1
    keep = np.ones(gaps.size, bool)
    keep[boundaries[(boundaries >= 0) & (boundaries < gaps.size)]] = False
    gaps = gaps[keep]
    return gaps[np.isfinite(gaps) & (gaps >= 0)]


def _valid(values: np.ndarray) -> np.ndarray:
    """NaN where a value is not finite and ≥ 0 (a token before its request's start)."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(values) & (values >= 0), values, np.nan)


def _statistics(run: RunBuilder, short: str, values: np.ndarray) -> None:
    """Mean, p50, p90 and p99 (numpy's linear percentiles, as inference-perf's ``summarize``) of
    the values that are not NaN."""
    values = values[~np.isnan(values)]
    if values.size:
        run.set(f"mean_{short}_ms", float(values.mean()))
        for p, value in zip((50, 90, 99), np.percentile(values, [50, 90, 99])):
            run.set(f"p{p}_{short}_ms", float(value))


def _per_request(source: Source, records: list[Any]) -> Parsed:
    source.charge_runs(1)
    source.charge(_REQUEST_BYTES * len(records))
    for index, record in enumerate(records):
        if not (isinstance(record, dict) and _REQUEST_KEYS <= record.keys()):
            raise IngestError("ingest.request_record", source.name, record=index + 1, format="inference-perf",
                              keys=", ".join(sorted(_REQUEST_KEYS)))
    infos = [record["info"] if isinstance(record["info"], dict) else {} for record in records]
    responses = [dig(info, "response_metrics") or dig(info, "response_info") for info in infos]
    times = [r.get("output_token_times") if isinstance(r.get("output_token_times"), list) else [] for r in responses]
    n = len(records)
    start, end = (np.array([number(record[key]) for record in records], np.float64) for key in ("start_time", "end_time"))
    output = np.array([number(r.get("output_tokens")) for r in responses], np.float64)
    first, last, counts = _first_last(times)
    streamed = counts > 1
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        columns = {
            "ttft_ms": _valid(np.where(streamed, (first - start) * 1e3, np.nan)),
            "itl_ms": _valid(np.where(streamed, (last - first) / (counts - 1) * 1e3, np.nan)),
            "tpot_ms": _valid(np.where(streamed & (output > 1), (last - first) / (output - 1) * 1e3, np.nan)),
            "e2el_ms": _valid((end - start) * 1e3),
        }
    failed = np.array([record["error"] is not None for record in records], bool)
    input_tokens = _valid(np.array([number(info.get("input_tokens")) if "input_tokens" in info
                                    else number(dig(info, "request_metrics", "text").get("input_tokens"))
                                    for info in infos], np.float64))
    output = _valid(output)
    warnings: list[Notice] = []
    run = RunBuilder(warnings)
    run.set("label", _label(PurePath(source.name), None, server=False))
    run.set("num_requests", int((~failed).sum()))
    run.set("failed_requests", int(failed.sum()))
    starts, ends = start[np.isfinite(start)], end[np.isfinite(end)]
    span = float(ends.max() - starts.min()) if starts.size and ends.size else None
    run.set("duration_s", span, source="end_time - start_time")
    if span and span > 0:  # throughputs of the successful requests over the whole span, as the summary's
        run.set("request_throughput", (~failed).sum() / span)
        run.set("output_throughput", np.nansum(output[~failed]) / span)
        run.set("total_token_throughput", (np.nansum(output[~failed]) + np.nansum(input_tokens[~failed])) / span)
    for name, short in (("ttft_ms", "ttft"), ("tpot_ms", "tpot"), ("e2el_ms", "e2el")):
        _statistics(run, short, columns[name][~failed])
    _statistics(run, "itl", _gaps([t for t, bad in zip(times, failed) if not bad]) * 1e3)
    run.keep("stage", "all")
    run.keep("report", "per_request")
    extra = [request_extra({"error": record["error"], "lora_adapter": info.get("lora_adapter"),
                            "labels": info.get("labels")}) for record, info in zip(records, infos)]
    requests = pd.DataFrame({"run_index": np.zeros(n, np.int64), **columns, "input_tokens": input_tokens,
                             "output_tokens": output, "extra": extra})
    return Parsed("inference-perf", [run.build()], requests, warnings)


def parse(source: Source) -> Parsed:
    doc = source.documents[0]
    if isinstance(doc, list):
        return _per_request(source, doc)
    source.charge_runs(1)
    warnings: list[Notice] = []
    run = RunBuilder(warnings)
    path = PurePath(source.name)
    stage = _STAGE.fullmatch(path.name)
    server = "latency" not in dig(doc, "successes") and "request_latency" in dig(doc, "successes")
    run.set("label", _label(path, stage, server))
    (_prometheus if server else _lifecycle)(doc, run, stage)
    return Parsed("inference-perf", [run.build()], warnings=warnings)


FORMAT = Format("inference-perf", sniff, parse)
