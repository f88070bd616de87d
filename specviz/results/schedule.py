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

import pandas as pd

from specviz.results import explorer

__all__ = ["SETTING", "measured_draft_lengths", "as_ranges"]

SETTING = ("workload", "target_model", "draft_model", "gpu", "engine")
"""What the runs of one table share: a table per distinct setting."""


def measured_draft_lengths(runs: pd.DataFrame) -> pd.DataFrame:
    """The best measured γ at each batch of each setting.

    Repetitions of one (batch, γ) are averaged first. At each batch the γ with the highest mean
    measured speedup is the best, or 0 (plain decoding) where none is above 1.

    Parameters
    ----------
    runs : DataFrame
        Runs with :func:`specviz.results.explorer.with_load`'s columns. Only runs with a
        concurrency (the batch a closed loop holds) enter; a request rate is not a batch.

    Returns
    -------
    DataFrame
        Per setting (:data:`SETTING`) and ``batch``: ``gamma`` (0: speculation loses),
        ``measured_speedup`` (the best γ's mean; 1 where it is 0), ``gammas`` (how many γ were
        measured at that batch) and ``runs`` (the speculative runs behind them).
    """
    columns = [*SETTING, "batch", "gamma", "measured_speedup", "gammas", "runs"]
    paired = explorer.pair_with_baselines(runs)
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
    takes: ``first``, ``last``, ``gamma``, as :func:`specviz.advice.commands.gamma_schedule` writes
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
