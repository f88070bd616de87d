"""The what-if calculator's tables and sweeps: one scenario, many views, no Streamlit.

A :class:`specviz.scenario.Scenario` fixes the hardware, the model pair, the engine and how a step's
cost is found: from the step model (``mode="step"``, :mod:`specviz.model.step`, at the scenario's costs)
or given directly as ratios (``mode="ratios"``: verify_cost and draft_cost, the form of seed 000's
tables). Every speedup of the scenario below goes through :func:`evaluate_scenario`, so the headline,
the tables and the charts always agree (:func:`alpha_table`'s two reference columns are seed 000's
bounds at v = 1 and v = γ + 1, by the closed form); :func:`speedup_band` and :func:`band_of` say how
sure the step model's figures are. What is not
a speedup (the memory fit, the roofline's points, the expert tax) is read from the step model and
the scenario directly.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Callable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .errors import Notice
from .model import calibration, dtypes, roofline, spec, step
from .scenario import DATA_PARALLEL, TENSOR_PARALLEL, Scenario, largest_batch
from . import workload

__all__ = [
    "SEED_ALPHAS",
    "BATCH_CHART_ALPHAS",
    "BAND_DRAWS",
    "evaluate_scenario",
    "headline",
    "batch_table",
    "speedup_band",
    "band_verdict",
    "band_shown",
    "breakeven_alpha",
    "alpha_table",
    "batch_sweep",
    "loses_from",
    "dips",
    "band_vs_batch",
    "heatmap_grid",
    "gamma_sweep",
    "batch_grid",
    "context_options",
    "memory_fit",
    "ways_to_fit",
    "equal_memory",
]

SEED_ALPHAS = (0.4, 0.6, 0.7, 0.8, 0.9)  # the rows of seed 000's tables
# The batch chart's lines, with the page's α added: the α of the published acceptance of trained drafts
# (data/published_acceptance.csv: 0.66-0.85 for EAGLE-3, P-EAGLE and MTP) and a tenth either side.
BATCH_CHART_ALPHAS = (0.5, 0.6, 0.7, 0.8, 0.9)
BAND_DRAWS = 400  # prior draws behind a band: its 10th and 90th percentiles move by about 1 % between seeds
_BAND_CHUNK = 1 << 17  # draws × points timed at once: 1 MB a temporary


def evaluate_scenario(scenario: Scenario, alpha: ArrayLike, gamma: ArrayLike, batch: ArrayLike,
                      context: ArrayLike = 0, *, expert_tax: bool = True) -> dict[str, np.ndarray]:
    """Speedup and its parts for a scenario, broadcast over α, γ, batch and context.

    In ``step`` mode this is :func:`specviz.model.step.step` on a chain of γ drafts at the scenario's
    costs, precision and tensor parallelism, with each pass's regime and the ridge the passes meet
    (the device's peak over bandwidth at the precision's dtype, times mfu / mbu). In ``ratios``
    mode the costs are the scenario's constants, speedup = E / (v + γc) (:func:`specviz.model.spec.speedup`),
    and the step-model-only keys (step times, regime) are absent. ``expert_tax=False``: the bound
    without the expert tax (:func:`specviz.model.step.step`).

    Returns
    -------
    dict of ndarray
        ``alpha, gamma, batch, context, verify_cost, draft_cost, expected_tokens, speedup``; in step
        mode also ``tokens_per_plain, tokens_per_verify`` (the positions of a plain and a verify pass,
        a steady load's prompts included: B·P/O and E times as many), ``regime`` (of the verify
        pass), ``baseline_regime,
        ridge_flop_per_byte, verify_intensity, baseline_step_ms, verify_step_ms, draft_step_ms,
        spec_step_ms`` (γ drafts and the verify pass), ``baseline_tokens_per_s, spec_tokens_per_s``, all
        broadcast to one shape.
    """
    a, g, b, ctx = (np.asarray(x, dtype=float) for x in (alpha, gamma, batch, context))
    if scenario.mode == "step":
        # Each part at its own shape: the passes do not depend on α, so on an (α, γ, batch) grid only
        # the figures with E in them are computed at its full size, E times a figure of the passes
        # (one product a point); all are broadcast at the end.
        r = step.step(scenario.gpu, scenario.target, scenario.draft, batch=b, gamma=g, context=ctx, alpha=a,
                      **scenario.parallel, precision=scenario.precision, costs=scenario.costs, expert_tax=expert_tax,
                      routing_overlap=scenario.routing_overlap, mtp_reuse=scenario.mtp_reuse, broadcast=False,
                      **scenario.load)
        prompts = scenario.prompts_per_step(b)
        out = {"alpha": a, "gamma": g, "batch": b, "context": ctx,
               "tokens_per_plain": b + prompts, "tokens_per_verify": b * (g + 1.0) + r["expected_tokens"] * prompts,
               "regime": np.where(r["verify_compute_bound"], "compute", "memory"),
               "baseline_regime": np.where(r["plain_compute_bound"], "compute", "memory"),
               "ridge_flop_per_byte": np.asarray(r["verify_ridge"]),
               "verify_intensity": r["verify_intensity"], "baseline_step_ms": r["plain_s"] * 1e3,
               "verify_step_ms": r["verify_s"] * 1e3, "draft_step_ms": r["draft_s"] * 1e3,
               "spec_step_ms": r["spec_s"] * 1e3,
               "verify_cost": r["verify_cost"], "draft_cost": r["draft_cost"], "expected_tokens": r["expected_tokens"],
               "speedup": r["speedup"], "baseline_tokens_per_s": b / r["plain_s"],
               "spec_tokens_per_s": r["expected_tokens"] * (b / r["spec_s"])}
    else:
        out = {"alpha": a, "gamma": g, "batch": b, "context": ctx,
               "verify_cost": np.asarray(scenario.verify_cost, dtype=float),
               "draft_cost": np.asarray(scenario.draft_cost, dtype=float),
               "expected_tokens": np.asarray(scenario.expected_tokens(a, g)),
               "speedup": np.asarray(spec.speedup(a, g, scenario.verify_cost, scenario.draft_cost, **scenario.reuse))}
    shape = np.broadcast_shapes(*(np.shape(v) for v in out.values()))
    return {k: np.broadcast_to(v, shape) for k, v in out.items()}


def headline(scenario: Scenario, fit: dict[str, Any] | None = None) -> dict[str, Any]:
    """The calculator's headline at the scenario's own α, γ, batch and context, as the page and
    ``specviz calc`` both show it, so that the two cannot differ.

    :func:`evaluate_scenario`'s figures as Python scalars; in step mode also ``fit``
    (:func:`memory_fit`, passed in where the caller has it: the page finds it once a run, not at
    each move of α), the band ``low`` and ``high`` (:func:`speedup_band`) and ``ideal_speedup``
    (:meth:`specviz.scenario.Scenario.ideal`, a bound). A batch the memory does not hold has no
    speedup: ``speedup``, ``low``, ``high``, ``ideal_speedup`` and ``spec_tokens_per_s`` are None, and
    ``baseline_tokens_per_s`` too where the plain server does not hold it either. The passes' costs
    and times stay: they are what they are.
    """
    point = (scenario.alpha, scenario.gamma, scenario.batch, scenario.context)
    out: dict[str, Any] = {key: value.item() for key, value in evaluate_scenario(scenario, *point).items()}
    if scenario.mode != "step":
        return out
    out["fit"] = fit = memory_fit(scenario) if fit is None else fit
    if not fit["fits"]:
        out |= dict.fromkeys(("speedup", "low", "high", "ideal_speedup", "spec_tokens_per_s"))
    else:
        low, high = speedup_band(scenario, *point)
        out |= {"low": float(low), "high": float(high),
                "ideal_speedup": float(evaluate_scenario(scenario.ideal(), *point)["speedup"])}
    if not fit["fits_plain"]:
        out["baseline_tokens_per_s"] = None
    return out


def breakeven_alpha(scenario: Scenario, gamma: int, batch: int, context: ArrayLike) -> float:
    """The α at which speculation breaks even (speedup 1) at this γ, batch and context; NaN where no
    α up to 1 pays, 0 where every α does.

    Decoding only, or with given ratios, a step's costs do not move with α: the closed form at them
    (:func:`specviz.model.spec.breakeven_alpha`). Under a steady load a speculative step carries E
    times the prompts of a plain one, so its verify cost grows with α: the speedup, which still rises
    with E (E·t_plain/(t₀ + E·x) does), is found on a grid of 1,001 α and the crossing of 1
    interpolated between the two points about it.
    """
    if not scenario.prefill or scenario.mode != "step":
        here = evaluate_scenario(scenario, 0.5, gamma, batch, context)
        return float(spec.breakeven_alpha(gamma, here["verify_cost"], here["draft_cost"], **scenario.reuse))
    alphas = np.linspace(0.0, 1.0, 1001)
    speed = np.asarray(evaluate_scenario(scenario, alphas, gamma, batch, context)["speedup"], dtype=float)
    if speed[-1] < 1.0:
        return math.nan
    first = int(np.argmax(speed >= 1.0))
    if first == 0:
        return 0.0
    return float(np.interp(1.0, speed[first - 1:first + 1], alphas[first - 1:first + 1]))


def speedup_band(scenario: Scenario, alpha: ArrayLike, gamma: ArrayLike, batch: ArrayLike,
                 context: ArrayLike = 0, draws: int = BAND_DRAWS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The 10th and 90th percentiles of the step model's speedup over the engine's priors, widened by
    the model's own error (:func:`specviz.model.calibration.widen`).

    Every cost knob still at the engine's preset is drawn from its prior
    (:func:`specviz.model.calibration.prior_draws`: the published ranges behind the preset); a knob the
    user moved off the preset is held at the user's value, so a band over fewer unknowns is
    narrower. The speedup's spread over the draws, with the model's error on published points
    (:data:`specviz.model.calibration.MODEL_ERROR`), is how far the realistic figure can be trusted
    before it is calibrated on measurements (the explorer's measured vs predicted).

    Returns
    -------
    low, high : ndarray
        Broadcast over the inputs like :func:`evaluate_scenario`'s speedup. In ``ratios`` mode both
        are the speedup itself: the costs are given, not modelled.
    """
    if scenario.mode != "step":
        speed = evaluate_scenario(scenario, alpha, gamma, batch, context)["speedup"]
        return speed, speed
    costs = scenario.drawn(draws, seed).costs
    e = np.asarray(scenario.expected_tokens(alpha, gamma), dtype=float)
    if scenario.prefill:
        # The prefill a speculative step carries grows with E: each α has its own steps.
        return calibration.widen(*_quantiles_with_prefill(scenario, e, gamma, batch, context, costs))
    # The speedup is E(α, γ) times plain/spec, which no draw changes: the quantiles are taken over the
    # draws at E = 1 on the (γ, batch, context) grid and scaled by E, so an α axis costs one multiply.
    low, high = calibration.widen(*_quantiles_over_draws(scenario, gamma, batch, context, costs))
    return e * low, e * high


def band_of(scenario: Scenario, figure: Callable[[Scenario], ArrayLike], draws: int = BAND_DRAWS,
            seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The band of any speedup the step model prices from a scenario, as :func:`speedup_band` gives a
    step's: the 10th and 90th percentiles of ``figure`` over the engine's priors
    (:meth:`specviz.scenario.Scenario.drawn`, the same draws at the same seed), widened by the model's
    own error on published speedups (:func:`specviz.model.calibration.widen`).

    ``figure`` takes the drawn scenario and returns the figure with the draws on its last axis, so its
    other inputs must broadcast against that axis (a point's scalars do): a whole request's speedup
    (:func:`request_speedup_band`), the ratio at equal memory (:func:`equal_memory`). A figure that
    is not finite in a draw (a request whose prompts queue without end) gives NaN edges.
    """
    values = np.asarray(figure(scenario.drawn(draws, seed)), dtype=float)
    low, high = np.quantile(np.where(np.isfinite(values), values, np.nan), (0.1, 0.9), axis=-1)
    return calibration.widen(low, high)


def request_speedup_band(scenario: Scenario, alpha: float, gamma: int, batch: int, input_tokens: int,
                         output_tokens: int) -> tuple[float, float]:
    """The band of a whole request's speedup (:func:`specviz.workload.end_to_end`'s ``e2e_speedup``:
    its time to first token and its decode, plain over speculative) at one point, by :func:`band_of`;
    NaN where either server's prompts queue without end (no request has a time, so there is no ratio:
    ``e2e_speedup`` is 0 or NaN there)."""

    def request_speedup(drawn: Scenario) -> np.ndarray:
        whole = workload.end_to_end(drawn, alpha, gamma, batch, input_tokens, output_tokens)
        timed = np.isfinite(whole["e2e_plain_s"]) & np.isfinite(whole["e2e_spec_s"])
        return np.where(timed, whole["e2e_speedup"], np.nan)

    low, high = band_of(scenario, request_speedup)
    return float(low), float(high)


def band_verdict(low: float, high: float) -> str:
    """What a band (:func:`speedup_band`) says of speculation: ``pays`` where even its low edge is
    above 1, ``loses`` where even its high edge is below 1, else ``unsure`` (1 lies inside it)."""
    return "pays" if low > 1 else "loses" if high < 1 else "unsure"


def band_shown(low: float, high: float, decimals: int = 2) -> tuple[float, float]:
    """A band's edges as they are said, to ``decimals`` places, each rounded away from 1 where
    rounding would take it onto or across 1, so that the figures agree with :func:`band_verdict`
    on the edges as computed: a low edge of 0.9996 read "between 1.00× and 1.50×" beside "may gain
    or lose", and a high edge of 0.9973 "loses … between 0.62× and 1.00×"."""
    step = 10.0 ** -decimals

    def edge(value: float) -> float:
        shown = round(value, decimals)
        if value < 1.0 <= shown:
            return math.floor(value / step) * step
        if value > 1.0 >= shown:
            return math.ceil(value / step) * step
        return shown

    return edge(low), edge(high)


def _quantiles_with_prefill(scenario: Scenario, expected: np.ndarray, gamma: ArrayLike, batch: ArrayLike,
                            context: ArrayLike, costs: step.Costs) -> tuple[np.ndarray, np.ndarray]:
    """The 10th and 90th percentiles of the speedup E·t_plain/t_spec over the drawn ``costs`` where
    each step carries the load's prefill (``scenario.prefill``), at E = ``expected``: the speculative
    step's work depends on E, so the points are the (E, γ, batch, context) grid, flattened, timed
    ``_BAND_CHUNK`` draws × points at a time (:func:`specviz.model.step.step_seconds`)."""
    points = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (expected, gamma, batch, context)))
    shape = points[0].shape
    e, g, b, ctx = (v.reshape(-1, 1) for v in points)
    low, high = np.empty(e.shape[0]), np.empty(e.shape[0])
    rows = max(1, _BAND_CHUNK // np.size(costs.mfu))
    for start in range(0, e.shape[0], rows):
        part = slice(start, start + rows)
        work = step.step_work(scenario.gpu, scenario.target, scenario.draft, batch=b[part], gamma=g[part],
                              context=ctx[part], **scenario.parallel, precision=scenario.precision,
                              link_gb_s=scenario.costs.link_gb_s, routing_overlap=scenario.routing_overlap,
                              expected_tokens=e[part], **scenario.load)
        times = step.step_seconds(work, costs)
        speed = e[part] * times["plain_s"] / times["spec_s"]
        low[part], high[part] = np.quantile(speed, (0.1, 0.9), axis=-1)
    return low.reshape(shape), high.reshape(shape)


def _quantiles_over_draws(scenario: Scenario, gamma: ArrayLike, batch: ArrayLike, context: ArrayLike,
                          costs: step.Costs) -> tuple[np.ndarray, np.ndarray]:
    """The 10th and 90th percentiles of the step model's speedup at E = 1 over the drawn ``costs``
    (arrays of as many draws) on the (γ, batch, context) grid.

    The passes' work does not depend on the knobs (:func:`specviz.model.step.step_work`): it is found
    once, on the points with a last axis of length 1 along which the draws time it
    (:func:`specviz.model.step.step_ratio`, which gives t_spec / t_plain: the quantiles of the
    speedups are the inverses' order statistics, inverted). That is done ``_BAND_CHUNK`` draws × points at a time,
    cut along the points' last axis longer than 1 (the batch's, on which every pass's work depends),
    and each part's quantiles are taken at once, while its speedups are in cache: no array of all the
    draws × points is made, and so no fresh memory for one, which costs a page fault every 4 KB
    (about 3 µs each here: 5 ms for the bench's band, bench/bench_grid.py).
    """
    g, b, ctx = (np.asarray(v, dtype=float)[..., None] for v in (gamma, batch, context))
    work = step.step_work(scenario.gpu, scenario.target, scenario.draft, batch=b, gamma=g, context=ctx,
                          **scenario.parallel, precision=scenario.precision, link_gb_s=scenario.costs.link_gb_s,
                          routing_overlap=scenario.routing_overlap)
    terms = step.ratio_terms(work, costs)
    points = np.broadcast_shapes(g.shape, b.shape, ctx.shape)[:-1]
    low, high = np.empty(points), np.empty(points)
    cut = max((axis for axis, size in enumerate(points) if size > 1), default=None)
    parts = [()]
    if cut is not None:
        rows = max(1, _BAND_CHUNK * points[cut] // (np.size(costs.mfu) * int(np.prod(points))))
        parts = [(slice(None),) * cut + (slice(start, start + rows),) for start in range(0, points[cut], rows)]
    for index in parts:
        inverses = step.step_ratio(step.part_at(terms, index + (slice(None),)))
        low[index], high[index] = _quantiles_in_place(inverses, (0.1, 0.9), of_inverse=True)
    return low, high


def _quantiles_in_place(values: np.ndarray, quantiles: tuple[float, ...], of_inverse: bool = False) -> list[np.ndarray]:
    """``np.quantile(values, quantiles, axis=-1)`` for finite values and ascending quantiles, with the
    same result (its default, linear method), reordering ``values`` along its last axis in place; with
    ``of_inverse``, the quantiles of 1 / values (positive values) to rounding.

    The q-quantile of n values lies at p = (n − 1)·q of their sorted order, between the order
    statistics ⌊p⌋ and ⌊p⌋ + 1, with weight t = p − ⌊p⌋: b − (b − a)(1 − t) for t ≥ 0.5, else a + (b − a)t
    (numpy's interpolation, exact at both ends); the inverses' k-th order statistic is the inverse
    of the values' (n − 1 − k)-th. Of each two neighbouring statistics, the upper one costs one
    partition of the part of the axis not yet placed, the lower one the max of what that partition
    leaves below it: np.quantile, which copies the values and partitions them at all the indices at
    once, took 1.4 times as long on the bench's band (bench/bench_grid.py), 3.4 times with the draws
    on the first axis.
    """
    n = values.shape[-1]
    rank = (lambda k: n - 1 - k) if of_inverse else (lambda k: k)
    around = [(int((n - 1) * q), min(int((n - 1) * q) + 1, n - 1)) for q in quantiles]
    placed, start = {}, 0
    for low, high in sorted({tuple(sorted((rank(below), rank(above)))) for below, above in around}):
        if high not in placed:
            values[..., start:].partition(high - start, axis=-1)
            placed[high] = values[..., high]
            if low not in placed:
                placed[low] = values[..., start:high].max(axis=-1)
            start = high + 1
    result = []
    for q, (below, above) in zip(quantiles, around):
        a, b, t = placed[rank(below)], placed[rank(above)], (n - 1) * q - below
        if of_inverse:
            a, b = 1.0 / a, 1.0 / b
        result.append(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t)
    return result


def batch_grid(batch_max: int, points: int = 64) -> np.ndarray:
    """Log-spaced whole batch sizes from 1 to ``batch_max`` (for charts; no repeats)."""
    return np.unique(np.round(np.geomspace(1, batch_max, points)).astype(int))


def alpha_table(scenario: Scenario, gamma: int, batch: int, context: int = 0,
                alphas: ArrayLike = SEED_ALPHAS) -> pd.DataFrame:
    """Seed 000's table: speedup per α when memory-bound (v = 1), at the compute-bound limit
    (v = γ + 1) and in this scenario at this batch.

    The draft cost is the scenario's own at this batch, so the first two columns differ from the
    seed's only by it (the seed uses c = 0.05).
    """
    a = np.asarray(alphas, dtype=float)
    here = evaluate_scenario(scenario, a, gamma, batch, context)
    c = here["draft_cost"]
    return pd.DataFrame({
        "alpha": a,
        "alpha_vllm": spec.acceptance_rate_from_alpha(a, gamma, **scenario.reuse),
        "expected_tokens": here["expected_tokens"],
        "memory_bound": spec.speedup(a, gamma, 1.0, c, **scenario.reuse),
        "compute_bound_limit": spec.speedup(a, gamma, gamma + 1.0, c, **scenario.reuse),
        "this_batch": here["speedup"],
    })


def batch_sweep(scenario: Scenario, alphas: ArrayLike, gamma: int, context: int,
                batch_max: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Speedup against batch for several α, and where each α's speedup crosses 1.

    Returns
    -------
    curves : DataFrame
        Long form with columns ``alpha, batch, speedup, verify_cost`` over a log grid, and
        ``regime`` where the step model prices the passes (``mode="step"``; ratios have none).
    crossings : DataFrame
        Every whole batch (searched over every batch 1..batch_max) at which an α's speedup falls
        below 1 or rises to it again (:func:`specviz.model.roofline.crossings`): columns ``alpha``,
        ``batch`` and ``rises``. A mixture of experts can lose at small batches and pay again
        further on; :func:`loses_from` is the batch above which speculation should be off.
    """
    a = np.asarray(alphas, dtype=float)[:, None]
    every = np.arange(1, batch_max + 1)
    full = evaluate_scenario(scenario, a, gamma, every, context)
    rows, batches, rises = roofline.crossings(every, full["speedup"])
    crossings = pd.DataFrame({"alpha": a[rows, 0], "batch": batches, "rises": rises})
    rows = batch_grid(batch_max) - 1
    frame = {"alpha": np.repeat(a[:, 0], rows.size), "batch": np.tile(every[rows], a.shape[0]),
             "speedup": full["speedup"][:, rows].ravel(),
             "verify_cost": full["verify_cost"][:, rows].ravel()}
    if "regime" in full:
        frame["regime"] = full["regime"][:, rows].ravel()
    return pd.DataFrame(frame), crossings


def batch_table(scenario: Scenario, alpha: float, gamma: int, context: int, batch_max: int, band: pd.DataFrame,
                limit: int | None = None) -> pd.DataFrame:
    """The By-batch view's table: :func:`batch_sweep`'s curves at :data:`BATCH_CHART_ALPHAS` and
    ``alpha`` (as given: the headline's, the chart's), with ``alpha``'s ``band`` (:func:`band_vs_batch`) beside
    its rows, and ``fits``: whether the batch is at most ``limit``, the most the memory holds with the
    draft (every batch where None); past it the speedups are empty, as the chart draws none: they
    would be of a server that cannot run."""
    curves = batch_sweep(scenario, sorted({*BATCH_CHART_ALPHAS, alpha}), gamma, context, batch_max)[0]
    table = curves.merge(band.assign(alpha=alpha), on=["alpha", "batch"], how="left")
    table = table.assign(fits=table["batch"] <= (batch_max if limit is None else limit))
    table.loc[~table["fits"], ["speedup", "low", "high", "ideal"]] = np.nan
    return table


def loses_from(crossings: pd.DataFrame, alpha: float) -> float:
    """The batch from which speculation loses up to the sweep's last batch at ``alpha``: its last
    crossing of :func:`batch_sweep`'s ``crossings`` where that is a fall, NaN where it never
    falls for good (:func:`specviz.model.roofline.crossover_batch`)."""
    own = crossings[np.isclose(crossings["alpha"], alpha)]
    return float(own["batch"].iloc[-1]) if len(own) and not own["rises"].iloc[-1] else math.nan


def dips(crossings: pd.DataFrame, alpha: float) -> list[tuple[int, int]]:
    """The batch ranges (first, last, inclusive) in which speculation loses at ``alpha`` and pays
    again after: a mixture of experts' expert tax at small batches."""
    own = crossings[np.isclose(crossings["alpha"], alpha)]
    falls, rises = own["batch"].to_numpy(), own["rises"].to_numpy()
    return [(int(falls[i]), int(falls[i + 1]) - 1) for i in range(len(own) - 1) if not rises[i] and rises[i + 1]]


def dipping_alphas(crossings: pd.DataFrame, alpha: float) -> list[float]:
    """The α of ``crossings`` other than ``alpha`` at which speculation pays again after a loss (a
    crossing that rises): the reference curves that dip where the user's does not."""
    rising = crossings[crossings["rises"] & ~np.isclose(crossings["alpha"], alpha)]
    return sorted(set(rising["alpha"].astype(float)))


def band_vs_batch(scenario: Scenario, alpha: float, gamma: int, context: int, batch_max: int) -> pd.DataFrame:
    """For one α over the chart's batch grid: the band (:func:`speedup_band`) and the ideal
    roofline's speedup (:meth:`specviz.scenario.Scenario.ideal`, the hardware's optimistic case), as
    columns ``batch, low, high, ideal``."""
    b = batch_grid(batch_max)
    low, high = speedup_band(scenario, alpha, gamma, b, context)
    ideal = evaluate_scenario(scenario.ideal(), alpha, gamma, b, context)["speedup"]
    return pd.DataFrame({"batch": b, "low": low, "high": high, "ideal": ideal})


def heatmap_grid(scenario: Scenario, gamma: int, context: int, batch_max: int, limit: int | None = None) -> pd.DataFrame:
    """Speedup over α ∈ {0.05, …, 1.00} × batch ∈ {1, 2, 4, …} up to batch_max (long form), with
    ``fits``: the batch is at most ``limit``, the largest the memory holds with the draft (None: no
    limit, as in ratios mode); a batch past it has no speedup (NaN), as everywhere in the app."""
    a = np.round(np.arange(1, 21) * 0.05, 2)[:, None]
    b = 2 ** np.arange(int(np.log2(batch_max)) + 1)
    r = evaluate_scenario(scenario, a, gamma, b[None, :], context)
    fits = np.tile(b <= (np.inf if limit is None else limit), a.shape[0])
    return pd.DataFrame({"alpha": np.repeat(a[:, 0], b.size), "batch": np.tile(b, a.shape[0]),
                         "speedup": np.where(fits, np.asarray(r["speedup"], dtype=float).ravel(), np.nan), "fits": fits})


def gamma_sweep(scenario: Scenario, alpha: float, batch: int, context: int,
                gamma_max: int) -> tuple[pd.DataFrame, int | None]:
    """Speedup for γ = 1..gamma_max in this scenario (up to the longest draft a steady load takes,
    :meth:`specviz.scenario.Scenario.gamma_limit`), and the best γ among those at which the memory
    holds the batch (None where it holds it at none).

    In step mode the verify pass grows with γ (B·(γ+1) positions), so the best γ falls as the
    batch grows; in ratios mode the verify cost is the scenario's constant. A longer draft keeps more
    draft KV a sequence, so the largest batch held falls with γ (``max_batch``, :func:`largest_batch`;
    ``fits``): a γ at which the batch does not fit has no speedup (NaN), as the calculator gives none
    (a browser pass: Qwen3-Next at batch 596 had been told "best γ 6 (1.76×)", where 454 fit at γ 6).
    In ratios mode, and on a device without a memory figure (:func:`memory_fit`'s ``weighed``), no memory
    is weighed: every γ fits, and ``max_batch`` is missing (not the largest integer). Each γ's band,
    ``low`` and ``high`` (:func:`speedup_band`), as the headline's at its own γ (a browser pass: the
    best γ's figure had stood without one).
    """
    g = np.arange(1, scenario.gamma_limit(gamma_max) + 1)
    r = evaluate_scenario(scenario, alpha, g, batch, context)
    low, high = speedup_band(scenario, alpha, g, batch, context)
    held = pd.array([pd.NA] * g.size, dtype="Int64")
    if scenario.mode == "step" and math.isfinite(scenario.gpu.memory_gb):
        held = pd.array(np.broadcast_to(largest_batch(scenario.gpu, scenario.target, scenario.draft, scenario.precision,
                                                      tp=scenario.tp, dp=scenario.dp, context=context, gamma=g,
                                                      rule=scenario.engine.memory), g.shape), dtype="Int64")
    fits = np.asarray((batch <= held).fillna(True), dtype=bool)
    speedup = np.where(fits, np.asarray(r["speedup"], dtype=float), np.nan)
    frame = pd.DataFrame({"gamma": g, "speedup": speedup, "low": np.where(fits, low, np.nan),
                          "high": np.where(fits, high, np.nan), "verify_cost": r["verify_cost"],
                          "expected_tokens": r["expected_tokens"], "max_batch": held, "fits": fits})
    return frame, int(g[np.nanargmax(speedup)]) if fits.any() else None


def memory_fit(scenario: Scenario) -> dict[str, Any]:
    """Whether the scenario's batch fits each GPU's memory.

    Returns
    -------
    dict
        The terms per GPU at the scenario's batch (:meth:`specviz.scenario.Scenario.memory`);
        ``max_batch`` and ``max_batch_plain``, the largest batches the speculative and the plain
        server hold (:func:`specviz.scenario.largest_batch`); ``fits`` and ``fits_plain``; the GPU's
        ``memory_gib``, as its datasheet gives it (``memory`` is in GB); ``weighed``, False for a
        device whose preset has no memory figure (a CPU's), which holds any batch: its limits are
        None, not the largest integer, and every batch fits (a browser pass: "of the nan GB …
        9,223,372,036,854,775,807"). What would make a batch fit is :func:`ways_to_fit`'s, found only
        where it does not.
    """
    limit, limit_plain = scenario.max_batch(), scenario.max_batch(speculative=False)
    out: dict[str, Any] = {name: float(value) for name, value in scenario.memory().items()}
    if not math.isfinite(scenario.gpu.memory_gb):
        return out | {"max_batch": None, "max_batch_plain": None, "fits": True, "fits_plain": True,
                      "memory_gib": math.nan, "weighed": False}
    return out | {"max_batch": limit, "max_batch_plain": limit_plain, "fits": scenario.batch <= limit,
                  "fits_plain": scenario.batch <= limit_plain, "memory_gib": out["memory"] / roofline.GB_PER_GIB,
                  "weighed": True}


def load_fit(scenario: Scenario, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    """:func:`memory_fit` of the scenario as a steady load of requests of ``input_tokens`` in and
    ``output_tokens`` out (:func:`specviz.workload.steady_load`): at the requests' mean context,
    P + O/2, where the Latency view times its steps, not at the scenario's own context; ``context``
    that mean. A batch that fits at a slider's 1,024 positions may not at a workload's: gpt-oss-120b
    on one H100 holds 64 sequences of 1,024 positions with its EAGLE-3 head, 18 of the summarising
    workload's 16,075, which the view had timed at batch 64 (1.64x). A request of one output token is
    its prompt alone, P + 1 positions (an attack pass: 131,073 at batch 64 had been given figures).

    Raises
    ------
    InputError
        :func:`specviz.workload.steady_load`'s, for requests the model does not hold.
    """
    if output_tokens <= 1:  # its prompt alone (the prefill gives the one token), which must fit too
        workload.check_request_length(input_tokens, output_tokens)
        return memory_fit(replace(scenario, context=input_tokens + output_tokens)) | {"context": input_tokens + output_tokens}
    held = workload.steady_load(scenario, input_tokens, output_tokens)
    return memory_fit(held) | {"context": held.context}


def ways_to_fit(scenario: Scenario, context_max: int) -> list[Notice]:
    """What would make the scenario's batch fit with the draft, each only where it holds the batch, as
    notices (``calc.memory.*``), in order: the fewest GPUs per group of
    :data:`specviz.scenario.TENSOR_PARALLEL` above the scenario's (``more_gpus``); for a mixture of
    experts, the split with data-parallel attention and expert parallelism of the fewest GPUs, then
    holding the most (``dp_attention``, :func:`_parallel_fit`); an FP8 cache (``fp8_kv``); the first of
    :data:`FITTING_PRECISIONS` other than the scenario's that holds more than that cache alone
    (``precision``); the longest context of
    :func:`context_options` up to ``context_max`` (``shorter_context``; not for a steady load, whose
    context is its requests'); and the largest batch that fits, where one does (``smaller_batch``).
    An empty list: none of them fits it."""
    batch, ways = scenario.batch, []
    # Only splits the GPU's link joins (a browser pass: an L40S, with no link figure, had been told
    # "2 GPUs per group", which the sidebar then refused).
    wider = [tp for tp in TENSOR_PARALLEL if tp > scenario.tp and scenario.gpu.joins(tp * scenario.dp)
             and replace(scenario, tp=tp).max_batch() >= batch]
    if wider:
        ways.append(Notice("calc.memory.more_gpus", tp=wider[0]))
    if scenario.target.num_experts and (parallel := _parallel_fit(scenario)) is not None:
        tp, dp, held = parallel
        ways.append(Notice("calc.memory.dp_attention", tp=tp, dp=dp, gpus=tp * dp, held=held))
    cache_held = 0  # what an FP8 cache alone holds, where it fits the batch
    if scenario.precision.kv != "fp8" and (
            held := replace(scenario, precision=replace(scenario.precision, kv="fp8")).max_batch()) >= batch:
        ways.append(Notice("calc.memory.fp8_kv", batch=held))
        cache_held = held
    # A format that holds no more than the FP8 cache alone is a larger change for less room: not offered
    # (a browser pass: gpt-oss-120b on one H100 had been offered NVFP4 weights, holding 444, beside an
    # FP8 cache holding 532; its MXFP4 experts are smaller than NVFP4's).
    formats = next(((name, held) for name in FITTING_PRECISIONS if name != scenario.precision.name
                    and (held := replace(scenario, precision=dtypes.PRECISIONS[name]).max_batch()) >= batch
                    and held > cache_held), None)
    if formats is not None:
        ways.append(Notice("calc.memory.precision", precision=Notice(f"side.precision.{formats[0]}"), held=formats[1]))
    contexts = np.array([c for c in context_options(context_max) if c < scenario.context])
    if contexts.size and not scenario.prefill:
        held = largest_batch(scenario.gpu, scenario.target, scenario.draft, scenario.precision, tp=scenario.tp,
                             dp=scenario.dp, context=contexts, gamma=scenario.gamma, rule=scenario.engine.memory)
        if (shorter := contexts[held >= batch]).size and shorter.max() > 0:
            ways.append(Notice("calc.memory.shorter_context", context=int(shorter.max())))
    if limit := scenario.max_batch():
        ways.append(Notice("calc.memory.smaller_batch", batch=limit))
    return ways


FITTING_PRECISIONS = ("fp8", "nvfp4", "mxfp4", "int4-weights")
"""The formats :func:`ways_to_fit` tries, the least lossy first: FP8 weights and cache, then 4-bit weights."""


def _parallel_fit(scenario: Scenario) -> tuple[int, int, int] | None:
    """The split with data-parallel attention (DP 2 or more) and expert parallelism (TP × DP GPUs) of the fewest GPUs,
    then the most sequences held, that holds the scenario's batch, other than its own; None where none
    within reach does (:func:`ways_to_fit`)."""
    found = []
    for tp in TENSOR_PARALLEL:
        for dp in DATA_PARALLEL[1:]:  # tensor parallelism alone is ways_to_fit's more_gpus
            if not scenario.gpu.joins(tp * dp) or (tp, dp, True) == (scenario.tp, scenario.dp, scenario.ep):
                continue
            held = replace(scenario, tp=tp, dp=dp, ep=True).max_batch()
            if held >= scenario.batch:
                found.append((tp * dp, -held, tp, dp))
    if not found:
        return None
    _, held, tp, dp = min(found)
    return tp, dp, -held


def equal_memory(scenario: Scenario) -> dict[str, Any] | None:
    """Each server at the largest batch it runs, at the scenario's α, γ and context: the most its
    memory holds (plain decoding may hold more sequences than the speculative server, whose draft
    takes weights and cache) that the engine's token budget also admits
    (:func:`specviz.workload.budget_batch`: a consistency pass had priced speculation at the 1,363
    sequences its memory held, whose 12,267 positions a step vLLM's 8,192 do not admit). None where
    nothing fits or the device has no memory figure.

    Returns
    -------
    dict
        ``batch`` and ``tokens_per_s`` of the speculative server at its limit, ``batch_plain`` and
        ``tokens_per_s_plain`` of the plain one at its own, ``ratio`` of their tokens per second, and
        its band, ``low`` and ``high`` (:func:`band_of`; the batches are the memory's and the budget's,
        which no cost knob moves); ``budget_binds`` where the budget, not the memory, sets a limit;
        and where a server runs more sequences than the engine's default cap
        (:meth:`specviz.model.memory.TokenBudget.seqs_per_rank`, vLLM's ``--max-num-seqs`` 1,024 a
        rank, which the Deploy view's command raises to what the memory holds), ``default_seqs``
        (that cap for the server) and ``batch_default``, ``batch_plain_default`` and ``ratio_default``,
        the same at it (a manager's pass: gpt-oss-120b + EAGLE-3 on a B200 was 0.82× at 2,047
        against 2,601 sequences, and at vLLM's defaults both run 1,024, where it is 1.02×).
    """
    memory_limit, memory_limit_plain = scenario.max_batch(), scenario.max_batch(speculative=False)
    if memory_limit < 1 or memory_limit_plain >= np.iinfo(np.int64).max:
        return None
    budget_limits = (workload.budget_batch(scenario, scenario.alpha, scenario.gamma),
                     workload.budget_batch(scenario, scenario.alpha, scenario.gamma, speculative=False))
    limit, limit_plain = min(memory_limit, budget_limits[0]), min(memory_limit_plain, budget_limits[1])
    if limit < 1 or limit_plain < 1:  # the budget admits no step at all
        return None

    def rates(priced: Scenario) -> tuple[np.ndarray, np.ndarray]:
        point = (priced.alpha, priced.gamma)
        return (evaluate_scenario(priced, *point, limit, priced.context)["spec_tokens_per_s"],
                evaluate_scenario(priced, *point, limit_plain, priced.context)["baseline_tokens_per_s"])

    spec_rate, plain_rate = (float(rate) for rate in rates(scenario))
    low, high = band_of(scenario, lambda drawn: np.divide(*rates(drawn)))
    full = {"batch": limit, "tokens_per_s": spec_rate, "batch_plain": limit_plain, "tokens_per_s_plain": plain_rate,
            "ratio": spec_rate / plain_rate, "low": float(low), "high": float(high),
            "budget_binds": limit < memory_limit or limit_plain < memory_limit_plain}
    budget = scenario.engine.memory.budget
    cap = budget.seqs_per_rank(scenario.gpu.memory_gb, scenario.attention_groups) * scenario.dp
    if max(limit, limit_plain) > cap:
        point = (scenario.alpha, scenario.gamma)
        capped, capped_plain = min(limit, cap), min(limit_plain, cap)
        ratio = float(evaluate_scenario(scenario, *point, capped, scenario.context)["spec_tokens_per_s"]
                      / evaluate_scenario(scenario, *point, capped_plain, scenario.context)["baseline_tokens_per_s"])
        full |= {"default_seqs": cap, "batch_default": capped, "batch_plain_default": capped_plain,
                 "ratio_default": ratio}
    return full


def context_options(context_max: int) -> list[int]:
    """Context lengths for a slider: 0, then 256, 512, 1k, … doubling up to context_max."""
    return [0] + [v for v in (256 * 2**k for k in range(20)) if v <= context_max]
