"""Seed 002's zero-accept share: how the share of steps that accept no draft moves the latency tail
while the mean acceptance length stays put.

Seed 002 measured acceptance lengths of 2.11–3.50 tokens a step with 15–30 % of steps accepting
none, and advised tracking that share because "it drives p99 latency". A mean length does not fix
the share: :func:`zero_share_range` gives the shares a chain can have at a mean, :func:`chain_rates`
the simplest per-position rates that hold both, and :func:`zero_accept_sweep` the latency
(:func:`specviz.model.simulate.latency`) at each share, with common random numbers.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from specviz.errors import SpecvizError, shortened

from . import simulate, spec

__all__ = ["zero_share_range", "chain_rates", "zero_accept_sweep"]



def zero_share_range(mean_length: float, gamma: int) -> tuple[float, float]:
    """The zero-accept shares a chain of :func:`chain_rates` can have at this mean length.

    .. math:: \\max(0,\\ 2 - L) \\le z \\le \\min\\left(1,\\ 1 - \\frac{L - 1}{\\gamma}\\right)

    from 2 − z ≤ L ≤ 1 + (1 − z)γ (the later positions never or always accepted). (NaN, NaN) for
    a length outside [1, γ + 1], and for γ < 1 (no draft: no step can accept one).
    """
    if gamma < 1 or not 1.0 <= mean_length <= gamma + 1.0:
        return math.nan, math.nan
    return max(0.0, 2.0 - mean_length), min(1.0, 1.0 - (mean_length - 1.0) / gamma)


def chain_rates(mean_length: float, zero_share: float, gamma: int) -> np.ndarray:
    """Per-position rates with a given mean acceptance length and zero-accept share.

    .. math:: a_1 = 1 - z,\\quad a_2 = \\dots = a_\\gamma = \\beta,\\qquad
              L = 1 + (1 - z)\\, E(\\beta, \\gamma - 1)

    so the first position alone sets the zero-accept share z and β, solved by bisection
    (:func:`specviz.model.spec.alpha_from_acceptance_length`), holds the mean length L. Seed 002 reports
    both figures (acceptance length 2.11–3.50, 15–30 % zero-accept steps) but not how acceptance
    decays with depth; this is the simplest chain that matches both.

    Parameters
    ----------
    mean_length : float
        L, mean tokens per step (bonus token included).
    zero_share : float
        z in [0, 1], the share of steps that accept no draft.
    gamma : int
        Draft length γ, 1 to :data:`specviz.model.simulate.MAX_GAMMA`.

    Returns
    -------
    ndarray, shape (γ,)
        a₁..a_γ, with ``spec.expected_tokens_chain(rates) == L`` (to bisection precision) and
        1 − a₁ = z. With z = 1 every rate is 0.

    Raises
    ------
    SpecvizError
        ``simulate.bad_gamma``, ``simulate.bad_zero_share``, or ``simulate.infeasible`` unless
        2 − z ≤ L ≤ 1 + (1 − z)γ (the bounds of β = 0 and β = 1).
    """
    g = simulate.checked_whole(gamma, "simulate.bad_gamma", 1, simulate.MAX_GAMMA, min=1, max=simulate.MAX_GAMMA)
    if not simulate.is_number(zero_share) or not 0.0 <= float(zero_share) <= 1.0:
        raise SpecvizError("simulate.bad_zero_share", value=shortened(zero_share))
    z = float(zero_share)
    low, high = 2.0 - z, 1.0 + (1.0 - z) * g
    length = float(mean_length) if simulate.is_number(mean_length) else float("nan")
    fewest, most = zero_share_range(length, g)
    tolerance = 1e-12 * g
    if not fewest - tolerance <= z <= most + tolerance:  # NaN fails too
        raise SpecvizError("simulate.infeasible", gamma=g, share=f"{z:g}", length=shortened(mean_length),
                           low=f"{low:.4g}", high=f"{high:.4g}")
    if z == 1.0 or g == 1:
        return np.full(g, 1.0 - z)
    tail = min(max((length - 1.0) / (1.0 - z), 1.0), float(g))
    beta = float(spec.alpha_from_acceptance_length(tail, g - 1))
    return np.concatenate([[1.0 - z], np.full(g - 1, beta)])


_SWEEP_COLUMNS = ("zero_share", "zero_accept_share", "mean_tokens", "itl_mean_s", "itl_p99_s", "tpot_p50_s",
                  "tpot_p90_s", "tpot_p99_s", "tpot_mean_s", "request_p50_s", "request_p99_s", "request_mean_s")


def zero_accept_sweep(zero_shares: Sequence[float] | ArrayLike, mean_length: float, gamma: int, times: simulate.StepTimes,
                      *, output_tokens: int = 500, requests: int = 10_000, steps: int = 1_000_000,
                      seed: int = 0) -> pd.DataFrame:
    """Seed 002's effect: the zero-accept share moves the tail while the mean stays put.

    For each zero-accept share z, :func:`specviz.model.simulate.latency` with :func:`chain_rates` (mean_length, z, γ): the
    mean acceptance length, and so the mean inter-token latency spec_s / L, is the same in every
    row; only the shape of the distribution of tokens per step changes. Every row uses the same
    seed (common random numbers), so differences between rows come from z, not from noise.

    What to read in the table: ``itl_mean_s`` stays at spec_s / L; ``tpot_p99_s`` is the whole
    spec_s in every row with z > 1 % (and lower below), ``tpot_p90_s`` once z > 10 %; the
    per-step mean ``tpot_mean_s`` and the request tail ``request_p99_s`` grow with z (more
    one-token steps, balanced by more full steps, widen the spread of steps per request), while
    ``request_mean_s`` barely moves.

    Parameters
    ----------
    zero_shares : sequence of float
        Zero-accept shares, each in [0, 1]; seed 002 measured 0.15–0.30. At most 100.
    mean_length : float
        Mean tokens per step L held fixed (seed 002: 3.50 JSON, 3.00 code, 2.11 story).
    gamma : int
        Draft length γ ≥ 1.
    times : StepTimes
        Step times.
    output_tokens, requests, steps, seed
        As in :func:`specviz.model.simulate.latency`.

    Returns
    -------
    DataFrame
        One row per share, columns ``zero_share`` (asked), ``zero_accept_share`` (simulated),
        ``mean_tokens``, ``itl_mean_s``, ``itl_p99_s``, ``tpot_p50_s``, ``tpot_p90_s``,
        ``tpot_p99_s``, ``tpot_mean_s``, ``request_p50_s``, ``request_p99_s``,
        ``request_mean_s``: ids, not words, for a page to label.

    Raises
    ------
    SpecvizError
        ``simulate.bad_zero_share`` for an empty or too long list, and as :func:`chain_rates` and
        :func:`specviz.model.simulate.latency`.
    """
    try:
        shares = np.asarray(zero_shares, dtype=float)
    except (TypeError, ValueError):
        raise SpecvizError("simulate.bad_zero_share", value=shortened(zero_shares)) from None
    if shares.ndim != 1 or not 1 <= shares.size <= 100:
        raise SpecvizError("simulate.bad_zero_share", value=shortened(zero_shares))
    rows = []
    for z in shares.tolist():
        result = simulate.latency(rates=chain_rates(mean_length, z, gamma), times=times, output_tokens=output_tokens,
                         requests=requests, steps=steps, seed=seed)
        rows.append([z] + [getattr(result, column) for column in _SWEEP_COLUMNS[1:]])
    return pd.DataFrame(rows, columns=list(_SWEEP_COLUMNS))
