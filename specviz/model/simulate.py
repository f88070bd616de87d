"""Monte Carlo of speculative decoding's latency: tokens per step, inter-token gaps, request latency.

The acceptance math of :mod:`specviz.model.spec` gives means. A mean hides the tail: a speculative step
costs more than a plain one (γ draft passes and a verify pass) and when it accepts no draft it
yields a single token for that price. Seed 002 measured 15–30 % of steps accepting zero tokens on
its CPU benchmark and advised tracking that share because "it drives p99 latency". This module
draws steps and requests, seeded and vectorised (numpy, no Python loop over steps or requests), to
show the tail beside the mean.

Model
-----
Every step drafts γ tokens and verifies them in one target pass. The number of accepted drafts A is
the number of leading positions accepted; the step emits K = A + 1 tokens (the target's own bonus
token included), so 1 ≤ K ≤ γ + 1. With conditional per-position rates a₁..a_γ (a_i = P(position i
accepted | positions 1..i−1 accepted), what vLLM V1's per-position counters measure) the survival
probabilities are

.. math:: P(A \\ge i) = S_i = \\prod_{j \\le i} a_j,\\qquad
          E[K] = 1 + \\sum_{i=1}^{\\gamma} S_i

(the chain form); with an i.i.d. per-position α, S_i = α^i and E[K] = E(α, γ) = (1 − α^{γ+1})/(1 − α)
(Leviathan et al. 2023, equation 1): A is a geometric count truncated at γ. The zero-accept share
is P(K = 1) = 1 − a₁ (1 − α for an i.i.d. α). Steps are independent; their times are fixed (:class:`StepTimes`),
so all variation comes from acceptance.

One uniform u per step decides K by inverse CDF: A = #{i : u < S_i}, read from a table of the
survival curve (a binary search where a table bin holds a step of the curve), not from a
(steps × γ) Bernoulli matrix.

References
----------
Y. Leviathan, M. Kalman, Y. Matias, "Fast Inference from Transformers via Speculative Decoding",
ICML 2023, arXiv:2211.17192 (E(α, γ)). The chain form E = 1 + Σ_i Π_{j≤i} a_j: see
:func:`specviz.model.spec.expected_tokens_chain`. Seed 002 ("a = 3.5 was not enough"): 15–30 % of
iterations accepted zero tokens; the zero-accept share drives p99 latency.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from specviz.errors import SpecvizError, shortened

from . import spec

__all__ = [
    "StepTimes",
    "requests_within",
    "LatencySummary",
    "parse_rates",
    "tokens_per_step",
    "latency",
    "is_number",
    "checked_whole",
    "PERCENTS",
    "MAX_GAMMA",
    "MAX_STEPS",
    "MAX_REQUESTS",
    "MAX_OUTPUT_TOKENS",
    "MAX_REQUEST_CELLS",
]

PERCENTS = (50, 90, 99)  # the percentiles reported, in whole percent
MAX_GAMMA = 64  # longest draft simulated; tokens per step then fit in int8
MAX_STEPS = 10_000_000  # steps drawn at once by tokens_per_step (≈ 160 MB of temporaries)
MAX_REQUESTS = 1_000_000
MAX_OUTPUT_TOKENS = 1_000_000
MAX_REQUEST_CELLS = 1_000_000_000  # requests × output_tokens: about half a minute of work
_CHUNK_CELLS = 1 << 22  # requests × output_tokens drawn per chunk: ≈ 100 MB of temporaries
_BINS = 1 << 12  # bins of the inverse-CDF table of _draw


# --------------------------------------------------------------------------------------------------
# Inputs


def is_number(value: Any) -> bool:
    """Whether ``value`` is a real number (an int or float of Python or numpy, not a bool)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def checked_whole(value: Any, key: str, low: int, high: int, **params: Any) -> int:
    """``value`` as an int in [low, high], or a SpecvizError ``key``. An int of any size is whole and
    finite as it is (numpy's isfinite refuses one past 64 bits with a TypeError)."""
    whole = isinstance(value, (int, np.integer)) or (is_number(value) and math.isfinite(value) and value == round(value))
    if not is_number(value) or not whole or not low <= value <= high:
        raise SpecvizError(key, value=shortened(value), **params)
    return int(value)


def _count(value: Any, name: str, high: int) -> int:
    return checked_whole(value, "simulate.bad_count", 1, high, name=name, max=high)


def _seed(seed: Any) -> int:
    return checked_whole(seed, "simulate.bad_seed", 0, 2**63 - 1, max=2**63 - 1)


@dataclass(frozen=True)
class StepTimes:
    """Wall times of one decode step, in seconds.

    Parameters
    ----------
    plain_s : float
        A plain decode step: one target pass over one position per sequence.
    spec_s : float
        A speculative step: γ draft passes and the verify pass over γ + 1 positions. The step model
        (:func:`specviz.model.step.step`) gives both as ``plain_s`` and ``spec_s``; at γ = 0 it gives
        ``spec_s == plain_s`` (no speculation).

    Raises
    ------
    SpecvizError
        ``simulate.bad_times`` unless both are positive and finite.
    """

    plain_s: float
    spec_s: float

    def __post_init__(self) -> None:
        ok = all(is_number(v) and np.isfinite(v) and v > 0 for v in (self.plain_s, self.spec_s))
        if not ok:
            raise SpecvizError("simulate.bad_times", plain=shortened(self.plain_s), spec=shortened(self.spec_s))
        object.__setattr__(self, "plain_s", float(self.plain_s))
        object.__setattr__(self, "spec_s", float(self.spec_s))

    @classmethod
    def from_step(cls, result: Mapping[str, ArrayLike]) -> StepTimes:
        """The times of one configuration of :func:`specviz.model.step.step`'s result.

        Parameters
        ----------
        result : mapping
            Holds ``plain_s`` and ``spec_s``, each a scalar or an array of one element.

        Raises
        ------
        SpecvizError
            ``simulate.bad_times`` if either holds more than one value or is not a positive time.
        """
        values = []
        for name in ("plain_s", "spec_s"):
            v = np.asarray(result.get(name, np.nan), dtype=float)
            values.append(float(v.reshape(-1)[0]) if v.size == 1 else float("nan"))
        return cls(values[0], values[1])


@dataclass(frozen=True)
class _Source:
    """How steps are drawn: a survival curve shared by every step, or one α per request."""

    gamma: int
    survival: np.ndarray  # S_1..S_γ, non-increasing
    expected: float  # E[K] where known in closed form, else NaN
    alpha: float | None = None  # the i.i.d. α, where given


def _check_alpha(alpha: Any) -> float:
    if not is_number(alpha) or not 0.0 <= float(alpha) <= 1.0:  # NaN fails the comparison
        raise SpecvizError("simulate.bad_alpha", value=shortened(alpha))
    return float(alpha)


def _check_gamma(gamma: Any) -> int:
    return checked_whole(gamma, "simulate.bad_gamma", 0, MAX_GAMMA, min=0, max=MAX_GAMMA)


def _check_shares(values: ArrayLike, key: str, most: int) -> np.ndarray:
    """A non-empty 1-D array of at most ``most`` numbers in [0, 1], or a SpecvizError ``key``."""
    try:
        shares = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise SpecvizError(key, value=shortened(values), max=most) from None
    if (shares.ndim != 1 or not 1 <= shares.size <= most or np.any(np.isnan(shares))
            or np.any((shares < 0) | (shares > 1))):
        raise SpecvizError(key, value=shortened(values), max=most)
    return shares


def _check_rates(rates: ArrayLike) -> np.ndarray:
    """Per-position acceptance rates: one for each of at most MAX_GAMMA positions."""
    return _check_shares(rates, "simulate.bad_rates", MAX_GAMMA)


def parse_rates(text: str) -> tuple[float, ...]:
    """Conditional per-position acceptance rates as a person types them (the Live page's
    "given the positions before it" bars): numbers from 0 to 1 with a decimal point, apart by
    commas, semicolons or spaces ("0.83, 0.84, 0.86").

    Raises
    ------
    SpecvizError
        ``simulate.bad_rates`` if a word is not such a number, or there are none or more than
        :data:`MAX_GAMMA`.
    """
    words = [word for word in re.split(r"[,;\s]+", text.strip()) if word]
    try:
        values = [float(word) for word in words]
    except ValueError:
        raise SpecvizError("simulate.bad_rates", value=shortened(text), max=MAX_GAMMA) from None
    if not values:
        raise SpecvizError("simulate.bad_rates", value=shortened(text), max=MAX_GAMMA)
    return tuple(float(rate) for rate in _check_rates(values))


def _source(alpha: Any, gamma: Any, rates: ArrayLike | None) -> _Source:
    """Validate the acceptance given as (α, γ) or as per-position rates."""
    if rates is not None:
        if alpha is not None:
            raise SpecvizError("simulate.one_source")
        r = _check_rates(rates)
        if gamma is not None and _check_gamma(gamma) != r.size:
            raise SpecvizError("simulate.rates_length", rates=int(r.size), gamma=_check_gamma(gamma))
        survival = np.cumprod(r)
        return _Source(r.size, survival, float(spec.expected_tokens_chain(r)))
    g = _check_gamma(gamma)
    if alpha is None:
        if g == 0:  # no speculation: nothing to accept
            return _Source(0, np.empty(0), 1.0)
        raise SpecvizError("simulate.one_source")
    a = _check_alpha(alpha)
    if g == 0:
        return _Source(0, np.empty(0), 1.0, a)
    survival = a ** np.arange(1, g + 1, dtype=float)
    return _Source(g, survival, float(spec.expected_tokens(a, g)), a)


def _check_request_alphas(alphas: ArrayLike) -> np.ndarray:
    """Measured per-request α: one for each of at most MAX_REQUESTS requests."""
    return _check_shares(alphas, "simulate.bad_request_alphas", MAX_REQUESTS)


# --------------------------------------------------------------------------------------------------
# Drawing steps


def _count_above(survival: np.ndarray, u: np.ndarray) -> np.ndarray:
    """#{i : S_i > u}: −S is non-decreasing and side="left" counts the −S_i < −u."""
    return np.searchsorted(-survival, -u, side="left")


def _draw(survival: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Tokens per step (int8) from uniforms by inverse CDF: K = 1 + #{i : u < S_i}.

    K(u) is a step function of u with at most γ steps. A table over ``_BINS`` equal bins of [0, 1)
    gives K wherever a bin holds no step (u·_BINS is exact, so the bin is exact); the few u in a bin
    that holds an S_i (at most γ/_BINS of them) are resolved by binary search. Exact, and about
    three times faster than a binary search for every u.
    """
    edges = 1 + _count_above(survival, np.arange(_BINS + 1) / _BINS).astype(np.int8)
    table, ambiguous = edges[:-1], edges[:-1] != edges[1:]
    bins = (u * _BINS).astype(np.intp)
    tokens = table[bins]
    exact = np.flatnonzero(ambiguous[bins])
    if exact.size:
        tokens.flat[exact] = 1 + _count_above(survival, u.flat[exact])
    return tokens


def _draw_alpha(alpha: np.ndarray, gamma: int, u: np.ndarray) -> np.ndarray:
    """Tokens per step with one α per row of ``u`` (i.i.d. positions): A = min(γ, ⌈ln u / ln α⌉ − 1)."""
    a = alpha[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.ceil(np.log(u) / np.log(a)) - 1.0
    accepted = np.where(a >= 1.0, gamma, np.where(a <= 0.0, 0.0, np.clip(x, 0.0, gamma)))
    return accepted.astype(np.int8) + np.int8(1)


def tokens_per_step(alpha: float | None = None, gamma: int | None = None, *, rates: ArrayLike | None = None,
                    steps: int, seed: int = 0) -> np.ndarray:
    """Draw the tokens emitted by independent speculative steps, bonus token included.

    .. math:: P(K \\ge i + 1) = S_i = \\prod_{j \\le i} a_j \\quad (i = 1..\\gamma),\\qquad
              E[K] = 1 + \\sum_{i=1}^{\\gamma} S_i

    With an i.i.d. α, a_j = α: the accepted count is the number of leading successes of γ
    Bernoulli(α) trials (a geometric count truncated at γ) and E[K] = E(α, γ).

    Parameters
    ----------
    alpha : float, optional
        Per-position acceptance α in [0, 1] (i.i.d. model). Give it with ``gamma``, or give ``rates``.
    gamma : int, optional
        Draft length γ, 0 to :data:`MAX_GAMMA`. γ = 0 means no speculation: every step emits one
        token, and ``alpha`` may be left out. With ``rates``, optional, and then it must equal
        their length.
    rates : array_like, optional
        Conditional per-position rates a₁..a_γ, each in [0, 1]: a_i = P(position i accepted |
        positions before accepted), as vLLM V1's per-position counters give them
        (accepted at i / accepted at i − 1).
    steps : int
        Steps to draw, 1 to :data:`MAX_STEPS`.
    seed : int
        Seed of :func:`numpy.random.default_rng`; the same seed gives the same steps.

    Returns
    -------
    ndarray of int64, shape (steps,)
        Tokens per step K, in 1..γ + 1. Special cases: α = 1 gives γ + 1 every step, α = 0 (or
        a₁ = 0, or γ = 0) gives 1. The share of 1s estimates the zero-accept share 1 − a₁.

    Raises
    ------
    SpecvizError
        ``simulate.bad_alpha``, ``simulate.bad_gamma``, ``simulate.bad_rates``,
        ``simulate.rates_length``, ``simulate.one_source`` (both or neither of α and rates),
        ``simulate.bad_count`` (steps), ``simulate.bad_seed``.

    Notes
    -----
    One uniform per step against the survival curve (inverse CDF, a table lookup), so memory and
    time are O(steps), not O(steps · γ): about 20–35 ms per million steps.

    References
    ----------
    Leviathan, Kalman, Matias (2023), arXiv:2211.17192, equation (1) for E(α, γ).

    Examples
    --------
    >>> tokens_per_step(1.0, 4, steps=3).tolist()
    [5, 5, 5]
    """
    source = _source(alpha, gamma, rates)
    n = _count(steps, "steps", MAX_STEPS)
    rng = np.random.default_rng(_seed(seed))
    return _draw(source.survival, rng.random(n)).astype(np.int64)


# --------------------------------------------------------------------------------------------------
# Statistics


def _percentiles(values: np.ndarray, weights: np.ndarray) -> tuple[float, ...]:
    """Inverted-CDF percentiles (Hyndman & Fan type 1) of a discrete distribution: for each p of
    :data:`PERCENTS` the smallest value whose cumulative weight reaches p %. ``values`` ascending,
    ``weights`` integer counts; the comparison is exact integer arithmetic."""
    cumulative = np.cumsum(weights.astype(np.int64))
    total = int(cumulative[-1])
    return tuple(float(values[np.searchsorted(cumulative * 100, p * total, side="left")]) for p in PERCENTS)


def _itl(counts: np.ndarray, spec_s: float) -> tuple[float, float, float, float]:
    """p50, p90, p99 and mean of the per-token gap: a step of k tokens gives spec_s, then k − 1 zeros."""
    k = np.arange(1, counts.size + 1)
    steps, tokens = int(counts.sum()), int((counts * k).sum())
    p = _percentiles(np.array([0.0, spec_s]), np.array([tokens - steps, steps]))
    return (*p, steps * spec_s / tokens)


def _tpot(counts: np.ndarray, spec_s: float) -> tuple[float, float, float, float]:
    """p50, p90, p99 and mean over steps of the step's time per output token, spec_s / k."""
    k = np.arange(counts.size, 0, -1)  # descending k: ascending spec_s / k
    p = _percentiles(spec_s / k, counts[::-1])
    return (*p, float((counts[::-1] * (spec_s / k)).sum() / counts.sum()))


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    array.setflags(write=False)
    return array


# Rows of LatencySummary.table(): (row id, attribute with speculation, value without speculation).
_ROWS: tuple[tuple[str, str, str], ...] = (
    ("itl_p50", "itl_p50_s", "plain_s"),
    ("itl_p90", "itl_p90_s", "plain_s"),
    ("itl_p99", "itl_p99_s", "plain_s"),
    ("itl_mean", "itl_mean_s", "plain_s"),
    ("request_p50", "request_p50_s", "request_plain_s"),
    ("request_p90", "request_p90_s", "request_plain_s"),
    ("request_p99", "request_p99_s", "request_plain_s"),
    ("request_mean", "request_mean_s", "request_plain_s"),
)
_STEP_ROWS: tuple[tuple[str, str, str], ...] = (
    ("tpot_p50", "tpot_p50_s", "plain_s"),
    ("tpot_p90", "tpot_p90_s", "plain_s"),
    ("tpot_p99", "tpot_p99_s", "plain_s"),
    ("tpot_mean", "tpot_mean_s", "plain_s"),
)


@dataclass(frozen=True, eq=False)
class LatencySummary:
    """What :func:`latency` simulated, with and without speculation. Times in seconds.

    Without speculation every gap and every step's time per token is ``plain_s`` and a request
    takes ``request_plain_s`` = output_tokens × plain_s, so those are not repeated per statistic.

    Attributes
    ----------
    gamma : int
        Draft length γ.
    times : StepTimes
        The step times used.
    output_tokens, requests : int
        Tokens decoded per request, requests simulated.
    steps : int
        Steps behind the step statistics.
    counts : ndarray of int64, shape (γ + 1,)
        Steps that emitted 1, 2, …, γ + 1 tokens (engine's view: a request's last step counts all
        the tokens it produced).
    mean_tokens, mean_tokens_se : float
        Mean tokens per step and its standard error, sd / √steps.
    expected_tokens : float
        E in closed form (E(α, γ), or the chain form for rates); NaN for measured tokens or an α
        spread.
    zero_accept_share : float
        Share of steps that emitted one token (no draft accepted).
    itl_p50_s, itl_p90_s, itl_p99_s, itl_mean_s : float
        Per-token inter-token gap as a streaming client sees it (the headline; see :func:`latency`).
    tpot_p50_s, tpot_p90_s, tpot_p99_s, tpot_mean_s : float
        Per-step time per output token, spec_s / k, over steps.
    request_s : ndarray of float, shape (requests,)
        Decode latency of each simulated request.
    request_p50_s, request_p90_s, request_p99_s, request_mean_s : float
        Its percentiles (inverted CDF) and mean.
    """

    gamma: int
    times: StepTimes
    output_tokens: int
    requests: int
    steps: int
    counts: np.ndarray
    mean_tokens: float
    mean_tokens_se: float
    expected_tokens: float
    zero_accept_share: float
    itl_p50_s: float
    itl_p90_s: float
    itl_p99_s: float
    itl_mean_s: float
    tpot_p50_s: float
    tpot_p90_s: float
    tpot_p99_s: float
    tpot_mean_s: float
    request_s: np.ndarray = field(repr=False)
    request_p50_s: float
    request_p90_s: float
    request_p99_s: float
    request_mean_s: float

    @property
    def plain_s(self) -> float:
        """Every gap and every step's time per token without speculation."""
        return self.times.plain_s

    @property
    def request_plain_s(self) -> float:
        """A request's decode latency without speculation: output_tokens × plain_s."""
        return self.output_tokens * self.times.plain_s

    def table(self, *, per_step: bool = False) -> pd.DataFrame:
        """A small table for a page: rows of statistics, columns without / with speculation, ratio.

        Parameters
        ----------
        per_step : bool
            Also give the per-step time per output token (``tpot_*`` rows).

        Returns
        -------
        DataFrame
            Index: row ids ``itl_p50``, ``itl_p90``, ``itl_p99``, ``itl_mean``, ``request_p50``,
            ``request_p90``, ``request_p99``, ``request_mean`` (then ``tpot_*``); columns
            ``plain_s``, ``spec_s`` (seconds) and ``ratio`` (spec / plain, below 1 is faster).
            Ids, not words: a page labels the rows with the message keys ``simulate.table.<id>``.
        """
        rows = _ROWS + (_STEP_ROWS if per_step else ())
        plain = [float(getattr(self, attr)) for _, _, attr in rows]
        spec_ = [float(getattr(self, attr)) for _, attr, _ in rows]
        frame = pd.DataFrame({"plain_s": plain, "spec_s": spec_}, index=[row for row, _, _ in rows])
        frame["ratio"] = frame["spec_s"] / frame["plain_s"]
        return frame


# --------------------------------------------------------------------------------------------------
# Requests


def _requests(draw: Callable[[np.random.Generator, slice, int], np.ndarray], n: int, requests: int,
              rng: np.random.Generator, gamma: int, tally: bool
              ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Steps each request needs for ``n`` tokens, in chunks of at most ``_CHUNK_CELLS`` cells.

    Each chunk is a (rows × n) block of tokens per step (n columns: the worst case of one token per
    step); a request ends at the first step where its cumulative tokens reach n. With ``tally``,
    also the counts of tokens per step over the steps the requests used: untruncated (the engine's
    view) and with each last step cut at n (the client's view).
    """
    rows_per_chunk = max(1, _CHUNK_CELLS // n)
    needed = np.empty(requests, dtype=np.int64)
    engine = np.zeros(gamma + 2, dtype=np.int64) if tally else None
    client = np.zeros(gamma + 2, dtype=np.int64) if tally else None
    for start in range(0, requests, rows_per_chunk):
        rows = slice(start, min(start + rows_per_chunk, requests))
        tokens = draw(rng, rows, n)
        cumulative = np.cumsum(tokens, axis=1, dtype=np.int32)
        steps = (cumulative >= n).argmax(axis=1) + 1  # the last column always reaches n
        needed[rows] = steps
        if tally:
            used = np.arange(n)[None, :] < steps[:, None]
            counted = np.bincount(tokens[used], minlength=gamma + 2)
            r = np.arange(steps.size)
            last = tokens[r, steps - 1]
            before = np.where(steps > 1, cumulative[r, np.maximum(steps - 2, 0)], 0)
            engine += counted
            client += counted - np.bincount(last, minlength=gamma + 2) + np.bincount(n - before, minlength=gamma + 2)
    if tally:
        return needed, engine[1:], client[1:]
    return needed, None, None


def _summary_counts(counts: np.ndarray) -> tuple[int, float, float, float]:
    """Steps, mean tokens per step, its standard error and the zero-accept share, from counts."""
    k = np.arange(1, counts.size + 1, dtype=float)
    steps = int(counts.sum())
    mean = float((counts * k).sum() / steps)
    var = float((counts * (k - mean) ** 2).sum() / (steps - 1)) if steps > 1 else 0.0
    return steps, mean, float(np.sqrt(var / steps)), float(counts[0] / steps)


def requests_within(cells: int, output_tokens: int, runs: int = 1, most: int = 2_000) -> int:
    """The requests each of ``runs`` simulations of ``output_tokens``-token requests takes within a
    budget of ``cells`` (a request's tokens are its cells, :func:`latency`): at least 1, at most
    ``most`` (2,000 by default: the pages' simulations, a p99 that moves by about 1 % between seeds).
    A page's visitor sets the tokens per request (up to 131,072): 2,000 such requests, with a sweep
    beside them, were 1.8e9 cells, about 40 s of CPU, for each visitor who asked."""
    return max(1, min(most, cells // (runs * output_tokens)))


def latency(alpha: float | None = None, gamma: int | None = None, *, rates: ArrayLike | None = None,
            times: StepTimes, output_tokens: int, requests: int = 10_000, steps: int = 1_000_000,
            request_alphas: ArrayLike | None = None, seed: int = 0) -> LatencySummary:
    """Simulate inter-token and request latency with and without speculation.

    The acceptance is given one way: ``alpha`` with ``gamma`` (i.i.d. positions), ``rates``
    (conditional per-position rates, the chain form) or ``request_alphas`` (a measured mix of
    requests).

    **Steps.** ``steps`` independent steps (:func:`tokens_per_step` with the same seed) give the
    distribution of tokens per step K, its mean (→ E(α, γ), or E = 1 + Σ_i Π_{j≤i} a_j for rates)
    and the zero-accept share P(K = 1) (→ 1 − α, or 1 − a₁): a steady stream, no request ends.

    **Inter-token latency (the headline): per-token gaps.** A streaming client timestamps tokens.
    A step that emits k tokens delivers them together after spec_s, so the client sees one gap of
    spec_s followed by k − 1 gaps of 0. Over tokens, a share 1/E[K] of the gaps is spec_s, so

    .. math:: \\overline{ITL} = \\frac{t_{spec}}{E[K]},\\qquad
              ITL_{p} = t_{spec} \\text{ if } 1/E[K] > 1 - p \\text{ else } 0

    The mean is the throughput figure (below plain_s whenever speculation pays), while the p99 gap
    is the whole spec_s, above plain_s, for any E[K] < 100: the mean looks fine and the tail is
    worse than without speculation. This is what a client's per-token (or vLLM bench's per-chunk)
    ITL shows, hence the headline. With E[K] > 2 the p50 gap is 0 (most tokens arrive inside a
    chunk).

    **Per-step time per output token (``tpot_*``).** Each step's spec_s / k, over steps. Its mean
    is spec_s · E[1/K] ≥ spec_s / E[K] (Jensen), and its p-th percentile is the whole spec_s
    exactly when the zero-accept share exceeds 1 − p: this is the figure that seed 002's
    zero-accept share drives. With ≥ 1 % zero-accept steps (seed 002 saw 15–30 %) the p99 is spec_s,
    a step that paid for γ drafts and a verify pass to yield one token.

    **Requests.** Each of ``requests`` requests decodes ``output_tokens`` tokens (prefill and its
    first token excluded): it takes N steps, the first N at which its cumulative tokens reach
    output_tokens (the last step may overshoot; tokens past output_tokens are not counted), and
    N × spec_s seconds; without speculation output_tokens × plain_s. Percentiles are inverted-CDF
    (values that occur) over requests.

    Without speculation every gap and every step's time per token is plain_s.

    Parameters
    ----------
    alpha, gamma, rates
        As in :func:`tokens_per_step`.
    times : StepTimes
        Seconds of a plain and of a speculative step.
    output_tokens : int
        Tokens each request decodes, 1 to :data:`MAX_OUTPUT_TOKENS`.
    requests : int
        Requests simulated, 1 to :data:`MAX_REQUESTS`; requests × output_tokens at most
        :data:`MAX_REQUEST_CELLS`.
    steps : int
        Steps drawn for the step statistics, 1 to :data:`MAX_STEPS` (unused with
        ``request_alphas``, but still checked).
    request_alphas : array_like of float, optional
        A measured mix instead of a modelled spread: the α of each measured request (from its own
        acceptance length, :func:`specviz.model.spec.alpha_from_acceptance_length`), each in
        [0, 1]. Each simulated request draws one of them, with replacement, so the mix's tail
        (the requests that accept little) reaches the request latencies as measured. Needs
        ``gamma``, and no other acceptance (``alpha``, ``rates``). The step and ITL statistics then
        come from the simulated requests' own steps (a request that accepts little takes more steps
        and weighs more, as on a server; for the ITL each request's last step counts only the
        tokens up to output_tokens) and ``expected_tokens`` is NaN.
    seed : int
        The same seed gives the same summary. The step stream uses ``default_rng(seed)``, the
        requests ``default_rng([seed, 1])``.

    Returns
    -------
    LatencySummary
        See its attributes; :meth:`LatencySummary.table` gives the page's table.

    Raises
    ------
    SpecvizError
        As :func:`tokens_per_step`, and ``simulate.bad_times``, ``simulate.bad_count``
        (output_tokens, requests, steps), ``simulate.too_large``, ``simulate.one_source``,
        ``simulate.bad_request_alphas``.

    Notes
    -----
    Requests are drawn in chunks of (rows × output_tokens) cells, output_tokens columns being the
    worst case of one token per step, with rows chosen so a chunk holds at most 2²² cells
    (about 100 MB of temporaries, whatever requests × output_tokens). Time is
    O(requests × output_tokens): about 0.15 s for 10,000 requests of 500 tokens.

    References
    ----------
    Leviathan et al. (2023), arXiv:2211.17192 (E(α, γ)); seed 002 (15–30 % zero-accept steps,
    "the zero-accept rate drives p99 latency").
    """
    if not isinstance(times, StepTimes):
        raise SpecvizError("simulate.bad_times", plain=shortened(times), spec=shortened(times))
    n = _count(output_tokens, "output_tokens", MAX_OUTPUT_TOKENS)
    n_requests = _count(requests, "requests", MAX_REQUESTS)
    if n * n_requests > MAX_REQUEST_CELLS:
        raise SpecvizError("simulate.too_large", cells=n * n_requests, max=MAX_REQUEST_CELLS)
    n_steps = _count(steps, "steps", MAX_STEPS)
    base = _seed(seed)

    request_rng = np.random.default_rng([base, 1])
    if request_alphas is not None:
        if alpha is not None or rates is not None:
            raise SpecvizError("simulate.one_source")
        mix = _check_request_alphas(request_alphas)
        source = _source(float(mix.mean()), gamma, None)
        per_request = request_rng.choice(mix, size=n_requests)
        draw = lambda rng, rows, cols: _draw_alpha(per_request[rows], source.gamma,
                                                   rng.random((rows.stop - rows.start, cols)))
        needed, engine, client = _requests(draw, n, n_requests, request_rng, source.gamma, tally=True)
        assert engine is not None and client is not None
        counts, gaps = engine, client
        expected = float("nan")
    else:
        source = _source(alpha, gamma, rates)
        survival = source.survival
        draw = lambda rng, rows, cols: _draw(survival, rng.random((rows.stop - rows.start, cols)))
        needed, _, _ = _requests(draw, n, n_requests, request_rng, source.gamma, tally=False)
        stream = _draw(survival, np.random.default_rng(base).random(n_steps))
        counts = gaps = np.bincount(stream, minlength=source.gamma + 2)[1:]
        expected = source.expected
    g = source.gamma

    total_steps, mean, se, zero = _summary_counts(counts)
    spec_s = times.spec_s
    itl = _itl(gaps, spec_s)
    tpot = _tpot(gaps, spec_s)
    per_steps = np.bincount(needed)
    request = _percentiles(np.arange(per_steps.size) * spec_s, per_steps)
    return LatencySummary(
        gamma=g, times=times, output_tokens=n, requests=n_requests, steps=total_steps,
        counts=_frozen(counts.astype(np.int64)), mean_tokens=mean, mean_tokens_se=se, expected_tokens=expected,
        zero_accept_share=zero,
        itl_p50_s=itl[0], itl_p90_s=itl[1], itl_p99_s=itl[2], itl_mean_s=itl[3],
        tpot_p50_s=tpot[0], tpot_p90_s=tpot[1], tpot_p99_s=tpot[2], tpot_mean_s=tpot[3],
        request_s=_frozen(needed * spec_s),
        request_p50_s=request[0], request_p90_s=request[1], request_p99_s=request[2],
        request_mean_s=float(needed.mean() * spec_s),
    )
