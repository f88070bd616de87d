"""Tests for specviz.model.roofline: GPU presets, the pass model, evaluate() and the weights and caches in GB."""

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings as hyp_settings, strategies as st

from conftest import in_vietnamese
from specviz import i18n, settings
from specviz.errors import InputError
from specviz.model import hf_config, roofline, spec, step

DATA = settings.get("SPECVIZ_DATA_DIR")
GPUS = roofline.load_gpus(DATA)
MODELS = hf_config.load_models(DATA)
H100 = GPUS["H100-SXM"]


class TestLoadGpus:
    def test_h100_figures_and_ridge_295(self):
        # The datasheet's "80 GB" are GiB: 80 · 2³⁰ bytes, 85.9 GB (nvidia-smi shows 81,559 MiB).
        assert (H100.tflops, H100.bandwidth_tb_s) == (989.4, 3.35) and H100.memory_gb == pytest.approx(85.899, abs=1e-3)
        assert round(H100.ridge) == 295

    @pytest.mark.parametrize("gpu, ridge", [("H200", 206), ("A100-80GB", 153), ("MI300X", 247),
                                            ("L40S", 419)])
    def test_published_ridges(self, gpu, ridge):
        assert round(GPUS[gpu].ridge) == ridge

    def test_every_row_has_a_source(self):
        assert all(g.source for g in GPUS.values())
        assert {"H100-SXM", "H200", "A100-80GB", "A100-40GB", "MI300X", "B200", "L40S",
                "Trainium2"} <= GPUS.keys()

    def test_cpu_rows_leave_unknown_figures_empty(self):
        cpus = [g for g in GPUS.values() if g.kind == "cpu"]
        assert len(cpus) == 2 and not any(g.complete for g in cpus)

    @pytest.mark.parametrize("gpu, compute, runs, ridge", [
        ("H200", "fp4", "bf16", 206), ("H100-SXM", "fp4", "bf16", 295), ("A100-80GB", "fp8", "bf16", 153),
        ("H200", "fp8", "fp8", 412), ("B200", "fp4", "fp4", 1125), ("CPU", "bf16", "bf16", None),
        # MXFP4 weights (W4A8): MXFP8 activations where the device has FP4 units, BF16 elsewhere.
        ("B200", "w4a8", "fp8", 562), ("MI355X", "w4a8", "fp8", 629), ("H100-SXM", "w4a8", "bf16", 295)])
    def test_a_matmul_runs_at_the_units_the_device_has(self, gpu, compute, runs, ridge):
        """NVFP4 on an H200 has no FP4 unit to run at: it runs, and its ridge is, at BF16's peak,
        which the sidebar names (it said "FP4 peak" beside BF16's 206)."""
        device = GPUS.get(gpu) or GPUS["Intel-12th-gen-desktop"]
        assert device.runs_at(compute) == runs
        if ridge is not None:
            assert device.peak(compute) == device.peak(runs)
            assert round(device.ridge_at(compute)) == ridge
        else:
            assert math.isnan(device.peak(compute))


class TestMessagesInVietnamese:
    """A device figure's name is a word of the message's language: no English inside a Vietnamese
    sentence (config.json's messages: tests/test_hf_config.py)."""

    @pytest.mark.parametrize("figures, english, name", [
        ({"tflops": 1e300}, "peak TFLOPS", "roofline.name.peak_tflops"),
        ({"bandwidth_tb_s": 1e300}, "bandwidth (TB/s)", "roofline.name.bandwidth"),
    ])
    def test_device_figures(self, figures, english, name):
        with pytest.raises(InputError) as info:
            roofline.forward_pass(replace(H100, **figures), MODELS["Llama-3.1-8B"], 1, 1)
        assert in_vietnamese(info.value, english).startswith(i18n.t(name, "vi"))


class TestForwardPass:
    def test_single_token_decode_is_memory_bound_on_h100(self):
        m = MODELS["Llama-3.1-70B"]
        p = roofline.forward_pass(H100, m, 1, 1)
        assert p["memory_s"] > p["compute_s"]
        # Weights read: all but the untied input embedding, in BF16, at 3.35 TB/s.
        weights = 2 * (m.params_total - m.embedding_params + m.hidden_size)
        assert p["bytes"] == pytest.approx(weights + 327_680)
        assert p["time_s"] == pytest.approx(p["bytes"] / 3.35e12)

    def test_intensity_of_t_tokens_is_about_t(self):
        # 2 FLOP per parameter per token over 2 bytes per parameter: intensity ≈ tokens.
        p = roofline.forward_pass(H100, MODELS["Llama-3.1-70B"], 64, 5)
        assert p["flops"] / p["bytes"] == pytest.approx(320, rel=0.01)

    def test_overlap_zero_adds_the_two_times(self):
        p = roofline.forward_pass(H100, MODELS["Llama-3.1-8B"], 16, 1, overlap=0.0)
        assert p["time_s"] == pytest.approx(p["compute_s"] + p["memory_s"])

    def test_overhead_is_added_per_pass(self):
        a = roofline.forward_pass(H100, MODELS["Llama-3.1-8B"], 1, 1)
        b = roofline.forward_pass(H100, MODELS["Llama-3.1-8B"], 1, 1, overhead_ms=0.5)
        assert b["time_s"] - a["time_s"] == pytest.approx(0.5e-3)

    def test_moe_reads_more_experts_as_tokens_grow(self):
        m = MODELS["Mixtral-8x7B"]
        one = roofline.forward_pass(H100, m, 1, 1)["bytes"]
        many = roofline.forward_pass(H100, m, 256, 1)["bytes"]
        assert one < 2 * 0.3 * m.params_total  # about 2 of 8 experts
        assert many == pytest.approx(2 * (m.params_total - m.embedding_params), rel=0.01)

    def test_incomplete_gpu_is_refused(self):
        with pytest.raises(ValueError, match="TFLOPS"):
            roofline.forward_pass(GPUS["Intel-12th-gen-desktop"], MODELS["Qwen2.5-1.5B"], 1, 1)


class TestEvaluate:
    def test_seed_000_batch_64_verify_just_past_ridge_costs_about_1_1(self):
        r = roofline.evaluate(H100, MODELS["Llama-3.1-70B"], alpha=0.8, gamma=4, batch=64)
        assert str(r["regime"]) == "compute" and str(r["baseline_regime"]) == "memory"
        assert float(r["tokens_per_verify"]) == 320
        # compute time of 320 positions over the memory time of one: 320 · 3.35 / 989.4
        assert float(r["verify_cost"]) == pytest.approx(320 * 3.35 / 989.4, rel=0.01)

    def test_small_batch_reproduces_the_memory_bound_seed_figure(self):
        r = roofline.evaluate(H100, MODELS["Llama-3.1-70B"], alpha=0.7, gamma=4, batch=1)
        assert float(r["verify_cost"]) == pytest.approx(1.0, abs=1e-4)
        assert round(float(r["speedup"]), 2) == 2.31

    def test_large_batch_reaches_the_compute_bound_limit(self):
        # When even the baseline pass is compute-bound, v → γ + 1: the seed's 0.65 at α = 0.8.
        r = roofline.evaluate(H100, MODELS["Llama-3.1-70B"], alpha=0.8, gamma=4, batch=4096)
        assert float(r["verify_cost"]) == pytest.approx(5.0, rel=1e-3)
        assert round(float(r["speedup"]), 2) == 0.65

    def test_long_context_keeps_verify_memory_bound(self):
        # MagicDec: KV reads dominate at large batch × long context.
        short = roofline.evaluate(H100, MODELS["Llama-3.1-70B"], alpha=0.8, gamma=4, batch=256)
        long = roofline.evaluate(H100, MODELS["Llama-3.1-70B"], alpha=0.8, gamma=4, batch=256,
                                 context=8192)
        assert str(short["regime"]) == "compute" and str(long["regime"]) == "memory"
        assert float(long["speedup"]) > float(short["speedup"])

    def test_realistic_preset_bends_from_batch_2_to_64(self):
        # EAGLE-3 on H100 (Llama-3.1-8B): 1.81x at batch 2, 1.38x at 64; a pure roofline is flat.
        kw = dict(alpha=0.75, gamma=4, batch=np.array([2, 64]), context=1024, draft_cost=0.1)
        pure = roofline.evaluate(H100, MODELS["Llama-3.1-8B"], **kw)["speedup"]
        real = roofline.evaluate(H100, MODELS["Llama-3.1-8B"], **kw, **roofline.REALISTIC)["speedup"]
        assert pure[1] / pure[0] > 0.99
        assert real[1] / real[0] < 0.8

    def test_speedup_equals_spec_formula_with_derived_costs(self):
        r = roofline.evaluate(H100, MODELS["Qwen3-32B"], MODELS["Qwen3-0.6B"], alpha=0.7,
                              gamma=np.arange(1, 9), batch=32, context=2048)
        np.testing.assert_allclose(r["speedup"], spec.speedup(0.7, r["gamma"], r["verify_cost"],
                                                                r["draft_cost"]))
        np.testing.assert_allclose(r["spec_tokens_per_s"] / r["baseline_tokens_per_s"], r["speedup"])

    def test_broadcasts_over_all_axes(self):
        r = roofline.evaluate(H100, MODELS["Llama-3.1-8B"], alpha=np.linspace(0, 1, 5)[:, None, None],
                              gamma=np.array([1, 4])[None, :, None], batch=np.array([1, 8, 64]))
        assert all(v.shape == (5, 2, 3) for v in r.values())

    def test_ridge_moves_with_efficiencies(self):
        r = roofline.evaluate(H100, MODELS["Llama-3.1-8B"], alpha=0.5, gamma=2, batch=1, mfu=0.5, mbu=1.0)
        assert float(r["ridge_flop_per_byte"]) == pytest.approx(H100.ridge / 2)

    @pytest.mark.parametrize("kw, message", [({"mfu": 0}, "mfu"), ({"mbu": 1.5}, "mbu"),
                                             ({"overlap": -1}, "overlap"), ({"batch": 0}, "batch"),
                                             ({"alpha": 2}, "alpha"), ({"gamma": 0}, "gamma"),
                                             ({"overhead_ms": -1}, "overhead_ms")])
    def test_refuses_bad_knobs(self, kw, message):
        args = dict(alpha=0.5, gamma=4, batch=1) | kw
        with pytest.raises(ValueError, match=message):
            roofline.evaluate(H100, MODELS["Llama-3.1-8B"], **args)

    @hyp_settings(max_examples=60, deadline=None)
    @given(st.floats(0, 1), st.integers(1, 16), st.integers(1, 2048), st.integers(0, 65536))
    def test_verify_cost_bounded_by_the_largest_work_ratio(self, a, g, b, ctx):
        # A ratio of sums is at most the largest ratio of its terms: matmuls and bytes grow at most
        # (γ+1)-fold, causal attention (γ+1)·(L + (γ+2)/2)/(L + 1)-fold.
        r = roofline.evaluate(H100, MODELS["Llama-3.1-8B"], alpha=a, gamma=g, batch=b, context=ctx)
        bound = (g + 1) * max(1.0, (ctx + (g + 2) / 2) / (ctx + 1))
        assert 1.0 - 1e-9 <= float(r["verify_cost"]) <= bound * (1 + 1e-9)

    @pytest.mark.parametrize("tflops, bandwidth", [(1e300, 1e300), (1e10, 3.35), (989.4, 1e8),
                                                   (-1.0, 3.35)])
    def test_refuses_device_figures_that_would_make_a_pass_free(self, tflops, bandwidth):
        # 1e300 TFLOPS and TB/s overflow peak · 10¹² to infinity: both times 0, speedup 0/0.
        gpu = replace(H100, tflops=tflops, bandwidth_tb_s=bandwidth)
        with pytest.raises(ValueError, match="TFLOPS|bandwidth"):
            roofline.evaluate(gpu, MODELS["Llama-3.1-8B"], alpha=0.8, gamma=4, batch=1)

    @pytest.mark.parametrize("tflops, bandwidth", [(roofline.MAX_TFLOPS, roofline.MAX_BANDWIDTH_TB_S),
                                                   (0.001, 0.001), (roofline.MAX_TFLOPS, 0.001)])
    @pytest.mark.parametrize("draft_cost", [0.0, 10.0])
    def test_speedup_is_finite_and_positive_at_every_accepted_extreme(self, tflops, bandwidth, draft_cost):
        gpu = replace(H100, tflops=tflops, bandwidth_tb_s=bandwidth)
        r = roofline.evaluate(gpu, MODELS["Qwen3-0.6B"], alpha=[0.0, 1.0], gamma=[[1], [16]],
                              batch=1, context=0, mfu=0.05, mbu=0.05, draft_cost=draft_cost)
        assert np.all(np.isfinite(r["speedup"])) and np.all(r["speedup"] > 0)

    def test_a_tensor_parallel_group_at_the_largest_device_figures_is_accepted(self):
        """?tflops=1000000 on the two GPUs the default pair needs was refused as outside (0, 1e+06]: the
        check saw the group's 2e6. A group of MAX_DEVICES at the largest figures is a pass."""
        device = replace(H100, tflops=roofline.MAX_TFLOPS, bandwidth_tb_s=roofline.MAX_BANDWIDTH_TB_S)
        group = step.tensor_parallel_device(device, roofline.MAX_DEVICES)
        assert group.tflops == roofline.MAX_TFLOPS * roofline.MAX_DEVICES
        assert np.isfinite(roofline.forward_pass(group, MODELS["Llama-3.1-8B"], 64, 5)["time_s"]).all()

    @pytest.mark.parametrize("kw", [dict(draft_cost=np.inf), dict(overhead_ms=np.nan), dict(batch=np.inf)])
    def test_refuses_non_finite_knobs(self, kw):
        with pytest.raises(ValueError, match="finite"):
            roofline.evaluate(H100, MODELS["Llama-3.1-8B"], **(dict(alpha=0.5, gamma=4, batch=1) | kw))


class TestCrossoverBatch:
    def test_first_batch_below_threshold(self):
        assert roofline.crossover_batch([1, 2, 4, 8], [1.5, 1.2, 0.9, 0.7]) == 4.0

    def test_nan_when_never_below(self):
        assert math.isnan(roofline.crossover_batch([1, 2], [1.5, 1.2]))

    def test_vectorised_rows(self):
        out = roofline.crossover_batch([1, 2, 4], [[1.5, 0.9, 0.8], [2.0, 1.5, 1.1]])
        assert out[0] == 2.0 and math.isnan(out[1])

    def test_h100_70b_crossover_at_alpha_08(self):
        batch = np.arange(1, 1025)
        r = roofline.evaluate(H100, MODELS["Llama-3.1-70B"], alpha=0.8, gamma=4, batch=batch)
        b = roofline.crossover_batch(batch, r["speedup"])
        assert r["speedup"][int(b) - 1] < 1.0 <= r["speedup"][int(b) - 2]


class TestWeightsAndCacheGb:
    def test_weights_only(self):
        # 70,553,706,496 parameters × 2 bytes
        assert roofline.weights_gb(MODELS["Llama-3.1-70B"]) == pytest.approx(141.107, abs=1e-3)

    def test_kv_cache_of_both_models(self):
        t, d = MODELS["Qwen3-32B"], MODELS["Qwen3-0.6B"]
        got = sum(roofline.weights_gb(m) + roofline.cache_gb(m, 8, 4096, 4) for m in (t, d))
        want = (2 * (t.params_total + d.params_total) + 8 * 4101 * (262_144 + 114_688)) / 1e9
        assert got == pytest.approx(want)

    def test_broadcasts(self):
        assert roofline.cache_gb(MODELS["Llama-3.1-8B"], np.array([1, 2]), 1024).shape == (2,)
