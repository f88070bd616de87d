"""``vllm-bench``: the result files of vLLM's serving benchmark.

``vllm bench serve --save-result`` (and ``benchmarks/benchmark_serving.py`` before it) writes one
JSON object per run; some scripts append them as JSON lines. ``vllm bench sweep serve`` (0.11.1 on,
``vllm/benchmarks/sweep/serve.py``) writes one folder per server × bench setting, named
``SERVE--k=v-…-BENCH--k=v-…``, holding ``run=N.json`` (the same object plus ``run_number`` and the
swept keys) and, once they all finished, ``summary.json`` (a JSON array of those objects); and above
the folders ``summary.csv`` (every run as a table). 0.33.0 adds ``warmup.json`` (``run_number`` -1,
left out of the summary) and ``run=N.failure.json`` for a failed run.
:func:`specviz.results.importers.folder_files` reads a folder's summary first and passes over the
rest but the run files; the store keeps each run once (a run file that repeats the summary is
skipped, naming it, one that contradicts it refused).

Keys, from vLLM's ``benchmarks/serve.py`` (0.9 to 0.25): ``{mean,median,std,pNN}_{ttft,tpot,itl,
e2el}_ms`` in ms; ``request_rate`` (``"inf"`` for all at once); ``max_concurrency`` (null when the
rate alone set the load); ``backend`` and ``endpoint_type`` (the client's request function: an
engine's name such as ``vllm`` or ``sglang``, or an endpoint type such as ``openai-chat``);
``spec_decode_acceptance_rate`` in percent, ``spec_decode_acceptance_length``,
``spec_decode_per_position_acceptance_rates`` as fractions; ``--save-detailed`` adds per-request
arrays ``ttfts`` and ``itls`` (seconds). ``--metadata k=v`` adds the user's own keys.
"""

from __future__ import annotations

import itertools
import re
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from specviz.errors import Notice

from .base import (PERCENT, STATISTIC_PREFIXES, Format, IngestError, Parsed, RunBuilder, floats, number, preview,
                   request_column)
from .source import Source

__all__ = ["FORMAT", "ENGINES", "engine_of", "sweep_settings"]

# vLLM's --backend names that are serving engines (the others name an endpoint type).
ENGINES = {"vllm": "vllm", "sglang": "sglang", "tgi": "tgi", "lmdeploy": "lmdeploy",
           "deepspeed-mii": "deepspeed-mii", "tensorrt-llm": "trt-llm", "trt-llm": "trt-llm",
           "scalellm": "scalellm", "llama.cpp": "llama.cpp"}

_LATENCY = re.compile(r"(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)_ms")
_FIELDS = {
    "label": "label", "model_id": "target_model", "request_rate": "request_rate",
    "max_concurrency": "concurrency", "duration": "duration_s", "completed": "num_requests",
    "failed": "failed_requests", "request_throughput": "request_throughput",
    "output_throughput": "output_throughput", "total_token_throughput": "total_token_throughput",
    "spec_decode_acceptance_length": "acceptance_length",
    "spec_decode_per_position_acceptance_rates": "per_position_acceptance",
    # common --metadata keys (the user chooses them; these names are the obvious ones)
    "gpu": "gpu", "workload": "workload", "temperature": "temperature", "draft_model": "draft_model",
    "spec_method": "spec_method", "num_speculative_tokens": "num_speculative_tokens",
    "engine": "engine", "engine_version": "engine_version", "vllm_version": "engine_version",
}
_MARKERS = {"request_throughput", "output_throughput", "mean_ttft_ms", "completed"}
_DETAIL = {"ttfts", "itls", "input_lens", "output_lens", "generated_texts", "errors", "start_times"}
# Another tool's keys: SGLang's bench_serving writes most of vLLM's keys too.
_FOREIGN = {"server_info", "accept_length", "mean_e2e_latency_ms"}
# Building a request's row from the --save-detailed arrays and storing it, beyond the decoded JSON
# that Source.documents charged: measured with VmHWM over 1.1M requests with empty ITL lists
# (tests/test_store.py), 357-369 MB taken against 296 MB charged for the JSON and the run, about
# 65 B a request; charged twice that.
_REQUEST_BYTES = 128
_SWEEP_FOLDER = re.compile(r"(?:SERVE--(?P<serve>.*?))?-?(?:BENCH--(?P<bench>.*))?")
_SWEEP_KEY = re.compile(r"-(?=[A-Za-z_][A-Za-z0-9_.]*=)")


def engine_of(name: Any) -> str | None:
    """The serving engine a benchmark's backend name stands for, or None for an endpoint type."""
    return ENGINES.get(name.strip().lower()) if isinstance(name, str) else None


def sweep_settings(file_name: str) -> dict[str, dict[str, Any]]:
    """The swept settings in the folder name of a ``vllm bench sweep`` run: ``{"serve": {k: v},
    "bench": {k: v}}`` from ``…/SERVE--max_num_seqs=4-BENCH--max_concurrency=2/run=0.json``
    (numbers as numbers); empty if the file is not in such a folder."""
    parts = PurePath(file_name.replace("\\", "/")).parts
    folder = parts[-2] if len(parts) > 1 else ""
    match = _SWEEP_FOLDER.fullmatch(folder) if folder.startswith(("SERVE--", "BENCH--")) else None
    if not match:
        return {}
    settings: dict[str, dict[str, Any]] = {}
    for side in ("serve", "bench"):
        pairs = [item.partition("=") for item in _SWEEP_KEY.split(match[side] or "") if "=" in item]
        values = {key: (number(value) if number(value) is not None else value) for key, _, value in pairs}
        if values:
            settings[side] = values
    return settings


def _run(obj: dict[str, Any], sweep: dict[str, dict[str, Any]], warnings: list[Notice]) -> dict[str, Any]:
    run = RunBuilder(warnings)
    for key, value in obj.items():
        match = _LATENCY.fullmatch(key)
        if match and match[1] in STATISTIC_PREFIXES and value is not None:
            run.set(f"{STATISTIC_PREFIXES[match[1]]}_{match[2]}_ms", value, source=key)
            continue
        if key == "spec_decode_acceptance_rate" and value is not None:
            run.set("acceptance_rate", value, scale=PERCENT, source=key)  # vLLM writes a percentage
            continue
        if key in ("backend", "endpoint_type") and isinstance(value, str):
            if "engine" not in obj:
                run.set("engine", engine_of(value), source=key)
            if key == "endpoint_type" or "endpoint_type" not in obj:
                run.set("endpoint", value, source=key)
            run.keep(key, value)
            continue
        if key in _DETAIL:
            continue
        column = _FIELDS.get(key)
        if column and value is not None:
            run.set(column, value, source=key)
        if not column or value is None:
            run.keep(key, value)
    if sweep:
        run.keep("sweep", sweep)
    if run.row.get("per_position_acceptance") and "num_speculative_tokens" not in run.row:
        run.set("num_speculative_tokens", len(run.row["per_position_acceptance"]))
    return run.build()


def _requests(obj: dict[str, Any], run_index: int) -> pd.DataFrame | None:
    """Per-request rows from ``--save-detailed`` arrays (``ttfts`` in seconds, ``itls`` a list of
    per-token gaps in seconds for each request), built column by column: a few numbers per token
    and per request, and no Python object for either."""
    ttfts = obj.get("ttfts")
    if not isinstance(ttfts, list):
        return None
    n = len(ttfts)
    itls = obj.get("itls") if isinstance(obj.get("itls"), list) else []
    per_request = [x if isinstance(x, list) else () for x in itertools.islice(itls, n)]
    lengths = np.fromiter(map(len, per_request), np.int64, len(per_request))
    gaps = floats(per_request, 1e3)
    valid = ~np.isnan(gaps)
    gaps[~valid] = 0.0
    # Sums over each request's slice; reduceat needs the slices that are not empty.
    has_gaps = lengths > 0
    starts = (np.cumsum(lengths) - lengths)[has_gaps]
    itl_ms = np.full(n, np.nan)
    if starts.size:
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # 0/0: no valid gap
            itl_ms[:len(per_request)][has_gaps] = (np.add.reduceat(gaps, starts)
                                                   / np.add.reduceat(valid, starts, dtype=np.int64))
    itl_ms[~np.isfinite(itl_ms)] = np.nan
    return pd.DataFrame({"run_index": np.full(n, run_index), "ttft_ms": request_column(ttfts, n, 1e3),
                         "itl_ms": itl_ms, "input_tokens": request_column(obj.get("input_lens"), n, most=_TOKENS_MOST),
                         "output_tokens": request_column(obj.get("output_lens"), n, most=_TOKENS_MOST)})


# The most tokens a request's prompt or output may have (an attack pass: output_lens of 1e308 was stored).
_TOKENS_MOST = 1e8
_UNREAD = ("warn.request_not_list", "warn.request_values_dropped")
# The per-request arrays read into a column each.
_REQUEST_ARRAYS = {"ttfts": "ttft_ms", "input_lens": "input_tokens", "output_lens": "output_tokens"}


def _warn_unread(obj: dict[str, Any], frame: pd.DataFrame | None, warnings: list[Notice]) -> None:
    """A warning, once per file and array, where a per-request array is no list (its requests have
    none of its values; for ``ttfts``, no per-request row is read) or holds values that are no finite
    number from 0 (to :data:`_TOKENS_MOST` for a count of tokens), left empty: an attack pass had
    found ``ttfts: "abc"`` giving no rows, and negative ``input_lens`` emptied, without a word. A
    missing or negative TTFT (vLLM's -1 for a failed request) is ``warn.ttft_missing``'s."""
    for key, column in _REQUEST_ARRAYS.items():
        values = obj.get(key)
        if values is None or any(w.params.get("field") == key for w in warnings if w.key in _UNREAD):
            continue
        if not isinstance(values, list):
            warnings.append(Notice("warn.request_not_list", field=key, value=repr(preview(values))))
        elif frame is not None and key != "ttfts":  # a failed request's -1 is warn.ttft_missing's
            given = sum(value is not None for value in values[:len(frame)])
            if dropped := given - int(frame[column].notna().sum()):
                warnings.append(Notice("warn.request_values_dropped", field=key, count=dropped))


def sniff(source: Source) -> float:
    """0.8 for JSON whose first record has vLLM's result keys (not as metric objects with units) and none of another tool's."""
    records = source.records
    first = records[0] if records else None
    if not isinstance(first, dict) or _FOREIGN & first.keys():
        return 0.0
    # genai-perf and AIPerf write request_throughput too, as an object with a unit
    markers = _MARKERS & first.keys()
    return 0.8 if markers and not any(isinstance(first[k], dict) and "unit" in first[k] for k in markers) else 0.0


def _warn_uneven(obj: dict[str, Any], requests: int, warnings: list[Notice]) -> None:
    """A warning, once per file, where a per-request array is longer or shorter than ``ttfts``: its
    values past the requests are not read, and the requests past its end have none (they were,
    without a word)."""
    uneven = [f"{key} ({len(obj[key]):,})" for key in ("itls", "input_lens", "output_lens")
              if isinstance(obj.get(key), list) and len(obj[key]) != requests]
    if uneven and not any(w.key == "warn.request_lengths" for w in warnings):
        warnings.append(Notice("warn.request_lengths", requests=requests, arrays=", ".join(uneven)))


def parse(source: Source) -> Parsed:
    records = source.records
    source.charge_runs(len(records))
    source.charge(_REQUEST_BYTES * sum(len(obj["ttfts"]) for obj in records
                                       if isinstance(obj, dict) and isinstance(obj.get("ttfts"), list)))
    sweep = sweep_settings(source.name)
    warnings: list[Notice] = []
    runs, frames = [], []
    for index, obj in enumerate(records):
        if not isinstance(obj, dict) or not (_MARKERS & obj.keys()):
            raise IngestError("ingest.record_shape", source.name, record=index + 1, format="vllm-bench")
        runs.append(_run(obj, sweep, warnings))
        frame = _requests(obj, index)
        _warn_unread(obj, frame, warnings)
        if frame is not None:
            frames.append(frame)
            _warn_uneven(obj, len(frame), warnings)
    requests = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if frames and requests.ttft_ms.isna().any():
        warnings.append(Notice("warn.ttft_missing"))
    return Parsed("vllm-bench", runs, requests, warnings)


FORMAT = Format("vllm-bench", sniff, parse)
