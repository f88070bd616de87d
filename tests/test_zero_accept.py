"""Tests for specviz.model.zero_accept: seed 002's chain of a mean length and a zero-accept share, the
shares a mean allows, and the sweep in which the tail moves while the mean stays put."""

import math

import numpy as np
import pytest
from conftest import refused_with
from hypothesis import given, settings, strategies as st

from specviz.model import spec, zero_accept
from specviz.model.simulate import StepTimes

TIMES = StepTimes(plain_s=0.020, spec_s=0.030)  # a speculative step costs 1.5 plain steps


class TestChainRates:
    @pytest.mark.parametrize("length, share, gamma", [(3.5, 0.15, 5), (3.0, 0.3, 5), (2.11, 0.2, 4), (3.5, 0.3, 4)])
    def test_holds_length_and_share(self, length, share, gamma):
        rates = zero_accept.chain_rates(length, share, gamma)
        assert rates.shape == (gamma,) and rates[0] == pytest.approx(1 - share)
        assert spec.expected_tokens_chain(rates) == pytest.approx(length, abs=1e-12)

    def test_edges(self):
        assert zero_accept.chain_rates(1.0, 1.0, 4).tolist() == [0.0] * 4
        assert zero_accept.chain_rates(1.7, 0.3, 1).tolist() == [pytest.approx(0.7)]
        assert zero_accept.chain_rates(5.0, 0.0, 4).tolist() == [1.0] * 4
        assert zero_accept.chain_rates(1.8, 0.2, 4)[1:].tolist() == [0.0] * 3

    @pytest.mark.parametrize("length, share, gamma", [(3.5, 0.3, 3), (1.5, 0.3, 4), (2.0, 0.3, 1),
                                                      (float("nan"), 0.2, 4), ("3", 0.2, 4)])
    def test_refuses_infeasible(self, length, share, gamma):
        refused_with(lambda: zero_accept.chain_rates(length, share, gamma), "simulate.infeasible")

    def test_refuses_bad_share_and_gamma(self):
        refused_with(lambda: zero_accept.chain_rates(3.0, 1.2, 4), "simulate.bad_zero_share")
        refused_with(lambda: zero_accept.chain_rates(3.0, float("nan"), 4), "simulate.bad_zero_share")
        refused_with(lambda: zero_accept.chain_rates(3.0, 0.2, 0), "simulate.bad_gamma")

    @settings(max_examples=80, deadline=None)
    @given(st.integers(1, 16), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
    def test_any_feasible_pair(self, gamma, share, where):
        low, high = 2 - share, 1 + (1 - share) * gamma
        length = low + where * (high - low)
        rates = zero_accept.chain_rates(length, share, gamma)
        assert np.all((rates >= 0) & (rates <= 1))
        assert spec.expected_tokens_chain(rates) == pytest.approx(length, abs=1e-9)


class TestZeroShareRange:
    @pytest.mark.parametrize("length, gamma, low, high", [(3.3616, 4, 0.0, 0.4096), (1.5, 4, 0.5, 0.875),
                                                         (5.0, 4, 0.0, 0.0), (1.0, 4, 1.0, 1.0)])
    def test_hand_computed_bounds(self, length, gamma, low, high):
        assert zero_accept.zero_share_range(length, gamma) == pytest.approx((low, high))

    def test_chain_rates_exist_exactly_inside(self):
        low, high = zero_accept.zero_share_range(2.5, 5)
        for z in (low, (low + high) / 2, high):
            assert 1 - zero_accept.chain_rates(2.5, z, 5)[0] == pytest.approx(z)
        refused_with(lambda: zero_accept.chain_rates(2.5, high + 0.01, 5), "simulate.infeasible")

    def test_no_range_for_an_impossible_length(self):
        assert all(math.isnan(v) for v in zero_accept.zero_share_range(6.0, 4))
        assert all(math.isnan(v) for v in zero_accept.zero_share_range(1.0, 0))  # no draft: no range (was 1/0)


class TestZeroAcceptSweep:
    def test_seed_002_shares_move_the_tail_not_the_mean(self):
        # Seed 002: 15–30 % zero-accept steps; code's acceptance length 3.00. γ = 5.
        table = zero_accept.zero_accept_sweep([0.15, 0.2, 0.3], 3.0, 5, TIMES, output_tokens=300, requests=4000,
                                           steps=200_000)
        assert np.allclose(table["zero_accept_share"], [0.15, 0.2, 0.3], atol=0.005)
        assert np.allclose(table["mean_tokens"], 3.0, rtol=0.005)
        assert np.allclose(table["itl_mean_s"], TIMES.spec_s / 3.0, rtol=0.005)
        assert np.all(table["tpot_p99_s"] == TIMES.spec_s) and np.all(table["tpot_p90_s"] == TIMES.spec_s)
        assert np.all(table["itl_p99_s"] == TIMES.spec_s)
        assert np.all(np.diff(table["tpot_mean_s"]) > 0)
        p99 = table["request_p99_s"]
        assert np.all(np.diff(p99) >= 0) and p99.iloc[-1] > p99.iloc[0]
        assert np.allclose(table["request_mean_s"], table["request_mean_s"].iloc[0], rtol=0.01)

    def test_the_step_p99_jumps_once_one_percent_of_steps_accept_nothing(self):
        table = zero_accept.zero_accept_sweep([0.0, 0.05], 3.0, 5, TIMES, output_tokens=50, requests=100,
                                           steps=100_000)
        assert table["tpot_p99_s"].iloc[0] < TIMES.plain_s < table["tpot_p99_s"].iloc[1] == TIMES.spec_s

    def test_one_row_per_share_in_the_documented_columns(self):
        table = zero_accept.zero_accept_sweep([0.2], 3.0, 5, TIMES, output_tokens=10, requests=10, steps=100)
        assert list(table.columns) == ["zero_share", "zero_accept_share", "mean_tokens", "itl_mean_s", "itl_p99_s",
                                       "tpot_p50_s", "tpot_p90_s", "tpot_p99_s", "tpot_mean_s", "request_p50_s",
                                       "request_p99_s", "request_mean_s"] and len(table) == 1

    @pytest.mark.parametrize("shares", [[], [[0.1]], "abc", [0.1] * 101])
    def test_refuses_bad_share_lists(self, shares):
        refused_with(lambda: zero_accept.zero_accept_sweep(shares, 3.0, 5, TIMES), "simulate.bad_zero_share")

    def test_refuses_an_infeasible_share(self):
        refused_with(lambda: zero_accept.zero_accept_sweep([0.9], 3.0, 5, TIMES), "simulate.infeasible")
