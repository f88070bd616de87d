"""Measured speedups beside the step model's: each paired run predicted in its own setting (its
target, GPU, draft and engine presets), decoding only or at its own load of prompts, and the step
model or the ratios form calibrated to a setting's runs.

Everything here takes the paired runs of :func:`specviz.results.explorer.pair_with_baselines`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from specviz import calculator
from specviz.errors import InputError, Notice
from specviz.model import architecture, calibration, roofline, spec
from specviz.results import extra
from specviz.names import gpu_preset, model_key, models_by_key
from specviz.scenario import (FIELDS, Presets, Scenario, default_draft, default_parallel, draft_choices, preset_costs,
                              resolve_draft)
from specviz.workload import steady_load

__all__ = [
    "LOAD_SPREAD",
    "ratio_warnings",
    "run_presets",
    "run_settings",
    "run_tokens",
    "setting_scenario",
    "SettingFit",
    "SettingRefused",
    "calibrate_settings",
    "predict",
    "calibrate_ratios",
    "ratios_scenario",
    "calibration_in_use",
]


def _acceptance_length(paired: pd.DataFrame) -> pd.Series:
    """Measured tokens per step: the acceptance length, else 1 + vLLM's rate·γ."""
    from_rate = 1 + paired["acceptance_rate"] * paired["num_speculative_tokens"]
    return paired["acceptance_length"].where(paired["acceptance_length"].notna(), from_rate)


def run_presets(runs: pd.DataFrame, models: dict[str, architecture.Model],
                gpus: dict[str, roofline.GPU]) -> pd.DataFrame:
    """The presets each run's own ``target_model`` and ``gpu`` name (``target`` and ``gpu`` ids,
    missing where no preset matches: :func:`specviz.names.model_preset`, :func:`specviz.names.gpu_preset`),
    so that a prediction can say when it uses the sidebar's instead. A served name that matches no
    preset (an alias, ``qwen3-fp8``) is matched by the run's tokenizer, its Hugging Face id, where it
    names one (:func:`specviz.results.extra.tokenizer_id`)."""
    by_key = models_by_key(models)
    named = lambda text: by_key.get(model_key(text)) if isinstance(text, str) else None
    extras = runs["extra"] if "extra" in runs else pd.Series(None, index=runs.index)
    return pd.DataFrame({"target": [named(t) or named(extra.tokenizer_id(e)) for t, e in zip(runs["target_model"], extras)],
                         "gpu": [gpu_preset(g, gpus) if isinstance(g, str) else None for g in runs["gpu"]]},
                        index=runs.index)


# Methods as benchmark tools and engines name them → the step model's draft. An MTP (NextN) module is
# one decoder layer on the target's features sharing its LM head, as an EAGLE head is (DeepSeek-V3
# report, arXiv:2412.19437, §2.2); suffix decoding, like prompt lookup, drafts on the host.
_METHOD_DRAFTS = {"eagle": "eagle", "eagle3": "eagle3", "ngram": "ngram", "suffix": "suffix", "mtp": "mtp",
                  "nextn": "mtp", "deepseek_mtp": "mtp", "medusa": "medusa"}


def _engine_of(engine: Any, version: Any, engines: Collection[str]) -> str | None:
    """The engine preset a run's engine text names; None where it names none. vLLM runs the V1
    engine by default from 0.8.0 (vLLM 0.8.0 release notes), so earlier versions name V0."""
    text = engine.lower() if isinstance(engine, str) else ""
    if "sglang" in text:
        found = "sglang"
    elif "tensorrt" in text or "trt" in text:
        found = "trt-llm"
    elif "vllm" in text:
        release = re.match(r"v?(\d+)\.(\d+)", version) if isinstance(version, str) else None
        found = "vllm-v0" if release and (int(release[1]), int(release[2])) < (0, 8) else "vllm-v1"
    else:
        return None
    return found if found in engines else None


def run_settings(runs: pd.DataFrame, scenario: Scenario, presets: Presets) -> pd.DataFrame:
    """The setting each run's prediction uses: ``target``, ``gpu``, ``draft`` and ``engine`` ids,
    each the run's own where it names a preset (its target model and GPU, :func:`run_presets`; its
    method or draft model; its engine and version) and the scenario's otherwise, and ``own``, True
    where both the target and the GPU are the run's. A run's draft model that matches no preset, on
    the scenario's target, is the scenario's draft; on another target, that target's default draft."""
    named = run_presets(runs, presets.models, presets.gpus)
    keys = {model_key(model_id): model_id for model_id in presets.models}
    rows = []
    for (index, run), target, gpu in zip(runs.iterrows(), named["target"], named["gpu"]):
        own = isinstance(target, str) and isinstance(gpu, str)
        target = target if isinstance(target, str) else scenario.target_id
        method = run.get("spec_method")
        draft = _METHOD_DRAFTS.get(method.lower()) if isinstance(method, str) else None
        if draft is None and isinstance(run.get("draft_model"), str):
            draft = keys.get(model_key(run["draft_model"]))
        if draft == "mtp" and "mtp" not in draft_choices(presets, target):
            draft = "eagle"  # an MTP layer of a model without a preset drafts as a one-layer head does
        if draft is None:
            draft = scenario.draft_id if target == scenario.target_id else default_draft(target, presets)
        rows.append({"target": target, "gpu": gpu if isinstance(gpu, str) else scenario.gpu.id, "draft": draft,
                     "engine": _engine_of(run.get("engine"), run.get("engine_version"), presets.engines)
                     or scenario.engine.id, "own": own})
    return pd.DataFrame(rows, index=runs.index, columns=["target", "gpu", "draft", "engine", "own"])


def setting_scenario(scenario: Scenario, target: str, gpu: str, draft: str, engine: str, presets: Presets) -> Scenario:
    """``scenario`` with the target, GPU, draft and engine of one setting (:func:`run_settings`), at
    the engine's preset costs and on the fewest GPUs that hold the pair (a run does not say how many
    it used; :func:`specviz.scenario.default_parallel`); ``scenario`` itself, custom models, typed GPU
    figures and GPU count included, where the setting is its own."""
    if (target, gpu, draft, engine) == (scenario.target_id, scenario.gpu.id, scenario.draft_id, scenario.engine.id):
        return scenario
    chosen = presets.engines[engine]
    device = scenario.gpu if gpu == scenario.gpu.id else presets.gpus[gpu]
    model, drafter = presets.models[target], resolve_draft(draft, presets)
    return replace(scenario, gpu=device, gpu_figures=scenario.gpu_figures if gpu == scenario.gpu.id else {},
                   target=model, target_id=target, draft=drafter, draft_id=draft, engine=chosen,
                   costs=preset_costs(chosen),
                   **dict(zip(("tp", "dp", "ep"), default_parallel(device, model, drafter, scenario.precision,
                                                                   chosen.memory))))


# The load part of a setting's label (_setting_label), to tell settings apart from their loads.
_LOAD_LABEL = r" · ISL \S+ · OSL \S+$"


def _setting_label(target: str, gpu: str, draft: str, engine: str, tokens: tuple[int, int] | None = None) -> str:
    """A setting's name; with ``tokens``, its runs' load (tokens in and out per request) too."""
    load = f" · ISL {tokens[0]} · OSL {tokens[1]}" if tokens is not None else ""
    return f"{target} · {gpu} · {draft} · {engine}{load}"


def run_tokens(runs: pd.DataFrame) -> pd.DataFrame:
    """Each run's mean tokens in and out per request, ``prompt_tokens`` and ``output_tokens``: its
    output tokens per second over its requests per second, and the rest of its total tokens per
    second over the same (each tool's totals over the run's duration: vLLM's
    ``total_token_throughput`` counts prompt and output tokens), rounded to whole tokens; a file's
    own means per request where it states them (GuideLLM's ``prompt_token_count`` and
    ``output_token_count``: its tokens per second are means of rate series, whose ratio is no
    request's count, 513 in where its requests held 257). NaN where a
    throughput is missing or the figures are not a steady load's (:func:`specviz.workload.steady_load`:
    under one token in, past the longest context a scenario takes, or requests that end within one
    speculative step of the run's γ)."""
    rate = runs["request_throughput"].where(runs["request_throughput"] > 0)
    output = runs["output_throughput"] / rate
    prompt = (runs["total_token_throughput"] - runs["output_throughput"]) / rate
    if "extra" in runs:  # a file's own means per request, where it states them (GuideLLM's), first
        stated = runs["extra"].map(extra.scalar_fields)
        for derived, key in ((prompt, "mean_prompt_tokens"), (output, "mean_output_tokens")):
            means = pd.to_numeric(stated.map(lambda fields: fields.get(key)), errors="coerce")
            derived.update(means[means > 0])
    output, prompt = output.round(), prompt.round()
    gamma = runs["num_speculative_tokens"].fillna(0) if "num_speculative_tokens" in runs else 0
    known = (prompt >= 1) & (output - 1 >= gamma + 1) & (prompt + output <= FIELDS["input_tokens"].upper)
    return pd.DataFrame({"prompt_tokens": prompt.where(known), "output_tokens": output.where(known)}, index=runs.index)


# Runs of one setting whose tokens in and out lie within this share of their median share the median
# load: a sweep's runs differ by a few tokens (vLLM's random dataset draws each request's lengths:
# 264–275 out of 999 in over one file), and a calibration fits one load.
LOAD_SPREAD = 0.2


def _groups(runs: pd.DataFrame, settings: pd.DataFrame, loads: bool) -> list[tuple[str, tuple, tuple[int, int] | None, pd.Index]]:
    """The runs of each setting (:func:`run_settings`), and with ``loads`` of each load too (tokens
    in and out per request, :func:`run_tokens`; runs without them apart; a setting's runs within
    :data:`LOAD_SPREAD` of its median at their own median, rounded): (name, setting, tokens or None,
    the runs' index)."""
    keys = settings[["target", "gpu", "draft", "engine"]]
    if loads:
        tokens = run_tokens(runs)
        by_setting = [keys[c] for c in keys.columns]
        median = tokens.groupby(by_setting, dropna=False).transform("median")
        near = ((tokens - median).abs() <= LOAD_SPREAD * median).all(axis=1)
        # The load they share: the median of those near it, not of every run of the setting.
        shared = tokens.where(near).groupby(by_setting, dropna=False).transform("median").round()
        keys = keys.join(tokens.where(~near, shared))
    groups = []
    for key, index in keys.groupby(list(keys.columns), dropna=False).groups.items():
        load = key[4:]
        tokens = (int(load[0]), int(load[1])) if load and not any(pd.isna(v) for v in load) else None
        groups.append((_setting_label(*key[:4], tokens=tokens), key[:4], tokens, index))
    return groups


def predict(paired: pd.DataFrame, scenario: Scenario, presets: Presets, context: int = 0,
            calibrated: Scenario | Mapping[str, Scenario] | None = None, loads: bool = False) -> pd.DataFrame:
    """The step model's speedup for each paired run, at its own α, γ and concurrency, in its own
    setting (:func:`run_settings`), at its engine's preset costs or at a calibration's, with the band
    of :func:`specviz.calculator.speedup_band`.

    α comes from the measured acceptance length through the inverse of E(α, γ) of the setting's draft
    (:meth:`specviz.scenario.Scenario.expected_tokens`: a reused MTP layer's α at its trained
    positions; never from vLLM's accepted/drafted directly). Rows without γ, acceptance or concurrency
    get no prediction, nor do those with more tokens a step than their draft makes at α = 1 (a
    reused MTP layer's ``mtp_reuse`` below the server's: ``beyond_reuse``), nor those that drafted a
    tree (:func:`specviz.results.extra.tree_width`: ``tree_draft``). A run that measured its
    per-position acceptance is predicted at the reuse factor it shows (``mtp_reuse``, the factor each
    MTP run was predicted at: :meth:`specviz.scenario.Scenario.reuse_from_rates`), else at the
    scenario's. Adds ``alpha``, ``expected_tokens`` (the
    measured tokens a step each prediction was made at), ``predicted_speedup``, ``predicted_low``, ``predicted_high``, ``error``
    (measured − predicted; NaN where the scenario's setting stood in: the gap of two setups, not
    the model's miss), ``setting`` (target · GPU · draft · engine ids), ``own_setting``
    (False where the run named no target or GPU preset and the scenario's stood in) and ``costs``
    (``"preset"``, or ``"calibrated"`` where ``calibrated`` predicted the run), and ``prompt_tokens``
    and ``output_tokens``, the load a run was predicted at (NaN: decoding only at ``context``).

    Parameters
    ----------
    paired : DataFrame
        Speculative runs beside their baselines (:func:`specviz.results.explorer.pair_with_baselines`).
    scenario : Scenario
        The sidebar's scenario: what a run does not name (its target, GPU, draft or engine) is the
        scenario's (:func:`run_settings`).
    presets : Presets
        The shipped presets a run's names are matched against.
    context : int
        The context of runs that decode only.
    loads : bool
        Predict each run whose tokens per request are known (:func:`run_tokens`) as a steady load of
        its requests (:func:`specviz.workload.steady_load`: each step also takes arriving prompts, at
        the requests' mean context), its setting named with its load; the others decode only at
        ``context``.
    calibrated : Scenario or mapping of str to Scenario, optional
        A calibration to predict with in place of the preset costs (:func:`calibration_in_use`):
        scenarios at fitted costs by the label of the setting they were fitted on, or one scenario
        for every run (a ratios fit). A run is then predicted as the calculator opened at that
        scenario would predict it, band included.
    """
    out = paired.copy()
    length = _acceptance_length(out)
    gamma = out["num_speculative_tokens"]
    usable = length.notna() & gamma.notna() & out["concurrency"].notna() & (gamma >= 1)
    usable &= (length >= 1) & (length <= gamma + 1)
    tree = out["extra"].map(extra.tree_width).notna() if "extra" in out else pd.Series(False, index=out.index)
    usable &= ~tree
    settings = run_settings(out, scenario, presets)
    out["setting"] = [_setting_label(*row) for row in settings[["target", "gpu", "draft", "engine"]].itertuples(index=False)]
    out["own_setting"] = settings["own"]
    for name in ("alpha", "expected_tokens", "mtp_reuse", "predicted_speedup", "predicted_low", "predicted_high",
                 "prompt_tokens", "output_tokens"):
        out[name] = np.nan
    out["costs"], out["beyond_reuse"], out["tree_draft"] = "preset", False, tree
    for label, key, tokens, rows in _groups(out[usable], settings[usable], loads):
        fitted = calibrated if isinstance(calibrated, Scenario) else (calibrated or {}).get(label)
        chosen = setting_scenario(scenario, *key, presets) if fitted is None else fitted
        if fitted is not None:
            out.loc[rows, "costs"] = "calibrated"
        if tokens is not None:
            if not chosen.prefill and chosen.mode == "step":  # at the runs' longest draft (run_tokens held it)
                chosen = steady_load(replace(chosen, gamma=int(gamma[rows].max())), *tokens)
            out.loc[rows, "setting"] = label
            out.loc[rows, "prompt_tokens"], out.loc[rows, "output_tokens"] = tokens
        # A run that measured its positions brings the reuse factor its MTP layer showed (a few values
        # for a file's runs: one pass of the model each).
        measured_shares = out.loc[rows, "per_position_acceptance"] if "per_position_acceptance" in out and \
            chosen.mtp_reused_from is not None else [None] * len(rows)
        factors = pd.Series([chosen.reuse_from_rates(_conditional(shares)) for shares in measured_shares], index=rows,
                            dtype=object)
        for factor in factors.dropna().unique().tolist() + ([None] if factors.isna().any() else []):
            same = rows[factors.isna().to_numpy()] if factor is None else rows[(factors == factor).to_numpy()]
            _predict_rows(out, same, chosen if factor is None else replace(chosen, mtp_reuse=factor), gamma, length,
                          chosen.context if chosen.prefill else context)
    # Where the sidebar's setting stood in, the gap is between two setups, not the model's miss.
    out["error"] = (out["measured_speedup"] - out["predicted_speedup"]).where(out["own_setting"])
    return out


def _conditional(shares: Any) -> list[float] | None:
    """Conditional per-position rates from the shares of drafts accepted at each position (vLLM's
    per-position acceptance: a_i = u_i / u_{i−1}, u_0 = 1); None where none were measured or a share
    of 0 leaves the next one undefined."""
    if shares is None or (np.ndim(shares) == 0 and pd.isna(shares)) or not len(shares):
        return None
    u = np.concatenate([[1.0], np.asarray(shares, dtype=float)])
    return None if np.any(u[:-1] <= 0) else (u[1:] / u[:-1]).tolist()


def _predict_rows(out: pd.DataFrame, rows: pd.Index, chosen: Scenario, gamma: pd.Series, length: pd.Series,
                  at: int) -> None:
    """Fill ``out``'s predictions for ``rows`` at ``chosen`` (:func:`predict`): α from each run's tokens
    a step through the inverse of the scenario's E, the speedup and its band; a run with more tokens a
    step than the scenario's draft makes at α = 1 is marked ``beyond_reuse`` instead."""
    g, measured = (v[rows].to_numpy(dtype=float) for v in (gamma, length))
    reachable = measured <= np.asarray(chosen.expected_tokens(1.0, g)) + 1e-9
    out.loc[rows[~reachable], "beyond_reuse"] = True
    rows, g, measured = rows[reachable], g[reachable], measured[reachable]
    if not len(rows):
        return
    alpha = np.asarray(spec.alpha_from_acceptance_length(measured, g, **chosen.reuse))
    batch = out.loc[rows, "concurrency"].to_numpy(dtype=float)
    out.loc[rows, "alpha"], out.loc[rows, "expected_tokens"] = alpha, measured
    if chosen.mtp_reused_from is not None:
        out.loc[rows, "mtp_reuse"] = chosen.mtp_reuse
    out.loc[rows, "predicted_speedup"] = calculator.evaluate_scenario(chosen, alpha, g, batch, at)["speedup"]
    low, high = calculator.speedup_band(chosen, alpha, g, batch, at)
    out.loc[rows, "predicted_low"], out.loc[rows, "predicted_high"] = low, high


def calibrate_ratios(predicted: pd.DataFrame) -> dict[str, float] | None:
    """Verify and draft cost that fit the measured points by least squares.

    speedup = E / (v + γc) is linear in (v, c) after rearranging: E / S = v + γ·c, with E the
    tokens a step each run made (``expected_tokens``, :func:`predict`). Solved with
    ``numpy.linalg.lstsq`` over the rows with α; None with fewer than two such rows, or when the
    fit would need a negative cost or a free verify pass.
    """
    rows = predicted.dropna(subset=["alpha", "expected_tokens", "measured_speedup"])
    if len(rows) < 2:
        return None
    g = rows["num_speculative_tokens"].to_numpy(dtype=float)
    e = rows["expected_tokens"].to_numpy(dtype=float)
    design = np.column_stack([np.ones_like(g), g])
    (v, c), *_ = np.linalg.lstsq(design, e / rows["measured_speedup"].to_numpy(dtype=float), rcond=None)
    if not (np.isfinite(v) and np.isfinite(c)) or v <= 0 or c < 0:  # a free verify pass is impossible
        return None
    fitted = e / np.asarray(spec.step_cost(g, v, c))
    rms = float(np.sqrt(np.mean((fitted - rows["measured_speedup"].to_numpy(dtype=float)) ** 2)))
    # The settings apart from their loads (" · ISL 313 · OSL 498", _setting_label): one setting at two loads
    # is one setting, whose ratios a fit may hold (an attack pass).
    settings = tuple(rows["setting"].dropna().astype(str).str.replace(_LOAD_LABEL, "", regex=True).unique()
                     ) if "setting" in rows else ()
    return {"verify_cost": float(v), "draft_cost": float(c), "rms_error": rms, "points": len(rows), "settings": settings}


def ratios_scenario(fit: dict[str, float], scenario: Scenario) -> Scenario:
    """``scenario`` in ratios mode at a ratios fit's verify and draft cost (:func:`calibrate_ratios`),
    to three decimals as a link carries them."""
    return replace(scenario, mode="ratios", verify_cost=round(fit["verify_cost"], 3),
                   draft_cost=round(fit["draft_cost"], 3))


def ratio_warnings(fit: dict[str, Any]) -> list[Notice]:
    """What makes a ratios fit (:func:`calibrate_ratios`) suspect, so that it is not shown as a
    success: a verify pass cheaper than a plain one (``fit.verify_below_one``), which no cost model
    allows: it scores more tokens than a plain pass; runs of more than one setting in one fit
    (``fit.ratios_mixed``), whose costs are no one setting's (an analyst's pass: three SGLang runs
    of an EAGLE-3 head and a vLLM run of MTP had made one fit, said nowhere)."""
    warnings = [Notice("fit.verify_below_one", verify_cost=fit["verify_cost"])] if fit["verify_cost"] < 1 else []
    if len(mixed := fit.get("settings", ())) > 1:
        warnings.append(Notice("fit.ratios_mixed", count=len(mixed), settings="; ".join(mixed)))
    return warnings


@dataclass
class SettingFit:
    """The step model calibrated on the runs of one setting: the setting's scenario at the fitted
    costs (the weighted medians), the fit itself (its band), the points it used, the RMS error of
    its speedups at them and its warnings (message keys of :mod:`specviz.model.calibration`)."""

    setting: str
    scenario: Scenario
    fit: calibration.Fit
    points: int
    rms_error: float
    warnings: list[str]


@dataclass
class SettingRefused:
    """A setting whose runs could not be fitted, and why (a fit past
    :data:`specviz.model.calibration.MAX_FIT_CELLS`)."""

    setting: str
    points: int
    reason: Notice


def calibrate_settings(predicted: pd.DataFrame, scenario: Scenario, presets: Presets, context: int = 0,
                       time_limit_s: float | None = None, loads: bool = False) -> list[SettingFit | SettingRefused]:
    """Calibrate the step model on each setting's runs (:func:`specviz.model.calibration.calibrate`), with
    the engine's priors, at each run's measured acceptance length; settings with fewer than two
    usable runs are left out, and a setting of too many runs is refused, not fitted. Past
    ``time_limit_s`` (counted from the call, checked between settings) the settings not yet fitted
    are refused with ``fit.time_limit``. With ``loads``, as :func:`predict` takes it: the runs of
    each setting and load are fitted as a steady load of their requests, each step carrying their
    prompts (the fit's scenario is that load's, :func:`specviz.workload.steady_load`)."""
    started = time.monotonic()
    rows = predicted.dropna(subset=["alpha", "measured_speedup", "concurrency"])
    settings = run_settings(rows, scenario, presets)
    fits = []
    for label, key, tokens, index in _groups(rows, settings, loads):
        if len(index) < 2:
            continue
        if time_limit_s is not None and time.monotonic() - started > time_limit_s:
            fits.append(SettingRefused(label, len(index), Notice("fit.time_limit", seconds=time_limit_s)))
            continue
        chosen = setting_scenario(scenario, *key, presets)
        column = lambda name: rows.loc[index, name].to_numpy(dtype=float)
        if tokens is not None:  # held to the runs' longest draft (run_tokens did), opened at the sidebar's
            chosen = replace(steady_load(replace(chosen, gamma=int(column("num_speculative_tokens").max())), *tokens),
                             gamma=chosen.gamma)
        at = chosen.context if chosen.prefill else context
        lengths = _acceptance_length(rows.loc[index]).to_numpy(dtype=float)
        batch, gamma, measured = column("concurrency"), column("num_speculative_tokens"), column("measured_speedup")
        with np.errstate(all="ignore"):
            try:
                fit = calibration.calibrate(chosen.gpu, chosen.target, chosen.draft, chosen.engine, batch=batch,
                                            gamma=gamma, context=np.full_like(batch, at),
                                            measured_speedup=measured, acceptance_length=lengths, **chosen.parallel,
                                            precision=chosen.precision, routing_overlap=chosen.routing_overlap,
                                            **chosen.load)
            except InputError as refused:  # only its size: every other input was checked above
                fits.append(SettingRefused(label, len(index), Notice(refused.key, **refused.params)))
                continue
            own = fit.predict(batch, gamma, at, lengths)["speedup"]
        costs = calibration.fitted_costs(fit, chosen.costs.link_gb_s)
        fits.append(SettingFit(label, replace(chosen, costs=costs), fit, len(index),
                               float(np.sqrt(np.mean((own - measured) ** 2))), list(fit.warnings)))
    return fits


def calibration_in_use(kind: str, fit: list[SettingFit | SettingRefused] | dict[str, float] | None,
                       scenario: Scenario) -> Scenario | dict[str, Scenario] | None:
    """What :func:`predict` predicts with after a calibration (its ``calibrated``): each setting fitted
    without warnings at its fitted costs (``kind`` ``"step"``, :func:`calibrate_settings`), or, for a
    ratios fit without warnings (``"ratios"``, :func:`calibrate_ratios`), ``scenario`` in ratios mode
    at its costs for every run. These are the fits a page hands to the calculator: a suspect one, like
    a failed one, leaves the preset's predictions (None, or no setting)."""
    if not fit:
        return None
    if kind == "ratios":
        return None if ratio_warnings(fit) else ratios_scenario(fit, scenario)
    return {one.setting: one.scenario for one in fit if isinstance(one, SettingFit) and not one.warnings}
