"""Tests for specviz.model.step: each term of a pass against a hand computation, the drafts, and the
special cases that must equal the first model (tp = 1, a chain)."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, strategies as st

from specviz import settings
from specviz.errors import InputError
from specviz.model import drafters, dtypes, hf_config, mtp, roofline, spec, step

DATA = settings.get("SPECVIZ_DATA_DIR")
GPUS, MODELS = roofline.load_gpus(DATA), hf_config.load_models(DATA)
H100, LLAMA8, LLAMA1 = GPUS["H100-SXM"], MODELS["Llama-3.1-8B"], MODELS["Llama-3.2-1B"]
REALISTIC = step.Costs(mfu=0.6, mbu=0.8, overlap=0.0, step_ms=0.3)
# The first model's knobs: its overhead per pass is the step model's cost per step only without drafts.
FIRST = {"mfu": 0.6, "mbu": 0.8, "overlap": 0.0}


class TestPassTime:
    def test_one_device_at_bf16_is_the_first_roofline(self):
        batch, context = np.array([1.0, 8, 64, 512]), np.array([[0.0], [4096.0]])
        mine = step.pass_time(H100, LLAMA8, batch, 5.0, context, costs=REALISTIC)
        first = roofline.forward_pass(H100, LLAMA8, batch, 5.0, context, **FIRST)
        for key in ("flops", "bytes", "compute_s", "memory_s", "time_s"):
            np.testing.assert_array_equal(mine[key], first[key])

    def test_costs_per_layer_and_token_by_hand(self):
        costs = step.Costs(step_ms=0.3, layer_us=5.0, token_us=10.0)
        out = step.pass_time(H100, LLAMA8, 8, 1, 0, costs=costs)
        # 32 layers × 5 µs + 8 tokens × 10 µs; the step's 0.3 ms is not a pass's
        assert out["time_s"] - out["roofline_s"] == pytest.approx(32 * 5e-6 + 8 * 10e-6, rel=1e-12)
        assert (out["layer_s"], out["token_s"]) == pytest.approx((160e-6, 80e-6))

    def test_tensor_parallel_communication_by_hand(self):
        """8 × H100 (NVLink 450 GB/s each way), batch 32: each of 2 × 32 all-reduces moves
        2·7/8·32·4096·2 = 458,752 bytes over a link and waits 10 µs."""
        out = step.pass_time(H100, LLAMA8, 32, 1, 0, tp=8, costs=step.Costs(allreduce_us=10.0))
        assert out["comm_s"] == pytest.approx(64 * (10e-6 + 458_752 / 450e9), rel=1e-12)
        single = step.pass_time(H100, LLAMA8, 32, 1, 0)
        assert out["memory_s"] == pytest.approx(single["memory_s"] / 8, rel=1e-12)
        assert out["compute_s"] == pytest.approx(single["compute_s"] / 8, rel=1e-12)

    def test_fp8_halves_the_linear_weights_and_doubles_their_peak(self):
        bf16 = step.pass_time(H100, LLAMA8, 1, 1, 0)
        fp8 = step.pass_time(H100, LLAMA8, 1, 1, 0, precision=dtypes.PRECISIONS["fp8"])
        # One byte less for each weight of the linear layers (the embedding and head stay BF16, as
        # FP8 checkpoints ship them) and for each KV element of the one position written.
        linear = LLAMA8.params["attention"] + LLAMA8.params["mlp"]
        assert bf16["bytes"] - fp8["bytes"] == pytest.approx(linear + LLAMA8.kv_bytes_per_token(1.0), rel=1e-12)
        # The linear layers and attention at the FP8 peak, the head (V·h per token) at BF16's.
        head, attention = 2.0 * LLAMA8.embedding_params, 4.0 * 32 * 32 * 128 * 1.0
        by_hand = (2.0 * linear + attention) / 1979e12 + head / 989.4e12
        assert fp8["compute_s"] == pytest.approx(by_hand, rel=1e-12)
        # A GPU without an FP8 peak (A100) runs FP8 weights at its BF16 peak.
        a100 = GPUS["A100-80GB"]
        assert step.pass_time(a100, LLAMA8, 1, 1, 0, precision=dtypes.PRECISIONS["fp8"])["compute_s"] == \
            step.pass_time(a100, LLAMA8, 1, 1, 0)["compute_s"]

    def test_refusals(self):
        with pytest.raises(ValueError, match="whole number of devices"):
            step.pass_time(H100, LLAMA8, 1, 1, 0, tp=0)
        with pytest.raises(ValueError, match="no interconnect bandwidth"):
            step.pass_time(GPUS["L40S"], LLAMA8, 1, 1, 0, tp=8)
        assert step.pass_time(GPUS["L40S"], LLAMA8, 1, 1, 0, tp=8, costs=step.Costs(link_gb_s=32))["comm_s"] > 0

    @given(st.integers(1, 1024), st.integers(1, 16), st.integers(0, 131_072), st.sampled_from([1, 2, 4, 8]),
           st.floats(0, 5), st.floats(0, 50), st.floats(0, 50))
    def test_the_time_is_the_sum_of_its_terms(self, batch, tokens, context, tp, step_ms, layer_us, token_us):
        out = step.pass_time(H100, LLAMA8, batch, tokens, context, tp=tp,
                             costs=step.Costs(0.6, 0.8, 0.5, step_ms, layer_us, token_us, 5.0))
        parts = out["roofline_s"] + out["comm_s"] + out["layer_s"] + out["token_s"]
        assert out["time_s"] == pytest.approx(parts, rel=1e-12) and out["time_s"] > 0


class TestTensorParallelDevice:
    def test_peaks_and_bandwidths_add_up(self):
        eight = step.tensor_parallel_device(H100, 8)
        assert (eight.tflops, eight.bandwidth_tb_s) == (8 * 989.4, pytest.approx(8 * 3.35))
        assert step.tensor_parallel_device(H100, 2).peak("fp8") == 2 * 1979
        assert step.tensor_parallel_device(GPUS["B200"], 4).peak("fp4") == 4 * 9000


class TestEagleHead:
    def test_parameters_by_hand(self):
        """Llama-3.1-8B: a decoder layer 2·4096² + 2·4096·1024 + 3·4096·14336 + 2·4096 = 218,112,000;
        EAGLE fuses 2 features (2·4096²) and reads the 128,256-token LM head; EAGLE-3 fuses 3 and
        reads a 32,000-token one."""
        layer = 218_112_000
        assert drafters.eagle_head(LLAMA8).params_total == layer + 2 * 4096**2 + 128_256 * 4096
        head3 = drafters.eagle_head(LLAMA8, "eagle3")
        assert head3.params_total == layer + 3 * 4096**2 + 32_000 * 4096
        assert (head3.layers, head3.vocab_size, head3.kv_bytes_per_token()) == (1, 32_000, 2 * 8 * 128 * 2)
        # A P-EAGLE drafter: four such decoder layers, one fusing layer and one head.
        four = drafters.eagle_head(LLAMA8, "eagle3", 4)
        assert four.params_total - head3.params_total == pytest.approx(3 * layer, abs=1)
        assert (four.layers, four.kv_bytes_per_token()) == (4, 4 * 2 * 8 * 128 * 2)
        assert drafters.drafter(LLAMA8, step.Draft("peagle")).params_total == four.params_total


class TestStep:
    def test_a_draft_model_on_one_device_is_the_first_model(self):
        alpha, gamma, batch = np.array([[0.6], [0.8]]), 4, np.array([1.0, 16, 256])
        mine = step.step(H100, LLAMA8, step.Draft("model", LLAMA1), batch=batch, gamma=gamma, context=1024,
                         alpha=alpha, costs=step.Costs(**FIRST))
        first = roofline.evaluate(H100, LLAMA8, LLAMA1, alpha=alpha, gamma=gamma, batch=batch, context=1024, **FIRST)
        np.testing.assert_allclose(mine["speedup"], first["speedup"], rtol=1e-12)
        np.testing.assert_allclose(mine["verify_cost"], first["verify_cost"], rtol=1e-12)

    def test_the_fixed_cost_is_paid_once_per_step(self):
        """γ = 4 draft passes and a verify pass in one step: 0.3 ms once, on the plain step and on the
        verify pass, never on a draft pass."""
        bare = step.step(H100, LLAMA8, step.Draft("model", LLAMA1), batch=8, gamma=4, context=512, alpha=0.8,
                         costs=step.Costs(**FIRST))
        costs = step.step(H100, LLAMA8, step.Draft("model", LLAMA1), batch=8, gamma=4, context=512, alpha=0.8,
                          costs=REALISTIC)
        assert costs["plain_s"] - bare["plain_s"] == pytest.approx(0.3e-3, rel=1e-9)
        assert costs["verify_s"] - bare["verify_s"] == pytest.approx(0.3e-3, rel=1e-9)
        assert costs["draft_s"] == bare["draft_s"]
        assert costs["spec_s"] - bare["spec_s"] == pytest.approx(0.3e-3, rel=1e-9)

    def test_a_chain_shaped_tree_is_the_chain(self):
        common = dict(batch=[1, 32], gamma=3, context=512, acceptance_length=2.8, costs=REALISTIC)
        chain = step.step(H100, LLAMA8, step.Draft("eagle"), **common)
        tree = step.step(H100, LLAMA8, step.Draft("eagle"), tree_tokens=4, draft_width=1, **common)
        np.testing.assert_array_equal(chain["speedup"], tree["speedup"])
        wide = step.step(H100, LLAMA8, step.Draft("eagle"), tree_tokens=60, draft_width=10, **common)
        assert (wide["verify_s"] > chain["verify_s"]).all() and (wide["speedup"] < chain["speedup"]).all()

    def test_acceptance_length_or_alpha(self):
        alpha = 0.7
        by_alpha = step.step(H100, LLAMA8, step.Draft("ngram"), batch=4, gamma=3, alpha=alpha)
        by_length = step.step(H100, LLAMA8, step.Draft("ngram"), batch=4, gamma=3,
                              acceptance_length=spec.expected_tokens(alpha, 3))
        assert by_alpha["speedup"] == pytest.approx(by_length["speedup"], rel=1e-12)
        # n-gram drafting has no device pass: the speedup is E over the verify cost.
        assert by_alpha["draft_s"] == 0 and by_alpha["speedup"] == pytest.approx(
            spec.expected_tokens(alpha, 3) / by_alpha["verify_cost"], rel=1e-12)
        with pytest.raises(ValueError, match="alpha or a measured"):
            step.step(H100, LLAMA8, step.Draft("ngram"), batch=4, gamma=3)
        with pytest.raises(ValueError, match="between 1 and"):
            step.step(H100, LLAMA8, step.Draft("ngram"), batch=4, gamma=3, acceptance_length=4.5)

    def test_self_speculation_reads_only_its_kv_budget(self):
        out = step.step(H100, LLAMA8, step.Draft("self", kv_budget=512), batch=32, gamma=2, context=32_000,
                        acceptance_length=2.4, costs=REALISTIC)
        expected = step.pass_time(H100, LLAMA8, 32, 1, 512, costs=REALISTIC)["time_s"]
        assert out["draft_s"] == pytest.approx(expected, rel=1e-12)
        assert out["draft_cost"] < 0.5  # 512 of 32,000 positions: the draft skips most of the KV traffic

    def test_a_draft_model_needs_its_model(self):
        with pytest.raises(ValueError, match="needs its model"):
            step.Draft("model")
        with pytest.raises(ValueError, match="take none"):
            step.Draft("ngram", LLAMA1)
        assert step.Draft("eagle3", LLAMA1).model is LLAMA1  # a head of its own shape


class TestDraftKinds:
    """The drafts of 2025–2026: each against the pass it runs."""

    DEEPSEEK = MODELS["DeepSeek-V3"]
    B200 = GPUS["B200"]

    def run(self, target, draft, gamma=3, batch=16):
        return step.step(self.B200, target, draft, batch=batch, gamma=gamma, context=2048, alpha=0.7, tp=8,
                         precision=dtypes.PRECISIONS["checkpoint"], costs=step.Costs(0.6, 0.8, 0.0, 1.0, 5.0, 1.0, 5.0))

    def test_mtp_runs_the_targets_mtp_layer_gamma_times(self):
        out = self.run(self.DEEPSEEK, step.Draft("mtp"))
        one = step.pass_time(self.B200, self.DEEPSEEK.mtp, 16, 1, 2048, tp=8, precision=dtypes.PRECISIONS["checkpoint"],
                             costs=step.Costs(0.6, 0.8, 0.0, 1.0, 5.0, 1.0, 5.0))["time_s"]
        assert out["draft_s"] == pytest.approx(one, rel=1e-12)
        assert out["spec_s"] == pytest.approx(3 * one + out["verify_s"], rel=1e-12)

    def test_mtp_on_a_target_without_mtp_layers_is_refused_by_name(self):
        with pytest.raises(InputError) as info:
            self.run(MODELS["Qwen3-32B"], step.Draft("mtp"))
        assert info.value.key == "step.no_mtp" and "Qwen3-32B" in str(info.value)

    def test_a_parallel_drafter_runs_one_pass_over_gamma_positions(self):
        head = drafters.eagle_head(self.DEEPSEEK, "eagle3", drafters.PEAGLE_LAYERS)
        out = self.run(self.DEEPSEEK, step.Draft("peagle"), gamma=4)
        one_pass = step.pass_time(self.B200, head, 16, 4, 2048, tp=8, precision=dtypes.PRECISIONS["checkpoint"],
                                  costs=step.Costs(0.6, 0.8, 0.0, 1.0, 5.0, 1.0, 5.0))["time_s"]
        assert 4 * out["draft_s"] == pytest.approx(one_pass, rel=1e-12)
        chain = self.run(self.DEEPSEEK, step.Draft("eagle3"), gamma=4)
        assert out["draft_s"] < chain["draft_s"] and out["speedup"] > chain["speedup"]

    def test_a_chain_shaped_block_draft_equals_the_chain(self):
        small = MODELS["Qwen3-0.6B"]
        block = self.run(MODELS["Qwen3-32B"], step.Draft("block", small), gamma=1)
        chain = self.run(MODELS["Qwen3-32B"], step.Draft("model", small), gamma=1)
        assert {k: float(block[k]) for k in ("draft_s", "spec_s", "speedup")} == \
            {k: float(chain[k]) for k in ("draft_s", "spec_s", "speedup")}

    def test_a_block_drafter_of_the_dflash_kind_by_hand(self):
        """SpecForge's configs/qwen3-8b-dflash.json: 5 layers at h 4096, 32 and 8 heads of 128, MLP 12288."""
        qwen3_8b_shape = replace(MODELS["Qwen3-32B"], hidden_size=4096)
        block = drafters.block_drafter(qwen3_8b_shape)
        h, v = 4096, 151_936
        assert block.params == {"experts": 0, "attention": 5 * (h * 32 * 128 * 2 + h * 8 * 128 * 2),
                                "mlp": 5 * 3 * h * 12_288 + 5 * h * h, "embeddings": v * h}
        assert block.params_total - v * h == 1_048_576_000 and block.kv_bytes_per_token() == 5 * 2 * 8 * 128 * 2
        out = self.run(self.DEEPSEEK, step.Draft("block"), gamma=4)
        one_pass = step.pass_time(self.B200, drafters.block_drafter(self.DEEPSEEK), 16, 4, 2048, tp=8,
                                  precision=dtypes.PRECISIONS["checkpoint"],
                                  costs=step.Costs(0.6, 0.8, 0.0, 1.0, 5.0, 1.0, 5.0))["time_s"]
        assert 4 * out["draft_s"] == pytest.approx(one_pass, rel=1e-12)

    def test_medusa_heads_by_hand(self):
        target = MODELS["Llama-3.1-8B"]
        head = drafters.medusa_head(target)
        assert head.params_total == 4096 * 4096 + 4096 + 128_256 * 4096 and head.attention == ()
        out = self.run(target, step.Draft("medusa"))
        one = step.pass_time(self.B200, head, 16, 1, 2048, tp=8, costs=step.Costs(0.6, 0.8, 0.0, 1.0, 5.0, 1.0, 5.0))
        assert out["draft_s"] == pytest.approx(one["time_s"], rel=1e-12)

    def test_suffix_decoding_runs_on_the_host(self):
        out = self.run(MODELS["Llama-3.1-8B"], step.Draft("suffix"))
        assert float(out["draft_s"]) == 0.0
        assert float(out["speedup"]) == pytest.approx(float(self.run(MODELS["Llama-3.1-8B"], step.Draft("ngram"))["speedup"]))

    def test_an_eagle3_head_of_its_own_config(self):
        head = hf_config.model_from_config(DATA / "model_configs" / "EAGLE3-SpecForge-deepseek-v3-671B.json")
        own = self.run(self.DEEPSEEK, step.Draft("eagle3", head))
        derived = self.run(self.DEEPSEEK, step.Draft("eagle3"))
        one = step.pass_time(self.B200, head, 16, 1, 2048, tp=8, precision=dtypes.PRECISIONS["checkpoint"],
                             costs=step.Costs(0.6, 0.8, 0.0, 1.0, 5.0, 1.0, 5.0))["time_s"]
        assert own["draft_s"] == pytest.approx(one, rel=1e-12) and own["draft_s"] != derived["draft_s"]


class TestExpertAndDataParallel:
    DEEPSEEK = MODELS["DeepSeek-V3"]
    H200 = GPUS["H200"]
    COSTS = step.Costs(allreduce_us=10.0)

    def test_without_moe_layers_or_a_second_device_ep_changes_nothing(self):
        for model, tp in ((LLAMA8, 8), (self.DEEPSEEK, 1)):
            off = step.pass_time(self.H200, model, 64, 5, 1024, tp=tp, costs=self.COSTS)
            on = step.pass_time(self.H200, model, 64, 5, 1024, tp=tp, ep=True, costs=self.COSTS)
            assert {k: float(v) for k, v in off.items()} == {k: float(v) for k, v in on.items()}

    def test_the_all_to_all_by_hand(self):
        # 8 data-parallel attention groups of one GPU, experts over the 8: each MoE layer sends each
        # GPU's T/8 tokens' activations, 7/8 of them away, once to dispatch and once to combine.
        out = step.pass_time(self.H200, self.DEEPSEEK, 64, 5, 1024, dp=8, ep=True, costs=self.COSTS)
        sent = 64 * 5 / 8 * 7168 * 2 * 7 / 8
        assert out["comm_s"] == pytest.approx(2 * 58 * (10e-6 + sent / 450e9), rel=1e-12)

    def test_tensor_parallel_mla_copies_its_latent_data_parallel_attention_does_not(self):
        tp8 = step.pass_time(self.H200, self.DEEPSEEK, 64, 1, 4096, tp=8)
        dp8 = step.pass_time(self.H200, self.DEEPSEEK, 64, 1, 4096, dp=8, ep=True)
        # The latent has one head: eight tensor-parallel GPUs hold it eight times; the attention and
        # dense weights are read once by each of the eight data-parallel groups instead.
        latent = 64 * 61 * 576 * (4096 + 1) * 2
        dense = 2 * (sum(self.DEEPSEEK.params[c] for c in ("attention", "mlp"))
                     + self.DEEPSEEK.params["embeddings"] - self.DEEPSEEK.embedding_params + 64 * 7168)  # BF16
        assert tp8["bytes"] - dp8["bytes"] == pytest.approx(7 * latent - 7 * dense, rel=1e-9)

    def test_each_data_parallel_rank_samples_its_own_share_of_the_tokens(self):
        """An engineer's pass: 1,024 sequences over 9 data-parallel ranks had paid 1,024 × 5 µs a pass
        for sampling, as one engine would; each rank samples its 1,024/9 at the same time."""
        costs = step.Costs(token_us=5.0)
        one = step.pass_time(self.H200, self.DEEPSEEK, 1024, 1, 4096, dp=1, ep=True, costs=costs)
        nine = step.pass_time(self.H200, self.DEEPSEEK, 1024, 1, 4096, dp=9, ep=True, costs=costs)
        assert one["token_s"] == pytest.approx(1024 * 5e-6) and nine["token_s"] == pytest.approx(1024 * 5e-6 / 9)
        # The verify pass of γ 3 the same way, and the fast path (_linear_costs) agrees with pass_seconds.
        work = step.pass_work(self.H200, self.DEEPSEEK, 1024, 4, 4096, dp=9, ep=True)
        assert step.pass_seconds(work, costs)["token_s"] == pytest.approx(4 * 1024 * 5e-6 / 9)
        per_token, _ = step._linear_costs(work, costs)
        assert float(per_token) * float(work["tokens"]) >= 4 * 1024 * 5e-6 / 9
        bare, _ = step._linear_costs(work, step.Costs())
        assert float(per_token - bare) == pytest.approx(5e-6 / 9)

    def test_beyond_the_nvlink_domain_the_network_carries_its_share(self):
        # 16 H100s: 8 on NVLink (450 GB/s each way), 8 over one 400 Gb/s NIC a GPU (50 GB/s).
        link = step.link_bandwidth(GPUS["H100-SXM"], 16, step.Costs())
        assert link == pytest.approx(1 / (0.5 / 450e9 + 0.5 / 50e9))
        assert step.link_bandwidth(GPUS["GB200"], 72, step.Costs()) == 900e9  # one NVL72 domain
        with pytest.raises(InputError) as info:
            step.link_bandwidth(GPUS["MI355X"], 16, step.Costs())
        assert info.value.key == "step.no_scale_out"


class TestSpeculationCosts:
    @pytest.mark.parametrize("draft, passes", [(step.Draft("eagle3"), 4), (step.Draft("model", LLAMA1), 4),
                                               (step.Draft("mtp"), 4), (step.Draft("peagle"), 1),
                                               (step.Draft("block"), 1), (step.Draft("medusa"), 1),
                                               (step.Draft("ngram"), 0), (step.Draft("suffix"), 0)])
    def test_each_draft_pass_pays_the_proposer_and_each_speculative_step_once(self, draft, passes):
        """γ 4: a chain runs four passes, a parallel drafter and Medusa's heads one, a host draft none; the
        speculative step's own cost is in the verify step, and a plain step pays neither."""
        target = MODELS["DeepSeek-V3"] if draft.kind == "mtp" else LLAMA8
        timed = lambda costs: step.step(H100, target, draft, batch=8, gamma=4, context=1024, acceptance_length=3,
                                        costs=costs, tp=8 if draft.kind == "mtp" else 1)
        bare, priced = timed(step.Costs()), timed(step.Costs(draft_pass_us=1000.0, speculation_ms=2.0))
        assert float(priced["spec_s"] - bare["spec_s"]) == pytest.approx(1e-3 * passes + 2e-3)
        assert float(priced["verify_s"] - bare["verify_s"]) == pytest.approx(2e-3)
        assert float(priced["plain_s"]) == float(bare["plain_s"])


class TestStepRatio:
    """ratio_terms and step_ratio, the inverse of the band's speedup at E = 1: step_seconds' spec/plain
    to rounding."""

    DRAWS = {"mfu": np.array([0.4, 0.6, 0.8]), "mbu": np.array([0.9, 0.8, 0.6]), "overlap": np.array([0.0, 0.3, 0.5]),
             "step_ms": np.array([0.2, 1.0, 3.0]), "layer_us": np.array([0.0, 2.0, 9.0]),
             "token_us": np.array([1.0, 5.0, 20.0]), "allreduce_us": np.array([5.0, 10.0, 30.0]),
             "draft_pass_us": np.array([121.0, 270.0, 660.0]), "speculation_ms": np.array([0.73, 1.05, 1.39])}

    @pytest.mark.parametrize("target, draft, setting", [
        (LLAMA8, step.Draft("model", LLAMA1), dict(tp=2)),
        (LLAMA8, step.Draft("medusa"), dict(tp=1)),
        (LLAMA8, step.Draft("eagle3"), dict(tp=4, tree_tokens=25, draft_width=4)),
        (LLAMA8, step.Draft("peagle"), dict(tp=1)),
        (LLAMA8, step.Draft("ngram"), dict(tp=8)),
        (LLAMA8, step.Draft("self", kv_budget=256), dict(tp=2)),
        (MODELS["DeepSeek-V3"], step.Draft("mtp"), dict(tp=8, dp=2, ep=True)),  # beyond the NVLink domain
        (MODELS["DeepSeek-V3"], step.Draft("mtp"), dict(tp=1, dp=8, ep=True, expert_tax=False)),
    ])
    def test_the_ratio_is_step_seconds_spec_over_plain(self, target, draft, setting):
        points = dict(batch=np.array([1.0, 7, 64, 300])[None, :, None], gamma=np.array([1.0, 4])[:, None, None],
                      context=np.array([[[0.0]], [[4096.0]]])[..., None])
        costs = step.Costs(**self.DRAWS)
        work = step.step_work(GPUS["H100-SXM"], target, draft, **points, **setting)
        t = step.step_seconds(work, costs)
        ratio = step.step_ratio(step.ratio_terms(work, costs))
        np.testing.assert_allclose(ratio, t["spec_s"] / t["plain_s"], rtol=1e-13)
        part = (slice(None), slice(1, 2), slice(2, 4), slice(None))
        # A part may keep to one regime where the whole does not: the same figures, to rounding.
        np.testing.assert_allclose(step.step_ratio(step.part_at(step.ratio_terms(work, costs), part)), ratio[part],
                                   rtol=1e-13)


class TestPrefillInTheStep:
    """Each step of a server at a steady load of B requests (P prompt, O output tokens) carries the
    prompts of the requests that replace the finished ones: B·P/O tokens a plain step, B·P·E/O a
    speculative one."""

    COMMON = dict(batch=8, gamma=3, context=1024.0, acceptance_length=2.0, costs=REALISTIC)

    def test_without_prompt_tokens_nothing_changes(self):
        bare = step.step(H100, LLAMA8, step.Draft("eagle"), **self.COMMON)
        none = step.step(H100, LLAMA8, step.Draft("eagle"), prompt_tokens=0, output_tokens=64, **self.COMMON)
        assert {k: np.asarray(v).tolist() for k, v in bare.items()} == {k: np.asarray(v).tolist() for k, v in none.items()}

    def test_the_prefill_a_step_carries_by_hand(self):
        """B = 8, P = 1024, O = 64: 128 prompt tokens a plain step, 256 at E = 2; each goes through every
        matmul but the LM head (2·(1.342 + 5.637)·10⁹ FLOPs) and reads 512.5 cached positions on
        average in each of 32 layers (16,384 FLOPs a position); it writes its cache entry (32 layers × 8
        KV heads × 128 × 2 (K, V) × 2 bytes) and its embedding row is gathered (4,096 × 2 bytes)."""
        decode = step.step_work(H100, LLAMA8, step.Draft("eagle"), batch=8, gamma=3, context=1024.0)
        mixed = step.step_work(H100, LLAMA8, step.Draft("eagle"), batch=8, gamma=3, context=1024.0,
                               prompt_tokens=1024, output_tokens=64, expected_tokens=2.0)
        per_token_flops = 2 * (1_342_177_280 + 5_637_410_816) + 32 * 16_384 * 512.5
        per_token_bytes = 32 * 8 * 128 * 2 * 2 + 4096 * 2
        for name, tokens in (("plain", 128), ("verify", 256)):
            assert mixed[name]["flops"] - decode[name]["flops"] == pytest.approx(tokens * per_token_flops, rel=1e-12)
            assert mixed[name]["bytes"] - decode[name]["bytes"] == pytest.approx(tokens * per_token_bytes, rel=1e-12)
            assert mixed[name]["prefill"] == tokens
        # The draft's passes carry no prefill.
        assert mixed["draft"]["flops"] == decode["draft"]["flops"]

    def test_prompt_tokens_are_routed_so_the_expert_tax_fades(self):
        """DeepSeek-V3 at batch 4, P/O = 2048/64: the 128 prompt tokens of a plain step already touch
        256·(1 − (1 − 8/256)^132) = 250.2 of the 256 experts a layer, so that a verify pass reads hardly
        more experts than a plain one."""
        deepseek = MODELS["DeepSeek-V3"]
        plain = step.pass_work(GPUS["H200"], deepseek, 4, 1, 1024, prefill_tokens=128, prefill_positions=1024.5)
        alone = step.pass_work(GPUS["H200"], deepseek, 4, 1, 1024)
        touched = 256 * (1 - (1 - 8 / 256) ** 132) - 256 * (1 - (1 - 8 / 256) ** 4)
        expert_bytes = touched / 256 * deepseek.params["experts"] * 2  # BF16
        kv_and_rows = 128 * (61 * 576 * 2 + 7168 * 2)
        assert plain["bytes"] - alone["bytes"] == pytest.approx(expert_bytes + kv_and_rows, rel=1e-9)

    def test_the_prefill_crosses_the_links(self):
        costs = step.Costs(allreduce_us=10.0)
        mixed = step.pass_seconds(step.pass_work(H100, LLAMA8, 32, 1, 0, tp=8, prefill_tokens=96), costs)
        # 64 all-reduces, each moving 2·7/8·(32 + 96)·4096·2 bytes at 450 GB/s, and waiting 10 µs.
        assert mixed["comm_s"] == pytest.approx(64 * (10e-6 + 2 * 7 / 8 * 128 * 4096 * 2 / 450e9), rel=1e-12)
        # The per-token cost pays for the decoded tokens (sampling), not the prompt tokens.
        priced = step.pass_seconds(step.pass_work(H100, LLAMA8, 32, 1, 0, prefill_tokens=96), step.Costs(token_us=10.0))
        assert priced["token_s"] == pytest.approx(32 * 10e-6)

    def test_more_prefill_a_step_draws_the_gain_toward_one(self):
        """As the prompts outweigh the outputs, both steps become prefill, E times more of it in the
        speculative one: the speedup E·t_plain/t_spec falls toward 1."""
        ratios = [0.0, 1.0, 8.0, 64.0, 1024.0]
        speedups = [float(step.step(H100, LLAMA8, step.Draft("eagle"), prompt_tokens=1024 * r, output_tokens=1024,
                                    **self.COMMON)["speedup"]) for r in ratios]
        assert speedups == sorted(speedups, reverse=True) and speedups[0] > 1.3
        assert speedups[-1] == pytest.approx(1.0, abs=0.05)

    def test_the_grid_terms_are_decode_only(self):
        work = step.step_work(H100, LLAMA8, step.Draft("eagle"), batch=8, gamma=3, context=1024.0, prompt_tokens=1024,
                              output_tokens=64)
        with pytest.raises(ValueError):
            step.ratio_terms(work, REALISTIC)


class TestRoutingOverlap:
    """A verify pass whose tokens share experts with their sequence's previous token (share q) reads
    the experts of B·(1 + (n − 1)(1 − q)) tokens routed at random."""

    DEEPSEEK = MODELS["DeepSeek-V3"]
    COMMON = dict(batch=4, gamma=3, context=1024.0, acceptance_length=2.5)

    def test_at_zero_it_is_uniform_routing(self):
        bare = step.step(GPUS["H200"], self.DEEPSEEK, step.Draft("mtp"), **self.COMMON)
        zero = step.step(GPUS["H200"], self.DEEPSEEK, step.Draft("mtp"), routing_overlap=0.0, **self.COMMON)
        assert {k: np.asarray(v).tolist() for k, v in bare.items()} == {k: np.asarray(v).tolist() for k, v in zero.items()}

    def test_the_experts_a_verify_pass_reads_by_hand(self):
        """B = 4, n = 4, q = 0.38: 4·(1 + 3·0.62) = 11.44 tokens' worth of picks, 256·(1 − (1 − 8/256)^11.44)
        = 77.9 experts a layer instead of 256·(1 − (1 − 8/256)^16) = 102.4 under uniform routing."""
        uniform = step.step_work(GPUS["H200"], self.DEEPSEEK, step.Draft("mtp"), batch=4, gamma=3, context=1024.0)
        local = step.step_work(GPUS["H200"], self.DEEPSEEK, step.Draft("mtp"), batch=4, gamma=3, context=1024.0,
                               routing_overlap=0.38)
        fewer = 256 * (1 - (1 - 8 / 256) ** 16) - 256 * (1 - (1 - 8 / 256) ** 11.44)
        assert uniform["verify"]["bytes"] - local["verify"]["bytes"] == pytest.approx(
            fewer / 256 * self.DEEPSEEK.params["experts"] * 2, rel=1e-9)  # BF16 experts
        # The plain pass and the drafts are not verify passes: unchanged.
        assert local["plain"]["bytes"] == uniform["plain"]["bytes"]
        assert local["draft"]["bytes"] == uniform["draft"]["bytes"]

    def test_between_the_uniform_tax_and_none(self):
        at = {q: float(step.step(GPUS["H200"], self.DEEPSEEK, step.Draft("mtp"), routing_overlap=q,
                                 **self.COMMON)["verify_s"]) for q in (0.0, 0.38, 1.0)}
        untaxed = float(step.step(GPUS["H200"], self.DEEPSEEK, step.Draft("mtp"), expert_tax=False,
                                  **self.COMMON)["verify_s"])
        assert at[0.0] > at[0.38] > at[1.0] == pytest.approx(untaxed, rel=1e-12)
        # A dense model has no experts to share.
        dense = [float(step.step(H100, LLAMA8, step.Draft("eagle"), routing_overlap=q, **self.COMMON)["speedup"])
                 for q in (0.0, 0.5)]
        assert dense[0] == dense[1]


class TestReusedMtp:
    """The target's MTP layers, run past the positions they were trained for, accept less at each
    further one (mtp.REUSE); every other draft keeps α at every position."""

    @pytest.mark.parametrize("target, trained", [("DeepSeek-V3", 1), ("DeepSeek-V4-Flash", 1), ("GLM-5", 3),
                                                 ("MiniMax-M2.5", 3), ("Qwen3-Next-80B-A3B", np.inf),
                                                 ("Qwen3.5-397B-A17B", np.inf)])
    def test_trained_positions_by_family(self, target, trained):
        assert mtp.trained_positions(MODELS[target]) == trained

    def test_the_step_prices_the_reused_positions(self):
        deepseek, own_layer = MODELS["DeepSeek-V3"], step.Draft("mtp")
        timed = dict(batch=8, gamma=3, context=1024, alpha=0.8, tp=8, costs=REALISTIC)
        reused = step.step(GPUS["B200"], deepseek, own_layer, **timed)
        chain = step.step(GPUS["B200"], deepseek, own_layer, **timed, mtp_reuse=1.0)
        assert float(reused["expected_tokens"]) == pytest.approx(1 + 0.8 + 0.64 * 0.62 + 0.512 * 0.62 ** 3)
        assert float(chain["expected_tokens"]) == pytest.approx(spec.expected_tokens(0.8, 3))
        # The passes are the same: only E differs, and the speedup with it.
        assert float(reused["spec_s"]) == pytest.approx(float(chain["spec_s"]))
        assert float(reused["speedup"] / chain["speedup"]) == pytest.approx(
            float(reused["expected_tokens"] / chain["expected_tokens"]))
        # A head keeps α at every position whatever the reuse factor.
        head = step.step(GPUS["B200"], deepseek, step.Draft("eagle3"), **timed, mtp_reuse=0.1)
        assert float(head["expected_tokens"]) == pytest.approx(spec.expected_tokens(0.8, 3))
        assert mtp.reuse(deepseek, "eagle3", 0.1) == {"trained": np.inf, "decay": 1.0}
