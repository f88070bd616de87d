"""Tests for specviz.calculator: the scenario views agree with spec and roofline."""

import math

import numpy as np
import pytest

from specviz import calculator, roofline, settings, spec

DATA = settings.get("SPECVIZ_DATA_DIR")
GPUS, MODELS = roofline.load_gpus(DATA), roofline.load_models(DATA)
ROOF = calculator.Scenario(GPUS["H100-SXM"], MODELS["Llama-3.1-70B"])
RATIOS = calculator.Scenario(GPUS["H100-SXM"], MODELS["Llama-3.1-70B"], mode="ratios", verify_cost=2.0)


class TestEvaluateScenario:
    def test_ratios_mode_is_the_spec_formula(self):
        r = calculator.evaluate_scenario(RATIOS, 0.7, 4, [1, 64, 512])
        np.testing.assert_allclose(r["speedup"], spec.speedup(0.7, 4, 2.0))

    def test_roofline_mode_is_roofline_evaluate(self):
        r = calculator.evaluate_scenario(ROOF, 0.7, 4, 64, 1024)
        direct = roofline.evaluate(ROOF.gpu, ROOF.target, alpha=0.7, gamma=4, batch=64, context=1024)
        assert float(r["speedup"]) == pytest.approx(float(direct["speedup"]))


class TestAlphaTable:
    def test_seed_columns(self):
        table = calculator.alpha_table(RATIOS, 4, 1)
        assert list(table["compute_bound_limit"].round(2)) == [0.32, 0.44, 0.53, 0.65, 0.79]
        assert list(table["memory_bound"].round(2))[2] == 2.31
        assert list(table["this_batch"].round(2))[2] == 1.26
        assert list(table["alpha_vllm"].round(2))[3] == 0.59


class TestBatchSweep:
    def test_crossover_is_exact_over_every_batch(self):
        curves, crossover = calculator.batch_sweep(ROOF, [0.7, 0.9], 4, 0, 1024)
        every = np.arange(1, 1025)
        s = roofline.evaluate(ROOF.gpu, ROOF.target, alpha=0.7, gamma=4, batch=every)["speedup"]
        b = int(crossover[0.7])
        assert s[b - 1] < 1 <= s[b - 2]
        assert crossover[0.9] > crossover[0.7]  # a better draft keeps paying at larger batches
        assert set(curves.columns) >= {"alpha", "batch", "speedup", "verify_cost", "regime"}
        assert curves["batch"].max() == 1024 and curves["batch"].min() == 1


class TestHeatmapGrid:
    def test_shape_and_values(self):
        grid = calculator.heatmap_grid(ROOF, 4, 0, 1024)
        assert len(grid) == 20 * 11
        cell = grid[(grid.alpha == 0.8) & (grid.batch == 64)].speedup.item()
        assert cell == pytest.approx(float(calculator.evaluate_scenario(ROOF, 0.8, 4, 64)["speedup"]))


class TestGammaSweep:
    def test_best_gamma_falls_as_batch_grows(self):
        _, small = calculator.gamma_sweep(ROOF, 0.8, 1, 0, 16)
        _, large = calculator.gamma_sweep(ROOF, 0.8, 256, 0, 16)
        assert large < small

    def test_ratios_mode_matches_optimal_gamma(self):
        frame, best = calculator.gamma_sweep(RATIOS, 0.8, 1, 0, 16)
        assert best == spec.optimal_gamma(0.8, 0.05, 2.0)[0] and len(frame) == 16


class TestRegimeCrossovers:
    def test_h100_70b(self):
        c = calculator.regime_crossovers(ROOF, 4, 0, 1024)
        # verify holds 5 positions per sequence: crosses the 295 ridge near 295/5 ≈ 60; decode near 295
        assert c["verify"] == 60 and c["baseline"] == 296

    def test_long_context_pushes_both_out(self):
        c = calculator.regime_crossovers(ROOF, 4, 32768, 1024)
        assert math.isnan(c["verify"]) and math.isnan(c["baseline"])

    def test_ratios_mode_has_none(self):
        assert all(math.isnan(v) for v in calculator.regime_crossovers(RATIOS, 4, 0, 64).values())


class TestRegimeExplanation:
    @staticmethod
    def explain(target: str, batch: int, knobs: dict | None = None):
        scenario = calculator.Scenario(GPUS["H100-SXM"], MODELS[target], knobs=knobs or {})
        here = {k: v.item() if hasattr(v, "item") else v
                for k, v in calculator.evaluate_scenario(scenario, 0.8, 4, batch, 0).items()}
        return calculator.regime_explanation(scenario, here)

    def test_a_cheap_memory_bound_verify(self):
        regime, explain, figures = self.explain("Qwen3-32B", 8)
        assert (regime, explain) == ("calc.regime.memory", "calc.explain.memory")
        assert figures["ridge"] == figures["datasheet_ridge"] == pytest.approx(989.4 / 3.35)

    def test_a_dear_memory_bound_verify_names_its_cause(self):
        """Only a mixture of experts routes the γ + 1 positions to more experts; a dense model's
        verify is dear (realistic knobs) because its matmuls add to its weight reads."""
        _, dense, figures = self.explain("Qwen3-32B", 32, dict(roofline.REALISTIC))
        _, moe, _ = self.explain("Qwen3-30B-A3B", 8)
        assert (dense, moe) == ("calc.explain.memory_heavy", "calc.explain.memory_heavy_moe")
        # The ridge the passes meet, at the shares of peak reached, beside the GPU's own.
        assert figures["ridge"] == pytest.approx(989.4 / 3.35 * 0.6 / 0.8) and figures["datasheet_ridge"] == pytest.approx(295.343, abs=1e-3)

    def test_past_the_ridge(self):
        assert self.explain("Qwen3-32B", 128)[:2] == ("calc.regime.compute", "calc.explain.between")
        assert self.explain("Qwen3-32B", 1024)[:2] == ("calc.regime.compute", "calc.explain.compute")


class TestRooflinePoints:
    def test_passes_lie_on_or_under_the_roof(self):
        roof, passes = calculator.roofline_points(ROOF, 4, 64, 0)
        peak, bw = ROOF.gpu.tflops, ROOF.gpu.bandwidth_tb_s
        for p in passes.itertuples():
            assert p.tflops <= min(peak, bw * p.intensity) * (1 + 1e-9)
        assert list(passes.positions) == [64, 320]


class TestOptions:
    def test_batch_options_are_log_friendly(self):
        assert calculator.batch_options(64) == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]

    def test_context_options(self):
        assert calculator.context_options(2048) == [0, 256, 512, 1024, 2048]
