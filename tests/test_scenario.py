"""Tests for specviz.scenario: one declaration of every setting, realistic defaults, and links that
carry a scenario there and back."""

import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

from conftest import PRESETS, make_scenario
from specviz import calculator, scenario, settings, workload
from specviz.names import model_preset
from specviz.model import architecture, dtypes, mtp, roofline, spec, step

DEFAULT = make_scenario()


class TestField:
    def test_parses_numbers_in_range(self):
        assert scenario.FIELDS["alpha"].parse("0.7") == 0.7
        assert scenario.FIELDS["gamma"].parse("6") == 6 and isinstance(scenario.FIELDS["gamma"].parse("6.0"), int)

    @pytest.mark.parametrize("name, text", [("alpha", "1.5"), ("alpha", "nan"), ("alpha", "abc"), ("gamma", "2.5"),
                                            ("gamma", "99"), ("batch", "0"), ("verify_cost", "0"), ("mfu", "inf"),
                                            ("tflops", "1e300")])
    def test_refuses_what_a_control_would_not_take(self, name, text):
        with pytest.raises(ValueError):
            scenario.FIELDS[name].parse(text)

    def test_a_bound_may_be_a_setting(self, monkeypatch):
        monkeypatch.setenv("SPECVIZ_GAMMA_MAX", "8")
        assert scenario.FIELDS["gamma"].upper == 8


class TestPresetCosts:
    def test_the_priors_medians_and_the_engines(self):
        engine = PRESETS.engines["sglang"]
        costs = scenario.preset_costs(engine)
        assert (costs.mfu, costs.mbu, costs.overlap) == (0.6, 0.8, 0.0)
        assert (costs.step_ms, costs.token_us, costs.allreduce_us) == (engine.step_ms[0], engine.token_us[0],
                                                                        engine.allreduce_us[0])


class TestDefaultDraft:
    def test_the_smallest_of_the_family_with_the_same_vocabulary(self):
        assert scenario.default_draft("Qwen3-32B", PRESETS) == "Qwen3-0.6B"  # not Qwen2.5-0.5B
        assert scenario.default_draft("Llama-3.1-70B", PRESETS) == "Llama-3.2-1B"

    def test_an_eagle3_head_where_no_preset_of_the_family_shares_the_vocabulary(self):
        # TinyLlama has Mixtral's vocabulary size, not its tokenizer.
        assert scenario.default_draft("Mixtral-8x7B", PRESETS) == "eagle3"
        assert scenario.default_draft("Qwen3-30B-A3B", PRESETS) == "Qwen3-0.6B"  # a MoE of the same family
        assert scenario.default_draft("Qwen2.5-0.5B", PRESETS) == "eagle3"  # nothing smaller

    def test_the_mtp_layer_where_an_engine_runs_it(self):
        """MiniMax-M2.5 ships three MTP modules that neither vLLM nor SGLang runs: a new scenario on it
        had drafted with them, and Deploy then refused the command the calculator's figure was for."""
        assert [scenario.default_draft(t, PRESETS) for t in ("DeepSeek-V4-Flash", "GLM-5", "Qwen3.5-397B-A17B")] == \
            ["mtp"] * 3
        assert PRESETS.models["MiniMax-M2.5"].mtp is not None and scenario.default_draft("MiniMax-M2.5", PRESETS) == "eagle3"
        assert "mtp" in scenario.draft_choices(PRESETS, "MiniMax-M2.5")  # still a choice


class TestDraftChoices:
    def test_kinds_then_the_targets_heads_then_models(self):
        choices = scenario.draft_choices(PRESETS, "Qwen3-32B")
        kinds = ["eagle3", "peagle", "block", "eagle", "medusa", "ngram", "suffix"]  # no MTP: Qwen3-32B has no MTP layer
        assert choices == [*kinds, "EAGLE3-SpecForge-Qwen3-32B", *scenario.model_choices(PRESETS.models)]
        deepseek = scenario.draft_choices(PRESETS, "DeepSeek-V3")
        assert deepseek[:2] == ["mtp", "eagle3"] and "EAGLE3-SpecForge-DeepSeek-V3" in deepseek
        assert "EAGLE3-SpecForge-Qwen3-32B" not in deepseek

    def test_dense_models_then_mixtures_of_experts_each_in_the_presets_order(self):
        listed = scenario.model_choices(PRESETS.models)
        groups = [scenario.model_group(PRESETS.models[m]) for m in listed]
        assert groups == sorted(groups, key=scenario.MODEL_GROUPS.index) and set(groups) == {"dense", "moe"}
        assert [m for m in listed if PRESETS.models[m].num_experts == 0] == [
            m for m in PRESETS.models if PRESETS.models[m].num_experts == 0]
        assert listed.index("Qwen3-32B") < listed.index("Mixtral-8x7B") < listed.index("DeepSeek-V3")

    def test_a_mixture_of_experts_by_its_total_size_alone(self):
        """Qwen3.5-397B is how its card, benchmarks and slides shorten Qwen3.5-397B-A17B; a preset's own
        key wins over the shortened one (Qwen3-32B is dense, not a Qwen3-32B-A… MoE)."""
        names = {"Qwen3.5-397B": "Qwen3.5-397B-A17B", "Qwen/Qwen3.5-35B": "Qwen3.5-35B-A3B",
                 "Qwen3-Coder-480B": "Qwen3-Coder-480B-A35B", "Qwen3-235B": "Qwen3-235B-A22B",
                 "Qwen3-32B": "Qwen3-32B", "Mixtral-8x22B": None}
        assert {name: model_preset(name, PRESETS.models) for name in names} == names

    def test_a_frontier_target_starts_with_its_mtp_layer_or_a_head_not_a_sibling_of_its_size(self):
        for target in ("DeepSeek-V3", "DeepSeek-V3.2", "GLM-4.5", "GLM-4.5-Air", "Qwen3-Next-80B-A3B"):
            assert scenario.default_draft(target, PRESETS) == "mtp", target
        # A published head's own config where one is shipped, else a head of the target's shape.
        for target, head in (("gpt-oss-120b", "EAGLE3-SpecForge-gpt-oss-120b"), ("Kimi-K2", "EAGLE3-AQ-MedAI-Kimi-K2"),
                             ("Llama-4-Scout", "EAGLE3-SpecForge-Llama-4-Scout"), ("Phi-3-medium", "eagle3")):
            assert scenario.default_draft(target, PRESETS) == head, target
        assert scenario.default_draft("Qwen3-235B-A22B", PRESETS) == "Qwen3-0.6B"
        assert scenario.default_draft("Llama-3.1-8B", PRESETS) == "Llama-3.2-1B"  # 6.5 times smaller


class TestResolveDraft:
    def test_kinds(self):
        assert scenario.resolve_draft("ngram", PRESETS) == step.Draft("ngram")
        assert scenario.resolve_draft("Qwen3-0.6B", PRESETS) == step.Draft("model", PRESETS.models["Qwen3-0.6B"])
        head = scenario.resolve_draft("EAGLE3-SpecForge-DeepSeek-V3", PRESETS)
        assert head.kind == "eagle3" and head.model.model_type == "eagle3" and head.model.source.startswith("https://")
        assert scenario.resolve_draft("mtp", PRESETS) == step.Draft("mtp")


class TestMemoryUse:
    def test_split_over_the_devices_at_the_precisions_bytes(self):
        target, draft = PRESETS.models["Qwen3-32B"], step.Draft("ngram")
        gpu = PRESETS.gpus["H100-SXM"]
        use = lambda precision, tp: scenario.memory_use(gpu, target, draft, dtypes.PRECISIONS[precision], tp=tp, batch=1,
                                                         context=0, gamma=0)
        one, two, fp8 = use("bf16", 1), use("bf16", 2), use("fp8", 1)
        assert one["weights_target"] + one["kv_target"] == pytest.approx(
            (2 * target.params_total + target.kv_bytes_per_token()) / 1e9) and one["memory"] == 80 * 2 ** 30 / 1e9
        assert two["weights_target"] == pytest.approx(one["weights_target"] / 2)
        embeddings = target.params["embeddings"]
        assert fp8["weights_target"] + fp8["kv_target"] == pytest.approx(
            (target.params_total - embeddings + 2 * embeddings + target.kv_bytes_per_token(1)) / 1e9)

    def test_an_eagle3_head_holds_its_own_head_but_not_the_target_s_embedding(self):
        """SpecForge's gpt-oss-120b head: one decoder layer, the fc and a 32,000-token head, by hand;
        its 201,088 × 2,880 input table is the target's, which the engines share (it had been charged
        1.16 GB more, and one H100 held 237 sequences of 1,024 where it holds 263)."""
        target, gpu, shipped = PRESETS.models["gpt-oss-120b"], PRESETS.gpus["H100-SXM"], dtypes.PRECISIONS["checkpoint"]
        head = scenario.resolve_draft("EAGLE3-SpecForge-gpt-oss-120b", PRESETS)
        h, heads, kv, d, i = 2880, 64, 8, 64, 17_280
        layer = 2 * h * heads * d + 2 * 2 * h * kv * d + heads * d * h + 3 * h * i + 3 * h + h + 3 * h * h
        held = scenario.memory_use(gpu, target, head, shipped, tp=1, batch=1, context=0, gamma=0)["weights_draft"]
        assert held == pytest.approx(2 * (layer + 32_000 * h) / 1e9)
        assert head.model.params_total - (layer + 32_000 * h) == 201_088 * h  # the model read keeps its table
        assert scenario.largest_batch(gpu, target, head, shipped, tp=1, context=1024, gamma=3) == 263


class TestDefaultTp:
    def test_the_fewest_gpus_that_hold_the_pair(self):
        gpu, models = PRESETS.gpus["H100-SXM"], PRESETS.models
        small = step.Draft("model", models["Qwen3-0.6B"])
        # 65.5 GB of weights fit one H100, the 17 GB of KV at batch 64 × 1,024 besides do not.
        assert scenario.default_parallel(gpu, models["Qwen3-32B"], small, dtypes.PRECISIONS["bf16"]) == (2, 1, False)
        assert scenario.default_parallel(gpu, models["Qwen3-32B"], small, dtypes.PRECISIONS["fp8"]) == (1, 1, False)
        assert scenario.default_parallel(gpu, models["Llama-3.1-70B"], step.Draft("eagle3"), dtypes.PRECISIONS["bf16"]) == (4, 1, False)
        assert scenario.default_parallel(gpu, models["Llama-3.1-8B"], step.Draft("ngram"), dtypes.PRECISIONS["bf16"]) == (1, 1, False)

    def test_one_on_a_device_without_an_interconnect(self):
        cpu = PRESETS.gpus["Intel-12th-gen-desktop"]
        assert scenario.default_parallel(cpu, PRESETS.models["Qwen3-32B"], step.Draft("ngram"), dtypes.PRECISIONS["bf16"]) == (1, 1, False)

    def test_a_mixture_of_experts_that_eight_gpus_do_not_hold_gets_attention_groups_and_expert_parallelism(self):
        checkpoint, models = dtypes.PRECISIONS["checkpoint"], PRESETS.models
        deepseek = models["DeepSeek-V3"]
        # 671B in FP8 is 84 GB a GPU over 8 H100s before any cache: 2 groups of 8 with experts over 16.
        assert scenario.default_parallel(PRESETS.gpus["H100-SXM"], deepseek, step.Draft("mtp"), checkpoint) == (8, 2, True)
        assert scenario.largest_batch(PRESETS.gpus["H100-SXM"], deepseek, step.Draft("mtp"), checkpoint, tp=8, dp=2,
                                      context=1024, gamma=4) >= 64
        assert scenario.default_parallel(PRESETS.gpus["H200"], deepseek, step.Draft("mtp"), checkpoint) == (8, 1, False)
        # Without a scale-out figure, no more than its domain of 8: said not to fit rather than guessed.
        assert scenario.default_parallel(PRESETS.gpus["MI300X"], models["Kimi-K2"], step.Draft("eagle3"), dtypes.PRECISIONS["bf16"]) == (8, 1, False)


class TestScenarioIdeal:
    def test_every_share_of_peak_and_no_cost_beyond_the_roofline(self):
        assert DEFAULT.ideal().costs == step.Costs() and DEFAULT.ideal().engine == DEFAULT.engine


class TestKnobsOffPreset:
    def test_none_at_the_preset(self):
        assert scenario.knobs_off_preset(DEFAULT) == {}

    def test_each_knob_that_differs_with_its_preset(self):
        moved = replace(DEFAULT, costs=replace(DEFAULT.costs, mfu=0.9, token_us=12.0))
        assert scenario.knobs_off_preset(moved) == {"mfu": (0.9, 0.6), "token_us": (12.0, 5.0)}


class TestNearNames:
    def test_a_typo_reads_as_the_parameter_it_resembles(self):
        assert scenario.near_names(["gama", "Batch", "alpah", "gamma", "view"]) == {
            "gama": "gamma", "Batch": "batch", "alpah": "alpha"}

    def test_no_page_s_own_parameter_reads_as_a_typo(self):
        """The app takes a parameter that reads as a typo out of the address: a page's own would lose
        its value (a review: exp_context is 0.78 alike to context, against the cutoff's 0.8). Every key a
        page binds or reads, found in its source, and the ones it names through a variable."""
        root = Path(__file__).resolve().parent.parent
        keys = set()
        for path in [root / "app.py", *(root / "pages").glob("*.py"), *(root / "pages" / "parts").glob("*.py")]:
            text = path.read_text()
            keys |= set(re.findall(r'key=f?"([a-z][a-z0-9_]*)"', text))
            keys |= set(re.findall(r'query_params(?:\.get_all|\.get|\.pop)?[\[(]"([a-z][a-z0-9_]*)"', text))
            keys |= set(re.findall(r'"((?:claim|exp|live|serve|sglang|trtllm)_[a-z_]+)"', text))
        keys |= {"claim", "view", "lang", "live_url_name", "live_prometheus_name"}  # named through variables
        assert len(keys) > 70 and scenario.near_names(sorted(keys)) == {}


class TestFromQueryParams:
    def test_defaults_are_the_realistic_case(self):
        assert (DEFAULT.gpu.id, DEFAULT.target_id, DEFAULT.draft_id, DEFAULT.engine.id) == (
            "H100-SXM", "Qwen3-32B", "Qwen3-0.6B", "vllm-v1")
        assert (DEFAULT.tp, DEFAULT.precision.name, DEFAULT.mode, DEFAULT.context) == (2, "checkpoint", "step", 1024)
        assert DEFAULT.costs == scenario.preset_costs(PRESETS.engines["vllm-v1"])
        assert (DEFAULT.alpha, DEFAULT.gamma, DEFAULT.batch, DEFAULT.draft_cost) == (0.8, 4, 64, 0.05)

    def test_refused_values_fall_back_and_are_named(self):
        made, refused = scenario.from_query_params(
            {"alpha": "5", "gpu": "nope", "target": "../etc/passwd", "tp": "3", "mfu": "0", "engine": "x"}, PRESETS)
        assert refused == [("gpu", "nope"), ("target", "../etc/passwd"), ("engine", "x"), ("tp", "3"), ("mfu", "0"),
                           ("alpha", "5")]
        assert made == DEFAULT

    def test_a_new_target_brings_its_own_draft_and_gpu_count(self):
        made = make_scenario(target="Llama-3.1-70B")
        assert (made.draft_id, made.tp) == ("Llama-3.2-1B", 4)

    def test_typed_device_figures(self):
        made = make_scenario(gpu="Intel-12th-gen-desktop", tflops="1.5", bandwidth="0.0768")
        assert (made.gpu.tflops, made.gpu.bandwidth_tb_s, made.tp) == (1.5, 0.0768, 1)
        assert made.gpu_figures == {"tflops": 1.5, "bandwidth": 0.0768}

    def test_a_steady_load_travels_in_a_link(self):
        made = make_scenario(prefill="on", input_tokens="2000", output_tokens="100", context="8192")
        assert made.prefill and made.load == {"prompt_tokens": 2000, "output_tokens": 100}
        assert made.context == 2050  # a request's mean under the load, not the link's context
        assert make_scenario(input_tokens="2000").load["prompt_tokens"] == 0  # decoding only, the default
        params = scenario.to_query_params(made, PRESETS)
        assert (params["prefill"], params["input_tokens"], params["output_tokens"]) == ("on", "2000", "100")
        assert "context" not in params
        assert scenario.from_query_params(params, PRESETS) == (made, [])
        assert "prefill" not in scenario.to_query_params(DEFAULT, PRESETS)
        assert scenario.from_query_params({"prefill": "yes", "output_tokens": "0"}, PRESETS)[1] == [
            ("output_tokens", "0"), ("prefill", "yes")]

    def test_a_workload_preset_gives_the_tokens_a_link_leaves_out(self):
        assert make_scenario(prefill="on", workload="summarisation").load == {"prompt_tokens": 16000,
                                                                              "output_tokens": 150}
        assert make_scenario(prefill="on", workload="summarisation", output_tokens="300").output_tokens == 300
        assert make_scenario(prefill="on", workload="mine").input_tokens == 100  # not a preset: the defaults

    def test_given_ratios_take_no_load(self):
        """As the page computes: its control is disabled in ratios mode, and the link's context holds."""
        made = make_scenario(mode="ratios", prefill="on", input_tokens="2000", output_tokens="100")
        assert not made.prefill and made.context == 1024

    def test_the_workload_defaults_are_the_coding_assistant_s(self):
        coding = workload.load_workloads(settings.get("SPECVIZ_DATA_DIR"))["coding_assistant"]
        assert (DEFAULT.input_tokens, DEFAULT.output_tokens) == (coding.input_tokens, coding.output_tokens)
        assert (scenario.FIELDS["input_tokens"].default, scenario.FIELDS["output_tokens"].default) == (100, 500)

    def test_unknown_parameters_are_left_to_the_page(self):
        assert scenario.from_query_params({"view": "Roofline"}, PRESETS) == (DEFAULT, [])


class TestToQueryParams:
    def test_the_default_carries_only_what_derives_from_others(self):
        # The draft follows the target and the GPUs the memory need: a link keeps them if a default moves.
        assert scenario.to_query_params(DEFAULT, PRESETS) == {"draft": "Qwen3-0.6B", "tp": "2"}
        moe = scenario.to_query_params(make_scenario(target="DeepSeek-V3", gpu="H100-SXM"), PRESETS)
        assert {k: moe[k] for k in ("draft", "tp", "dp", "ep")} == {"draft": "mtp", "tp": "8", "dp": "2", "ep": "on"}

    def test_only_what_differs(self):
        sglang = PRESETS.engines["sglang"]
        moved = replace(DEFAULT, alpha=0.7, costs=replace(scenario.preset_costs(sglang), step_ms=2.5), engine=sglang)
        derived = {"draft": "Qwen3-0.6B", "tp": "2"}
        assert scenario.to_query_params(moved, PRESETS) == {"engine": "sglang", "alpha": "0.7", "step_ms": "2.5",
                                                            **derived}
        # The vLLM preset's costs under SGLang: each that differs from SGLang's travels.
        assert scenario.to_query_params(replace(DEFAULT, engine=sglang), PRESETS) == {
            "engine": "sglang", "step_ms": "1.3", "allreduce_us": "9", **derived}

    @given(alpha=st.sampled_from([0.0, 0.35, 0.8, 1.0]), gamma=st.integers(1, 16),
           batch=st.sampled_from([1, 3, 64, 1024]), context=st.sampled_from([0, 512, 1024, 131072]),
           target=st.sampled_from(["Qwen3-32B", "Llama-3.1-70B", "Mixtral-8x7B", "Llama-3.1-8B", "DeepSeek-V3",
                                   "gpt-oss-120b", "Qwen3-Next-80B-A3B"]),
           draft=st.sampled_from(["eagle3", "ngram", "suffix", "medusa", "peagle", "Qwen3-0.6B", "Llama-3.2-1B"]),
           engine=st.sampled_from(["vllm-v1", "sglang", "eager"]), tp=st.sampled_from([1, 2, 8]),
           precision=st.sampled_from(list(dtypes.PRECISIONS)), mode=st.sampled_from(["step", "ratios"]),
           mfu=st.sampled_from([None, 0.35, 1.0]), token_us=st.sampled_from([None, 0.0, 42.5]),
           weights=st.dictionaries(st.sampled_from(list(architecture.COMPONENTS)), st.sampled_from(list(dtypes.FORMATS)),
                                   max_size=2),
           kv=st.sampled_from([None, "bf16", "fp8"]), dp=st.sampled_from([1, 2, 9, 64]), ep=st.booleans(),
           overlap=st.sampled_from([0.0, 0.38, 1.0]))
    def test_round_trip(self, alpha, gamma, batch, context, target, draft, engine, tp, precision, mode, mfu, token_us,
                        weights, kv, dp, ep, overlap):
        chosen = PRESETS.engines[engine]
        costs = scenario.preset_costs(chosen)
        costs = replace(costs, mfu=costs.mfu if mfu is None else mfu,
                        token_us=costs.token_us if token_us is None else token_us)
        made = replace(DEFAULT, alpha=alpha, gamma=gamma, batch=batch, context=context,
                       target=PRESETS.models[target], target_id=target, draft=scenario.resolve_draft(draft, PRESETS),
                       draft_id=draft, engine=chosen, costs=costs, tp=tp, dp=dp, ep=ep,
                       precision=scenario.resolve_precision(precision, weights, kv), mode=mode, routing_overlap=overlap)
        assert scenario.from_query_params(scenario.to_query_params(made, PRESETS), PRESETS) == (made, [])

    def test_the_routing_overlap_moves_a_mixture_of_experts_only(self):
        """Cohere's measured 0.38 by default; 0 (uniform routing) is the largest expert tax, and a
        dense target has none to move."""
        point = (0.8, 4, 8, 1024)
        measured, uniform = (make_scenario(target="DeepSeek-V3", gpu="H200", tp="8", **extra)
                             for extra in ({}, {"routing_overlap": "0"}))
        assert measured.routing_overlap == step.ROUTING_OVERLAP == 0.38
        assert scenario.to_query_params(uniform, PRESETS)["routing_overlap"] == "0"
        assert "routing_overlap" not in scenario.to_query_params(measured, PRESETS)
        taxed, less = (float(calculator.evaluate_scenario(s, *point)["speedup"]) for s in (uniform, measured))
        assert less > taxed
        dense = [float(calculator.evaluate_scenario(make_scenario(routing_overlap=q), *point)["speedup"])
                 for q in ("0", "1")]
        assert dense[0] == dense[1]
        assert ("routing_overlap", "1.5") in scenario.from_query_params({"routing_overlap": "1.5"}, PRESETS)[1]

    def test_a_custom_model_is_named_and_refused_on_the_other_side(self):
        custom = replace(DEFAULT, target_id="custom")
        params = scenario.to_query_params(custom, PRESETS)
        assert params["target"] == "custom"
        assert ("target", "custom") in scenario.from_query_params(params, PRESETS)[1]




def test_the_largest_tensor_parallel_group_is_what_the_model_accepts():
    """A pass may see a group of up to roofline.MAX_DEVICES devices as one; the scenario offers no more."""
    assert max(scenario.TENSOR_PARALLEL) * max(scenario.DATA_PARALLEL) == roofline.MAX_DEVICES


class TestPublishedAcceptance:
    def test_rows_name_presets_and_alpha_reproduces_the_length(self):
        assert len(PRESETS.acceptance) >= 6
        for row in PRESETS.acceptance:
            assert row.draft in scenario.draft_choices(PRESETS, row.target) and row.source.startswith("https://")
            # One address and nothing else: the calculator links it ("[source](…)"), and the DeepSeek-V3
            # report's "https://… (DeepSeek-V3 technical report, §5.4.3)" was no link at all.
            assert re.fullmatch(r"https://[^\s()]+", row.source), row.source
            if row.acceptance_length is not None:  # the length the calculator shows at that α and γ
                shown, _ = scenario.from_query_params({"target": row.target, "draft": row.draft}, PRESETS)
                assert shown.expected_tokens(row.alpha, row.gamma) == pytest.approx(row.acceptance_length)
        (oss,) = scenario.published_acceptance(PRESETS.acceptance, "gpt-oss-120b", "eagle3")
        assert round(oss.alpha, 3) == 0.667 and oss.gamma == 3  # 1 + α + α² + α³ = 2.41
        # DeepSeek-V4-Flash's one MTP layer drafts 3 tokens, two past its training: 2.60 a step is
        # 1 + α + α²·0.62 + α³·0.62³, α = 0.909, where an i.i.d. chain would read 0.717.
        (flash,) = scenario.published_acceptance(PRESETS.acceptance, "DeepSeek-V4-Flash", "mtp")
        assert round(flash.alpha, 3) == 0.909
        assert 1 + flash.alpha + flash.alpha ** 2 * 0.62 + flash.alpha ** 3 * 0.62 ** 3 == pytest.approx(2.60)
        # GLM-5's MTP layer was trained over three steps: its 2.74 at γ 3 is an i.i.d. chain's.
        assert [round(r.alpha, 3) for r in scenario.published_acceptance(PRESETS.acceptance, "GLM-5", "mtp")] == \
            [round(spec.alpha_from_acceptance_length(length, 3), 3) for length in (2.74, 2.95)]
        # The report's "between 85% and 90%": both ends, so that neither is taken for the highest alone
        # (a manager's pass: 1.8x needing α 0.899 had read "above the highest published, 0.85").
        assert [r.alpha for r in scenario.published_acceptance(PRESETS.acceptance, "DeepSeek-V3", "mtp")] == [0.85, 0.9, 0.81]


class TestMtpReuse:
    def test_a_link_carries_the_reuse_factor_and_the_page_s_figures_follow_it(self):
        deepseek = make_scenario(target="DeepSeek-V3", gpu="B200", draft="mtp")
        assert deepseek.mtp_reuse == mtp.REUSE and deepseek.mtp_reused_from == 2
        assert "mtp_reuse" not in scenario.to_query_params(deepseek, PRESETS)
        held = make_scenario(target="DeepSeek-V3", gpu="B200", draft="mtp", mtp_reuse="0.8")
        assert scenario.to_query_params(held, PRESETS)["mtp_reuse"] == "0.8"
        assert held.expected_tokens(0.8, 3) == pytest.approx(1 + 0.8 + 0.64 * 0.8 + 0.512 * 0.8 ** 3)
        assert held.reuse == {"trained": 1.0, "decay": 0.8}
        # A head, and layers trained for every position, are chains whatever the link says.
        head = make_scenario(target="DeepSeek-V3", gpu="B200", draft="eagle3", mtp_reuse="0.8")
        assert head.mtp_reused_from is None and head.expected_tokens(0.8, 3) == pytest.approx(spec.expected_tokens(0.8, 3))
        qwen = make_scenario(target="Qwen3-Next-80B-A3B", draft="mtp")
        assert qwen.mtp_reused_from is None and qwen.expected_tokens(0.8, 3) == pytest.approx(spec.expected_tokens(0.8, 3))
        assert scenario.from_query_params({"mtp_reuse": "1.5"}, PRESETS)[1] == [("mtp_reuse", "1.5")]

    def test_measured_rates_set_the_reuse_factor_they_show(self):
        """A server's rates 0.9, 0.85, 0.8 on DeepSeek-V3's one MTP layer make 1 + 0.9 + 0.765 + 0.612
        = 3.277 tokens a step, past the 2.86 that reuse 0.62 allows at α = 1: the rates' own factor
        (0.94, fitted) is taken, and α makes their tokens a step. A draft model's rates keep it."""
        deepseek = make_scenario(target="DeepSeek-V3", gpu="B200", draft="mtp")
        measured, alpha = workload.at_measured_rates(deepseek, [0.9, 0.85, 0.8])
        assert measured.mtp_reuse == deepseek.reuse_from_rates([0.9, 0.85, 0.8]) == 0.94
        assert measured.expected_tokens(alpha, 3) == pytest.approx(1 + 0.9 + 0.9 * 0.85 + 0.9 * 0.85 * 0.8)
        plain, alpha = workload.at_measured_rates(make_scenario(), [0.9, 0.85, 0.8])
        # The i.i.d. α of those tokens a step: 1 + α + α² + α³ = 3.277, a cubic's one real root.
        (root,) = [r.real for r in np.roots([1, 1, 1, -2.277]) if abs(r.imag) < 1e-12]
        assert plain == make_scenario() and alpha == pytest.approx(root)
        # By hand at γ 2: E = 1 + 0.9 + 0.9 · 0.8 = 2.62, α + α² = 1.62, α = (−1 + √7.48) / 2; equal rates are α.
        assert workload.at_measured_rates(make_scenario(), [0.9, 0.8])[1] == pytest.approx((-1 + math.sqrt(7.48)) / 2)
        assert workload.at_measured_rates(make_scenario(), [0.7, 0.7, 0.7])[1] == pytest.approx(0.7)


class TestVocabMismatch:
    def test_a_draft_of_another_vocabulary_is_said_and_one_of_the_same_is_not(self):
        """An engineer's pass: DeepSeek-V3 (129,280 tokens) drafted by Qwen3-0.6B (151,936) had a
        speedup, a calc row and a serving command with nothing said outside the sidebar."""
        odd = make_scenario(target="DeepSeek-V3", draft="Qwen3-0.6B", gpu="B200", precision="fp8")
        said = scenario.vocab_mismatch(odd.target, odd.draft)
        assert said.key == "side.vocab_mismatch" and said.params == {"draft": 151_936, "target": 129_280}
        for query in ({}, {"target": "DeepSeek-V3", "draft": "mtp"}, {"draft": "ngram"}):
            chosen = make_scenario(**query)
            assert scenario.vocab_mismatch(chosen.target, chosen.draft) is None
        assert scenario.vocab_mismatch(odd.target, None) is None
