"""The results explorer's analysis: runs by load, speculative runs beside their baselines, measured
speedup beside the model's prediction, and calibration of the step model to measured points.

Everything here takes and returns DataFrames of canonical runs (:func:`specviz.store.Store.runs`).
"""

from __future__ import annotations

import itertools
import math
from pathlib import PurePath

import numpy as np
import pandas as pd

from . import roofline, spec
from .calculator import Scenario

__all__ = [
    "FILTER_COLUMNS",
    "with_load",
    "filter_runs",
    "is_speculative",
    "pair_with_baselines",
    "crossover_concurrency",
    "sweep_peaks",
    "workload_acceptance",
    "predict",
    "calibrate_ratios",
    "calibrate_knobs",
    "load_published",
    "EXAMPLE_QUERIES",
]

EXAMPLE_QUERIES = {
    "runs_by_format": "SELECT source_format, count(*) AS runs FROM runs GROUP BY 1 ORDER BY 2 DESC",
    "throughput_by_concurrency": "SELECT label, workload, concurrency, output_throughput, p99_itl_ms\n"
                                 "FROM runs WHERE concurrency IS NOT NULL ORDER BY label, workload, concurrency",
    "acceptance": "SELECT workload, num_speculative_tokens AS gamma, avg(acceptance_length) AS tokens_per_step,\n"
                  "       avg(acceptance_rate) AS vllm_rate FROM runs WHERE acceptance_length IS NOT NULL\n"
                  "GROUP BY ALL ORDER BY 1, 2",
    "request_percentiles": "SELECT run_id, count(*) AS requests, quantile_cont(ttft_ms, 0.99) AS p99_ttft_ms\n"
                           "FROM requests GROUP BY 1 ORDER BY 1",
    "imports": "SELECT source_file, source_format, imported_at, runs, requests FROM imports ORDER BY imported_at",
}

FILTER_COLUMNS = ("workload", "spec_method", "num_speculative_tokens", "concurrency", "target_model", "gpu", "label")
# A run's identity apart from speculation: baselines are matched on these (NULLs match NULLs).
_MATCH = ("workload", "target_model", "gpu", "engine", "concurrency")


def with_load(runs: pd.DataFrame) -> pd.DataFrame:
    """Add ``load`` (concurrency, or the request rate where a run set none), ``load_kind`` and
    ``series`` (what tells the lines of one chart apart: label, else method and γ, else the file's
    name; with the workload appended)."""
    out = runs.copy()
    out["load"] = out["concurrency"].where(out["concurrency"].notna(), out["request_rate"])
    out["load_kind"] = np.where(out["concurrency"].notna(), "concurrency",
                                np.where(out["request_rate"].notna(), "request_rate", None))
    method = out["spec_method"].fillna("") + out["num_speculative_tokens"].map(
        lambda g: "" if pd.isna(g) else f" γ={int(g)}")
    file_name = out["source_file"].map(lambda f: PurePath(f).name if isinstance(f, str) else f)
    base = out["label"].where(out["label"].notna() & (out["label"] != ""),
                              method.where(method != "", file_name))
    out["series"] = base.where(out["workload"].isna(), base + " · " + out["workload"].fillna(""))
    return out


def filter_runs(runs: pd.DataFrame, filters: dict[str, list]) -> pd.DataFrame:
    """Rows whose value in each filtered column is one of the chosen values (empty choice = all)."""
    mask = pd.Series(True, index=runs.index)
    for column, chosen in filters.items():
        if chosen:
            mask &= runs[column].isin(chosen)
    return runs[mask]


def is_speculative(runs: pd.DataFrame) -> pd.Series:
    """A run used speculation if it names a method or γ, or reports acceptance."""
    named = runs["spec_method"].notna() & ~runs["spec_method"].fillna("").str.lower().isin(["", "none", "off"])
    return named | runs["num_speculative_tokens"].notna() | runs["acceptance_length"].notna() | runs["acceptance_rate"].notna()


def pair_with_baselines(runs: pd.DataFrame) -> pd.DataFrame:
    """Each speculative run beside the plain run of the same workload, model, GPU, engine and
    concurrency, with the measured speedup.

    Measured speedup = SD output throughput / baseline output throughput (same concurrency), or,
    where throughput is missing, baseline mean TPOT / SD mean TPOT. ITL is not used: with
    speculation ``vllm bench serve`` reports it per streamed chunk, which holds several tokens.
    """
    spec_mask = is_speculative(runs)
    match = list(_MATCH)
    measured = ["run_id", "output_throughput", "mean_tpot_ms"]
    base = runs[~spec_mask].drop_duplicates(match, keep="last")[match + measured]
    # pandas matches missing keys with missing keys, so runs that set no GPU pair with each other.
    paired = runs[spec_mask].merge(base.rename(columns={c: f"baseline_{c}" for c in measured}), on=match)
    throughput = paired["output_throughput"] / paired["baseline_output_throughput"]
    tpot = paired["baseline_mean_tpot_ms"] / paired["mean_tpot_ms"]
    paired["measured_speedup"] = throughput.where(throughput.notna(), tpot)
    paired = paired.dropna(subset=["measured_speedup"])
    return paired.sort_values(["series", "concurrency"], kind="stable").reset_index(drop=True)


def crossover_concurrency(paired: pd.DataFrame) -> pd.DataFrame:
    """Per workload, model and series: the smallest concurrency at which measured speedup < 1."""
    rows = []
    for key, group in paired.dropna(subset=["concurrency"]).groupby(
            ["workload", "target_model", "series"], dropna=False, sort=False):
        losing = group[group["measured_speedup"] < 1].sort_values("concurrency")
        rows.append(dict(zip(("workload", "target_model", "series"), key),
                         crossover_concurrency=losing["concurrency"].iloc[0] if len(losing) else math.nan))
    return pd.DataFrame(rows, columns=["workload", "target_model", "series", "crossover_concurrency"])


def sweep_peaks(runs: pd.DataFrame) -> pd.DataFrame:
    """The run with the highest output throughput in each series (the peak of a load sweep)."""
    valid = runs.dropna(subset=["output_throughput", "load"])
    if valid.empty:
        return valid
    return valid.loc[valid.groupby("series", dropna=False)["output_throughput"].idxmax()]


def workload_acceptance(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean acceptance length and zero-accept share per workload (seed 002's view by task)."""
    spec_runs = runs[runs["acceptance_length"].notna() | runs["zero_accept_rate"].notna()]
    return (spec_runs.assign(workload=spec_runs["workload"].fillna("(none)"))
            .groupby("workload", as_index=False)
            .agg(acceptance_length=("acceptance_length", "mean"), zero_accept_rate=("zero_accept_rate", "mean"),
                 runs=("run_id", "count")))


def _acceptance_length(paired: pd.DataFrame) -> pd.Series:
    """Measured tokens per step: the acceptance length, else 1 + vLLM's rate·γ."""
    from_rate = 1 + paired["acceptance_rate"] * paired["num_speculative_tokens"]
    return paired["acceptance_length"].where(paired["acceptance_length"].notna(), from_rate)


def predict(paired: pd.DataFrame, scenario: Scenario, context: int = 0) -> pd.DataFrame:
    """The model's speedup for each paired run, at its own α, γ and concurrency.

    α comes from the measured acceptance length through the inverse of E(α, γ) (never from vLLM's
    accepted/drafted directly). Rows without γ, acceptance or concurrency get no prediction.
    """
    out = paired.copy()
    length = _acceptance_length(out)
    gamma = out["num_speculative_tokens"]
    usable = length.notna() & gamma.notna() & out["concurrency"].notna() & (gamma >= 1)
    usable &= (length >= 1) & (length <= gamma + 1)
    out["alpha"], out["predicted_speedup"] = np.nan, np.nan
    if usable.any():
        g = gamma[usable].to_numpy(dtype=float)
        alpha = np.asarray(spec.alpha_from_acceptance_length(length[usable].to_numpy(dtype=float), g))
        result = _evaluate(scenario, alpha, g, out.loc[usable, "concurrency"].to_numpy(dtype=float), context)
        out.loc[usable, "alpha"] = alpha
        out.loc[usable, "predicted_speedup"] = result["speedup"]
    out["error"] = out["measured_speedup"] - out["predicted_speedup"]
    return out


def _evaluate(scenario: Scenario, alpha: np.ndarray, gamma: np.ndarray, batch: np.ndarray,
              context: int, **knobs: np.ndarray | float) -> dict[str, np.ndarray]:
    """Speedup (and, in roofline mode, throughputs) for arrays of runs and, optionally, of knobs."""
    if scenario.mode == "ratios":
        return {"speedup": np.asarray(spec.speedup(alpha, gamma, scenario.verify_cost, scenario.draft_cost))}
    merged = {**scenario.knobs, **knobs}
    return roofline.evaluate(scenario.gpu, scenario.target, scenario.draft, alpha=alpha, gamma=gamma,
                             batch=batch, context=context, draft_cost=scenario.draft_cost, **merged)


def calibrate_ratios(predicted: pd.DataFrame) -> dict[str, float] | None:
    """Verify and draft cost that fit the measured points by least squares.

    speedup = E / (v + γc) is linear in (v, c) after rearranging: E / S = v + γ·c. Solved with
    ``numpy.linalg.lstsq`` over the rows with α; None with fewer than two such rows, or when the
    fit would need a negative cost or a free verify pass.
    """
    rows = predicted.dropna(subset=["alpha", "measured_speedup"])
    if len(rows) < 2:
        return None
    g = rows["num_speculative_tokens"].to_numpy(dtype=float)
    e = np.asarray(spec.expected_tokens(rows["alpha"].to_numpy(dtype=float), g))
    design = np.column_stack([np.ones_like(g), g])
    (v, c), *_ = np.linalg.lstsq(design, e / rows["measured_speedup"].to_numpy(dtype=float), rcond=None)
    if not (np.isfinite(v) and np.isfinite(c)) or v <= 0 or c < 0:  # a free verify pass is impossible
        return None
    fitted = spec.speedup(rows["alpha"].to_numpy(dtype=float), g, v, c)
    rms = float(np.sqrt(np.mean((fitted - rows["measured_speedup"].to_numpy(dtype=float)) ** 2)))
    return {"verify_cost": float(v), "draft_cost": float(c), "rms_error": rms, "points": len(rows)}


_KNOB_GRID = {"mfu": np.round(np.arange(0.2, 1.0001, 0.05), 2), "mbu": np.round(np.arange(0.4, 1.0001, 0.05), 2),
              "overlap": np.round(np.arange(0.0, 1.0001, 0.25), 2), "overhead_ms": np.round(np.arange(0.0, 2.0001, 0.1), 2)}


def calibrate_knobs(predicted: pd.DataFrame, scenario: Scenario, context: int = 0) -> dict[str, float] | None:
    """Roofline knobs (mfu, mbu, overlap, overhead_ms) that fit the measured points best.

    An exhaustive search over a grid on the calculator's slider steps (17 × 13 × 5 × 21 = 23,205
    combinations), all evaluated in one broadcast call. Speedups are ratios of step times, so they
    fix the knobs only up to a common scale (halving mfu and mbu while doubling the overhead leaves
    every speedup unchanged); where every point also has both measured throughputs, the fit
    minimises the squared log errors of the plain and speculative tokens/s instead, which pins the
    scale (``basis="throughput"``); otherwise it fits speedups (``basis="speedup"``).

    Returns
    -------
    dict or None
        The knobs, ``rms_error`` of the fitted speedups, ``points`` and ``basis``; None without
        points that have α, γ and concurrency.
    """
    rows = predicted.dropna(subset=["alpha", "measured_speedup", "concurrency"])
    if rows.empty or scenario.mode != "roofline":
        return None
    combos = np.array(list(itertools.product(*_KNOB_GRID.values())))
    knobs = {name: combos[:, i, None] for i, name in enumerate(_KNOB_GRID)}
    column = lambda name: rows[name].to_numpy(dtype=float)[None, :]
    result = _evaluate(scenario, column("alpha"), column("num_speculative_tokens"), column("concurrency"),
                       context, **knobs)
    measured = column("measured_speedup")
    speed_errors = ((result["speedup"] - measured) ** 2).mean(axis=1)
    by_throughput = rows[["output_throughput", "baseline_output_throughput"]].notna().all().all() if \
        "baseline_output_throughput" in rows else False
    if by_throughput:
        loss = ((np.log(result["spec_tokens_per_s"] / column("output_throughput")) ** 2
                 + np.log(result["baseline_tokens_per_s"] / column("baseline_output_throughput")) ** 2)
                .mean(axis=1))
    else:
        loss = speed_errors
    best = int(np.argmin(loss))
    return {**{name: float(combos[best, i]) for i, name in enumerate(_KNOB_GRID)},
            "rms_error": float(np.sqrt(speed_errors[best])), "points": len(rows),
            "basis": "throughput" if by_throughput else "speedup"}


def load_published(data_dir) -> pd.DataFrame:
    """Published speculative-decoding results (``data/published_results.csv``), a source per row."""
    return pd.read_csv(data_dir / "published_results.csv")
