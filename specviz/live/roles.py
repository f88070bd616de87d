"""The metric families specviz reads on ``/metrics``, by role, and what each engine exports.

A role (``drafts``, ``accepted_tokens``, ``running`` …) is what a series measures; :data:`ROLES`
gives the pattern of its names, so families are recognised by pattern, not by one name per engine.
:mod:`specviz.live.exposition` reads a scrape's series by role, :mod:`specviz.live.states` turns them
into figures, and :mod:`specviz.live.prometheus` asks a Prometheus server for the same roles.

Metric families are recognised by pattern (:data:`ROLES`), not by one name per engine:

* the vLLM counter schema, ``<prefix>:spec_decode_num_{drafts,draft_tokens,accepted_tokens}`` and
  ``..._accepted_tokens_per_pos{position="i"}``: vLLM V1 (``vllm/v1/spec_decode/metrics.py``) and
  llama.cpp, which copied it (``llamacpp:``, ggml-org/llama.cpp pull request #26389);
* vLLM V0 (``vllm/engine/metrics.py``): counters ``vllm:spec_decode_num_{accepted,draft,emitted}_tokens``
  and the gauges ``vllm:spec_decode_draft_acceptance_rate`` and ``vllm:spec_decode_efficiency``;
* SGLang (``python/sglang/srt/metrics/collector.py``): gauges ``sglang:spec_accept_length`` and
  ``sglang:spec_accept_rate`` over its last logging interval. A gauge has no window: over two
  scrapes these are SGLang's values at the later one, said so in a notice;
* TensorRT-LLM (NVIDIA/TensorRT-LLM ``tensorrt_llm/metrics/collector.py``, commit 050f80de, served
  by trtllm-serve at ``/prometheus/metrics`` when ``return_perf_metrics`` is on): counters
  ``trtllm_spec_decode_num_{draft,accepted}_tokens_total``, fed by ``log_iteration_stats`` with the
  latest iteration of each drain of the stats queue only (``tensorrt_llm/serve/openai_server.py``,
  commit 00057725, ``_iteration_stats_collector_loop``), so they count a sample of the iterations
  (pull request #12545 made them counters from gauges: a gauge spelled without ``_total`` is not read);
  gauges ``trtllm_spec_decode_acceptance_length`` (that one iteration's 1 + accepted / requests
  with drafts, ``tensorrt_llm/_torch/pyexecutor/py_executor.py`` ``_update_iter_stats``, commit
  00043967) and ``trtllm_spec_decode_draft_overhead`` (the same iteration's draft latency over its
  whole latency, in ``_update_iter_stats`` too: the separate draft model's ``last_draft_latency_ms``
  where it has one, so 0 for a one-model MTP or EAGLE-3 head, an n-gram drafter, or an iteration
  without drafts: a 0 is read as not timed, not as free); and, since pull request #12636, counters per draft
  position ``trtllm_spec_decode_{drafted,accepted}_tokens_total{token_position}``, added for every
  step of a request when it finishes (``log_request_metrics_dict``). Where the per-position counters
  are there they give every count (drafts = drafted at position 0); else the acceptance rate is the
  iteration counters' and the acceptance length the gauge's (no window), without γ or α. Labels
  ``model_name`` and ``engine_type`` (trtllm-serve sets both to ``undefined`` at that commit), and
  ``pid`` on gauges (prometheus_client's multiprocess mode). TensorRT-LLM is ``trt-llm`` here, as the
  store names it;
* companions: running and waiting requests, generation tokens, KV-cache usage and the inter-token
  latency histogram of each engine (TensorRT-LLM's ``trtllm_time_per_output_token_seconds`` is per
  request, as SGLang's ``time_per_output_token`` is, and is not read as one);
* the finished requests and their tokens, for the mean prompt P and output O of the requests that
  finished (:attr:`specviz.live.states.SpecDecodeState.mean_prompt_tokens`): vLLM's per-request histograms
  ``vllm:request_{prompt,generation}_tokens`` (their ``_sum`` and ``_count``), observed once for each
  finished request in ``PrometheusStatLogger.record`` (``vllm/v1/metrics/loggers.py``, commit
  005a810b: ``finished_request.num_prompt_tokens`` and ``num_generation_tokens`` of every
  ``iteration_stats.finished_requests``); SGLang's counters ``sglang:{prompt,generation}_tokens_total``
  and ``sglang:num_requests_total``, all three added to in ``observe_one_finished_request``
  (``python/sglang/srt/metrics/collector.py``, commit 00ae9c15; an SGLang without
  ``num_requests_total`` gives none); TensorRT-LLM's ``trtllm_{prompt,generation}_tokens_total`` and
  ``trtllm_request_success_total{finished_reason}``, added to in ``log_request_metrics_dict`` when a
  request finishes (commit 050f80de). llama.cpp counts no finished requests.


No vLLM release exports acceptance per request on ``/metrics`` (checked in the trees of 0.24.0 and
0.33.0: ``vllm/v1/spec_decode/metrics.py``, ``vllm/v1/metrics/loggers.py``): per-request
acceptance comes in its responses (``--per-request-spec-decode-metrics``), which specviz imports as
files, not here.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Iterable

__all__ = ["ROLES", "COUNTERS", "HISTOGRAMS", "CUMULATIVE", "RATIO_GAUGES", "SPEC_ROLES", "MEANING_LABELS",
           "OUTPUT_ROLE", "role_of", "without_groups", "engine_of", "metric_name"]

# Role → pattern of a sample's name (``_total`` optional: a counter without a TYPE line keeps it in
# its family name). ``prefix`` is the engine's namespace. Counters first, then gauges, then the
# inter-token latency histogram's buckets.
ROLES: dict[str, str] = {
    "drafts": r"(?P<prefix>\w+):spec_decode_num_drafts(?:_total)?",
    "draft_tokens": r"(?P<prefix>\w+):spec_decode_num_draft_tokens(?:_total)?|(?P<prefix2>trtllm)_spec_decode_num_draft_tokens_total",
    "accepted_tokens": r"(?P<prefix>\w+):spec_decode_num_accepted_tokens(?:_total)?|(?P<prefix2>trtllm)_spec_decode_num_accepted_tokens_total",
    "accepted_per_pos": r"(?P<prefix>\w+):spec_decode_num_accepted_tokens_per_pos(?:_total)?|(?P<prefix2>trtllm)_spec_decode_accepted_tokens(?:_total)?",
    "drafted_per_pos": r"(?P<prefix>trtllm)_spec_decode_drafted_tokens(?:_total)?",
    "emitted_tokens": r"(?P<prefix>vllm):spec_decode_num_emitted_tokens(?:_total)?",
    "generation_tokens": r"(?P<prefix>vllm|sglang):generation_tokens(?:_total)?|(?P<prefix2>llamacpp):tokens_predicted(?:_total)?|(?P<prefix3>trtllm)_generation_tokens(?:_total)?",
    "reported_acceptance_rate": r"(?P<prefix>vllm):spec_decode_draft_acceptance_rate|(?P<prefix2>sglang):spec_accept_rate",
    "reported_acceptance_length": r"(?P<prefix>sglang):spec_accept_length|(?P<prefix2>trtllm)_spec_decode_acceptance_length",
    "system_efficiency": r"(?P<prefix>vllm):spec_decode_efficiency",
    "draft_overhead": r"(?P<prefix>trtllm)_spec_decode_draft_overhead",
    "running": r"(?P<prefix>vllm):num_requests_running|(?P<prefix2>sglang):num_running_reqs|(?P<prefix3>llamacpp):requests_processing|(?P<prefix4>trtllm)_num_requests_running",
    "waiting": r"(?P<prefix>vllm):num_requests_waiting|(?P<prefix2>sglang):num_queue_reqs|(?P<prefix3>llamacpp):requests_deferred|(?P<prefix4>trtllm)_num_requests_waiting",
    "kv_cache_usage": r"(?P<prefix>vllm):(?:kv|gpu)_cache_usage_perc|(?P<prefix2>sglang):token_usage|(?P<prefix3>llamacpp):kv_cache_usage_ratio|(?P<prefix4>trtllm)_kv_cache_utilization",
    "itl": r"(?P<prefix>vllm|sglang):inter_token_latency_seconds_bucket",
    # vLLM before 0.11 called the same per-step histogram time_per_output_token (not the per-request
    # request_time_per_output_token); read only where the new name is absent.
    "itl_legacy": r"(?P<prefix>vllm):time_per_output_token_seconds_bucket",
    # Requests that finished and their prompt and output tokens (the module's docstring says where each
    # engine counts them when a request finishes). vLLM's two histograms count the same requests, so
    # the prompt histogram's count is the count of both.
    "request_prompt_tokens": r"(?P<prefix>vllm):request_prompt_tokens_sum|(?P<prefix2>sglang):prompt_tokens(?:_total)?|(?P<prefix3>trtllm)_prompt_tokens(?:_total)?",
    "request_output_tokens": r"(?P<prefix>vllm):request_generation_tokens_sum",
    "finished_requests": r"(?P<prefix>vllm):request_prompt_tokens_count|(?P<prefix2>sglang):num_requests(?:_total)?|(?P<prefix3>trtllm)_request_success(?:_total)?",
    # When the process that serves /metrics started (prometheus_client's process collector, which
    # vLLM's API server registers): a restart whose counters climbed past their old values before
    # the next scrape shows only here.
    "process_start": r"(?P<prefix>process)_start_time_seconds",
}
# Counters, whose value over a window is their increase; the inter-token latency histogram's buckets
# are counters too, read from a scrape but not asked of Prometheus.
COUNTERS = ("drafts", "draft_tokens", "accepted_tokens", "accepted_per_pos", "drafted_per_pos", "emitted_tokens",
            "generation_tokens", "request_prompt_tokens", "request_output_tokens", "finished_requests")
HISTOGRAMS = ("itl", "itl_legacy")
CUMULATIVE = COUNTERS + HISTOGRAMS
# The engines' own ratios of speculation (gauges: their latest value, no window).
RATIO_GAUGES = ("reported_acceptance_rate", "reported_acceptance_length", "system_efficiency", "draft_overhead")
# A model has speculative decoding on where it has a series of one of these.
SPEC_ROLES = ("drafts", "draft_tokens", "accepted_tokens", "accepted_per_pos", "drafted_per_pos", "emitted_tokens",
              *RATIO_GAUGES)
# Labels that name what a series measures, not which replica measured it (TensorRT-LLM names the
# draft position token_position, and counts its finished requests by finished_reason).
MEANING_LABELS = ("model_name", "position", "token_position", "le", "finished_reason")
_ENGINE_NAMES = {"sglang": "sglang", "llamacpp": "llama.cpp", "trtllm": "trt-llm"}
# How a role's metric is named in a reason after its engine's namespace (:func:`metric_name`): vLLM's name, or the engine's own.
_METRIC_NAMES = {
    "drafts": "spec_decode_num_drafts", "draft_tokens": "spec_decode_num_draft_tokens",
    "accepted_tokens": "spec_decode_num_accepted_tokens", "emitted_tokens": "spec_decode_num_emitted_tokens",
    "accepted_per_pos": "spec_decode_num_accepted_tokens_per_pos", "generation_tokens": "generation_tokens",
    "reported_acceptance_rate": "spec_decode_draft_acceptance_rate",
    "reported_acceptance_length": "spec_accept_length", "system_efficiency": "spec_decode_efficiency",
    "draft_overhead": "spec_decode_draft_overhead",
    "running": "num_requests_running", "waiting": "num_requests_waiting", "kv_cache_usage": "kv_cache_usage_perc",
    "itl": "inter_token_latency_seconds",
    "request_prompt_tokens": "request_prompt_tokens", "request_output_tokens": "request_generation_tokens",
    "finished_requests": "request_prompt_tokens_count",
}
# The names an engine gives a role otherwise (TensorRT-LLM's ``trtllm_`` families).
_OWN_METRIC_NAMES = {"trt-llm": {"accepted_per_pos": "spec_decode_accepted_tokens{token_position}",
                                 "kv_cache_usage": "kv_cache_utilization", "request_prompt_tokens": "prompt_tokens_total",
                                 "finished_requests": "request_success_total",
                                 "reported_acceptance_length": "spec_decode_acceptance_length"},
                     "sglang": {"request_prompt_tokens": "prompt_tokens_total", "finished_requests": "num_requests_total",
                                "reported_acceptance_rate": "spec_accept_rate",
                                "reported_acceptance_length": "spec_accept_length", "running": "num_running_reqs",
                                "waiting": "num_queue_reqs", "kv_cache_usage": "token_usage"},
                     "llama.cpp": {"generation_tokens": "tokens_predicted", "running": "requests_processing",
                                   "waiting": "requests_deferred", "kv_cache_usage": "kv_cache_usage_ratio"}}
# The output tokens of finished requests, where an engine counts them in its generation tokens counter
# (added to when a request finishes); vLLM adds to its counter every step, so its histogram's sum.
OUTPUT_ROLE = {"sglang": "generation_tokens", "trt-llm": "generation_tokens"}

_ROLE_RES = {role: re.compile(pattern) for role, pattern in ROLES.items()}


@cache
def role_of(name: str) -> tuple[str, str] | None:
    """(role, engine prefix) of a sample's name, or None for a series specviz does not read."""
    for role, pattern in _ROLE_RES.items():
        match = pattern.fullmatch(name)
        if match:
            return role, next(v for v in match.groupdict().values() if v)
    return None


def without_groups(role: str) -> str:
    """The pattern of a role's names without its named groups, for a regular expression of many roles
    (a group's name may be used once) and for Prometheus's RE2 ``match[]``."""
    return re.sub(r"\(\?P<prefix[0-9]?>", "(?:", ROLES[role])


def engine_of(prefix: str, roles: Iterable[str]) -> str:
    """The engine that exports series of ``roles`` under ``prefix``: ``vllm-v1`` or ``vllm-v0`` by the
    counters each version has, else the engine's name as the store gives it (``trt-llm`` …)."""
    roles = set(roles)
    if prefix != "vllm":
        return _ENGINE_NAMES.get(prefix, prefix)
    if "drafts" in roles or "accepted_per_pos" in roles:
        return "vllm-v1"
    if "emitted_tokens" in roles or "system_efficiency" in roles:
        return "vllm-v0"
    return "vllm"


# Each engine's namespace as its metric names begin; another namespace that exports vLLM's schema is its own.
_PREFIXES = {"vllm-v1": "vllm:", "vllm-v0": "vllm:", "vllm": "vllm:", "sglang": "sglang:", "llama.cpp": "llamacpp:",
             "trt-llm": "trtllm_"}


def metric_name(engine: str, role: str) -> str:
    """How a role's metric is named in a message, as the engine's /metrics names it (the engine's own
    name, else vLLM's, in the engine's namespace): ``vllm:generation_tokens``, not the role's
    ``generation_tokens`` (a browser pass)."""
    return _PREFIXES.get(engine, f"{engine}:") + _OWN_METRIC_NAMES.get(engine, {}).get(role, _METRIC_NAMES[role])
