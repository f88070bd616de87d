"""Prometheus's own arithmetic on counters and histograms, as its query functions compute it, for
figures specviz derives from scrapes without a Prometheus server: a counter's increase across a
restart (``increase()``) and a histogram's quantile (``histogram_quantile()``). Pure numpy.

References
----------
Prometheus ``increase()`` and counter resets: https://prometheus.io/docs/prometheus/latest/querying/functions/#increase.
Prometheus ``histogram_quantile()``: ``promql/quantile.go``, ``BucketQuantile``.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

__all__ = ["counter_increase", "histogram_quantile"]


def counter_increase(previous: np.ndarray, current: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How much counters grew between two readings, treating a decrease as a restart.

    .. math:: \\Delta = \\begin{cases} c_1 - c_0 & c_1 \\ge c_0 \\\\ c_1 & c_1 < c_0 \\end{cases}

    A counter only goes down when its process restarts and counts again from zero, so after a drop
    the whole current value is the increase since the restart, as Prometheus's ``increase()`` and
    ``rate()`` count it. Never negative, and never more than the current value.

    Parameters
    ----------
    previous, current : array_like
        Readings of the same series (non-negative).

    Returns
    -------
    increase : ndarray
        Δ per series.
    reset : ndarray of bool
        Which series went down.

    References
    ----------
    Prometheus, "Functions: increase()" (breaks in monotonicity such as counter resets due to
    target restarts are automatically adjusted for).
    """
    c0 = np.asarray(previous, dtype=float)
    c1 = np.asarray(current, dtype=float)
    reset = c1 < c0
    return np.where(reset, c1, c1 - c0), reset


def histogram_quantile(q: float, upper_bounds: Iterable[float], counts: Iterable[float]) -> float | None:
    """The q-quantile of a Prometheus histogram, interpolated linearly inside its bucket.

    Parameters
    ----------
    q : float
        The quantile, 0 ≤ q ≤ 1.
    upper_bounds : iterable of float
        The buckets' ``le`` bounds; one must be +Inf.
    counts : iterable of float
        Cumulative counts of the same buckets.

    Returns
    -------
    float or None
        As Prometheus computes it: the rank q·N (N the +Inf bucket's count) falls in bucket b; the
        result is lower(b) + (upper(b) − lower(b)) · (rank − count(b−1)) / (count(b) − count(b−1)),
        with lower = 0 for the first bucket (if its bound is positive), and the highest finite
        bound if the rank falls in the +Inf bucket. Counts that dip are raised to the running
        maximum first (Prometheus's ``ensureMonotonic``); rank 0 on an empty first bucket gives
        that bucket's lower bound. ``None`` where Prometheus returns NaN:
        no +Inf bucket, fewer than two buckets, no observations, or q outside [0, 1] or NaN.

    References
    ----------
    Prometheus ``promql/quantile.go``, ``BucketQuantile``; "Functions: histogram_quantile()".
    """
    bounds = np.asarray(list(upper_bounds), dtype=float)
    cum = np.asarray(list(counts), dtype=float)
    if math.isnan(q) or not 0.0 <= q <= 1.0 or bounds.size < 2 or bounds.size != cum.size:
        return None
    order = np.argsort(bounds, kind="stable")
    bounds, cum = bounds[order], np.maximum.accumulate(cum[order])
    if bounds[-1] != math.inf or cum[-1] <= 0 or np.isnan(cum).any():
        return None
    rank = q * cum[-1]
    b = int(np.searchsorted(cum, rank, side="left"))
    if b == bounds.size - 1:
        return float(bounds[-2])
    if b == 0 and bounds[0] <= 0:
        return float(bounds[0])
    start = 0.0 if b == 0 else bounds[b - 1]
    below = 0.0 if b == 0 else cum[b - 1]
    in_bucket = cum[b] - below
    if in_bucket <= 0:  # rank 0 on an empty first bucket, where the formula would be 0/0
        return float(start)
    return float(start + (bounds[b] - start) * ((rank - below) / in_bucket))
