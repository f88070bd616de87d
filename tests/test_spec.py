"""Tests for specviz.model.spec: seed numbers, hand-computed values, published relations, invariants."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from specviz.errors import InputError
from specviz.model import spec

alphas = st.floats(min_value=0.0, max_value=1.0)
gammas = st.integers(min_value=1, max_value=32)


class TestExpectedTokens:
    def test_seed_000_alpha_08_gamma_4(self):
        assert spec.expected_tokens(0.8, 4) == pytest.approx(3.3616, abs=1e-12)
        assert round(spec.expected_tokens(0.8, 4), 2) == 3.36

    def test_seed_000_weak_draft_is_not_rescued_by_length(self):
        assert round(spec.expected_tokens(0.4, 4), 2) == 1.65
        assert round(spec.expected_tokens(0.4, 8), 2) == 1.67

    def test_hand_computed_sums(self):
        # E is the geometric sum 1 + α + … + α^γ.
        assert spec.expected_tokens(0.5, 2) == pytest.approx(1.75)
        assert spec.expected_tokens(0.9, 3) == pytest.approx(1 + 0.9 + 0.81 + 0.729)

    def test_alpha_one_is_gamma_plus_one_exactly(self):
        assert spec.expected_tokens(1.0, 4) == 5.0
        assert spec.expected_tokens(1.0, 16) == 17.0

    def test_alpha_zero_gives_the_bonus_token_only(self):
        assert spec.expected_tokens(0.0, 7) == 1.0

    def test_precision_near_one(self):
        # Horner's sum is exact enough here to be the independent reference.
        a = 1 - 1e-9
        assert spec.expected_tokens(a, 8) == pytest.approx(sum(a**k for k in range(9)), rel=1e-14)

    def test_broadcasts_and_returns_float_for_scalars(self):
        assert isinstance(spec.expected_tokens(0.5, 3), float)
        out = spec.expected_tokens(np.array([[0.2], [0.9]]), np.array([1, 2, 4]))
        assert out.shape == (2, 3)
        assert out[1, 2] == pytest.approx(spec.expected_tokens(0.9, 4))

    @pytest.mark.parametrize("alpha", [-0.1, 1.01, float("nan")])
    def test_rejects_alpha_outside_unit_interval(self, alpha):
        with pytest.raises(ValueError, match="alpha"):
            spec.expected_tokens(alpha, 4)

    @pytest.mark.parametrize("gamma", [0, -1, 2.5])
    def test_rejects_bad_gamma(self, gamma):
        with pytest.raises(ValueError, match="gamma"):
            spec.expected_tokens(0.5, gamma)

    @given(alphas, gammas)
    def test_bounds(self, a, g):
        e = spec.expected_tokens(a, g)
        assert 1.0 - 1e-12 <= e <= g + 1 + 1e-9

    @given(alphas, alphas, gammas)
    def test_rises_with_alpha(self, a1, a2, g):
        lo, hi = sorted((a1, a2))
        assert spec.expected_tokens(lo, g) <= spec.expected_tokens(hi, g) + 1e-9

    @given(alphas, gammas)
    def test_rises_with_gamma(self, a, g):
        assert spec.expected_tokens(a, g) <= spec.expected_tokens(a, g + 1) + 1e-12


class TestExpectedTokensChain:
    def test_constant_rates_match_iid_formula(self):
        assert spec.expected_tokens_chain([0.8] * 4) == pytest.approx(spec.expected_tokens(0.8, 4))

    def test_hand_computed_decaying_rates(self):
        # 1 + 0.9 + 0.9·0.8 + 0.9·0.8·0.5 = 2.98
        assert spec.expected_tokens_chain([0.9, 0.8, 0.5]) == pytest.approx(2.98)

    def test_last_axis_is_reduced(self):
        out = spec.expected_tokens_chain([[1.0, 1.0], [0.0, 1.0]])
        np.testing.assert_allclose(out, [3.0, 1.0])

    def test_rejects_empty_and_out_of_range(self):
        with pytest.raises(ValueError, match="rates"):
            spec.expected_tokens_chain([])
        with pytest.raises(ValueError, match="rates"):
            spec.expected_tokens_chain([0.5, 1.5])

    @given(st.lists(alphas, min_size=1, max_size=12))
    def test_bounds(self, rates):
        assert 1.0 <= spec.expected_tokens_chain(rates) <= len(rates) + 1 + 1e-12


class TestReusedDraft:
    """A draft run past the positions it was trained for (a target's MTP layer run again): each
    further position keeps r of the acceptance before it."""

    def test_hand_values(self):
        # 1 + 0.8 + 0.8²·0.62 + 0.8³·0.62³ = 1 + 0.8 + 0.3968 + 0.122024 = 2.318824
        assert spec.expected_tokens(0.8, 3, trained=1, decay=0.62) == pytest.approx(2.318824, abs=1e-6)
        # Two trained positions, then one reused: 1 + 0.9 + 0.81 + 0.729·0.5 = 3.0745
        assert spec.expected_tokens(0.9, 3, trained=2, decay=0.5) == pytest.approx(3.0745)
        # At α = 1 the reused positions are still refused: 1 + 1 + 0.62 + 0.62³ = 2.858328 < 4
        assert spec.expected_tokens(1.0, 3, trained=1, decay=0.62) == pytest.approx(2.858328)

    def test_rates_per_position(self):
        rates = spec.position_rates(0.8, 4, trained=1, decay=0.62)
        np.testing.assert_allclose(rates, [0.8, 0.8 * 0.62, 0.8 * 0.62 ** 2, 0.8 * 0.62 ** 3])
        assert spec.expected_tokens_chain(rates) == pytest.approx(spec.expected_tokens(0.8, 4, trained=1, decay=0.62))
        np.testing.assert_allclose(spec.position_rates([0.5, 1.0], 2), [[0.5, 0.5], [1.0, 1.0]])

    def test_vllm_rate_and_speedup_take_the_reuse(self):
        e = spec.expected_tokens(0.8, 3, trained=1, decay=0.62)
        assert spec.acceptance_rate_from_alpha(0.8, 3, trained=1, decay=0.62) == pytest.approx((e - 1) / 3)
        assert spec.speedup(0.8, 3, 1.0, 0.05, trained=1, decay=0.62) == pytest.approx(e / 1.15)
        assert spec.breakeven_verify_cost(0.8, 3, 0.05, trained=1, decay=0.62) == pytest.approx(e - 0.15)
        # Break-even where E(α) = v + γc = 1.15 + 1 = 2.15: 1 + α + 0.62α² + 0.238328α³ = 2.15
        alpha = spec.breakeven_alpha(3, 2.0, 0.05, trained=1, decay=0.62)
        assert spec.expected_tokens(alpha, 3, trained=1, decay=0.62) == pytest.approx(2.15)
        # Out of reach when the step costs more than E(1, γ) = 2.858: NaN, where a chain's 4 would pay.
        assert math.isnan(spec.breakeven_alpha(3, 2.75, 0.05, trained=1, decay=0.62))
        assert not math.isnan(spec.breakeven_alpha(3, 2.75, 0.05))

    def test_the_best_draft_is_shorter(self):
        """Seed 000's draft cost 0.05 and a memory-bound verify: a chain at α 0.8 drafts 8 tokens,
        one trained position reused at 0.62 drafts 3 (2.319 / 1.15 = 2.02x against 2.197 / 1.10 at 2
        and 2.342 / 1.20 at 4)."""
        assert spec.optimal_gamma(0.8, 0.05)[0] == 8
        assert spec.optimal_gamma(0.8, 0.05, trained=1, decay=0.62)[0] == 3

    def test_alpha_from_a_length_a_reused_draft_made(self):
        # DeepSeek-V4-Flash's one MTP layer drafting 3: 2.60 tokens a step (ROCm ATOM PR #1372).
        alpha = spec.alpha_from_acceptance_length(2.60, 3, trained=1, decay=0.62)
        assert round(alpha, 3) == 0.909 and round(spec.alpha_from_acceptance_length(2.60, 3), 3) == 0.717
        with pytest.raises(ValueError, match="reused"):  # more than even α = 1 makes: 2.858
            spec.alpha_from_acceptance_length(2.95, 3, trained=1, decay=0.62)

    @pytest.mark.parametrize("trained, decay", [(0, 0.5), (float("nan"), 0.5), (1, 1.5), (1, -0.1)])
    def test_rejects_a_profile_out_of_range(self, trained, decay):
        with pytest.raises(ValueError):
            spec.expected_tokens(0.8, 3, trained=trained, decay=decay)

    @given(alphas, gammas, st.integers(1, 5), st.floats(0.0, 1.0))
    def test_between_the_trained_positions_alone_and_the_chain(self, a, g, n, r):
        e = spec.expected_tokens(a, g, trained=n, decay=r)
        assert spec.expected_tokens(a, min(g, n)) - 1e-12 <= e <= spec.expected_tokens(a, g) + 1e-12
        assert e <= spec.expected_tokens(a, g + 1, trained=n, decay=r) + 1e-12  # a longer draft never makes fewer
        if g <= n or r == 1.0:
            assert e == pytest.approx(spec.expected_tokens(a, g), rel=1e-12)

    @given(alphas, gammas, st.floats(0.05, 1.0))
    def test_round_trip(self, a, g, r):
        e = spec.expected_tokens(a, g, trained=1, decay=r)
        back = spec.alpha_from_acceptance_length(e, g, trained=1, decay=r)
        assert spec.expected_tokens(back, g, trained=1, decay=r) == pytest.approx(e, rel=1e-9, abs=1e-12)

    def test_broadcasts(self):
        out = spec.expected_tokens(np.array([0.5, 0.8]), np.array([[1], [4]]), trained=1, decay=np.array([1.0, 0.62]))
        assert out.shape == (2, 2)
        assert out[0].tolist() == pytest.approx([1.5, 1.8]) and out[1, 0] == pytest.approx(spec.expected_tokens(0.5, 4))


class TestStepCost:
    def test_seed_000_cost_grows_from_1_2_to_1_4(self):
        assert spec.step_cost(4) == pytest.approx(1.2)
        assert spec.step_cost(8) == pytest.approx(1.4)

    def test_rejects_negative_costs(self):
        with pytest.raises(ValueError, match="draft_cost"):
            spec.step_cost(4, 1.0, -0.1)
        with pytest.raises(ValueError, match="verify_cost"):
            spec.step_cost(4, -1.0)

    @pytest.mark.parametrize("verify_cost, draft_cost, name", [
        (0.0, 0.0, "verify_cost must be a positive"),  # the infinite speedup of "simple ratios"
        (0.0, 0.05, "verify_cost must be a positive"),
        (np.array([1.0, 0.0]), 0.05, "verify_cost"),  # one bad element refuses the array
        (math.inf, 0.05, "verify_cost"),
        (math.nan, 0.05, "verify_cost"),
        (1.0, math.inf, "draft_cost must be a non-negative, finite"),
        (1.0, np.array([0.0, -0.01]), "draft_cost"),
    ])
    def test_rejects_costs_that_make_the_speedup_infinite_or_meaningless(self, verify_cost, draft_cost, name):
        with pytest.raises(ValueError, match=name):
            spec.step_cost(4, verify_cost, draft_cost)
        with pytest.raises(ValueError, match=name):
            spec.speedup(0.8, 4, verify_cost, draft_cost)

    def test_rejects_an_infinite_gamma(self):
        with pytest.raises(ValueError, match="gamma"):
            spec.speedup(0.8, math.inf, 1.0, 0.0)

    def test_a_free_draft_with_a_positive_verify_cost_is_finite(self):
        assert spec.speedup(1.0, 4, 0.01, 0.0) == pytest.approx(500.0)


class TestSpeedup:
    def test_seed_000_long_weak_draft(self):
        assert round(spec.speedup(0.4, 8), 2) == 1.19

    @pytest.mark.parametrize("alpha, expected", [(0.9, 0.79), (0.8, 0.65), (0.6, 0.44), (0.4, 0.32)])
    def test_seed_000_compute_bound_table(self, alpha, expected):
        assert round(spec.speedup(alpha, 4, verify_cost=4 + 1), 2) == expected

    @pytest.mark.parametrize("verify_cost, expected", [(1, 2.31), (2, 1.26), (3, 0.87), (5, 0.53)])
    def test_seed_000_verify_cost_sweep(self, verify_cost, expected):
        assert round(spec.speedup(0.7, 4, verify_cost), 2) == expected

    def test_leviathan_gamma_one_closed_form(self):
        # Leviathan et al. 2023: with γ = 1 the improvement is (1 + α)/(1 + c).
        assert spec.speedup(0.6, 1, 1.0, 0.1) == pytest.approx(1.6 / 1.1)

    def test_leviathan_limit_free_draft_long_gamma(self):
        # γ → ∞ with c = 0 tends to 1/(1 − α).
        assert spec.speedup(0.75, 200, 1.0, 0.0) == pytest.approx(4.0, rel=1e-12)

    def test_seed_002_rule_a_over_1_plus_costs(self):
        # Seed 002: a = 3.5 tokens per step pays only if a > 1 + α_cost + β.
        alpha = spec.alpha_from_acceptance_length(3.5, 4)
        assert spec.speedup(alpha, 4, verify_cost=1.0 + 1.0, draft_cost=0.5) == pytest.approx(3.5 / 4.0)

    @given(alphas, alphas, gammas)
    def test_rises_with_alpha(self, a1, a2, g):
        lo, hi = sorted((a1, a2))
        assert spec.speedup(lo, g) <= spec.speedup(hi, g) + 1e-9

    @given(alphas, gammas, st.floats(min_value=0.0, exclude_min=True, allow_infinity=False),
           st.floats(min_value=0.0, allow_infinity=False))
    def test_finite_and_positive_or_refused_for_any_float_costs(self, a, g, v, c):
        try:
            s = spec.speedup(a, g, v, c)
        except ValueError as exc:
            assert "overflows" in str(exc)
        else:
            assert math.isfinite(s) and s > 0

    @pytest.mark.parametrize("v, c", [(1e-320, 0.0), (1e308, 1e308)])
    def test_overflowing_costs_are_refused(self, v, c):
        with pytest.raises(ValueError, match="overflows"):
            spec.speedup(0.8, 4, v, c)


class TestBreakevenVerifyCost:
    def test_seed_000_about_2_6(self):
        assert spec.breakeven_verify_cost(0.7, 4) == pytest.approx(2.5731, abs=1e-4)
        assert round(spec.breakeven_verify_cost(0.7, 4), 1) == 2.6

    @given(alphas, gammas)
    def test_speedup_is_one_there(self, a, g):
        v = spec.breakeven_verify_cost(a, g)
        if v > 0:
            assert spec.speedup(a, g, v) == pytest.approx(1.0)


class TestBreakevenAlpha:
    def test_leviathan_gamma_one_needs_alpha_above_c(self):
        # γ = 1, v = 1: (1 + α)/(1 + c) = 1 at α = c.
        assert spec.breakeven_alpha(1, 1.0, 0.2) == pytest.approx(0.2, abs=1e-12)

    def test_cheap_step_always_pays(self):
        assert spec.breakeven_alpha(4, 0.5, 0.05) == 0.0

    def test_too_expensive_never_pays(self):
        assert math.isnan(spec.breakeven_alpha(4, 6.0, 0.05))

    @given(gammas, st.floats(min_value=1.0, max_value=4.0), st.floats(min_value=0.0, max_value=0.2))
    def test_speedup_is_one_there(self, g, v, c):
        a = spec.breakeven_alpha(g, v, c)
        if not math.isnan(a) and 0 < a < 1:
            assert spec.speedup(a, g, v, c) == pytest.approx(1.0, rel=1e-9)


class TestOptimalGamma:
    def test_matches_exhaustive_search(self):
        best = max(range(1, 17), key=lambda g: spec.speedup(0.8, g))
        g, s = spec.optimal_gamma(0.8)
        assert g == best and s == pytest.approx(spec.speedup(0.8, best))

    def test_vectorised_over_alpha(self):
        g, s = spec.optimal_gamma(np.array([0.4, 0.9]))
        assert list(g) == [spec.optimal_gamma(0.4)[0], spec.optimal_gamma(0.9)[0]]
        assert s.shape == (2,)

    def test_weak_draft_prefers_short_drafts(self):
        assert spec.optimal_gamma(0.4)[0] < spec.optimal_gamma(0.9)[0]

    def test_compute_bound_callable_verify_cost(self):
        # v = γ + 1 (compute-bound): every γ loses, the least-bad one is γ = 1.
        g, s = spec.optimal_gamma(0.8, verify_cost=lambda gam: gam + 1)
        assert g == 1 and s == pytest.approx(1.8 / 2.05)

    def test_rejects_bad_gamma_max(self):
        with pytest.raises(ValueError, match="gamma_max"):
            spec.optimal_gamma(0.5, gamma_max=0)

    def test_a_search_past_its_longest_draft_is_refused_before_it_fills_the_memory(self):
        """An attack pass: `speedup --gamma auto --gamma-max 1000000000` grew to 23.5 GB and was killed."""
        assert spec.optimal_gamma(0.5, gamma_max=spec.GAMMA_SEARCHED_MAX) == spec.optimal_gamma(0.5, gamma_max=16)
        with pytest.raises(InputError) as refused:
            spec.optimal_gamma(0.5, gamma_max=10 ** 9)
        assert (refused.value.key, refused.value.params) == ("spec.gamma_max_large", {"most": 1024, "value": 10 ** 9})


class TestAcceptanceRateFromAlpha:
    def test_mission_vllm_shows_059_at_alpha_08(self):
        assert round(spec.acceptance_rate_from_alpha(0.8, 4), 2) == 0.59

    def test_equal_to_alpha_at_gamma_one(self):
        assert spec.acceptance_rate_from_alpha(0.37, 1) == pytest.approx(0.37)

    @given(alphas, st.integers(min_value=2, max_value=16))
    def test_never_above_alpha(self, a, g):
        assert spec.acceptance_rate_from_alpha(a, g) <= a + 1e-12


class TestAlphaFromAcceptanceLength:
    def test_inverts_seed_value(self):
        assert spec.alpha_from_acceptance_length(3.3616, 4) == pytest.approx(0.8, abs=1e-12)

    def test_ends(self):
        assert spec.alpha_from_acceptance_length(1.0, 4) == 0.0
        assert spec.alpha_from_acceptance_length(5.0, 4) == 1.0

    def test_vllm_rate_converts_through_length(self):
        rate = 0.5904  # vLLM's accepted/drafted at α = 0.8, γ = 4
        assert spec.alpha_from_acceptance_length(1 + rate * 4, 4) == pytest.approx(0.8, abs=1e-9)

    @pytest.mark.parametrize("length", [0.9, 5.5, float("nan")])
    def test_rejects_impossible_lengths(self, length):
        with pytest.raises(ValueError, match="length"):
            spec.alpha_from_acceptance_length(length, 4)

    @given(alphas, gammas)
    def test_round_trip(self, a, g):
        e = spec.expected_tokens(a, g)
        back = spec.alpha_from_acceptance_length(e, g)
        assert spec.expected_tokens(back, g) == pytest.approx(e, rel=1e-10, abs=1e-12)

    @settings(max_examples=50)
    @given(st.lists(alphas, min_size=1, max_size=50))
    def test_vectorised_round_trip(self, values):
        a = np.array(values)
        back = spec.alpha_from_acceptance_length(spec.expected_tokens(a, 6), 6)
        np.testing.assert_allclose(spec.expected_tokens(back, 6), spec.expected_tokens(a, 6), rtol=1e-10)


class TestAlphaInterval:
    def test_the_published_wilson_interval(self):
        """50 of 100 at 95 % is Wilson's 0.4038–0.5962, what R's ``prop.test(50, 100, correct = FALSE)``
        prints (0.4038315, 0.5961685); γ = 1 makes each draft one trial, so α's is the same."""
        for low, high in (spec.share_interval(0.5, 100, coverage=0.95), spec.alpha_interval(0.5, 100, 1, coverage=0.95)):
            assert (round(low, 4), round(high, 4)) == (0.4038, 0.5962)

    def test_every_draft_accepted_by_hand(self):
        """48 drafts of 3 all accepted are 144 trials: low = 144 / (144 + z²), z = 1.28155 (80 %)."""
        z = 1.2815515655446004
        assert spec.alpha_interval(1.0, 48, 3) == (pytest.approx(144 / (144 + z * z)), 1.0)
        assert spec.alpha_interval(0.0, 10, 3)[0] == 0.0  # nothing accepted: 10 trials, each rejected

    def test_covers_the_true_alpha_eight_times_in_ten(self):
        """Drafts simulated under the chain model (truncated geometric accepted counts): the interval
        around each run's measured α holds the true α in about 80 % of 4,000 runs of 200 drafts."""
        rng = np.random.default_rng(7)
        alpha, gamma, drafts, runs = 0.7, 3, 200, 4_000
        accepted = np.minimum(rng.geometric(1 - alpha, size=(runs, drafts)) - 1, gamma).sum(axis=1)
        measured = spec.alpha_from_acceptance_length(1 + accepted / drafts, gamma)
        low, high = spec.alpha_interval(measured, drafts, gamma)
        assert np.mean((low <= alpha) & (alpha <= high)) == pytest.approx(0.8, abs=0.03)

    @settings(max_examples=60)
    @given(alphas, st.floats(min_value=1.0, max_value=1e300), gammas)
    def test_holds_the_measurement_and_narrows_with_drafts(self, a, drafts, g):
        low, high = spec.alpha_interval(a, drafts, g)
        assert 0.0 <= low <= a + 1e-12 and a - 1e-12 <= high <= 1.0
        more_low, more_high = spec.alpha_interval(a, drafts * 4, g)
        assert more_high - more_low <= high - low + 1e-12

    # Fewer than one draft is no count: counters of 1e-320 drafts had given a NaN band (an attack pass).
    @pytest.mark.parametrize("drafts", [0, -3, float("nan"), 1e-320, 0.5])
    def test_rejects_no_drafts(self, drafts):
        with pytest.raises(InputError, match="drafts"):
            spec.alpha_interval(0.7, drafts, 3)
        with pytest.raises(InputError, match="trials"):
            spec.share_interval(0.7, drafts)

    @pytest.mark.parametrize("coverage", [0.0, 1.0, -1.0, float("nan")])
    def test_rejects_a_coverage_that_is_no_probability(self, coverage):
        with pytest.raises(InputError, match="coverage"):
            spec.share_interval(0.7, 100, coverage)


class TestDecayFromRates:
    def test_rates_made_at_a_decay_give_it_back(self):
        for alpha, n, r in ((0.8, 1, 0.62), (0.9, 2, 0.4), (0.7, 1, 1.0)):
            assert spec.decay_from_rates(spec.position_rates(alpha, 5, trained=n, decay=r), n) == pytest.approx(r)

    def test_published_measurements(self):
        # vLLM PR #41044, DeepSeek-V4-Flash on 4 B200s: 70.02 % and 28.74 % of drafts accept positions 1 and 2.
        assert spec.decay_from_rates([0.7002, 0.2874 / 0.7002], 1) == pytest.approx(0.586, abs=5e-4)
        # Qwen3.8-27B's MTP layer in vLLM 0.25.1 (the 2026 sample): no decay to speak of.
        assert spec.decay_from_rates([0.85, 0.7167 / 0.85, 0.5944 / 0.7167], 1) == pytest.approx(0.988, abs=1e-3)

    def test_edges(self):
        assert spec.decay_from_rates([0.5, 0.0], 1) == 0.0  # a reused position that accepts nothing
        assert spec.decay_from_rates([0.5, 0.9], 1) == 1.0  # one that accepts more: no decay, not a gain
        assert spec.decay_from_rates([0.0, 0.3], 1) == 1.0  # nothing accepted where trained: no shape to read
        with pytest.raises(ValueError):
            spec.decay_from_rates([0.8], 1)
        with pytest.raises(ValueError):
            spec.decay_from_rates([0.8, 1.2], 1)


def test_histogram_shares_by_hand():
    """spec.histogram_shares' example: 10, 30 and 60 steps accepting 0, 1 and 2 tokens."""
    positions, zero = spec.histogram_shares([10, 30, 60])
    np.testing.assert_allclose(positions, [0.9, 0.6])
    assert zero == 0.1
