"""``guidellm``: GuideLLM's ``benchmarks.json``, in every schema GuideLLM has written.

Read from GuideLLM's own source (github.com/vllm-project/guidellm, the tags named):

* 0.2-0.3 ``{"benchmarks": [...]}`` (``src/guidellm/benchmark/benchmark.py``, v0.3.1 commit
  121dcdc4): each benchmark has ``args.strategy``, ``worker`` (``backend_model``, ``backend_type``:
  the client's endpoint such as ``openai_http``, ``backend_target``), ``request_totals``,
  ``duration``, ``run_id``, ``id_``, ``metrics`` and ``requests``.
* 0.4 ``{"args", "benchmarks"}`` (``src/guidellm/benchmark/schemas/generative/report.py``,
  ``.../generative/benchmark.py``, ``.../schemas/base.py``, v0.4.0 commit f6175cdd): each benchmark
  has ``config`` (``id_``, ``run_id``, ``run_index``, ``strategy``, ``backend``: the backend's info
  with ``target`` and ``model``, ``requests``), ``metrics`` with ``request_totals`` inside it,
  ``duration`` and ``requests``; the report's ``args`` hold ``backend`` (the type), ``model``,
  ``target``.
* 0.5-0.6 add ``metadata`` = ``{version: 1, guidellm_version, python_version, platform}``
  (``.../generative/report.py``, v0.5.0 commit adfa108a); 0.6 (v0.6.0 commit a963ae97) moved
  ``args.model`` and ``args.target`` into ``args.backend_kwargs``.
* 0.7 and later ``{"metadata": {"version": 2, ...}, "config", "benchmarks"}``
  (``src/guidellm/benchmark/schemas/report.py``, ``entrypoints.py``, ``base.py``, the same from
  v0.7.0 commit c6389a57 to v0.7.3 commit 39383552 and main after it at ee7a7745): ``config`` is
  the scenario (``spec.backend`` = ``{kind: "openai_http", target, model, ...}``,
  ``metadata.labels``); each benchmark's ``config.backend`` is the backend's arguments, ``kind``
  among them.

In all of them the strategy's ``type_`` is ``synchronous``, ``concurrent`` (``streams``),
``throughput``, ``constant`` or ``poisson`` (``rate``), and from 0.7 ``trace`` (``time_scale``);
from 0.4 every strategy has a ``max_concurrency`` too, for rates a cap on requests in flight, not
the load (``src/guidellm/scheduler/strategies.py``). Metrics are distribution summaries split into
``successful``, ``errored``, ``incomplete`` and ``total``, each ``{mean, median, mode, variance,
std_dev, min, max, count, total_sum, percentiles: {p001, ..., p90, p99, p999}}``, ``p50`` among
the percentiles from 0.3 (``src/guidellm/objects/statistics.py`` in 0.2-0.3,
``src/guidellm/schemas/statistics.py`` from 0.4); a summary of no requests (``count`` 0) is all
zeros. Latencies are in ms but ``request_latency`` is in seconds.

``requests.successful`` holds sampled requests (``GenerativeTextResponseStats`` in 0.2-0.3,
``src/guidellm/schemas/request_stats.py`` from 0.4) with ``time_to_first_token_ms``,
``inter_token_latency_ms``, ``time_per_output_token_ms``, ``request_latency`` (s),
``prompt_tokens`` (0.4-0.5 also ``input_tokens``, which counts the prompt's image, audio and video
tokens too; 0.6 made ``prompt_tokens`` that count) and ``output_tokens``; a request that was not
streamed has no first-token time.

Refused with ``ingest.guidellm_schema``: GuideLLM 0.1 (a report of reports, no ``metrics``), a
``metadata.version`` other than 1 and 2, and benchmarks whose metrics are not split by status.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from specviz.errors import Notice

from .base import Format, IngestError, Parsed, RunBuilder, dig, floats
from .source import Source

__all__ = ["FORMAT"]

# The report schema versions GuideLLM writes in ``metadata.version`` (none before 0.5).
_METADATA_VERSIONS = (1, 2)
# GuideLLM's inter_token_latency_ms is each request's (last − first token) / (output tokens − 1), what
# vLLM calls TPOT; its time_per_output_token_ms divides by every output token, and from 0.4 counts the
# wait for the first token too (``schemas/request_stats.py``): no column of vLLM's, kept in extra. It
# writes no gaps between streamed chunks (vLLM's ITL).
_LATENCY = {"time_to_first_token_ms": ("ttft", 1.0), "inter_token_latency_ms": ("tpot", 1.0),
            "request_latency": ("e2el", 1e3)}
_OWN_TPOT = "time_per_output_token_ms"
_THROUGHPUT = {"requests_per_second": "request_throughput", "output_tokens_per_second": "output_throughput",
               "tokens_per_second": "total_token_throughput"}
# From 0.5, the streamed chunks too (``schemas/request_stats.py``): a request's chunks, its output tokens
# per chunk, and those after the first chunk per chunk after it, "output tokens (without first)" (on a
# server that sends each step's tokens in one chunk, the tokens a step gives: 1.0 without speculation,
# the acceptance length as the client saw it with).
_EXTRA_MEANS = {"request_concurrency": "measured_concurrency", "prompt_token_count": "mean_prompt_tokens",
                "output_token_count": "mean_output_tokens", "request_streaming_iterations_count": "mean_streamed_chunks",
                "output_tokens_per_iteration": "mean_output_tokens_per_chunk",
                "iter_tokens_per_iteration": "mean_output_tokens_per_later_chunk"}
# The distribution summaries read here: each must be split by request status.
_DISTRIBUTIONS = (*_LATENCY, _OWN_TPOT, *_THROUGHPUT, *_EXTRA_MEANS)
_RATE_STRATEGIES = ("constant", "poisson")
# Per-request columns: (field, scale to ms) of GuideLLM's request stats.
_REQUEST_FIELDS = {"ttft_ms": ("time_to_first_token_ms", 1.0), "tpot_ms": ("inter_token_latency_ms", 1.0),
                   "e2el_ms": ("request_latency", 1e3),
                   "output_tokens": ("output_tokens", 1.0)}
# Building the request rows, per request: six 8-byte columns in its run's frame, again in the
# concatenated frame, the list of references each column is read through and numpy's temporaries.
_REQUEST_BYTES = 256


def _is_guidellm(doc: Any) -> bool:
    """Whether a JSON document is a GuideLLM report: a ``benchmarks`` array and GuideLLM's version
    in ``metadata``, or a first benchmark with GuideLLM's marks (pytest-benchmark also writes a
    ``benchmarks`` array)."""
    benchmarks = doc.get("benchmarks") if isinstance(doc, dict) else None
    if not isinstance(benchmarks, list):
        return False
    if isinstance(dig(doc, "metadata").get("guidellm_version"), str):
        return True
    first = benchmarks[0] if benchmarks else None
    # "benchmarks" inside a benchmark: GuideLLM 0.1's report of reports, claimed to be refused clearly
    return isinstance(first, dict) and (first.get("type_") == "generative_benchmark"
                                        or "metrics" in first or "benchmarks" in first)


def sniff(source: Source) -> float:
    """0.9 for a GuideLLM report (see :func:`_is_guidellm`), else 0."""
    docs = source.documents
    return 0.9 if docs and _is_guidellm(docs[0]) else 0.0


def _check_schema(name: str, doc: dict[str, Any]) -> None:
    """Refuse a report whose ``metadata`` is not one of a schema version GuideLLM wrote."""
    if "metadata" not in doc:  # 0.2-0.4
        return
    version = dig(doc, "metadata").get("version")
    if type(version) is not int or version not in _METADATA_VERSIONS:  # True is not version 1
        raise IngestError("ingest.guidellm_schema", name)


def _split_metrics(bench: Any) -> dict[str, Any] | None:
    """A benchmark's ``metrics`` if they are of the known shape: an object in which at least one
    summary read here is present and each present one is split by request status; else None."""
    metrics = bench.get("metrics") if isinstance(bench, dict) else None
    if not isinstance(metrics, dict):
        return None
    # An object without "successful" is a summary of another schema; other odd values are data
    # errors, kept in extra with a notice by _part.
    present = [metrics[name] for name in _DISTRIBUTIONS if isinstance(metrics.get(name), dict)]
    return metrics if present and all("successful" in summary for summary in present) else None


def parse(source: Source) -> Parsed:
    """The runs of a GuideLLM report, one per benchmark, and the requests it lists.

    Raises
    ------
    IngestError
        ``ingest.guidellm_schema`` for a schema GuideLLM 0.2 to 0.7 did not write (see the module),
        ``ingest.one_document`` for more than one JSON document, ``ingest.no_runs`` for a report
        without benchmarks, ``ingest.memory`` where the runs
        and request rows would take more than ``SPECVIZ_IMPORT_MEMORY_BYTES``.
    """
    docs = source.documents
    if len(docs) != 1:
        raise IngestError("ingest.one_document", source.name, format="guidellm", count=len(docs))
    doc = docs[0]
    _check_schema(source.name, doc)
    benchmarks = doc["benchmarks"]
    if not benchmarks:
        raise IngestError("ingest.no_runs", source.name)
    source.charge_runs(len(benchmarks))
    metrics = [_split_metrics(bench) for bench in benchmarks]
    if any(m is None for m in metrics):
        raise IngestError("ingest.guidellm_schema", source.name)
    source.charge(_REQUEST_BYTES * sum(len(_successful_requests(bench)) for bench in benchmarks))
    warnings: list[Notice] = []
    runs = [_run(bench, bench_metrics, doc, warnings) for bench, bench_metrics in zip(benchmarks, metrics)]
    frames = [frame for index, bench in enumerate(benchmarks) if (frame := _requests(bench, index)) is not None]
    requests = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if frames and requests.ttft_ms.isna().any():  # non-streaming requests have no first token
        warnings.append(Notice("warn.ttft_missing"))
    return Parsed("guidellm", runs, requests, warnings)


def _part(run: RunBuilder, parent: dict[str, Any], key: str, source: str) -> dict[str, Any]:
    """The object ``parent[key]``, or {} where it is missing or null; any other value is kept in
    extra under ``source`` with a notice."""
    value = parent.get(key)
    if value is None or isinstance(value, dict):
        return value or {}
    run.warnings.append(Notice("warn.guidellm_not_object", source=source))
    run.keep(source, value)
    return {}


def _first(*values: Any) -> Any:
    """The first value that is not None (a field that moved between versions)."""
    return next((v for v in values if v is not None), None)


def _rate_text(rate: float) -> str:
    """A request rate for a label: four significant digits, written as Python writes a float."""
    return repr(float(f"{rate:.4g}"))


def _load(run: RunBuilder, strategy: dict[str, Any]) -> None:
    """The strategy's load and the run's label: concurrency for concurrent and synchronous runs,
    the rate for constant and poisson ones (their ``max_concurrency`` is a cap, kept in extra with
    the strategy), neither for throughput and trace runs."""
    kind = strategy.get("type_")
    if kind == "synchronous":
        run.set("concurrency", 1)
    elif kind == "concurrent":
        streams = "streams" if strategy.get("streams") is not None else "max_concurrency"
        run.set("concurrency", strategy.get(streams), source=f"strategy.{streams}")
    elif kind in _RATE_STRATEGIES:
        run.set("request_rate", strategy.get("rate"), source="strategy.rate")
    run.keep("strategy", strategy)
    if not isinstance(kind, str):
        return
    if "request_rate" in run.row:
        run.set("label", f"{kind} {_rate_text(run.row['request_rate'])} req/s")
    elif kind == "concurrent" and "concurrency" in run.row:
        run.set("label", f"{kind} {run.row['concurrency']:.10g}")
    else:
        run.set("label", kind)


def _run(bench: dict[str, Any], metrics: dict[str, Any], doc: dict[str, Any],
         warnings: list[Notice]) -> dict[str, Any]:
    run = RunBuilder(warnings)
    config = _part(run, bench, "config", "config")  # 0.4 and later
    args = _part(run, bench, "args", "args")  # 0.2-0.3
    worker = _part(run, bench, "worker", "worker")  # 0.2-0.3
    backend = _part(run, config, "backend", "config.backend")
    report_args = dig(doc, "args")  # 0.4-0.6
    spec_backend = dig(doc, "config", "spec", "backend")  # 0.7 and later
    _load(run, _part(run, config, "strategy", "config.strategy") or _part(run, args, "strategy", "args.strategy"))
    run.set("target_model", _first(backend.get("model"), worker.get("backend_model"), report_args.get("model"),
                                   dig(report_args, "backend_kwargs").get("model"), spec_backend.get("model")),
            source="model")
    # The backend type names the client's endpoint (openai_http), never the serving engine.
    run.set("endpoint", _first(backend.get("kind"), worker.get("backend_type"), spec_backend.get("kind"),
                               report_args.get("backend")), source="backend")
    totals = _part(run, metrics, "request_totals", "metrics.request_totals") or _part(
        run, bench, "request_totals", "request_totals")
    run.set("num_requests", totals.get("successful"), source="request_totals.successful")
    run.set("failed_requests", totals.get("errored"), source="request_totals.errored")
    run.set("duration_s", bench.get("duration"), source="duration")

    def successful(metric: str) -> dict[str, Any]:
        """The summary over successful requests; {} where it summarises none (GuideLLM writes
        zeros then, as for the first-token times of requests that were not streamed)."""
        summary = _part(run, _part(run, metrics, metric, f"metrics.{metric}"), "successful",
                        f"metrics.{metric}.successful")
        return {} if summary.get("count") == 0 else summary

    for metric, column in _THROUGHPUT.items():
        run.set(column, successful(metric).get("mean"), source=f"{metric}.mean")
    for metric, (short, scale) in _LATENCY.items():
        summary = successful(metric)
        percentiles = _part(run, summary, "percentiles", f"metrics.{metric}.successful.percentiles")
        median = _first(summary.get("median"), percentiles.get("p50"))
        for stat, value in (("mean", summary.get("mean")), ("p50", median), ("p90", percentiles.get("p90")),
                            ("p99", percentiles.get("p99"))):
            run.set(f"{stat}_{short}_ms", value, scale=scale, source=f"{metric}.{stat}")
    extras = {key: successful(metric).get("mean") for metric, key in _EXTRA_MEANS.items()}
    own = successful(_OWN_TPOT)
    if own:
        extras[_OWN_TPOT] = {"mean": own.get("mean"), "p50": _first(own.get("median"), dig(own, "percentiles").get("p50")),
                             **{p: dig(own, "percentiles").get(p) for p in ("p90", "p99")}}
    extras.update(
        incomplete_requests=totals.get("incomplete"),
        run_id=_first(config.get("run_id"), bench.get("run_id")),
        benchmark_id=_first(config.get("id_"), bench.get("id_")),
        run_index=config.get("run_index"),
        target=_first(backend.get("target"), worker.get("backend_target"), report_args.get("target"),
                      dig(report_args, "backend_kwargs").get("target"), spec_backend.get("target")),
        request_loader=_first(config.get("requests"), bench.get("request_loader")),
        guidellm_version=dig(doc, "metadata").get("guidellm_version"),
        labels=dig(doc, "config", "metadata").get("labels"))  # 0.7's --label
    for key, value in extras.items():
        if value is not None:  # another version's field
            run.keep(key, value)
    return run.build()


def _successful_requests(bench: Any) -> list[Any]:
    """The sampled successful requests of a benchmark (none where the array is missing)."""
    rows = dig(bench, "requests").get("successful")
    return rows if isinstance(rows, list) else []


def _requests(bench: Any, run_index: int) -> pd.DataFrame | None:
    """Per-request rows from ``requests.successful``, column by column: each column is read
    through one list of the values json already made (NaN where a value is not a number ≥ 0)."""
    rows = _successful_requests(bench)
    if not rows:
        return None

    def column(field: str, scale: float = 1.0) -> np.ndarray:
        return floats([[row.get(field) if isinstance(row, dict) else None for row in rows]], scale)

    columns = {name: column(field, scale) for name, (field, scale) in _REQUEST_FIELDS.items()}
    # 0.4-0.5 count the prompt's text tokens in prompt_tokens and all of them in input_tokens
    inputs = column("input_tokens")
    columns["input_tokens"] = np.where(np.isnan(inputs), column("prompt_tokens"), inputs)
    return pd.DataFrame({"run_index": np.full(len(rows), run_index), **columns})


FORMAT = Format("guidellm", sniff, parse)
