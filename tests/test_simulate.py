"""Tests for specviz.model.simulate: convergence to the closed forms, hand-computed cases, seed 002's
effect (the p99 is a whole speculative step while the mean looks fine), invariants, refusals."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from specviz import i18n
from specviz.errors import SpecvizError
from specviz.model import simulate, spec
from specviz.model.simulate import StepTimes

TIMES = StepTimes(plain_s=0.020, spec_s=0.030)  # a speculative step costs 1.5 plain steps
def refused(call, key: str) -> SpecvizError:
    with pytest.raises(SpecvizError) as info:
        call()
    assert info.value.key == key, (info.value.key, info.value.params)
    assert str(info.value)  # renders from the catalogue
    return info.value


def exact_pmf(survival: np.ndarray) -> np.ndarray:
    """P(K = k), k = 1..γ + 1, from S_1..S_γ."""
    s = np.concatenate([[1.0], survival, [0.0]])
    return s[:-1] - s[1:]


def standard_error(pmf: np.ndarray, n: int) -> float:
    k = np.arange(1, pmf.size + 1)
    mean = (k * pmf).sum()
    return math.sqrt(((k - mean) ** 2 * pmf).sum() / n)


class TestStepTimes:
    def test_keeps_floats(self):
        times = StepTimes(1, 0.5)
        assert (times.plain_s, times.spec_s) == (1.0, 0.5)
        assert isinstance(times.plain_s, float)

    def test_frozen(self):
        with pytest.raises(AttributeError):
            TIMES.spec_s = 1.0

    @pytest.mark.parametrize("plain, spec_s", [(0, 1), (1, -1), (float("nan"), 1), (1, float("inf")),
                                                ("1", 1), (True, 1), (None, 1)])
    def test_refuses_bad_times(self, plain, spec_s):
        refused(lambda: StepTimes(plain, spec_s), "simulate.bad_times")

    def test_from_step_result(self):
        result = {"plain_s": np.array(0.02), "spec_s": np.array([0.03]), "speedup": np.array(2.0)}
        assert StepTimes.from_step(result) == StepTimes(0.02, 0.03)

    def test_from_step_refuses_a_grid(self):
        refused(lambda: StepTimes.from_step({"plain_s": np.ones(2), "spec_s": np.ones(2)}), "simulate.bad_times")
        refused(lambda: StepTimes.from_step({"plain_s": 0.02}), "simulate.bad_times")


class TestParseRates:
    @pytest.mark.parametrize(("text", "rates"), [
        ("0.83, 0.84, 0.86", (0.83, 0.84, 0.86)), ("0.9;0.8 0.7", (0.9, 0.8, 0.7)), (" 1 ", (1.0,)),
        ("0.5,\n0.25", (0.5, 0.25))])
    def test_numbers_apart_by_commas_semicolons_or_spaces(self, text, rates):
        assert simulate.parse_rates(text) == rates

    @pytest.mark.parametrize("text", ["", " , ", "0.8, x", "0,8", "1.2", "-0.1", "nan", "0.5 " * 65])
    def test_anything_else_is_refused(self, text):
        with pytest.raises(SpecvizError) as raised:
            simulate.parse_rates(text)
        assert raised.value.key == "simulate.bad_rates"

    def test_the_rates_give_the_chain_s_tokens_per_step(self):
        rates = simulate.parse_rates("0.83 0.84 0.86")
        assert spec.expected_tokens_chain(rates) == pytest.approx(1 + 0.83 + 0.83 * 0.84 + 0.83 * 0.84 * 0.86)


class TestTokensPerStep:
    @pytest.mark.parametrize("alpha, gamma", [(0.8, 4), (0.5, 2), (0.3, 8), (0.95, 16), (0.6, 1), (0.999, 5)])
    def test_mean_converges_to_expected_tokens(self, alpha, gamma):
        n = 400_000
        tokens = simulate.tokens_per_step(alpha, gamma, steps=n, seed=1)
        se = standard_error(exact_pmf(alpha ** np.arange(1, gamma + 1)), n)
        assert abs(tokens.mean() - spec.expected_tokens(alpha, gamma)) < 4 * se

    @pytest.mark.parametrize("alpha, gamma", [(0.8, 4), (0.4, 8)])
    def test_distribution_is_the_truncated_geometric(self, alpha, gamma):
        n = 400_000
        tokens = simulate.tokens_per_step(alpha, gamma, steps=n, seed=2)
        share = np.bincount(tokens, minlength=gamma + 2)[1:] / n
        pmf = exact_pmf(alpha ** np.arange(1, gamma + 1))  # α^a (1 − α) for a < γ, α^γ at γ
        assert pmf[0] == pytest.approx(1 - alpha) and pmf[-1] == pytest.approx(alpha ** gamma)
        assert np.all(np.abs(share - pmf) < 4 * np.sqrt(pmf * (1 - pmf) / n) + 1e-12)

    def test_zero_accept_share_is_one_minus_alpha(self):
        n = 400_000
        share = (simulate.tokens_per_step(0.7, 4, steps=n, seed=3) == 1).mean()
        assert abs(share - 0.3) < 4 * math.sqrt(0.3 * 0.7 / n)

    def test_alpha_one_always_emits_gamma_plus_one(self):
        assert np.all(simulate.tokens_per_step(1.0, 4, steps=10_000) == 5)
        assert np.all(simulate.tokens_per_step(1.0, 1, steps=100) == 2)

    def test_alpha_zero_always_emits_the_bonus_token(self):
        assert np.all(simulate.tokens_per_step(0.0, 7, steps=10_000) == 1)

    def test_gamma_zero_is_no_speculation(self):
        assert np.all(simulate.tokens_per_step(gamma=0, steps=1000) == 1)
        assert np.all(simulate.tokens_per_step(0.9, 0, steps=1000) == 1)

    @pytest.mark.parametrize("rates", [[0.9, 0.8, 0.6, 0.4], [0.5], [0.7, 0.95, 0.95, 0.95, 0.95, 0.95]])
    def test_rates_converge_to_the_chain_form(self, rates):
        n = 400_000
        tokens = simulate.tokens_per_step(rates=rates, steps=n, seed=4)
        se = standard_error(exact_pmf(np.cumprod(rates)), n)
        assert abs(tokens.mean() - spec.expected_tokens_chain(rates)) < 4 * se
        share = (tokens == 1).mean()
        assert abs(share - (1 - rates[0])) < 4 * math.sqrt(rates[0] * (1 - rates[0]) / n)

    def test_equal_rates_match_alpha(self):
        a = simulate.tokens_per_step(0.8, 4, steps=1000, seed=9)
        b = simulate.tokens_per_step(rates=[0.8] * 4, steps=1000, seed=9)
        assert np.array_equal(a, b)

    def test_a_zero_rate_stops_the_chain(self):
        tokens = simulate.tokens_per_step(rates=[1.0, 1.0, 0.0, 1.0], steps=10_000)
        assert np.all(tokens == 3)

    def test_gamma_with_rates_must_match(self):
        assert simulate.tokens_per_step(None, 2, rates=[0.5, 0.5], steps=10).max() <= 3

    def test_shape_and_dtype(self):
        tokens = simulate.tokens_per_step(0.5, 3, steps=17)
        assert tokens.shape == (17,) and tokens.dtype == np.int64

    def test_same_seed_same_steps_other_seed_other_steps(self):
        a = simulate.tokens_per_step(0.6, 4, steps=1000, seed=5)
        assert np.array_equal(a, simulate.tokens_per_step(0.6, 4, steps=1000, seed=5))
        assert not np.array_equal(a, simulate.tokens_per_step(0.6, 4, steps=1000, seed=6))

    @settings(max_examples=60, deadline=None)
    @given(st.floats(0.0, 1.0), st.integers(0, simulate.MAX_GAMMA), st.integers(1, 500), st.integers(0, 2**32))
    def test_tokens_lie_in_one_to_gamma_plus_one(self, alpha, gamma, steps, seed):
        tokens = simulate.tokens_per_step(alpha, gamma, steps=steps, seed=seed)
        assert tokens.min() >= 1 and tokens.max() <= gamma + 1

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=16), st.integers(0, 2**32))
    def test_rates_never_pass_a_rate_of_zero(self, rates, seed):
        tokens = simulate.tokens_per_step(rates=rates, steps=300, seed=seed)
        first_zero = next((i for i, r in enumerate(rates) if r == 0.0), len(rates))
        assert tokens.min() >= 1 and tokens.max() <= first_zero + 1

    @pytest.mark.parametrize("alpha", [-0.1, 1.01, float("nan"), float("inf"), "0.5", True, [0.5]])
    def test_refuses_bad_alpha(self, alpha):
        refused(lambda: simulate.tokens_per_step(alpha, 4, steps=10), "simulate.bad_alpha")

    @pytest.mark.parametrize("gamma", [-1, 2.5, float("nan"), None, simulate.MAX_GAMMA + 1, "4"])
    def test_refuses_bad_gamma(self, gamma):
        refused(lambda: simulate.tokens_per_step(0.5, gamma, steps=10), "simulate.bad_gamma")

    @pytest.mark.parametrize("rates", [[], [0.5, 1.2], [-0.1], [float("nan")], [[0.5, 0.5]], ["a"],
                                       [0.5] * (simulate.MAX_GAMMA + 1)])
    def test_refuses_bad_rates(self, rates):
        refused(lambda: simulate.tokens_per_step(rates=rates, steps=10), "simulate.bad_rates")

    @pytest.mark.parametrize("gamma", [1, 3])
    def test_refuses_rates_of_another_length(self, gamma):
        error = refused(lambda: simulate.tokens_per_step(gamma=gamma, rates=[0.5, 0.5], steps=10),
                        "simulate.rates_length")
        assert error.params == {"rates": 2, "gamma": gamma}
        assert str(error).startswith("2 per-position rates were given")

    def test_refuses_both_or_neither_source(self):
        refused(lambda: simulate.tokens_per_step(0.5, rates=[0.5], steps=10), "simulate.one_source")
        refused(lambda: simulate.tokens_per_step(gamma=4, steps=10), "simulate.one_source")

    @pytest.mark.parametrize("steps", [0, -5, 1.5, simulate.MAX_STEPS + 1, None])
    def test_refuses_bad_steps(self, steps):
        error = refused(lambda: simulate.tokens_per_step(0.5, 4, steps=steps), "simulate.bad_count")
        assert error.params["name"] == "steps"

    @pytest.mark.parametrize("seed", [-1, 0.5, "x", 2**63, 10**23, float("inf")])  # 10**23 was a TypeError
    def test_refuses_bad_seed(self, seed):
        refused(lambda: simulate.tokens_per_step(0.5, 4, steps=10, seed=seed), "simulate.bad_seed")


def run(alpha=0.8, gamma=4, **kw):
    kw.setdefault("times", TIMES)
    kw.setdefault("output_tokens", 200)
    kw.setdefault("requests", 2000)
    kw.setdefault("steps", 200_000)
    return simulate.latency(alpha, gamma, **kw)


class TestLatency:
    def test_alpha_one_request_needs_ceil_output_over_gamma_plus_one_steps(self):
        # γ = 4, α = 1: 5 tokens per step, 10 tokens in ceil(10 / 5) = 2 steps.
        result = run(1.0, 4, output_tokens=10, requests=50)
        assert np.all(result.request_s == 2 * TIMES.spec_s)
        assert result.request_p50_s == result.request_p99_s == result.request_mean_s == 2 * TIMES.spec_s
        assert result.counts.tolist() == [0, 0, 0, 0, result.steps]
        result = run(1.0, 4, output_tokens=11, requests=5)
        assert np.all(result.request_s == 3 * TIMES.spec_s)

    def test_gamma_one_alpha_half_two_tokens(self):
        # First step emits 2 tokens (p = 1/2): done in 1 step; else a second step: 2. Mean 1.5 steps.
        n = 40_000
        result = run(0.5, 1, output_tokens=2, requests=n)
        steps = result.request_s / TIMES.spec_s
        assert set(np.round(steps).tolist()) == {1.0, 2.0}
        assert abs(steps.mean() - 1.5) < 4 * 0.5 / math.sqrt(n)
        assert result.request_p90_s == result.request_p99_s == 2 * TIMES.spec_s
        assert result.expected_tokens == 1.5

    def test_alpha_zero_every_token_waits_a_whole_step(self):
        result = run(0.0, 4, output_tokens=7, requests=10, steps=1000)
        assert np.all(result.request_s == 7 * TIMES.spec_s)
        assert result.zero_accept_share == 1.0 and result.mean_tokens == 1.0
        assert result.itl_p50_s == result.itl_mean_s == result.tpot_mean_s == TIMES.spec_s

    def test_gamma_zero_with_equal_times_is_plain_decoding(self):
        times = StepTimes(0.02, 0.02)
        result = simulate.latency(gamma=0, times=times, output_tokens=50, requests=10, steps=100)
        table = result.table(per_step=True)
        assert np.allclose(table["spec_s"], table["plain_s"]) and np.allclose(table["ratio"], 1.0)
        assert result.counts.tolist() == [100] and result.expected_tokens == 1.0

    def test_without_speculation_every_gap_is_a_plain_step(self):
        result = run(output_tokens=500)
        assert result.plain_s == TIMES.plain_s
        assert result.request_plain_s == pytest.approx(500 * TIMES.plain_s)

    @pytest.mark.parametrize("alpha, gamma", [(0.8, 4), (0.6, 2), (0.9, 8)])
    def test_step_statistics_converge(self, alpha, gamma):
        result = run(alpha, gamma, steps=400_000, seed=7)
        assert abs(result.mean_tokens - spec.expected_tokens(alpha, gamma)) < 4 * result.mean_tokens_se
        assert result.expected_tokens == pytest.approx(spec.expected_tokens(alpha, gamma))
        assert abs(result.zero_accept_share - (1 - alpha)) < 4 * math.sqrt(alpha * (1 - alpha) / result.steps)
        assert result.counts.sum() == result.steps == 400_000 and result.counts.size == gamma + 1

    def test_step_stream_is_tokens_per_step(self):
        result = run(0.7, 3, steps=5000, seed=11)
        tokens = simulate.tokens_per_step(0.7, 3, steps=5000, seed=11)
        assert result.counts.tolist() == np.bincount(tokens, minlength=5)[1:].tolist()

    def test_rates(self):
        rates = [0.9, 0.7, 0.5]
        result = simulate.latency(rates=rates, times=TIMES, output_tokens=100, requests=500, steps=400_000)
        assert abs(result.mean_tokens - spec.expected_tokens_chain(rates)) < 4 * result.mean_tokens_se
        assert result.zero_accept_share == pytest.approx(0.1, abs=0.003)

    def test_itl_definitions(self):
        result = run(0.8, 4)
        k = np.arange(1, 6)
        tokens, steps = (result.counts * k).sum(), result.counts.sum()
        assert result.itl_mean_s == pytest.approx(steps * TIMES.spec_s / tokens)
        assert result.itl_mean_s == pytest.approx(TIMES.spec_s / result.mean_tokens)
        assert result.itl_p50_s == 0.0  # E > 2: most tokens arrive inside a chunk
        assert result.tpot_mean_s == pytest.approx((result.counts * TIMES.spec_s / k).sum() / steps)
        assert result.tpot_mean_s > result.itl_mean_s  # Jensen: E[1/K] ≥ 1/E[K]

    def test_seed_002_effect_p99_is_a_whole_step_while_the_mean_looks_fine(self):
        # α = 0.8: 20 % of steps accept nothing. The mean per token is spec_s / E, well below a
        # plain step; the p99 gap and the p99 step time per token are a whole speculative step.
        result = run(0.8, 4)
        assert result.zero_accept_share > 0.01
        assert result.itl_p99_s == result.tpot_p99_s == TIMES.spec_s > TIMES.plain_s
        assert result.itl_mean_s == pytest.approx(TIMES.spec_s / spec.expected_tokens(0.8, 4), rel=0.01)
        assert result.itl_mean_s < TIMES.plain_s
        table = result.table()
        assert table.loc["itl_p99", "ratio"] == pytest.approx(1.5) and table.loc["itl_mean", "ratio"] < 0.5

    def test_below_one_percent_zero_accept_the_step_p99_drops(self):
        result = simulate.latency(rates=[0.995, 0.9, 0.9, 0.9], times=TIMES, output_tokens=100, requests=200,
                                  steps=400_000)
        assert result.zero_accept_share < 0.01
        assert result.tpot_p99_s == TIMES.spec_s / 2  # the 2-token steps set it
        assert result.itl_p99_s == TIMES.spec_s  # the per-token gap's p99 is a chunk's wait regardless

    def test_a_measured_mix_widens_the_request_tail(self):
        narrow = run(0.8, 4, output_tokens=300, requests=4000)
        mix = np.random.default_rng(0).beta(4.0, 1.0, size=2000)  # requests' α, mean 0.8
        wide = run(None, 4, output_tokens=300, requests=4000, request_alphas=mix)
        assert wide.request_p99_s > 1.5 * narrow.request_p99_s
        assert math.isnan(wide.expected_tokens)
        # The client's view of the simulated requests: gaps add up to the request latencies.
        assert wide.itl_mean_s * 300 == pytest.approx(wide.request_mean_s)
        assert wide.counts.sum() == wide.steps == round(wide.request_s.sum() / TIMES.spec_s)

    def test_extreme_mixes_stay_valid(self):
        for mix in [[5e-324], [1 - 1e-16], [0.0, 1.0]]:
            result = run(None, 4, output_tokens=20, requests=200, request_alphas=mix)
            assert np.all((result.request_s >= 4 * TIMES.spec_s) & (result.request_s <= 20 * TIMES.spec_s))

    def test_a_mix_of_one_alpha_is_that_alpha(self):
        result = run(None, 4, output_tokens=300, requests=4000, request_alphas=[0.8] * 10)
        assert result.mean_tokens == pytest.approx(spec.expected_tokens(0.8, 4), rel=0.005)
        assert np.all(run(None, 4, output_tokens=10, requests=20, request_alphas=[1.0]).request_s == 2 * TIMES.spec_s)

    @pytest.mark.parametrize("mix", [None, [0.3, 0.7, 0.9]])
    def test_chunking_does_not_change_the_draw(self, monkeypatch, mix):
        alpha = None if mix else 0.7
        whole = run(alpha, 4, output_tokens=50, requests=300, request_alphas=mix)
        monkeypatch.setattr(simulate, "_CHUNK_CELLS", 120)  # 2 requests per chunk
        chunked = run(alpha, 4, output_tokens=50, requests=300, request_alphas=mix)
        assert np.array_equal(whole.request_s, chunked.request_s)
        assert np.array_equal(whole.counts, chunked.counts)

    def test_same_seed_same_summary_other_seed_other_summary(self):
        a, b, c = run(seed=3), run(seed=3), run(seed=4)
        assert np.array_equal(a.request_s, b.request_s) and np.array_equal(a.counts, b.counts)
        assert not np.array_equal(a.request_s, c.request_s) and not np.array_equal(a.counts, c.counts)

    def test_summary_is_frozen(self):
        result = run(requests=10, steps=100)
        with pytest.raises(AttributeError):
            result.mean_tokens = 1.0
        with pytest.raises(ValueError):
            result.request_s[0] = 0.0

    @settings(max_examples=40, deadline=None)
    @given(st.floats(0.0, 1.0), st.integers(0, 16), st.integers(1, 300), st.integers(1, 50),
           st.integers(0, 2**32), st.one_of(st.none(), st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20)))
    def test_invariants(self, alpha, gamma, output, requests, seed, mix):
        result = simulate.latency(None if mix else alpha, gamma, times=TIMES, output_tokens=output, requests=requests,
                                  steps=500, seed=seed, request_alphas=mix)
        floor = math.ceil(output / (gamma + 1)) * TIMES.spec_s
        assert np.all(result.request_s >= floor - 1e-12) and np.all(result.request_s <= output * TIMES.spec_s + 1e-12)
        assert result.request_p50_s <= result.request_p90_s <= result.request_p99_s
        assert result.itl_p50_s <= result.itl_p90_s <= result.itl_p99_s <= TIMES.spec_s
        assert result.tpot_p50_s <= result.tpot_p90_s <= result.tpot_p99_s <= TIMES.spec_s
        assert 1.0 <= result.mean_tokens <= gamma + 1 and 0.0 <= result.zero_accept_share <= 1.0
        assert result.request_s.shape == (requests,) and result.counts.size == gamma + 1

    @pytest.mark.parametrize("name, value", [("output_tokens", 0), ("requests", 0), ("output_tokens", 2.5),
                                             ("requests", -3), ("steps", 0),
                                             ("output_tokens", simulate.MAX_OUTPUT_TOKENS + 1)])
    def test_refuses_bad_counts(self, name, value):
        error = refused(lambda: run(**{name: value}), "simulate.bad_count")
        assert error.params["name"] == name

    def test_refuses_too_much_work(self):
        refused(lambda: run(output_tokens=1_000_000, requests=1001), "simulate.too_large")

    def test_refuses_times_that_are_not_step_times(self):
        refused(lambda: run(times=(0.02, 0.03)), "simulate.bad_times")

    def test_refuses_bad_acceptance(self):
        refused(lambda: run(alpha=1.5), "simulate.bad_alpha")
        refused(lambda: run(gamma=-1), "simulate.bad_gamma")
        refused(lambda: simulate.latency(rates=[0.5, 2], times=TIMES, output_tokens=5, requests=5),
                "simulate.bad_rates")


class TestLatencySummaryTable:
    def test_rows_columns_and_ratio(self):
        result = run(0.8, 4, output_tokens=500)
        table = result.table()
        assert list(table.index) == ["itl_p50", "itl_p90", "itl_p99", "itl_mean",
                                     "request_p50", "request_p90", "request_p99", "request_mean"]
        assert list(table.columns) == ["plain_s", "spec_s", "ratio"]
        assert table.loc["request_p99", "spec_s"] == result.request_p99_s
        assert table.loc["request_mean", "plain_s"] == pytest.approx(500 * TIMES.plain_s)
        assert np.allclose(table["ratio"], table["spec_s"] / table["plain_s"])

    def test_per_step_rows(self):
        table = run().table(per_step=True)
        assert list(table.index[-4:]) == ["tpot_p50", "tpot_p90", "tpot_p99", "tpot_mean"]
        assert isinstance(table, pd.DataFrame) and table.shape == (12, 3)

    def test_every_row_has_a_message_key(self):
        keys = i18n.catalogue("en")
        table = run().table(per_step=True)
        assert all(f"simulate.table.{name}" in keys for name in table.index)


class TestMessages:
    def test_placeholders_are_filled(self):
        error = refused(lambda: simulate.tokens_per_step(0.5, 4, steps=0), "simulate.bad_count")
        assert str(error) == "steps must be a whole number from 1 to 10,000,000; got 0."
        error = refused(lambda: simulate.tokens_per_step(gamma=1, rates=[0.5, 0.5], steps=1), "simulate.rates_length")
        assert "{" not in str(error)


@pytest.mark.parametrize("cells, output_tokens, runs, most, requests", [
    (200_000_000, 100, 1, 2_000, 2_000),      # short requests: the most
    (200_000_000, 131_072, 6, 2_000, 254),    # 200e6 // (6 · 131,072)
    (1_000, 131_072, 2, 2_000, 1),            # never none
])
def test_the_requests_a_page_simulates_stay_within_its_cells(cells, output_tokens, runs, most, requests):
    assert simulate.requests_within(cells, output_tokens, runs, most) == requests
