"""Calibrating the step model on a few measured speedups, with a band for every prediction.

Two measured points cannot pin every knob of :mod:`specviz.model.step`: about 180 knob sets of the first
model fitted two EAGLE points equally well and disagreed by up to 40 % in between. So the knobs get
priors, and the fit moves only what two points can pin:

* the shares of peak reached (``mfu``, ``mbu``), ``overlap``, the per-layer launch cost, the
  all-reduce latency are drawn from their priors (the engine preset, :data:`ROOFLINE_PRIORS`);
* for each draw, the fixed cost per step P and the cost per token T follow exactly from the two
  points, for the speedup is linear in them once the rest is fixed. With E the tokens per step,
  plain, draft and verify roofline times p, d, v, B sequences (B/dp on each data-parallel rank,
  which samples its own: B below is that share), n verify and w draft tokens per
  sequence and k = 1 for a draft with a device pass (P is paid once per step, :mod:`specviz.model.step`):

  .. math::

      E (p + P + T B) = S\\,\\big(γ (d + k T B w) + v + P + T B n\\big)

  two such equations, one per point, give (P, T);
* where no acceptance length is known, E is searched over (1, γ + 1] as well (α fitted);
* draws whose (P, T) come out negative are dropped; the others are weighted by how likely their
  P and T are under the engine's prior (log-normal, the preset's range as about ±2σ).

A prediction is the weighted median over the kept draws, its band the weighted 10th to 90th
percentile (the range over the parameter sets that fit the points about equally well, spread by
the prior), widened by the model's own error on published points it was not fitted to
(:data:`MODEL_ERROR`, :func:`widen`), or by the fit's miss at its own points where that is wider
(:attr:`Fit.own_miss`: where no costs fit them, or with more points than unknowns). With more than two points, (P, T) are the least-squares fit and draws are weighted by
their residual too.

Warnings (keys for :mod:`specviz.i18n`): ``fit.no_solution`` (no draw fits with non-negative
costs: the points disagree with the setting, and the closest fit with no cost per token is
shown, its draws weighted by how near they come to the points, not by the prior), ``fit.edge``
(the best draw's E sits at the grid's edge, γ + 1: the points ask for more tokens per step than a
chain can give). A verify pass can never come out cheaper than a plain one
here: both costs are non-negative and the roofline of more tokens is never shorter.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

import numpy as np
from numpy.typing import ArrayLike

from specviz.errors import InputError, Notice
from specviz.i18n import PresetText

from . import architecture, dtypes, roofline, step
from .memory import BUDGETS, MemoryRule
from .preset_rows import read_rows

__all__ = ["Engine", "load_engines", "ROOFLINE_PRIORS", "MODEL_ERROR", "MODEL_ERROR_POINTS", "Fit", "fitted_costs", "widen", "wider_error", "prior_draws", "calibrate"]

# mfu, mbu, overlap: (median, low, high). The realistic preset's values and the ranges behind them
# (the reasons are beside specviz.model.roofline.REALISTIC: GEMMs of a few hundred rows well under
# peak; decode GEMVs at 70-85 % of peak bandwidth; weights and matmuls of a small batch largely back
# to back).
ROOFLINE_PRIORS: dict[str, tuple[float, float, float]] = {
    "mfu": (0.6, 0.4, 0.8), "mbu": (0.8, 0.6, 0.9), "overlap": (0.0, 0.0, 0.5)}
# How far the calibrated step model misses points it was not fitted to: the 10th and 90th
# percentiles of (predicted − measured) / measured over the 113 held-out points of the 34 published
# series in bench/bench_fidelity.py whose metric the model predicts (fidelity.Setting.predicted;
# each calibrated on its lowest and highest batch), the 2025-2026 MoE, MTP and FP4 series included.
# The draws' spread alone covers 7 % of the points: it says how well the knobs are pinned, not how
# right the model's shape is. docs/model.md gives how each change to the model and the data moved
# these figures; tests/test_fidelity.py recomputes them from the data.
MODEL_ERROR = (-0.128, 0.123)
MODEL_ERROR_POINTS = 113
# The same held-out points of the 2025-2026 series priced before any calibration, as the calculator and
# Claims price a setting (specviz.model.fidelity.at_presets: the engine preset's prior draws, E the
# points' own acceptance length; the 31 of those 63 points whose series print one): the central figure
# lies below every measurement, by a median of 22.6 % (worst 37.4 %), and the band widened by MODEL_ERROR
# holds 71 % of them (29 % unwidened), short of its 80 %. All but one are the P-EAGLE post's gpt-oss-20b on
# one B200: one setting the presets price low, not a spread to widen every band by (over the 2023-2024
# block's 24 points as well, the widened band holds 84 %). A calibration on two of one's own runs is what
# brings the misses to MODEL_ERROR's. Claims does not call a claim impossible that the median miss would
# bring within reach, but makes costs below the preset's its condition, saying where the figure comes
# from (specviz.advice.claims, claims.condition.costs_below_preset). tests/test_fidelity.py recomputes them.
PRESET_POINTS, PRESET_MEDIAN_MISS, PRESET_BAND_HOLDS = 31, 0.226, 0.71
# Prior draws per fit, and E values per draw where E is fitted: 400 × 48 = 19,200 candidate knob
# sets, evaluated at once in about 0.02 s a series (bench/bench_fidelity.py runs 15 in 0.3 s).
_DRAWS = 400
_E_STEPS = 48
MAX_FIT_CELLS = 4_000_000
"""Largest fit: candidate knob sets × points (400 draws a point with measured acceptance, 19,200
where E is fitted), sized before it is computed. A fit takes about 210 bytes and 0.5 µs a cell: 20,000
points with measured acceptance (8 × 10⁶ cells) took 1.67 GB and 4.3 s, 5,000 points of speedups alone
(10⁸ cells) 18 GB and 43 s; at the bound, about 0.84 GB and 2 s."""
_PREDICT_CELLS = 1 << 20  # draws × points predicted at once: about 200 MB of temporaries


@dataclass(frozen=True)
class Engine:
    """An engine preset: each cost as (median, low, high) with the sources it came from, and how it
    divides a GPU's memory (``memory``, :class:`specviz.model.memory.MemoryRule`, from ``memory_source``).

    An engine that is not known (``components``: the presets it may be) has costs that span every
    component's range, but its prior is their mixture: each draw takes all of a step's costs from
    one component, not each cost from anywhere in the span (an eager engine's per-layer cost with a
    CUDA-graph engine's fixed cost is no engine at all)."""

    id: str
    name: str
    step_ms: tuple[float, float, float]
    layer_us: tuple[float, float, float]
    token_us: tuple[float, float, float]
    allreduce_us: tuple[float, float, float]
    draft_pass_us: tuple[float, float, float]
    speculation_ms: tuple[float, float, float]
    source: str
    note: str = ""
    components: tuple[Engine, ...] = ()
    memory: MemoryRule = MemoryRule()
    memory_source: str = ""


def load_engines(data_dir: Path) -> dict[str, Engine]:
    """Engine presets from ``data_dir/engines.csv`` (a source per row; ``mixture_of`` names the
    presets above that an unknown engine may be; ``budget`` the scheduler's defaults,
    :data:`specviz.model.memory.BUDGETS`; the name with its translations)."""
    rows = read_rows(Path(data_dir) / "engines.csv")
    triple = lambda row, name: tuple(float(row[k]) for k in (name, f"{name}_low", f"{name}_high"))
    engines: dict[str, Engine] = {}
    for row in rows:
        engines[row["id"]] = Engine(row["id"], PresetText.from_row(row, "name"), triple(row, "step_ms"), triple(row, "layer_us"),
                                    triple(row, "token_us"), triple(row, "allreduce_us"), triple(row, "draft_pass_us"),
                                    triple(row, "speculation_ms"), row["source"], row["note"],
                                    tuple(engines[part] for part in row["mixture_of"].split()),
                                    MemoryRule(float(row["memory_fraction"]), row["memory_reserve"], BUDGETS[row["budget"]]),
                                    PresetText.from_row(row, "memory_source"))
    return engines


@dataclass
class Fit:
    """A calibration: the kept draws (their knobs, P in ms, T in µs, E) with their weights, the
    setting they were fitted on (``setting``: the GPU, models, draft, split, precision and load
    that :func:`_times` prices), warnings as message keys, and ``own_miss``: the lowest and
    highest relative error (predicted − measured) / measured of its prediction at the speedups it was
    fitted to, 0 where it goes through them (two points that some costs fit)."""

    draws: dict[str, np.ndarray]
    weights: np.ndarray
    setting: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    own_miss: tuple[float, float] = (0.0, 0.0)

    @property
    def fitted(self) -> dict[str, float]:
        """The weighted median of each knob over the kept draws."""
        return {name: _weighted_quantile(values, self.weights, 0.5) for name, values in self.draws.items()}

    def predict(self, batch: ArrayLike, gamma: ArrayLike, context: ArrayLike,
                acceptance_length: ArrayLike | None = None,
                model_error: tuple[float, float] | None = None) -> dict[str, np.ndarray]:
        """Speedup at each point: ``speedup`` (weighted median over the draws), ``low`` and ``high``
        (10th and 90th percentiles, widened by ``model_error``, :func:`widen`). E is the point's
        acceptance length where given, else each draw's fitted E.

        ``model_error`` None: :data:`MODEL_ERROR`, or the fit's own miss at its points
        (``own_miss``) where that is wider on a side (:func:`wider_error`). A fit that misses its own
        points by 94 % cannot hold points between them to 20 % (DeepSeek-R1 + MTP on GB300, where no
        costs fit)."""
        if model_error is None:
            model_error = wider_error(MODEL_ERROR, self.own_miss)
        b, g, ctx = (np.atleast_1d(np.asarray(v, dtype=float)) for v in (batch, gamma, context))
        b, g, ctx = np.broadcast_arrays(b, g, ctx)
        shape = b.shape
        lengths = None if acceptance_length is None else np.broadcast_to(
            np.asarray(acceptance_length, float), shape).ravel()
        b, g, ctx = b.ravel(), g.ravel(), ctx.ravel()
        # Points a chunk at a time, so that draws × points never exceeds _PREDICT_CELLS at once.
        size = max(1, _PREDICT_CELLS // self.weights.size)
        parts = []
        for start in range(0, b.size, size):
            at = slice(start, start + size)
            speedups = _speedups(self.setting, self.draws, b[at], g[at], ctx[at], None if lengths is None else lengths[at])
            parts.append([_weighted_quantile(speedups, self.weights, q) for q in (0.5, 0.1, 0.9)])
        speed, low, high = (np.concatenate([part[i] for part in parts]).reshape(shape) for i in range(3))
        low, high = widen(low, high, model_error)
        return {"speedup": speed, "low": low, "high": high}


def widen(low: ArrayLike, high: ArrayLike, model_error: tuple[float, float] = MODEL_ERROR) -> tuple[np.ndarray, np.ndarray]:
    """A band of the model's figures widened into one for the measurement: with the model's relative
    error e = (predicted − measured) / measured between ``model_error`` (e_low, e_high), the measured
    speedup lies between low / (1 + e_high) and high / (1 + e_low)."""
    e_low, e_high = model_error
    return np.asarray(low) / (1.0 + e_high), np.asarray(high) / (1.0 + e_low)


def wider_error(model_error: tuple[ArrayLike, ArrayLike], own_miss: tuple[ArrayLike, ArrayLike]) -> tuple[Any, Any]:
    """The relative errors to widen a fit's band by (:func:`widen`): the model's error, or the fit's
    own miss at its points (:attr:`Fit.own_miss`) where that is wider, side by side (arrays broadcast)."""
    return np.minimum(model_error[0], own_miss[0]), np.maximum(model_error[1], own_miss[1])


def fitted_costs(fit: Fit, link_gb_s: float | None = None) -> step.Costs:
    """A fit's knobs as the costs of a scenario: the weighted medians (:attr:`Fit.fitted`) at what two
    to a few dozen points can pin and a link a person can read, shares of peak to three decimals and
    costs to three significant digits."""
    shares = ("mfu", "mbu", "overlap")
    costs = ("step_ms", "layer_us", "token_us", "allreduce_us", "draft_pass_us", "speculation_ms")
    fitted = fit.fitted
    return step.Costs(**{name: round(fitted[name], 3) for name in shares},
                      **{name: float(f"{fitted[name]:.3g}") for name in costs}, link_gb_s=link_gb_s)


def _weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> Any:
    """The weighted ``q``-quantile of ``values`` along its first axis (draws): the smallest value whose
    cumulative weight reaches q of the total. A float for 1-D values, else an array, one per column."""
    order = np.argsort(values, axis=0)
    cumulative = np.cumsum(weights[order], axis=0)
    first = np.expand_dims(np.argmax(cumulative >= q * cumulative[-1], axis=0), 0)
    chosen = np.take_along_axis(np.take_along_axis(values, order, axis=0), first, axis=0)[0]
    return float(chosen) if values.ndim == 1 else chosen


def _log_normal(prior: tuple[float, float, float]) -> tuple[float, float, float]:
    """The log-normal read from a (median, low, high) prior: its centre and σ in log space, the
    range spanning about ±2σ (σ at least 0.25), and the floor that stands in for a zero median or
    bound (a hundredth of the high end)."""
    median, low, high = prior
    floor = high / 100 if high > 0 else 1e-3
    sigma = max((np.log(max(high, floor)) - np.log(max(low, floor))) / 4, 0.25)
    return float(np.log(max(median, floor))), float(sigma), floor


def _log_normal_density(value: np.ndarray, prior: tuple[float, float, float]) -> np.ndarray:
    """Likelihood of ``value`` (unnormalised) under the log-normal of :func:`_log_normal`."""
    centre, sigma, floor = _log_normal(prior)
    return np.exp(-0.5 * ((np.log(np.maximum(value, floor)) - centre) / sigma) ** 2)


def prior_draws(engine: Engine, n: int = _DRAWS, seed: int = 0,
                hold: Mapping[str, float] | None = None) -> dict[str, np.ndarray]:
    """``n`` draws of every cost knob of :class:`specviz.model.step.Costs` from its prior: the shares of peak
    and the overlap uniform over :data:`ROOFLINE_PRIORS`' ranges, the engine's per-layer, all-reduce,
    per-draft-pass and per-speculative-step costs uniform over its range, its fixed and per-token costs log-normal about its
    median with the range as about ±2σ, clipped to the range. An engine with ``components`` draws
    each draw's engine costs from one component, each as likely (:class:`Engine`). A knob in
    ``hold`` keeps that value in every draw (a knob the user set)."""
    rng = np.random.default_rng(seed)
    draws = {name: rng.uniform(low, high, n) for name, (_, low, high) in ROOFLINE_PRIORS.items()}
    parts = engine.components or (engine,)
    # Every component's draws, then one component per draw (a known engine's draws are as before:
    # no extra call on the generator).
    which = rng.integers(len(parts), size=n) if engine.components else np.zeros(n, dtype=int)
    for name in ("layer_us", "allreduce_us", "step_ms", "token_us", "draft_pass_us", "speculation_ms"):
        per_part = np.empty((len(parts), n))
        for index, part in enumerate(parts):
            median, low, high = getattr(part, name)
            if name in ("step_ms", "token_us"):
                centre, sigma, _ = _log_normal((median, low, high))
                per_part[index] = np.clip(np.exp(rng.normal(centre, sigma, n)), low, high)
            else:
                per_part[index] = rng.uniform(low, high, n)
        draws[name] = per_part[which, np.arange(n)]
    return {name: np.full(n, float(hold[name])) if hold and name in hold else values
            for name, values in draws.items()}


def _times(setting: dict[str, Any], draws: dict[str, np.ndarray], b: np.ndarray, g: np.ndarray,
           ctx: np.ndarray, e: ArrayLike = 1.0) -> dict[str, np.ndarray]:
    """Roofline, launch and communication time of the plain, one draft and the verify pass, per
    draw (rows) and point (columns), without P and T; E (``e``, per point or per draw) sets the
    prefill a speculative step carries where the setting has prompt tokens (:func:`specviz.model.step.step`)."""
    costs = step.Costs(mfu=draws["mfu"][:, None], mbu=draws["mbu"][:, None], overlap=draws["overlap"][:, None],
                       layer_us=draws["layer_us"][:, None], allreduce_us=draws["allreduce_us"][:, None],
                       draft_pass_us=draws["draft_pass_us"][:, None], speculation_ms=draws["speculation_ms"][:, None])
    return step.step(setting["gpu"], setting["target"], setting["draft"], batch=b, gamma=g, context=ctx,
                     acceptance_length=np.ones_like(b) * e, tree_tokens=setting["tree_tokens"],
                     draft_width=setting["draft_width"], tp=setting["tp"], dp=setting["dp"], ep=setting["ep"],
                     precision=setting["precision"], costs=costs, prompt_tokens=setting["prompt_tokens"],
                     output_tokens=setting["output_tokens"], routing_overlap=setting["routing_overlap"])


def _tokens_per_sequence(setting: dict[str, Any], b: np.ndarray,
                         g: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Verify tokens n and draft tokens w per sequence, and k (1 when drafting is a device pass)."""
    n = g + 1.0 if setting["tree_tokens"] is None else np.full_like(b, float(setting["tree_tokens"]))
    return n, np.full_like(b, float(setting["draft_width"])), 0.0 if setting["draft"].kind in step.HOST_DRAFTS else 1.0


def _speedups(setting: dict[str, Any], draws: dict[str, np.ndarray], b: np.ndarray, g: np.ndarray,
              ctx: np.ndarray, lengths: np.ndarray | None) -> np.ndarray:
    e = draws["expected_tokens"][:, None] if lengths is None else lengths[None, :]
    t = _times(setting, draws, b, g, ctx, e if setting["prompt_tokens"] else 1.0)
    n, w, k = _tokens_per_sequence(setting, b, g)
    fixed, per_token = draws["step_ms"][:, None] * 1e-3, draws["token_us"][:, None] * 1e-6
    ranked = b / setting["dp"]  # the sequences each data-parallel rank samples (step.pass_seconds)
    plain = t["plain_s"] + fixed + per_token * ranked
    spec_s = g * (t["draft_s"] + k * per_token * ranked * w) + t["verify_s"] + fixed + per_token * ranked * n
    return e * plain / spec_s


def most_points(measured_acceptance: bool) -> int:
    """The most points :func:`calibrate` fits within :data:`MAX_FIT_CELLS`: 10,000 with measured
    acceptance lengths (one E a point, 400 candidate draws), 208 where E is fitted (48 values
    of E for each draw)."""
    return MAX_FIT_CELLS // _cells_per_point(measured_acceptance)


def _cells_per_point(measured_acceptance: bool) -> int:
    """Candidate knob sets evaluated at each point: the draws, times the values of E where E is fitted."""
    return _DRAWS * (1 if measured_acceptance else _E_STEPS)


# What a point may say: a batch of at most this many sequences (no server runs more at once, and
# 1e15 had left no draw whose costs could be fitted), and a speedup or step time within these bounds
# (1e300 tokens/s over a baseline of 140 is no measurement).
_POINT_BOUNDS = {"batch": (1.0, 1e7), "gamma": (1.0, 1e3), "context": (0.0, 1e8), "measured_speedup": (1e-3, 1e3),
                 "measured_step_s": (1e-6, 1e4)}


def _check_points(b: np.ndarray, g: np.ndarray, ctx: np.ndarray, s: np.ndarray, measure: str) -> None:
    """Refuse the first of the points' values that is not finite or lies outside :data:`_POINT_BOUNDS`,
    naming it, before any draw is priced: a fit of such a point found no costs and failed inside."""
    for name, values in (("batch", b), ("gamma", g), ("context", ctx), (measure, s)):
        low, high = _POINT_BOUNDS[name]
        bad = ~(np.isfinite(values) & (values >= low) & (values <= high))
        if bad.any():
            raise InputError("calibration.bad_point", name=Notice(f"calibration.name.{name}"), value=float(values[bad][0]),
                             low=low, high=high)


def calibrate(gpu: roofline.GPU, target: architecture.Model, draft: step.Draft, engine: Engine, *,
              batch: ArrayLike, gamma: ArrayLike, context: ArrayLike, measured_speedup: ArrayLike | None = None,
              measured_step_s: ArrayLike | None = None, acceptance_length: ArrayLike | None = None,
              tree_tokens: float | None = None, draft_width: float = 1.0, tp: int = 1, dp: int = 1, ep: bool = False,
              precision: dtypes.Precision = dtypes.PRECISIONS["bf16"], seed: int = 0, prompt_tokens: float = 0.0,
              output_tokens: float = 1.0, routing_overlap: float = 0.0) -> Fit:
    """Fit the fixed cost per step and the cost per token to two or more measured speedups (the
    module's method), or to two or more measured speculative step times.

    A step time is what a live server gives without a plain baseline: B sequences, E tokens each per
    step at R generated tokens/s take t = B·E / R a step, and t = γ (d + k T B w) + v + P + T B n is
    as linear in (P, T) as the speedup's equation.

    Parameters
    ----------
    gpu, target, draft, engine
        The setting the points were measured in, and the engine whose priors hold the rest.
    batch, gamma, context : array_like
        One value per measured point (at least two points).
    measured_speedup, measured_step_s : array_like
        One of the two, per point: the speedup over plain decoding, or the seconds of a speculative
        step.
    acceptance_length : array_like, optional
        Measured tokens per step at each point; without it E is fitted (one E for all points), which
        only speedups allow.
    tree_tokens, draft_width, tp, dp, ep, precision
        The setting's tree, drafting width, split and formats, as :func:`specviz.model.step.step`
        takes them.
    seed : int
        Of the prior draws: the same seed gives the same fit.
    prompt_tokens, output_tokens : float
        The requests' prompt and output lengths where each step also carries the prefill of the
        requests that replace finished ones (:func:`specviz.model.step.step`); 0 prompt tokens, the
        default: decode only. E then sets each speculative step's prefill, so where E is fitted the
        passes are timed once for each value of E on the grid.
    routing_overlap : float
        The share of a token's experts its sequence's previous token chose too, in a verify pass
        (:func:`specviz.model.step.step`); 0, the default: uniform routing.

    Returns
    -------
    Fit

    Raises
    ------
    InputError
        ``calibration.one_measure``, ``calibration.needs_lengths``, ``calibration.two_points``,
        ``calibration.one_setting`` (every point at one batch, γ and context),
        ``calibration.bad_point`` (a value not finite or out of :data:`_POINT_BOUNDS`), or
        ``calibration.too_large`` past :data:`MAX_FIT_CELLS` (sized before anything is computed).
    """
    if (measured_speedup is None) == (measured_step_s is None):
        raise InputError("calibration.one_measure")
    if measured_step_s is not None and acceptance_length is None:
        raise InputError("calibration.needs_lengths")
    measured = measured_speedup if measured_step_s is None else measured_step_s
    b, g, ctx, s = (np.atleast_1d(np.asarray(v, dtype=float)) for v in (batch, gamma, context, measured))
    if b.size < 2:
        raise InputError("calibration.two_points")
    _check_points(b, g, ctx, s, "measured_speedup" if measured_step_s is None else "measured_step_s")
    # Repeats of one setting measure its noise, not how the costs grow with the batch: their
    # equations (above) are one line apart by noise, and the two costs fitted to them anything.
    if np.unique(np.stack(np.broadcast_arrays(b, g, ctx)), axis=1).shape[1] < 2:
        raise InputError("calibration.one_setting", points=b.size, batch=float(b[0]),
                         gamma=float(np.broadcast_to(g, b.shape)[0]), context=float(np.broadcast_to(ctx, b.shape)[0]))
    if b.size > (most := most_points(acceptance_length is not None)):
        raise InputError("calibration.too_large", points=b.size, most=most, max=MAX_FIT_CELLS,
                         cells=b.size * _cells_per_point(acceptance_length is not None))
    setting = dict(gpu=gpu, target=target, draft=draft, tree_tokens=tree_tokens, draft_width=draft_width, tp=tp, dp=dp, ep=ep,
                   precision=precision, prompt_tokens=float(prompt_tokens), output_tokens=float(output_tokens),
                   routing_overlap=float(routing_overlap))
    # An unknown engine's fit explores the whole span of its costs, not the presets' mixture: the
    # points, not the presets, then say which costs it has. Two of MagicDec's sweeps (gpt-fast, an
    # engine that is none of the presets) came out 27 % and 38 % too high from the mixture, 3 % and
    # 8 % from the span (tests/test_fidelity.py).
    draws = prior_draws(replace(engine, components=()), seed=seed)
    del draws["step_ms"], draws["token_us"]  # solved for below
    n, w, k = _tokens_per_sequence(setting, b, g)
    lengths = None if acceptance_length is None else np.broadcast_to(np.asarray(acceptance_length, float), b.shape)
    mixed = setting["prompt_tokens"] > 0
    t = _times(setting, draws, b, g, ctx, lengths if mixed and lengths is not None else 1.0)
    if lengths is None:  # E unknown: one E for the series, on a grid, for every draw
        grid = np.linspace(1.0 + (g.min()) / _E_STEPS, g.min() + 1.0, _E_STEPS)
        if mixed:  # each E its own prefill: the passes timed at every E, rows draw by draw as below
            each = [_times(setting, draws, b, g, ctx, value) for value in grid]
            t = {key: np.stack([np.broadcast_to(one[key], (_DRAWS, b.size)) for one in each], axis=1).reshape(-1, b.size)
                 for key in ("plain_s", "draft_s", "verify_s")}
        else:
            repeat = lambda a: np.repeat(a, _E_STEPS, axis=0)
            t = {key: repeat(value) for key, value in t.items()}
        draws = {name: np.repeat(values, _E_STEPS) for name, values in draws.items()}
        e = np.tile(grid, _DRAWS)[:, None] * np.ones_like(b)
    else:
        e = np.broadcast_to(lengths, (len(draws["mfu"]), b.size))
    # The points' equations: A · (P, T) = y, for each draw (least squares with more than two points);
    # T is paid for the sequences of one data-parallel rank (step.pass_seconds).
    ranked = b / dp
    if measured_step_s is None:
        a_pass = e - s
        a_token = e * ranked - s * (g * ranked * w * k + ranked * n)
        y = s * (g * t["draft_s"] + t["verify_s"]) - e * t["plain_s"]
    else:
        a_pass = np.ones_like(e)
        a_token = np.broadcast_to(ranked * (g * w * k + n), e.shape)
        y = s - (g * t["draft_s"] + t["verify_s"])
    design = np.stack([a_pass, a_token], axis=-1)
    gram = np.einsum("dpi,dpj->dij", design, design)
    rhs = np.einsum("dpi,dp->di", design, y)
    det = gram[:, 0, 0] * gram[:, 1, 1] - gram[:, 0, 1] ** 2
    ok = np.abs(det) > 1e-30 * np.maximum(1.0, np.abs(gram).max(axis=(1, 2)) ** 2)
    safe = np.where(ok, det, 1.0)
    fixed = (gram[:, 1, 1] * rhs[:, 0] - gram[:, 0, 1] * rhs[:, 1]) / safe
    per_token = (gram[:, 0, 0] * rhs[:, 1] - gram[:, 0, 1] * rhs[:, 0]) / safe
    residual = np.sqrt(np.mean((design[..., 0] * fixed[:, None] + design[..., 1] * per_token[:, None] - y) ** 2, axis=1))
    keep = ok & (fixed >= 0) & (per_token >= 0)
    warnings: list[str] = []
    if not keep.any():
        # Nothing fits with both costs non-negative: the closest with one of them at zero.
        fixed_only = np.where(ok, rhs[:, 0] / np.maximum(gram[:, 0, 0], 1e-300), 0.0)
        fixed, per_token, keep = np.maximum(fixed_only, 0.0), np.zeros_like(fixed), ok
        # Each point's miss as a share of what was measured: a miss r of the speedup's equation is
        # (S' − S)(γd + v + P), S' the draw's speedup; of the step's, the step's time.
        whole = s * (g * t["draft_s"] + t["verify_s"] + fixed[:, None]) if measured_step_s is None else s
        miss = np.sqrt(np.mean(((design[..., 0] * fixed[:, None] - y) / whole) ** 2, axis=1))
        warnings.append("fit.no_solution")
    draws = {name: values[keep] for name, values in draws.items()}
    draws.update(step_ms=fixed[keep] * 1e3, token_us=per_token[keep] * 1e6,
                 expected_tokens=e[keep, 0] if lengths is None else np.full(keep.sum(), float(np.mean(lengths))))
    if warnings:
        # No costs fit: the closest fit is the draws weighted by how near they come to the points
        # (5 % off weighs e^-1/2 of an exact one), relative to the nearest: every draw may miss by far.
        # A cost held at zero has no prior density.
        misfit = (miss[keep] / 0.05) ** 2
        weights = np.exp(-0.5 * (misfit - misfit.min()))
    else:
        weights = (_log_normal_density(draws["step_ms"], engine.step_ms)
                   * _log_normal_density(draws["token_us"], engine.token_us))
        if b.size > 2:  # residuals only exist with more points than unknowns
            scale = np.maximum(np.abs(y[keep]).mean(axis=1), 1e-12)
            weights = weights * np.exp(-0.5 * (residual[keep] / (0.05 * scale)) ** 2)
    if not np.isfinite(weights).all() or weights.sum() <= 0:
        weights = np.ones_like(draws["step_ms"])
    fit = Fit(draws, weights / weights.sum(), setting, warnings)
    if measured_step_s is None:  # speedups: the fit's own miss at them (step times are not speedups)
        at_points = fit.predict(b, g, ctx, lengths, model_error=(0.0, 0.0))["speedup"]
        own = at_points / s - 1.0
        fit.own_miss = (min(0.0, float(own.min())), max(0.0, float(own.max())))
    best = int(np.argmax(fit.weights))
    if lengths is None and fit.draws["expected_tokens"][best] >= g.min() + 1.0 - 1e-9:
        fit.warnings.append("fit.edge")
    return fit
