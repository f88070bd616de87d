"""Tests for specviz.model.memory: each term of a GPU's memory by hand, and the largest batch that
fits with and without the draft."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, strategies as st

from conftest import PRESETS, make_scenario
from specviz import calculator, scenario
from specviz.model import calibration, dtypes, memory, step

QWEN32, QWEN06 = PRESETS.models["Qwen3-32B"], PRESETS.models["Qwen3-0.6B"]
H100 = PRESETS.gpus["H100-SXM"]
BF16 = dtypes.PRECISIONS["bf16"]


def seed_pair_terms(batch: int) -> dict:
    """The seed's pair by hand: Qwen3-32B (64 layers, 8 KV heads of 128) drafted by Qwen3-0.6B (28
    layers, 8 KV heads of 128) on 2 H100s in BF16, context 4,096, γ 4, vLLM's 0.92 of 80 GiB (85.9 GB)."""
    positions = 4096 + 4 + 1
    return {"weights_target": 2 * QWEN32.params_total / 2 / 1e9, "weights_draft": 2 * QWEN06.params_total / 2 / 1e9,
            "kv_target": batch * 64 * 2 * 8 * 128 * 2 * positions / 2 / 1e9,
            "kv_draft": batch * 28 * 2 * 8 * 128 * 2 * positions / 2 / 1e9,
            # vLLM's profile run on an 80 GB GPU: 8,192 tokens through h 5,120 and 3·25,600/2 of MLP, 1,024 rows of logits.
            "workspace": (8192 * (5120 + 3 * 25_600 / 2) * 2 + 1024 * 151_936 * 4) / 1e9,
            "usable": 0.92 * 80 * 2 ** 30 / 1e9}


class TestTerms:
    def test_each_term_for_the_seeds_pair_by_hand(self):
        terms = scenario.memory_use(H100, QWEN32, step.Draft("model", QWEN06), BF16, tp=2, batch=64, context=4096,
                                    gamma=4)
        expected = seed_pair_terms(64)
        for name, value in expected.items():
            assert terms[name] == pytest.approx(value, rel=1e-4), name
        assert terms["need"] == pytest.approx(sum(v for k, v in expected.items() if k != "usable"), rel=1e-4)
        # The figure: 83 GB a GPU before the workspace; 84.2 with it, over the 79.0 vLLM takes.
        assert round(terms["need"] - terms["workspace"]) == 83 and terms["need"] > terms["usable"]

    def test_a_host_draft_and_self_speculation_hold_nothing_of_their_own(self):
        for draft in (step.Draft("ngram"), step.Draft("self", kv_budget=512), None):
            terms = scenario.memory_use(H100, QWEN32, draft, BF16, tp=2, batch=8, context=1024, gamma=4)
            assert terms["weights_draft"] == 0 and np.all(terms["kv_draft"] == 0)

    def test_sglang_keeps_its_reserve_instead_of_vllms_share(self):
        sglang = PRESETS.engines["sglang"].memory
        # 80 GB is 74.5 GiB: chunked prefill of 8,192 tokens, 512 MiB + 1.5 MiB each + 2/8 GiB.
        assert sglang.reserve_gb(80, 2) == pytest.approx((512 + 1.5 * 8192 + 256) * 2 ** 20 / 1e9)
        assert sglang.reserve_gb(24, 1) == pytest.approx((512 + 1.5 * 4096 + 128) * 2 ** 20 / 1e9)  # no 10 GiB floor
        assert sglang.reserve_gb(180, 8) == pytest.approx((512 + 1.5 * 16_384 + 1024) * 2 ** 20 / 1e9)
        terms = scenario.memory_use(H100, QWEN32, None, BF16, tp=2, batch=1, context=0, gamma=0, rule=sglang)
        assert terms["usable"] == pytest.approx(80 * 2 ** 30 / 1e9) and terms["workspace"] == pytest.approx(sglang.reserve_gb(80, 2))

    def test_vllms_profile_shapes_by_gpu_memory(self):
        assert memory.VLLM_BUDGET.limits(80) == (8_192, 1_024)
        assert memory.VLLM_BUDGET.limits(180) == (16_384, 1_024)
        assert memory.VLLM_BUDGET.limits(24) == (2_048, 256)
        # A device without a memory figure (a CPU preset) takes the smallest tier's: calc and serve of one
        # had failed with StopIteration (an attack pass).
        assert memory.VLLM_BUDGET.limits(float("nan")) == (2_048, 256)
        # The presets that are no server of their own, or not known, keep vLLM's shapes.
        assert {PRESETS.engines[e].memory.budget for e in ("vllm-v1", "vllm-v0", "eager", "any")} == {memory.VLLM_BUDGET}

    def test_each_engine_s_own_budget_and_sequence_cap_by_gpu_memory(self):
        sglang, trtllm = PRESETS.engines["sglang"].memory.budget, PRESETS.engines["trt-llm"].memory.budget
        # SGLang 0.5.23's chunked_prefill_size: 2,048 below 20 GiB, 4,096 below 60, 8,192 below 160, 16,384
        # above (a 40 GB A100 is 37.3 GiB: 4,096 where vLLM's is 2,048); 2,048 running requests at least.
        assert [sglang.limits(gb)[0] for gb in (16, 24, 40, 48, 80, 141, 180)] == \
            [2_048, 4_096, 4_096, 4_096, 8_192, 8_192, 16_384]
        assert [memory.VLLM_BUDGET.limits(gb)[0] for gb in (40, 48)] == [2_048, 2_048]
        assert sglang.limits(80)[1] == 2_048
        # TensorRT-LLM's BuildConfig: 8,192 tokens and 2,048 sequences on any GPU.
        assert {trtllm.limits(gb) for gb in (24, 80, 180)} == {(8_192, 2_048)}
        # SGLang divides its chunk over data-parallel attention groups; vLLM's budget holds for each rank.
        assert (sglang.tokens_per_rank(80, 8), memory.VLLM_BUDGET.tokens_per_rank(80, 8)) == (1_024, 8_192)

    def test_the_activations_at_each_engine_s_own_shapes_by_hand(self):
        # Qwen3-32B on 2 H100s: T·(h + 3I/tp)·2 + S·V·4 bytes; I = 25,600 (its MLP, norms included: 25,600.7).
        per_token, per_row = (5120 + 3 * 25_600.7 / 2) * 2, 151_936 * 4
        for engine, tokens, rows in (("vllm-v1", 8192, 1024), ("trt-llm", 8192, 2048), ("sglang", 8192, 2048)):
            rule = PRESETS.engines[engine].memory
            assert memory.activations_gb(QWEN32, 2, 80, rule.budget) == pytest.approx(
                (tokens * per_token + rows * per_row) / 1e9, rel=1e-5), engine
        # TensorRT-LLM's 2,048 rows of logits: 0.62 GB more than vLLM's 1,024, so a GPU holds a little less.
        trt = scenario.memory_use(H100, QWEN32, None, BF16, tp=2, batch=1, context=0, gamma=0,
                                  rule=PRESETS.engines["trt-llm"].memory)
        assert trt["workspace"] - memory.activations_gb(QWEN32, 2, 80) == pytest.approx(1024 * per_row / 1e9, rel=1e-9)
        # SGLang's 10 GiB floor on an 80 GB GPU still outweighs its activations at its own shapes.
        sglang = PRESETS.engines["sglang"].memory
        assert memory.activations_gb(QWEN32, 2, 80, sglang.budget) < sglang.reserve_gb(80, 2)


class TestLargestBatch:
    def test_the_seeds_pair_with_and_without_its_draft_by_hand(self):
        one = seed_pair_terms(1)
        room = one["usable"] - one["weights_target"] - one["weights_draft"] - one["workspace"]
        with_draft = int(room // (one["kv_target"] + one["kv_draft"]))
        plain_one = {**one, "kv_target": one["kv_target"] * 4097 / 4101}  # a plain pass holds L + 1 positions
        plain = int((one["usable"] - one["weights_target"] - one["workspace"]) // plain_one["kv_target"])
        chosen = make_scenario(target="Qwen3-32B", draft="Qwen3-0.6B", gpu="H100-SXM", tp="2", context="4096")
        assert (chosen.max_batch(), chosen.max_batch(speculative=False)) == (with_draft, plain) == (57, 83)
        # Batch 64 fits plain decoding, not the pair: the draft's own cache is what breaks it.
        assert chosen.max_batch() < 64 <= chosen.max_batch(speculative=False)


    def test_every_mtp_layer_of_the_target_is_held(self):
        """MiniMax-M2.5's three MTP modules (12.91B with their heads, the preset's source), each an FP8
        layer of 8 KV heads of 128, are all loaded, not one: on 2 H200s at context 1,024 and γ 4 the
        draft holds 3 × 1.85 GB a GPU (its copies of the embedding and the head are the target's, which
        the engine shares) and 128 sequences fit, each with its cache in all three layers."""
        minimax = PRESETS.models["MiniMax-M2.5"]
        assert minimax.mtp_layers == 3
        chosen = make_scenario(target="MiniMax-M2.5", draft="mtp", gpu="H200", tp="2")
        one = chosen.memory()
        params = minimax.mtp.params  # FP8 experts and attention, BF16 MLP, over 2 GPUs; the tables shared
        layer_gb = (params["experts"] + params["attention"] + 2 * params["mlp"]) / 2 / 1e9
        assert one["weights_draft"] == pytest.approx(3 * layer_gb, rel=0.01) == pytest.approx(5.56, abs=0.01)
        assert one["kv_draft"] == pytest.approx(3 * 64 * 2 * 8 * 128 * 2 * 1029 / 2 / 1e9)  # batch 64, BF16
        per_sequence = (62 + 3) * 2 * 8 * 128 * 2 * 1029 / 2 / 1e9
        room = one["usable"] - one["weights_target"] - one["weights_draft"] - one["workspace"]
        assert chosen.max_batch() == int(room // per_sequence) == 128

    def test_nothing_fits_where_the_weights_do_not(self):
        assert scenario.largest_batch(H100, PRESETS.models["DeepSeek-V3"], None, dtypes.PRECISIONS["checkpoint"],
                                      tp=1, context=1024, gamma=0) == 0

    def test_no_limit_without_a_memory_figure_and_none_where_the_memory_is_short(self):
        laptop = PRESETS.gpus["Intel-Core-Ultra-X7-358H"]  # no published memory figure
        assert scenario.largest_batch(laptop, QWEN32, None, BF16, tp=1, context=1024, gamma=0) == np.iinfo(np.int64).max
        desktop = PRESETS.gpus["Intel-12th-gen-desktop"]  # 64 GB: not Qwen3-32B's 65.5 GB of BF16 weights
        assert scenario.largest_batch(desktop, QWEN32, None, BF16, tp=1, context=1024, gamma=0) == 0

    @given(context=st.integers(0, 131_072), gamma=st.integers(1, 16), tp=st.sampled_from([1, 2, 4, 8]))
    def test_the_largest_batch_fits_and_one_more_does_not(self, context, gamma, tp):
        draft = step.Draft("model", QWEN06)
        limit = scenario.largest_batch(H100, QWEN32, draft, BF16, tp=tp, context=context, gamma=gamma)
        need = lambda batch: scenario.memory_use(H100, QWEN32, draft, BF16, tp=tp, batch=batch, context=context,
                                                 gamma=gamma)
        if limit > 0:
            assert need(limit)["need"] <= need(limit)["usable"] * (1 + 1e-12)
        assert need(limit + 1)["need"] > need(limit + 1)["usable"] * (1 - 1e-12)

    def test_data_parallel_groups_each_hold_whole_sequences(self):
        """A sequence lives in one data-parallel group: DeepSeek-V3 in BF16 with its MTP layer at
        131,072 positions on H100s, TP 8 × DP 4, leaves 32.3 GB a GPU, and one sequence's latent,
        131,072 × (512 + 64) × 61 × 2 bytes = 9.2 GB, is on each GPU of its group: 3 a group, 12 in
        all. Batch 14 puts 4 in two groups and does not fit (the average over the 32 GPUs says 14)."""
        chosen = make_scenario(target="DeepSeek-V3", draft="mtp", gpu="H100-SXM", precision="bf16", gamma="1",
                               context="131072", batch="14")
        assert (chosen.tp, chosen.dp, chosen.ep) == (8, 4, True)
        one = chosen.memory()
        room = one["usable"] - one["weights_target"] - one["weights_draft"] - one["workspace"]
        latent = 131_073 * (512 + 64) * 61 * 2 / 1e9  # 131,072 positions and a verify pass's γ + 1 = 2, less one
        assert room == pytest.approx(32.3, abs=0.05) and one["kv_target"] == pytest.approx(4 * latent, rel=0.01)
        assert int(room / (latent * 8 / 32)) == 14
        assert chosen.max_batch() == 12 and not calculator.memory_fit(chosen)["fits"]
        assert replace(chosen, batch=12).memory()["need"] <= one["usable"]

    @given(context=st.sampled_from([0, 1024, 32_768, 131_072]), dp=st.sampled_from([2, 4, 8]))
    def test_with_data_parallel_groups_the_largest_batch_fits_and_one_more_does_not(self, context, dp):
        chosen = make_scenario(target="DeepSeek-V3", draft="mtp", gpu="H100-SXM", precision="fp8", tp="8",
                               dp=str(dp), ep="on", context=str(context))
        limit = chosen.max_batch()
        need = lambda batch: replace(chosen, batch=batch).memory()
        assert chosen.dp == dp and limit % dp == 0 and limit > 0
        assert need(limit)["need"] <= need(limit)["usable"] * (1 + 1e-12)
        assert need(limit + 1)["need"] > need(limit + 1)["usable"] * (1 - 1e-12)

    def test_broadcast_over_context(self):
        contexts = np.array([1024, 4096, 32_768])
        limits = scenario.largest_batch(H100, QWEN32, step.Draft("model", QWEN06), BF16, tp=2, context=contexts, gamma=4)
        assert limits.shape == (3,) and list(limits) == sorted(limits, reverse=True)
        assert limits[1] == 57


class TestEqualMemory:
    def test_each_server_at_its_own_limit(self):
        """docs/model.md and README's figures: the default scenario (context 1,024) at full load."""
        full = calculator.equal_memory(make_scenario())
        assert (full["batch"], full["batch_plain"]) == (228, 334)
        assert (round(full["tokens_per_s"]), round(full["tokens_per_s_plain"]), round(full["ratio"], 2)) == (5928, 6377, 0.93)
        at_limit = calculator.evaluate_scenario(make_scenario(), 0.8, 4, 228, 1024)["spec_tokens_per_s"]
        assert full["tokens_per_s"] == pytest.approx(float(at_limit))

    def test_its_ratio_carries_a_band(self):
        """Each draw of the costs prices both servers at their own limits (the memory's, which no cost
        moves): by brute force, the draws' 10th and 90th percentiles of the ratio, widened."""
        chosen = make_scenario()
        full = calculator.equal_memory(chosen)
        drawn = chosen.drawn(calculator.BAND_DRAWS)
        ratio = (calculator.evaluate_scenario(drawn, 0.8, 4, 228, 1024)["spec_tokens_per_s"]
                 / calculator.evaluate_scenario(drawn, 0.8, 4, 334, 1024)["baseline_tokens_per_s"])
        low, high = calibration.widen(*np.quantile(ratio, (0.1, 0.9)))
        assert (full["low"], full["high"]) == pytest.approx((float(low), float(high)), rel=1e-12)
        assert full["low"] < full["ratio"] < full["high"]

    def test_a_server_is_priced_at_the_batch_the_token_budget_admits(self):
        """A consistency pass: Llama-3.1-8B at γ 8 and context 256 held 1,363 sequences with its draft,
        whose 12,267 positions a step vLLM's 8,192 do not admit, and was priced there. At most
        ⌈8,192 / 9⌉ − 1 = 910 speculating; plain decoding 8,191, past what its memory holds."""
        chosen = make_scenario(target="Llama-3.1-8B", batch="1000", gamma="8", alpha="0.9", context="256")
        full = calculator.equal_memory(chosen)
        assert chosen.max_batch() > 910 and full["batch"] == 910 and full["budget_binds"]
        assert full["batch_plain"] == chosen.max_batch(speculative=False) < 8191
        at_limit = calculator.evaluate_scenario(chosen, 0.9, 8, 910, 256)["spec_tokens_per_s"]
        assert full["tokens_per_s"] == pytest.approx(float(at_limit))
        assert not calculator.equal_memory(make_scenario())["budget_binds"]

    def test_no_comparison_where_nothing_fits_or_nothing_limits(self):
        assert calculator.equal_memory(make_scenario(target="Llama-3.1-70B", tp="1")) is None
        assert calculator.equal_memory(make_scenario(gpu="Intel-Core-Ultra-X7-358H", tp="1")) is None
