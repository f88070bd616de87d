"""How well a speedup model predicts published measurements it was not fitted to.

Each series of ``data/published_results.csv`` (a sweep over batch of one study's setting: GPU,
tensor parallelism, target, draft, γ, context) is calibrated on two of its points, the lowest and
the highest batch, as a user calibrates on two of their own runs; the model then predicts the
points in between, and each prediction is compared with the measurement:

.. math:: e_i = \\frac{\\hat S_i - S_i}{S_i}

with the sign right when both are on the same side of 1 (speculation helps or hurts). Where a
series gives the acceptance length, α comes from it (:func:`specviz.model.spec.alpha_from_acceptance_length`);
where it does not, α is fitted with the costs.

A series is scored only where the model predicts what it measured (:attr:`Setting.predicted`): the
step model prices a request's whole time, so throughput, wall time and end-to-end latency, and TPOT
where the steps decode only. Under a steady load whose steps also prefill the arriving prompts, a
benchmark's TPOT holds the scheduler's split of that time between the first token and the rest:
vLLM's GB300 post measured MTP cutting the mean TTFT from 2,584 to 1,084 ms and doubling the mean
TPOT, 41 to 82 ms, at concurrency 64, while the request's whole time rose by 21 % (5,167 to
6,250 ms). Such a series is still predicted and reported, apart.

A model is a :data:`Calibrator`: given a series' setting and its two calibration points, it
returns a function from the series' points to predicted speedups, or to a dict of them
(``speedup``) and the band of its draws (``low``, ``high``), or None where it cannot fit.
:func:`model_error` measures how far the predictions miss (the figures behind
:data:`specviz.model.calibration.MODEL_ERROR`) and :func:`coverage` how often a widened band holds the
measurement.
``bench/bench_fidelity.py`` runs the calibrators over every series and prints the table; the tests
run it on a slice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from . import architecture, calibration, dtypes, hf_config, roofline, spec, step

__all__ = ["Setting", "Calibrator", "series_of", "held_out", "summarise", "model_error", "coverage", "constant_cost",
           "step_v2", "at_presets", "UNKNOWN_CONTEXT", "EP_WORDS", "expert_parallel"]

# Where a study gives no context length (MT-Bench turns), a short chat's prompt and answer.
UNKNOWN_CONTEXT = 512
# How a row of published results or of measured runs writes expert parallelism (its ``ep``).
EP_WORDS = {"off": False, "0": False, "false": False, "on": True, "1": True, "true": True}


def expert_parallel(cell: object) -> bool | None:
    """A row's ``ep`` cell (:data:`EP_WORDS`, any case, blanks around it): True or False where it says
    which, None where it is empty or says neither."""
    return EP_WORDS.get(cell.strip().lower()) if isinstance(cell, str) else None


@dataclass(frozen=True)
class Setting:
    """One series' hardware and models, as presets: ``draft`` is a model id (its preset in
    ``draft_model``) or a draft kind of :mod:`specviz.model.step` (an ``eagle`` series whose name says
    EAGLE-3 drafts with an EAGLE-3 head); ``draft_kv_budget`` the positions a sparse-KV draft keeps,
    else None; ``engine`` the engine preset (:func:`specviz.model.calibration.load_engines`);
    ``precision`` the weight and KV-cache formats (``weight_dtype``, ``kv_dtype``: BF16 where empty);
    ``generation`` the years of the study (``2023-2024``, ``2025-2026``), reported apart;
    ``prompt_tokens`` and ``output_tokens`` the requests' lengths where the study served a steady
    load of them (``prompt_tokens``, ``output_tokens`` in the data: each step then carries the
    prefill of the requests that replace finished ones, :func:`specviz.model.step.step`), else 0 and 1
    (decode only); ``metric`` what the series measured (``throughput_speedup``, ``tpot_speedup``,
    ``e2e_latency_speedup``, ``walltime_speedup``); ``ep`` whether the routed experts were spread over
    the ``tp`` GPUs (expert parallelism, the data's ``ep`` ``on``) rather than each split over them."""

    name: str
    gpu: roofline.GPU
    tp: int
    target: architecture.Model
    draft: str
    draft_model: architecture.Model | None
    draft_kv_budget: float | None
    source: str
    engine: calibration.Engine
    precision: dtypes.Precision = dtypes.PRECISIONS["bf16"]
    generation: str = ""
    prompt_tokens: float = 0.0
    output_tokens: float = 1.0
    metric: str = "throughput_speedup"
    ep: bool = False

    @property
    def predicted(self) -> bool:
        """Whether the step model predicts what the series measured: everything but TPOT under a
        load whose steps also prefill (the module's note)."""
        return not (self.metric == "tpot_speedup" and self.prompt_tokens > 0)

    @property
    def step_draft(self) -> step.Draft:
        """The draft as :mod:`specviz.model.step` takes it."""
        if self.draft == "eagle":
            return step.Draft("eagle3" if "EAGLE-3 head" in self.name else "eagle")
        if self.draft_model is not None:
            return step.Draft("model", self.draft_model, self.draft_kv_budget)
        if self.draft in step.PARALLEL_DRAFTS or self.draft in ("mtp", "eagle3", "medusa", "suffix"):
            return step.Draft(self.draft)
        return step.Draft(self.draft, kv_budget=self.draft_kv_budget)


Prediction = np.ndarray | dict[str, np.ndarray]
Calibrator = Callable[[Setting, pd.DataFrame], Callable[[pd.DataFrame], Prediction] | None]


def series_of(published: pd.DataFrame, data_dir: Path, least_points: int = 3) -> list[tuple[Setting, pd.DataFrame]]:
    """The series with at least ``least_points`` points, each as its setting and its points
    (``batch``, ``context``, ``gamma``, ``acceptance_length``, ``measured_speedup``), by batch."""
    gpus, models = roofline.load_gpus(data_dir), hf_config.load_models(data_dir)
    engines = calibration.load_engines(data_dir)
    found = []
    for name, rows in published.dropna(subset=["series"]).groupby("series", sort=True):
        if len(rows) < least_points:
            continue
        first = rows.iloc[0]
        budget = first["draft_kv_budget"]
        weights, kv = (first.get(column) for column in ("weight_dtype", "kv_dtype"))
        precision = dtypes.precision_of(weights if isinstance(weights, str) else "bf16", kv if isinstance(kv, str) else "bf16")
        prompt, output = (first.get(column, np.nan) for column in ("prompt_tokens", "output_tokens"))
        served = not (pd.isna(prompt) or pd.isna(output))
        setting = Setting(name, gpus[first["gpu"]], int(first["tp"]), models[first["target"]], first["draft"],
                          models.get(first["draft"]), None if pd.isna(budget) else float(budget), first["source"],
                          engines[first["engine"]], precision, str(first.get("generation", "")),
                          float(prompt) if served else 0.0, float(output) if served else 1.0, str(first["metric"]),
                          bool(expert_parallel(first.get("ep"))))
        points = pd.DataFrame({"batch": rows["batch"].astype(float),
                               "context": rows["context"].astype(float).fillna(UNKNOWN_CONTEXT),
                               "gamma": rows["gamma"].astype(float),
                               "acceptance_length": rows["acceptance_length"].astype(float),
                               "measured_speedup": rows["value"].astype(float)})
        found.append((setting, points.sort_values("batch", kind="stable").reset_index(drop=True)))
    return found


def held_out(setting: Setting, points: pd.DataFrame, calibrator: Calibrator) -> pd.DataFrame:
    """The points between the lowest and the highest batch, predicted by ``calibrator`` fitted on
    those two: ``predicted_speedup``, ``error`` (relative), ``sign_right`` and, where the calibrator
    gives one, its draws' band ``draw_low``, ``draw_high`` and its fit's miss at the two
    (``own_low``, ``own_high``); NaN predictions where it could not fit."""
    ends = points.iloc[[0, -1]]
    inner = points.iloc[1:-1].copy()
    predict = calibrator(setting, ends)
    result = np.nan if predict is None else predict(inner)
    if isinstance(result, dict):
        inner["draw_low"], inner["draw_high"] = result["low"], result["high"]
        inner["own_low"], inner["own_high"] = result["own_miss"]
        result = result["speedup"]
    inner["predicted_speedup"] = result
    inner["error"] = (inner["predicted_speedup"] - inner["measured_speedup"]) / inner["measured_speedup"]
    right = (inner["predicted_speedup"] >= 1) == (inner["measured_speedup"] >= 1)
    inner["sign_right"] = right.where(inner["predicted_speedup"].notna())
    return inner.assign(series=setting.name)


def summarise(predictions: pd.DataFrame) -> dict[str, float]:
    """Median and worst absolute relative error and the share of points with the sign right, over
    the predicted points; ``missing`` counts the points without a prediction."""
    done = predictions.dropna(subset=["predicted_speedup"])
    error = done["error"].abs()
    return {"points": len(done), "missing": len(predictions) - len(done),
            "median_error": float(error.median()) if len(done) else np.nan,
            "worst_error": float(error.max()) if len(done) else np.nan,
            "sign_right": float(done["sign_right"].astype(bool).mean()) if len(done) else np.nan}


def model_error(predictions: pd.DataFrame) -> tuple[float, float]:
    """The 10th and 90th percentiles of the relative errors (predicted − measured) / measured."""
    low, high = np.quantile(predictions["error"].dropna(), [0.1, 0.9])
    return float(low), float(high)


def coverage(predictions: pd.DataFrame, error: tuple[float, float]) -> float:
    """The share of predicted points whose measurement lies in the draws' band widened by ``error``
    (:func:`specviz.model.calibration.widen`), or by its fit's miss at its own points where that is
    wider on a side (``own_low``, ``own_high``: :attr:`specviz.model.calibration.Fit.own_miss`), as
    :meth:`specviz.model.calibration.Fit.predict` widens it."""
    done = predictions.dropna(subset=["draw_low", "draw_high"])
    own_miss = tuple(done[c] if c in done else 0.0 for c in ("own_low", "own_high"))
    low, high = calibration.widen(done["draw_low"], done["draw_high"], calibration.wider_error(error, own_miss))
    return float(((low <= done["measured_speedup"]) & (done["measured_speedup"] <= high)).mean())


def _alphas(points: pd.DataFrame) -> np.ndarray | None:
    """α of each point from its acceptance length, or None where one is missing."""
    if points["acceptance_length"].isna().any():
        return None
    return np.asarray(spec.alpha_from_acceptance_length(points["acceptance_length"].to_numpy(),
                                                        points["gamma"].to_numpy()), dtype=float)


def constant_cost(setting: Setting, ends: pd.DataFrame) -> Callable[[pd.DataFrame], np.ndarray] | None:
    """The baseline: speedup = E(α, γ) / (1 + γc), Leviathan et al. (2023) with a verify pass as
    dear as a plain one and a draft pass costing c of one, whatever the batch. With α known, c is
    the least-squares fit of E/S = 1 + γc over the two points; without, E and c cannot be told
    apart and the prediction is the two points' mean speedup."""
    alphas = _alphas(ends)
    if alphas is None:
        level = float(ends["measured_speedup"].mean())
        return lambda points: np.full(len(points), level)
    gamma = ends["gamma"].to_numpy()
    ratio = np.asarray(spec.expected_tokens(alphas, gamma)) / ends["measured_speedup"].to_numpy()
    cost = max(0.0, float(np.mean((ratio - 1.0) / gamma)))

    def predict(points: pd.DataFrame) -> np.ndarray:
        alpha = _alphas(points)
        return np.asarray(spec.speedup(alpha, points["gamma"].to_numpy(), 1.0, cost), dtype=float)
    return predict


def step_v2(setting: Setting, ends: pd.DataFrame) -> Callable[[pd.DataFrame], np.ndarray] | None:
    """The second-generation step model (:mod:`specviz.model.step`) calibrated as
    :func:`specviz.model.calibration.calibrate` does it: the series' own draft kind, tensor parallelism
    and engine priors; the costs per step and per token fitted to the two points; E fitted too
    where the series gives no acceptance length. Predicts the weighted median of the draws, with
    their 10th to 90th percentile (not widened by the model's error, which this measures)."""
    lengths = None if ends["acceptance_length"].isna().any() else ends["acceptance_length"].to_numpy()
    fit = calibration.calibrate(setting.gpu, setting.target, setting.step_draft, setting.engine,
                                batch=ends["batch"], gamma=ends["gamma"], context=ends["context"],
                                measured_speedup=ends["measured_speedup"], acceptance_length=lengths, tp=setting.tp,
                                ep=setting.ep, precision=setting.precision, prompt_tokens=setting.prompt_tokens,
                                output_tokens=setting.output_tokens, routing_overlap=step.ROUTING_OVERLAP)

    def predict(points: pd.DataFrame) -> dict[str, np.ndarray]:
        known = None if points["acceptance_length"].isna().any() else points["acceptance_length"].to_numpy()
        return {**fit.predict(points["batch"].to_numpy(), points["gamma"].to_numpy(), points["context"].to_numpy(),
                              known, model_error=(0.0, 0.0)), "own_miss": fit.own_miss}
    return predict


def at_presets(setting: Setting, ends: pd.DataFrame) -> Callable[[pd.DataFrame], dict[str, np.ndarray]] | None:
    """The step model as the calculator and Claims price a setting before any calibration, fitted to
    nothing (``ends`` are not read): its costs drawn from the engine preset's priors
    (:func:`specviz.model.calibration.prior_draws`), every draw as likely, E the points' own
    acceptance length (a series without one is not predicted: None). Predicts the median of the
    draws with their 10th to 90th percentile, not widened, as :func:`step_v2` does; what it misses by
    is how far a figure before calibration can be off."""
    if ends["acceptance_length"].isna().any():
        return None
    draws = calibration.prior_draws(setting.engine)
    fit = calibration.Fit(draws, np.ones(draws["mfu"].size), dict(
        gpu=setting.gpu, target=setting.target, draft=setting.step_draft, tree_tokens=None, draft_width=1.0,
        tp=setting.tp, dp=1, ep=setting.ep, precision=setting.precision, prompt_tokens=setting.prompt_tokens,
        output_tokens=setting.output_tokens, routing_overlap=step.ROUTING_OVERLAP))

    def predict(points: pd.DataFrame) -> dict[str, np.ndarray]:
        nothing = np.full(len(points), np.nan)
        if points["acceptance_length"].isna().any():
            return {"speedup": nothing, "low": nothing, "high": nothing, "own_miss": (0.0, 0.0)}
        return {**fit.predict(points["batch"].to_numpy(), points["gamma"].to_numpy(), points["context"].to_numpy(),
                              points["acceptance_length"].to_numpy(), model_error=(0.0, 0.0)), "own_miss": (0.0, 0.0)}
    return predict
