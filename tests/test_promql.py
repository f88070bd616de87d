"""Tests for specviz.live.promql: counter increases and histogram quantiles as Prometheus computes them."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from specviz.live import promql


class TestCounterIncrease:
    def test_growth_and_reset(self):
        increase, reset = promql.counter_increase([10, 10, 10], [15, 10, 4])
        assert increase.tolist() == [5, 0, 4] and reset.tolist() == [False, False, True]

    @given(st.lists(st.tuples(st.floats(0, 1e15), st.floats(0, 1e15)), min_size=1, max_size=20))
    def test_never_negative_never_above_current(self, pairs):
        previous, current = np.array(pairs).T
        increase, _ = promql.counter_increase(previous, current)
        assert np.all(increase >= 0) and np.all(increase <= current)


class TestHistogramQuantile:
    def test_interpolates_inside_the_bucket(self):
        assert promql.histogram_quantile(0.5, [0.1, 0.2, math.inf], [20, 60, 100]) == pytest.approx(0.175)

    def test_first_bucket_starts_at_zero(self):
        assert promql.histogram_quantile(0.25, [0.1, 0.2, math.inf], [50, 60, 100]) == pytest.approx(0.05)

    def test_rank_in_inf_bucket_gives_highest_finite_bound(self):
        assert promql.histogram_quantile(0.99, [0.1, 0.2, math.inf], [20, 60, 100]) == 0.2

    def test_unsorted_and_dipping_counts_as_prometheus_fixes_them(self):
        assert promql.histogram_quantile(0.5, [math.inf, 0.2, 0.1], [100, 58, 60]) == \
            promql.histogram_quantile(0.5, [0.1, 0.2, math.inf], [60, 60, 100])

    @pytest.mark.parametrize("q, bounds, counts", [
        (0.5, [0.1, 0.2], [1, 2]), (0.5, [math.inf], [3]), (0.5, [0.1, math.inf], [0, 0]),
        (1.5, [0.1, math.inf], [1, 2]), (float("nan"), [0.1, math.inf], [1, 2])])
    def test_none_where_prometheus_gives_nan(self, q, bounds, counts):
        assert promql.histogram_quantile(q, bounds, counts) is None

    @given(st.lists(st.floats(0, 1e6), min_size=1, max_size=10), st.floats(0, 1))
    def test_within_the_finite_bounds(self, increments, q):
        bounds = sorted({round(0.01 * (i + 1), 6) for i in range(len(increments))}) + [math.inf]
        counts = np.cumsum(increments + [1.0])
        value = promql.histogram_quantile(q, bounds, counts)
        assert value is not None and 0 <= value <= bounds[-2]
