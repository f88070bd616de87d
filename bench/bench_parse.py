"""Benchmark: reading a realistic /metrics scrape into speculative-decoding figures.

Run by hand: `.venv/bin/python bench/bench_parse.py`. Builds a ~200 KB vLLM V1 exposition of
several models on two data-parallel engines each (the real scrape's spec-decode lines with
``_created`` series, per-position counters, the gauges, and the histograms vLLM serves: TTFT,
inter-token latency, end-to-end, queue, prefill, decode, prompt and generation tokens), then times
:func:`specviz.live.exposition.parse` + :func:`specviz.live.states.spec_decode_states` on two snapshots (a window).
Prints the median over runs beside the baseline of the same run: prometheus_client's parser
alone over the whole text. Target (issue 9): ≤ 20 ms.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from specviz.live import exposition as prom  # noqa: E402
from specviz.live.states import spec_decode_states

RUNS = 21
MODELS = 5
ENGINES = 2
LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
                   20.0, 40.0, 80.0, 160.0, 640.0, 2560.0, "+Inf"]
TOKEN_BUCKETS = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, "+Inf"]
HISTOGRAMS = {"time_to_first_token_seconds": LATENCY_BUCKETS, "inter_token_latency_seconds": LATENCY_BUCKETS,
              "e2e_request_latency_seconds": LATENCY_BUCKETS, "request_queue_time_seconds": LATENCY_BUCKETS,
              "request_prefill_time_seconds": LATENCY_BUCKETS, "request_decode_time_seconds": LATENCY_BUCKETS,
              "request_prompt_tokens": TOKEN_BUCKETS, "request_generation_tokens": TOKEN_BUCKETS}


def exposition(scale: float) -> str:
    """A scrape in vLLM V1's shape; ``scale`` grows every counter (a later snapshot)."""
    out = []

    def counter(name: str, rows: list[tuple[str, float]]) -> None:
        out.extend([f"# HELP vllm:{name}_total {name}.", f"# TYPE vllm:{name}_total counter"])
        out.extend(f"vllm:{name}_total{{{labels}}} {value:.1f}" for labels, value in rows)
        out.extend([f"# HELP vllm:{name}_created {name}.", f"# TYPE vllm:{name}_created gauge"])
        out.extend(f"vllm:{name}_created{{{labels}}} 1.7893163568313677e+09" for labels, _ in rows)

    series = [(f'engine="{e}",model_name="org/Model-{m}-Instruct"', m, e) for m in range(MODELS) for e in range(ENGINES)]
    for name, per in (("spec_decode_num_drafts", 1.0), ("spec_decode_num_draft_tokens", 3.0),
                      ("spec_decode_num_accepted_tokens", 2.1), ("generation_tokens", 3.1), ("prompt_tokens", 9.0)):
        counter(name, [(labels, scale * per * (14902 + 97 * m + e)) for labels, m, e in series])
    counter("spec_decode_num_accepted_tokens_per_pos",
            [(f'{labels},position="{p}"', scale * (12371 - 1500 * p + m)) for labels, m, _ in series for p in range(3)])
    for name, value in (("num_requests_running", 31.0), ("num_requests_waiting", 2.0), ("kv_cache_usage_perc", 0.41)):
        out.extend([f"# HELP vllm:{name} {name}.", f"# TYPE vllm:{name} gauge"])
        out.extend(f"vllm:{name}{{{labels}}} {value}" for labels, _, _ in series)
    for name, buckets in HISTOGRAMS.items():
        out.extend([f"# HELP vllm:{name} {name}.", f"# TYPE vllm:{name} histogram"])
        for labels, m, e in series:
            out.extend(f'vllm:{name}_bucket{{{labels},le="{le}"}} {scale * 1000 * (i + 1) * (m + 1):.1f}'
                       for i, le in enumerate(buckets))
            out.append(f"vllm:{name}_sum{{{labels}}} {scale * 1234.5 * (m + 1):.6g}")
            out.append(f"vllm:{name}_count{{{labels}}} {scale * 1000 * len(buckets) * (m + 1):.1f}")
            out.append(f"vllm:{name}_created{{{labels}}} 1.7893163568313677e+09")
    return "\n".join(out) + "\n"


def median_ms(work) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def main() -> None:
    before, after = exposition(1.0), exposition(1.5)
    print(f"exposition: {len(after) / 1000:.0f} KB, {after.count(chr(10))} lines, {MODELS} models × {ENGINES} engines")
    states = spec_decode_states(prom.parse(after, 10.0), prom.parse(before, 0.0))
    assert len(states) == MODELS and states[0].itl_p50 is not None
    ours = median_ms(lambda: spec_decode_states(prom.parse(after, 10.0), prom.parse(before, 0.0)))
    one = median_ms(lambda: spec_decode_states(prom.parse(after)))
    baseline = median_ms(lambda: list(text_string_to_metric_families(after)))
    print(f"median of {RUNS} runs:")
    print(f"  parse + derive, one snapshot:             {one:7.1f} ms")
    print(f"  parse + derive, window of two snapshots:  {ours:7.1f} ms  (target ≤ 20 ms)")
    print(f"  baseline, prometheus_client's parser alone over one snapshot: {baseline:7.1f} ms "
          f"(one snapshot is {one / baseline:.2f}x of it)")


if __name__ == "__main__":
    sys.exit(main())
