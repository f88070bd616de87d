"""Tests for specviz.fidelity: series from the published results, held-out evaluation, and the two
calibrators against data they generated themselves."""

import math

import numpy as np
import pandas as pd
import pytest

from specviz import calculator, calibration, explorer, fidelity, roofline, settings, spec, step

DATA = settings.get("SPECVIZ_DATA_DIR")
SERIES = fidelity.series_of(explorer.load_published(DATA), DATA)
GPUS, MODELS = roofline.load_gpus(DATA), roofline.load_models(DATA)


def setting(draft: str = "eagle", tp: int = 1) -> fidelity.Setting:
    return fidelity.Setting("synthetic", GPUS["H100-SXM"], tp, MODELS["Llama-3.1-8B"], draft, MODELS.get(draft),
                            None, "test", calibration.load_engines(DATA)["vllm-v1"])


def points(batches, speedups, gamma=3, length=None, context=512.0) -> pd.DataFrame:
    return pd.DataFrame({"batch": np.asarray(batches, dtype=float), "context": context, "gamma": float(gamma),
                         "acceptance_length": np.nan if length is None else length,
                         "measured_speedup": np.asarray(speedups, dtype=float)})


class TestSeriesOf:
    def test_the_published_sweeps(self):
        by_name = {s.name: p for s, p in SERIES}
        eagle3 = by_name["EAGLE-3 paper, SGLang, H100, Llama-3.1-8B, EAGLE-3 head"]
        assert list(eagle3.batch) == [2, 4, 8, 16, 24, 32, 48, 56, 64]
        assert list(eagle3.measured_speedup[[0, 8]]) == [1.81, 1.38] and (eagle3.context == fidelity.UNKNOWN_CONTEXT).all()
        magicdec = [(s, p) for s, p in SERIES if s.name.startswith("MagicDec") and s.draft == "self"]
        assert all(s.tp == 8 and s.draft_kv_budget == 512 and p.acceptance_length.notna().all() for s, p in magicdec)
        assert len(SERIES) >= 14 and all(len(p) >= 3 for _, p in SERIES)


class TestHeldOut:
    def test_a_perfect_model_and_one_that_cannot_fit(self):
        series = points([1, 2, 4, 8], [2.0, 1.5, 0.9, 0.8])
        truth = fidelity.held_out(setting(), series, lambda s, ends: lambda p: p["measured_speedup"].to_numpy())
        assert list(truth.batch) == [2, 4] and (truth.error == 0).all() and truth.sign_right.all()
        none = fidelity.held_out(setting(), series, lambda s, ends: None)
        assert none.predicted_speedup.isna().all() and none.sign_right.isna().all()

    def test_it_sees_only_the_two_ends(self):
        seen = []
        fidelity.held_out(setting(), points([1, 2, 4, 8], [2, 1.5, 1, 0.8]),
                          lambda s, ends: seen.append(list(ends.batch)) or (lambda p: np.ones(len(p))))
        assert seen == [[1.0, 8.0]]


class TestSummarise:
    def test_by_hand(self):
        frame = pd.DataFrame({"predicted_speedup": [1.1, 0.9, np.nan], "measured_speedup": [1.0, 1.2, 1.0],
                              "error": [0.1, -0.25, np.nan], "sign_right": [True, False, np.nan]})
        assert fidelity.summarise(frame) == {"points": 2, "missing": 1, "median_error": pytest.approx(0.175),
                                             "worst_error": 0.25, "sign_right": 0.5}


class TestConstantCost:
    def test_recovers_the_cost_that_made_the_points(self):
        lengths = np.array([2.5, 2.6, 2.4, 2.55])
        alpha = np.asarray(spec.alpha_from_acceptance_length(lengths, 2.0))
        series = points([8, 16, 32, 64], spec.speedup(alpha, 2.0, 1.0, 0.2), gamma=2, length=lengths)
        assert fidelity.held_out(setting(), series, fidelity.constant_cost).error.abs().max() < 1e-12

    def test_without_acceptance_it_predicts_the_mean(self):
        predict = fidelity.constant_cost(setting(), points([1, 64], [1.8, 1.2]))
        assert list(predict(points([8, 16], [0, 0]))) == [1.5, 1.5]


class TestRooflineV1:
    def test_recovers_knobs_on_its_grid(self):
        """Points made by the roofline at knobs on the explorer's grid, α known: predicted exactly."""
        knobs = {"mfu": 0.5, "mbu": 0.8, "overlap": 0.5, "overhead_ms": 0.3}
        scenario = calculator.Scenario(GPUS["H100-SXM"], MODELS["Llama-3.1-8B"], MODELS["Llama-3.2-1B"], knobs=knobs)
        batch, lengths = np.array([1.0, 8, 32, 128]), np.array([3.1, 3.0, 3.2, 2.9])
        alpha = np.asarray(spec.alpha_from_acceptance_length(lengths, 4.0))
        made = calculator.evaluate_scenario(scenario, alpha, 4.0, batch, 512.0)["speedup"]
        series = points(batch, made, gamma=4, length=lengths)
        result = fidelity.held_out(setting("Llama-3.2-1B"), series, fidelity.roofline_v1)
        assert result.error.abs().max() < 1e-9

    def test_tensor_parallel_as_one_larger_device(self):
        gpu = fidelity._one_device(setting(tp=8))
        assert (gpu.tflops, gpu.bandwidth_tb_s) == (8 * 989.4, pytest.approx(8 * 3.35))


class TestStepV2:
    def test_recovers_what_the_step_model_made(self):
        """Points made by the step model at costs inside the engine's priors, acceptance known: the
        held-out predictions within 5 %."""
        costs = step.Costs(mfu=0.55, mbu=0.8, overlap=0.2, pass_ms=0.9, layer_us=1.0, token_us=8.0, allreduce_us=8.0)
        batch = np.array([2.0, 8, 24, 64, 160])
        made = step.step(GPUS["H100-SXM"], MODELS["Llama-3.1-8B"], step.Draft("eagle"), batch=batch, gamma=3,
                         context=512.0, acceptance_length=2.9, costs=costs)["speedup"]
        result = fidelity.held_out(setting(), points(batch, made, gamma=3, length=2.9), fidelity.step_v2)
        assert result.error.abs().max() < 0.05


class TestBenchSlice:
    def test_the_benchmark_on_two_series(self):
        """bench/bench_fidelity.py's evaluation on the EAGLE-3 paper's SGLang series, so that it
        cannot rot: v1 as the explorer calibrates it misses EAGLE-1's dip below 1."""
        chosen = [(s, p) for s, p in SERIES if s.name.startswith("EAGLE-3 paper, SGLang")]
        found = {s.name.rsplit(", ", 1)[1]: fidelity.summarise(fidelity.held_out(s, p, fidelity.roofline_v1))
                 for s, p in chosen}
        assert found["EAGLE-3 head"]["points"] == 7 and found["EAGLE-3 head"]["sign_right"] == 1.0
        assert found["EAGLE head"]["sign_right"] < 0.5 and not math.isnan(found["EAGLE head"]["worst_error"])
