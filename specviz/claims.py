"""Checking a speedup claim: what would have to be true for "up to 3x", and can it be?

A vendor's figure is one speedup S*. In the step model (:func:`specviz.step.step`) the times of a plain
and of a speculative step do not depend on acceptance, so at a fixed setting (hardware, models,
engine, batch, context, γ) the speedup is proportional to the expected tokens per step:

.. math:: S(α) = E(α, γ)\\,\\frac{t_{plain}}{t_{spec}} = \\frac{E(α, γ)}{γ + 1}\\, S(1)

with S(1) the speedup when every draft token is accepted (E = γ + 1). The claim therefore needs
E ≥ S*·(γ + 1) / S(1), an α through the inverse of E (:func:`specviz.spec.alpha_from_acceptance_length`),
and is out of reach where S(1) < S*. The same holds for the edges of the prediction band
(:func:`specviz.calculator.speedup_band`): its quantiles over the cost priors and its widening by the
model's error are both proportional to E, so the α at which the band's low edge reaches S* (the claim
holds even if the costs are unkind) and the α at which its high edge does (it can hold only if they
are kind) come from the band at α = 1 in the same way.

:func:`check_claim` returns the verdict:

* ``impossible``: even with every draft token accepted, the band's high edge stays below S* at every
  batch and γ the claim allows;
* ``plausible``: at the acceptance the user measured on their own traffic, the band's low edge
  reaches S* at some γ (at the claim's batch, or at some batch when it names none);
* ``conditional``: otherwise; true only under the conditions listed (an acceptance, a batch, a γ).
  Without a measured acceptance a claim is at best conditional: acceptance belongs to one model pair,
  one temperature and one domain (seed 000), and only the user's traffic says what it is.

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
import re
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from . import calculator, spec
from .errors import Notice, SpecvizError
from .scenario import Scenario

__all__ = ["VERDICTS", "MEASURES", "Claim", "ClaimCheck", "parse_claim", "alpha_from_measurement", "check_claim",
           "published_reaching"]

VERDICTS = ("plausible", "conditional", "impossible")
# How acceptance on the user's traffic may be given: α itself, vLLM's accepted/drafted, or the mean
# tokens per step (the acceptance length).
MEASURES = ("alpha", "acceptance_rate", "acceptance_length")
_BAD_MEASUREMENT = {"alpha": "claims.bad_alpha", "acceptance_rate": "claims.bad_acceptance_rate",
                    "acceptance_length": "claims.bad_acceptance_length"}
# A claimed speedup is a number followed by x, × or "lần" (times), or a percentage faster, in English
# or Vietnamese (the app's two languages): "up to 3x", "2.5× faster", "180% faster", "lên đến 3 lần",
# "nhanh hơn 2,5x", "tăng tốc 3x". "Up to" ("lên đến", "lên tới", "tới") says the figure is a best case.
_CLAIM = re.compile(r"^\s*(?:up\s+to|lên\s+đến|lên\s+tới|tới|đến)?\s*(?:nhanh\s+hơn|tăng\s+tốc)?\s*"
                    r"(?P<number>\d+(?:[.,]\d+)?)\s*(?P<unit>[x×]|lần|%)?\s*"
                    r"(?:faster|speed-?up|nhanh\s+hơn)?\s*$", re.IGNORECASE)
# Past this a figure is not a speedup of decoding: nothing accepts more than 64 tokens a step.
_LARGEST_CLAIM = 64.0


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
    """

    speedup: float
    batch: int | None = None
    gamma: int | None = None
    alpha: float | None = None


@dataclass(frozen=True)
class ClaimCheck:
    """The answer to a claim (:func:`check_claim`).

    Attributes
    ----------
    claim : Claim
    verdict : str
        One of :data:`VERDICTS`.
    reasons : list of Notice
        Why, in order, in words a manager can forward.
    conditions : list of Notice
        What must hold for the claim (for ``conditional``; the same facts for the others).
    best : dict
        The largest speedup the setting allows with every draft token accepted: ``speedup``, ``low``,
        ``high``, and the ``gamma`` and ``batch`` it is reached at (the claim's batch if it names one).
    required : DataFrame
        One row per γ at ``best["batch"]``: ``gamma``; ``ceiling`` (S at α = 1), ``ceiling_low``,
        ``ceiling_high``; the α needed for the claim by the model (``alpha_needed``), by the band's low edge
        (``alpha_safe``) and by its high edge (``alpha_optimistic``), NaN where out of reach; the
        vLLM-style ``acceptance_rate`` and the ``acceptance_length`` of ``alpha_needed``; and, with a
        measured α, ``at_alpha``, ``at_alpha_low``, ``at_alpha_high``.
    batches : DataFrame
        One row per batch of the grid: ``batch``, the best γ's ``ceiling`` and ``ceiling_high`` at
        α = 1, and with a measured α ``at_alpha``, ``at_alpha_low`` and ``at_alpha_high`` at the γ
        whose low edge is highest there (``at_alpha_gamma``).
    holds_up_to : float
        The largest batch of the grid at which the band's high edge at α = 1 reaches the claim
        (NaN: none); ``holds_from`` the smallest.
    """

    claim: Claim
    verdict: str
    reasons: list[Notice]
    conditions: list[Notice]
    best: dict[str, float]
    required: pd.DataFrame
    batches: pd.DataFrame
    holds_from: float
    holds_up_to: float


def parse_claim(text: str) -> float:
    """The speedup in a claim's words: "up to 3x", "2.5×", "3X faster", "180% faster" (2.8x), and in
    Vietnamese "lên đến 3 lần", "nhanh hơn 2,5x".

    A percentage is read as "faster than": 180 % faster is 2.8×. A comma may be the decimal mark.

    Raises
    ------
    SpecvizError
        ``claims.unreadable`` if the text is not a speedup; ``claims.not_a_speedup`` if it is 1× or
        less (no gain to check) or above 64× (more tokens a step than any draft gives).
    """
    found = _CLAIM.match(text or "")
    if not found:
        raise SpecvizError("claims.unreadable", text=(text or "")[:60])
    number = float(found["number"].replace(",", "."))
    speedup = 1.0 + number / 100.0 if (found["unit"] or "").startswith("%") else number
    if not 1.0 < speedup <= _LARGEST_CLAIM:
        raise SpecvizError("claims.not_a_speedup", speedup=speedup, largest=_LARGEST_CLAIM)
    return speedup


def alpha_from_measurement(measure: str, value: float, gamma: int) -> float:
    """The per-position α of an acceptance measured as ``measure`` at draft length ``gamma``.

    .. math:: E = 1 + r γ \\ (\\text{r: vLLM's rate}),\\qquad α = E^{-1}(E, γ)

    (:func:`specviz.spec.alpha_from_acceptance_length`); ``alpha`` is taken as it is.

    Raises
    ------
    SpecvizError
        ``claims.bad_alpha``, ``claims.bad_acceptance_rate`` (outside [0, 1]) or
        ``claims.bad_acceptance_length`` (outside [1, γ + 1]: it cannot come from γ drafts).
    """
    if measure == "alpha":
        low, high, alpha = 0.0, 1.0, value
    elif measure == "acceptance_rate":
        low, high = 0.0, 1.0
        alpha = spec.alpha_from_acceptance_length(1.0 + value * gamma, gamma) if low <= value <= high else math.nan
    else:
        low, high = 1.0, gamma + 1.0
        alpha = spec.alpha_from_acceptance_length(value, gamma) if low <= value <= high else math.nan
    if not (math.isfinite(value) and low <= value <= high):
        raise SpecvizError(_BAD_MEASUREMENT[measure], value=value, low=low, high=high, gamma=gamma)
    return float(alpha)


def published_reaching(published: pd.DataFrame, speedup: float) -> pd.DataFrame:
    """The published speedups (rows of ``data/published_results.csv`` whose metric is a speedup)
    that reach ``speedup``, highest first."""
    speedups = published[published["metric"].str.endswith("speedup")]
    return speedups[speedups["value"] >= speedup].sort_values("value", ascending=False)


def _alpha_for(length: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """α with E(α, γ) = length, NaN where the length is beyond γ + 1 (out of reach)."""
    reachable = length <= gamma + 1.0
    clipped = np.where(reachable, np.maximum(length, 1.0), 1.0)
    return np.where(reachable, spec.alpha_from_acceptance_length(clipped, gamma), np.nan)


def check_claim(scenario: Scenario, claim: Claim, gamma_max: int, batch_max: int) -> ClaimCheck:
    """Whether ``claim`` can hold in ``scenario`` (its hardware, models, engine costs and context).

    For every γ in 1..``gamma_max`` (or the claim's γ) and every batch of
    :func:`specviz.calculator.batch_grid` up to ``batch_max`` (or the claim's batch): S(1), the
    speedup with every draft token accepted, and its band; the α the claim needs,
    α = E⁻¹(S*·(γ + 1) / S(1)), for the model and for each edge of the band; and, with a measured α,
    the speedup there. See the module's docstring for the verdict.

    Returns
    -------
    ClaimCheck
    """
    step_scenario = replace(scenario, mode="step")
    gammas = np.arange(1, gamma_max + 1) if claim.gamma is None else np.array([claim.gamma])
    grid = calculator.batch_grid(batch_max) if claim.batch is None else np.array([claim.batch])
    g, b = gammas[:, None].astype(float), grid[None, :].astype(float)
    context = step_scenario.context
    ceiling = np.asarray(calculator.evaluate_scenario(step_scenario, 1.0, g, b, context)["speedup"], dtype=float)
    low, high = (np.asarray(edge, dtype=float) for edge in calculator.speedup_band(step_scenario, 1.0, g, b, context))
    ceiling, low, high = (np.broadcast_to(v, (gammas.size, grid.size)) for v in (ceiling, low, high))

    # The batch the per-γ table speaks for: the claim's, else where the ceiling is highest.
    at = int(np.argmax(ceiling.max(axis=0)))
    best_g = int(np.argmax(ceiling[:, at]))
    best = {"speedup": float(ceiling[best_g, at]), "low": float(low[best_g, at]), "high": float(high[best_g, at]),
            "gamma": int(gammas[best_g]), "batch": int(grid[at])}
    needed = lambda edge: _alpha_for(claim.speedup * (gammas + 1.0) / edge[:, at], gammas.astype(float))
    alpha = needed(ceiling)
    required = pd.DataFrame({
        "gamma": gammas, "ceiling": ceiling[:, at], "ceiling_low": low[:, at], "ceiling_high": high[:, at],
        "alpha_needed": alpha, "alpha_safe": needed(low), "alpha_optimistic": needed(high),
        "acceptance_rate": np.where(np.isnan(alpha), np.nan, spec.acceptance_rate_from_alpha(np.nan_to_num(alpha), gammas)),
        "acceptance_length": np.where(np.isnan(alpha), np.nan, spec.expected_tokens(np.nan_to_num(alpha), gammas)),
    })
    batches = pd.DataFrame({"batch": grid, "ceiling": ceiling.max(axis=0), "ceiling_high": high.max(axis=0)})
    if claim.alpha is not None:
        share = np.asarray(spec.expected_tokens(claim.alpha, gammas), dtype=float)[:, None] / (gammas[:, None] + 1.0)
        at_alpha, at_alpha_low, at_alpha_high = share * ceiling, share * low, share * high
        required["at_alpha"], required["at_alpha_low"], required["at_alpha_high"] = (
            v[:, at] for v in (at_alpha, at_alpha_low, at_alpha_high))
        # Per batch, the γ whose band's low edge is highest at the measured α.
        chosen = np.argmax(at_alpha_low, axis=0)
        pick = lambda v: np.take_along_axis(v, chosen[None, :], axis=0)[0]
        batches["at_alpha_gamma"] = gammas[chosen]
        batches["at_alpha"], batches["at_alpha_low"], batches["at_alpha_high"] = (
            pick(v) for v in (at_alpha, at_alpha_low, at_alpha_high))

    reachable = grid[high.max(axis=0) >= claim.speedup]
    holds_from, holds_up_to = (float(reachable.min()), float(reachable.max())) if reachable.size else (math.nan, math.nan)
    verdict, reasons, conditions = _verdict(claim, best, required, batches, holds_from, holds_up_to)
    return ClaimCheck(claim, verdict, reasons, conditions, best, required, batches, holds_from, holds_up_to)


def _verdict(claim: Claim, best: dict[str, float], required: pd.DataFrame, batches: pd.DataFrame,
             holds_from: float, holds_up_to: float) -> tuple[str, list[Notice], list[Notice]]:
    """The verdict, its reasons and the conditions, from the tables of :func:`check_claim`."""
    ceiling = Notice("claims.reason.ceiling", speedup=best["speedup"], low=best["low"], high=best["high"],
                     gamma=best["gamma"], batch=best["batch"])
    if math.isnan(holds_up_to):
        return "impossible", [Notice("claims.reason.out_of_reach", claim=claim.speedup, high=best["high"]), ceiling], []
    # The γ that asks the least acceptance of the model (else of the band's high edge).
    conditions = []
    if required["alpha_needed"].notna().any():
        easiest = required.loc[required["alpha_needed"].idxmin()]
        conditions.append(Notice("claims.condition.acceptance", alpha=float(easiest["alpha_needed"]),
                                 gamma=int(easiest["gamma"]), rate=float(easiest["acceptance_rate"]),
                                 length=float(easiest["acceptance_length"]),
                                 optimistic=float(easiest["alpha_optimistic"])))
        if required["alpha_safe"].isna().all():  # the band's low edge never reaches, even at α = 1
            conditions.append(Notice("claims.condition.kind_costs_too"))
    else:
        easiest = required.loc[required["alpha_optimistic"].idxmin()]
        conditions.append(Notice("claims.condition.kind_costs", alpha=float(easiest["alpha_optimistic"]),
                                 gamma=int(easiest["gamma"])))
    if claim.batch is None:
        conditions.append(Notice("claims.condition.batch", low=int(holds_from), high=int(holds_up_to)))
    reasons = [ceiling]
    if claim.alpha is None:
        reasons.append(Notice("claims.reason.no_alpha"))
        return "conditional", reasons, conditions
    top = batches.loc[batches["at_alpha_low"].idxmax()]
    reached = Notice("claims.reason.at_alpha", alpha=claim.alpha, gamma=int(top["at_alpha_gamma"]),
                     speedup=float(top["at_alpha"]), low=float(top["at_alpha_low"]), high=float(top["at_alpha_high"]),
                     batch=int(top["batch"]))
    return ("plausible" if top["at_alpha_low"] >= claim.speedup else "conditional"), [reached, ceiling], conditions
