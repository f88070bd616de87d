"""Measured draft-length tables: the best γ at each batch, from a grid of runs that share a setting
(target, draft, GPU, engine and workload) and differ in batch (concurrency) and γ, each speculative
run set against the plain run of its batch (:func:`specviz.results.explorer.pair_with_baselines`).

SpecForge's benchmark (batch × steps, ``steps = 0`` the baseline), a ``vllm bench`` sweep over
``num_speculative_tokens`` or a user's own runs give such a grid. The table is what vLLM's
``num_speculative_tokens_per_batch_size``, SGLang's adaptive tiers and TensorRT-LLM's
``draft_len_schedule`` hold, measured instead of modelled (the engines' writers are in
:mod:`specviz.advice`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from specviz import calculator
from specviz.results import explorer, prediction
from specviz.results import extra as extra_fields
from specviz.scenario import Presets, Scenario

__all__ = ["SETTING", "measured_draft_lengths", "as_ranges", "beside_model"]

SETTING = ("workload", "target_model", "draft_model", "gpu", "engine")
"""What the runs of one table share: a table per distinct setting."""


def measured_draft_lengths(runs: pd.DataFrame) -> pd.DataFrame:
    """The best measured γ at each batch of each setting.

    Repetitions of one (batch, γ) are averaged first. At each batch the γ with the highest mean
    measured speedup is the best, or 0 (plain decoding) where none is above 1.

    Parameters
    ----------
    runs : DataFrame
        Runs with :func:`specviz.results.explorer.with_view_columns`'s columns. Only runs with a
        concurrency (the batch a closed loop holds) enter; a request rate is not a batch.

    Returns
    -------
    DataFrame
        Per setting (:data:`SETTING`) and ``batch``: ``gamma`` (0: speculation loses),
        ``measured_speedup`` (the best γ's mean; 1 where it is 0), ``gammas`` (how many γ were
        measured at that batch) and ``runs`` (the speculative runs behind them).
    """
    return _best_by_batch(explorer.pair_with_baselines(runs))


def _best_by_batch(paired: pd.DataFrame) -> pd.DataFrame:
    """:func:`measured_draft_lengths` of runs already paired with their baselines."""
    columns = [*SETTING, "batch", "gamma", "measured_speedup", "gammas", "runs"]
    paired = paired[paired["concurrency"].notna() & paired["num_speculative_tokens"].notna()]
    if paired.empty:
        return pd.DataFrame(columns=columns)
    keys = [*SETTING, "concurrency"]
    means = (paired.groupby([*keys, "num_speculative_tokens"], dropna=False)["measured_speedup"]
             .agg(["mean", "size"]).reset_index())
    best = means.loc[means.groupby(keys, dropna=False)["mean"].idxmax()].set_index(keys)
    counted = means.groupby(keys, dropna=False).agg(gammas=("mean", "size"), runs=("size", "sum"))
    table = best.join(counted).reset_index()
    gains = table["mean"] > 1
    return pd.DataFrame({**{c: table[c] for c in SETTING}, "batch": table["concurrency"].astype(int),
                         "gamma": table["num_speculative_tokens"].astype(int).where(gains, 0),
                         "measured_speedup": table["mean"].where(gains, 1.0), "gammas": table["gammas"],
                         "runs": table["runs"]}, columns=columns).sort_values([*SETTING, "batch"]).reset_index(drop=True)


def as_ranges(table: pd.DataFrame) -> pd.DataFrame:
    """One setting's :func:`measured_draft_lengths` as the ranges of batches an engine's schedule
    takes: ``first``, ``last``, ``gamma``, as :func:`specviz.advice.draft_length.gamma_schedule` writes
    them. A measured batch's γ holds up to the next measured batch; batches below the smallest
    measured one take its γ (the engines' schedules start at batch 1), and the last range ends at
    the largest batch measured. Consecutive batches of one γ are one range."""
    batches = table["batch"].to_numpy()
    first = [1, *batches[1:]]
    last = [*(batches[1:] - 1), batches[-1]]
    ranges = pd.DataFrame({"first": first, "last": last, "gamma": table["gamma"].to_numpy()})
    starts = ranges["gamma"].ne(ranges["gamma"].shift())
    group = starts.cumsum()
    return ranges.groupby(group).agg(first=("first", "min"), last=("last", "max"),
                                     gamma=("gamma", "first")).reset_index(drop=True)


def beside_model(runs: pd.DataFrame, scenario: Scenario, presets: Presets, context: int = 0) -> pd.DataFrame:
    """:func:`measured_draft_lengths` beside the step model's best γ at each measured batch, in the
    setting the runs name (:func:`specviz.results.prediction.run_settings`; the scenario's where they
    name no preset), at the median α of the setting's runs (from each run's acceptance length and
    γ, :func:`specviz.results.prediction.predict`), choosing among the γ that were measured. Runs
    that drafted a tree (:func:`specviz.results.extra.tree_width`) are left out: the model prices
    chains.

    Returns
    -------
    DataFrame
        The measured table's columns, then ``model_gamma`` (0: the model says speculation loses;
        NaN where no α is known or the batch does not fit), ``model_speedup`` (the model's at that γ),
        ``fits`` (the speculative server holds the batch at ``context``, :meth:`Scenario.max_batch`)
        and ``agree`` (the measured and the model's γ are the same).
    """
    # A tree's γ is no chain's draft length, and the model prices chains: trees are left out (SpecForge's
    # γ 7 at top-k 10, 60 draft tokens, had been set against the model's chain of 7: an analyst's pass).
    if "extra" in runs:
        runs = runs[runs["extra"].map(extra_fields.tree_width).isna()]
    paired = explorer.pair_with_baselines(runs)
    table = _best_by_batch(paired)
    extra = {"model_gamma": np.nan, "model_speedup": np.nan, "fits": True, "agree": False}
    if table.empty:
        return table.assign(**extra)
    predicted = prediction.predict(paired, scenario, presets, context)
    predicted = predicted[predicted["concurrency"].notna() & predicted["num_speculative_tokens"].notna()]
    out = []
    for key, one in table.groupby(list(SETTING), dropna=False, sort=False):
        one = one.assign(**extra)
        mine = predicted[(predicted[list(SETTING)].fillna("") == pd.Series(key, index=list(SETTING)).fillna("")).all(axis=1)]
        alpha = float(mine["alpha"].median()) if mine["alpha"].notna().any() else np.nan
        if not np.isnan(alpha):
            ids = prediction.run_settings(mine.iloc[:1], scenario, presets).iloc[0]
            chosen = prediction.setting_scenario(scenario, ids["target"], ids["gpu"], ids["draft"], ids["engine"], presets)
            gammas = np.sort(mine["num_speculative_tokens"].unique().astype(float))[:, None]
            batches = one["batch"].to_numpy(dtype=float)[None, :]
            speed = np.asarray(calculator.evaluate_scenario(chosen, alpha, gammas, batches, context)["speedup"], dtype=float)
            gains = speed.max(axis=0) > 1.0
            fits = one["batch"].to_numpy() <= replace(chosen, context=context).max_batch()
            best = np.where(gains, gammas[np.argmax(speed, axis=0), 0], 0.0)
            one["model_gamma"] = np.where(fits, best, np.nan)
            one["model_speedup"] = np.where(fits, np.where(gains, speed.max(axis=0), 1.0), np.nan)
            one["fits"] = fits
        one["agree"] = one["model_gamma"] == one["gamma"]
        out.append(one)
    return pd.concat(out, ignore_index=True)
