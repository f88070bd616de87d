"""``inference-perf``: kubernetes-sigs/inference-perf's lifecycle reports (0.5).

A run writes ``stage_N_lifecycle_metrics.json`` for each stage of its load (each stage a request
rate held for a duration) and ``summary_lifecycle_metrics.json`` over all of them, each an object:
``benchmark_time_seconds``; ``load_summary`` (``count``, ``requested_rate`` and ``achieved_rate``
in requests/s, ``send_duration``; the summary has no rate); ``successes`` with ``count``,
``latency.{request_latency, time_to_first_token, time_per_output_token, inter_token_latency,
normalized_time_per_output_token}`` each ``{mean, min, max, median, p90, …}`` **in seconds**, and
``throughput.{output_tokens_per_sec, total_tokens_per_sec, requests_per_sec, …}``; and ``failures``
with ``count``. Source: the report-validation corpus of inference-perf 0.5.0
(``tests/reportgen/validation/corpus/full-runs/``).

Each stage file is a run at its requested rate; the files of one run folder share its name as their
label, so the explorer draws the stages as one line over rate. The summary is a run of its own,
labelled as all stages, with no load. Not read yet: ``per_request_lifecycle_metrics.json``,
``*_prometheus_metrics.json`` and the llm-d benchmark report (``*.partial.stage_N.yaml``).
"""

from __future__ import annotations

import re
from pathlib import PurePath

from specviz.errors import Notice

from .base import Format, Parsed, RunBuilder, Source, dig

__all__ = ["FORMAT"]

_LATENCIES = {"request_latency": "e2el", "time_to_first_token": "ttft", "time_per_output_token": "tpot",
              "inter_token_latency": "itl"}
_STATISTICS = {"mean": "mean", "median": "p50", "p50": "p50", "p90": "p90", "p99": "p99"}
_THROUGHPUTS = {"output_tokens_per_sec": "output_throughput", "total_tokens_per_sec": "total_token_throughput",
                "requests_per_sec": "request_throughput"}
_STAGE = re.compile(r"stage_(\d+)_lifecycle_metrics\.json")


def sniff(source: Source) -> float:
    """0.95 for one object with ``load_summary`` and ``successes``."""
    docs = source.documents
    return 0.95 if len(docs) == 1 and isinstance(docs[0], dict) and {"load_summary", "successes"} <= docs[0].keys() \
        else 0.0


def parse(source: Source) -> Parsed:
    doc = source.documents[0]
    source.charge_runs(1)
    warnings: list[Notice] = []
    run = RunBuilder(warnings)
    path = PurePath(source.name)
    stage = _STAGE.fullmatch(path.name)
    folder = path.parent.name or None
    run.set("label", (f"{folder} · all stages" if folder else "all stages") if not stage else folder)
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
    return Parsed("inference-perf", [run.build()], warnings=warnings)


FORMAT = Format("inference-perf", sniff, parse)
