"""Benchmark: specviz.model.simulate against plain-Python loops measured in the same run.

Run by hand: `.venv/bin/python bench/bench_simulate.py`. Prints the median wall time over several
runs of (1) 1,000,000 steps of tokens_per_step, (2) a latency() run of 10,000 requests × 500 tokens
(which also draws its 1,000,000-step stream), and the ratio against a plain-Python loop
(random.random per draft position) timed on a sample and scaled up. Target: 1M steps well under a
second.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from specviz.model import simulate  # noqa: E402

ALPHA, GAMMA = 0.8, 4
STEPS = 1_000_000
REQUESTS, OUTPUT = 10_000, 500
TIMES = simulate.StepTimes(plain_s=0.020, spec_s=0.030)


def median_of(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of several runs, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def python_steps(n: int, rng: random.Random) -> list[int]:
    """Tokens per step, one random.random() per draft position until a rejection."""
    out = []
    for _ in range(n):
        k = 1
        for _ in range(GAMMA):
            if rng.random() >= ALPHA:
                break
            k += 1
        out.append(k)
    return out


def python_requests(n: int, rng: random.Random) -> list[int]:
    """Steps each request needs for OUTPUT tokens, step by step."""
    out = []
    for _ in range(n):
        tokens = steps = 0
        while tokens < OUTPUT:
            k = 1
            for _ in range(GAMMA):
                if rng.random() >= ALPHA:
                    break
                k += 1
            tokens += k
            steps += 1
        out.append(steps)
    return out


def bernoulli_matrix(n: int) -> np.ndarray:
    """The obvious numpy version: a (steps × γ) Bernoulli matrix, leading successes counted."""
    accepted = np.random.default_rng(0).random((n, GAMMA)) < ALPHA
    return np.cumprod(accepted, axis=1).sum(axis=1) + 1


def main() -> None:
    rng = random.Random(0)
    sample_steps, sample_requests = 100_000, 200

    t_steps = median_of(lambda: simulate.tokens_per_step(ALPHA, GAMMA, steps=STEPS, seed=0), 7)
    t_matrix = median_of(lambda: bernoulli_matrix(STEPS), 5)
    t_py_steps = median_of(lambda: python_steps(sample_steps, rng), 3) * STEPS / sample_steps

    run = lambda: simulate.latency(ALPHA, GAMMA, times=TIMES, output_tokens=OUTPUT, requests=REQUESTS,
                                   steps=STEPS, seed=0)
    t_latency = median_of(run, 5)
    t_py_requests = median_of(lambda: python_requests(sample_requests, rng), 3) * REQUESTS / sample_requests

    summary = run()
    print(f"α {ALPHA}, γ {GAMMA}: mean tokens/step {summary.mean_tokens:.4f} "
          f"(E = {summary.expected_tokens:.4f}), zero-accept share {summary.zero_accept_share:.4f}")
    print(f"tokens_per_step, {STEPS:,} steps:        {t_steps * 1e3:8.1f} ms  (median of 7)")
    print(f"  numpy (steps × γ) Bernoulli matrix:    {t_matrix * 1e3:8.1f} ms  ratio {t_matrix / t_steps:5.1f}x")
    print(f"  plain-Python loop (scaled from {sample_steps:,}): {t_py_steps * 1e3:8.1f} ms  "
          f"ratio {t_py_steps / t_steps:5.0f}x")
    print(f"latency, {REQUESTS:,} requests × {OUTPUT} tokens + {STEPS:,} steps: {t_latency * 1e3:8.1f} ms  "
          f"(median of 5)")
    print(f"  plain-Python requests (scaled from {sample_requests}): {t_py_requests * 1e3:8.1f} ms  "
          f"ratio {t_py_requests / t_latency:5.0f}x")


if __name__ == "__main__":
    main()
