"""Benchmark: the speedup models against published measurements they were not fitted to.

Run by hand: `.venv/bin/python bench/bench_fidelity.py`. For each series of
data/published_results.csv with three or more points, each model is calibrated on the lowest and
the highest batch and predicts the points in between (:mod:`specviz.model.fidelity`; step v2 with
the prefill each step carries where a series states its prompt and output lengths, and the routing
overlap of adjacent tokens, ``step.ROUTING_OVERLAP``, in a mixture of experts). Prints, per series
and overall (over the series the model predicts, ``fidelity.Setting.predicted``; the others, TPOT
under a load whose steps also prefill, on a line of their own), the median and worst relative error and the share of points on the right side of 1,
for every model beside the constant-cost baseline of the same run and the step model before any
calibration (the engine preset's draws, as the pages price a setting until one), for each generation of studies
(2023-2024; the 2025-2026 MoE, MTP, EAGLE-3 and FP4 series) and overall. Targets: issue 8, median
≤ 7 %, worst ≤ 15 %, sign ≥ 95 %; issue 21 on the 2025-2026 series, median ≤ 10 %, worst ≤ 20 %,
sign ≥ 90 %, band holding ≥ 80 %.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from specviz import settings  # noqa: E402
from specviz.model import calibration, fidelity  # noqa: E402
from specviz.results import explorer  # noqa: E402

# "before calibration": the step model at the engine preset's draws, fitted to nothing, as the calculator and
# Claims price a setting until a calibration (fidelity.at_presets); series without an acceptance length
# are not predicted by it.
MODELS = {"constant cost": fidelity.constant_cost, "step v2": fidelity.step_v2, "before calibration": fidelity.at_presets}


def main() -> None:
    data = settings.get("SPECVIZ_DATA_DIR")
    series = fidelity.series_of(explorer.load_published(data), data)
    print(f"{len(series)} series, {sum(len(p) - 2 for _, p in series)} held-out points\n")
    results = {}
    for model, calibrator in MODELS.items():
        started = time.perf_counter()
        results[model] = pd.concat([fidelity.held_out(s, p, calibrator) for s, p in series], ignore_index=True)
        print(f"{model}: {time.perf_counter() - started:.1f} s")
    print(f"\n{'series':<110} " + " ".join(f"{m:>22}" for m in MODELS))
    for setting, _ in series:
        cells = [cell(fidelity.summarise(results[m][results[m].series == setting.name])) for m in MODELS]
        print(f"{setting.name:<110} " + " ".join(f"{c:>22}" for c in cells))
    apart = [setting.name for setting, _ in series if not setting.predicted]
    print(f"\n{f'not scored, {len(apart)} (the model does not predict their metric: fidelity.Setting.predicted)':<110} " + " ".join(
        cell(s).rjust(22)
        for s in (fidelity.summarise(results[m][results[m].series.isin(apart)]) for m in MODELS)))
    results = {m: frame[~frame.series.isin(apart)] for m, frame in results.items()}
    generation = {setting.name: setting.generation for setting, _ in series if setting.predicted}
    for years in sorted(set(generation.values())):
        names = [name for name, g in generation.items() if g == years]
        picked = {m: results[m][results[m].series.isin(names)] for m in MODELS}
        print(f"\n{f'{years} series, {len(names)} (median, worst, sign right)':<110} " + " ".join(
            cell(s).rjust(22)
            for s in (fidelity.summarise(picked[m]) for m in MODELS)))
        print(f"{years}: step v2 band", end=" ")
        band_report(picked["step v2"])
        before = picked["before calibration"]
        print(f"{years}: before calibration, {fidelity.summarise(before)['points']} points: band widened by "
              f"calibration.MODEL_ERROR holds {100 * fidelity.coverage(before, calibration.MODEL_ERROR):.0f}%, "
              f"unwidened {100 * fidelity.coverage(before, (0.0, 0.0)):.0f}%")
    print(f"\n{'overall (median, worst, sign right)':<110} " + " ".join(
        cell(s).rjust(22)
        for s in (fidelity.summarise(results[m]) for m in MODELS)))
    band_report(results["step v2"])


def cell(summary: dict[str, float]) -> str:
    """A model's median and worst error and share of signs right, or "not predicted" where it predicted
    no point (a series without an acceptance length, before calibration)."""
    if not summary["points"]:
        return "not predicted"
    return (f"{100 * summary['median_error']:5.1f}% {100 * summary['worst_error']:5.1f}% "
            f"{100 * summary['sign_right']:4.0f}%")


def band_report(predictions: pd.DataFrame) -> None:
    """How often step v2's band holds the measurement: the draws' spread alone, widened by each fit's
    miss at its own two points (calibration.Fit.own_miss: where no costs fit them), and widened by
    the model error of every series (in sample: the figures of calibration.MODEL_ERROR) or of the
    other series only (leave one series out: what a new series can expect), or the fit's own miss
    where that is wider."""
    low, high = fidelity.model_error(predictions)
    print(f"\nstep v2 error, 10th and 90th percentile: {low:+.3f}, {high:+.3f} "
          f"(calibration.MODEL_ERROR: {calibration.MODEL_ERROR[0]:+.3f}, {calibration.MODEL_ERROR[1]:+.3f})")
    held = [fidelity.coverage(predictions[predictions.series == name],
                              fidelity.model_error(predictions[predictions.series != name])) * len(group.dropna(subset=["draw_low"]))
            for name, group in predictions.groupby("series")]
    draws_alone = predictions.drop(columns=["own_low", "own_high"], errors="ignore")
    print(f"band holds the measurement: draws alone {100 * fidelity.coverage(draws_alone, (0.0, 0.0)):.0f}%, "
          f"with each fit's miss at its own points {100 * fidelity.coverage(predictions, (0.0, 0.0)):.0f}%, "
          f"widened in sample {100 * fidelity.coverage(predictions, calibration.MODEL_ERROR):.0f}%, "
          f"widened leaving each series out {100 * sum(held) / predictions['draw_low'].notna().sum():.0f}% "
          f"(10th to 90th percentile: 80% expected)")


if __name__ == "__main__":
    sys.exit(main())
