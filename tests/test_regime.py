"""Tests for specviz.regime: where the verify and plain passes turn compute-bound, the Why panel's
explanation of the verify pass's regime, the expert tax and the roofline's points."""

import math
from dataclasses import replace

import pytest

from conftest import make_scenario
from specviz import calculator, regime
from specviz.errors import Notice
from specviz.model import spec, step

# Llama-3.1-70B on one H100 with no engine costs and free drafts: the first model's pure roofline.
IDEAL = make_scenario(target="Llama-3.1-70B", draft="ngram", tp=1, context=0).ideal()
RATIOS = make_scenario(target="Llama-3.1-70B", mode="ratios", verify_cost=2.0)
REALISTIC = make_scenario()
LOAD = replace(REALISTIC, prefill=True, input_tokens=2000, output_tokens=100)  # long in, short out


class TestRegimeCrossovers:
    def test_h100_70b(self):
        c = regime.regime_crossovers(IDEAL, 0.8, 4, 0, 1024)
        # verify holds 5 positions per sequence: crosses the 295 ridge near 295/5 ≈ 60; decode near 295
        assert c["verify"] == 60 and c["baseline"] == 296

    def test_long_context_pushes_both_out(self):
        c = regime.regime_crossovers(IDEAL, 0.8, 4, 32768, 1024)
        assert math.isnan(c["verify"]) and math.isnan(c["baseline"])

    def test_under_a_steady_load_the_verify_pass_turns_sooner_the_more_is_accepted(self):
        """Each speculative step carries the prompts of E(α) tokens' worth of finished requests: the
        crossover had been computed at α 0.5 whatever the page's α, beside a badge at the page's."""
        loaded = make_scenario(prefill="on", input_tokens=2000, output_tokens=100)
        verify = [regime.regime_crossovers(loaded, alpha, 4, 4096, 512)["verify"] for alpha in (0.3, 0.5, 0.9)]
        assert verify == [8, 6, 3]
        assert len({regime.regime_crossovers(loaded, alpha, 4, 4096, 512)["baseline"] for alpha in (0.3, 0.9)}) == 1

    def test_ratios_mode_has_none(self):
        assert all(math.isnan(v) for v in regime.regime_crossovers(RATIOS, 0.8, 4, 0, 64).values())


class TestRegimeExplanation:
    @staticmethod
    def explain(scenario, batch: int):
        here = {k: v.item() for k, v in calculator.evaluate_scenario(scenario, 0.8, 4, batch, 0).items()}
        return regime.regime_explanation(scenario, here)

    def test_a_cheap_memory_bound_verify(self):
        regime, explain, figures = self.explain(make_scenario(draft="ngram", tp=1).ideal(), 8)
        assert (regime, explain) == ("calc.regime.memory", "calc.explain.memory")
        assert figures["ridge"] == figures["datasheet_ridge"] == pytest.approx(989.4 / 3.35)

    def test_the_costs_only_speculation_pays_are_not_blamed_on_the_verify_pass(self):
        """Llama-3.1-8B with its EAGLE-3 head on a B200 at batch 1: verify costs 1.30× a plain step, of
        which 0.28× is the speculative step's own 1.05 ms; the pass itself is 1.02×, memory-bound and
        cheap. The panel had said the positions' matmuls and KV reads made it dear."""
        llama = make_scenario(target="Llama-3.1-8B", draft="EAGLE3-SafeAILab-Llama-3.1-8B", gpu="B200", tp="1")
        here = {k: v.item() for k, v in calculator.evaluate_scenario(llama, 0.8, 4, 1, 1024).items()}
        _, explain, figures = regime.regime_explanation(llama, here)
        assert here["verify_cost"] == pytest.approx(1.303, abs=1e-3) and explain == "calc.explain.memory"
        assert figures["speculation_share"] == pytest.approx(1.05 / here["baseline_step_ms"])
        assert figures["verify_cost"] == pytest.approx(here["verify_cost"] - figures["speculation_share"])
        # Four draft passes, each 270 µs around its roofline.
        assert figures["draft_pass_share"] == pytest.approx(4 * 0.27 / here["baseline_step_ms"])

    def test_the_notes_say_the_context_and_the_costs_only_speculation_pays_by_how_the_draft_proposes(self):
        """The same figures (1.05 ms of speculation and four 270 µs draft passes, 0.56× of a plain step
        at batch 1) said under the explanation: for a chain of passes, one pass (P-EAGLE) and none on
        the GPU (n-gram); under 5 % of a plain step (batch 64), not said."""
        llama = make_scenario(target="Llama-3.1-8B", draft="EAGLE3-SafeAILab-Llama-3.1-8B", gpu="B200", tp="1")
        here = {k: v.item() for k, v in calculator.evaluate_scenario(llama, 0.8, 4, 1, 1024).items()}
        figures = regime.regime_explanation(llama, here)[2]
        chain, one_pass, host = (regime.explanation_notes(figures, kind, 4, 1024) for kind in ("eagle3", "peagle", "ngram"))
        assert [n.key for n in chain] == ["calc.explain.context", "calc.explain.speculation_costs"]
        assert chain[0].params == {"context": 1024} and chain[1].params["drafts"].key == "calc.explain.speculation_drafts"
        assert one_pass[1].params["drafts"].key == "calc.explain.speculation_drafts_one_pass"
        assert host[1].params["drafts"] == "" and regime.explanation_notes(figures, "eagle3", 4, 0)[0].key != "calc.explain.context"
        quiet = dict(figures, speculation_share=0.03, draft_pass_share=0.019)
        assert regime.explanation_notes(quiet, "eagle3", 4, 0) == []

    @pytest.mark.parametrize("ridges, key", [((295.3, 295.3, 295.3), "calc.regime_detail"),
                                             ((221.5, 295.3, 295.3), "calc.regime_detail_shares"),
                                             ((221.5, 600.2, 295.3), "calc.regime_detail_mixed")])
    def test_the_ridge_sentence_names_both_ridges_where_they_round_apart(self, ridges, key):
        ridge, datasheet, sidebar = ridges
        assert regime.ridge_detail_key({"ridge": ridge, "datasheet_ridge": datasheet, "sidebar_ridge": sidebar}) == key

    def test_with_data_parallel_attention_the_positions_are_one_group_s_as_the_intensity(self):
        """A browser pass: Llama-3.1-8B at batch 256 on 4 attention groups said "1,280 positions per
        verify pass" beside an intensity of 210, one group's pass of 320 (the whole batch on one GPU,
        1,280 positions, is at 402). The roofline's legend names the same pass."""
        grouped = make_scenario(target="Llama-3.1-8B", draft="EAGLE3-SafeAILab-Llama-3.1-8B", tp="1", dp="4")
        one = make_scenario(target="Llama-3.1-8B", draft="EAGLE3-SafeAILab-Llama-3.1-8B", tp="1", dp="1")
        figures = {}
        for name, (chosen, batch) in {"grouped": (grouped, 256), "group": (one, 64), "whole": (one, 256)}.items():
            here = {k: v.item() for k, v in calculator.evaluate_scenario(chosen, 0.8, 4, batch, 1024).items()}
            figures[name] = regime.regime_explanation(chosen, here)[2]
        assert figures["grouped"]["positions"] == figures["group"]["positions"] == 320
        assert figures["grouped"]["intensity"] == pytest.approx(figures["group"]["intensity"], rel=1e-3)
        assert figures["whole"]["positions"] == 1280 and figures["whole"]["intensity"] > 1.5 * figures["grouped"]["intensity"]
        _, passes = regime.roofline_points(grouped, 4, 256, 1024, 0.8)
        assert passes.set_index("pass")["positions"].to_dict() == {"decode": 64, "verify": 320}

    def test_the_experts_are_named_where_they_make_most_of_the_verify_pass_s_cost(self):
        """DeepSeek-V3 + MTP on 8 B200s at batch 64, α 0.5: the pass costs 1.33× a plain one, of which
        the expert tax is 0.11× (the panel had named the experts for all of it); gpt-oss-120b + EAGLE-3 on
        an MI355X at batch 1, α 0.6: 0.37× of the pass's 1.39×."""
        cases = [(dict(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8", ep="off"), 64, 0.5,
                  "calc.explain.memory_heavy", 0.111),
                 (dict(target="gpt-oss-120b", draft="eagle3", gpu="MI355X", precision="mxfp4"), 1, 0.6,
                  "calc.explain.memory_heavy_moe", 0.374)]
        for query, batch, alpha, key, experts in cases:
            chosen = make_scenario(**query)
            here = {k: v.item() for k, v in calculator.evaluate_scenario(chosen, alpha, 4, batch, 1024).items()}
            _, explain, figures = regime.regime_explanation(chosen, here)
            assert explain == key and figures["experts_cost"] == pytest.approx(experts, abs=1e-3)

    def test_a_dear_memory_bound_verify_names_its_cause(self):
        """Only a mixture of experts routes the γ + 1 positions to more experts; a dense model's
        verify is dear (realistic costs) because its matmuls and the costs per token add to its
        weight reads."""
        _, dense, figures = self.explain(REALISTIC, 32)
        _, moe, _ = self.explain(make_scenario(target="Qwen3-30B-A3B", draft="ngram", tp=1).ideal(), 8)
        assert (dense, moe) == ("calc.explain.memory_heavy", "calc.explain.memory_heavy_moe")
        # The ridge the passes meet, at the shares of peak reached, beside the GPU's own.
        assert figures["ridge"] == pytest.approx(989.4 / 3.35 * 0.6 / 0.8)
        assert figures["datasheet_ridge"] == pytest.approx(295.343, abs=1e-3)

    def test_a_mixture_whose_plain_pass_reads_every_expert_is_not_blamed_on_them(self):
        """Kimi-K2 on 8 GB300s at batch 256: a plain pass reads 382 of 384 experts a layer and the
        verify pass 384, 1.005 times the weights, yet the verify pass costs 1.39 times a plain one.
        The Why panel had said the positions routed to more experts; it names their own work. At
        batch 8 the verify pass reads 2.9 times the expert weights: the experts are the cause."""
        kimi = dict(gpu="GB300", target="Kimi-K2", precision="nvfp4", tp="8", ep="on", context="0")
        _, at_256, figures = self.explain(make_scenario(**kimi, batch="256"), 256)
        _, at_8, _ = self.explain(make_scenario(**kimi, batch="8"), 8)
        assert figures["verify_cost"] > 1.2
        assert (at_256, at_8) == ("calc.explain.memory_heavy", "calc.explain.memory_heavy_moe")
        tax = regime.expert_tax(make_scenario(**kimi, batch="256"), 0.8, 4, 256, 0, 256)
        assert tax["ratio"] < regime.MOE_HEAVY_RATIO

    def test_past_the_ridge(self):
        one_gpu = make_scenario(draft="ngram", tp=1).ideal()
        assert self.explain(one_gpu, 128)[:2] == ("calc.regime.compute", "calc.explain.between")
        assert self.explain(one_gpu, 1024)[:2] == ("calc.regime.compute", "calc.explain.compute")


class TestRooflinePoints:
    def test_passes_lie_on_or_under_the_roof(self):
        for chosen in (IDEAL, REALISTIC):
            roof, passes = regime.roofline_points(chosen, 4, 64, 0)
            device = step.tensor_parallel_device(chosen.gpu, chosen.tp)
            peak, bw = device.peak("bf16") * chosen.costs.mfu, device.bandwidth_tb_s * chosen.costs.mbu
            for p in passes.itertuples():
                assert p.tflops <= min(peak, bw * p.intensity) * (1 + 1e-9)
            assert list(passes.positions) == [64, 320]
        assert roof.tflops.max() == pytest.approx(2 * 989.4 * 0.6)  # two H100s at 60 % of peak

    @pytest.mark.parametrize("query", [
        dict(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8", ep="on"),  # FP8 and BF16 parts
        dict(gpu="B200", target="gpt-oss-120b", draft="eagle3", precision="mxfp4"),  # MXFP4 experts at FP8's peak
        dict(draft="ngram", tp="1")])  # one peak: the GPU's ridge at the shares
    def test_the_ridge_drawn_is_the_one_the_regime_is_judged_against(self, query):
        """The chart had drawn the sidebar's ridge at the shares (422 for DeepSeek-V3 in FP8 on B200s)
        where the text judged the verify pass against its own (421): one figure now."""
        chosen = make_scenario(**query, batch="8", context="32768")
        here = {k: v.item() for k, v in calculator.evaluate_scenario(chosen, 0.75, 2, 8, 32768).items()}
        _, _, figures = regime.regime_explanation(chosen, here)
        roof, _ = regime.roofline_points(chosen, 2, 8, 32768, alpha=0.75)
        assert roof.attrs["ridge"] == pytest.approx(figures["ridge"], rel=1e-9)

    @pytest.mark.parametrize("chosen", [LOAD, make_scenario(target="DeepSeek-V3", gpu="H200", tp=8)])
    def test_the_passes_are_the_headline_s(self, chosen):
        """The load's prompts (16 + 16·2,000/100 = 336 positions in a plain pass, E times the prompts in
        a verify pass) and a mixture of experts' routing overlap: each pass's side of the ridge is the
        regime the headline states."""
        roof, passes = regime.roofline_points(chosen, 4, 16, 1024, alpha=0.8)
        here = calculator.evaluate_scenario(chosen, 0.8, 4, 16, 1024)
        sides = ["compute" if p.intensity > roof.attrs["ridge"] else "memory" for p in passes.itertuples()]
        assert sides == [str(here["baseline_regime"]), str(here["regime"])]
        assert passes.at[1, "intensity"] == pytest.approx(float(here["verify_intensity"]))
        if chosen.prefill:
            e = float(spec.expected_tokens(0.8, 4))
            assert list(passes.positions) == [336, round(80 + 320 * e)] and sides == ["compute", "compute"]


class TestExpertTax:
    def test_by_hand_for_deepseek_v3_and_none_for_a_dense_target(self):
        uniform = make_scenario(target="DeepSeek-V3", gpu="H200", tp="8", routing_overlap="0")
        tax = regime.expert_tax(uniform, 0.8, 4, 8, 1024, 1024)
        touched = lambda tokens: 256 * (1 - (1 - 8 / 256) ** tokens)
        assert (tax["plain_tokens"], tax["verify_tokens"]) == (8, 40)
        assert tax["plain_experts"] == pytest.approx(touched(8)) and tax["verify_experts"] == pytest.approx(touched(40))
        assert round(tax["ratio"], 2) == 3.21
        assert round(regime.expert_tax(uniform, 0.8, 4, 64, 1024, 1024)["ratio"], 2) == 1.15
        # By default adjacent tokens share 38 % of their experts: each sequence's 5 verify tokens route
        # as 1 + 4 × 0.62 = 3.48 independent ones, 27.84 at batch 8.
        measured = regime.expert_tax(make_scenario(target="DeepSeek-V3", gpu="H200", tp="8"), 0.8, 4, 8, 1024, 1024)
        assert measured["overlap"] == 0.38 and measured["verify_experts"] == pytest.approx(touched(27.84))
        assert round(measured["ratio"], 2) == 2.62
        assert measured["speedup"] > tax["speedup"]
        assert regime.expert_tax(make_scenario(), 0.8, 4, 8, 1024, 1024) is None
        # Every token reads every expert (an uploaded config of 1 expert, top-1): no tax to state, where
        # its crossover had been put down to a plain pass reading nearly every expert (an engineer's pass).
        deepseek = make_scenario(target="DeepSeek-V3", gpu="H200", tp="8")
        every = replace(deepseek, target=replace(deepseek.target, experts_per_token=deepseek.target.num_experts))
        assert regime.expert_tax(every, 0.8, 4, 8, 1024, 1024) is None

    def test_what_the_tax_does_is_said_with_its_crossovers_among_the_batches_held(self):
        """The verdict beside the tax: its speedup here and where speculation stops paying with and without
        it; past the memory's limit a crossover is none; a batch that does not fit gets no speedup said;
        where not one sequence fits, nothing is said."""
        groups = make_scenario(target="DeepSeek-V3", gpu="H200", tp="1", dp="8", ep="on")
        tax = regime.expert_tax(groups, 0.7, 3, 8, 1024, 1024)
        here, stops = regime.expert_tax_verdict(tax, 0.7, 3, 8, True, 1024, 1024)
        assert here.key == "calc.expert_tax_here" and (round(here.params["speedup"], 2), round(here.params["untaxed"], 2)) == (1.10, 1.53)
        assert stops.key.startswith("calc.expert_tax_")
        (alone,) = regime.expert_tax_verdict(tax, 0.7, 3, 8, False, 1024, 1024)
        assert alone == stops
        none = {**tax, "stops_at": math.nan, "stops_untaxed_at": 2000.0}
        (never,) = regime.expert_tax_verdict(none, 0.7, 3, 8, False, 600, 1024)
        assert never == Notice("calc.expert_tax_never_stops_held", batch=600)
        apart = {**tax, "stops_at": 40.0, "stops_untaxed_at": 900.0}
        (crossover,) = regime.expert_tax_verdict(apart, 0.7, 3, 8, False, 600, 1024)
        assert crossover.params["stops"] == Notice("calc.at_batch", batch=40)
        assert crossover.params["stops_untaxed"] == Notice("calc.never", batch_max=600)
        assert regime.expert_tax_verdict(tax, 0.7, 3, 8, True, 0, 1024) == []

    def test_the_counts_are_shown_to_a_decimal_where_whole_ones_would_not_give_the_ratio(self):
        """gpt-oss-120b + EAGLE-3 at batch 1: 4 and 13.4 experts, 3.35x; "4, 13" reads 3.25x (a browser pass)."""
        chosen = make_scenario(target="gpt-oss-120b", draft="eagle3", gpu="H100-SXM", tp="1", batch="1")
        tax = regime.expert_tax(chosen, 0.8, 4, 1, 1024, 1024)
        assert (tax["plain_experts"], round(tax["verify_experts"], 1), round(tax["ratio"], 2)) == (4, 13.4, 3.35)
        assert tax["experts_places"] == 1
        wide = regime.expert_tax(make_scenario(target="DeepSeek-V3", gpu="H200", tp="8"), 0.8, 4, 256, 1024, 1024)
        assert wide["experts_places"] == 0  # 256 and 256: 1.00x either way

    def test_one_crossover_either_way_is_said_not_to_be_the_tax(self):
        """DeepSeek-V3 + MTP on 8 B200 in FP8: it loses for good at batch 368 with or without the tax, where a
        plain pass reads 256 of the 256 experts. The line had read as if the experts stopped it (a browser
        pass); it says the tax is gone there and what stops it is the rest of verifying."""
        chosen = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", tp="8", precision="fp8", batch="256")
        tax = regime.expert_tax(chosen, 0.8, 4, 256, 1024, 1024)
        assert (tax["stops_at"], tax["stops_untaxed_at"], round(tax["plain_experts_at_stop"])) == (368, 368, 256)
        _, stops = regime.expert_tax_verdict(tax, 0.8, 4, 256, True, chosen.max_batch(), 1024)
        assert stops.key == "calc.expert_tax_same_crossover"
        assert str(stops).startswith("It loses for good at batch 368 either way, and not for the tax: by then a plain "
                                     "pass already reads nearly every expert, so a verify pass reads no more of them")

    def test_the_bound_without_the_tax_reads_the_plain_passes_experts(self):
        chosen = make_scenario(target="DeepSeek-V3", gpu="H200", tp="8")
        timed = dict(tp=8, precision=chosen.precision, costs=chosen.costs)
        plain = step.pass_time(chosen.gpu, chosen.target, 8, 1, 1024, **timed)
        taxed = step.pass_time(chosen.gpu, chosen.target, 8, 5, 1024, **timed)
        untaxed = step.pass_time(chosen.gpu, chosen.target, 8, 5, 1024, **timed, routed_tokens=8)
        fp8_blocks = chosen.precision.weight_format(chosen.target, "experts").bytes  # 1 byte and a 4-byte scale per 128×128 block
        expert_bytes = lambda experts: experts / 256 * chosen.target.params["experts"] * fp8_blocks
        touched = lambda tokens: 256 * (1 - (1 - 8 / 256) ** tokens)
        assert taxed["bytes"] - untaxed["bytes"] == pytest.approx(expert_bytes(touched(40)) - expert_bytes(touched(8)))
        assert untaxed["bytes"] > plain["bytes"]  # the cache's four more positions a sequence are still written
        tax = regime.expert_tax(chosen, 0.8, 4, 16, 1024, 1024)
        assert tax["speedup_untaxed"] > tax["speedup"] > 1
        # docs/model.md's figures: 8 H200s as 8 data-parallel groups, its MTP layer, α 0.7, γ 3, batch 8.
        groups = dict(target="DeepSeek-V3", gpu="H200", tp="1", dp="8", ep="on")
        grouped = regime.expert_tax(make_scenario(**groups), 0.7, 3, 8, 1024, 1024)
        assert (round(grouped["speedup"], 2), round(grouped["speedup_untaxed"], 2)) == (1.10, 1.53)
        uniform = regime.expert_tax(make_scenario(**groups, routing_overlap="0"), 0.7, 3, 8, 1024, 1024)
        assert (round(uniform["speedup"], 2), round(uniform["speedup_untaxed"], 2)) == (0.99, 1.53)
        # Past a few hundred sequences a plain pass reads every expert: the tax is gone.
        wide = calculator.evaluate_scenario(chosen, 0.8, 4, 1000, 1024)["speedup"]
        assert calculator.evaluate_scenario(chosen, 0.8, 4, 1000, 1024, expert_tax=False)["speedup"] == pytest.approx(wide)
        dense = make_scenario()
        assert calculator.evaluate_scenario(dense, 0.8, 4, 8, 1024, expert_tax=False)["speedup"] == \
            calculator.evaluate_scenario(dense, 0.8, 4, 8, 1024)["speedup"]


@pytest.mark.parametrize("value, up_to, said", [(12.0, 64, Notice("calc.at_batch", batch=12)),
                                                (64.0, 64, Notice("calc.at_batch", batch=64)),
                                                (65.0, 64, Notice("calc.never", batch_max=64)),
                                                (math.nan, 256, Notice("calc.never", batch_max=256))])
def test_at_batch_names_a_batch_within_the_range_or_none(value, up_to, said):
    assert regime.at_batch(value, up_to) == said


@pytest.mark.parametrize("kind, suffix", [("eagle3", ""), ("mtp", ""), ("peagle", "_one_pass"), ("ngram", "_host"),
                                          ("suffix", "_host")])
def test_the_message_suffix_says_how_the_draft_proposes(kind, suffix):
    assert regime.message_suffix(kind) == suffix
