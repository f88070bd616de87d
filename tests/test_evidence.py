"""Which published measurements and stored runs are evidence about a setting (specviz.advice.evidence)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from conftest import PRESETS, make_scenario
from specviz import calculator, settings as settings_module
from specviz.advice import claims, evidence
from specviz.errors import Notice
from specviz.model import dtypes, spec
from specviz.results import explorer

DATA = settings_module.get("SPECVIZ_DATA_DIR")


class TestComparablePublished:
    def test_only_the_same_family_drafting_and_hardware(self):
        published = explorer.load_published(DATA)
        llama = make_scenario(target="Llama-3.1-8B", draft="eagle")
        same = evidence.comparable_published(published, llama, PRESETS)
        assert len(same) and set(same["gpu"]) <= {"H100-SXM", "RTX-3090", "A100-40GB", "A100-80GB"}
        assert {PRESETS.models[t].model_type for t in same["target"]} == {"llama"}
        assert set(same["draft"]) == {"eagle"}
        # Rows that name no preset target or GPU (a T5 on a TPU) are never evidence.
        assert published["target"].isna().any() and not same["target"].isna().any()
        amd = make_scenario(target="DeepSeek-V3", gpu="MI300X")
        assert set(evidence.comparable_published(published, amd, PRESETS)["gpu"]) == {"MI300X"}


class TestComparableRuns:
    PAIRED = pd.DataFrame({
        "target_model": ["meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-70B", "Qwen/Qwen3-32B", "my-finetune",
                         "meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B", "Llama-3.1-8B"],
        "gpu": ["NVIDIA H100 80GB HBM3", "A100-80GB", "H100-SXM", "H100-SXM", "AMD Instinct MI300X", "H100-SXM", None],
        "spec_method": ["eagle3", "EAGLE", "eagle3", "eagle3", "eagle3", "ngram", "eagle"],
        "concurrency": [8.0, 64.0, 8.0, 8.0, 8.0, 8.0, 8.0],
    })

    def test_runs_of_the_same_family_drafting_and_hardware(self):
        """Llama 8B and 70B on NVIDIA GPUs with EAGLE heads are of one class (as published rows are);
        Qwen, a model no preset names, AMD hardware, n-gram drafting and no GPU are not."""
        chosen = make_scenario(target="Llama-3.1-8B", draft="EAGLE3-SafeAILab-Llama-3.1-8B", tp=1)
        kept = evidence.comparable_runs(self.PAIRED, chosen, PRESETS)
        assert list(kept.index) == [0, 1]
        assert list(evidence.comparable_runs(self.PAIRED, chosen, PRESETS, batch=16).index) == [1]

    @pytest.mark.parametrize("method, drafting", [("deepseek_mtp", "mtp"), ("NEXTN", "mtp"), ("EAGLE3", "eagle"),
                                                  ("P-EAGLE", "eagle"), ("suffix", "host"), ("prompt_lookup", "host"),
                                                  ("draft_model", "model"), ("", None), (None, None)])
    def test_the_drafting_a_run_s_method_names(self, method, drafting):
        assert evidence._run_drafting(method) == drafting


class TestPublishedReaching:
    def test_only_speedups_that_reach_highest_first(self):
        published = explorer.speedup_rows(explorer.load_published(DATA))
        reaching = evidence.published_reaching(published, 3.0)
        assert len(reaching) > 0 and (reaching["value"] >= 3.0).all()
        assert reaching["metric"].str.endswith("speedup").all() and reaching["value"].is_monotonic_decreasing
        every = explorer.load_published(DATA)  # latencies, acceptance lengths and other ratios too
        by_hand = every[every["metric"].str.endswith("speedup") & (every["value"] >= 3.0)]
        assert len(reaching) == len(by_hand) and len(published) < len(every)

    def test_at_a_claimed_batch_only_runs_at_that_batch_or_more(self):
        published = explorer.speedup_rows(explorer.load_published(DATA))
        at_64 = evidence.published_reaching(published, 2.0, batch=64)
        assert (at_64["batch"] >= 64).all() and (at_64["value"] >= 2.0).all()
        assert len(at_64) < len(evidence.published_reaching(published, 2.0))

    def test_none_reach_an_extravagant_claim(self):
        assert evidence.published_reaching(pd.DataFrame({"metric": ["walltime_speedup"], "value": [2.0]}), 3.0).empty


class TestSameSetupReaching:
    MEASURED = pd.DataFrame({
        "gpu": ["B200"] * 4, "target": ["gpt-oss-20b"] * 4, "tp": [1, 1, 1, 2], "engine": ["vllm-v1"] * 4,
        "draft": ["peagle"] * 4, "method": ["P-EAGLE"] * 4, "gamma": [7, 7, 7, 7], "batch": [1.0, 8.0, 2.0, 1.0],
        "value": [1.88, 2.46, 1.91, 3.0], "metric": ["throughput_speedup"] * 4,
    })
    CHOSEN = make_scenario(gpu="B200", target="gpt-oss-20b", draft="peagle", tp="1")

    def test_the_measurement_nearest_the_claims_batch_that_reaches_it(self):
        """P-EAGLE's 2.46× at batch 8 had been named for a claim at batch 1 beside its own 1.88× there; the
        row on two GPUs is another setup."""
        found = lambda speedup, batch, gamma_max=16, rows=self.MEASURED: evidence.same_setup_reaching(
            rows, self.CHOSEN, speedup, batch, gamma_max)
        assert found(1.8, 1)["value"] == 1.88
        assert found(1.8, None)["value"] == 2.46  # no batch claimed: the highest
        assert found(1.8, 4)["value"] == 2.46  # not measured at 4: at a larger batch
        # Measured at the claim's batch and short there: a larger batch's figure says nothing of it (the
        # gpt-oss-20b runs rise from batch 1 to 8).
        assert found(2.0, 1) is None and found(2.0, 2) is None
        assert found(2.5, 1) is None and found(1.8, 1, gamma_max=3) is None

    @pytest.mark.parametrize("column, value, same", [
        # A row that states the checkpoint's formats is this setup; another format, or one no precision
        # has, is not; one that states none is.
        ("weight_dtype", "checkpoint", True), ("weight_dtype", "nvfp4", False), ("weight_dtype", "mxfp4", False),
        ("weight_dtype", "mxfp4-w4a4", False), ("weight_dtype", None, True),
        # A context within a factor of two of the scenario's 1,024.
        ("context", 1024.0, True), ("context", 2048.0, True), ("context", 3600.0, False), ("context", None, True),
        # The drafting its method names, over its draft column (the EAGLE-3 paper's heads are the step
        # model's eagle kind for their cost).
        ("method", "EAGLE-3", False), ("method", "draft_model", True)])
    def test_this_very_setup_is_the_same_weights_context_and_drafting(self, column, value, same):
        rows = self.MEASURED.assign(**{column: value})
        found = evidence.same_setup_reaching(rows, self.CHOSEN, 1.8, 1, 16)
        assert (found is not None) == same

    def test_a_row_naming_a_format_no_preset_had_is_matched_by_that_format(self):
        """AMD's Kimi-K2.5 runs on 4 MI355X state mxfp4-w4a4 (AMD Quark's W4A4 checkpoint), which no
        precision preset had: no sidebar setting could match them, and a claim beside them was weighed
        against nothing measured (a browser pass). The preset of that name, or its format set component
        by component, matches them; W4A8 MXFP4 does not."""
        rows = explorer.speedup_rows(explorer.load_published(DATA))
        kimi = lambda **more: make_scenario(gpu="MI355X", target="Kimi-K2.5", draft="eagle3", tp="4", **more)
        own = lambda chosen: evidence.same_setup(evidence.comparable_published(rows, chosen, PRESETS), chosen, 16)
        assert len(own(kimi(precision="mxfp4-w4a4"))) == 5 and own(kimi(precision="mxfp4")).empty
        linear = {f"weights_{component}": "mxfp4-w4a4" for component in dtypes.LINEAR_COMPONENTS}
        assert len(own(kimi(**linear))) == 5

    def test_one_at_another_context_is_the_nearest_that_reaches_with_its_batch_held(self):
        """MagicDec's Llama-2-7B + TinyLlama runs on 8 A100s at batch 64: 1.00× at 1,024 positions, 1.30×
        at 4,000, 1.51× at 8,000, 1.72× at 16,000, where the memory holds 53 sequences, not 64."""
        rows = explorer.speedup_rows(explorer.load_published(DATA))
        chosen = make_scenario(gpu="A100-80GB", target="Llama-2-7B", draft="TinyLlama-1.1B", engine="any", tp="8")
        own = evidence.comparable_published(rows, chosen, PRESETS)
        found = lambda speedup: evidence.same_setup_elsewhere(own, chosen, speedup, 64, 16)
        assert (found(1.3)["context"], found(1.3)["value"]) == (4000, 1.30)  # the nearest, not the highest
        assert (found(1.5)["context"], found(1.5)["value"]) == (8000, 1.51)
        assert found(1.6) is None  # only at 16,000, where batch 64 does not fit
        assert found(0.9)["context"] == 4000  # the page's own context is not elsewhere

    def test_a_named_head_is_matched_by_no_row_of_its_kind(self):
        """SpecDrift's EAGLE-3 head had stood for SpecForge's (an attack pass); the kind's own choice is
        matched by the kind."""
        rows = self.MEASURED.assign(target="gpt-oss-120b", gpu="H100-SXM", draft="eagle3", method="EAGLE-3", gamma=3)
        head = make_scenario(gpu="H100-SXM", target="gpt-oss-120b", draft="EAGLE3-SpecForge-gpt-oss-120b", tp="1")
        kind = make_scenario(gpu="H100-SXM", target="gpt-oss-120b", draft="eagle3", tp="1")
        assert evidence.same_setup(rows, head, 16).empty and len(evidence.same_setup(rows, kind, 16)) == 3

    def test_the_highest_measurement_at_the_claims_batch_where_all_fall_short(self):
        short = lambda speedup, batch, gamma=None, rows=self.MEASURED: evidence.same_setup_short(
            rows, self.CHOSEN, speedup, batch, 16, gamma)
        row, batches = short(2.0, 1)
        assert row["value"] == 1.88 and batches == (1, 1)  # the row on two GPUs (3.0) is another setup
        assert short(2.0, 2)[0]["value"] == 1.91 and short(1.9, 2) is None  # 1.91 reaches 1.9
        assert short(2.0, 4) is None  # not measured at 4
        row, batches = short(2.5, None)
        assert row["value"] == 2.46 and batches == (1, 8) and short(2.4, None) is None
        # A shorter draft falling short says nothing of a longer one; an end-to-end figure carries prefill.
        assert short(2.0, 1, gamma=8) is None and short(2.0, 1, gamma=7)[0]["value"] == 1.88
        assert short(2.0, 1, rows=self.MEASURED.assign(metric="e2e_latency_speedup")) is None


class TestMeasuredHere:
    def test_each_measurement_of_the_point_beside_the_models_figure_at_its_acceptance(self):
        """At the row's acceptance length the model's figure is the calculator's at that α; a length no
        draft of this γ makes (5 tokens at γ 3), or none, leaves it unpriced."""
        rows = TestSameSetupReaching.MEASURED.assign(gamma=3, acceptance_length=[2.24, 2.65, 5.0, 2.0], batch=8.0,
                                                     value=[1.69, 1.72, 1.5, 3.0], draft="eagle3", method="EAGLE-3")
        chosen = replace(make_scenario(gpu="B200", target="gpt-oss-20b", draft="eagle3", tp="1"), gamma=3, batch=8)
        here = evidence.measured_here(rows.assign(acceptance_length=rows["acceptance_length"].astype(object)), chosen, 8, 3)
        assert list(here["value"]) == [1.72, 1.69, 1.5]  # highest first; the two-GPU row is another setup
        alpha = spec.alpha_from_acceptance_length(2.65, 3.0)
        assert here["alpha"].iloc[0] == pytest.approx(alpha)
        assert here["model_speedup"].iloc[0] == pytest.approx(
            float(calculator.evaluate_scenario(chosen, alpha, 3, 8, chosen.context)["speedup"]))
        assert here["model_low"].iloc[0] <= here["model_speedup"].iloc[0] <= here["model_high"].iloc[0]
        assert np.isnan(here["model_speedup"].iloc[2]) and np.isnan(here["alpha"].iloc[2])
        assert evidence.measured_here(rows, chosen, 8, 4).empty and evidence.measured_here(rows, chosen, 4, 3).empty
        # Each row as the headline's notes say it: priced, and the unpriced one by how it was measured.
        notices = [evidence.measured_notice(row) for _, row in here.assign(series="a blog", note="from a chart").iterrows()]
        assert [n.key for n in notices[1:]] == ["calc.measured_here" if not here["outside_range"].iloc[1]
                                                else "calc.measured_here_outside", "calc.measured_here_no_length"]
        first = notices[0].params
        assert (first["batch"], first["gamma"], first["value"], first["metric"]) == (8, 3, 1.72, Notice("metric.throughput_speedup"))
        assert first["model"] == here["model_speedup"].iloc[0] and first["length"] == 2.65
        assert (first["series"], notices[2].params["note"]) == ("a blog", "from a chart") and "model" not in notices[2].params


    def test_a_measurement_without_a_length_above_what_any_acceptance_allows_says_so(self):
        """AMD's 2.11× for DeepSeek-V3 + MTP on 8 MI300X under SGLang at batch 1 stood without remark
        below the page's 1.04× (an engineer's pass), though the model's range at α = 1 ends at 1.64×
        there: beyond what any acceptance gives at the preset's costs, said, with the top. A figure
        under that top, or a TPOT under a load that also prefills, is said as before."""
        chosen = make_scenario(gpu="MI300X", target="DeepSeek-V3", draft="mtp", tp="8", engine="sglang",
                               gamma="2", batch="1", context="3600")
        measured = evidence.comparable_published(explorer.speedup_rows(explorer.load_published(DATA)), chosen, PRESETS)
        here = evidence.measured_here(measured, chosen, 1, 2)
        top = float(calculator.speedup_band(chosen, 1.0, 2, 1, chosen.context)[1])
        assert list(here["value"]) == [2.11] and here["ceiling_high"].iloc[0] == pytest.approx(top)
        assert round(top, 2) == 1.64
        said = evidence.measured_notice(here.iloc[0])
        assert said.key == "calc.measured_here_above_ceiling" and said.params["high"] == pytest.approx(top)
        under = here.assign(value=1.5)
        assert evidence.measured_notice(under.iloc[0]).key == "calc.measured_here_no_length"
        loaded = here.assign(metric="tpot_speedup", prompt_tokens=3200.0)
        assert evidence.measured_notice(loaded.iloc[0]).key == "calc.measured_here_no_length"
        # Below what nothing accepted allows, the same: beyond the model, with its floor.
        floor = float(calculator.speedup_band(chosen, 0.0, 2, 1, chosen.context)[0])
        assert here["floor_low"].iloc[0] == pytest.approx(floor) and floor < 1.0
        said = evidence.measured_notice(here.assign(value=floor - 0.01).iloc[0])
        assert said.key == "calc.measured_here_below_floor" and said.params["low"] == pytest.approx(floor)
        assert {said.key, "calc.measured_here_above_ceiling"} <= evidence.OFF_MODEL
        assert evidence.measured_notice(loaded.assign(value=floor - 0.01).iloc[0]).key == "calc.measured_here_no_length"


class TestSameSetupExpertParallel:
    def test_a_row_that_says_its_expert_parallelism_matches_only_a_scenario_with_the_same(self):
        """vLLM's DSpark runs on 8 B300s ran with expert parallelism; a scenario without it had matched
        all 18 of them as this very setup (a review). Rows that do not say match either."""
        published = explorer.speedup_rows(explorer.load_published(DATA))
        found = lambda ep: evidence.same_setup(evidence.comparable_published(published, chosen(ep), PRESETS), chosen(ep), 16)
        chosen = lambda ep: make_scenario(gpu="B300", target="DeepSeek-V4-Pro", draft="block", tp="8", ep=ep)
        assert len(found("on")) == 18 and found("off").empty
        unsaid = published.assign(ep=np.nan)
        assert len(evidence.same_setup(evidence.comparable_published(unsaid, chosen("off"), PRESETS), chosen("off"), 16)) == 18

    def test_a_claim_without_it_names_the_runs_with_it(self):
        """A manager's pass: "up to 2.5x ... DeepSeek-V4-Pro with 8x B300" is read without expert
        parallelism, and vLLM's DSpark runs (2.55x at batch 1, with it) were said nowhere: named, not weighed."""
        published = explorer.speedup_rows(explorer.load_published(DATA))
        off = make_scenario(gpu="B300", target="DeepSeek-V4-Pro", draft="block", tp="8", ep="off")
        measured = evidence.comparable_published(published, off, PRESETS)
        found = evidence.same_setup_other_ep(measured, off, 2.5, None, 16)
        assert (found["value"], found["batch"]) == (pytest.approx(2.548), 1)
        assert evidence.same_setup_other_ep(measured, off, 3.0, None, 16) is None
        check = claims.check_claim(off, claims.Claim(2.5), 16, 1024, PRESETS.acceptance, measured)
        assert check.reasons[0].key == "claims.reason.measured_with_ep" and check.verdict == "conditional"
        on = make_scenario(gpu="B300", target="DeepSeek-V4-Pro", draft="block", tp="8", ep="on")
        assert evidence.same_setup_other_ep(evidence.comparable_published(published, on, PRESETS), on, 2.5, None, 16) is None


class TestPairAcceptance:
    def test_the_highest_published_for_the_pair_by_its_drafts_id(self):
        """gpt-oss-120b with EAGLE-3 was published at 0.67 (SpecDrift, MT-Bench); a pair with none has none."""
        alpha, row = evidence.pair_acceptance(make_scenario(target="gpt-oss-120b", draft="eagle3", tp="1"),
                                              PRESETS.acceptance)
        assert alpha == pytest.approx(0.67, abs=0.005) and (row.target, row.draft) == ("gpt-oss-120b", "eagle3")
        assert evidence.pair_acceptance(make_scenario(target="gpt-oss-120b", draft="eagle3", tp="1"), ()) is None


class TestPublishedAsSlow:
    def test_figures_as_slow_or_slower_at_the_batch_or_a_smaller_one(self):
        rows = pd.DataFrame({"batch": [1, 64, 256, 512], "value": [1.5, 0.6, 0.7, 0.5]})
        assert evidence.published_as_slow(rows, 0.7)["value"].tolist() == [0.5, 0.6, 0.7]
        assert evidence.published_as_slow(rows, 0.7, 256)["value"].tolist() == [0.6, 0.7]
        assert evidence.published_reaching(rows, 0.7, 256)["value"].tolist() == [0.7]  # a gain's: as high, at 256 or more

