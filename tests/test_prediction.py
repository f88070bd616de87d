"""Tests for specviz.results.prediction: each paired run predicted in its own setting, decoding only
or at its own load, and the calibrations, on known data and on runs the step model made."""

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from conftest import PRESETS, SAMPLES, SWEEP, make_scenario, raw_frame, runs_frame
from specviz import calculator, scenario, workload
from specviz.model import calibration, spec, step
from specviz.results import explorer, extra, prediction
from specviz.results.store import Store

GPUS, MODELS = PRESETS.gpus, PRESETS.models
SCENARIO = make_scenario(target="Llama-3.1-8B")


class TestRunTokens:
    def test_tokens_per_request_from_the_throughputs(self):
        """2 requests/s, 200 output tokens/s and 4,200 tokens/s in all: 100 out and 2,000 in a request."""
        runs = raw_frame([{"request_throughput": 2.0, "output_throughput": 200.0, "total_token_throughput": 4200.0},
                          {"request_throughput": 2.0, "output_throughput": 200.0},  # no total: unknown
                          {"request_throughput": 0.0, "output_throughput": 200.0, "total_token_throughput": 4200.0},
                          {"request_throughput": 400.0, "output_throughput": 200.0, "total_token_throughput": 4200.0}])
        tokens = prediction.run_tokens(runs)
        assert tokens.iloc[0].tolist() == [2000.0, 100.0]

        assert tokens.iloc[1:].isna().all(axis=None)  # no total; no requests; half a token out a request


@pytest.mark.samples
def test_a_file_s_own_tokens_per_request_come_first():
    """GuideLLM's tokens per second are means of rate series: their ratio gave 513 tokens in a
    request where its requests held 257.1 (its prompt_token_count mean) and 128 out."""
    store = Store(":memory:")
    store.import_file("guidellm_benchmarks.json", (SAMPLES / "guidellm_benchmarks.json").read_bytes())
    tokens = prediction.run_tokens(store.shown_runs({}).frame)
    assert tokens.iloc[0].tolist() == [257.0, 128.0]


def loaded_runs(chosen, costs: step.Costs, batch: list[float], prompt: int, output: int) -> pd.DataFrame:
    """Paired runs of a steady load of requests of ``prompt`` tokens in and ``output`` out, measured on
    the step model at ``costs`` (each step carrying the arriving prompts, at the requests' mean context),
    with the throughputs a benchmark tool reports for them."""
    b = np.asarray(batch, dtype=float)
    truth = step.step(chosen.gpu, chosen.target, chosen.draft, batch=b, gamma=4, context=prompt + output / 2,
                      acceptance_length=3.2, tp=chosen.tp, costs=costs, prompt_tokens=prompt,
                      output_tokens=output)["speedup"]
    served = lambda rate: {"output_throughput": rate, "request_throughput": rate / output,
                           "total_token_throughput": rate * (prompt + output) / output}
    return explorer.pair_with_baselines(runs_frame(
        [{"concurrency": c, **served(100.0 * c)} for c in batch]
        + [{"concurrency": c, **served(100.0 * c * s), "spec_method": "eagle", "num_speculative_tokens": 4,
            "acceptance_length": 3.2, "label": "eagle"} for c, s in zip(batch, truth)]))


class TestLoads:
    EAGLE = replace(SCENARIO, draft=step.Draft("eagle"), draft_id="eagle")
    TRUE = step.Costs(mfu=0.6, mbu=0.8, overlap=0.0, step_ms=2.0, token_us=12.0, draft_pass_us=270.0, speculation_ms=1.05)

    def test_a_run_of_known_tokens_is_predicted_at_its_load(self):
        paired = loaded_runs(self.EAGLE, self.TRUE, [1, 16, 64], 2000, 100)
        predicted = prediction.predict(paired, self.EAGLE, PRESETS, 1024, loads=True)
        loaded = workload.steady_load(self.EAGLE, 2000, 100)
        alpha = predicted.alpha.to_numpy()
        expected = calculator.evaluate_scenario(loaded, alpha, 4, [1, 16, 64], 2050)["speedup"]
        np.testing.assert_allclose(predicted.predicted_speedup, expected, rtol=1e-12)
        assert (predicted.prompt_tokens == 2000).all() and (predicted.output_tokens == 100).all()
        assert predicted.setting[0] == "Llama-3.1-8B · H100-SXM · eagle · vllm-v1 · ISL 2000 · OSL 100"
        decoding = prediction.predict(paired, self.EAGLE, PRESETS, 1024)  # the default: decoding only
        assert decoding.prompt_tokens.isna().all() and (decoding.predicted_speedup > predicted.predicted_speedup).all()
        unknown = prediction.predict(explorer.pair_with_baselines(SWEEP), SCENARIO, PRESETS, 0, loads=True)
        pd.testing.assert_series_equal(unknown.predicted_speedup,
                                       prediction.predict(explorer.pair_with_baselines(SWEEP), SCENARIO, PRESETS).predicted_speedup)

    def test_a_sweep_s_runs_of_a_few_tokens_apart_share_their_median_load(self):
        """vLLM's random dataset draws each request's lengths: one file's runs came out 264–275 tokens
        out of 999 in. Within 20 % of their median they are one load (and one calibration); a run of
        another load stays apart."""
        paired = loaded_runs(self.EAGLE, self.TRUE, [1, 8, 32], 999, 270)
        paired["output_throughput"] *= [264 / 270, 1.0, 275 / 270]  # their tokens out: 264, 270 and 275
        paired["total_token_throughput"] = paired["output_throughput"] + 999 * paired["request_throughput"]
        far = loaded_runs(self.EAGLE, self.TRUE, [64], 4000, 100)
        predicted = prediction.predict(pd.concat([paired, far], ignore_index=True), self.EAGLE, PRESETS, 1024,
                                     loads=True)
        assert predicted.output_tokens.tolist() == [270, 270, 270, 100]
        assert predicted.prompt_tokens.tolist() == [999, 999, 999, 4000]
        assert predicted.setting.nunique() == 2

    def test_a_calibration_at_the_runs_load_finds_the_costs_that_made_them(self):
        """Runs of 2,000 tokens in and 100 out: fitted at their load, the fit meets every point and its
        band holds the speedup the costs that made them give at a batch between; fitted decoding only,
        no costs meet them as closely."""
        paired = loaded_runs(self.EAGLE, self.TRUE, [1, 8, 32, 64, 128], 2000, 100)
        predicted = prediction.predict(paired, self.EAGLE, PRESETS, 1024, loads=True)
        (fit,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024, loads=True)
        assert fit.setting.endswith("ISL 2000 · OSL 100") and fit.scenario.prefill and fit.scenario.context == 2050
        assert fit.rms_error < 0.01 and not fit.warnings
        band = fit.fit.predict(16, 4, 2050, 3.2)
        true_16 = step.step(self.EAGLE.gpu, self.EAGLE.target, self.EAGLE.draft, batch=16, gamma=4, context=2050,
                            acceptance_length=3.2, costs=self.TRUE, prompt_tokens=2000, output_tokens=100)["speedup"]
        assert band["low"][0] <= float(true_16) <= band["high"][0]
        (decoding,) = prediction.calibrate_settings(prediction.predict(paired, self.EAGLE, PRESETS, 1024), self.EAGLE,
                                                  PRESETS, 1024)
        assert decoding.rms_error > 30 * fit.rms_error > 0  # 0.14 and 0.004
        # The calibration in use predicts its runs as the calculator opened at its scenario would.
        again = prediction.predict(paired, self.EAGLE, PRESETS, 1024, prediction.calibration_in_use("step", [fit], self.EAGLE),
                                 loads=True)
        assert (again.costs == "calibrated").all()
        np.testing.assert_allclose(again.predicted_speedup, calculator.evaluate_scenario(
            fit.scenario, again.alpha.to_numpy(), 4, again.concurrency.to_numpy(), 2050)["speedup"], rtol=1e-12)


class TestPredict:
    def test_alpha_comes_from_the_acceptance_length(self):
        predicted = prediction.predict(explorer.pair_with_baselines(SWEEP), SCENARIO, PRESETS)
        assert predicted.alpha[0] == pytest.approx(spec.alpha_from_acceptance_length(3.0, 4))
        # The runs name no model or GPU: the scenario's, with the EAGLE head their method names.
        eagle = replace(SCENARIO, draft=step.Draft("eagle"), draft_id="eagle")
        direct = calculator.evaluate_scenario(eagle, predicted.alpha[0], 4, 1, 0)["speedup"]
        assert predicted.predicted_speedup[0] == pytest.approx(float(direct))
        # No error beside it: the gap would be between the run's setup and the scenario's (an analyst's pass).
        assert math.isnan(predicted.error[0])
        low, high = calculator.speedup_band(eagle, predicted.alpha[0], 4, 1, 0)
        assert (predicted.predicted_low[0], predicted.predicted_high[0]) == pytest.approx((float(low), float(high)))
        assert predicted.setting[0] == "Llama-3.1-8B · H100-SXM · eagle · vllm-v1" and not predicted.own_setting[0]

    def test_each_run_in_its_own_setting(self, example_runs):
        """The examples name Llama-3.1-8B on an H100: predicted so, whatever the sidebar says."""
        paired = explorer.pair_with_baselines(example_runs)
        qwen = make_scenario()
        theirs = prediction.predict(paired, qwen, PRESETS, 1024)
        mine = prediction.predict(paired, SCENARIO, PRESETS, 1024)
        assert theirs.own_setting.all() and set(theirs.setting.str.split(" · ").str[0]) == {"Llama-3.1-8B"}
        pd.testing.assert_series_equal(theirs.predicted_speedup, mine.predicted_speedup)

    def test_a_calibration_in_use_predicts_its_setting_s_runs(self):
        """The settings fitted without warnings are predicted at their fitted costs, as the calculator
        opened there predicts them; a ratios fit predicts every run, without a band; a suspect fit none."""
        paired = explorer.pair_with_baselines(SWEEP)
        preset = prediction.predict(paired, SCENARIO, PRESETS)
        label = preset.setting[0]
        fitted = replace(SCENARIO, draft=step.Draft("eagle"), draft_id="eagle",
                         costs=replace(SCENARIO.costs, step_ms=2.0, token_us=20.0))
        one = prediction.SettingFit(label, fitted, None, 2, 0.0, [])
        use = prediction.calibration_in_use("step", [one], SCENARIO)
        assert use == {label: fitted}
        calibrated = prediction.predict(paired, SCENARIO, PRESETS, calibrated=use)
        alpha = calibrated.alpha[0]
        low, high = calculator.speedup_band(fitted, alpha, 4, 1, 0)
        expected = (float(calculator.evaluate_scenario(fitted, alpha, 4, 1, 0)["speedup"]), float(low), float(high))
        assert tuple(calibrated.loc[0, ["predicted_speedup", "predicted_low", "predicted_high"]]) == pytest.approx(expected)
        assert calibrated.costs[0] == "calibrated" and preset.costs[0] == "preset"
        assert calibrated.predicted_speedup[0] != pytest.approx(preset.predicted_speedup[0])
        assert prediction.calibration_in_use("step", [replace(one, warnings=["fit.edge"])], SCENARIO) == {}
        ratios = {"verify_cost": 1.2, "draft_cost": 0.05, "rms_error": 0.0, "points": 2}
        given = prediction.calibration_in_use("ratios", ratios, SCENARIO)
        by_ratios = prediction.predict(paired, SCENARIO, PRESETS, calibrated=given)
        assert by_ratios.predicted_speedup[0] == pytest.approx(float(spec.speedup(alpha, 4, 1.2, 0.05)))
        assert by_ratios.predicted_low[0] == by_ratios.predicted_high[0] == by_ratios.predicted_speedup[0]
        assert prediction.calibration_in_use("ratios", {**ratios, "verify_cost": 0.9}, SCENARIO) is None
        assert prediction.calibration_in_use("step", None, SCENARIO) is None

    def test_vllm_rate_converts_through_gamma(self):
        frame = runs_frame([{"concurrency": 1, "output_throughput": 100},
                            {"concurrency": 1, "output_throughput": 200, "num_speculative_tokens": 4,
                             "acceptance_rate": 0.5904}])
        predicted = prediction.predict(explorer.pair_with_baselines(frame), SCENARIO, PRESETS)
        assert predicted.alpha[0] == pytest.approx(0.8, abs=1e-6)  # not 0.5904

    def test_an_mtp_run_is_predicted_at_the_tokens_a_step_it_made(self):
        """A DeepSeek-V3 server drafting 3 tokens with its one MTP layer, 2.60 tokens a step: α 0.909
        at the layer's trained position (the chain's 0.717 would give the reused layer's 2.12), and
        2.95, more than the layer makes even at α = 1 (2.86), gets no prediction."""
        deepseek = make_scenario(target="DeepSeek-V3", gpu="B200", draft="mtp")
        frame = runs_frame([{"concurrency": 8, "output_throughput": 100},
                            {"concurrency": 8, "output_throughput": 200, "num_speculative_tokens": 3,
                             "acceptance_length": 2.60},
                            {"concurrency": 8, "output_throughput": 210, "num_speculative_tokens": 3,
                             "acceptance_length": 2.95}])
        predicted = prediction.predict(explorer.pair_with_baselines(frame), deepseek, PRESETS)
        made = predicted[predicted.acceptance_length == 2.60].iloc[0]
        assert made.alpha == pytest.approx(0.909, abs=1e-3) and made.expected_tokens == 2.60
        assert made.predicted_speedup == pytest.approx(float(calculator.evaluate_scenario(deepseek, made.alpha, 3, 8, 0)["speedup"]))
        assert deepseek.expected_tokens(made.alpha, 3) == pytest.approx(2.60)
        beyond = predicted[predicted.acceptance_length == 2.95].iloc[0]
        assert math.isnan(beyond.alpha) and math.isnan(beyond.predicted_speedup) and beyond.beyond_reuse
        assert not made.beyond_reuse

    def test_a_tree_draft_is_not_predicted_as_a_chain(self):
        """SpecForge's γ 7, top-k 10, 60 draft tokens: a 60-node verify pass priced as 8 had read
        2.53–2.81× against 1.21–1.35× measured (an analyst's pass). Not predicted, and said; a
        top-k of 1 (a chain) and SGLang's server_info are read alike."""
        tree = {"topk": 10, "num_draft_tokens": 60}
        frame = runs_frame([{"concurrency": 8, "output_throughput": 600, "extra": json.dumps(tree)},
                            {"concurrency": 8, "output_throughput": 780, "spec_method": "eagle3", "num_speculative_tokens": 7,
                             "acceptance_length": 4.4, "extra": json.dumps(tree)},
                            {"concurrency": 16, "output_throughput": 900},
                            {"concurrency": 16, "output_throughput": 1500, "spec_method": "eagle3", "num_speculative_tokens": 3,
                             "acceptance_length": 2.6, "extra": json.dumps({"topk": 1, "num_draft_tokens": 4})}])
        predicted = prediction.predict(explorer.pair_with_baselines(frame), SCENARIO, PRESETS)
        by_batch = predicted.set_index("concurrency")
        assert by_batch.at[8, "tree_draft"] and math.isnan(by_batch.at[8, "alpha"])
        assert math.isnan(by_batch.at[8, "predicted_speedup"])
        assert not by_batch.at[16, "tree_draft"] and by_batch.at[16, "predicted_speedup"] > 0
        sglang = {"server_info": {"speculative_eagle_topk": 8, "speculative_num_draft_tokens": 64}}
        assert extra.tree_width(json.dumps(sglang)) == 8 and extra.tree_width(json.dumps(tree)) == 10
        for chain in ('{"topk": 1}', '{"server_info": {"speculative_eagle_topk": 1}}', "[]", "not json", None, '{"topk": true}',
                      '{"topk": Infinity}', '{"topk": NaN}'):
            assert extra.tree_width(chain) is None

    def test_rows_without_gamma_get_no_prediction(self):
        frame = runs_frame([{"concurrency": 1, "output_throughput": 100},
                            {"concurrency": 1, "output_throughput": 200, "spec_method": "eagle"}])
        predicted = prediction.predict(explorer.pair_with_baselines(frame), SCENARIO, PRESETS)
        assert math.isnan(predicted.predicted_speedup[0]) and math.isnan(predicted.predicted_low[0])


class TestCalibrateRatios:
    def test_recovers_exact_costs(self):
        g = np.array([2, 4, 6, 8, 3])
        alpha = np.array([0.6, 0.7, 0.8, 0.75, 0.9])
        measured = spec.speedup(alpha, g, 1.3, 0.07)
        frame = pd.DataFrame({"alpha": alpha, "expected_tokens": spec.expected_tokens(alpha, g), "num_speculative_tokens": g,
                              "measured_speedup": measured})
        fit = prediction.calibrate_ratios(frame)
        assert fit["verify_cost"] == pytest.approx(1.3) and fit["draft_cost"] == pytest.approx(0.07)
        assert fit["rms_error"] < 1e-12

    def test_runs_of_several_settings_in_one_fit_are_said(self):
        g = np.array([2, 4, 6, 3])
        alpha = np.array([0.6, 0.7, 0.8, 0.75])
        frame = pd.DataFrame({"alpha": alpha, "expected_tokens": spec.expected_tokens(alpha, g), "num_speculative_tokens": g,
                              "measured_speedup": spec.speedup(alpha, g, 1.3, 0.07),
                              "setting": ["A · H100 · eagle3 · sglang"] * 3 + ["B · H100 · mtp · vllm-v1"]})
        fit = prediction.calibrate_ratios(frame)
        (mixed,) = prediction.ratio_warnings(fit)
        assert mixed.key == "fit.ratios_mixed" and mixed.params == {
            "count": 2, "settings": "A · H100 · eagle3 · sglang; B · H100 · mtp · vllm-v1"}
        assert not prediction.ratio_warnings(prediction.calibrate_ratios(frame.assign(setting="A")))
        # One setting at two loads is one setting (an attack pass: "2 settings" under the Explorer's own load).
        loads = frame.assign(setting=["A · ISL 100 · OSL 200", "A · ISL 1000 · OSL 200"] * 2)
        assert not prediction.ratio_warnings(prediction.calibrate_ratios(loads))

    def test_too_few_points(self):
        assert prediction.calibrate_ratios(pd.DataFrame({"alpha": [0.5], "expected_tokens": [1.94],
                                                        "num_speculative_tokens": [4], "measured_speedup": [1.5]})) is None


class TestRunPresets:
    def test_names_as_benchmark_tools_write_them(self):
        runs = pd.DataFrame({"target_model": ["meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B", "Qwen/Qwen3-32B-FP8",
                                              "lmsys/vicuna-7b-v1.3", None],
                             "gpu": ["NVIDIA H100 80GB HBM3", "H100-SXM", "NVIDIA A100-SXM4-80GB", "A100", "H100 PCIe"]})
        found = prediction.run_presets(runs, MODELS, GPUS)
        assert found.target.tolist()[:3] == ["Llama-3.1-8B", "Llama-3.1-8B", "Qwen3-32B"]
        assert found.target[3:].isna().all()
        # An A100 without its memory names no preset; an H100 PCIe names its own (not the SXM card's).
        assert found.gpu.fillna("none").tolist() == ["H100-SXM", "H100-SXM", "A100-80GB", "none", "H100-PCIe"]

    def test_a_served_alias_is_matched_by_its_tokenizer(self):
        """AIPerf's --model is the server's name for it ("qwen3-fp8"); its tokenizer names the checkpoint.
        The run's own name comes first, and extra that is no object names nothing."""
        runs = pd.DataFrame({"target_model": ["qwen3-fp8", "Llama-3.1-8B", "my-alias", "my-alias", "my-alias"],
                             "gpu": ["H100-SXM"] * 5,
                             "extra": ['{"tokenizer_id": "Qwen/Qwen3-32B-FP8"}', '{"tokenizer_id": "Qwen/Qwen3-32B"}',
                                       "[1, 2]", "{" * 100_000, None]})
        assert prediction.run_presets(runs, MODELS, GPUS).target.fillna("none").tolist() == [
            "Qwen3-32B", "Llama-3.1-8B", "none", "none", "none"]


class TestRunSettings:
    def test_what_the_runs_name_and_the_scenarios_otherwise(self):
        runs = pd.DataFrame({
            "target_model": ["meta-llama/Llama-3.1-70B-Instruct", "Qwen/Qwen3-32B", "my-own-model", None],
            "gpu": ["NVIDIA H100 80GB HBM3", "H200", "H100", None],
            "spec_method": ["eagle3", "draft_model", "MTP", None],
            "draft_model": [None, "Qwen/Qwen3-0.6B", None, "a draft of my own"],
            "engine": ["vllm", "sglang", "vllm", "tgi"], "engine_version": ["0.7.3", None, "0.11.0", None]})
        found = prediction.run_settings(runs, SCENARIO, PRESETS)
        assert found.to_dict("records") == [
            {"target": "Llama-3.1-70B", "gpu": "H100-SXM", "draft": "eagle3", "engine": "vllm-v0", "own": True},
            {"target": "Qwen3-32B", "gpu": "H200", "draft": "Qwen3-0.6B", "engine": "sglang", "own": True},
            # An MTP module drafts as an EAGLE head does; the model is the scenario's.
            {"target": "Llama-3.1-8B", "gpu": "H100-SXM", "draft": "eagle", "engine": "vllm-v1", "own": False},
            {"target": "Llama-3.1-8B", "gpu": "H100-SXM", "draft": SCENARIO.draft_id, "engine": "vllm-v1", "own": False}]

    def test_a_draft_model_on_another_target_is_that_targets_default(self):
        runs = pd.DataFrame({"target_model": ["Llama-3.1-70B"], "gpu": ["H100-SXM"], "spec_method": [None],
                             "draft_model": [None], "engine": [None], "engine_version": [None]})
        assert prediction.run_settings(runs, SCENARIO, PRESETS).draft[0] == "Llama-3.2-1B"


class TestSettingScenario:
    def test_the_scenario_itself_for_its_own_setting(self):
        own = (SCENARIO.target_id, SCENARIO.gpu.id, SCENARIO.draft_id, SCENARIO.engine.id)
        assert prediction.setting_scenario(SCENARIO, *own, PRESETS) is SCENARIO

    def test_another_setting_at_its_engines_preset(self):
        other = prediction.setting_scenario(SCENARIO, "Qwen3-32B", "H200", "eagle3", "sglang", PRESETS)
        assert (other.target.name, other.gpu.id, other.draft, other.engine.id) == (
            "Qwen3-32B", "H200", step.Draft("eagle3"), "sglang")
        assert other.costs == scenario.preset_costs(PRESETS.engines["sglang"])


class TestRatioWarnings:
    def test_a_verify_pass_cheaper_than_a_plain_one(self):
        notices = prediction.ratio_warnings({"verify_cost": 0.085, "draft_cost": 0.342})
        assert [n.key for n in notices] == ["fit.verify_below_one"] and notices[0].params["verify_cost"] == 0.085
        assert prediction.ratio_warnings({"verify_cost": 1.3, "draft_cost": 0.07}) == []


def measured_points(chosen, costs: step.Costs, batch: list[float], noise: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """Paired runs measured on the step model at ``costs`` (with relative noise), as predict returns them."""
    rng = np.random.default_rng(seed)
    b = np.asarray(batch, dtype=float)
    truth = step.step(chosen.gpu, chosen.target, chosen.draft, batch=b, gamma=4, context=1024, acceptance_length=3.2,
                      tp=chosen.tp, costs=costs)["speedup"] * rng.normal(1, noise, b.size)
    runs = runs_frame([{"concurrency": c, "output_throughput": 100.0 * c} for c in batch]
                      + [{"concurrency": c, "output_throughput": 100.0 * c * s, "spec_method": "eagle",
                          "num_speculative_tokens": 4, "acceptance_length": 3.2, "label": "eagle"}
                         for c, s in zip(batch, truth)])
    return prediction.predict(explorer.pair_with_baselines(runs), chosen, PRESETS, 1024)


class TestCalibrateSettings:
    EAGLE = replace(SCENARIO, draft=step.Draft("eagle"), draft_id="eagle")
    TRUE = step.Costs(mfu=0.6, mbu=0.8, overlap=0.0, step_ms=2.0, token_us=12.0, draft_pass_us=270.0, speculation_ms=1.05)

    def test_recovers_the_costs_that_made_the_runs(self):
        predicted = measured_points(self.EAGLE, self.TRUE, [1, 8, 32, 64, 128])
        (fit,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024)
        assert fit.setting == "Llama-3.1-8B · H100-SXM · eagle · vllm-v1" and fit.points == 5 and not fit.warnings
        assert fit.rms_error < 0.01
        # The draws that fit put the true costs inside their band, and the medians near them.
        assert abs(fit.scenario.costs.step_ms - 2.0) < 0.5 and abs(fit.scenario.costs.token_us - 12.0) < 4
        band = fit.fit.predict(16, 4, 1024, 3.2)
        true_16 = step.step(self.EAGLE.gpu, self.EAGLE.target, self.EAGLE.draft, batch=16, gamma=4, context=1024,
                            acceptance_length=3.2, costs=self.TRUE)["speedup"]
        assert band["low"][0] <= float(true_16) <= band["high"][0]

    def test_a_setting_needs_two_runs(self):
        assert prediction.calibrate_settings(measured_points(self.EAGLE, self.TRUE, [8]), self.EAGLE, PRESETS) == []

    def test_runs_that_cannot_be_fitted_say_so(self):
        """Speedups that rise with the batch: no non-negative costs make them."""
        predicted = measured_points(self.EAGLE, self.TRUE, [1, 64])
        predicted["measured_speedup"] = [1.1, 2.5]
        (fit,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024)
        assert "fit.no_solution" in fit.warnings


    def test_repeats_at_one_batch_are_refused_not_fitted(self):
        """Three runs of one setting at one concurrency (a benchmark's repeats; an explorer analyst's
        pass had the page stop on numpy's "zero-size array" here): refused, saying why."""
        predicted = measured_points(self.EAGLE, self.TRUE, [8, 8, 8])
        predicted["measured_speedup"] = [1.80, 1.82, 1.79]
        (refused,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024)
        assert isinstance(refused, prediction.SettingRefused) and refused.reason.key == "calibration.one_setting"
        assert str(refused.reason).startswith("the 3 points are all at batch 8, γ 4, context 1,024: repeats of one")
        with_another = measured_points(self.EAGLE, self.TRUE, [8, 8, 64])
        assert isinstance(prediction.calibrate_settings(with_another, self.EAGLE, PRESETS, 1024)[0], prediction.SettingFit)

    def test_a_setting_of_more_runs_than_a_fit_takes_is_refused_with_its_size(self, monkeypatch):
        monkeypatch.setattr(calibration, "MAX_FIT_CELLS", 4 * 400)  # 4 points with measured acceptance
        predicted = measured_points(self.EAGLE, self.TRUE, [1, 8, 32, 64, 128])
        (refused,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024)
        assert isinstance(refused, prediction.SettingRefused) and refused.points == 5
        assert refused.reason.key == "calibration.too_large" and refused.reason.params["most"] == 4
        (fit,) = prediction.calibrate_settings(predicted.iloc[:4], self.EAGLE, PRESETS, 1024)
        assert isinstance(fit, prediction.SettingFit)


    def test_past_the_time_limit_the_settings_left_are_said_not_fitted(self, monkeypatch):
        clock = iter(range(0, 600, 6))  # each look at the clock 6 s after the last
        monkeypatch.setattr(prediction.time, "monotonic", lambda: next(clock))
        predicted = measured_points(self.EAGLE, self.TRUE, [1, 8, 32, 64, 128])
        (fit,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024, time_limit_s=10)  # at 6 s
        assert isinstance(fit, prediction.SettingFit)
        (refused,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024, time_limit_s=5)
        assert isinstance(refused, prediction.SettingRefused) and refused.points == 5
        assert (refused.reason.key, refused.reason.params) == ("fit.time_limit", {"seconds": 5})


def test_an_mtp_run_that_measured_its_positions_is_predicted_at_its_own_reuse_factor():
    """vLLM bench serve writes the share of drafts accepted at each position: 0.9, 0.765, 0.612 is a
    DeepSeek-V3 layer keeping 0.94 past its trained position (conditional 0.9, 0.85, 0.8), its 3.277
    tokens a step beyond the sidebar's 0.62 (at most 2.86). Predicted at 0.94, not dropped; a run
    without the shares keeps the sidebar's factor."""
    deepseek = make_scenario(target="DeepSeek-V3", gpu="B200", draft="mtp")
    frame = runs_frame([{"concurrency": 8, "output_throughput": 100},
                        {"concurrency": 8, "output_throughput": 250, "num_speculative_tokens": 3,
                         "acceptance_length": 3.277, "per_position_acceptance": [0.9, 0.765, 0.612]},
                        {"concurrency": 8, "output_throughput": 200, "num_speculative_tokens": 3,
                         "acceptance_length": 2.60}])
    predicted = prediction.predict(explorer.pair_with_baselines(frame), deepseek, PRESETS)
    own = predicted[predicted.acceptance_length == 3.277].iloc[0]
    assert own.mtp_reuse == 0.94 and not own.beyond_reuse
    at_own = replace(deepseek, mtp_reuse=0.94)
    assert at_own.expected_tokens(own.alpha, 3) == pytest.approx(3.277)
    assert own.predicted_speedup == pytest.approx(float(calculator.evaluate_scenario(at_own, own.alpha, 3, 8, 0)["speedup"]))
    sidebar = predicted[predicted.acceptance_length == 2.60].iloc[0]
    assert sidebar.mtp_reuse == 0.62 and sidebar.alpha == pytest.approx(0.909, abs=1e-3)
