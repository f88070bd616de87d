"""``specforge-bench``: SpecForge's speculative benchmark over an SGLang server
(``benchmarks/bench_eagle3.py`` of sgl-project/SpecForge).

It starts SGLang once per setting of ``--config-list batch_size,steps,topk,num_draft_tokens``
(EAGLE3 with ``--speculative-num-steps steps``, ``--speculative-eagle-topk topk`` and
``--speculative-num-draft-tokens num_draft_tokens``; ``steps = 0`` starts no speculation at all,
the plain baseline), with ``--max-running-requests batch_size``, and runs each benchmark of
``--benchmark-list`` with ``batch_size`` requests at a time. Two shapes of its results file:

* JSON lines, one per setting and benchmark (2025): ``batch_size``, ``steps``, ``topk``,
  ``num_draft_tokens``, ``acc_length`` (tokens per verify step), ``duration`` (s),
  ``throughput`` (output tokens/s), ``completion_tokens`` and ``benchmark``;
* one JSON object (2026): ``model`` (the draft's path) and, per benchmark, a list of settings, each
  with ``batch_size``, ``steps``, ``topk``, ``num_draft_tokens``, ``num_samples`` and ``metrics``:
  one entry per repetition (``benchmarker/utils.py``'s ``BenchmarkMetrics``: ``latency`` (s),
  ``output_throughput``, ``accept_length``, ``accuracy``, ``num_questions`` and per-request
  lists such as ``per_request_accept_length``).

Each repetition of a setting is a run: concurrency ``batch_size``, γ ``steps`` (0 for the plain
baseline, which the explorer pairs with the speculative runs of the same batch and benchmark), the
workload the benchmark's name. A tree (``topk`` > 1) verifies ``num_draft_tokens`` tokens a step
where a chain verifies γ + 1: its label says so, and the fields the store has no column for
(``topk``, ``num_draft_tokens``, accuracy, the other per-request lists) are kept in ``extra``.
``per_request_accept_length`` becomes the run's requests, one acceptance length each (the
``requests`` table, schema 4); a length below 1 or above γ + 1 (more tokens a step than the γ drafts
and the target's own token) cannot come from the setting, and the file is refused, naming it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from specviz.errors import Notice
from specviz.results import extra

from .base import Format, IngestError, Parsed, RunBuilder, floats
from .source import Source

__all__ = ["FORMAT"]

_SETTING = ("batch_size", "steps", "topk", "num_draft_tokens")
# The flat lines' figures and the 2026 metrics' names for each column.
_FIGURES = {"acc_length": "acceptance_length", "accept_length": "acceptance_length", "duration": "duration_s",
            "latency": "duration_s", "throughput": "output_throughput", "output_throughput": "output_throughput",
            "num_questions": "num_requests"}


def _is_line(obj: Any) -> bool:
    return isinstance(obj, dict) and "steps" in obj and "batch_size" in obj and "acc_length" in obj


def _settings(doc: Any) -> dict[str, list[Any]]:
    """The 2026 shape's benchmarks: each key whose value is a list of settings with ``metrics``."""
    if not isinstance(doc, dict):
        return {}
    return {name: value for name, value in doc.items()
            if isinstance(value, list) and value and all(isinstance(s, dict) and "steps" in s and "metrics" in s
                                                         for s in value)}


def sniff(source: Source) -> float:
    """0.95 for lines with ``steps``, ``batch_size`` and ``acc_length``, or an object of benchmarks
    whose settings carry ``steps`` and ``metrics``."""
    docs = source.documents
    first = docs[0] if docs else None
    return 0.95 if _is_line(first) or (len(docs) == 1 and _settings(first)) else 0.0


def _run(setting: dict[str, Any], figures: dict[str, Any], benchmark: Any, draft: Any,
         warnings: list[Notice]) -> dict[str, Any]:
    run = RunBuilder(warnings)
    steps = setting.get("steps")
    run.set("engine", "sglang")
    run.set("workload", benchmark, source="benchmark")
    run.set("concurrency", setting.get("batch_size"), source="batch_size")
    run.set("num_speculative_tokens", steps, source="steps")
    if isinstance(steps, int) and steps > 0:
        # vLLM's spelling, as its importers store it: "EAGLE3" beside "eagle3" split one method in two
        # in the Explorer's filter.
        run.set("spec_method", "eagle3")
        run.set("draft_model", draft, source="model")
        # The draft setting as the Explorer writes it (explorer.draft_settings), so that a series and
        # its acceptance are named alike.
        run.set("label", f"eagle3 γ={steps}" + extra.tree_text(setting))
    for key, value in figures.items():
        column = _FIGURES.get(key)
        if column and value is not None:
            run.set(column, value, source=key)
        elif key not in (*_SETTING, "benchmark", "metrics", _PER_REQUEST):
            run.keep(key, value)
    for key in ("topk", "num_draft_tokens"):
        run.keep(key, setting.get(key))
    return run.build()


_PER_REQUEST = "per_request_accept_length"


def _request_lengths(name: str, metrics: dict[str, Any], steps: Any, record: int) -> np.ndarray:
    """A repetition's per-request acceptance lengths (NaN where an entry is not a number ≥ 0).

    Raises
    ------
    IngestError
        ``ingest.request_length_range`` for a length below 1 or above γ + 1 (γ = ``steps``).
    """
    values = metrics.get(_PER_REQUEST)
    lengths = floats([values]) if isinstance(values, list) else np.empty(0)
    most = steps + 1 if isinstance(steps, int) and not isinstance(steps, bool) and steps >= 0 else np.inf
    bad = (lengths < 1.0) | (lengths > most)
    if bad.any():
        raise IngestError("ingest.request_length_range", name, field=_PER_REQUEST, record=record,
                          value=float(lengths[bad][0]), most=float(most))
    return lengths


def parse(source: Source) -> Parsed:
    docs = source.documents
    warnings: list[Notice] = []
    runs = []
    if _is_line(docs[0]):
        source.charge_runs(len(docs))
        for index, line in enumerate(docs):
            if not _is_line(line):
                raise IngestError("ingest.record_shape", source.name, record=index + 1, format="specforge-bench")
            runs.append(_run(line, line, line.get("benchmark"), None, warnings))
        return Parsed("specforge-bench", runs, warnings=warnings)
    doc = docs[0]
    benchmarks = _settings(doc)
    source.charge_runs(sum(len(s["metrics"]) if isinstance(s["metrics"], list) else 1
                           for settings in benchmarks.values() for s in settings))
    lengths: list[np.ndarray] = []
    for name, settings in benchmarks.items():
        for index, setting in enumerate(settings):
            repetitions = setting["metrics"]
            if not isinstance(repetitions, list) or not all(isinstance(m, dict) for m in repetitions):
                raise IngestError("ingest.record_shape", source.name, record=index + 1, format="specforge-bench")
            for repetition, metrics in enumerate(repetitions):
                figures = {**metrics, "num_samples": setting.get("num_samples"), "repetition": repetition}
                lengths.append(_request_lengths(source.name, metrics, setting.get("steps"), index + 1))
                runs.append(_run(setting, figures, name, doc.get("model"), warnings))
    run_index = np.repeat(np.arange(len(lengths)), [len(one) for one in lengths])
    requests = pd.DataFrame({"run_index": run_index, "acceptance_length": np.concatenate([np.empty(0), *lengths])})
    return Parsed("specforge-bench", runs, requests=requests[requests["acceptance_length"].notna()],
                  warnings=warnings)


FORMAT = Format("specforge-bench", sniff, parse)
