"""Benchmark: the model over a large (α, γ, batch) grid vs a Python loop of scalar calls.

Run by hand: `.venv/bin/python bench/bench_grid.py`. Prints ns per configuration and the ratio,
both measured in this run, for two models: the first model (roofline.evaluate, a dense pair), and
the step model with its band (calculator.evaluate_scenario and calculator.speedup_band, 400 draws of
the engine's costs) on a mixture of experts with MLA and expert parallelism: DeepSeek-V3 in its FP8
checkpoint on 8 H200s as 8 data-parallel attention groups, drafted by its MTP layer. The scalar
loop is timed on a random sample of the same grid (the full loop would take minutes or hours) and
reported per configuration. Target (issue 21): ≤ 60 ns per configuration with its band. Last, the
band where each step carries a steady load's prompts, beside the decode-only band on the same grid.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from specviz import calculator, scenario, settings, workload  # noqa: E402
from specviz.model import hf_config, roofline  # noqa: E402

GPU = roofline.load_gpus(settings.get("SPECVIZ_DATA_DIR"))["H100-SXM"]
MODELS = hf_config.load_models(settings.get("SPECVIZ_DATA_DIR"))
TARGET, DRAFT = MODELS["Qwen3-32B"], MODELS["Qwen3-0.6B"]
KNOBS = roofline.REALISTIC
CONTEXT = 1024


def best_of(fn, repeats: int = 5) -> float:
    """Smallest wall time of several runs, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    alphas = np.linspace(0.0, 1.0, 100)
    gammas = np.arange(1, 17)
    batches = np.arange(1, 513)
    n = alphas.size * gammas.size * batches.size

    grid = lambda: roofline.evaluate(GPU, TARGET, DRAFT, alpha=alphas[:, None, None],
                                     gamma=gammas[None, :, None], batch=batches[None, None, :],
                                     context=CONTEXT, **KNOBS)
    t_grid = best_of(grid)

    # The same number of configurations as flat arrays: no axis is shared, every pass is per point.
    rng = np.random.default_rng(0)
    flat_a, flat_g, flat_b = rng.choice(alphas, n), rng.choice(gammas, n), rng.choice(batches, n)
    flat = lambda: roofline.evaluate(GPU, TARGET, DRAFT, alpha=flat_a, gamma=flat_g, batch=flat_b,
                                     context=CONTEXT, **KNOBS)
    t_flat = best_of(flat, repeats=3)

    sample = 2000
    def loop() -> None:
        for a, g, b in zip(flat_a[:sample], flat_g[:sample], flat_b[:sample]):
            roofline.evaluate(GPU, TARGET, DRAFT, alpha=float(a), gamma=int(g), batch=int(b),
                              context=CONTEXT, **KNOBS)
    t_loop = best_of(loop, repeats=3) / sample

    check = grid()["speedup"][37, 3, 99]
    single = roofline.evaluate(GPU, TARGET, DRAFT, alpha=alphas[37], gamma=4, batch=100,
                               context=CONTEXT, **KNOBS)["speedup"]
    assert np.isclose(check, single), "grid and scalar disagree"

    print(f"configurations: {n:,} (α {alphas.size} × γ {gammas.size} × batch {batches.size}), "
          f"{TARGET.name} + {DRAFT.name} on {GPU.name}, context {CONTEXT}")
    print(f"python loop of scalar evaluate(): {t_loop * 1e9:12,.0f} ns/config (sample of {sample:,})")
    print(f"evaluate() on the broadcast grid: {t_grid / n * 1e9:12,.1f} ns/config  "
          f"({t_grid * 1e3:.0f} ms total)  ratio {t_loop / (t_grid / n):,.0f}x")
    print(f"evaluate() on flat arrays:        {t_flat / n * 1e9:12,.1f} ns/config  "
          f"({t_flat * 1e3:.0f} ms total)  ratio {t_loop / (t_flat / n):,.0f}x")

    moe_grid()
    load_band()


def moe_grid() -> None:
    """The step model and its band on DeepSeek-V3 with MLA and expert parallelism, grid against loop."""
    presets = scenario.load_presets(settings.get("SPECVIZ_DATA_DIR"))
    chosen, refused = scenario.from_query_params({"target": "DeepSeek-V3", "gpu": "H200", "tp": "1", "dp": "8",
                                                  "ep": "on"}, presets)
    assert not refused and chosen.draft_id == "mtp"
    alphas, gammas, batches = np.linspace(0.0, 1.0, 100), np.arange(1, 9), np.arange(1, 257)
    n = alphas.size * gammas.size * batches.size
    axes = dict(alpha=alphas[:, None, None], gamma=gammas[None, :, None], batch=batches[None, None, :])

    def grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        speed = calculator.evaluate_scenario(chosen, **axes, context=CONTEXT)["speedup"]
        return (speed, *calculator.speedup_band(chosen, **axes, context=CONTEXT))
    t_grid = best_of(grid, repeats=3)

    rng = np.random.default_rng(0)
    sample = 40
    picks = [(float(rng.choice(alphas)), int(rng.choice(gammas)), int(rng.choice(batches))) for _ in range(sample)]
    def loop() -> None:
        for a, g, b in picks:
            calculator.evaluate_scenario(chosen, a, g, b, CONTEXT)
            calculator.speedup_band(chosen, a, g, b, CONTEXT)
    t_loop = best_of(loop, repeats=2) / sample

    speed, low, high = grid()
    a, g, b = picks[0]
    one_low, one_high = calculator.speedup_band(chosen, a, g, b, CONTEXT)
    i, j, k = int(np.argmin(abs(alphas - a))), g - 1, b - 1
    assert np.isclose(low[i, j, k], one_low) and np.isclose(high[i, j, k], one_high), "grid and scalar disagree"
    print(f"\nconfigurations: {n:,} (α {alphas.size} × γ {gammas.size} × batch {batches.size}), "
          f"{chosen.target.name} + MTP on {chosen.dp} {chosen.gpu.name} (data-parallel attention, expert parallelism), "
          f"context {CONTEXT}, each with its band over {calculator.BAND_DRAWS} draws")
    print(f"python loop of scalar calls:        {t_loop * 1e9:12,.0f} ns/config (sample of {sample})")
    print(f"step model and band on the grid:    {t_grid / n * 1e9:12,.1f} ns/config  "
          f"({t_grid * 1e3:.0f} ms total)  ratio {t_loop / (t_grid / n):,.0f}x")


def load_band() -> None:
    """The band where each step carries a steady load's prompts (its own path: each α's E sets the
    prefill a speculative step carries, so no draw can be scaled by E) against the decode-only band
    on the same grid, and a loop of scalar calls: the calculator's batch chart over every α."""
    presets = scenario.load_presets(settings.get("SPECVIZ_DATA_DIR"))
    decoding, refused = scenario.from_query_params({}, presets)
    loaded = workload.steady_load(decoding, 2000, 100)
    assert not refused
    alphas, batches = np.linspace(0.5, 0.95, 10), calculator.batch_grid(1024)
    n = alphas.size * batches.size
    axes = dict(alpha=alphas[:, None], gamma=4, batch=batches[None, :], context=loaded.context)
    t_load = best_of(lambda: calculator.speedup_band(loaded, **axes), repeats=3)
    t_decode = best_of(lambda: calculator.speedup_band(decoding, **axes), repeats=3)
    rng = np.random.default_rng(0)
    picks = [(float(rng.choice(alphas)), int(rng.choice(batches))) for _ in range(20)]
    t_loop = best_of(lambda: [calculator.speedup_band(loaded, a, 4, b, loaded.context) for a, b in picks],
                     repeats=2) / len(picks)
    print(f"\nconfigurations: {n:,} (α {alphas.size} × batch {batches.size}), {loaded.target.name} + "
          f"{loaded.draft_id}, 2,000 tokens in and 100 out at context {loaded.context:,.0f}, bands over "
          f"{calculator.BAND_DRAWS} draws")
    print(f"python loop of scalar bands, load:  {t_loop * 1e9:12,.0f} ns/config (sample of {len(picks)})")
    print(f"band on the grid, load:             {t_load / n * 1e9:12,.1f} ns/config  ({t_load * 1e3:.0f} ms total)  "
          f"ratio {t_loop / (t_load / n):,.0f}x")
    print(f"band on the grid, decoding only:    {t_decode / n * 1e9:12,.1f} ns/config  ({t_decode * 1e3:.0f} ms total)  "
          f"the load's path takes {t_load / t_decode:.1f}x as long")


if __name__ == "__main__":
    main()
