"""Tests for specviz.model.calibration: engine presets, and a fit that recovers (with its band) the
speedups that the step model itself made from known costs."""

import numpy as np
import pytest

from specviz import settings
from specviz.errors import InputError
from specviz.model import calibration, hf_config, roofline, step

DATA = settings.get("SPECVIZ_DATA_DIR")
GPUS, MODELS = roofline.load_gpus(DATA), hf_config.load_models(DATA)
ENGINES = calibration.load_engines(DATA)
HEADS = hf_config.load_draft_heads(DATA)
H100, LLAMA8 = GPUS["H100-SXM"], MODELS["Llama-3.1-8B"]
BATCH = np.array([2.0, 8, 24, 64, 160])
# Knobs inside every prior, as an engine with CUDA graphs would show them.
TRUE = step.Costs(mfu=0.55, mbu=0.8, overlap=0.2, step_ms=0.9, layer_us=1.0, token_us=8.0, allreduce_us=8.0,
                  draft_pass_us=270.0, speculation_ms=1.05)
# vLLM issue 20780 (2025-07): Llama-3.1-8B-Instruct at batch 1 on MT-Bench, plain TPOT 7.07 ms; for each
# number of drafted tokens K = 2..7, the acceptance length and the speculative TPOT of EAGLE-3's head
# (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B) and of EAGLE's.
SWEEP_K = np.arange(2.0, 8.0)
SWEEP = {"eagle3": ([2.36, 2.79, 3.08, 3.32, 3.46, 3.54], [4.32, 4.09, 4.05, 4.13, 4.2, 4.29]),
         "eagle": ([2.1, 2.29, 2.39, 2.43, 2.45, 2.47], [4.37, 4.29, 4.48, 4.71, 4.94, 5.2])}


def made(draft: step.Draft, length: float = 2.9, noise: float = 0.0) -> np.ndarray:
    """Speedups the step model gives at TRUE, optionally with multiplicative noise."""
    speedup = step.step(H100, LLAMA8, draft, batch=BATCH, gamma=3, context=512, acceptance_length=length,
                        costs=TRUE)["speedup"]
    return speedup * (1 + noise * np.random.default_rng(1).standard_normal(BATCH.size))


class TestLoadEngines:
    def test_every_preset_has_sources_and_ordered_ranges(self):
        assert {"vllm-v1", "vllm-v0", "sglang", "trt-llm", "eager", "any"} <= ENGINES.keys()
        for engine in ENGINES.values():
            assert engine.source and engine.note
            for low_median_high in (engine.step_ms, engine.layer_us, engine.token_us, engine.allreduce_us,
                                    engine.draft_pass_us, engine.speculation_ms):
                median, low, high = low_median_high
                assert 0 <= low <= median <= high
        # Eager engines launch every kernel: the per-layer cost is their difference.
        assert ENGINES["eager"].layer_us[0] > 10 * max(ENGINES["vllm-v1"].layer_us[0], 1)


class TestSpeculationCosts:
    """vLLM V1's per-draft-pass and per-speculative-step costs (data/engines.csv) come out of the
    measured sweep they were read from."""

    @staticmethod
    def draft(kind: str) -> step.Draft:
        """The sweep's head: SafeAILab's EAGLE-3 head from its config, or EAGLE's derived from the target."""
        return step.Draft(kind, HEADS["EAGLE3-SafeAILab-Llama-3.1-8B"][1] if kind == "eagle3" else None)

    @staticmethod
    def costs(speculation: bool) -> step.Costs:
        """vLLM V1's medians, with or without the two costs only speculation pays."""
        engine = ENGINES["vllm-v1"]
        extra = dict(draft_pass_us=engine.draft_pass_us[0], speculation_ms=engine.speculation_ms[0]) if speculation else {}
        return step.Costs(mfu=0.6, mbu=0.8, overlap=0.0, step_ms=engine.step_ms[0], token_us=engine.token_us[0], **extra)

    def speedups(self, kind: str, speculation: bool) -> np.ndarray:
        lengths = np.array(SWEEP[kind][0])
        return step.step(H100, LLAMA8, self.draft(kind), batch=1, gamma=SWEEP_K, context=512, acceptance_length=lengths,
                         costs=self.costs(speculation))["speedup"]

    def sweep_costs(self, kind: str) -> tuple[float, float]:
        """The least-squares (draft pass µs, speculative step ms) that take the step model, at vLLM V1's
        other medians, to the sweep's speculative step times (acceptance length × TPOT)."""
        lengths, tpot = (np.array(v) for v in SWEEP[kind])
        modelled = step.step(H100, LLAMA8, self.draft(kind), batch=1, gamma=SWEEP_K, context=512,
                             acceptance_length=lengths, costs=self.costs(False))["spec_s"] * 1e3
        (speculation, per_pass), *_ = np.linalg.lstsq(np.stack([np.ones_like(SWEEP_K), SWEEP_K], axis=1),
                                                      lengths * tpot - modelled, rcond=None)
        return per_pass * 1e3, speculation

    def test_the_range_is_the_sweeps_eagle3_and_eagle_heads(self):
        engine = ENGINES["vllm-v1"]
        assert self.sweep_costs("eagle3") == pytest.approx((engine.draft_pass_us[2], engine.speculation_ms[2]), rel=0.01)
        assert self.sweep_costs("eagle") == pytest.approx((engine.draft_pass_us[1], engine.speculation_ms[1]), rel=0.01)

    def test_the_preset_chooses_the_measured_draft_length_within_one(self):
        # Measured best: K = 4 for EAGLE-3 (4.05 ms), 3 for EAGLE (4.29 ms). Without the two costs the
        # model's best EAGLE-3 draft at these lengths was 6, its speedups 31-61 % above the measured.
        for kind, (_, tpot) in SWEEP.items():
            speedup = self.speedups(kind, True)
            assert abs(SWEEP_K[np.argmax(speedup)] - SWEEP_K[np.argmin(tpot)]) <= 1
            assert np.abs(speedup / (7.07 / np.array(tpot)) - 1).max() < 0.25
        bare = self.speedups("eagle3", False)
        assert SWEEP_K[np.argmax(bare)] == 6 and (bare / (7.07 / np.array(SWEEP["eagle3"][1])) - 1).min() > 0.3


class TestCalibrate:
    @pytest.mark.parametrize("draft", [step.Draft("eagle3"), step.Draft("model", MODELS["Llama-3.2-1B"])],
                             ids=["eagle3", "draft model"])
    def test_the_band_covers_what_made_the_points(self, draft):
        measured = made(draft, noise=0.01)
        fit = calibration.calibrate(H100, LLAMA8, draft, ENGINES["vllm-v1"], batch=BATCH[[0, -1]], gamma=3,
                                    context=512, measured_speedup=measured[[0, -1]], acceptance_length=2.9)
        inner = fit.predict(BATCH[1:-1], 3, 512, 2.9)
        truth = made(draft)[1:-1]
        assert (inner["low"] <= truth * 1.02).all() and (truth * 0.98 <= inner["high"]).all()
        assert np.abs(inner["speedup"] / truth - 1).max() < 0.05 and fit.warnings == []

    def test_alpha_fitted_when_no_acceptance_length_is_given(self):
        draft = step.Draft("eagle3")
        measured = made(draft)
        fit = calibration.calibrate(H100, LLAMA8, draft, ENGINES["vllm-v1"], batch=BATCH[[0, -1]], gamma=3,
                                    context=512, measured_speedup=measured[[0, -1]])
        inner = fit.predict(BATCH[1:-1], 3, 512)
        assert (inner["low"] <= measured[1:-1] * 1.02).all() and (measured[1:-1] * 0.98 <= inner["high"]).all()
        assert 1 < fit.fitted["expected_tokens"] <= 4

    def test_more_points_narrow_the_band(self):
        draft = step.Draft("eagle3")
        measured = made(draft)
        two = calibration.calibrate(H100, LLAMA8, draft, ENGINES["vllm-v1"], batch=BATCH[[0, -1]], gamma=3,
                                    context=512, measured_speedup=measured[[0, -1]], acceptance_length=2.9)
        four = calibration.calibrate(H100, LLAMA8, draft, ENGINES["vllm-v1"], batch=BATCH[[0, 1, 3, 4]], gamma=3,
                                     context=512, measured_speedup=measured[[0, 1, 3, 4]], acceptance_length=2.9)
        width = lambda fit: np.ptp([fit.predict(24.0, 3, 512, 2.9)[k][0] for k in ("low", "high")])
        assert width(four) <= width(two)

    def test_points_no_cost_can_explain_are_said_to_be(self):
        """4x faster with 2.9 tokens a step: more than the tokens themselves, at no cost."""
        fit = calibration.calibrate(H100, LLAMA8, step.Draft("ngram"), ENGINES["vllm-v1"], batch=[1, 64], gamma=3,
                                    context=512, measured_speedup=[4.0, 3.9], acceptance_length=2.9)
        assert fit.warnings == ["fit.no_solution"]

    def test_where_no_costs_fit_the_draws_nearest_the_points_lead(self):
        """Speculation losing at both ends (0.6 and 0.7) with E unknown: no costs of zero or more fit,
        and the fit shown is the draws nearest the points, at the fewest tokens a step of the grid:
        below 1 where the points are, nearer them than the same draws weighed alike."""
        fit = calibration.calibrate(H100, LLAMA8, step.Draft("eagle3"), ENGINES["vllm-v1"], batch=[1, 64], gamma=3,
                                    context=512, measured_speedup=[0.6, 0.7])
        assert fit.warnings == ["fit.no_solution"]
        assert fit.fitted["expected_tokens"] == pytest.approx(1 + 3 / 48)  # the grid's first E
        nearest = fit.predict([1, 64], 3, 512, model_error=(0.0, 0.0))["speedup"]
        alike = calibration.Fit(fit.draws, np.full(fit.weights.size, 1 / fit.weights.size), fit.setting).predict(
            [1, 64], 3, 512, model_error=(0.0, 0.0))["speedup"]
        assert (nearest < 1).all() and (alike > 1).all()
        assert np.abs(nearest / [0.6, 0.7] - 1).max() < np.abs(alike / [0.6, 0.7] - 1).min()
        # It misses its own points, and says so: its band, widened by that miss, holds them.
        miss = nearest / [0.6, 0.7] - 1
        assert fit.own_miss == pytest.approx((min(0.0, miss.min()), max(0.0, miss.max())))
        band = fit.predict([1, 64], 3, 512)
        assert (band["low"] <= [0.6, 0.7]).all() and (band["high"] >= [0.6, 0.7]).all()

    def test_a_fit_through_its_points_is_widened_by_the_model_error_alone(self):
        measured = made(step.Draft("eagle3"), length=2.9)
        fit = calibration.calibrate(H100, LLAMA8, step.Draft("eagle3"), ENGINES["vllm-v1"], batch=BATCH[[0, -1]],
                                    gamma=3, context=512, measured_speedup=measured[[0, -1]], acceptance_length=2.9)
        assert fit.warnings == [] and fit.own_miss == pytest.approx((0.0, 0.0), abs=1e-9)
        raw, widened = fit.predict(16, 3, 512, 2.9, model_error=(0.0, 0.0)), fit.predict(16, 3, 512, 2.9)
        low, high = calibration.widen(raw["low"], raw["high"])
        assert np.allclose([widened["low"], widened["high"]], [low, high])

    def test_an_expected_length_at_the_edge_is_said_to_be(self):
        """Without an acceptance length, speedups 10 % above what all 4 tokens a chain of 3 can give
        make: the likeliest draw asks for all 4 (and, made with 3.9, it finds 3.8125, under two grid steps
        off: two speedups pin E only as far as the draws' costs per draft pass and per speculative step,
        which two points cannot tell apart from fewer tokens a step, allow)."""
        close = made(step.Draft("eagle3"), length=3.9)
        fit = calibration.calibrate(H100, LLAMA8, step.Draft("eagle3"), ENGINES["vllm-v1"], batch=BATCH[[0, -1]],
                                    gamma=3, context=512, measured_speedup=close[[0, -1]])
        assert fit.warnings == [] and fit.fitted["expected_tokens"] == pytest.approx(3.9, abs=2 / 16)
        measured = made(step.Draft("eagle3"), length=4.0) * 1.10
        fit = calibration.calibrate(H100, LLAMA8, step.Draft("eagle3"), ENGINES["vllm-v1"], batch=BATCH[[0, -1]],
                                    gamma=3, context=512, measured_speedup=measured[[0, -1]])
        assert fit.warnings == ["fit.edge"]

    def test_the_same_seed_gives_the_same_fit(self):
        args = dict(batch=[2, 64], gamma=3, context=512, measured_speedup=[1.8, 1.3], acceptance_length=2.6)
        first = calibration.calibrate(H100, LLAMA8, step.Draft("eagle"), ENGINES["sglang"], **args)
        again = calibration.calibrate(H100, LLAMA8, step.Draft("eagle"), ENGINES["sglang"], **args)
        assert first.fitted == again.fitted
        with pytest.raises(ValueError, match="two measured points"):
            calibration.calibrate(H100, LLAMA8, step.Draft("eagle"), ENGINES["sglang"], batch=[2], gamma=3,
                                  context=512, measured_speedup=[1.8])

    @pytest.mark.parametrize("length", [2.6, None])
    def test_without_prompt_tokens_or_routing_overlap_the_fit_is_as_before(self, length):
        """The prefill and routing inputs at 0 (their defaults) leave a fit exactly as it was, E
        measured or fitted; a mixture of experts fitted with overlap reads fewer experts a verify pass."""
        deepseek, h200 = MODELS["DeepSeek-V3"], GPUS["H200"]
        args = dict(batch=[2, 64], gamma=3, context=512, measured_speedup=[1.8, 1.3], acceptance_length=length,
                    tp=8)
        bare = calibration.calibrate(h200, deepseek, step.Draft("mtp"), ENGINES["sglang"], **args)
        zero = calibration.calibrate(h200, deepseek, step.Draft("mtp"), ENGINES["sglang"], prompt_tokens=0,
                                     output_tokens=64, routing_overlap=0.0, **args)
        assert bare.fitted == zero.fitted
        np.testing.assert_array_equal(bare.weights, zero.weights)
        local = calibration.calibrate(h200, deepseek, step.Draft("mtp"), ENGINES["sglang"], routing_overlap=0.38,
                                      **args)
        assert local.fitted != bare.fitted


class TestWiden:
    def test_by_hand(self):
        low, high = calibration.widen(1.0, 2.0, (-0.2, 0.25))
        assert (float(low), float(high)) == pytest.approx((0.8, 2.5))

    def test_the_wider_error_side_by_side(self):
        assert calibration.wider_error((-0.1, 0.2), (0.0, 0.94)) == pytest.approx((-0.1, 0.94))
        assert calibration.wider_error((-0.1, 0.2), (-0.3, 0.0)) == pytest.approx((-0.3, 0.2))

    def test_the_default_is_the_measured_model_error(self):
        low, high = calibration.widen(1.0, 1.0)
        e_low, e_high = calibration.MODEL_ERROR
        assert (float(low), float(high)) == pytest.approx((1 / (1 + e_high), 1 / (1 + e_low)))


class TestPriorDraws:
    def test_every_cost_knob_inside_its_range(self):
        engine = ENGINES["vllm-v0"]
        draws = calibration.prior_draws(engine, 2000, seed=4)
        assert set(draws) == {"mfu", "mbu", "overlap", "layer_us", "allreduce_us", "step_ms", "token_us",
                              "draft_pass_us", "speculation_ms"}
        for name, (_, low, high) in {**calibration.ROOFLINE_PRIORS, "step_ms": engine.step_ms,
                                     "token_us": engine.token_us}.items():
            assert draws[name].min() >= low and draws[name].max() <= high and draws[name].size == 2000
        # Log-normal about the median: half of the fixed costs either side of it.
        assert np.median(draws["step_ms"]) == pytest.approx(engine.step_ms[0], rel=0.1)

    def test_an_unknown_engine_draws_each_step_from_one_preset(self):
        unknown = ENGINES["any"]
        assert [part.id for part in unknown.components] == ["vllm-v1", "vllm-v0", "sglang", "trt-llm", "eager"]
        draws = calibration.prior_draws(unknown, 5000, seed=2)
        # Only the eager preset launches every kernel (over 5 µs a layer), and its all-reduce goes
        # through NCCL (15-35 µs): a draw never pairs the one with a CUDA-graph engine's all-reduce.
        eager = draws["layer_us"] > 5
        assert (draws["allreduce_us"][eager] >= 15).all() and (draws["layer_us"][~eager] <= 5).all()
        assert eager.mean() == pytest.approx(1 / 5, abs=0.02)

    def test_the_shares_of_peak_are_the_same_draws_whatever_the_engine(self):
        # Common draws: two engines' bands differ by their engine costs, not by the generator's luck.
        one, other = (calibration.prior_draws(ENGINES[e], 300, seed=5) for e in ("vllm-v1", "any"))
        for name in calibration.ROOFLINE_PRIORS:
            np.testing.assert_array_equal(one[name], other[name])

    def test_held_knobs_keep_their_value(self):
        draws = calibration.prior_draws(ENGINES["sglang"], 50, hold={"mfu": 0.33, "token_us": 7.0})
        assert (draws["mfu"] == 0.33).all() and (draws["token_us"] == 7.0).all() and np.ptp(draws["mbu"]) > 0


class TestFitPredict:
    def test_each_point_is_its_own_weighted_quantile(self):
        """The band per point, computed for all points at once, equals the one computed point by point."""
        fit = calibration.calibrate(H100, LLAMA8, step.Draft("eagle"), ENGINES["vllm-v1"], batch=BATCH[[0, -1]],
                                    gamma=3, context=512, measured_speedup=made(step.Draft("eagle"))[[0, -1]],
                                    acceptance_length=2.9)
        together = fit.predict(BATCH, 3, 512, 2.9, model_error=(0.0, 0.0))
        for i, batch in enumerate(BATCH):
            alone = fit.predict(batch, 3, 512, 2.9, model_error=(0.0, 0.0))
            assert all(alone[k][0] == together[k][i] for k in ("speedup", "low", "high"))


    def test_in_chunks_of_points_as_at_once(self, monkeypatch):
        """predict works a chunk of points at a time (draws × points within _PREDICT_CELLS): the
        chunks change nothing, and a 2-D grid keeps its shape."""
        fit = calibration.calibrate(H100, LLAMA8, step.Draft("eagle"), ENGINES["vllm-v1"], batch=BATCH[[0, -1]],
                                    gamma=3, context=512, measured_speedup=made(step.Draft("eagle"))[[0, -1]],
                                    acceptance_length=2.9)
        grid = np.array([BATCH, BATCH[::-1]])
        whole = fit.predict(grid, 3, 512, 2.9)
        monkeypatch.setattr(calibration, "_PREDICT_CELLS", 3 * fit.weights.size)  # 3 points a chunk
        chunked = fit.predict(grid, 3, 512, 2.9)
        assert all(chunked[k].shape == grid.shape and (chunked[k] == whole[k]).all() for k in whole)


class TestFitSize:
    """A fit is sized before it is computed: 20,000 points with measured acceptance took 1.67 GB and
    4.3 s, 5,000 points of speedups alone 18 GB and 43 s."""

    @pytest.mark.parametrize("lengths, most", [(2.9, 10_000), (None, 208)])
    def test_past_the_bound_refused_with_its_size(self, lengths, most):
        assert calibration.most_points(lengths is not None) == most
        points = np.linspace(1, 256, most + 1)
        with pytest.raises(InputError) as refused:
            calibration.calibrate(H100, LLAMA8, step.Draft("eagle"), ENGINES["vllm-v1"], batch=points, gamma=3,
                                  context=512, measured_speedup=np.ones_like(points), acceptance_length=lengths)
        assert refused.value.key == "calibration.too_large"
        assert str(refused.value).startswith(f"a fit of {most + 1:,} points is too large")
        assert f"fit at most {most:,} points" in str(refused.value)

    def test_at_the_bound_fitted(self):
        points = np.linspace(1, 256, 208)
        fit = calibration.calibrate(H100, LLAMA8, step.Draft("eagle"), ENGINES["vllm-v1"], batch=points, gamma=3,
                                    context=512, measured_speedup=np.interp(points, [1, 256], [2.0, 0.9]))
        assert fit.weights.size > 0


class TestPointBounds:
    """An attack pass: a run of 1e300 tokens/s over a baseline of 140, or at concurrency 1e15, left no
    draw whose costs could be fitted, and the fit failed inside ("zero-size array to reduction")."""

    @pytest.mark.parametrize("batch, speedup, said", [
        ([1, 8, 1e15], [1.9, 1.8, 1.5], "a point's batch of 1e+15 cannot be fitted"),
        ([1, 8, 64], [1.9, 1.8, 1e300], "a point's measured speedup of 1e+300 cannot be fitted"),
        ([1, 8, 64], [1.9, 1.8, float("nan")], "a point's measured speedup of nan cannot be fitted"),
        ([1, 8, 64], [1.9, 1.8, 0.0], "a point's measured speedup of 0 cannot be fitted")])
    def test_a_value_no_fit_can_take_is_refused_by_name(self, batch, speedup, said):
        with pytest.raises(InputError) as refused:
            calibration.calibrate(H100, LLAMA8, step.Draft("eagle"), ENGINES["vllm-v1"], batch=batch, gamma=4,
                                  context=1024, measured_speedup=speedup, acceptance_length=3.4)
        assert refused.value.key == "calibration.bad_point" and str(refused.value).startswith(said)


class TestCalibrateOnStepTimes:
    def step_times(self, batch):
        return step.step(H100, LLAMA8, step.Draft("eagle"), batch=batch, gamma=3, context=512, acceptance_length=2.9,
                         costs=TRUE)["spec_s"]

    def test_the_band_covers_what_made_the_step_times(self):
        fit = calibration.calibrate(H100, LLAMA8, step.Draft("eagle"), ENGINES["vllm-v1"], batch=BATCH[[0, -1]],
                                    gamma=3, context=512, measured_step_s=self.step_times(BATCH[[0, -1]]),
                                    acceptance_length=2.9)
        inner = fit.predict(BATCH[1:-1], 3, 512, 2.9)
        truth = made(step.Draft("eagle"))[1:-1]
        assert np.all(inner["low"] <= truth) and np.all(truth <= inner["high"]) and not fit.warnings

    def test_data_parallel_ranks_each_pay_for_their_own_tokens(self):
        """Step times of 4 data-parallel ranks, each sampling a quarter of the batch: the fit pays the
        cost per token on a rank's share, as the step model does, and its band holds the truth."""
        def times(batch):
            return step.step(H100, LLAMA8, step.Draft("eagle"), batch=batch, gamma=3, context=512, acceptance_length=2.9,
                             dp=4, costs=TRUE)
        fit = calibration.calibrate(H100, LLAMA8, step.Draft("eagle"), ENGINES["vllm-v1"], batch=BATCH[[0, -1]],
                                    gamma=3, context=512, measured_step_s=times(BATCH[[0, -1]])["spec_s"],
                                    acceptance_length=2.9, dp=4)
        inner = fit.predict(BATCH[1:-1], 3, 512, 2.9)
        truth = times(BATCH[1:-1])["speedup"]
        assert np.all(inner["low"] <= truth) and np.all(truth <= inner["high"]) and not fit.warnings
        # The fitted costs, timed by the step model at 4 ranks, give back the measured step times.
        again = step.step(H100, LLAMA8, step.Draft("eagle"), batch=BATCH[[0, -1]], gamma=3, context=512,
                          acceptance_length=2.9, dp=4, costs=calibration.fitted_costs(fit))["spec_s"]
        np.testing.assert_allclose(again, times(BATCH[[0, -1]])["spec_s"], rtol=0.02)

    def test_speedups_or_step_times_and_step_times_need_the_acceptance(self):
        common = dict(batch=BATCH[[0, -1]], gamma=3, context=512)
        with pytest.raises(ValueError, match="one of the two"):
            calibration.calibrate(H100, LLAMA8, step.Draft("eagle"), ENGINES["vllm-v1"], **common)
        with pytest.raises(ValueError, match="acceptance lengths"):
            calibration.calibrate(H100, LLAMA8, step.Draft("eagle"), ENGINES["vllm-v1"], **common,
                                  measured_step_s=self.step_times(BATCH[[0, -1]]))
