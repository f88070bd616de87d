"""``llmperf``: ray-project/llmperf's ``*_summary.json`` (``token_benchmark_ray.py``).

One flat object per file: ``results_<metric>_s_{mean,quantiles_p50,…}`` with times in seconds,
``num_concurrent_requests`` (the load), ``results_num_completed_requests_per_min``, counts that are
sometimes strings, the model under ``model`` and the client API under ``llm_api`` (an endpoint
type such as ``openai`` or ``litellm``, not the serving engine).

llmperf's ``inter_token_latency`` is not the gap between tokens: its clients append the time to the
first token to the gaps they sum, and ``token_benchmark_ray.py`` divides the sum by the output
tokens, so each request's figure is its end-to-end time per output token (the clients' own comment:
the sum "should be same as" the end-to-end latency). It is kept in the run's extra as the file
writes it, and the mean time per output token after the first is had from the means, over every
token of every request:

.. math:: \\overline{TPOT} = \\frac{\\sum_i (e2e_i - TTFT_i)}{\\sum_i (n_i - 1)}
          = \\frac{\\overline{e2e} - \\overline{TTFT}}{\\bar n - 1}

stored as the mean TPOT (vLLM's averages each request's own ratio; this one weighs requests by their
tokens). vLLM's ITL, the gaps between streamed chunks, is the same only where each chunk holds one
token, which speculation breaks. No percentile can be had.
"""

from __future__ import annotations

import math

from specviz.errors import Notice

from .base import Format, IngestError, Parsed, RunBuilder, number
from .source import Source

__all__ = ["FORMAT"]

_LATENCY = {"ttft": "ttft", "end_to_end_latency": "e2el"}


def sniff(source: Source) -> float:
    """0.9 for a JSON object with ``results_*`` keys and ``num_concurrent_requests``."""
    docs = source.documents
    doc = docs[0] if docs else None
    return 0.9 if (isinstance(doc, dict) and "num_concurrent_requests" in doc
                   and any(k.startswith("results_") for k in doc)) else 0.0


def parse(source: Source) -> Parsed:
    docs = source.documents
    if len(docs) != 1:
        raise IngestError("ingest.one_document", source.name, format="llmperf", count=len(docs))
    source.charge_runs(1)
    doc = docs[0]
    warnings: list[Notice] = []
    run = RunBuilder(warnings)
    run.set("label", doc.get("name"))
    run.set("target_model", doc.get("model"))
    run.set("endpoint", doc.get("llm_api"), source="llm_api")
    run.set("concurrency", doc.get("num_concurrent_requests"), source="num_concurrent_requests")
    run.set("num_requests", doc.get("results_num_completed_requests"), source="results_num_completed_requests")
    run.set("failed_requests", doc.get("results_number_errors"), source="results_number_errors")
    run.set("output_throughput", doc.get("results_mean_output_throughput_token_per_s"),
            source="results_mean_output_throughput_token_per_s")
    per_min = number(doc.get("results_num_completed_requests_per_min"))
    if per_min is not None:
        run.set("request_throughput", per_min / 60, source="results_num_completed_requests_per_min")
    for key, short in _LATENCY.items():
        for stat, suffix in (("mean", "mean"), ("p50", "quantiles_p50"), ("p90", "quantiles_p90"),
                             ("p99", "quantiles_p99")):
            name = f"results_{key}_s_{suffix}"
            run.set(f"{stat}_{short}_ms", doc.get(name), scale=1e3, source=name)  # seconds → ms
    # From the means the run kept (each checked above: finite, not below 0), over requests of two
    # tokens or more on average: fewer leave no gap to divide by.
    e2e, ttft = run.row.get("mean_e2el_ms"), run.row.get("mean_ttft_ms")
    tokens = number(doc.get("results_number_output_tokens_mean"))
    if None not in (e2e, ttft, tokens) and math.isfinite(tokens) and tokens >= 2 and e2e >= ttft:
        run.set("mean_tpot_ms", (e2e - ttft) / (tokens - 1), source="results_end_to_end_latency_s_mean")
    if any(key.startswith("results_inter_token_latency_s_") for key in doc):
        warnings.append(Notice("warn.llmperf_itl", tpot="—" if "mean_tpot_ms" not in run.row else f"{run.row['mean_tpot_ms']:,.1f}"))
    for key, value in doc.items():
        run.keep(key, value)
    return Parsed("llmperf", [run.build()], warnings=warnings)


FORMAT = Format("llmperf", sniff, parse)
