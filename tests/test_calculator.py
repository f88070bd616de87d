"""Tests for specviz.calculator: the scenario views agree with spec and the step model, and every
step-model figure has its band."""

import math
from dataclasses import replace

import numpy as np
import pytest

from conftest import make_scenario
from specviz import calculator, regime, scenario, workload
from specviz.advice import draft_length
from specviz.errors import InputError, Notice
from specviz.model import calibration, dtypes, roofline, spec, step

# Llama-3.1-70B on one H100 with no engine costs and free drafts: the first model's pure roofline.
IDEAL = make_scenario(target="Llama-3.1-70B", draft="ngram", tp=1, context=0).ideal()
RATIOS = make_scenario(target="Llama-3.1-70B", mode="ratios", verify_cost=2.0)
REALISTIC = make_scenario()


class TestEvaluateScenario:
    def test_ratios_mode_is_the_spec_formula(self):
        r = calculator.evaluate_scenario(RATIOS, 0.7, 4, [1, 64, 512])
        np.testing.assert_allclose(r["speedup"], spec.speedup(0.7, 4, 2.0))

    def test_step_mode_is_the_step_model(self):
        r = calculator.evaluate_scenario(REALISTIC, 0.7, 4, 64, 1024)
        direct = step.step(REALISTIC.gpu, REALISTIC.target, REALISTIC.draft, batch=64, gamma=4, context=1024,
                           alpha=0.7, tp=REALISTIC.tp, precision=REALISTIC.precision, costs=REALISTIC.costs)
        assert float(r["speedup"]) == float(direct["speedup"])
        assert float(r["baseline_tokens_per_s"]) == pytest.approx(64 / float(direct["plain_s"]))
        # The speculative step the page shows is the one the speedup divides by: γ drafts and the verify.
        assert float(r["spec_step_ms"]) == pytest.approx(1e3 * float(direct["spec_s"]))
        assert float(r["spec_step_ms"]) == pytest.approx(float(r["verify_step_ms"] + 4 * r["draft_step_ms"]))

    def test_ideal_with_free_drafts_is_the_pure_roofline(self):
        """The first model (roofline.evaluate) with a draft that costs nothing: the same figures."""
        r = calculator.evaluate_scenario(IDEAL, 0.7, 4, [1, 64, 512], 1024)
        direct = roofline.evaluate(IDEAL.gpu, IDEAL.target, alpha=0.7, gamma=4, batch=[1, 64, 512], context=1024,
                                   draft_cost=0.0)
        for key in ("speedup", "verify_cost", "regime", "baseline_regime", "verify_intensity"):
            np.testing.assert_array_equal(r[key], direct[key]) if key.endswith("regime") else \
                np.testing.assert_allclose(r[key], direct[key], rtol=1e-12)

    def test_the_ridge_is_the_passs_peaks_over_bandwidth_at_the_shares_reached(self):
        """Every matmul in BF16: the GPU's BF16 ridge at the shares. In FP8, just under FP8's (the output
        head stays BF16). gpt-oss's MXFP4 experts (FP8's peak) beside BF16 attention: a ridge between,
        past which, and only past which, the verify pass is compute-bound (an engineer's pass: "319
        FLOP/byte against a ridge of 422" had been called compute-bound)."""
        bf16 = calculator.evaluate_scenario(REALISTIC, 0.8, 4, 64)
        assert float(bf16["ridge_flop_per_byte"]) == pytest.approx(989.4 / 3.35 * 0.6 / 0.8)
        fp8 = float(calculator.evaluate_scenario(replace(REALISTIC, precision=dtypes.PRECISIONS["fp8"]), 0.8, 4, 64)
                    ["ridge_flop_per_byte"])
        assert 0.95 * 1979 / 3.35 * 0.6 / 0.8 < fp8 < 1979 / 3.35 * 0.6 / 0.8
        gpt_oss = make_scenario(gpu="B200", target="gpt-oss-120b", tp="1")
        r = calculator.evaluate_scenario(gpt_oss, 0.8, 4, np.arange(1, 1025))
        ridge = r["ridge_flop_per_byte"]
        assert np.all((2250 / 8 * 0.6 / 0.8 < ridge) & (ridge < 4500 / 8 * 0.6 / 0.8))
        np.testing.assert_array_equal(r["regime"] == "compute", r["verify_intensity"] > ridge)


class TestHeadline:
    def test_is_the_views_figures_at_the_scenarios_point(self):
        chosen = replace(REALISTIC, alpha=0.7, gamma=4, batch=64, context=1024)
        head = calculator.headline(chosen)
        assert head["speedup"] == float(calculator.evaluate_scenario(REALISTIC, 0.7, 4, 64, 1024)["speedup"])
        assert (head["low"], head["high"]) == tuple(float(v) for v in calculator.speedup_band(REALISTIC, 0.7, 4, 64, 1024))
        assert head["ideal_speedup"] == float(calculator.evaluate_scenario(REALISTIC.ideal(), 0.7, 4, 64, 1024)["speedup"])
        assert head["fit"] == calculator.memory_fit(chosen) and head["fit"]["fits"]

    def test_a_batch_the_memory_does_not_hold_has_no_speedup(self):
        chosen = make_scenario(gpu="H100-SXM", target="DeepSeek-V3", draft="mtp", tp="8", dp="1", batch="64")
        head = calculator.headline(chosen)
        assert not head["fit"]["fits_plain"]
        assert [head[k] for k in ("speedup", "low", "high", "ideal_speedup", "spec_tokens_per_s",
                                  "baseline_tokens_per_s")] == [None] * 6
        assert head["verify_cost"] > 1  # the passes' costs are still what they are

    def test_given_ratios_have_no_memory_nor_band(self):
        head = calculator.headline(replace(RATIOS, alpha=0.7, gamma=4))
        assert "fit" not in head and "low" not in head
        assert head["speedup"] == pytest.approx(float(spec.speedup(0.7, 4, 2.0)))


class TestBandShown:
    @pytest.mark.parametrize("low, high, shown", [
        (0.9996, 1.5012, (0.99, 1.5)), (0.6213, 0.9973, (0.62, 0.99)), (1.0004, 1.2, (1.01, 1.2)),
        (0.98, 1.0, (0.98, 1.0)), (1.234, 1.5678, (1.23, 1.57))])
    def test_an_edge_never_rounds_onto_or_across_one(self, low, high, shown):
        assert calculator.band_shown(low, high) == pytest.approx(shown)
        said = calculator.band_shown(low, high)
        assert calculator.band_verdict(*said) == calculator.band_verdict(low, high) or 1.0 in (low, high)


class TestSpeedupBand:
    def test_the_band_brackets_the_preset_figure(self):
        batch = np.array([1, 16, 64, 256])
        low, high = calculator.speedup_band(REALISTIC, 0.8, 4, batch, 1024)
        speed = calculator.evaluate_scenario(REALISTIC, 0.8, 4, batch, 1024)["speedup"]
        assert low.shape == high.shape == (4,)
        assert np.all(low < high) and np.all(low <= speed * 1.001) and np.all(speed <= high)

    def test_an_unknown_engine_s_band_holds_its_central_figure(self):
        # Each cost drawn anywhere in the presets' span put the central case (a CUDA-graph engine's
        # costs) above the band at batch 1: 2.65 against 1.35-2.54.
        unknown = make_scenario(engine="any")
        batch = np.array([1, 16, 64, 256])
        low, high = calculator.speedup_band(unknown, 0.8, 4, batch, 1024)
        speed = calculator.evaluate_scenario(unknown, 0.8, 4, batch, 1024)["speedup"]
        assert np.all(low < speed) and np.all(speed < high)

    def test_knobs_set_by_hand_are_held_and_narrow_it(self):
        """Every knob off its preset is held: with all of them set, only the model's own error is left."""
        width = lambda s: np.ptp(calculator.speedup_band(s, 0.8, 4, 64, 1024))
        one = replace(REALISTIC, costs=replace(REALISTIC.costs, mfu=0.7))
        every = replace(REALISTIC, costs=step.Costs(mfu=0.7, mbu=0.7, overlap=0.2, step_ms=1.0, layer_us=1.0,
                                                  token_us=4.0, allreduce_us=8.0))
        speed = float(calculator.evaluate_scenario(every, 0.8, 4, 64, 1024)["speedup"])
        low, high = calculator.speedup_band(every, 0.8, 4, 64, 1024)
        e_low, e_high = calibration.MODEL_ERROR
        assert (float(low), float(high)) == pytest.approx((speed / (1 + e_high), speed / (1 + e_low)))
        assert width(every) < width(one) < width(REALISTIC)

    def test_seeded(self):
        a = calculator.speedup_band(REALISTIC, 0.8, 4, [1, 64], 1024, seed=3)
        b = calculator.speedup_band(REALISTIC, 0.8, 4, [1, 64], 1024, seed=3)
        np.testing.assert_array_equal(a, b)

    def test_ratios_mode_has_no_spread(self):
        low, high = calculator.speedup_band(RATIOS, 0.7, 4, 1)
        assert float(low) == float(high) == pytest.approx(1.26, abs=0.005)


EVERY_KNOB_SET = replace(REALISTIC, costs=step.Costs(mfu=0.7, mbu=0.7, overlap=0.2, step_ms=1.0, layer_us=1.0,
                                                     token_us=4.0, allreduce_us=8.0, draft_pass_us=30.0,
                                                     speculation_ms=0.2))


class TestBandOf:
    """Any figure the step model prices from a scenario, over the same draws as the headline's band."""

    def test_of_the_step_s_speedup_it_is_the_headline_s_band(self):
        """Two paths to one band: the drawn scenario priced whole, and speedup_band's quantiles of the
        inverse ratios taken in place."""
        for batch in (1, 64, 512):
            got = calculator.band_of(REALISTIC, lambda drawn: calculator.evaluate_scenario(drawn, 0.8, 4, batch,
                                                                                         1024)["speedup"])
            expected = calculator.speedup_band(REALISTIC, 0.8, 4, batch, 1024)
            np.testing.assert_allclose([float(v) for v in got], [float(v) for v in expected], rtol=1e-9)

    def test_with_every_knob_set_only_the_model_s_error_is_left(self):
        whole = workload.end_to_end(EVERY_KNOB_SET, 0.8, 4, 64, 2000, 300)
        e_low, e_high = calibration.MODEL_ERROR
        speed = float(whole["e2e_speedup"])
        assert calculator.request_speedup_band(EVERY_KNOB_SET, 0.8, 4, 64, 2000, 300) == pytest.approx(
            (speed / (1 + e_high), speed / (1 + e_low)), rel=1e-12)

    def test_a_request_s_band_holds_its_speedup_and_is_no_wider_than_decode_s_far_from_one(self):
        """The time to first token is not sped up: a request's speedup and both edges of its band lie
        nearer 1 than decode's, here where decode gains (16,000 tokens in, 150 out)."""
        low, high = calculator.request_speedup_band(REALISTIC, 0.8, 4, 8, 16_000, 150)
        whole = workload.end_to_end(REALISTIC, 0.8, 4, 8, 16_000, 150)
        decode_low, decode_high = calculator.band_of(
            REALISTIC, lambda drawn: workload.end_to_end(drawn, 0.8, 4, 8, 16_000, 150)["decode_speedup"])
        assert low < float(whole["e2e_speedup"]) < high
        assert 1 < low < decode_low and high < decode_high

    def test_a_request_whose_prompts_queue_without_end_has_no_band(self):
        """Batch 2,048 of 16,000-token prompts: vLLM's budget cannot admit them (infinite times, no ratio)."""
        loaded = replace(REALISTIC, tp=8)
        assert float(workload.end_to_end(loaded, 0.8, 4, 2048, 16_000, 150)["e2e_speedup"]) == 0
        assert all(math.isnan(edge) for edge in calculator.request_speedup_band(loaded, 0.8, 4, 2048, 16_000, 150))


LOAD = replace(REALISTIC, prefill=True, input_tokens=2000, output_tokens=100)  # long in, short out


class TestSteadyLoad:
    """Each step also takes the prompts of the requests that replace finished ones (``prefill``)."""

    def test_it_is_the_step_model_with_the_load_s_prompts(self):
        r = calculator.evaluate_scenario(LOAD, 0.8, 4, [4, 64], 1024)
        direct = step.step(LOAD.gpu, LOAD.target, LOAD.draft, batch=[4, 64], gamma=4, context=1024, alpha=0.8,
                           tp=LOAD.tp, precision=LOAD.precision, costs=LOAD.costs, routing_overlap=LOAD.routing_overlap,
                           prompt_tokens=2000, output_tokens=100)
        np.testing.assert_array_equal(r["speedup"], direct["speedup"])

    def test_the_prompts_draw_the_speedup_toward_one(self):
        """Speculation packs E times the prefill into a step: the more prompt a step carries, the
        nearer 1 its speedup, from above where decoding alone pays and from below where it loses."""
        batch = np.array([1, 4, 16, 64, 256, 1024])
        decode = calculator.evaluate_scenario(REALISTIC, 0.8, 4, batch, 1024)["speedup"]
        chat = calculator.evaluate_scenario(replace(LOAD, input_tokens=100, output_tokens=500), 0.8, 4, batch, 1024)
        heavy = calculator.evaluate_scenario(LOAD, 0.8, 4, batch, 1024)["speedup"]
        assert np.all(np.abs(chat["speedup"] - 1) <= np.abs(decode - 1) + 1e-12)
        assert np.all(np.abs(heavy - 1) < np.abs(chat["speedup"] - 1))
        assert decode[-1] < 1 < heavy[0] and np.all(heavy[batch >= 16] < 1.35)

    def test_off_it_leaves_every_figure_as_it_was(self):
        off = replace(LOAD, prefill=False)
        for key, value in calculator.evaluate_scenario(off, 0.8, 4, [1, 64], 1024).items():
            np.testing.assert_array_equal(value, calculator.evaluate_scenario(REALISTIC, 0.8, 4, [1, 64], 1024)[key])

    def test_its_band_is_the_draws_quantiles_widened(self):
        """By brute force: the step model at each of the prior's draws, their 10th and 90th
        percentiles, widened by the model's error."""
        draws = calibration.prior_draws(LOAD.engine, calculator.BAND_DRAWS, 0, {})
        costs = step.Costs(**draws, link_gb_s=LOAD.costs.link_gb_s)
        for batch in (1, 48):
            speed = step.step(LOAD.gpu, LOAD.target, LOAD.draft, batch=batch, gamma=4, context=1024, alpha=0.8,
                              tp=LOAD.tp, precision=LOAD.precision, costs=costs, routing_overlap=LOAD.routing_overlap,
                              prompt_tokens=2000, output_tokens=100)["speedup"]
            expected = calibration.widen(*np.quantile(speed, (0.1, 0.9)))
            got = calculator.speedup_band(LOAD, 0.8, 4, batch, 1024)
            np.testing.assert_allclose([float(v) for v in got], [float(v) for v in expected], rtol=1e-12)

    def test_its_break_even_alpha_is_where_the_speedup_crosses_one(self):
        """The verify cost grows with α under the load: the closed form at one α's costs (0.66 at
        α 0.8, batch 16) is not where the speedup crosses 1 (about 0.43)."""
        loaded = workload.steady_load(REALISTIC, 2000, 100)
        alpha = calculator.breakeven_alpha(loaded, 4, 16, loaded.context)
        assert 0.42 < alpha < 0.44
        assert float(calculator.evaluate_scenario(loaded, alpha, 4, 16, loaded.context)["speedup"]) == pytest.approx(
            1.0, abs=2e-3)
        here = calculator.evaluate_scenario(REALISTIC, 0.8, 4, 16, 1024)
        assert calculator.breakeven_alpha(REALISTIC, 4, 16, 1024) == pytest.approx(
            float(spec.breakeven_alpha(4, here["verify_cost"], here["draft_cost"])))

    def test_the_positions_of_its_passes_and_why_they_cost_what_they_do(self):
        """Batch 16, 2,000 in and 100 out: 16 + 320 positions in a plain pass, 80 + 320·E in a verify pass."""
        loaded = workload.steady_load(REALISTIC, 2000, 100)
        here = {k: v.item() for k, v in calculator.evaluate_scenario(loaded, 0.8, 4, 16, loaded.context).items()}
        _, explain, figures = regime.regime_explanation(loaded, here)
        e = float(spec.expected_tokens(0.8, 4))
        assert explain == "calc.explain.load" and figures["plain_positions"] == 336
        assert figures["positions"] == round(80 + 320 * e) and figures["spec_prompts"] == pytest.approx(320 * e)

    def test_a_mixture_of_experts_pays_no_expert_tax_when_prompts_read_every_expert(self):
        """DeepSeek-V3 at batch 16: its plain pass routes 16 + 320 tokens, which read nearly all 256
        experts a layer (1 − (1 − 8/256)^336 > 0.9999): the verify pass reads no more."""
        loaded = workload.steady_load(make_scenario(target="DeepSeek-V3", gpu="H200", tp="8"), 2000, 100)
        tax = regime.expert_tax(loaded, 0.8, 4, 16, loaded.context, 64)
        assert tax["plain_tokens"] == 336 and tax["ratio"] == pytest.approx(1.0, abs=1e-3)
        assert tax["plain_experts"] == pytest.approx(256 * (1 - (1 - 8 / 256) ** 336))

    def test_no_draft_longer_than_a_request_decodes_is_swept(self):
        """Requests of 8 tokens out decode 7 after the first: a speculative step of γ + 1 ≤ 7 tokens,
        so γ + 1 ≤ 7: the sweep and the schedule stop at γ 6 (O − 2), which steady_load holds γ to."""
        short = workload.steady_load(REALISTIC, 100, 8)
        frame, best = calculator.gamma_sweep(short, 0.95, 16, short.context, 16)
        assert frame["gamma"].max() == 6 and best <= 6
        assert draft_length.gamma_schedule(short, 0.95, short.context, 64, 16)["gamma"].max() <= 6
        assert calculator.gamma_sweep(REALISTIC, 0.95, 16, 1024, 16)[0]["gamma"].max() == 16

    def test_each_gamma_of_the_sweep_carries_the_headlines_band_at_it(self):
        """A browser pass: the best γ's speedup had stood without a band where the headline's has one."""
        frame, best = calculator.gamma_sweep(REALISTIC, 0.8, 32, 1024, 16)
        for row in frame.itertuples():
            low, high = calculator.speedup_band(REALISTIC, 0.8, int(row.gamma), 32, 1024)
            assert (row.low, row.high) == pytest.approx((float(low), float(high)), rel=1e-12)
            assert row.low < row.speedup < row.high
        no_fit = calculator.gamma_sweep(REALISTIC, 0.8, 10**6, 1024, 16)[0]
        assert no_fit[["speedup", "low", "high"]].isna().all().all()

    def test_a_load_the_model_does_not_hold_is_refused(self):
        with pytest.raises(InputError) as long:
            workload.steady_load(REALISTIC, 131_000, 1_000)
        with pytest.raises(InputError) as short:
            workload.steady_load(REALISTIC, 100, 5)  # γ 4: 4 tokens after the first, under one step of 5
        assert (long.value.key, short.value.key) == ("scenario.load_too_long", "scenario.load_too_short")
        assert workload.steady_load(REALISTIC, 100, 6).prefill

    def test_a_load_of_vanishing_prompts_has_the_decode_only_band(self):
        """The band's two paths meet: one prompt token per 131,072 out is decoding alone to 1e-4."""
        faint = replace(LOAD, input_tokens=1, output_tokens=131_072)
        batch, alpha = np.array([1, 16, 256]), np.array([[0.6], [0.9]])
        np.testing.assert_allclose(calculator.speedup_band(faint, alpha, 4, batch, 1024),
                                   calculator.speedup_band(REALISTIC, alpha, 4, batch, 1024), rtol=1e-4)


class TestAlphaTable:
    def test_seed_columns(self):
        table = calculator.alpha_table(RATIOS, 4, 1)
        assert list(table["compute_bound_limit"].round(2)) == [0.32, 0.44, 0.53, 0.65, 0.79]
        assert list(table["memory_bound"].round(2))[2] == 2.31
        assert list(table["this_batch"].round(2))[2] == 1.26
        assert list(table["alpha_vllm"].round(2))[3] == 0.59


class TestBatchSweep:
    def test_crossover_is_exact_over_every_batch(self):
        curves, crossings = calculator.batch_sweep(REALISTIC, [0.6, 0.7], 4, 1024, 1024)
        every = np.arange(1, 1025)
        s = calculator.evaluate_scenario(REALISTIC, 0.6, 4, every, 1024)["speedup"]
        b = int(calculator.loses_from(crossings, 0.6))
        assert s[b - 1] < 1 <= s[b - 2] and (s[b - 1:] < 1).all()
        assert calculator.loses_from(crossings, 0.7) > b  # a better draft keeps paying at larger batches
        assert calculator.dips(crossings, 0.6) == []  # a dense model falls once
        assert set(curves.columns) >= {"alpha", "batch", "speedup", "verify_cost", "regime"}
        assert curves["batch"].max() == 1024 and curves["batch"].min() == 1

    def test_a_mixture_of_experts_that_dips_and_pays_again_is_marked_at_every_crossing(self):
        """DeepSeek-V3 + MTP on 8 B200s in FP8 at α 0.5 and γ 4 (the MTP layer run three times past
        its training): the expert tax and the costs only speculation pays make it lose at batches 1-46,
        it pays again from 47 (1.04x at 64) and loses for good from 116. The chart had one diamond, at
        the first loss, and the caption said to turn speculation off above it."""
        deepseek = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8", ep="off")
        _, crossings = calculator.batch_sweep(deepseek, [0.5, 0.8], deepseek.gamma, deepseek.context, 1024)
        every = np.arange(1, 1025)
        s = calculator.evaluate_scenario(deepseek, 0.5, deepseek.gamma, every, deepseek.context)["speedup"]
        assert calculator.dips(crossings, 0.5) == [(1, 46)]
        assert (s[:46] < 1).all() and s[46] >= 1
        assert calculator.loses_from(crossings, 0.5) == 116 and (s[115:] < 1).all() and s[114] >= 1
        own = crossings[crossings["alpha"] == 0.5]
        assert list(own["batch"]) == [1, 47, 116] and list(own["rises"]) == [False, True, False]
        assert math.isnan(calculator.loses_from(crossings, 0.8)) or calculator.loses_from(crossings, 0.8) > 116


class TestBandVsBatch:
    def test_band_and_ideal_per_batch(self):
        frame = calculator.band_vs_batch(REALISTIC, 0.8, 4, 1024, 1024)
        assert list(frame.columns) == ["batch", "low", "high", "ideal"]
        assert frame.batch.tolist() == calculator.batch_grid(1024).tolist()
        at_65 = frame[frame.batch == 65].iloc[0]
        band = calculator.speedup_band(REALISTIC, 0.8, 4, 65, 1024)
        assert (at_65.low, at_65.high) == pytest.approx(tuple(float(v) for v in band))
        assert at_65.ideal == pytest.approx(float(calculator.evaluate_scenario(REALISTIC.ideal(), 0.8, 4, 65, 1024)["speedup"]))
        # At small and medium batches the hardware alone is the optimistic case.
        small = frame[frame.batch <= 64]
        realistic = calculator.evaluate_scenario(REALISTIC, 0.8, 4, small.batch.to_numpy(), 1024)["speedup"]
        assert (small.ideal > realistic).all()


class TestMemoryFitWays:
    def test_each_way_holds_the_batch_it_is_offered_for(self):
        chosen = make_scenario(gpu="H100-SXM", target="DeepSeek-V3", draft="mtp", tp="8", dp="1", batch="64")
        assert calculator.memory_fit(chosen)["max_batch"] == 0
        ways = {way.key.removeprefix("calc.memory."): way.params for way in calculator.ways_to_fit(chosen, 131072)}
        assert list(ways) == ["dp_attention", "precision"]  # no wider tensor parallelism, no smaller batch
        tp, dp, held = (ways["dp_attention"][k] for k in ("tp", "dp", "held"))
        assert (tp, dp) == (1, 16) and held == replace(chosen, tp=1, dp=16, ep=True).max_batch() >= 64
        # No split of fewer GPUs holds it, and none of 16 holds more.
        assert all(replace(chosen, tp=t, dp=d, ep=True).max_batch() < 64 for t in (1, 2, 4, 8) for d in (2, 4, 8)
                   if t * d < 16)
        assert all(replace(chosen, tp=t, dp=16 // t, ep=True).max_batch() <= held for t in (2, 4, 8))
        name, held = ways["precision"]["precision"].key.removeprefix("side.precision."), ways["precision"]["held"]
        assert name == "nvfp4" and held == replace(chosen, precision=dtypes.PRECISIONS["nvfp4"]).max_batch() >= 64
        assert replace(chosen, precision=dtypes.PRECISIONS["fp8"]).max_batch() < 64  # tried first, and short

    def test_a_format_that_holds_less_than_an_fp8_cache_alone_is_not_offered(self):
        """gpt-oss-120b + EAGLE-3 on one H100 at batch 280: an FP8 cache holds 532; NVFP4 weights (with it) 444,
        for its MXFP4 experts are smaller than NVFP4's, and had been offered beside it (a browser pass).
        MXFP4 weights throughout hold 605, more: offered."""
        chosen = make_scenario(target="gpt-oss-120b", draft="eagle3", gpu="H100-SXM", tp="1", batch="280")
        assert replace(chosen, precision=dtypes.PRECISIONS["nvfp4"]).max_batch() == 444
        ways = {way.key.removeprefix("calc.memory."): way.params for way in calculator.ways_to_fit(chosen, 131072)}
        assert ways["fp8_kv"] == {"batch": 532}
        assert ways["precision"]["precision"] == Notice("side.precision.mxfp4") and ways["precision"]["held"] == 605

    def test_a_dense_model_is_offered_no_data_parallel_attention(self):
        ways = {way.key: way.params for way in calculator.ways_to_fit(make_scenario(batch="1024"), 131072)}
        assert "calc.memory.dp_attention" not in ways and ways["calc.memory.more_gpus"] == {"tp": 8}


    def test_only_splits_the_gpu_s_link_joins_are_offered(self):
        """A browser pass: an L40S (no link figure) had been told "2 GPUs per group", and an A40 (its
        NVLink bridge joins 2, no scale-out network) "4 GPUs per group": each then refused."""
        no_link = make_scenario(gpu="L40S", tp="1")
        assert not no_link.gpu.joins(2) and "calc.memory.more_gpus" not in [w.key for w in calculator.ways_to_fit(no_link, 131072)]
        bridged = make_scenario(gpu="A40", tp="2", batch="256")
        assert bridged.gpu.joins(2) and not bridged.gpu.joins(4)
        assert replace(bridged, tp=4).max_batch() >= 256  # four would hold it, but four are not joined
        assert "calc.memory.more_gpus" not in [w.key for w in calculator.ways_to_fit(bridged, 131072)]
        # A PCIe card whose preset gives a link and no domain joins any number over it, as the step model prices it.
        assert make_scenario(gpu="L4", tp="1").gpu.joins(8)
        assert scenario.default_parallel(bridged.gpu, make_scenario(target="Llama-3.1-70B").target, bridged.draft,
                                         bridged.precision)[0] <= 2


class TestHeatmapGrid:
    def test_shape_and_values(self):
        grid = calculator.heatmap_grid(REALISTIC, 4, 0, 1024)
        assert len(grid) == 20 * 11
        cell = grid[(grid.alpha == 0.8) & (grid.batch == 64)].speedup.item()
        assert cell == pytest.approx(float(calculator.evaluate_scenario(REALISTIC, 0.8, 4, 64)["speedup"]))


class TestGammaSweep:
    def test_best_gamma_falls_as_batch_grows(self):
        held = replace(IDEAL, tp=4)  # 70B in BF16 on one H100 holds no batch: no γ is best there
        assert calculator.gamma_sweep(IDEAL, 0.8, 1, 0, 16)[1] is None
        _, small = calculator.gamma_sweep(held, 0.8, 1, 0, 16)
        _, large = calculator.gamma_sweep(held, 0.8, 256, 0, 16)
        assert large < small

    def test_ratios_mode_matches_optimal_gamma(self):
        frame, best = calculator.gamma_sweep(RATIOS, 0.8, 1, 0, 16)
        assert best == spec.optimal_gamma(0.8, 0.05, 2.0)[0] and len(frame) == 16 and frame["fits"].all()

    def test_the_best_gamma_is_one_at_which_the_batch_fits(self):
        """A browser pass: Qwen3-Next-80B with its MTP layer on 4 H100s at batch 596 and α 0.95 had been
        told "best γ 6 (1.76×)", where 596 fit only up to γ 4 (1,126, 869, 707, 596 sequences at γ 1-4,
        454 at γ 6): a longer draft keeps more draft KV a sequence. γ 5-16 have no speedup, and the best
        is γ 4, the headline's own."""
        chosen = make_scenario(target="Qwen3-Next-80B-A3B", draft="mtp", tp="4", dp="1", ep="off", batch="596",
                               alpha="0.95")
        frame, best = calculator.gamma_sweep(chosen, 0.95, 596, chosen.context, 16)
        assert frame["max_batch"].tolist()[:6] == [1126, 869, 707, 596, 515, 454]
        assert frame["fits"].tolist() == [True] * 4 + [False] * 12 and frame["speedup"][4:].isna().all()
        assert best == 4 and frame["speedup"][3] == pytest.approx(calculator.headline(chosen)["speedup"])
        assert calculator.gamma_sweep(chosen, 0.95, 1200, chosen.context, 16)[1] is None  # fits at no γ
        # No memory weighed (ratios mode, a CPU preset): every γ fits, its limit missing, not 2⁶³ − 1.
        for unweighed in (RATIOS, make_scenario(gpu="Intel-Core-Ultra-X7-358H", target="Qwen3-8B", tflops="2",
                                                bandwidth="0.1")):
            frame, best = calculator.gamma_sweep(unweighed, 0.8, 64, 1024, 8)
            assert frame["fits"].all() and frame["max_batch"].isna().all() and best is not None


class TestContextOptions:
    def test_context_options(self):
        assert calculator.context_options(2048) == [0, 256, 512, 1024, 2048]


@pytest.mark.parametrize("low, high, said", [(1.02, 1.4, "pays"), (0.7, 0.98, "loses"), (0.9, 1.1, "unsure"),
                                             (1.0, 1.3, "unsure"), (0.8, 1.0, "unsure")])
def test_a_band_pays_only_where_its_low_edge_is_above_one(low, high, said):
    assert calculator.band_verdict(low, high) == said


class TestEqualMemory:
    def test_past_the_engine_s_default_sequences_the_default_is_priced_too(self):
        """gpt-oss-120b + EAGLE-3 on a B200 holds 2,047 sequences speculating and 2,601 plain (0.82×);
        vLLM runs at most 1,024 a rank by default (`--max-num-seqs`, which the Deploy view's command
        raises), where both run 1,024: the speedup at that one batch (a manager's pass)."""
        chosen = make_scenario(gpu="B200", target="gpt-oss-120b", draft="eagle3", tp="1", alpha="0.874", gamma="7",
                               batch="47")
        full = calculator.equal_memory(chosen)
        assert (full["batch"], full["batch_plain"]) == (2047, 2601) and full["ratio"] == pytest.approx(0.819, abs=1e-3)
        same = float(calculator.evaluate_scenario(chosen, 0.874, 7, 1024, chosen.context)["speedup"])
        assert (full["default_seqs"], full["batch_default"], full["batch_plain_default"]) == (1024, 1024, 1024)
        assert full["ratio_default"] == pytest.approx(same) and same == pytest.approx(1.023, abs=1e-3)

    def test_under_the_default_nothing_more_is_said(self):
        assert "default_seqs" not in calculator.equal_memory(make_scenario(context="4096", batch="64"))
