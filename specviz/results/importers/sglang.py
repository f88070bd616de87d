"""``sglang-bench``: SGLang's ``python -m sglang.bench_serving --output-file``.

One JSON object per run, appended as JSON lines, with ``backend`` (the client: ``sglang``,
``sglang-oai``, ``vllm``, ``trt``, …), ``dataset_name``, ``request_rate`` (written by Python as a
bare ``Infinity`` for all at once), ``max_concurrency`` (the load) and ``concurrency`` (the mean
number of requests in flight, measured), ``{mean,median,std,p99}_{ttft,tpot,itl}_ms`` and
``…_e2e_latency_ms``, ``accept_length`` (the server's mean speculative acceptance length: tokens
per verify step; null without speculation) and ``server_info`` (the SGLang server's arguments:
``model_path``, ``version``, ``speculative_algorithm``, ``speculative_num_steps``,
``speculative_eagle_topk``, ``speculative_num_draft_tokens``, ``speculative_draft_model_path``,
``tp_size``). Source: sglang ``python/sglang/bench_serving.py`` (0.4 to 0.5.5).
"""

from __future__ import annotations

import re
from typing import Any

from specviz.errors import Notice

from .base import STATISTIC_PREFIXES, Format, IngestError, Parsed, RunBuilder
from .source import Source

__all__ = ["FORMAT", "engine_of"]

_LATENCY = re.compile(r"(mean|median|p90|p99)_(ttft|tpot|itl|e2e_latency)_ms")
_FIELDS = {"tag": "label", "dataset_name": "workload", "request_rate": "request_rate",
           "max_concurrency": "concurrency", "duration": "duration_s", "completed": "num_requests",
           "request_throughput": "request_throughput", "output_throughput": "output_throughput",
           "total_throughput": "total_token_throughput", "accept_length": "acceptance_length"}
# bench_serving's --backend prefixes that name the serving engine.
_ENGINES = (("sglang", "sglang"), ("vllm", "vllm"), ("lmdeploy", "lmdeploy"), ("trt", "trt-llm"))


def engine_of(backend: Any, server_info: Any) -> str | None:
    """The serving engine: SGLang wherever its ``server_info`` came back (only SGLang serves it),
    else the one the client backend is named after, else None."""
    if isinstance(server_info, dict) and server_info:
        return "sglang"
    if isinstance(backend, str):
        return next((engine for prefix, engine in _ENGINES if backend.lower().startswith(prefix)), None)
    return None


def sniff(source: Source) -> float:
    """0.95 for JSON whose first record has ``server_info`` or ``accept_length`` beside ``backend``."""
    docs = source.documents
    first = docs[0] if docs else None
    return 0.95 if isinstance(first, dict) and "backend" in first and (
        "server_info" in first or "accept_length" in first) else 0.0


def _run(obj: dict[str, Any], warnings: list[Notice]) -> dict[str, Any]:
    run = RunBuilder(warnings)
    info = obj.get("server_info")
    run.set("engine", engine_of(obj.get("backend"), info))
    run.set("endpoint", obj.get("backend"), source="backend")
    for key, value in obj.items():
        match = _LATENCY.fullmatch(key)
        column = (f"{STATISTIC_PREFIXES[match[1]]}_{'e2el' if match[2] == 'e2e_latency' else match[2]}_ms" if match
                  else _FIELDS.get(key))
        if column and value is not None:
            run.set(column, value, source=key)
        elif key == "concurrency":
            run.keep("measured_concurrency", value)  # mean requests in flight, not the load that was set
        elif key != "server_info":
            run.keep(key, value)
    if isinstance(info, dict):
        run.set("target_model", info.get("model_path"), source="server_info.model_path")
        run.set("engine_version", info.get("version"), source="server_info.version")
        algorithm = info.get("speculative_algorithm")  # "EAGLE3": stored in vLLM's case, as SpecForge's is
        # A null algorithm is the server saying it ran none: plain, not a run that says nothing (an
        # analyst's pass: it had been offered to be stated as speculative).
        if "speculative_algorithm" in info and algorithm is None:
            algorithm = "none"
        run.set("spec_method", algorithm.lower() if isinstance(algorithm, str) else algorithm,
                source="server_info.speculative_algorithm")
        run.set("draft_model", info.get("speculative_draft_model_path"),
                source="server_info.speculative_draft_model_path")
        # The draft's depth: tokens proposed in a chain per step (the tree's width is eagle_topk).
        run.set("num_speculative_tokens", info.get("speculative_num_steps"), source="server_info.speculative_num_steps")
        run.keep("server_info", info)
    elif info is not None:
        run.keep("server_info", info)
    return run.build()


def parse(source: Source) -> Parsed:
    docs = source.documents
    source.charge_runs(len(docs))
    warnings: list[Notice] = []
    runs = []
    for index, obj in enumerate(docs):
        if not isinstance(obj, dict) or "backend" not in obj or "completed" not in obj:
            raise IngestError("ingest.record_shape", source.name, record=index + 1, format="sglang-bench")
        runs.append(_run(obj, warnings))
    return Parsed("sglang-bench", runs, warnings=warnings)


FORMAT = Format("sglang-bench", sniff, parse)
