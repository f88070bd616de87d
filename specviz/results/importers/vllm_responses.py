"""``vllm-responses``: vLLM's OpenAI responses with each request's speculative-decoding acceptance.

A vLLM server started with ``--per-request-spec-decode-metrics summary`` (or ``detailed``) adds to
each single-sequence response (``n == 1``; a streamed one in its final usage chunk) an object
``metrics.speculative_decoding``: ``mean_acceptance_length`` (tokens a verify step emitted, the bonus
token included: ``1 + num_accepted_draft_tokens / num_spec_steps``), ``draft_acceptance_rate``
(``num_accepted_draft_tokens / num_draft_tokens``, a fraction), ``acceptance_histogram`` (index
``j``: the steps that accepted exactly ``j`` draft tokens, ``num_spec_tokens + 1`` long),
``num_spec_steps``, ``num_accepted_draft_tokens``, ``num_draft_tokens``, ``num_spec_tokens`` (γ,
the most draft tokens a step); ``detailed`` adds ``per_step_accepted`` and ``per_step_drafted``; the
documentation of later versions adds ``acceptance_histogram_by_draft_length`` (``{k: [k + 1
counts]}``). It is null for ``n > 1``. The same ``metrics`` object holds the server's timings
(``time_to_first_token_ms`` from scheduling, ``generation_time_ms``, ``queue_time_ms``,
``mean_itl_ms``, ``tokens_per_second``).

A file is the responses a client saved, one JSON object a line (or one JSON array of them): one run,
each response a request row with ``drafts`` (``num_spec_steps``), ``draft_tokens``,
``accepted_tokens``, ``acceptance_rate``, ``acceptance_length``, ``input_tokens`` and
``output_tokens`` (``usage``), ``tpot_ms`` (the server's ``mean_itl_ms``: the first to the last
token over the tokens after the first, vLLM's TPOT), and in its ``extra`` the histograms, γ, the
per-step arrays, the response ``id`` and the server's other timings; an error response
(``{"error": {message, type, param, code}}``, ``{"object": "error", …}`` before) is a failed
request. The run's model is the
responses' ``model``, its γ their ``num_spec_tokens``, and its acceptance pooled over the requests
the way vLLM's own aggregate is, token-weighted rather than a mean of each request's rate::

    acceptance_rate   = Σ num_accepted_draft_tokens / Σ num_draft_tokens
    acceptance_length = 1 + Σ num_accepted_draft_tokens / Σ num_spec_steps
    per position p    = Σ_requests Σ_{j ≥ p} acceptance_histogram[j] / Σ num_spec_steps
    zero_accept_rate  = Σ acceptance_histogram[0] / Σ num_spec_steps

(vLLM's ``vllm:spec_decode_num_accepted_tokens_total / …num_draft_tokens_total`` and ``1 + …
/ …num_drafts_total``, as ``vllm bench serve`` computes ``spec_decode_acceptance_rate`` and
``spec_decode_acceptance_length`` in ``vllm/benchmarks/serve.py`` of 0.33.0; a step that accepted
``j`` tokens accepted positions 1 to ``j``, so the histograms' tail sums are its
``…num_accepted_tokens_per_pos_total``; the documentation says the per-request sums reconcile with
those counters.) A request whose figures no step could give is refused with the file: a rate outside
0 to 1, a length below 1 or above γ + 1, a count that is negative or not whole.

Sources: vllm-project/vllm PR #48915 (merged 2026-07, after 0.28.0), read in vLLM 0.33.0:
``vllm/entrypoints/generate/base/protocol.py`` (``SpeculativeDecodingMetrics``,
``PerRequestMetrics``), ``vllm/v1/metrics/stats.py`` (``RequestSpecDecodeMetrics.to_dict``),
``vllm/entrypoints/generate/base/serving.py`` (``build_per_request_timing_metrics``),
``vllm/entrypoints/serve/engine/protocol.py`` (``ErrorResponse``); and the
documentation page ``docs/features/speculative_decoding/acceptance_metrics.md``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from specviz.errors import Notice
from specviz.model import spec

from .base import Format, IngestError, Parsed, RunBuilder, dig, number, request_extra
from .source import Source

__all__ = ["FORMAT"]

# Request column ← key of metrics.speculative_decoding.
_COUNTS = {"drafts": "num_spec_steps", "draft_tokens": "num_draft_tokens",
           "accepted_tokens": "num_accepted_draft_tokens"}
# Kept in a request's extra: the spec-decode object's other keys, the server's other timings.
_SPEC_EXTRA = ("num_spec_tokens", "acceptance_histogram", "acceptance_histogram_by_draft_length", "per_step_accepted",
               "per_step_drafted")
_TIMING_EXTRA = ("time_to_first_token_ms", "generation_time_ms", "queue_time_ms", "tokens_per_second")
# Per request, beyond the decoded JSON: the float columns, the extra text, the DataFrame, the store's copy.
_REQUEST_BYTES = 512


def _is_response(record: Any) -> bool:
    return isinstance(record, dict) and "speculative_decoding" in dig(record, "metrics")


def sniff(source: Source) -> float:
    """0.9 for JSON whose first record is an object with ``metrics.speculative_decoding``."""
    records = source.records
    return 0.9 if records and _is_response(records[0]) else 0.0


def _column(objects: list[dict[str, Any]], key: str) -> np.ndarray:
    """``key`` of each object as a float, NaN where it is missing or no number."""
    return np.array([number(o.get(key)) for o in objects], np.float64)


def _refuse(source: Source, bad: np.ndarray, values: np.ndarray, field: str, key: str, **bounds: Any) -> None:
    """Error ``key`` naming the first request where ``bad`` holds, its field, its value and the
    bounds it broke (each a number, or an array of one per request)."""
    if bad.any():
        first = int(np.argmax(bad))
        params = {name: f"{bound[first]:g}" if isinstance(bound, np.ndarray) else bound for name, bound in bounds.items()}
        raise IngestError(key, source.name, record=first + 1, field=f"metrics.speculative_decoding.{field}",
                          value=f"{values[first]:g}", **params)


def _check(source: Source, columns: dict[str, np.ndarray], gamma: np.ndarray) -> None:
    """Refuse figures no verify step could give (NaN is a figure not given, and passes)."""
    with np.errstate(invalid="ignore"):
        for key, values in {**{key: columns[column] for column, key in _COUNTS.items()}, "num_spec_tokens": gamma}.items():
            _refuse(source, (values < 0) | np.isinf(values) | (np.isfinite(values) & (values != np.round(values))),
                    values, key, "ingest.request_count")
        accepted = columns["accepted_tokens"]
        _refuse(source, accepted > columns["draft_tokens"], accepted, "num_accepted_draft_tokens",
                "ingest.request_out_of_range", low=0, high=columns["draft_tokens"])
        rate = columns["acceptance_rate"]
        _refuse(source, (rate < 0) | (rate > 1), rate, "draft_acceptance_rate", "ingest.request_out_of_range",
                low=0, high=1)
        length = columns["acceptance_length"]
        _refuse(source, length < 1, length, "mean_acceptance_length", "ingest.request_out_of_range", low=1,
                high="γ + 1")
        _refuse(source, length > gamma + 1, length, "mean_acceptance_length", "ingest.request_acceptance_length",
                gamma=gamma, most=gamma + 1)


def _histogram(specs: list[dict[str, Any]], gamma: int) -> np.ndarray | None:
    """The requests' acceptance histograms summed (``gamma + 1`` counts), or None where one is
    missing or of another length: then the steps by accepted count are not all known."""
    rows = [s.get("acceptance_histogram") for s in specs if s]
    if not rows or any(not isinstance(r, list) or len(r) != gamma + 1 for r in rows):
        return None
    counts = np.array([[number(x) for x in r] for r in rows], np.float64)
    if np.isnan(counts).any() or (counts < 0).any():
        return None
    with np.errstate(over="ignore"):  # counts past a float's range: infinite, and said by the caller
        return counts.sum(axis=0)


def _acceptance(run: RunBuilder, specs: list[dict[str, Any]], columns: dict[str, np.ndarray], gammas: np.ndarray) -> None:
    """The run's acceptance, token-weighted over the requests that have both counts (see the module)."""
    accepted, drafted, steps = columns["accepted_tokens"], columns["draft_tokens"], columns["drafts"]
    both = ~(np.isnan(accepted) | np.isnan(drafted))
    if drafted[both].sum() > 0:
        run.set("acceptance_rate", accepted[both].sum() / drafted[both].sum(),
                source="Σ num_accepted_draft_tokens / Σ num_draft_tokens")
    both = ~(np.isnan(accepted) | np.isnan(steps))
    if steps[both].sum() > 0:
        run.set("acceptance_length", 1 + accepted[both].sum() / steps[both].sum(),
                source="1 + Σ num_accepted_draft_tokens / Σ num_spec_steps")
    known = np.unique(gammas[~np.isnan(gammas)])
    if known.size == 1:
        run.set("num_speculative_tokens", known[0], source="num_spec_tokens")
        histogram = _histogram(specs, int(known[0]))
        with np.errstate(over="ignore"):
            total = 0.0 if histogram is None else float(histogram.sum())
        if not np.isfinite(total):
            # Counts that sum past a float's range (an attack pass: the warning had named
            # 'np.float64(nan)', a figure of specviz's own arithmetic, not of the file).
            run.warn_once("warn.histogram_overflow", "acceptance_histogram")
        elif total > 0:
            positions, zero = spec.histogram_shares(histogram)
            run.set("per_position_acceptance", list(positions), source="acceptance_histogram")
            run.set("zero_accept_rate", zero, source="acceptance_histogram")
    elif known.size > 1:
        run.keep("num_spec_tokens", known.tolist())


def _is_error(record: Any) -> bool:
    """vLLM's error response, a failed request: ``{"object": "error", "message", …}``, or ``{"error":
    {…}}`` in later versions; no ``metrics``."""
    return (isinstance(record, dict) and not isinstance(record.get("metrics"), dict)
            and (record.get("object") == "error" or isinstance(record.get("error"), dict)))


def parse(source: Source) -> Parsed:
    records = source.records
    source.charge_runs(1)
    source.charge(_REQUEST_BYTES * len(records))
    for index, record in enumerate(records):
        if not (isinstance(record, dict) and isinstance(record.get("metrics"), dict) or _is_error(record)):
            raise IngestError("ingest.request_record", source.name, record=index + 1, format="vllm-responses",
                              keys="metrics")
    failed = sum(map(_is_error, records))
    records = [record for record in records if not _is_error(record)]
    metrics = [record["metrics"] for record in records]
    specs = [dig(m, "speculative_decoding") for m in metrics]
    usage = [dig(record, "usage") for record in records]
    columns = {column: _column(specs, key) for column, key in _COUNTS.items()}
    columns["acceptance_rate"] = _column(specs, "draft_acceptance_rate")
    columns["acceptance_length"] = _column(specs, "mean_acceptance_length")
    gammas = _column(specs, "num_spec_tokens")
    _check(source, columns, gammas)
    warnings: list[Notice] = []
    missing = sum(not s for s in specs)
    if missing:
        warnings.append(Notice("warn.responses_without_acceptance", count=missing, requests=len(records)))
    run = RunBuilder(warnings)
    models = Counter(r["model"] for r in records if isinstance(r.get("model"), str) and r["model"])
    if models:
        run.set("target_model", models.most_common(1)[0][0], source="model")
    if len(models) > 1:
        run.keep("models", dict(models))
    run.set("engine", "vllm")
    run.set("num_requests", len(records))
    run.set("failed_requests", failed)
    _acceptance(run, specs, columns, gammas)
    run.keep("responses_with_acceptance", len(records) - missing)
    tpot = _column(metrics, "mean_itl_ms")
    requests = pd.DataFrame({
        "run_index": np.zeros(len(records), np.int64), **columns,
        "input_tokens": _column(usage, "prompt_tokens"), "output_tokens": _column(usage, "completion_tokens"),
        "tpot_ms": tpot,
        "extra": [request_extra({"id": r.get("id"), **{k: s.get(k) for k in _SPEC_EXTRA},
                                 **{k: m.get(k) for k in _TIMING_EXTRA}}) for r, s, m in zip(records, specs, metrics)]})
    numbers = requests.columns.difference(["run_index", "extra"])
    requests[numbers] = requests[numbers].where(np.isfinite(requests[numbers]) & (requests[numbers] >= 0))
    return Parsed("vllm-responses", [run.build()], requests, warnings)


FORMAT = Format("vllm-responses", sniff, parse)
