"""Checking a speedup claim: what would have to be true for "up to 3x", and can it be?

A vendor's figure is one speedup S*. In the step model (:func:`specviz.model.step.step`) the times of a plain
and of a speculative step do not depend on acceptance, so at a fixed setting (hardware, models,
engine, batch, context, γ) the speedup is proportional to the expected tokens per step:

.. math:: S(α) = E(α, γ)\\,\\frac{t_{plain}}{t_{spec}} = \\frac{E(α, γ)}{E(1, γ)}\\, S(1)

with S(1) the speedup when every draft token the draft is trained for is accepted (E(1, γ) = γ + 1; less
for a target's MTP layers run past their training, :meth:`specviz.scenario.Scenario.expected_tokens`).
The claim therefore needs E ≥ S*·E(1, γ) / S(1), an α through the inverse of E
(:func:`specviz.model.spec.alpha_from_acceptance_length`),
and is out of reach where S(1) < S*. The same holds for the edges of the prediction band
(:func:`specviz.calculator.speedup_band`): its quantiles over the cost priors and its widening by the
model's error are both proportional to E, so the α at which the band's low edge reaches S* (the claim
holds even if the costs are unkind) and the α at which its high edge does (it can hold only if they
are kind) come from the band at α = 1 in the same way.

:func:`check_claim` returns the verdict:

* ``impossible``: even with every draft token accepted, the band's high edge stays below S* at every
  batch and γ the claim allows, and no published measurement of this very setup reaches S* (one
  that does makes it ``conditional``: beyond the model, not beyond measurement); at the engine
  preset's costs, a claim within the presets' median miss before calibration of that edge is
  ``unlikely``, on costs below the preset's (``claims.verdict.near_reach``);
* ``plausible``: at the acceptance the user measured on their own traffic, the band's low edge
  reaches S* at the γ the model finds best (at the claim's batch, or at some batch when it names
  none);
* ``conditional``: otherwise; true only under the conditions listed: costs not at the unkind end of
  their range (the model's figure reaches S* at the measured α), or a higher acceptance; and a batch range.
  Without a measured acceptance a claim is at best conditional: acceptance belongs to one model pair,
  one temperature and one domain (seed 000), and only the user's traffic says what it is;
* ``unlikely``: conditional on what is not to be expected (:data:`specviz.advice.claim_verdict.UNLIKELY`):
  more α than the highest published acceptance (``data/published_acceptance.csv``) or its pair's,
  with that figure and its source; only the band's high edge reaching S* (costs at the kind end);
  short of it at the measured α, or short of a measurement of this very setup; or the
  ``impossible`` claim within the presets' median miss above.

References
----------
Leviathan, Kalman, Matias 2023, "Fast Inference from Transformers via Speculative Decoding"
(arXiv 2211.17192): E(α, γ) and the speedup E / (γc + 1).
Seed 000 ("Speculative decoding makes vLLM slower: the acceptance-rate math"): a speedup figure belongs
to one model pair, temperature, domain and batch size.
Seed 003 ("GPU at 30% utilisation, you still pay 100%"): "up to 3x" on AWS Trainium with Qwen3, the
worked example.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from specviz import calculator
from specviz.advice import claim_verdict, draft_length, evidence
from specviz.errors import Notice, SpecvizError
from specviz.model import calibration, spec
from specviz.model.published import PublishedAcceptance
from specviz.scenario import Scenario, knobs_off_preset, largest_batch

__all__ = ["VERDICTS", "MEASURES", "MEASURED_GAMMA", "MEASURED_VALUE_MAX", "DEFAULT_CLAIM", "Claim", "ClaimCheck", "measured_at",
           "alpha_from_measurement",
           "check_claim", "calculator_point", "required_at_costs", "check_at_costs", "required_as_shown", "claimed_batch", "claim_grid", "between_turns", "with_batches", "no_fit_notices"]

VERDICTS = ("plausible", "conditional", "unlikely", "impossible")
# How acceptance on the user's traffic may be given: α itself, vLLM's accepted/drafted, or the mean
# tokens per step (the acceptance length).
MEASURES = ("alpha", "acceptance_rate", "acceptance_length")
# The γ a slowdown with no γ of its own, and an acceptance with no γ of its own measured without a
# scenario (a cost-ratios check), are taken at: seed 000's load test, and a common num_speculative_tokens.
MEASURED_GAMMA = 4
# The most the Claims page's measured value takes: a rate typed in percent, as vllm bench serve prints
# it, reaches alpha_from_measurement and gets its words, not a field the browser turns red without one.
MEASURED_VALUE_MAX = 100.0
# The Claims page's claim field's default, which its link leaves out: seed 003's "up to 3x".
DEFAULT_CLAIM = "up to 3x"
_BAD_MEASUREMENT = {"alpha": "claims.bad_alpha", "acceptance_rate": "claims.bad_acceptance_rate",
                    "acceptance_length": "claims.bad_acceptance_length"}
@dataclass(frozen=True)
class Claim:
    """A claimed speedup and the conditions it was stated for.

    Attributes
    ----------
    speedup : float
        The claimed speedup S* (3.0 for "up to 3x"), above 1.
    batch : int or None
        The batch size (concurrent requests) it was claimed at; None: any.
    gamma : int or None
        The draft length it was claimed at; None: the best one.
    alpha : float or None
        The per-position acceptance α measured on the user's traffic; None: not measured.
    workload : tuple of int or None
        The user's tokens in and out per request: a speedup is claimed for decode, and a request
        gains less where its prefill takes time (:func:`specviz.workload.end_to_end`).
    measured_gamma : int or None
        The draft length the acceptance was measured at (a vLLM rate or length is one γ's), which
        a slowdown with no γ of its own is checked at first (:mod:`specviz.advice.slowdown`): a load
        test ran the γ it measured.
    """

    speedup: float
    batch: int | None = None
    gamma: int | None = None
    alpha: float | None = None
    workload: tuple[int, int] | None = None
    measured_gamma: int | None = None


@dataclass(frozen=True)
class ClaimCheck:
    """The answer to a claim (:func:`check_claim`).

    Attributes
    ----------
    claim : Claim
    verdict : str
        One of :data:`VERDICTS`.
    headline : Notice
        The verdict in one sentence: ``claims.verdict.<verdict>``, or for a conditional claim at a
        measured acceptance ``claims.verdict.band`` (the model's figure reaches the claim, its band's
        low edge does not), ``.kind`` (only the band's high edge does) or ``.short`` (not even that:
        it needs more acceptance than measured); with no measured acceptance ``.kind_only`` (only the
        band's high edge reaches it at α = 1); said to be unlikely for the published acceptances
        (``.beyond_published``, ``.beyond_pair``) or a measurement of this setup short of it
        (``.measured_short``); ``.measured_beyond`` where one reaches it beyond the model's range;
        ``.no_fit`` where the claim's batch does not fit the memory.
    reasons : list of Notice
        Why, in order, in words a manager can forward.
    conditions : list of Notice
        What must hold for the claim (for ``conditional``; the same facts for the others).
    best : dict
        The largest speedup the setting allows with every draft token accepted: ``speedup``, ``low``,
        ``high``, and the ``gamma`` and ``batch`` it is reached at (the claim's batch if it names one);
        where that γ is past the positions whose acceptance the draft is known to keep (an EAGLE-3
        head's training: :func:`specviz.advice.draft_length.evidenced_positions`), ``trained``: the same
        within them, their number (``positions``), and the batches where the claim can hold within
        them (``holds_from``, ``holds_up_to``, ``holds_gaps``, as ``holds_from`` below).
    required : DataFrame
        One row per γ at ``best["batch"]``: ``gamma``; ``ceiling`` (S at α = 1), ``ceiling_low``,
        ``ceiling_high``; the α needed for the claim by the model (``alpha_needed``), by the band's low edge
        (``alpha_safe``) and by its high edge (``alpha_optimistic``), NaN where out of reach; the
        vLLM-style ``acceptance_rate`` and the ``acceptance_length`` of ``alpha_needed``; and, with a
        measured α, ``at_alpha``, ``at_alpha_low``, ``at_alpha_high``.
    batches : DataFrame
        One row per batch of the grid (with the claim's batch, and the batches where a range of them
        begins or ends): ``batch``, ``counted`` (the claim's
        batch, or every batch when it names none), the most any γ gives at α = 1 (``ceiling``) and
        the most at each edge of its band (``ceiling_low``, ``ceiling_high``), the γ of that highest
        (``ceiling_high_gamma``) and the most the memory holds with it (``ceiling_high_held``), and with a measured α
        ``at_alpha``, ``at_alpha_low`` and ``at_alpha_high`` at the γ the model finds best there
        (``at_alpha_gamma``).
    holds_from, holds_up_to : float
        The smallest and largest counted batch at which the band's high edge at α = 1 reaches the
        claim (NaN: none): outside them the claim is impossible whatever the acceptance.
    holds_gaps : tuple of (int, int)
        The runs of batches between them where it does not reach it, each its first and last batch
        (:func:`specviz.advice.claim_verdict.batch_range`): impossible there too.
    yours_from, yours_up_to, yours_gaps
        The same where the band's low edge at the measured α reaches it (NaN: none, or no α).
    memory_limit : int
        The largest batch the GPUs' memory holds with the draft at the claim's context, at the γ
        that leaves the most room (:func:`specviz.scenario.largest_batch`): ``batches`` stops there.
    memory_gamma : int
        That γ (the shortest draft asks the least room; a longer one holds fewer sequences).
    """

    claim: Claim
    verdict: str
    headline: Notice
    reasons: list[Notice]
    conditions: list[Notice]
    best: dict[str, float]
    required: pd.DataFrame
    batches: pd.DataFrame
    holds_from: float
    holds_up_to: float
    holds_gaps: tuple[tuple[int, int], ...]
    yours_from: float
    yours_up_to: float
    yours_gaps: tuple[tuple[int, int], ...]
    memory_limit: int
    memory_gamma: int


def claimed_batch(given: int | None, worded: int | None) -> tuple[int | None, Notice | None]:
    """The batch a claim is checked at: the one given (a field, ``--batch``), else the one its words
    name; with ``claims.batch_not_worded`` where both are and differ (a manager's pass: "2.5x at batch
    64" with the field at 8 had been checked at 8 without a word)."""
    if given is None:
        return worded, None
    differs = worded is not None and worded != given
    return given, Notice("claims.batch_not_worded", batch=given, worded=worded) if differs else None


# The columns of the α a claim needs, each an "at least" figure.
_AT_LEAST_COLUMNS = ("alpha_needed", "alpha_safe", "alpha_optimistic")


def required_as_shown(required: pd.DataFrame, reuse: dict | None = None, decimals: int = 3) -> pd.DataFrame:
    """:attr:`ClaimCheck.required` (or :func:`check_at_costs`' table) as a table shows it: each α it
    needs rounded up to ``decimals`` as :func:`specviz.advice.claim_verdict.at_least` rounds the
    headline's, NaN kept, and the acceptance rate and length at the α it names
    (:func:`specviz.advice.claim_verdict.measures_at`, for a draft that reuses its positions as
    ``reuse`` says), as the conditions name them. Rounded to the nearest, the table's 0.844 at γ 8 had
    sat below the headline's 0.845 and fallen short of the claim (2.999× at α 0.844 where 3× was
    claimed: a manager's pass)."""
    shown = required.assign(**{c: claim_verdict.at_least(required[c], decimals)
                               for c in _AT_LEAST_COLUMNS if c in required})
    rate, length = claim_verdict.measures_at(shown["alpha_needed"], shown["gamma"], reuse)
    return shown.assign(acceptance_rate=rate, acceptance_length=length)


def measured_at(given: int | None, claim_gamma: int | None, scenario_gamma: int | None = None) -> int:
    """The draft length a measured acceptance rate or length was taken at: the one ``given``, else the
    claim's (a figure quoted for a claim at γ 3 is one of γ 3), else the scenario's (the γ its server
    runs), else :data:`MEASURED_GAMMA`. The page and ``specviz claim`` had taken 4 whatever the claim
    said: a published 2.43 tokens a step at γ 3 read as α 0.629, where the calculator reads 0.67."""
    return next(g for g in (given, claim_gamma, scenario_gamma, MEASURED_GAMMA) if g is not None)


def alpha_from_measurement(measure: str, value: float, gamma: int,
                           reuse: Mapping[str, ArrayLike] | None = None) -> float:
    """The per-position α of an acceptance measured as ``measure`` at draft length ``gamma``.

    .. math:: E = 1 + r γ \\ (\\text{r: vLLM's rate}),\\qquad α = E^{-1}(E, γ)

    (:func:`specviz.model.spec.alpha_from_acceptance_length`, for a draft whose acceptance falls
    along its positions as ``reuse`` says: :attr:`specviz.scenario.Scenario.reuse`); ``alpha`` is
    taken as it is.

    Raises
    ------
    SpecvizError
        ``claims.bad_alpha``, ``claims.bad_acceptance_rate`` (outside [0, 1]) or
        ``claims.bad_acceptance_length`` (outside [1, γ + 1]: it cannot come from γ drafts), or
        ``spec.length_reused`` (more than the reused draft makes at α = 1).
    """
    reuse = reuse or {}
    if measure == "alpha":
        low, high, alpha = 0.0, 1.0, value
    elif measure == "acceptance_rate":
        low, high = 0.0, 1.0
        alpha = spec.alpha_from_acceptance_length(1.0 + value * gamma, gamma, **reuse) if low <= value <= high else math.nan
    else:
        low, high = 1.0, gamma + 1.0
        alpha = spec.alpha_from_acceptance_length(value, gamma, **reuse) if low <= value <= high else math.nan
    if not (math.isfinite(value) and low <= value <= high):
        raise SpecvizError(_BAD_MEASUREMENT[measure], value=value, low=low, high=high, gamma=gamma)
    return float(alpha)


def _alpha_for(length: np.ndarray, gamma: np.ndarray, reuse: Mapping[str, ArrayLike] | None = None) -> np.ndarray:
    """α with E(α, γ) = length (E of a draft whose acceptance falls as ``reuse`` says), NaN where the
    length is beyond E(1, γ), γ + 1 without reuse (out of reach)."""
    reuse = reuse or {}
    reachable = length <= np.asarray(spec.expected_tokens(1.0, gamma, **reuse)) + 1e-12
    clipped = np.where(reachable, np.maximum(length, 1.0), 1.0)
    return np.where(reachable, spec.alpha_from_acceptance_length(np.minimum(clipped, gamma + 1.0), gamma, **reuse), np.nan)


def required_at_costs(speedup: ArrayLike, gamma: ArrayLike, verify_cost: ArrayLike = 1.0,
                      draft_cost: ArrayLike = spec.SEED_DRAFT_COST) -> dict[str, float | np.ndarray]:
    """What a claimed speedup S* needs where the costs of a step are given as ratios of a plain one
    (the calculator's simple-ratios mode), in closed form.

    .. math:: S = \\frac{E(α, γ)}{v + γc} \\;\\Rightarrow\\; E^* = S^*\\,(v + γc),\\qquad
              α^* = E^{-1}(E^*, γ),\\qquad S_{max} = \\frac{γ + 1}{v + γc}

    Parameters
    ----------
    speedup, gamma, verify_cost, draft_cost : array_like
        S*, the draft length γ, the verify pass's cost v and one draft pass's cost c (both relative
        to a plain decode step); they broadcast.

    Returns
    -------
    dict
        ``acceptance_length`` (E*), ``alpha`` (α*; NaN where E* > γ + 1, out of reach even at
        α = 1; 0 where E* ≤ 1, a claim the costs meet without any acceptance),
        ``acceptance_rate`` (vLLM's accepted / drafted at α*, NaN where α* is) and ``max_speedup``
        (S at α = 1). Scalars for scalar input.

    Examples
    --------
    3x at γ = 5 with a draft pass at 0.05 of a plain step and a verify pass at 1 needs
    E* = 3 · 1.25 = 3.75 tokens per step (α* = 0.807, a vLLM acceptance rate of 2.75 / 5 = 0.55), and
    the setting gives at most 6 / 1.25 = 4.8x.

    References
    ----------
    Leviathan, Kalman, Matias 2023 (arXiv 2211.17192): the speedup E / (γc + 1), here with the
    verify pass's cost v in place of 1.
    """
    g = np.asarray(gamma, dtype=float)
    cost = np.asarray(spec.step_cost(g, verify_cost, draft_cost), dtype=float)
    length = np.asarray(speedup, dtype=float) * cost
    length, g = np.broadcast_arrays(length, g)
    alpha = _alpha_for(length, g)
    rate = np.where(np.isnan(alpha), np.nan, spec.acceptance_rate_from_alpha(np.nan_to_num(alpha), g))
    out = {"acceptance_length": length, "alpha": alpha, "acceptance_rate": rate, "max_speedup": (g + 1.0) / cost}
    return {k: float(v) if np.ndim(v) == 0 else v for k, v in out.items()}


def check_at_costs(claim: Claim, verify_cost: float, draft_cost: float, gamma_max: int) -> tuple[str, list[Notice], pd.DataFrame]:
    """A claim against costs given as ratios (:func:`required_at_costs`), at the claim's γ or each γ
    in 1..``gamma_max``: ``impossible`` where no γ reaches S* even at α = 1, ``plausible`` where the
    measured α (``claim.alpha``) reaches it at some γ, else ``conditional`` on the α the easiest γ
    needs. The costs are given, so there is no band, and batch and context do not enter.

    Returns
    -------
    verdict : str
    reasons : list of Notice
    required : DataFrame
        One row per γ: ``gamma``, ``max_speedup``, ``alpha_needed``, ``acceptance_rate``,
        ``acceptance_length`` (and ``at_alpha``, the speedup at the measured α, where there is one).
    """
    gammas = np.arange(1, gamma_max + 1) if claim.gamma is None else np.array([claim.gamma])
    need = required_at_costs(claim.speedup, gammas, verify_cost, draft_cost)
    required = pd.DataFrame({"gamma": gammas, "max_speedup": need["max_speedup"], "alpha_needed": need["alpha"],
                             "acceptance_rate": need["acceptance_rate"], "acceptance_length": need["acceptance_length"]})
    best = required.loc[required["max_speedup"].idxmax()]
    costs = {"verify": verify_cost, "draft": draft_cost}
    ceiling = Notice("claims.reason.costs_ceiling", speedup=float(best["max_speedup"]), gamma=int(best["gamma"]), **costs)
    if required["alpha_needed"].isna().all():
        return "impossible", [Notice("claims.reason.costs_out_of_reach", claim=claim.speedup, **costs), ceiling], required
    easiest = required.loc[required["alpha_needed"].idxmin()]
    shown = claim_verdict.at_least(float(easiest["alpha_needed"]), 3)
    rate, length = claim_verdict.measures_at(shown, easiest["gamma"])
    needed = Notice("claims.reason.costs_needs", alpha=float(easiest["alpha_needed"]), shown=shown,
                    gamma=int(easiest["gamma"]), rate=float(rate), length=float(length))
    if claim.alpha is None:
        return "conditional", [needed, ceiling], required
    required["at_alpha"] = spec.speedup(claim.alpha, gammas, verify_cost, draft_cost)
    mine = required.loc[required["at_alpha"].idxmax()]
    measured = Notice("claims.reason.costs_measured", alpha=claim.alpha, speedup=float(mine["at_alpha"]),
                      gamma=int(mine["gamma"]))
    return ("plausible" if mine["at_alpha"] >= claim.speedup else "conditional"), [measured, needed, ceiling], required


def check_claim(scenario: Scenario, claim: Claim, gamma_max: int, batch_max: int,
                published: Sequence[PublishedAcceptance] = (), measured: pd.DataFrame | None = None) -> ClaimCheck:
    """Whether ``claim`` can hold in ``scenario`` (its hardware, models, engine costs and context).

    For every γ in 1..``gamma_max`` (or the claim's γ) and every batch of
    :func:`specviz.calculator.batch_grid` up to ``batch_max`` (and the claim's batch): S(1), the
    speedup with every draft token accepted, and its band; the α the claim needs at the claim's batch
    (else where S(1) is highest), α = E⁻¹(S*·E(1, γ) / S(1)), for the model and for each edge of the
    band; and, with a measured α, the speedup there at the γ the model finds best at each batch. Only
    the claim's batch counts for the verdict when it names one; the grid is there for the chart. A
    claim that names none adds every batch between two grid points where a range of batches where it
    holds begins or ends, so that each range ends where it does (:func:`between_turns`).
    A batch the memory does not hold with the draft at that γ (:func:`specviz.scenario.largest_batch`,
    as :func:`specviz.calculator.memory_fit` finds it) has no speedup: the grid stops at the largest
    one that fits, which it includes, and a claim at a batch that fits at no γ is ``impossible``
    (``claims.verdict.no_fit``). See the module's docstring for the verdict. A claim is judged on decoding alone, as vendors state
    speedups: a load whose prompts share each step (``scenario.prefill``) makes the speedup a
    function of E that the inverse above does not hold, and is left out.

    ``published`` are the published acceptances specviz ships (:attr:`specviz.scenario.Presets.acceptance`):
    a claim with no measured α that needs more than the highest of them is ``conditional`` still,
    but said to be unlikely (``claims.verdict.beyond_published``), with that figure and its source.

    ``measured`` are published speedups (:func:`specviz.advice.evidence.comparable_published`): one of
    this very setup that reaches the claim (:func:`specviz.advice.evidence.same_setup_reaching`) keeps
    it from ``impossible`` (``claims.verdict.measured_beyond``, naming the measurement) and from being
    said to be unlikely without a measured α: DeepSeek-V3 + MTP on 8 MI300X under SGLang was said to
    be unable to reach 2.11× at batch 1, beside AMD's 2.11× measured there (a manager's pass). The
    model's cost presets can be off for an engine; a measurement is not. Where this setup was
    measured at the claim's batch and every figure of decoding there falls short of it
    (:func:`specviz.advice.evidence.same_setup_short`), the highest is named, and a claim the model
    leaves conditional is unlikely for it (``claims.verdict.measured_short``), also where the published
    acceptances made it unlikely already (their condition stays). One of this setup at a context
    outside the factor of two that reaches the claim is named first, with its context, but not weighed
    (``claims.reason.measured_other_context``). An impossible claim at the engine preset's costs that
    the range's top would reach at the presets' median miss before calibration
    (:data:`specviz.model.calibration.PRESET_MEDIAN_MISS`) is ``conditional`` instead, said to be out of
    reach at the preset's costs only (``claims.verdict.near_reach``, ``claims.reason.near_reach``).

    Returns
    -------
    ClaimCheck
    """
    gammas = np.arange(1, gamma_max + 1) if claim.gamma is None else np.array([claim.gamma])
    step_scenario, limits, memory_limit, memory_gamma, grid = claim_grid(scenario, claim, gammas, batch_max)
    context = step_scenario.context
    if claim.batch is not None and claim.batch > memory_limit or memory_limit < 1:
        return _no_fit(scenario, claim, gammas, grid, memory_limit, memory_gamma)

    def at_full_acceptance(batches: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The speedup at α = 1 and its band per γ (rows) and batch; NaN where a γ's draft leaves no room
        for the batch (out of reach)."""
        g, b = gammas[:, None].astype(float), batches[None, :].astype(float)
        fits = b <= limits[:, None]
        ceiling = np.asarray(calculator.evaluate_scenario(step_scenario, 1.0, g, b, context)["speedup"], dtype=float)
        low, high = (np.asarray(edge, dtype=float) for edge in calculator.speedup_band(step_scenario, 1.0, g, b, context))
        return tuple(np.where(fits, np.broadcast_to(v, fits.shape), np.nan) for v in (ceiling, low, high))

    ceiling, low, high = at_full_acceptance(grid)
    if claim.batch is None:
        # The batches where the claim can hold end exactly where they do, not at the chart's grid (a
        # manager's pass: "batches 1–91" on the grid, where batch 93, asked alone, was conditional):
        # the ranges at α = 1 and, with a measured α, at it (its band's edges and its figure).
        edges = [high]
        if claim.alpha is not None:
            share = (np.asarray(step_scenario.expected_tokens(claim.alpha, gammas), dtype=float)
                     / np.asarray(step_scenario.expected_tokens(1.0, gammas), dtype=float))[:, None]
            edges += [share * low, share * ceiling, share * high]
        if (extra := between_turns(grid, edges, claim.speedup)).size:
            grid, (ceiling, low, high) = with_batches(grid, extra, (ceiling, low, high), at_full_acceptance(extra))
    counted = grid == claim.batch if claim.batch is not None else np.ones(grid.size, dtype=bool)

    # The batch the per-γ table speaks for: the claim's, else where the ceiling is highest.
    at = int(np.argmax(np.where(counted, np.fmax.reduce(ceiling, axis=0), -np.inf)))
    best_g = int(np.nanargmax(ceiling[:, at]))
    best = {"speedup": float(ceiling[best_g, at]), "low": float(low[best_g, at]), "high": float(high[best_g, at]),
            "gamma": int(gammas[best_g]), "batch": int(grid[at])}
    known = draft_length.evidenced_positions(scenario)
    if draft_length.head_past_training(scenario, best["gamma"]) is not None and (gammas <= known).any():
        # The best at α = 1 past the positions whose acceptance the draft is known to keep (an EAGLE-3
        # head's training) keeps α where no run has measured it: the best within them too, which the
        # Claims page shows first (a manager's pass: 6.47× at γ 16 stood as the card's figure, 4.38×
        # within the 7 trained positions).
        within = np.where((gammas <= known)[:, None] & counted[None, :], ceiling, -np.inf)
        g_in, b_in = np.unravel_index(int(np.argmax(np.nan_to_num(within, nan=-np.inf))), within.shape)
        # And the batches where it can hold within them, which the page's card shows beside that best
        # (a manager's pass: "1–1024" counted γ up to 16 beside "γ ≤ 7: 3.88×", short of 2.5× at 1024).
        trained_high = np.fmax.reduce(np.where((gammas <= known)[:, None], high, np.nan), axis=0)
        holds_from, holds_up_to, holds_gaps = claim_verdict.batch_range(grid, counted & (trained_high >= claim.speedup))
        best["trained"] = {"speedup": float(ceiling[g_in, b_in]), "low": float(low[g_in, b_in]),
                           "high": float(high[g_in, b_in]), "gamma": int(gammas[g_in]), "batch": int(grid[b_in]),
                           "positions": known, "holds_from": holds_from, "holds_up_to": holds_up_to,
                           "holds_gaps": holds_gaps}
    # The speedup is E(α, γ) times the step's ratio, which α does not move: S* needs E(1, γ)·S*/S(1).
    reuse = step_scenario.reuse
    full = np.asarray(step_scenario.expected_tokens(1.0, gammas), dtype=float)
    needed = lambda edge: _alpha_for(claim.speedup * full / edge[:, at], gammas.astype(float), reuse)
    alpha = needed(ceiling)
    required = pd.DataFrame({
        "gamma": gammas, "ceiling": ceiling[:, at], "ceiling_low": low[:, at], "ceiling_high": high[:, at],
        "alpha_needed": alpha, "alpha_safe": needed(low), "alpha_optimistic": needed(high),
        "acceptance_rate": np.where(np.isnan(alpha), np.nan,
                                    spec.acceptance_rate_from_alpha(np.nan_to_num(alpha), gammas, **reuse)),
        "acceptance_length": np.where(np.isnan(alpha), np.nan, spec.expected_tokens(np.nan_to_num(alpha), gammas, **reuse)),
    })
    batches = pd.DataFrame({"batch": grid, "counted": counted, "ceiling": np.fmax.reduce(ceiling, axis=0),
                            "ceiling_low": np.fmax.reduce(low, axis=0), "ceiling_high": np.fmax.reduce(high, axis=0),
                            "ceiling_high_gamma": gammas[reaching := np.argmax(np.nan_to_num(high, nan=-np.inf), axis=0)],
                            "ceiling_high_held": limits[reaching]})
    if claim.alpha is not None:
        share = (np.asarray(step_scenario.expected_tokens(claim.alpha, gammas), dtype=float) / full)[:, None]
        at_alpha, at_alpha_low, at_alpha_high = share * ceiling, share * low, share * high
        required["at_alpha"], required["at_alpha_low"], required["at_alpha_high"] = (
            v[:, at] for v in (at_alpha, at_alpha_low, at_alpha_high))
        # Per batch, the γ the model finds best at the measured α, and its band.
        chosen = np.argmax(np.nan_to_num(at_alpha, nan=-np.inf), axis=0)
        pick = lambda v: np.take_along_axis(v, chosen[None, :], axis=0)[0]
        batches["at_alpha_gamma"] = gammas[chosen]
        batches["at_alpha"], batches["at_alpha_low"], batches["at_alpha_high"] = (
            pick(v) for v in (at_alpha, at_alpha_low, at_alpha_high))
    holds = claim_verdict.batch_range(grid, counted & (np.fmax.reduce(high, axis=0) >= claim.speedup))
    verdict, headline, reasons, conditions, yours = claim_verdict.verdict(
        scenario, claim, best, required, batches, holds, int(limits.min()))
    if beyond := claim_verdict.beyond_published(scenario, claim, required, published):
        headline = Notice("claims.verdict.beyond_published", **headline.params)
        # This pair's own figure beside the highest of any (a manager's pass: on a B200 the page weighed
        # α 0.929 against DeepSeek-V4-Flash's 0.91 alone, where gpt-oss-120b's head was published at 0.67).
        own = claim_verdict.beyond_pair(scenario, claim, required, published)
        conditions[1:1] = [beyond, *([own] if own else [])]
    elif beyond := claim_verdict.beyond_pair(scenario, claim, required, published):
        headline = Notice("claims.verdict.beyond_pair", **headline.params)
        conditions.insert(1, beyond)
    elif verdict != "impossible" and (unpublished := claim_verdict.pair_unpublished(scenario, claim, required, published)):
        conditions.insert(1, unpublished)
    if (reused := step_scenario.mtp_reused_from) is not None and full[best_g] < best["gamma"] + 1.0:
        # α = 1 is the trained positions' acceptance: the reused ones still fall, which caps the ceiling.
        reasons.append(Notice("claims.reason.mtp_reuse", gamma=best["gamma"], trained=reused - 1,
                              reuse=step_scenario.mtp_reuse, tokens=float(full[best_g])))
    if (past := draft_length.head_past_training(scenario, best["gamma"])) is not None and past not in conditions:
        # The most the setting gives, at α = 1, drafts past an EAGLE-3 head's training too (a browser pass:
        # "10.07× at γ 16" had stood without it).
        reasons.append(past)
    if claim.workload is not None and verdict != "impossible":
        reasons.append(claim_verdict.on_workload(step_scenario, claim, required, batches))
    # A measurement of this very setup that reaches the claim stands over the model: an impossible claim
    # is beyond the model only, and one said to be unlikely is not (a smaller claim had read worse than
    # a larger one the measurement reached: an attack pass).
    gamma_max = int(gammas.max())
    reaching = None if measured is None else evidence.same_setup_reaching(measured, scenario, claim.speedup,
                                                                           claim.batch, gamma_max)
    short = None if measured is None or reaching is not None else evidence.same_setup_short(
        measured, scenario, claim.speedup, claim.batch, gamma_max, claim.gamma)
    elsewhere = None if measured is None or reaching is not None else evidence.same_setup_elsewhere(
        measured, scenario, claim.speedup, claim.batch, gamma_max)
    other_ep = None if measured is None or reaching is not None else evidence.same_setup_other_ep(
        measured, scenario, claim.speedup, claim.batch, gamma_max)
    if reaching is not None:
        if verdict == "impossible":
            verdict, headline = "conditional", Notice("claims.verdict.measured_beyond", **headline.params)
        elif headline.key in claim_verdict.UNLIKELY_WITHOUT_ALPHA:
            headline = Notice("claims.verdict.conditional", **headline.params)
        reasons.insert(0, claim_verdict.measured_reason("claims.reason.measured_beyond", reaching))
    elif short is not None:
        # A measurement of this very setup at the claim's batch that falls short of it: a claim the
        # model leaves conditional is unlikely, said for the measurement, the stronger evidence, where
        # the pair's acceptance said so too (its condition stays: the headline had named the acceptance
        # and the first reason the measurement, a browser pass); any other verdict keeps its words,
        # and the measurement is said beside them.
        if headline.key in ("claims.verdict.conditional", *claim_verdict.UNLIKELY_WITHOUT_ALPHA):
            headline = Notice("claims.verdict.measured_short", **headline.params)
        top, (low, high) = short
        reasons.insert(0, claim_verdict.measured_reason("claims.reason.measured_short", top) if claim.batch is not None else
                       claim_verdict.measured_reason("claims.reason.measured_short_any", top, low=low, high=high))
    if elsewhere is not None:
        # This setup measured at a context more than twice or half the page's reached the claim: not
        # weighed, but said after any shortfall at this context, with the context that would weigh it
        # ("Impossible" had stood beside AMD's 2.11×, measured at 3,600 positions, in the page's own view
        # of published figures: a browser pass; named in place of a shortfall at this context, it had
        # lifted an "unlikely": an attack pass).
        reasons.insert(0 if short is None else 1, claim_verdict.measured_reason(
            "claims.reason.measured_other_context", elsewhere, context=int(elsewhere["context"]),
            ours=int(scenario.context)))
    if other_ep is not None:
        # Measured with the other expert parallelism: not weighed, said with the switch that weighs it.
        reasons.insert(0 if short is None else 1, claim_verdict.measured_reason(
            "claims.reason.measured_other_ep" if scenario.ep else "claims.reason.measured_with_ep", other_ep))
    top = claim_verdict.optimistic_top(batches)
    lifted = top / (1.0 - calibration.PRESET_MEDIAN_MISS)
    if verdict == "impossible" and not knobs_off_preset(scenario) and claim.speedup <= lifted:
        # Out of reach by less than the presets' median miss before calibration: not called impossible,
        # for that rests on costs not calibrated (a browser pass: 2x on GB200 under TensorRT-LLM, its
        # range's top 1.98x, read "Impossible" beside the "How sure" line's 23 % median miss; a manager's
        # pass: the red "Impossible" was read, and the reason below it, that calibration could reach the
        # claim, was not).
        verdict, headline = "conditional", Notice("claims.verdict.near_reach", **headline.params)
        conditions = [Notice("claims.condition.costs_below_preset", claim=claim.speedup, high=top,
                             above=claim.speedup / top - 1.0, miss=calibration.PRESET_MEDIAN_MISS,
                             points=calibration.PRESET_POINTS)]
        reasons.append(Notice("claims.reason.near_reach", high=top, lifted=lifted,
                              miss=calibration.PRESET_MEDIAN_MISS, points=calibration.PRESET_POINTS))
    if verdict == "conditional" and headline.key in claim_verdict.UNLIKELY:
        verdict = "unlikely"
    return ClaimCheck(claim, verdict, headline, reasons, conditions, best, required, batches, *holds, *yours,
                      memory_limit, memory_gamma)


def claim_grid(scenario: Scenario, claim: Claim, gammas: np.ndarray,
               batch_max: int) -> tuple[Scenario, np.ndarray, int, int, np.ndarray]:
    """What a claim (a gain or a slowdown) is weighed on: the scenario decoding only (a claim is judged
    on decoding alone), the largest batch the memory holds with each γ's draft
    (:func:`specviz.scenario.largest_batch`), the most of them and its γ, and the batches of
    :func:`specviz.calculator.batch_grid` up to ``batch_max`` with those limits (so that a range of
    batches can end where the memory does) and the claim's batch, up to the memory's most."""
    step_scenario = replace(scenario, mode="step", prefill=False)
    limits = np.broadcast_to(largest_batch(scenario.gpu, scenario.target, scenario.draft, scenario.precision,
                                           tp=scenario.tp, dp=scenario.dp, context=step_scenario.context, gamma=gammas,
                                           rule=scenario.engine.memory), gammas.shape)
    memory_limit, memory_gamma = int(limits.max()), int(gammas[int(np.argmax(limits))])
    grid = np.union1d(calculator.batch_grid(batch_max), limits[(limits >= 1) & (limits <= batch_max)])
    if claim.batch is not None:
        grid = np.union1d(grid, [claim.batch])
    return step_scenario, limits, memory_limit, memory_gamma, grid[grid <= memory_limit]


def with_batches(grid: np.ndarray, extra: np.ndarray, priced: Sequence[np.ndarray],
                 added: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """``grid`` with the batches ``extra`` (none of them on it) in order, and each of ``priced`` (per γ
    and batch of the grid) with its columns of ``added`` (the same at ``extra``) where they fall: only
    the added batches are priced."""
    order = np.argsort(np.concatenate([grid, extra]), kind="stable")
    return np.concatenate([grid, extra])[order], [np.concatenate([old, new], axis=1)[:, order]
                                                   for old, new in zip(priced, added)]


def between_turns(grid: np.ndarray, edges: list[np.ndarray], speedup: float) -> np.ndarray:
    """Every batch strictly between two adjacent batches of ``grid`` where one of ``edges`` (speedups
    per γ and batch; the best γ at each batch counts) turns from reaching ``speedup`` to not, or back:
    priced too, they put the ends of each range of batches where they are."""
    turns = {int(i) for edge in edges
             for i in np.flatnonzero(np.diff((np.fmax.reduce(edge, axis=0) >= speedup).astype(int)))}
    between = [np.arange(grid[i] + 1, grid[i + 1]) for i in sorted(turns)]
    return np.concatenate(between) if between else np.array([], dtype=grid.dtype)


def calculator_point(check: ClaimCheck, scenario: Scenario) -> dict[str, float]:
    """Where the calculator shows a claim's figure: ``alpha``, ``gamma`` and ``batch``. At the measured
    α, the γ and batch that do best there; else at the α the claim needs, rounded up to three decimals
    as the conditions name it (:func:`specviz.advice.claim_verdict.at_least`: the calculator there
    reaches the claim, and its figure is the claim's to within that rounding), at the γ that needs
    least of it (:func:`specviz.advice.claim_verdict.easiest`, on ``scenario``'s draft) and the batch the
    table speaks for; α = 1 at the best γ where no α reaches it. Where the claim's batch
    does not fit, that ``batch`` alone: the calculator says what would make it fit."""
    if math.isnan(check.best["speedup"]):
        return {"batch": check.best["batch"]}
    if check.claim.alpha is not None:
        top = claim_verdict.best_at_measured_alpha(check.batches)
        return {"alpha": check.claim.alpha, "gamma": int(top["at_alpha_gamma"]), "batch": int(top["batch"])}
    easiest = claim_verdict.easiest(scenario, check.required)
    if easiest is None:
        return {"alpha": 1.0, "gamma": check.best["gamma"], "batch": check.best["batch"]}
    return {"alpha": claim_verdict.at_least(float(easiest["alpha_needed"]), 3), "gamma": int(easiest["gamma"]),
            "batch": check.best["batch"]}


def _no_fit(scenario: Scenario, claim: Claim, gammas: np.ndarray, grid: np.ndarray, memory_limit: int,
            memory_gamma: int) -> ClaimCheck:
    """The answer to a claim at a batch the memory does not hold with the draft at any γ (or to any
    claim where not even one sequence fits): impossible on this setting, with nothing to draw."""
    batch = claim.batch if claim.batch is not None else 1
    nothing = math.nan
    best = {"speedup": nothing, "low": nothing, "high": nothing, "gamma": int(gammas[0]), "batch": batch}
    required = pd.DataFrame({"gamma": gammas, **dict.fromkeys(
        ("ceiling", "ceiling_low", "ceiling_high", "alpha_needed", "alpha_safe", "alpha_optimistic",
         "acceptance_rate", "acceptance_length"), nothing)})
    batches = pd.DataFrame({"batch": grid[:0], "counted": np.zeros(0, dtype=bool), "ceiling": [], "ceiling_low": [],
                            "ceiling_high": []})
    headline, reasons = no_fit_notices(scenario, claim, memory_limit)
    return ClaimCheck(claim, "impossible", headline, reasons, [], best, required, batches, *claim_verdict.NO_BATCHES,
                      *claim_verdict.NO_BATCHES, memory_limit, memory_gamma)


def no_fit_notices(scenario: Scenario, claim: Claim, memory_limit: int) -> tuple[Notice, list[Notice]]:
    """The headline and reasons of a claim (a gain or a slowdown) at a batch the memory does not hold
    with the draft at any γ, or where not even one sequence fits (``memory_limit`` 0). Where some fit,
    a reason says what a load test at that concurrency measured: the speculative server ran at most
    ``memory_limit`` at once and queued the rest (a manager's pass: "20% slower at batch 512", a load
    test's concurrency, had stood as impossible on one H100, which holds 266)."""
    batch = claim.batch if claim.batch is not None else 1
    headline = Notice("claims.verdict.no_fit", claim=claim.speedup, gpu=claim_verdict.devices(scenario),
                      target=scenario.target.name, engine=scenario.engine.name, batch=batch)
    # An FP8 cache is offered only where the cache is wider (the calculator's "To fit" offers it so).
    no_fit = "claims.reason.no_fit" if scenario.precision.kv_bytes > 1 else "claims.reason.no_fit_narrow_cache"
    # At the claim's γ where it names one: "at any γ" had stood beside γ 16's 226 where γ 1 holds 229.
    drafts = (Notice("claims.reason.drafts_any") if claim.gamma is None else
              Notice("claims.reason.drafts_given", gamma=claim.gamma))
    if not memory_limit:
        return headline, [Notice("claims.reason.no_room", gpu=claim_verdict.devices(scenario), context=scenario.context)]
    return headline, [Notice(no_fit, batch=batch, most=memory_limit, context=scenario.context, drafts=drafts),
                      Notice("claims.reason.no_fit_queued", batch=batch, most=memory_limit)]


