"""Tests for specviz.model.fidelity: series from the published results, held-out evaluation, and the two
calibrators against data they generated themselves."""

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from specviz import settings
from specviz.model import calibration, fidelity, hf_config, roofline, spec, step
from specviz.results import explorer

DATA = settings.get("SPECVIZ_DATA_DIR")
SERIES = fidelity.series_of(explorer.load_published(DATA), DATA)
GPUS, MODELS = roofline.load_gpus(DATA), hf_config.load_models(DATA)


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
        assert all(s.tp == 8 and p.acceptance_length.notna().all() for s, p in magicdec)
        # StreamingLLM drafts keep 512 positions; SnapKV's best budget at 32,000 tokens is 2,049 (§5.2).
        assert {s.draft_kv_budget for s, _ in magicdec} == {512, 2049}
        snapkv = by_name["MagicDec, 8x H100, LLaMA-3.1-8B, self-speculation (SnapKV KV 2049), prefill 32000"]
        assert list(snapkv.measured_speedup) == [1.17, 1.37, 1.64, 2.01] and list(snapkv.gamma) == [3, 4, 5, 6]
        assert len(SERIES) == 35 and all(len(p) >= 3 for _, p in SERIES)
        # vLLM's DSpark runs on eight B300s, tensor parallel 8 with the experts spread over them (ep "on").
        dspark = [(s, p) for s, p in SERIES if "DSpark" in s.name]
        assert [s.step_draft.kind for s, _ in dspark] == ["block"] * 3 and all(s.ep and s.tp == 8 for s, _ in dspark)
        assert [list(p.gamma.unique()) for _, p in dspark] == [[5], [6], [7]]
        assert all(list(p.batch) == [1, 16, 32, 64, 128, 256] and p.acceptance_length.isna().all() for _, p in dspark)
        assert not any(s.ep for s, _ in SERIES if "DSpark" not in s.name)

    def test_a_row_s_expert_parallelism_is_read_in_any_case(self):
        assert [fidelity.expert_parallel(cell) for cell in (" On ", "true", "off", "0", "", np.nan, "maybe")] == [
            True, True, False, False, None, None, None]

    @pytest.mark.parametrize("benchmark, printed", [
        ("MT-Bench", [1.55, 1.29, 1.35, 1.28, 1.27, 1.09, 1.05]),
        ("HumanEval", [1.55, 1.53, 1.45, 1.35, 1.31, 1.37, 1.23]),
        ("SPEED-Bench", [1.69, 1.61, 1.54, 1.45, 1.40, 1.22, 1.25])])
    def test_the_bars_read_from_the_p_eagle_charts_keep_the_ratios_their_captions_print(self, benchmark, printed):
        """Each chart's EAGLE-3 and P-EAGLE bars, read at the pixel, were moved to the P/E ratio its
        caption prints; rounded to two decimals, each pair keeps it within 0.01."""
        by_name = {s.name: p for s, p in SERIES}
        name = "vLLM blog 2026, 1x B200, gpt-oss-20b MXFP4, {} K={}, " + benchmark + " (read from a chart)"
        eagle3, peagle = by_name[name.format("EAGLE-3", 3)], by_name[name.format("P-EAGLE", 7)]
        assert list(eagle3.batch) == list(peagle.batch) == [1, 2, 4, 8, 16, 32, 64]
        ratio = peagle.measured_speedup / eagle3.measured_speedup
        assert ratio.to_numpy() == pytest.approx(printed, abs=0.012)

    def test_runs_whose_acceptance_the_source_does_not_give_fit_it(self):
        """TensorRT-LLM's n-gram acceptance length (1.66) came from 3,000 conversations, not from the
        runs of 20 requests a batch slot, and their 1.96x at batch 1 exceeds it."""
        ngram = {s.name: p for s, p in SERIES}["TensorRT-LLM blog 7, 8x B200, Llama-4-Scout FP8, n-gram, second turn"]
        assert ngram.acceptance_length.isna().all() and ngram.measured_speedup.max() > 1.66

    def test_prompt_and_output_lengths_where_the_sources_state_them(self):
        lengths = {s.name: (s.prompt_tokens, s.output_tokens) for s, _ in SERIES}
        assert lengths["vLLM blog 2026, vLLM 0.14.1, 2x GB300, DeepSeek-R1 NVFP4, MTP 1 token, ISL 2k OSL 64"] == (2048, 64)
        assert lengths["ROCm blog 2026, vLLM 0.19, 4x MI355X, Kimi-K2.5 MXFP4, EAGLE-3 head"] == (1024, 1024)
        # Without them, decode only.
        assert lengths["EAGLE-3 paper, SGLang, H100, Llama-3.1-8B, EAGLE-3 head"] == (0, 1)


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


class TestModelError:
    def test_by_hand(self):
        predictions = pd.DataFrame({"error": [-0.2, -0.1, 0.0, 0.1, 0.2, np.nan]})
        # numpy's linear interpolation between the five errors: 10th at -0.16, 90th at 0.16.
        assert fidelity.model_error(predictions) == pytest.approx((-0.16, 0.16))

    def test_calibrations_figure_is_what_the_benchmark_measures(self):
        """calibration.MODEL_ERROR, which widens every band of the app, recomputed from the data: over
        the series whose metric the model predicts."""
        predictions = pd.concat([fidelity.held_out(s, p, fidelity.step_v2) for s, p in SERIES if s.predicted])
        assert fidelity.model_error(predictions) == pytest.approx(calibration.MODEL_ERROR, abs=5e-4)
        assert predictions["predicted_speedup"].notna().sum() == calibration.MODEL_ERROR_POINTS


class TestAtPresets:
    def test_it_prices_the_points_without_reading_the_ends(self):
        """The preset's draws alone: the two ends are not read (two others give the same figures), the
        median lies in its band, and a point without an acceptance length gets no figure."""
        name, rows = next((s, p) for s, p in SERIES if s.predicted and p["acceptance_length"].notna().all())
        inner = rows.iloc[1:-1]
        once = fidelity.at_presets(name, rows.iloc[[0, -1]])(inner)
        other = fidelity.at_presets(name, rows.iloc[[0, -1]].assign(measured_speedup=9.0))(inner)
        assert np.allclose(once["speedup"], other["speedup"])
        assert np.all(once["low"] <= once["speedup"]) and np.all(once["speedup"] <= once["high"])
        assert np.isnan(fidelity.at_presets(name, rows.iloc[[0, -1]])(inner.assign(acceptance_length=np.nan))["speedup"]).all()
        assert fidelity.at_presets(name, rows.iloc[[0, -1]].assign(acceptance_length=np.nan)) is None

    def test_calibrations_figures_before_a_calibration_are_what_the_benchmark_measures(self):
        """calibration.PRESET_*, which the calculator's and Claims' "How sure" say, recomputed from the
        data: the 2025-2026 series' held-out points that print an acceptance length."""
        predictions = pd.concat([fidelity.held_out(s, p, fidelity.at_presets) for s, p in SERIES
                                 if s.predicted and s.generation == "2025-2026"])
        summary = fidelity.summarise(predictions)
        assert summary["points"] == calibration.PRESET_POINTS
        assert summary["median_error"] == pytest.approx(calibration.PRESET_MEDIAN_MISS, abs=5e-4)
        assert fidelity.coverage(predictions, calibration.MODEL_ERROR) == pytest.approx(calibration.PRESET_BAND_HOLDS,
                                                                                         abs=5e-3)
        # What the "How sure" line and calibration.py say of them: every one below its measurement, all but
        # one from the P-EAGLE post (gpt-oss-20b on one B200); with the 2023-2024 block the band holds 84 %.
        done = predictions.dropna(subset=["predicted_speedup"])
        assert (done["error"] < 0).all()
        assert done["series"].str.contains("gpt-oss-20b").sum() == calibration.PRESET_POINTS - 1
        both = pd.concat([fidelity.held_out(s, p, fidelity.at_presets) for s, p in SERIES if s.predicted])
        assert fidelity.coverage(both, calibration.MODEL_ERROR) == pytest.approx(0.84, abs=5e-3)


class TestCoverage:
    def test_a_fit_s_miss_at_its_own_points_widens_where_it_is_wider(self):
        # A fit 50 % above its own points: 1.2 / 1.5 = 0.8 holds 0.85, which ±10 % (1.2 / 1.1) does not.
        predictions = pd.DataFrame({"draw_low": [1.2, 1.2], "draw_high": [1.2, 1.2], "measured_speedup": [0.85, 1.4],
                                    "own_low": [0.0, 0.0], "own_high": [0.5, 0.0]})
        assert fidelity.coverage(predictions, (-0.1, 0.1)) == pytest.approx(0.5)
        assert fidelity.coverage(predictions.drop(columns=["own_low", "own_high"]), (-0.1, 0.1)) == 0.0

    def test_by_hand(self):
        predictions = pd.DataFrame({"draw_low": [1.0, 1.0, 1.0, np.nan], "draw_high": [1.2, 1.2, 1.2, np.nan],
                                    "measured_speedup": [1.1, 1.3, 0.85, 1.0]})
        assert fidelity.coverage(predictions, (0.0, 0.0)) == pytest.approx(1 / 3)
        # Widened by ±10 %: 1.0 / 1.1 to 1.2 / 0.9 holds 1.1 and 1.3, not 0.85.
        assert fidelity.coverage(predictions, (-0.1, 0.1)) == pytest.approx(2 / 3)


class TestStepV2:
    def test_recovers_what_the_step_model_made(self):
        """Points made by the step model at costs inside the engine's priors, acceptance known: the
        held-out predictions within 5 %."""
        costs = step.Costs(mfu=0.55, mbu=0.8, overlap=0.2, step_ms=0.9, layer_us=1.0, token_us=8.0, allreduce_us=8.0,
                           draft_pass_us=270.0, speculation_ms=1.05)
        batch = np.array([2.0, 8, 24, 64, 160])
        made = step.step(GPUS["H100-SXM"], MODELS["Llama-3.1-8B"], step.Draft("eagle"), batch=batch, gamma=3,
                         context=512.0, acceptance_length=2.9, costs=costs)["speedup"]
        result = fidelity.held_out(setting(), points(batch, made, gamma=3, length=2.9), fidelity.step_v2)
        assert result.error.abs().max() < 0.05


    @pytest.mark.parametrize("known", [True, False])
    def test_recovers_what_the_step_model_made_with_prefill_in_each_step(self, known):
        """The same with each step carrying the prompts of a steady load (2,048 in, 64 out): the calibration
        prices the prefill E times over in a speculative step, E measured or fitted."""
        costs = step.Costs(mfu=0.55, mbu=0.8, overlap=0.2, step_ms=0.9, layer_us=1.0, token_us=8.0, allreduce_us=8.0,
                           draft_pass_us=270.0, speculation_ms=1.05)
        batch = np.array([2.0, 8, 24, 64, 160])
        made = step.step(GPUS["H100-SXM"], MODELS["Llama-3.1-8B"], step.Draft("eagle"), batch=batch, gamma=3,
                         context=2048.0, acceptance_length=2.9, costs=costs, prompt_tokens=2048,
                         output_tokens=64)["speedup"]
        served = replace(setting(), prompt_tokens=2048.0, output_tokens=64.0)
        result = fidelity.held_out(served, points(batch, made, gamma=3, length=2.9 if known else None, context=2048.0),
                                   fidelity.step_v2)
        assert result.error.abs().max() < 0.05
        decode_only = fidelity.held_out(setting(), points(batch, made, gamma=3, length=2.9 if known else None,
                                                          context=2048.0), fidelity.step_v2)
        assert decode_only.error.abs().max() > result.error.abs().max()


    def test_a_mixture_of_experts_verify_pass_shares_experts_along_each_sequence(self):
        """gpt-oss-20b points made with adjacent tokens sharing ROUTING_OVERLAP of their experts (Cohere's
        measured 38 %): step v2 prices the verify pass so, and recovers them within 5 %."""
        assert step.ROUTING_OVERLAP == 0.38
        costs = step.Costs(mfu=0.55, mbu=0.8, overlap=0.2, step_ms=0.9, layer_us=1.0, token_us=8.0, draft_pass_us=270.0,
                           speculation_ms=1.05)
        batch = np.array([1.0, 4, 16, 64, 128])
        made = step.step(GPUS["H100-SXM"], MODELS["gpt-oss-20b"], step.Draft("eagle3"), batch=batch, gamma=3,
                         context=1024.0, acceptance_length=2.7, costs=costs,
                         routing_overlap=step.ROUTING_OVERLAP)["speedup"]
        moe = replace(setting("eagle3"), target=MODELS["gpt-oss-20b"])
        result = fidelity.held_out(moe, points(batch, made, gamma=3, length=2.7, context=1024.0), fidelity.step_v2)
        assert result.error.abs().max() < 0.05

    def test_a_series_no_costs_fit_is_predicted_on_the_side_of_1_it_was_measured(self):
        """DeepSeek-R1 + MTP on two GB300s lost at every concurrency (TPOT speedups 0.50 to 0.92): no
        costs fit its ends, and the closest fit, its draws weighted by their miss, predicts a loss at
        every held-out point. Weighed by the engine's prior, as before, the draws predicted 1.04 to 1.10 there."""
        (gb300, found), = [(s, p) for s, p in SERIES if "GB300" in s.name and s.metric == "tpot_speedup"]
        result = fidelity.held_out(gb300, found, fidelity.step_v2).dropna(subset=["predicted_speedup"])
        assert len(result) == 4 and (result.measured_speedup < 1).all() and (result.predicted_speedup < 1).all()


    def test_the_same_runs_time_is_predicted_where_their_tpot_is_not(self):
        """The GB300 runs' total throughput (0.81 to 1.03 of the plain server's) and end-to-end latency
        (0.83 to 0.97) are a closed loop's work over its time, which the step model prices; their
        TPOT (0.50 to 0.92) also holds the scheduler's split between the first token and the rest,
        which it does not, so that series is not scored."""
        found = {s.name.rsplit(", ", 1)[1]: (s, fidelity.held_out(s, p, fidelity.step_v2).dropna(subset=["predicted_speedup"]))
                 for s, p in SERIES if "GB300" in s.name}
        assert set(found) == {"ISL 2k OSL 64", "total throughput", "end-to-end latency"}
        assert [name for name, (s, _) in found.items() if not s.predicted] == ["ISL 2k OSL 64"]
        assert all(found[name][1].error.abs().max() < 0.15 for name in ("total throughput", "end-to-end latency"))
        assert found["ISL 2k OSL 64"][1].error.abs().max() > 0.15

    def test_the_end_to_end_latency_is_the_sum_of_the_printed_means(self):
        """vllm bench serve's TPOT is (latency − TTFT) / (output − 1): with 64 output tokens a request,
        its mean latency is mean TTFT + 63 × mean TPOT. At concurrency 64 the post prints TTFT
        2,584 and 1,084 ms, TPOT 41 and 82 ms: (2,584 + 63 · 41) / (1,084 + 63 · 82) = 5,167 / 6,250."""
        (_, e2e), = [(s, p) for s, p in SERIES if s.name.endswith("end-to-end latency")]
        assert e2e.measured_speedup.iloc[0] == pytest.approx(5167 / 6250, abs=1e-4)
        assert (e2e.batch.to_numpy() == [64, 128, 192, 256, 320, 384]).all()

    def test_every_other_series_is_scored(self):
        assert [s.name for s, _ in SERIES if not s.predicted] == [
            "vLLM blog 2026, vLLM 0.14.1, 2x GB300, DeepSeek-R1 NVFP4, MTP 1 token, ISL 2k OSL 64"]
        assert replace(setting(), metric="tpot_speedup").predicted  # decode-only TPOT is the step model's


class TestBenchSlice:
    def test_the_benchmark_on_two_series(self):
        """bench/bench_fidelity.py's evaluation on the EAGLE-3 paper's SGLang series, so that it
        cannot rot: step v2 gets every sign of EAGLE-3 right and misses EAGLE-1's noisy dip below 1."""
        chosen = [(s, p) for s, p in SERIES if s.name.startswith("EAGLE-3 paper, SGLang")]
        found = {s.name.rsplit(", ", 1)[1]: fidelity.held_out(s, p, fidelity.step_v2) for s, p in chosen}
        summary = {name: fidelity.summarise(result) for name, result in found.items()}
        assert summary["EAGLE-3 head"]["points"] == 7 and summary["EAGLE-3 head"]["sign_right"] == 1.0
        assert summary["EAGLE head"]["sign_right"] < 0.5 and not math.isnan(summary["EAGLE head"]["worst_error"])
        assert (found["EAGLE-3 head"].draw_low <= found["EAGLE-3 head"].draw_high).all()
