"""``guidellm``: GuideLLM's ``benchmarks.json``.

Schema of GuideLLM 0.2-0.3: ``{"benchmarks": [...]}``, each benchmark with ``args.strategy``
(``type_``: synchronous, concurrent with ``streams``, throughput, constant or poisson with
``rate``), ``worker`` (``backend_model``, ``backend_type``: the endpoint, e.g. ``openai_http``),
``request_totals`` and ``metrics``: every metric a distribution summary split into ``successful``,
``errored``, ``incomplete`` and ``total`` (mean, median, ``percentiles``; latencies in ms but
``request_latency`` in seconds).
"""

from __future__ import annotations

from typing import Any

from ..errors import Notice
from .base import Format, IngestError, Parsed, RunBuilder, Source, dig

__all__ = ["FORMAT"]

_LATENCY = {"time_to_first_token_ms": ("ttft", 1.0), "inter_token_latency_ms": ("itl", 1.0),
            "time_per_output_token_ms": ("tpot", 1.0), "request_latency": ("e2el", 1e3)}


def sniff(source: Source) -> float:
    """0.9 for one JSON object with a ``benchmarks`` array."""
    docs = source.documents
    return 0.9 if len(docs) >= 1 and isinstance(docs[0], dict) and isinstance(docs[0].get("benchmarks"), list) else 0.0


def parse(source: Source) -> Parsed:
    docs = source.documents
    if len(docs) != 1:
        raise IngestError("ingest.one_document", source.name, format="guidellm", count=len(docs))
    benchmarks = docs[0]["benchmarks"]
    source.charge_runs(len(benchmarks))
    warnings: list[Notice] = []
    runs = []
    for bench in benchmarks:
        metrics = bench.get("metrics") if isinstance(bench, dict) else None
        if not isinstance(metrics, dict) or not all(
                isinstance(v, dict) and "successful" in v for v in metrics.values()):
            raise IngestError("ingest.guidellm_schema", source.name)
        runs.append(_run(bench, metrics, warnings))
    return Parsed("guidellm", runs, warnings=warnings)


def _run(bench: dict[str, Any], metrics: dict[str, Any], warnings: list[Notice]) -> dict[str, Any]:
    run = RunBuilder(warnings)

    def ok(metric: str) -> dict[str, Any]:
        return dig(metrics, metric, "successful")

    strategy = dig(bench, "args", "strategy")
    kind = strategy.get("type_")
    label = [v for v in (kind, strategy.get("rate") or strategy.get("streams")) if isinstance(v, (str, int, float))]
    run.set("label", " ".join(map(str, label)) or None)
    if kind == "synchronous":
        run.set("concurrency", 1)
    elif kind == "concurrent":
        run.set("concurrency", strategy.get("streams"), source="strategy.streams")
    if kind in ("constant", "poisson"):
        run.set("request_rate", strategy.get("rate"), source="strategy.rate")
    worker = dig(bench, "worker")
    run.set("target_model", worker.get("backend_model"))
    run.set("endpoint", worker.get("backend_type"))
    totals = dig(bench, "request_totals")
    run.set("num_requests", totals.get("successful"), source="request_totals.successful")
    run.set("failed_requests", totals.get("errored"), source="request_totals.errored")
    run.set("duration_s", bench.get("duration"), source="duration")
    run.set("request_throughput", ok("requests_per_second").get("mean"), source="requests_per_second")
    run.set("output_throughput", ok("output_tokens_per_second").get("mean"), source="output_tokens_per_second")
    run.set("total_token_throughput", ok("tokens_per_second").get("mean"), source="tokens_per_second")
    for metric, (short, scale) in _LATENCY.items():
        dist = ok(metric)
        pct = dig(dist, "percentiles")
        for stat, value in (("mean", dist.get("mean")), ("p50", dist.get("median")),
                            ("p90", pct.get("p90")), ("p99", pct.get("p99"))):
            run.set(f"{stat}_{short}_ms", value, scale=scale, source=f"{metric}.{stat}")
    run.keep("measured_concurrency", ok("request_concurrency").get("mean"))
    run.keep("run_id", bench.get("run_id"))
    run.keep("benchmark_id", bench.get("id_"))
    run.keep("request_loader", bench.get("request_loader"))
    return run.build()


FORMAT = Format("guidellm", sniff, parse)
