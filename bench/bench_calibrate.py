"""Benchmark: the explorer's roofline-knob fit (`explorer.calibrate_knobs`), chunked vs one broadcast.

Run by hand: `.venv/bin/python bench/bench_calibrate.py [runs ...]` (default 24 200 1000). The fit
searches 23,205 knob combinations against every run; before chunking it evaluated them all in one
broadcast, whose memory grows with the runs (3.4 GB at 800). Each measurement runs in a fresh
Python process and reports: wall and CPU time of the fit (best of three, one run when a fit takes
over 2 s), tracemalloc's peak during the fit, and the process's peak resident memory (VmHWM) above
its resident memory just before the fit. The one-broadcast fit (specviz's before chunking, kept
here as the reference) runs only where its estimated peak fits in half of the machine's available
memory; where both ran, their results must be equal (the chunked fit is exact, not approximate).

The runs are synthetic: Llama-3.1-8B on an H100 at concurrency 1 to 128, γ 2 to 5, α 0.5 to 0.9,
throughputs from specviz's roofline with the realistic knobs plus 3 % noise (as the examples), and
both throughputs per run, so the fit takes its throughput basis (two logs per point, the costlier).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from specviz import calculator, explorer, roofline, settings  # noqa: E402

DATA = settings.get("SPECVIZ_DATA_DIR")
SCENARIO = calculator.Scenario(roofline.load_gpus(DATA)["H100-SXM"], roofline.load_models(DATA)["Llama-3.1-8B"],
                               draft_cost=0.04)
CONTEXT = 1024
# The one-broadcast fit's tracemalloc peak per run (855 MB at 200 runs, measured with this script).
ONE_BROADCAST_BYTES_PER_RUN = 4.3e6


def synthetic_runs(n: int) -> pd.DataFrame:
    """``n`` paired, predicted runs as :func:`specviz.explorer.predict` returns them (the fit's columns)."""
    rng = np.random.default_rng(n)
    alpha, gamma = rng.uniform(0.5, 0.9, n), rng.integers(2, 6, n).astype(float)
    batch = rng.choice([1, 2, 4, 8, 16, 32, 64, 128], n).astype(float)
    true = roofline.evaluate(SCENARIO.gpu, SCENARIO.target, alpha=alpha, gamma=gamma, batch=batch, context=CONTEXT,
                             draft_cost=SCENARIO.draft_cost, **roofline.REALISTIC)
    noise = lambda: rng.normal(1, 0.03, n)
    spec_tps, base_tps = true["spec_tokens_per_s"] * noise(), true["baseline_tokens_per_s"] * noise()
    return pd.DataFrame({"alpha": alpha, "num_speculative_tokens": gamma, "concurrency": batch,
                         "output_throughput": spec_tps, "baseline_output_throughput": base_tps,
                         "measured_speedup": spec_tps / base_tps})


def one_broadcast(predicted: pd.DataFrame, scenario: calculator.Scenario, context: int) -> dict:
    """``calibrate_knobs`` before chunking (throughput basis): every combination × run at once."""
    rows = predicted.dropna(subset=["alpha", "measured_speedup", "concurrency"])
    grid = explorer._KNOB_GRID
    combos = np.stack(np.meshgrid(*grid.values(), indexing="ij"), axis=-1).reshape(-1, len(grid))
    knobs = {name: combos[:, i, None] for i, name in enumerate(grid)}
    column = lambda name: rows[name].to_numpy(dtype=float)[None, :]
    result = roofline.evaluate(scenario.gpu, scenario.target, scenario.draft, alpha=column("alpha"),
                               gamma=column("num_speculative_tokens"), batch=column("concurrency"), context=context,
                               draft_cost=scenario.draft_cost, **{**scenario.knobs, **knobs})
    speed_errors = ((result["speedup"] - column("measured_speedup")) ** 2).mean(axis=1)
    loss = ((np.log(result["spec_tokens_per_s"] / column("output_throughput")) ** 2
             + np.log(result["baseline_tokens_per_s"] / column("baseline_output_throughput")) ** 2).mean(axis=1))
    best = int(np.argmin(loss))
    return {**{name: float(combos[best, i]) for i, name in enumerate(grid)},
            "rms_error": float(np.sqrt(speed_errors[best])), "points": len(rows), "basis": "throughput"}


FITS = {"chunked": lambda frame: explorer.calibrate_knobs(frame, SCENARIO, CONTEXT),
        "one broadcast": lambda frame: one_broadcast(frame, SCENARIO, CONTEXT)}


def status_bytes(field: str) -> int:
    """A memory figure of this process from /proc/self/status (VmRSS, VmHWM), in bytes."""
    return int(re.search(rf"{field}:\s+(\d+) kB", Path("/proc/self/status").read_text())[1]) * 1024


def child(fit: str, runs: int) -> None:
    """Measure one fit in this (fresh) process; print the figures as JSON."""
    frame = synthetic_runs(runs)
    rss_before = status_bytes("VmRSS")
    tracemalloc.start()
    start = time.perf_counter()
    result = FITS[fit](frame)
    first = time.perf_counter() - start
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rss_peak = status_bytes("VmHWM") - rss_before
    wall, cpu = [], []
    for _ in range(3 if first < 2 else 1):
        start, start_cpu = time.perf_counter(), time.process_time()
        FITS[fit](frame)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    print(json.dumps({"wall": min(wall), "cpu": min(cpu), "traced_peak": traced_peak, "rss_peak": rss_peak,
                      "result": result}))


def available_bytes() -> int:
    return int(re.search(r"MemAvailable:\s+(\d+) kB", Path("/proc/meminfo").read_text())[1]) * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=int, default=[24, 200, 1000])
    parser.add_argument("--child", nargs=2, metavar=("FIT", "RUNS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    combinations = int(np.prod([len(values) for values in explorer._KNOB_GRID.values()]))
    print(f"{combinations:,} knob combinations, {SCENARIO.target.name} on {SCENARIO.gpu.name}, context {CONTEXT}; "
          f"chunks of {explorer._CHUNK_POINTS:,} points")
    print(f"{'runs':>6}  {'fit':<14} {'wall':>8} {'cpu':>8} {'tracemalloc peak':>17} {'VmHWM − RSS before':>19}  result")
    for runs in args.runs:
        results = {}
        for fit in FITS:
            if fit == "one broadcast" and ONE_BROADCAST_BYTES_PER_RUN * runs > available_bytes() / 2:
                print(f"{runs:>6,}  {fit:<14} not run: needs about {ONE_BROADCAST_BYTES_PER_RUN * runs / 1e9:.1f} GB")
                continue
            out = json.loads(subprocess.run([sys.executable, __file__, "--child", fit, str(runs)], capture_output=True,
                                            text=True, check=True).stdout)
            results[fit] = out["result"]
            print(f"{runs:>6,}  {fit:<14} {out['wall']:7.3f}s {out['cpu']:7.3f}s {out['traced_peak'] / 1e6:14,.0f} MB "
                  f"{out['rss_peak'] / 1e6:16,.0f} MB  mfu {out['result']['mfu']:.2f} mbu {out['result']['mbu']:.2f} "
                  f"overlap {out['result']['overlap']:.2f} overhead {out['result']['overhead_ms']:.1f} ms")
        if len(results) == 2:
            assert results["chunked"] == results["one broadcast"], results
            print(f"{'':>6}  results equal, to the bit")


if __name__ == "__main__":
    main()
