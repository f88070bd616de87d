"""Tests for specviz.explorer: pairing, crossovers, predictions and calibration on known data."""

import math

import numpy as np
import pandas as pd
import pytest

from specviz import calculator, explorer, roofline, settings, spec
from specviz.schema import RUN_COLUMNS
from specviz.store import Store

DATA = settings.get("SPECVIZ_DATA_DIR")
GPUS, MODELS = roofline.load_gpus(DATA), roofline.load_models(DATA)
SCENARIO = calculator.Scenario(GPUS["H100-SXM"], MODELS["Llama-3.1-8B"], draft_cost=0.04)


def runs_frame(rows: list[dict]) -> pd.DataFrame:
    """Canonical runs as the store returns them, from a few fields per row."""
    base = {c: None for c in RUN_COLUMNS}
    frame = pd.DataFrame([{**base, "run_id": str(i), "source_file": "results/f.csv", **r} for i, r in enumerate(rows)])
    return explorer.with_load(frame.astype({c: "float64" for c, k in RUN_COLUMNS.items()
                                            if k in ("DOUBLE", "BIGINT", "INTEGER")}))


SWEEP = runs_frame(
    [{"workload": "chat", "concurrency": c, "output_throughput": base} for c, base in ((1, 100), (8, 600), (64, 2000))]
    + [{"workload": "chat", "concurrency": c, "output_throughput": sd, "spec_method": "eagle",
        "num_speculative_tokens": 4, "acceptance_length": 3.0, "label": "eagle"}
       for c, sd in ((1, 250), (8, 900), (64, 1800))])


@pytest.fixture(scope="module")
def example_runs():
    s = Store(":memory:")
    s.seed_examples(sorted((DATA / "examples").glob("*.csv")))
    runs = explorer.with_load(s.runs())
    s.close()
    return runs


class TestWithLoad:
    def test_request_rate_stands_in_for_missing_concurrency(self):
        frame = runs_frame([{"request_rate": 10.0}, {"concurrency": 4.0}])
        assert list(frame.load) == [10.0, 4.0] and list(frame.load_kind) == ["request_rate", "concurrency"]

    def test_series_names_label_then_method_then_file(self):
        frame = runs_frame([{"label": "A", "workload": "code"}, {"spec_method": "ngram", "num_speculative_tokens": 4},
                            {}])
        assert list(frame.series) == ["A · code", "ngram γ=4", "f.csv"]


class TestFilterRuns:
    def test_empty_choice_keeps_all(self):
        assert len(explorer.filter_runs(SWEEP, {"workload": [], "label": ["eagle"]})) == 3


class TestPairWithBaselines:
    def test_throughput_ratio_at_equal_concurrency(self):
        paired = explorer.pair_with_baselines(SWEEP)
        assert list(paired.concurrency) == [1, 8, 64]
        np.testing.assert_allclose(paired.measured_speedup, [2.5, 1.5, 0.9])

    def test_tpot_ratio_where_throughput_is_missing(self):
        frame = runs_frame([{"concurrency": 1, "mean_tpot_ms": 10.0},
                            {"concurrency": 1, "mean_tpot_ms": 4.0, "spec_method": "eagle"}])
        assert explorer.pair_with_baselines(frame).measured_speedup[0] == 2.5

    def test_no_baseline_no_pair(self):
        assert explorer.pair_with_baselines(SWEEP[SWEEP.spec_method.notna()]).empty


class TestCrossoverConcurrency:
    def test_first_losing_concurrency(self):
        crossover = explorer.crossover_concurrency(explorer.pair_with_baselines(SWEEP))
        assert crossover.crossover_concurrency.tolist() == [64]


class TestSweepPeaks:
    def test_peak_per_series(self):
        peaks = explorer.sweep_peaks(SWEEP).set_index("series")
        assert peaks.loc["eagle · chat", "load"] == 64 and peaks.loc["eagle · chat", "output_throughput"] == 1800

    def test_example_sweep_peaks_at_the_top_concurrency(self, example_runs):
        assert set(explorer.sweep_peaks(example_runs).load) == {128}


class TestWorkloadAcceptance:
    def test_examples_follow_seed_002s_order(self, example_runs):
        summary = explorer.workload_acceptance(example_runs).set_index("workload")
        assert summary.loc["json", "acceptance_length"] > summary.loc["code", "acceptance_length"] > summary.loc["chat", "acceptance_length"]
        assert summary.loc["chat", "zero_accept_rate"] == pytest.approx(0.27)


class TestPredict:
    def test_alpha_comes_from_the_acceptance_length(self):
        predicted = explorer.predict(explorer.pair_with_baselines(SWEEP), SCENARIO)
        assert predicted.alpha[0] == pytest.approx(spec.alpha_from_acceptance_length(3.0, 4))
        direct = roofline.evaluate(SCENARIO.gpu, SCENARIO.target, alpha=predicted.alpha[0], gamma=4, batch=1,
                                   draft_cost=0.04)["speedup"]
        assert predicted.predicted_speedup[0] == pytest.approx(float(direct))
        assert predicted.error[0] == pytest.approx(2.5 - float(direct))

    def test_vllm_rate_converts_through_gamma(self):
        frame = runs_frame([{"concurrency": 1, "output_throughput": 100},
                            {"concurrency": 1, "output_throughput": 200, "num_speculative_tokens": 4,
                             "acceptance_rate": 0.5904}])
        predicted = explorer.predict(explorer.pair_with_baselines(frame), SCENARIO)
        assert predicted.alpha[0] == pytest.approx(0.8, abs=1e-6)  # not 0.5904

    def test_rows_without_gamma_get_no_prediction(self):
        frame = runs_frame([{"concurrency": 1, "output_throughput": 100},
                            {"concurrency": 1, "output_throughput": 200, "spec_method": "eagle"}])
        assert math.isnan(explorer.predict(explorer.pair_with_baselines(frame), SCENARIO).predicted_speedup[0])


class TestCalibrateRatios:
    def test_recovers_exact_costs(self):
        g = np.array([2, 4, 6, 8, 3])
        alpha = np.array([0.6, 0.7, 0.8, 0.75, 0.9])
        measured = spec.speedup(alpha, g, 1.3, 0.07)
        frame = pd.DataFrame({"alpha": alpha, "num_speculative_tokens": g, "measured_speedup": measured})
        fit = explorer.calibrate_ratios(frame)
        assert fit["verify_cost"] == pytest.approx(1.3) and fit["draft_cost"] == pytest.approx(0.07)
        assert fit["rms_error"] < 1e-12

    def test_too_few_points(self):
        assert explorer.calibrate_ratios(pd.DataFrame({"alpha": [0.5], "num_speculative_tokens": [4],
                                                        "measured_speedup": [1.5]})) is None


class TestCalibrateKnobs:
    def test_fits_the_synthetic_examples_far_better_than_the_pure_roofline(self, example_runs):
        predicted = explorer.predict(explorer.pair_with_baselines(example_runs), SCENARIO, 1024)
        pure_rms = float(np.sqrt((predicted.error ** 2).mean()))
        fit = explorer.calibrate_knobs(predicted, SCENARIO, 1024)
        assert fit["points"] == 24
        assert fit["rms_error"] < pure_rms / 4
        # The examples were made with mfu 0.6, mbu 0.8, overlap 0, 0.3 ms and 3 % noise.
        assert fit["basis"] == "throughput" and fit["overlap"] == 0.0
        assert abs(fit["mbu"] - 0.8) <= 0.1 and abs(fit["overhead_ms"] - 0.3) <= 0.2

    def test_exact_recovery_without_noise(self):
        knobs = {"mfu": 0.6, "mbu": 0.8, "overlap": 0.0, "overhead_ms": 0.3}
        alpha, gamma, batch = np.full(6, 0.75), np.full(6, 4.0), np.array([1, 4, 16, 32, 64, 128.0])
        measured = roofline.evaluate(SCENARIO.gpu, SCENARIO.target, alpha=alpha, gamma=gamma, batch=batch,
                                     draft_cost=0.04, **knobs)
        frame = pd.DataFrame({"alpha": alpha, "num_speculative_tokens": gamma, "concurrency": batch,
                              "measured_speedup": measured["speedup"],
                              "output_throughput": measured["spec_tokens_per_s"],
                              "baseline_output_throughput": measured["baseline_tokens_per_s"]})
        fit = explorer.calibrate_knobs(frame, SCENARIO)
        assert fit["rms_error"] < 1e-9 and fit["basis"] == "throughput"
        assert {k: fit[k] for k in knobs} == knobs

    def test_speedups_alone_fix_the_knobs_only_up_to_a_scale(self):
        # Halving mfu and mbu and doubling the overhead scales every pass: the same speedups.
        kw = dict(alpha=0.75, gamma=4, batch=np.array([1, 16, 64.0]), draft_cost=0.04, overlap=0.0)
        a = roofline.evaluate(SCENARIO.gpu, SCENARIO.target, mfu=0.6, mbu=0.8, overhead_ms=0.3, **kw)
        b = roofline.evaluate(SCENARIO.gpu, SCENARIO.target, mfu=0.3, mbu=0.4, overhead_ms=0.6, **kw)
        np.testing.assert_allclose(a["speedup"], b["speedup"])
        frame = pd.DataFrame({"alpha": 0.75, "num_speculative_tokens": 4.0, "concurrency": kw["batch"],
                              "measured_speedup": a["speedup"]})
        fit = explorer.calibrate_knobs(frame, SCENARIO)
        assert fit["basis"] == "speedup" and fit["rms_error"] < 1e-9


class TestLoadPublished:
    def test_every_row_has_a_source(self):
        published = explorer.load_published(DATA)
        assert published.source.notna().all() and len(published) >= 10
        eagle = published[published.study.str.startswith("EAGLE-3")].set_index("batch")
        assert eagle.loc[2, "value"] == 1.81 and eagle.loc[64, "value"] == 1.38
