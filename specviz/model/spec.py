"""Acceptance math of speculative decoding.

All functions are vectorised: scalars in give Python floats out, numpy arrays broadcast against each
other. Two quantities share the name "acceptance rate" in this field and are kept apart here:

* ``alpha``: the per-position probability that the target accepts a draft token, under the i.i.d.
  model of Leviathan et al. (2023). This is the α in E(α, γ).
* ``acceptance_rate_vllm``: accepted / drafted, what vLLM's metrics and ``vllm bench serve`` call the
  acceptance rate. It equals (E − 1)/γ and is always lower than α for γ > 1.

References
----------
Y. Leviathan, M. Kalman, Y. Matias, "Fast Inference from Transformers via Speculative Decoding",
ICML 2023, arXiv:2211.17192.
"""

from __future__ import annotations

from statistics import NormalDist
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from specviz.errors import InputError

__all__ = [
    "expected_tokens",
    "expected_tokens_chain",
    "histogram_shares",
    "position_rates",
    "decay_from_rates",
    "step_cost",
    "speedup",
    "breakeven_verify_cost",
    "breakeven_alpha",
    "optimal_gamma",
    "acceptance_rate_from_alpha",
    "alpha_from_acceptance_length",
    "alpha_interval",
    "share_interval",
    "SEED_DRAFT_COST",
]

VerifyCost = float | ArrayLike | Callable[[np.ndarray], ArrayLike]

# Seed 000's draft cost: one draft pass at 5 % of a target pass, the defaults of this module's
# functions, of the calculator's ratios mode (specviz.scenario) and of the command line.
SEED_DRAFT_COST = 0.05

GAMMA_SEARCHED_MAX = 1_024
"""The longest draft :func:`optimal_gamma` searches: far past any draft served (the presets' longest
is 16), and its arrays stay small."""

_BISECTION_STEPS = 64  # halves [0, 1] below float64 resolution


def _out(value: np.ndarray) -> float | np.ndarray:
    """Return a Python float for a 0-d result and the array otherwise."""
    return float(value) if np.ndim(value) == 0 else value


def _check_alpha(alpha: ArrayLike, name: str = "alpha") -> np.ndarray:
    a = np.asarray(alpha, dtype=float)
    if np.any(np.isnan(a)) or np.any((a < 0) | (a > 1)):
        raise InputError("spec.alpha_range", name=name)
    return a


def _check_gamma(gamma: ArrayLike) -> np.ndarray:
    g = np.asarray(gamma, dtype=float)
    if not np.all(np.isfinite(g)) or np.any(g < 1) or np.any(g != np.round(g)):
        raise InputError("spec.gamma_whole")
    return g


def _check_cost(cost: ArrayLike, name: str, positive: bool = False) -> np.ndarray:
    """A finite cost ratio; ``positive`` for the verify pass, which divides E in the speedup."""
    c = np.asarray(cost, dtype=float)
    if not np.all(np.isfinite(c)) or np.any(c <= 0 if positive else c < 0):
        raise InputError("spec.cost_positive" if positive else "spec.cost_non_negative", name=name)
    return c


def _expected_tokens(a: np.ndarray, g: np.ndarray) -> np.ndarray:
    # 1 − α^(γ+1) as −expm1((γ+1)·log1p(α − 1)): α − 1 is exact near 1, so no cancellation there.
    with np.errstate(divide="ignore", invalid="ignore"):
        numerator = -np.expm1((g + 1.0) * np.log1p(a - 1.0))
        e = numerator / (1.0 - a)
    return np.where(a == 1.0, g + 1.0, e)


def _check_reuse(trained: ArrayLike, decay: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The reuse profile of :func:`expected_tokens`: positions trained (≥ 1) and decay (in [0, 1])."""
    n = np.asarray(trained, dtype=float)
    r = _check_alpha(decay, "decay")
    if np.any(np.isnan(n)) or np.any(n < 1):
        raise InputError("spec.trained_positions")
    return n, r


def _expected(a: np.ndarray, g: np.ndarray, trained: ArrayLike, decay: ArrayLike) -> np.ndarray:
    """E of :func:`expected_tokens` at checked α and γ, the reuse profile checked here."""
    return _expected_checked(a, g, *_check_reuse(trained, decay))


def _expected_checked(a: np.ndarray, g: np.ndarray, n: np.ndarray, r: np.ndarray) -> np.ndarray:
    """E of :func:`expected_tokens` with every argument checked (a bisection calls it 64 times)."""
    if np.all((r == 1.0) | (g <= n)):
        return _expected_tokens(a, g)
    # One axis of draft positions 0..γ: γ is a draft length, a few tokens to a few tens.
    depth = np.arange(int(g.max()) + 1, dtype=float)
    a, g, n, r = (np.asarray(v)[..., None] for v in (a, g, n, r))
    past = np.maximum(depth - n, 0.0)
    terms = a ** depth * r ** (past * (past + 1.0) / 2.0)  # 0 ** 0 = 1 in numpy: α or r at 0 are exact
    return np.where(depth <= g, terms, 0.0).sum(axis=-1)


def expected_tokens(alpha: ArrayLike, gamma: ArrayLike, *, trained: ArrayLike = np.inf,
                    decay: ArrayLike = 1.0) -> float | np.ndarray:
    """Expected tokens produced by one speculative step (draft γ tokens, verify once).

    .. math:: E(\\alpha, \\gamma) = \\frac{1 - \\alpha^{\\gamma + 1}}{1 - \\alpha}
              = \\sum_{k=0}^{\\gamma} \\alpha^k

    The count includes the bonus token that the target emits itself, so 1 ≤ E ≤ γ + 1.

    A draft run past the n = ``trained`` positions it was trained for, as vLLM and SGLang run a
    model's last MTP layer again for every draft token past its ``num_nextn_predict_layers``, accepts
    less at each further one: its conditional acceptance at position d is

    .. math::

        a_d = \\alpha\\, r^{\\max(0,\\, d - n)},\\qquad
        E = 1 + \\sum_{d=1}^{\\gamma} \\prod_{j \\le d} a_j
          = \\sum_{d=0}^{\\gamma} \\alpha^d\\, r^{T(d - n)},\\quad T(k) = \\tfrac{k(k + 1)}{2}\\ (k > 0),\\ 0\\ (k \\le 0)

    with r = ``decay``: each reuse feeds the layer an input further from what it was trained on, so
    the shortfall compounds. r = 1, or γ ≤ n, is the i.i.d. chain above.

    Parameters
    ----------
    alpha : array_like
        Per-position acceptance probability α in [0, 1] (i.i.d. model; at the trained positions).
    gamma : array_like
        Draft length γ, a whole number ≥ 1.
    trained : array_like, optional
        n ≥ 1, the draft positions the draft was trained for (``inf``, the default: every one).
    decay : array_like, optional
        r in [0, 1], what each position past them keeps of the acceptance before it (1: all).

    Returns
    -------
    float or ndarray
        E(α, γ). Special cases: E = γ + 1 exactly at α = 1 (the 0/0 limit) without reuse, less with
        it; E = 1 at α = 0.

    Raises
    ------
    ValueError
        If α or r lies outside [0, 1], γ is not a whole number ≥ 1 or n is below 1.

    Notes
    -----
    Computed as −expm1((γ+1)·log1p(α−1)) / (1−α), which keeps full precision as α → 1; with reuse,
    as the sum over one axis of the draft positions 0..γ.

    References
    ----------
    Leviathan, Kalman, Matias (2023), arXiv:2211.17192, equation (1). Seed 000: E(0.8, 4) = 3.36.
    With reuse, the chain form (:func:`expected_tokens_chain`) at the per-position rates that vLLM's
    counters measure (``vllm:spec_decode_num_accepted_tokens_per_pos_total``). Hand value: α = 0.8,
    γ = 3, n = 1, r = 0.62 gives 1 + 0.8 + 0.8²·0.62 + 0.8³·0.62³ = 2.3188.

    Examples
    --------
    >>> round(expected_tokens(0.8, 4), 2)
    3.36
    >>> expected_tokens(1.0, 4)
    5.0
    >>> round(expected_tokens(0.8, 3, trained=1, decay=0.62), 4)
    2.3188
    """
    return _out(_expected(_check_alpha(alpha), _check_gamma(gamma), trained, decay))


def position_rates(alpha: ArrayLike, gamma: int, *, trained: ArrayLike = np.inf,
                   decay: ArrayLike = 1.0) -> np.ndarray:
    """The conditional acceptance a₁..a_γ at each draft position that :func:`expected_tokens` sums.

    .. math:: a_d = \\alpha\\, r^{\\max(0,\\, d - n)}

    Parameters
    ----------
    alpha : array_like
        α at the trained positions, in [0, 1].
    gamma : int
        Draft length γ ≥ 1: the new last axis's length.
    trained, decay : array_like, optional
        n and r, as in :func:`expected_tokens`.

    Returns
    -------
    ndarray
        a_d along a new last axis of length γ; :func:`expected_tokens_chain` of it is
        :func:`expected_tokens` at the same α, γ, n and r.
    """
    a = _check_alpha(alpha)
    _check_gamma(gamma)
    n = np.asarray(trained, dtype=float)[..., None]
    r = _check_alpha(decay, "decay")[..., None]
    depth = np.arange(1, int(gamma) + 1, dtype=float)
    return a[..., None] * r ** np.maximum(depth - n, 0.0)


def decay_from_rates(rates: ArrayLike, trained: int) -> float:
    """The r of :func:`expected_tokens` that measured conditional per-position rates a₁..a_γ show for
    a draft trained for its first ``trained`` positions.

    .. math:: \\hat α = \\Big(\\prod_{d \\le n} a_d\\Big)^{1/n},\\qquad
              \\log \\hat r = \\frac{\\sum_{k \\ge 1} k \\log(a_{n+k} / \\hat α)}{\\sum_{k \\ge 1} k^2}

    the least-squares fit of log a_{n+k} = log α̂ + k log r through the trained positions' mean, held
    to [0, 1] (a later position that accepts more than the trained ones, as rates past a few
    positions can among the drafts that reach them, is no decay).

    Parameters
    ----------
    rates : array_like
        Conditional rates a₁..a_γ (1-D), each in [0, 1].
    trained : int
        n ≥ 1, with γ > n: at least one reused position.

    Returns
    -------
    float
        r̂ in [0, 1]; 0 where a reused position accepts nothing. Rates made at α and r give r back.

    Raises
    ------
    ValueError
        If a rate lies outside [0, 1], n < 1 or no position is past n.
    """
    a = _check_alpha(rates, "rates").reshape(-1)
    n = int(trained)
    if n < 1 or a.size <= n:
        raise InputError("spec.trained_positions")
    if np.any(a[:n] == 0.0):  # nothing accepted where the layer was trained: no shape to read
        return 1.0
    with np.errstate(divide="ignore"):
        logs = np.log(a)
    k = np.arange(1, a.size - n + 1, dtype=float)
    slope = float(np.sum(k * (logs[n:] - logs[:n].mean())) / np.sum(k * k))
    return float(np.clip(np.exp(slope), 0.0, 1.0))


def expected_tokens_chain(rates: ArrayLike) -> float | np.ndarray:
    """Expected tokens per step from conditional per-position acceptance rates.

    .. math:: E = 1 + \\sum_{i=1}^{\\gamma} \\prod_{j \\le i} a_j

    where a_j is the probability that position j is accepted given that positions 1..j−1 were.
    With all a_j = α this equals :func:`expected_tokens`.

    Parameters
    ----------
    rates : array_like
        Conditional acceptance rates a₁..a_γ along the last axis, each in [0, 1].

    Returns
    -------
    float or ndarray
        E, with the last axis reduced.

    Raises
    ------
    ValueError
        If a rate lies outside [0, 1] or the last axis is empty.

    References
    ----------
    The chain form used by NVIDIA aiconfigurator for multi-token prediction; vLLM V1 exports the
    per-position counters from which the a_j are measured.
    """
    r = _check_alpha(rates, "rates")
    if r.ndim == 0 or r.shape[-1] == 0:
        raise InputError("spec.rates_empty")
    return _out(1.0 + np.cumprod(r, axis=-1).sum(axis=-1))


def histogram_shares(steps_by_accepted: ArrayLike) -> tuple[np.ndarray, float]:
    """From the verify steps that accepted j = 0, 1, …, γ draft tokens (``steps_by_accepted[j]``): the
    share of steps that accepted position i, i = 1 … γ, and the share that accepted none.

    .. math:: p_i = \\frac{\\sum_{j \\ge i} n_j}{\\sum_j n_j}, \\qquad z = \\frac{n_0}{\\sum_j n_j}

    A step that accepted j tokens accepted positions 1 … j, as vLLM's ``num_accepted_tokens_per_pos``
    counts them (AIPerf's and vLLM's per-request acceptance histograms, and a run's zero-accept share,
    seed 002's "15–30 % of iterations accepted zero tokens").

    Parameters
    ----------
    steps_by_accepted : array_like
        Counts, one per number of accepted tokens from 0, with a positive finite sum.

    Examples
    --------
    10 steps accepting 0, 30 accepting 1 and 60 accepting 2: positions accepted by 0.90 and 0.60 of
    the steps, none by 0.10.
    """
    counts = np.asarray(steps_by_accepted, dtype=float)
    total = counts.sum()
    return np.cumsum(counts[::-1])[::-1][1:] / total, float(counts[0] / total)


def step_cost(gamma: ArrayLike, verify_cost: ArrayLike = 1.0,
              draft_cost: ArrayLike = SEED_DRAFT_COST) -> float | np.ndarray:
    """Cost of one speculative step in units of one plain target forward pass.

    .. math:: C = v + \\gamma c

    Parameters
    ----------
    gamma : array_like
        Draft length γ.
    verify_cost : array_like
        v > 0: the target's verify pass over γ + 1 positions, relative to a plain decode pass.
        1 while the pass is memory-bound; about γ + 1 when compute-bound. A pass costs something,
        so v = 0 (which would make the speedup infinite once c = 0) is refused.
    draft_cost : array_like
        c ≥ 0: one draft pass relative to a target pass (seed 000 uses 0.05).

    Returns
    -------
    float or ndarray
        C > 0. Seed 000: 1.2 at γ = 4, 1.4 at γ = 8 (v = 1, c = 0.05).

    Raises
    ------
    ValueError
        If γ is not a whole number ≥ 1, v is not positive and finite, c is negative or not finite,
        or C overflows.

    References
    ----------
    Leviathan et al. (2023), section 3.4 (γc + 1); seed 002 writes it 1 + α + β.
    """
    g = _check_gamma(gamma)
    v = _check_cost(verify_cost, "verify_cost", positive=True)
    c = _check_cost(draft_cost, "draft_cost")
    with np.errstate(over="ignore"):  # checked just below
        cost = v + g * c
    if not np.all(np.isfinite(cost)):
        raise InputError("spec.cost_overflow")
    return _out(cost)


def speedup(alpha: ArrayLike, gamma: ArrayLike, verify_cost: ArrayLike = 1.0,
            draft_cost: ArrayLike = SEED_DRAFT_COST, *, trained: ArrayLike = np.inf,
            decay: ArrayLike = 1.0) -> float | np.ndarray:
    """Speedup of speculative decoding over plain decoding (tokens per unit time, ratio).

    .. math:: S = \\frac{E(\\alpha, \\gamma)}{v + \\gamma c}

    Parameters
    ----------
    alpha, gamma, trained, decay : array_like
        As in :func:`expected_tokens`.
    verify_cost, draft_cost : array_like
        As in :func:`step_cost`.

    Returns
    -------
    float or ndarray
        S, finite and positive; above 1 speculation pays. At α = 1 without reuse, S = (γ + 1)/(v + γc).

    Raises
    ------
    ValueError
        As :func:`expected_tokens` and :func:`step_cost` (among others for a verify cost v ≤ 0),
        and where S would overflow.

    References
    ----------
    Leviathan et al. (2023), theorem 3.8 (with v = 1). Seed 000: 2.31 / 1.26 / 0.87 / 0.53 at
    α = 0.7, γ = 4 for v = 1, 2, 3, 5; compute-bound (v = γ + 1) 0.79 / 0.65 / 0.44 / 0.32 at
    α = 0.9 / 0.8 / 0.6 / 0.4.
    """
    e = _expected(_check_alpha(alpha), _check_gamma(gamma), trained, decay)
    with np.errstate(over="ignore"):  # checked just below
        s = e / np.asarray(step_cost(gamma, verify_cost, draft_cost))
    if not np.all(np.isfinite(s)):  # a cost so close to 0 that E / C overflows
        raise InputError("spec.speedup_overflow")
    return _out(s)


def breakeven_verify_cost(alpha: ArrayLike, gamma: ArrayLike, draft_cost: ArrayLike = SEED_DRAFT_COST,
                          *, trained: ArrayLike = np.inf, decay: ArrayLike = 1.0) -> float | np.ndarray:
    """Largest verify cost at which speculation still breaks even (S = 1).

    .. math:: v^* = E(\\alpha, \\gamma) - \\gamma c

    :func:`speedup`'s S = E / (v + γc) set to 1 and solved for v (Leviathan, Kalman, Matias 2023,
    arXiv:2211.17192, Theorem 3.8, with the verify pass's cost v in place of their 1).

    Returns
    -------
    float or ndarray
        v*; a negative value means the drafts alone already cost more than they return.
        Seed 000: about 2.6 at α = 0.7, γ = 4, c = 0.05. ``trained`` and ``decay`` as in
        :func:`expected_tokens`.
    """
    e = _expected(_check_alpha(alpha), _check_gamma(gamma), trained, decay)
    return _out(e - np.asarray(gamma, dtype=float) * _check_cost(draft_cost, "draft_cost"))


def _alpha_for_length(length: np.ndarray, g: np.ndarray, trained: ArrayLike,
                      decay: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised bisection for E(α, γ) = length, E of :func:`expected_tokens` at ``trained`` and
    ``decay`` (it rises strictly with α on [0, 1]): α (1 where the length reaches E(1, γ)), and E(1, γ),
    the most the draft makes, for the caller to refuse a length past it."""
    n, r = _check_reuse(trained, decay)
    top = _expected_checked(np.ones(np.broadcast_shapes(np.shape(length), g.shape)), g, n, r)
    length = np.broadcast_to(length, top.shape)
    lo, hi = np.zeros_like(top), np.ones_like(top)
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        below = _expected_checked(mid, g, n, r) < length
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return np.where(length >= top, 1.0, np.where(length <= 1.0, 0.0, 0.5 * (lo + hi))), top


def breakeven_alpha(gamma: ArrayLike, verify_cost: ArrayLike = 1.0, draft_cost: ArrayLike = SEED_DRAFT_COST,
                    *, trained: ArrayLike = np.inf, decay: ArrayLike = 1.0) -> float | np.ndarray:
    """Smallest α at which speculation breaks even: solves E(α, γ) = v + γc (E as
    :func:`expected_tokens` gives it, with ``trained`` and ``decay``).

    Returns
    -------
    float or ndarray
        α* in [0, 1]; 0 when the step costs no more than a plain pass (v + γc ≤ 1); NaN when even
        α = 1 cannot pay (v + γc > E(1, γ), γ + 1 without reuse).

    References
    ----------
    Leviathan et al. (2023), corollary 3.9: with v = 1, a speedup exists iff α > c (γ = 1).
    """
    g = _check_gamma(gamma)
    cost = np.asarray(step_cost(gamma, verify_cost, draft_cost))
    alpha, top = _alpha_for_length(cost, g, trained, decay)
    return _out(np.where(cost > top, np.nan, alpha))


def optimal_gamma(alpha: ArrayLike, draft_cost: ArrayLike = SEED_DRAFT_COST, verify_cost: VerifyCost = 1.0,
                  gamma_max: int = 16, *, trained: ArrayLike = np.inf,
                  decay: ArrayLike = 1.0) -> tuple[int | np.ndarray, float | np.ndarray]:
    """Draft length γ in 1..gamma_max that maximises :func:`speedup`, and that speedup.

    The optimum has no closed form (Leviathan et al. 2023, section 3.5); it is searched.

    Parameters
    ----------
    alpha : array_like
        Per-position acceptance α.
    draft_cost : array_like
        c, as in :func:`step_cost`.
    verify_cost : float, array_like or callable
        v, or a function of the γ array (shape ``(gamma_max,) + (1,)*alpha.ndim``) returning v for
        each γ, so a roofline can make the verify pass dearer as γ grows.
    gamma_max : int
        Largest γ searched, at most :data:`GAMMA_SEARCHED_MAX`.
    trained, decay : array_like, optional
        As in :func:`expected_tokens`.

    Returns
    -------
    gamma : int or ndarray of int
        The best γ (the smallest one on ties).
    speedup : float or ndarray
        Its speedup; below 1 means no γ pays and speculation should be off.
    """
    if int(gamma_max) != gamma_max or gamma_max < 1:
        raise InputError("spec.gamma_max_whole")
    if gamma_max > GAMMA_SEARCHED_MAX:  # each γ searched is an array of α's shape: 10⁹ filled 23 GB
        raise InputError("spec.gamma_max_large", most=GAMMA_SEARCHED_MAX, value=int(gamma_max))
    a = _check_alpha(alpha)
    gammas = np.arange(1, int(gamma_max) + 1, dtype=float).reshape((-1,) + (1,) * a.ndim)
    v = verify_cost(gammas) if callable(verify_cost) else verify_cost
    s = np.asarray(speedup(a[np.newaxis], gammas, v, draft_cost, trained=trained, decay=decay))
    best = np.argmax(s, axis=0)
    best_speedup = np.take_along_axis(s, best[np.newaxis], axis=0)[0]
    if np.ndim(best) == 0:
        return int(best) + 1, float(best_speedup)
    return best + 1, best_speedup


def acceptance_rate_from_alpha(alpha: ArrayLike, gamma: ArrayLike, *, trained: ArrayLike = np.inf,
                               decay: ArrayLike = 1.0) -> float | np.ndarray:
    """vLLM's acceptance rate (accepted / drafted) implied by a per-position α.

    .. math:: r = \\frac{E(\\alpha, \\gamma) - 1}{\\gamma}

    vLLM counts every drafted and every accepted token (``vllm:spec_decode_num_draft_tokens`` and
    ``vllm:spec_decode_num_accepted_tokens``, ``vllm/v1/spec_decode/metrics.py``); a step accepts
    E − 1 of its γ drafts on average, the bonus token being no draft's.

    Returns
    -------
    float or ndarray
        r in [0, 1]; r = α only at γ = 1, α = 0 or α = 1. At α = 0.8, γ = 4: 0.59, not 0.8. E with
        ``trained`` and ``decay`` as in :func:`expected_tokens`.
    """
    e = _expected(_check_alpha(alpha), _check_gamma(gamma), trained, decay)
    return _out((e - 1.0) / np.asarray(gamma, dtype=float))


def alpha_from_acceptance_length(length: ArrayLike, gamma: ArrayLike, *, trained: ArrayLike = np.inf,
                                 decay: ArrayLike = 1.0) -> float | np.ndarray:
    """Per-position α from a measured mean acceptance length (the inverse of E).

    The acceptance length is tokens per target step, 1 + accepted / drafts in vLLM's counters
    (``spec_decode_acceptance_length`` in ``vllm bench serve``). A vLLM acceptance rate r converts
    through length = 1 + r·γ.

    Parameters
    ----------
    length : array_like
        Mean tokens per step, 1 ≤ length ≤ γ + 1.
    gamma : array_like
        Draft length γ used in the measurement.
    trained, decay : array_like, optional
        A draft run past the ``trained`` positions it was trained for, each further one keeping
        ``decay`` of the acceptance before it (:func:`expected_tokens`); by default none is.

    Returns
    -------
    float or ndarray
        α with E(α, γ) = length (:func:`expected_tokens`); 0 at length 1 and 1 at length γ + 1.

    Raises
    ------
    ValueError
        If length lies outside [1, γ + 1] (it cannot come from γ drafts), or above what a reused
        draft makes at α = 1.
    """
    g = _check_gamma(gamma)
    n = np.asarray(length, dtype=float)
    if np.any(np.isnan(n)) or np.any(n < 1.0) or np.any(n > g + 1.0):
        raise InputError("spec.length_range")
    alpha, top = _alpha_for_length(n, g, trained, decay)
    if np.any(n > top + 1e-9):
        # Longer than the draft makes at α = 1 once its reused positions lose acceptance.
        raise InputError("spec.length_reused", top=float(np.min(top)))
    return _out(alpha)


def share_interval(share: ArrayLike, trials: ArrayLike, coverage: float = 0.8
                   ) -> tuple[float | np.ndarray, float | np.ndarray]:
    """The Wilson score interval of a share measured over ``trials`` independent trials.

    .. math:: \\frac{p + z^2/2n \\pm z\\sqrt{p(1 − p)/n + z^2/4n^2}}{1 + z^2/n}

    with z the normal quantile of (1 + coverage)/2 (Wilson 1927): unlike p ± z√(p(1−p)/n), it stays
    within [0, 1] and has a width at p = 0 or 1.

    Parameters
    ----------
    share : array_like
        The measured share p, in [0, 1].
    trials : array_like
        Trials n it was measured over, at least 1 (a count from a rate's extrapolation may have a
        fraction).
    coverage : float, optional
        The interval's probability, in (0, 1), 0.8 by default: the 10th to 90th percentile of the
        step model's bands.

    Returns
    -------
    low, high : float or ndarray
        Within [0, 1]; p = 1 gives high = 1 and low = n / (n + z²), p = 0 gives low = 0.

    Raises
    ------
    ValueError
        If the share lies outside [0, 1], ``trials`` is below 1 or ``coverage`` outside (0, 1).

    References
    ----------
    E. B. Wilson, "Probable inference, the law of succession, and statistical inference", JASA 22
    (1927) 209–212.
    """
    p = _check_alpha(share, "share")
    n = np.asarray(trials, dtype=float)
    if np.any(~(n >= 1)):  # fewer than one trial is no measurement (1e-320 drafts had given NaN)
        raise InputError("spec.trials_positive")
    if not 0 < coverage < 1:
        raise InputError("spec.coverage_range")
    z = NormalDist().inv_cdf((1.0 + coverage) / 2.0)
    spread = z * z / n
    centre = (p + spread / 2.0) / (1.0 + spread)
    half = z * np.sqrt(p * (1.0 - p) / n + spread / (4.0 * n)) / (1.0 + spread)
    return _out(np.clip(centre - half, 0.0, 1.0)), _out(np.clip(centre + half, 0.0, 1.0))


def alpha_interval(alpha: ArrayLike, drafts: ArrayLike, gamma: ArrayLike, coverage: float = 0.8
                   ) -> tuple[float | np.ndarray, float | np.ndarray]:
    """The Wilson score interval of an i.i.d. α measured over ``drafts`` drafts of γ tokens.

    Under the chain model a draft is a run of Bernoulli(α) trials that ends at the first rejection or
    after γ acceptances. Over D drafts the likelihood is α^A (1 − α)^R, with A the accepted tokens and
    R the drafts that ended in a rejection: a binomial's in n = A + R trials. At the measured α, whose
    E(α, γ) is the measured acceptance length, A = D (E − 1) and R = D (1 − α^γ) in expectation, so

    .. math:: n = D\\,\\bigl(E(α, γ) − α^γ\\bigr)

    and the interval is :func:`share_interval`'s of α over n. It is the sampling error alone: drafts
    of one request are not independent of each other (requests differ in acceptance), so the true
    spread is wider, and a window of many drafts is still not a workload's mean.

    Parameters
    ----------
    alpha : array_like
        The measured i.i.d. α, in [0, 1] (:func:`alpha_from_acceptance_length`).
    drafts : array_like
        Drafts measured, at least 1.
    gamma : array_like
        Draft length γ, ≥ 1.
    coverage : float, optional
        As :func:`share_interval`'s.

    Returns
    -------
    low, high : float or ndarray
        Within [0, 1]; α = 1 gives high = 1 and low = n / (n + z²), α = 0 gives low = 0.

    Raises
    ------
    ValueError
        If α lies outside [0, 1], γ is below 1 or ``drafts`` below 1.

    Examples
    --------
    48 drafts of 3 tokens all accepted: n = 144 trials and z = 1.2816 give low = 144 / (144 + 1.642)
    ≈ 0.9887.
    """
    a = _check_alpha(alpha)
    g = _check_gamma(gamma)
    d = np.asarray(drafts, dtype=float)
    if np.any(~(d >= 1)):
        raise InputError("spec.drafts_positive")
    # E − α^γ = 1 + α + … + α^(γ−1) ≥ 1: every draft is one trial at least, which rounding must not undo.
    return share_interval(a, np.maximum(d * (_expected_tokens(a, g) - a ** g), d), coverage)
