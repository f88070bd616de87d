"""Tests for specviz.model.hf_config: config.json of every family read into exact counts, attention
layers and weight formats, checked against hand counts and the publishers' figures; hostile configs."""

import csv
import json
import re
import time

import numpy as np

import pytest
from hypothesis import given, settings as hyp_settings, strategies as st

from conftest import SAMPLES, in_vietnamese
from specviz import i18n, settings
from specviz.errors import InputError
from specviz.model import architecture, dtypes, hf_config, roofline

# A refusal or a model comes in milliseconds whatever the fields: a hang (a loop over 10⁹ layers, a
# regular expression backtracking), not a speed, is what the time checks catch; a loaded machine may
# be a hundred times slower.
HANG_S = 5.0

DATA = settings.get("SPECVIZ_DATA_DIR")
MODELS = hf_config.load_models(DATA)
CONFIGS = DATA / "model_configs"


def config_of(model_id: str) -> dict:
    with open(DATA / "models.csv", newline="") as f:
        name = next(row["config"] for row in csv.DictReader(f) if row["id"] == model_id)
    return json.loads((CONFIGS / name).read_text())


class TestLoadModels:
    def test_required_presets_with_sources(self):
        assert {"Qwen3-32B", "Qwen3-0.6B", "Qwen2.5-1.5B", "Qwen2.5-0.5B", "Llama-3.1-8B",
                "Llama-3.1-70B", "Llama-3.2-1B"} <= MODELS.keys()
        assert all(m.source.startswith("https://huggingface.co/") for m in MODELS.values())

    @staticmethod
    def published(model: architecture.Model, counting: str) -> tuple[int, int]:
        """Total and active parameters as a publisher counts them: ``both`` tables in, the output
        ``head`` in and the input embedding out of the active count, or ``none`` of them in it."""
        left_out = {"both": 0, "head": model.embedding_params, "none": model.params["embeddings"]}[counting]
        return model.params_total, model.params_active - left_out

    @pytest.mark.parametrize("row", list(csv.DictReader(open(DATA / "models.csv", newline=""))), ids=lambda row: row["id"])
    def test_counts_match_the_model_cards(self, row):
        """To the digits the card prints, or within the row's tolerance where the card counts
        something else (a vision encoder, an MTP layer); a row without a published figure says why in
        its source."""
        counts = self.published(MODELS[row["id"]], row["counting"])
        for text, count in zip((row["params_published"], row["active_published"]), counts):
            if not text:
                assert "no count" in row["source"] or text is row["active_published"]
                continue
            digits = len(text.split("e")[0].replace(".", "").lstrip("0"))
            rounded = float(f"{count:.{digits}g}") == float(text)
            assert rounded or abs(count / float(text) - 1) <= float(row["tolerance"] or 0), (row["id"], count)

class TestModelFromConfig:
    # Totals written out layer by layer by hand (h: hidden, i: intermediate, V: vocab).
    @pytest.mark.parametrize("model_id, total", [
        # embed 128256·4096 ×2 + 32·(2·4096² + 2·4096·1024 + 3·4096·14336 + 2·4096) + 4096
        ("Llama-3.1-8B", 8_030_261_248),
        ("Llama-3.1-70B", 70_553_706_496),
        ("Llama-3.2-1B", 1_235_814_400),
        # Qwen2.5 carries q/k/v biases; tied embeddings.
        ("Qwen2.5-0.5B", 494_032_768),
        ("Qwen2.5-1.5B", 1_543_714_304),
        # Qwen3 carries q/k norms of head_dim each.
        ("Qwen3-0.6B", 596_049_920),
        ("Qwen3-32B", 32_762_123_264),
    ])
    def test_exact_dense_totals(self, model_id, total):
        m = MODELS[model_id]
        assert m.params_total == total and m.params_active == total

    def test_mixtral_total_and_active(self):
        m = MODELS["Mixtral-8x7B"]
        assert m.params_total == 46_702_792_704
        # 2 of 8 experts: 32·(41,943,040 attention + 32,768 router + 2·176,160,768 + 8192) + 262,148,096
        assert m.params_active == 12_879_925_248

    def test_qwen3_moe_total_and_active(self):
        m = MODELS["Qwen3-30B-A3B"]
        assert m.params_total == 30_532_122_624
        # 8 of 128 experts; the model card's "3.3B activated" is this figure truncated.
        assert m.params_active == 3_353_032_704
        assert (m.num_experts, m.experts_per_token, m.moe_layers) == (128, 8, 48)

    def test_main_components_leave_out_what_a_model_does_not_have(self):
        """An engineer's pass: the sidebar's "Served as" named experts for a dense model and an MLP for
        gpt-oss, whose only dense weights are its routers and norms (0.06 % of what a token reads)."""
        assert MODELS["Llama-3.1-8B"].main_components == ("attention", "mlp", "embeddings")
        assert MODELS["gpt-oss-20b"].main_components == ("experts", "attention", "embeddings")
        assert MODELS["DeepSeek-V3"].main_components == ("experts", "attention", "mlp", "embeddings")
        # Llama 4's shared expert and dense layers are an MLP worth naming.
        assert "mlp" in MODELS["Llama-4-Scout"].main_components

    def test_kv_bytes_per_token(self):
        # 2 · 80 layers · 8 KV heads · 128 · 2 bytes
        assert MODELS["Llama-3.1-70B"].kv_bytes_per_token() == 327_680
        assert MODELS["Llama-3.1-70B"].kv_bytes_per_token(1) == 163_840

    def test_reads_a_path_and_a_dict_alike(self, tmp_path):
        config = json.loads((DATA / "model_configs" / "Llama-3.1-8B.json").read_text())
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config))
        assert hf_config.model_from_config(path).params_total == hf_config.model_from_config(config).params_total

    def test_moe_without_a_valid_expert_size_is_refused(self):
        config = json.loads((DATA / "model_configs" / "Qwen3-30B-A3B.json").read_text())
        config["moe_intermediate_size"] = 0
        with pytest.raises(ValueError, match="moe_intermediate_size"):
            hf_config.model_from_config(config)

    def test_mistral_without_head_dim_uses_hidden_over_heads(self):
        config = {"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
                  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                  "vocab_size": 32000}
        m = hf_config.model_from_config(config)
        assert m.head_dim == 128
        # Mistral-7B: 7,241,732,096 parameters.
        assert m.params_total == 7_241_732_096

    @pytest.mark.parametrize("config, message", [
        ({"model_type": "gpt2"}, "model_type"),
        ({"model_type": "llama", "hidden_size": 64}, "num_hidden_layers"),
        ({"model_type": "llama", "hidden_size": "64", "num_hidden_layers": 2}, "hidden_size"),
        ([1, 2], "JSON object"),
    ])
    def test_refuses_bad_configs_with_the_key_named(self, config, message):
        with pytest.raises(ValueError, match=message):
            hf_config.model_from_config(config)

    def test_refuses_non_json_file(self, tmp_path):
        path = tmp_path / "config.json"
        path.write_bytes(b"\x00\x01 not json")
        with pytest.raises(ValueError, match="config.json"):
            hf_config.model_from_config(path)


QWEN3_MOE = json.loads((DATA / "model_configs" / "Qwen3-30B-A3B.json").read_text())
LLAMA_8B = json.loads((DATA / "model_configs" / "Llama-3.1-8B.json").read_text())
# JSON values of the wrong type for any field (null is left out: it means "not set").
JUNK = [[], [32], {}, {"a": {"b": [1]}}, [[[[]]]], "32", "", 32.0, 32.5, float("nan"), float("inf"),
        float("-inf")]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12)


def parse(config: dict) -> architecture.Model:
    """Through the parser as an upload would go (Python's json writes NaN and Infinity as such)."""
    return hf_config.model_from_config_bytes(json.dumps(config).encode(), "config.json", 10**6)


class TestHostileConfigs:
    @pytest.mark.parametrize("base, field, value, allowed", [
        (QWEN3_MOE, "num_hidden_layers", 10**9, "between 1 and 1,024, got 1000000000"),
        (QWEN3_MOE, "num_hidden_layers", 0, "between 1 and 1,024"),
        (QWEN3_MOE, "hidden_size", 131_073, "between 1 and 131,072"),
        (QWEN3_MOE, "num_attention_heads", 2048, "between 1 and 1,024"),
        (QWEN3_MOE, "num_key_value_heads", 0, "between 1 and 32 (num_attention_heads)"),
        (QWEN3_MOE, "num_key_value_heads", 64, "between 1 and 32 (num_attention_heads)"),
        (QWEN3_MOE, "num_key_value_heads", 5, "must be a multiple of 'num_key_value_heads' (5)"),
        (QWEN3_MOE, "head_dim", 4096, "between 1 and 2,048"),
        (QWEN3_MOE, "vocab_size", -5, "between 1 and 4,194,304"),
        (QWEN3_MOE, "num_experts", -1, "between 0 and 4,096, got -1"),
        (QWEN3_MOE, "num_experts", 10**6, "between 0 and 4,096"),
        (QWEN3_MOE, "num_experts_per_tok", 129, "between 1 and 128 (num_local_experts, num_experts or n_routed_experts)"),
        (QWEN3_MOE, "num_experts_per_tok", 0, "between 1 and 128"),
        # An expert count of 0 beside experts per token: refused, where it had read as a dense model.
        (QWEN3_MOE, "num_experts", 0, "'num_experts' must be a whole number between 1 and 4,096, got 0"),
        (QWEN3_MOE, "moe_intermediate_size", 2**21, "between 1 and 1,048,576"),
        (QWEN3_MOE, "shared_expert_intermediate_size", -1, "between 0 and 1,048,576"),
        (QWEN3_MOE, "decoder_sparse_step", 0, "between 1 and 48 (num_hidden_layers)"),
        (QWEN3_MOE, "decoder_sparse_step", 49, "between 1 and 48 (num_hidden_layers)"),
        (QWEN3_MOE, "mlp_only_layers", [0, 0], "holding 0 twice"),
        (QWEN3_MOE, "mlp_only_layers", [48], "between 0 and 47 (num_hidden_layers − 1), got a list holding 48"),
        (QWEN3_MOE, "mlp_only_layers", [-1], "holding -1"),
        (QWEN3_MOE, "mlp_only_layers", [1.0], "holding 1.0"),
        (QWEN3_MOE, "mlp_only_layers", 3, "got 3"),
        (QWEN3_MOE, "tie_word_embeddings", "false", 'true or false (a JSON boolean), got "false"'),
        (QWEN3_MOE, "tie_word_embeddings", 0, "a JSON boolean"),
        (LLAMA_8B, "attention_bias", "true", "a JSON boolean"),
        (LLAMA_8B, "mlp_bias", 1, "a JSON boolean"),
        (LLAMA_8B, "intermediate_size", 0, "between 1 and 1,048,576"),
        (LLAMA_8B, "intermediate_size", None, "'intermediate_size' is missing"),
        ({**LLAMA_8B, "model_type": "mixtral"}, "num_local_experts", 8, "'num_experts_per_tok' is missing"),
        (LLAMA_8B, "model_type", ["llama"], "'model_type' a list is not supported"),
    ])
    def test_out_of_range_and_inconsistent_fields(self, base, field, value, allowed):
        with pytest.raises(ValueError) as exc:
            parse({**base, field: value})
        assert allowed in str(exc.value) and field in str(exc.value)

    @pytest.mark.parametrize("field", list(hf_config.CONFIG_LIMITS))
    @pytest.mark.parametrize("value", JUNK + [True, False, -1, 10**40], ids=repr)
    def test_wrong_json_types_name_the_field(self, field, value):
        config = {**QWEN3_MOE, field: value}
        kind = hf_config.CONFIG_LIMITS[field].kind
        if (kind == "flag" and isinstance(value, bool) or kind == "layers" and value in ([], [32])
                or kind == "bits" and value == []):
            assert parse(config).params_total > 0  # the values in JUNK that are right for this kind
            return
        with pytest.raises(ValueError, match=f"'{field}' must be"):
            parse(config)

    def test_a_billion_layers_is_refused_at_once(self):
        start = time.perf_counter()
        with pytest.raises(ValueError, match="num_hidden_layers"):
            parse({**QWEN3_MOE, "num_hidden_layers": 10**9, "decoder_sparse_step": 1})
        assert time.perf_counter() - start < HANG_S

    def test_null_means_unset(self):
        derived = parse({**LLAMA_8B, "head_dim": None, "num_key_value_heads": None})
        assert (derived.head_dim, derived.kv_heads) == (128, 32)  # h // n_h, and n_kv = n_h
        dense = parse({**QWEN3_MOE, "num_experts": None, "num_experts_per_tok": None})
        assert dense.num_experts == 0 and dense.params_total == dense.params_active

    def test_null_over_a_family_default_means_the_default(self):
        gemma = {"model_type": "gemma3_text", "sliding_window_pattern": None, "num_hidden_layers": None}
        assert parse(gemma).layers == hf_config.FAMILY_DEFAULTS["gemma3_text"]["num_hidden_layers"]

    def test_a_field_s_message_names_the_file_it_is_in(self, tmp_path):
        """An upload's name, a path's, and "config.json" for a config given as its content."""
        data = json.dumps({**LLAMA_8B, "hidden_size": None}).encode()
        with pytest.raises(InputError) as uploaded:
            hf_config.model_from_config_bytes(data, "my-llama.json", 10**6)
        assert str(uploaded.value).startswith("my-llama.json: 'hidden_size' is missing or null;")
        (tmp_path / "llama").mkdir()
        (tmp_path / "llama" / "config.v2.json").write_bytes(data)
        with pytest.raises(InputError, match=r"^config\.v2\.json: 'hidden_size'"):
            hf_config.model_from_config(tmp_path / "llama" / "config.v2.json")
        with pytest.raises(InputError, match=r"^config\.json: 'hidden_size'"):
            hf_config.model_from_config({**LLAMA_8B, "hidden_size": None})
        vietnamese = i18n.message(uploaded.value, "vi")
        assert vietnamese.startswith("my\\-llama\\.json: thiếu 'hidden\\_size' hoặc nó là null")

    def test_derived_head_dim_must_be_positive(self):
        config = {**LLAMA_8B, "hidden_size": 16, "num_attention_heads": 32, "num_key_value_heads": 8}
        with pytest.raises(ValueError, match="'head_dim' is not set and hidden_size // num_attention_heads = 0"):
            parse(config)

    @pytest.mark.parametrize("data, message", [
        (b'{"model_type": "llama"' + b"\xff" + b"}", "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"hidden_size": ' + b"9" * 5000 + b"}", "an integer of more than 4,300 digits"),
        (b"[1, 2]", "JSON object"),
    ])
    def test_unparseable_input_is_a_value_error(self, data, message):
        with pytest.raises(ValueError, match=message):
            hf_config.model_from_config_bytes(data, "config.json", 10**6)

    def test_a_byte_order_mark_before_the_config_is_skipped(self):
        data = b"\xef\xbb\xbf" + json.dumps(LLAMA_8B).encode()
        assert hf_config.model_from_config_bytes(data, "config.json", 10**6) == parse(LLAMA_8B)

    @hyp_settings(deadline=None, max_examples=200)
    @given(st.integers(min_value=1, max_value=1024), st.integers(min_value=1, max_value=1024),
           st.lists(st.integers(min_value=0, max_value=1023), unique=True, max_size=64))
    def test_moe_layer_count_matches_the_transformers_rule(self, layers, step, dense_only):
        dense_only = [i for i in dense_only if i < layers]
        step = min(step, layers)
        config = {**QWEN3_MOE, "num_hidden_layers": layers, "decoder_sparse_step": step,
                  "mlp_only_layers": dense_only}
        expected = sum(1 for i in range(layers) if i not in dense_only and (i + 1) % step == 0)
        assert hf_config.model_from_config(config).moe_layers == expected

    @hyp_settings(deadline=None, max_examples=300)
    @given(st.sampled_from([*hf_config.CONFIG_LIMITS, "model_type"]),
           st.one_of(st.integers(min_value=-2, max_value=5000), JSON_VALUES))
    def test_any_single_field_mutation_gives_a_model_or_a_value_error(self, field, value):
        start = time.perf_counter()
        try:
            model = parse({**QWEN3_MOE, field: value})
        except ValueError as exc:
            assert field in str(exc)
        else:
            assert model.params_total >= model.params_active > 0
        assert time.perf_counter() - start < HANG_S

    def test_every_shipped_config_passes_the_checks(self):
        for path in sorted((DATA / "model_configs").glob("*.json")):
            assert hf_config.model_from_config(path).params_active > 0, path.name


class TestMessagesInVietnamese:
    """What a config.json field held and the field a bound comes from are words of the message's
    language: no English inside a Vietnamese sentence."""

    @pytest.mark.parametrize("field, value, english, words", [
        ("num_hidden_layers", {"a": 1}, "an object", i18n.t("hf_config.kind.object", "vi")),
        ("num_hidden_layers", [1], "a list", i18n.t("hf_config.kind.list", "vi")),
        ("model_type", ["llama"], "a list", i18n.t("hf_config.kind.list", "vi")),
        ("num_hidden_layers", 10**40, "a number of more than 40 digits", i18n.t("hf_config.kind.long_number", "vi")),
        ("mlp_only_layers", {"a": 1}, "an object", i18n.t("hf_config.kind.object", "vi")),
        ("mlp_only_layers", [{}], "a list holding an object",
         i18n.t("hf_config.kind.list_holding", "vi", item=i18n.t("hf_config.kind.object", "vi"))),
        ("mlp_only_layers", [48], "a list holding 48", i18n.t("hf_config.kind.list_holding", "vi", item=48)),
        ("mlp_only_layers", [0, 0], "a list holding 0 twice", i18n.t("hf_config.kind.list_twice", "vi", item=0)),
        ("num_experts_per_tok", 129, "num_local_experts, num_experts or n_routed_experts", i18n.t("hf_config.field.experts", "vi")),
    ])
    def test_config_fields(self, field, value, english, words):
        with pytest.raises(InputError) as info:
            parse({**QWEN3_MOE, field: value})
        assert words in in_vietnamese(info.value, english)

    def test_a_value_json_cannot_hold(self):
        with pytest.raises(InputError) as info:
            hf_config.model_from_config({**QWEN3_MOE, "hidden_size": {4096}})
        assert i18n.t("hf_config.kind.python", "vi", type="set") in in_vietnamese(info.value, "a Python set")

    def test_a_missing_field_bounded_by_the_expert_count(self):
        config = {k: v for k, v in QWEN3_MOE.items() if k != "num_experts_per_tok"}
        with pytest.raises(InputError) as info:
            parse(config)
        assert i18n.t("hf_config.field.experts", "vi") in in_vietnamese(info.value, "num_local_experts, num_experts or n_routed_experts")


DEEPSEEK_V3 = config_of("DeepSeek-V3")
GPT_OSS = config_of("gpt-oss-120b")
QWEN3_NEXT = config_of("Qwen3-Next-80B-A3B")


class TestFrontierArchitectures:
    """The families of 2025–2026, each against a hand count of one layer and the publisher's totals
    (tests above: TestLoadModels)."""

    def test_deepseek_v3_mla_layer_and_totals_by_hand(self):
        m = MODELS["DeepSeek-V3"]
        h, n_h, q_rank, rank, rope, nope, v = 7168, 128, 1536, 512, 64, 128, 128
        # q_a, its norm, q_b; kv_a with the rope key, its norm, kv_b; o
        mla = h * q_rank + q_rank + q_rank * n_h * (nope + rope) + h * (rank + rope) + rank + rank * n_h * (nope + v) + n_h * v * h
        assert mla == 187_107_328
        expert, experts, moe_layers = 3 * h * 2048, 256, 61 - 3
        moe = experts * expert + expert + h * experts + experts  # routed, one shared, router and its bias
        total = 2 * 129_280 * h + h + 61 * (mla + 2 * h) + 3 * 3 * h * 18_432 + moe_layers * moe
        assert m.params_total == total == 671_026_419_200
        assert (m.num_experts, m.experts_per_token, m.moe_layers) == (256, 8, 58)
        assert m.params_active == total - moe_layers * (experts - 8) * expert
        # One latent of 512 + 64 per position and layer, BF16: (512 + 64) · 61 · 2 bytes.
        assert m.kv_bytes_per_token() == 70_272
        (latent,) = m.attention
        assert latent.flops_per_position == 2 * n_h * (rank + rope) + 2 * n_h * rank  # the absorbed form
        # The MTP layer is a draft, not part of the target: one MoE layer, enorm and hnorm, eh_proj, the
        # head's norm, and its own copies of the embedding and the head (DeepSeek's "14B MTP module").
        assert (m.mtp_layers, m.mtp_params) == (1, mla + 2 * h + moe + 2 * h + 2 * h * h + h + 2 * 129_280 * h)
        assert round(m.mtp_params / 1e9, 1) == 13.5
        assert (m.mtp.layers, m.mtp.num_experts, m.mtp.weight_formats) == (1, 256, m.weight_formats)
        assert m.mtp.params_active == m.mtp_params - (256 - 8) * expert

    def test_deepseek_v3_ships_fp8_blocks_and_bf16_tables(self):
        assert MODELS["DeepSeek-V3"].weight_formats == {"experts": "fp8-block", "attention": "fp8-block",
                                                          "mlp": "fp8-block", "embeddings": "bf16"}

    def test_deepseek_v32_reads_top_k_latents_chosen_by_an_indexer(self):
        m = MODELS["DeepSeek-V3.2"]
        sparse, indexer = m.attention
        assert (sparse.kind, sparse.window, sparse.cached) == ("sparse", 2048, 576)
        assert (indexer.kind, indexer.window, indexer.cached) == ("indexer", np.inf, 128)
        # The indexer: wq_b (q_lora · heads · dim), wk (h · dim), k_norm (weight and bias), weights_proj (h · heads)
        indexer_params = 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64
        assert m.params_total - MODELS["DeepSeek-V3"].params_total == 61 * indexer_params
        # At 100k positions each layer caches 100k latents and index keys, but scores only 2,048 latents.
        assert m.cache_bytes(100_000) == 61 * (576 + 128) * 100_000 * 2

    def test_glm5_mla_of_its_own_head_dims_sparse_attention_and_totals_by_hand(self):
        m = MODELS["GLM-5"]
        h, n_h, q_rank, rank, rope, nope, v, vocab = 6144, 64, 2048, 512, 64, 192, 256, 154_880
        # q_a, its norm, q_b; kv_a with the rope key, its norm, kv_b; o (qk_head_dim 256 = 192 + 64)
        mla = h * q_rank + q_rank + q_rank * n_h * (nope + rope) + h * (rank + rope) + rank + rank * n_h * (nope + v) + n_h * v * h
        indexer = q_rank * 32 * 128 + h * 128 + 2 * 128 + h * 32  # wq_b, wk, k_norm, weights_proj
        expert, moe_layers = 3 * h * 2048, 78 - 3
        moe = 256 * expert + expert + h * 256 + 256  # routed, one shared, router and its bias
        total = 2 * vocab * h + h + 78 * (mla + indexer + 2 * h) + 3 * 3 * h * 12_288 + moe_layers * moe
        assert m.params_total == total == 743_911_218_432
        assert m.params_active == total - moe_layers * (256 - 8) * expert
        assert (m.head_dim, m.num_experts, m.experts_per_token, m.moe_layers) == (256, 256, 8, 75)
        sparse, index = m.attention
        assert (sparse.kind, sparse.layers, sparse.window, sparse.cached) == ("sparse", 78, 2048, 576)
        assert (index.kind, index.layers, index.cached) == ("indexer", 78, 128)
        # One latent of 512 + 64 and one index key of 128 per position and layer, BF16
        assert m.kv_bytes_per_token() == 78 * (576 + 128) * 2 == 109_824
        assert m.cache_bytes(100_000) == 109_824 * 100_000
        # The MTP layer: an MoE layer with its indexer, enorm, hnorm, eh_proj, the head's norm, two tables
        assert m.mtp_params == mla + indexer + 2 * h + moe + 2 * h + 2 * h * h + h + 2 * vocab * h

    def test_glm52_layers_sharing_an_indexer_cache_no_index_keys(self):
        config = config_of("GLM-5")
        # GLM-5.2's schedule: its own indexer in layers 0-2 and every fourth from 6, the previous one's elsewhere
        shared = ["full" if i < 3 or (i - 2) % 4 == 0 else "shared" for i in range(78)]
        m = parse({**config, "indexer_types": shared, "layer_types": ["deepseek_sparse_attention"] * 78,
                   "mlp_layer_types": ["dense"] * 3 + ["sparse"] * 75})
        sparse, index = m.attention
        assert (sparse.layers, index.layers) == (78, 21)
        assert m.kv_bytes_per_token() == (78 * 576 + 21 * 128) * 2 == 95_232
        indexer = 2048 * 32 * 128 + 6144 * 128 + 2 * 128 + 6144 * 32
        assert MODELS["GLM-5"].params_total - m.params_total == 57 * indexer
        assert m.mtp_params == MODELS["GLM-5"].mtp_params  # the MTP layer keeps its indexer

    def test_minimax_m2_layer_norms_routing_bias_and_mtp_modules_by_hand(self):
        m = MODELS["MiniMax-M2.5"]
        h, n_h, n_kv, d, i, experts, vocab = 3072, 48, 8, 128, 1536, 256, 200_064
        # q, k, v, o and q/k norms over the whole projection (n_h·d and n_kv·d: qk_norm_type per_layer)
        attention = 2 * h * n_h * d + 2 * h * n_kv * d + (n_h + n_kv) * d
        expert, router = 3 * h * i, h * experts + experts  # the router and its e_score_correction_bias
        total = 2 * vocab * h + h + 62 * (attention + 2 * h + router + experts * expert)
        assert m.params_total == total == 228_689_764_864
        assert m.params_active == total - 62 * (experts - 8) * expert
        assert m.weight_formats == {"experts": "fp8-block", "attention": "fp8-block", "mlp": "bf16", "embeddings": "bf16"}
        # K and V of 8 heads of 128 in 62 layers, BF16 (rotary_dim 64 rotates half of each head: no bytes)
        assert m.kv_bytes_per_token() == 62 * 2 * 8 * 128 * 2 == 253_952
        # Three MTP modules: a decoder layer, enorm, hnorm, eh_proj, the shared head's norm and its own head
        module = attention + experts * expert + router + 2 * h + 2 * h + 2 * h * h + h + vocab * h
        assert (m.mtp_layers, m.mtp_params, m.mtp.tied_embeddings) == (3, 3 * module, True)
        assert [(a.kind, a.layers) for a in m.mtp.attention] == [("full", 1)]

    def test_minimax_m2_without_mtp_or_with_two_layer_modules(self):
        config = config_of("MiniMax-M2.5")
        assert parse({**config, "use_mtp": False}).mtp is None
        two = parse({**config, "mtp_transformer_layers": 2})
        one = MODELS["MiniMax-M2.5"]
        layer = one.params_total - parse({**config, "num_hidden_layers": 61}).params_total
        assert two.mtp.params_total - one.mtp.params_total == layer and two.mtp.layers == 2

    @pytest.mark.parametrize("model_id, field, value, words", [
        # Qwen3.5's fields sit in its text_config
        ("Qwen3.5-35B-A3B", "layer_types", ["linear_attention"] * 39, "one entry per layer (40)"),
        ("Qwen3.5-35B-A3B", "linear_num_value_heads", None, "'linear_num_value_heads' is missing"),
        ("Qwen3.5-35B-A3B", "mtp_num_hidden_layers", 65, "between 0 and 64"),
        ("Qwen3.5-35B-A3B", "mtp_use_dedicated_embeddings", "false", "a JSON boolean"),
        ("Qwen3.5-35B-A3B", "attn_output_gate", 1, "a JSON boolean"),
        ("GLM-5", "qk_head_dim", 192,
         "'qk_head_dim' is 192, but it is the sum of 'qk_nope_head_dim' and 'qk_rope_head_dim' (256)"),
        ("GLM-5", "mlp_layer_types", ["dense"] * 4 + ["sparse"] * 74, "'mlp_layer_types' makes 74 layers MoE where"),
        ("GLM-5", "indexer_types", ["full"] * 77, "one entry per layer (78)"),
        ("GLM-5", "indexer_types", ["full"] * 77 + ["skip"], 'a list holding "skip"'),
        ("GLM-5", "index_topk", 0, "between 1 and"),
        ("GLM-5", "index_n_heads", None, "'index_n_heads' is missing"),
        ("MiniMax-M2.5", "rotary_dim", 256, "between 1 and 128 (head_dim)"),
        ("MiniMax-M2.5", "num_mtp_modules", -1, "between 0 and 64"),
        ("MiniMax-M2.5", "mtp_transformer_layers", 0, "between 1 and 64"),
        ("MiniMax-M2.5", "use_mtp", "true", "a JSON boolean"),
        ("MiniMax-M2.5", "num_experts_per_tok", 257, "between 1 and 256"),
    ])
    def test_absurd_fields_of_the_2026_families_name_the_field(self, model_id, field, value, words):
        config = config_of(model_id)
        if "text_config" in config:
            config = {**config, "text_config": {**config["text_config"], field: value}}
        else:
            config = {**config, field: value}
        start = time.perf_counter()
        with pytest.raises(InputError) as info:
            parse(config)
        assert words in str(info.value) and field in str(info.value)
        assert field in i18n.t(info.value.key, "vi", **info.value.params) != str(info.value)
        assert time.perf_counter() - start < HANG_S

    def test_kimi_k25_reads_its_language_model_and_int4_experts(self):
        m = MODELS["Kimi-K2.5"]
        assert m.model_type == "kimi_k2" and [n.key for n in m.notes] == ["hf_config.vision_left_out"]
        assert m.weight_formats == {"experts": "int4-g32", "attention": "bf16", "mlp": "bf16", "embeddings": "bf16"}
        assert (m.num_experts, m.moe_layers) == (384, 60)
        assert m.params_total == MODELS["Kimi-K2"].params_total  # K2.5's language model is K2's shape
        assert MODELS["Kimi-K2"].weight_formats["experts"] == "fp8-block"

    def test_gpt_oss_sliding_layers_sinks_and_mxfp4_experts(self):
        m = MODELS["gpt-oss-120b"]
        full, sliding = m.attention
        assert (full.layers, sliding.layers, sliding.window) == (18, 18, 128)
        # q, k, v, o with their biases, and one sink per head
        h, n_h, n_kv, d = 2880, 64, 8, 64
        assert m.params["attention"] == 36 * (2 * h * n_h * d + 2 * h * n_kv * d + n_h * d + 2 * n_kv * d + h + n_h)
        assert m.weight_formats == {"experts": "mxfp4", "attention": "bf16", "mlp": "bf16", "embeddings": "bf16"}
        per_position = 2 * n_kv * d * 2  # K and V, BF16
        assert m.cache_bytes(1024) == 18 * per_position * 1024 + 18 * per_position * 128 == 42_467_328
        assert m.cache_bytes(100_000) == 18 * per_position * 100_000 + 18 * per_position * 128 == 3_691_118_592

    def test_llama4_scout_chunked_rope_layers_and_a_shared_expert(self):
        m = MODELS["Llama-4-Scout"]
        full, chunked = m.attention
        assert (full.kind, full.layers, chunked.kind, chunked.layers, chunked.window) == ("full", 12, "chunked", 36, 8192)
        h, i = 5120, 8192
        assert (m.num_experts, m.experts_per_token, m.moe_layers, m.expert_params) == (16, 1, 48, 3 * h * i)
        assert m.params["mlp"] == 48 * (h * 16 + 3 * h * i + 2 * h) + h  # router, shared expert, norms; final norm
        assert [n.key for n in m.notes] == ["hf_config.vision_left_out"]

    def test_llama4_maverick_interleaves_dense_and_moe_layers(self):
        # Every second layer is MoE (interleave_moe_layer_step 2): 24 of 128 experts and a shared
        # one, 24 dense layers of intermediate_size_mlp; no q/k norm (use_qk_norm false).
        m = MODELS["Llama-4-Maverick"]
        h, i, i_mlp, V = 5120, 8192, 16384, 202048
        assert (m.num_experts, m.experts_per_token, m.moe_layers) == (128, 1, 24)
        attention = 48 * (2 * h * 40 * 128 + 2 * h * 8 * 128)
        mlp = 24 * 3 * h * i_mlp + 24 * (3 * h * i + h * 128) + 48 * 2 * h + h  # dense; shared and router; norms
        experts = 24 * 128 * 3 * h * i
        assert (m.params["attention"], m.params["mlp"], m.params["experts"]) == (attention, mlp, experts)
        assert m.params_total == 2 * V * h + attention + mlp + experts == 400_711_848_960
        assert m.params_active == 2 * V * h + attention + mlp + 24 * 3 * h * i == 17_184_691_200

    def test_qwen3_next_linear_layers_keep_a_state_that_does_not_grow(self):
        m = MODELS["Qwen3-Next-80B-A3B"]
        full, linear = m.attention
        assert (full.layers, linear.kind, linear.layers) == (12, "linear", 36)
        # n_v · d_k · d_v of state and (kernel − 1) · (2 n_k d_k + n_v d_v) of convolution window
        assert linear.state == 32 * 128 * 128 + 3 * (2 * 16 * 128 + 32 * 128) == 548_864
        grows = m.cache_bytes(100_000) - m.cache_bytes(0)
        assert grows == 12 * 2 * 2 * 256 * 100_000 * 2  # only the full-attention layers' K and V
        # Gated DeltaNet: in_proj_qkvz, in_proj_ba, conv1d, dt_bias and A_log, the gated norm, out_proj
        h = 2048
        linear_layer = h * (2 * 16 * 128 + 2 * 32 * 128) + h * 64 + 8192 * 4 + 2 * 32 + 128 + 32 * 128 * h
        full_layer = h * 16 * 256 * 2 + 2 * h * 2 * 256 + 16 * 256 * h + 2 * 256  # gated q, k, v, o, q/k norms
        assert m.params["attention"] == 36 * linear_layer + 12 * full_layer

    def test_qwen35_hybrid_layers_experts_and_state_by_hand(self):
        m = MODELS["Qwen3.5-397B-A17B"]
        assert m.model_type == "qwen3_5_moe_text" and [n.key for n in m.notes] == ["hf_config.vision_left_out"]
        h, n_h, n_kv, d, n_k, n_v, d_k, kernel, vocab = 4096, 32, 2, 256, 16, 64, 128, 4, 248_320
        # in_proj_qkv, in_proj_z, in_proj_b and in_proj_a; conv1d; dt_bias and A_log; the gated norm; out_proj
        conv = 2 * n_k * d_k + n_v * d_k
        linear = h * conv + h * n_v * d_k + 2 * h * n_v + conv * kernel + 2 * n_v + d_k + n_v * d_k * h
        full = 2 * h * n_h * d + 2 * h * n_kv * d + n_h * d * h + 2 * d  # q with its output gate, k, v, o, q/k norms
        expert, shared = 3 * h * 1024, 3 * h * 1024 + h  # the shared expert and its gate
        layer_rest = h * 512 + shared + 2 * h  # router, shared expert, two norms
        total = 2 * vocab * h + h + 45 * linear + 15 * full + 60 * (512 * expert + layer_rest)
        assert m.params_total == total == 396_346_350_336
        assert m.params_active == total - 60 * (512 - 10) * expert == 17_349_040_896
        full_group, linear_group = m.attention
        assert (full_group.layers, linear_group.layers) == (15, 45)
        # K and V of 2 heads of 256 in 15 layers, BF16; n_v·d_k·d_v plus 3 positions of the convolution
        assert m.kv_bytes_per_token() == 15 * 2 * 2 * 256 * 2 == 30_720
        assert linear_group.state == 64 * 128 * 128 + 3 * conv == 1_085_440
        assert m.cache_bytes(0) == 45 * 1_085_440 * 2
        # The MTP layer: a full-attention MoE layer, fc (2h → h), three norms; it reads the target's head.
        assert m.mtp_layers == 1 and m.mtp.tied_embeddings
        assert m.mtp_params == full + 512 * expert + layer_rest + 2 * h * h + 3 * h + vocab * h

    def test_qwen35_dense_and_its_mtp_layer_of_the_same_mlp(self):
        """Qwen3.5-27B's text_config (the 35B-A3B's with its fields: 64 layers, hidden 5120, 24 heads
        of which 4 KV, 48 value heads, intermediate 17,408, no experts)."""
        text = {key: value for key, value in config_of("Qwen3.5-35B-A3B")["text_config"].items()
                if key not in ("layer_types", "num_experts", "num_experts_per_tok", "moe_intermediate_size",
                               "shared_expert_intermediate_size")}
        text.update(model_type="qwen3_5_text", num_hidden_layers=64, hidden_size=5120, num_attention_heads=24,
                    num_key_value_heads=4, linear_num_value_heads=48, intermediate_size=17_408)
        m = parse({"model_type": "qwen3_5", "text_config": text})
        assert m.model_type == "qwen3_5_text" and m.num_experts == 0 and m.params_total == m.params_active
        h, i, vocab = 5120, 17_408, 248_320
        full_group, linear_group = m.attention
        assert (full_group.layers, linear_group.layers, m.kv_bytes_per_token()) == (16, 48, 16 * 2 * 4 * 256 * 2)
        assert linear_group.state == 48 * 128 * 128 + 3 * (2 * 16 * 128 + 48 * 128) == 817_152
        assert round(m.params_total / 1e9, 2) == 26.90  # the card: 27B
        mtp = m.mtp
        assert (mtp.num_experts, mtp.moe_layers) == (0, 0)
        assert mtp.params["mlp"] == 3 * h * i + 2 * h * h + 5 * h and mtp.params["embeddings"] == vocab * h

    def test_qwen35_without_its_output_gate_or_with_dedicated_tables(self):
        config = config_of("Qwen3.5-35B-A3B")
        text = config["text_config"]
        m = parse(config)
        ungated = parse({**config, "text_config": {**text, "attn_output_gate": False}})
        assert m.params_total - ungated.params_total == 10 * 2048 * 16 * 256
        dedicated = parse({**config, "text_config": {**text, "mtp_use_dedicated_embeddings": True}})
        assert dedicated.mtp_params - m.mtp_params == 248_320 * 2048 and not dedicated.mtp.tied_embeddings
        assert parse({**config, "text_config": {**text, "mtp_num_hidden_layers": 0}}).mtp is None

    @pytest.mark.parametrize("quantization, formats", [
        # nvidia's Qwen3.5-397B-A17B-NVFP4 (ModelOpt NVFP4) leaves out every layer's attention and the
        # shared experts, under the multimodal prefix
        ({"quant_method": "modelopt", "quant_algo": "NVFP4",
          "ignore": ["lm_head", "*.mlp.shared_expert.*", "model.language_model.layers.1.linear_attn*",
                     "model.language_model.layers.3.self_attn*"]},
         {"experts": "nvfp4", "attention": "bf16", "mlp": "bf16"}),
        # nvidia's Qwen3.6-35B-A3B-NVFP4 (ModelOpt MIXED_PRECISION): each module's own algorithm
        ({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "quantized_layers": {
            "model.language_model.layers.1.linear_attn.in_proj_qkv": {"quant_algo": "FP8"},
            "model.language_model.layers.1.mlp.experts": {"quant_algo": "W4A16_NVFP4", "group_size": 16},
            "model.language_model.layers.1.mlp.shared_expert.gate_proj": {"quant_algo": "W4A16_NVFP4"}}},
         {"experts": "nvfp4", "attention": "fp8", "mlp": "nvfp4"}),
        ({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION",
          "quantized_layers": {"model.language_model.layers.1.mlp.experts": {"quant_algo": "NVFP4"}}},
         {"experts": "nvfp4", "attention": "bf16", "mlp": "bf16"}),
    ])
    def test_qwen35_checkpoints_formats_under_the_language_model_prefix(self, quantization, formats):
        m = parse({**config_of("Qwen3.5-35B-A3B"), "quantization_config": quantization})
        assert m.weight_formats == {**formats, "embeddings": "bf16"}
        assert [n.key for n in m.notes] == ["hf_config.vision_left_out"]

    @pytest.mark.parametrize("quantization, formats", [
        # AMD's Kimi-K2.5-MXFP4 as ATOM's recipe describes it: MXFP4 routed experts, E8M0 scales per
        # 32, activations quantised to FP4 at run time; attention, the shared expert and the dense
        # first layer left out
        ({"quant_method": "quark",
          "global_quant_config": {"weight": {"dtype": "fp4", "qscheme": "per_group", "group_size": 32,
                                             "scale_format": "e8m0"},
                                  "input_tensors": {"dtype": "fp4", "group_size": 32, "is_dynamic": True}},
          "exclude": ["lm_head", "*self_attn*", "*mlp.gate", "*shared_experts*", "model.layers.0.*"]},
         {"experts": "mxfp4-w4a4", "attention": "bf16", "mlp": "bf16"}),
        # the experts by a layer pattern alone, the global config quantizing nothing
        ({"quant_method": "quark", "global_quant_config": {},
          "layer_quant_config": {"*.mlp.experts*": {"weight": {"dtype": "fp4_e2m1", "group_size": 32},
                                                    "input_tensors": {"dtype": "fp8_e4m3"}}}},
         {"experts": "mxfp4", "attention": "bf16", "mlp": "bf16"}),
        # a progressive spec (FP8, then INT4 per channel) stores INT4; FP8 everywhere else
        ({"quant_method": "quark",
          "global_quant_config": {"weight": {"dtype": "fp8_e4m3"}, "input_tensors": {"dtype": "fp8_e4m3"}},
          "layer_quant_config": {"*.mlp.experts.*": {"weight": [{"dtype": "fp8_e4m3"}, {"dtype": "int4", "ch_axis": 0}],
                                               "input_tensors": {"dtype": "fp8_e4m3"}}}},
         {"experts": "int4", "attention": "fp8", "mlp": "fp8"}),
    ])
    def test_amd_quark_checkpoints(self, quantization, formats):
        config = config_of("Kimi-K2.5")
        m = parse({**config, "text_config": {**config["text_config"], "quantization_config": quantization}})
        assert m.weight_formats == {**formats, "embeddings": "bf16"}
        assert [n.key for n in m.notes] == ["hf_config.vision_left_out"]

    def test_quark_w4a4_runs_at_the_fp4_peak_where_the_gpu_has_one(self):
        w4a4 = dtypes.FORMATS["mxfp4-w4a4"]
        assert w4a4.bytes == dtypes.FORMATS["mxfp4"].bytes == 0.5 + 1 / 32 and w4a4.compute == "fp4"
        gpus = roofline.load_gpus(DATA)
        assert gpus["MI355X"].runs_at(w4a4.compute) == "fp4" and gpus["MI300X"].runs_at(w4a4.compute) == "bf16"

    def test_a_quark_weight_of_a_kind_not_read_is_named(self):
        quantization = {"quant_method": "quark", "global_quant_config": {"weight": {"dtype": "int8"}}}
        m = parse({**LLAMA_8B, "quantization_config": quantization})
        assert ("hf_config.unknown_quantization", '"quark"') in [(n.key, n.params.get("method")) for n in m.notes]
        assert set(m.weight_formats.values()) == {"bf16"}

    def test_an_unknown_mixed_precision_algorithm_is_named(self):
        quantization = {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION",
                        "quantized_layers": {"model.language_model.layers.1.mlp.experts": {"quant_algo": "W2"}}}
        m = parse({**config_of("Qwen3.5-35B-A3B"), "quantization_config": quantization})
        assert ("hf_config.unknown_quantization", '"modelopt"') in [(n.key, n.params.get("method")) for n in m.notes]
        assert set(m.weight_formats.values()) == {"bf16"}

    def test_gemma3_windows_from_its_pattern_and_defaults(self):
        one, big = MODELS["Gemma-3-1B"], MODELS["Gemma-3-27B"]
        assert [(a.kind, a.layers, a.window) for a in one.attention] == [("full", 4, np.inf), ("sliding", 22, 512)]
        # The 27B's text_config lists only what differs from Gemma3TextConfig: the vocabulary is its default.
        assert big.vocab_size == 262_208 and big.tied_embeddings
        assert [(a.kind, a.layers, a.window) for a in big.attention] == [("full", 10, np.inf), ("sliding", 52, 1024)]

    def test_nested_mistral3_and_glm45_and_phi3(self):
        assert MODELS["Mistral-Small-3.1-24B"].model_type == "mistral"
        glm = MODELS["GLM-4.5"]
        assert (glm.num_experts, glm.moe_layers, glm.mtp_layers) == (160, 89, 1)
        assert MODELS["Phi-3-mini"].kv_bytes_per_token() == 2 * 32 * 32 * 96 * 2


class TestFrontierConfigsRefused:
    @pytest.mark.parametrize("base, field, value, words", [
        (GPT_OSS, "experts_per_token", 200, "between 1 and 128"),
        (GPT_OSS, "num_experts_per_tok", 129, "between 1 and 128"),
        (GPT_OSS, "sliding_window", 10**6, "more than the 131,072 of 'max_position_embeddings'"),
        (DEEPSEEK_V3, "kv_lora_rank", 0, "'kv_lora_rank' must be a whole number between 1"),
        (DEEPSEEK_V3, "kv_lora_rank", None, "'kv_lora_rank' is missing"),
        (DEEPSEEK_V3, "n_routed_experts", 0, "'n_routed_experts' must be a whole number between 1 and 4,096, got 0"),
        (DEEPSEEK_V3, "first_k_dense_replace", 62, "between 0 and 61 (num_hidden_layers)"),
        (DEEPSEEK_V3, "num_hidden_layers", 10**6, "between 1 and 1,024"),
        (GPT_OSS, "layer_types", ["full_attention"] * 3, "one entry per layer (36)"),
        (GPT_OSS, "layer_types", ["sliding_attention"] * 35 + ["global"], 'a list holding "global"'),
        (QWEN3_NEXT, "full_attention_interval", 0, "between 1 and 48"),
        (QWEN3_NEXT, "linear_num_value_heads", None, "'linear_num_value_heads' is missing"),
    ])
    def test_contradictory_or_absurd_fields_name_the_field(self, base, field, value, words):
        start = time.perf_counter()
        with pytest.raises(InputError) as info:
            parse({**base, field: value})
        assert words in str(info.value) and field in str(info.value)
        assert time.perf_counter() - start < HANG_S

    def test_deepseek_without_routed_experts_names_them_not_the_count_it_bounds(self):
        config = json.loads((SAMPLES / "configs" / "DeepSeek-V3.config.json").read_text())
        with pytest.raises(InputError) as info:
            parse({**config, "n_routed_experts": 0})
        assert "'n_routed_experts'" in str(info.value) and "num_experts_per_tok" not in str(info.value)
        assert "n_routed_experts" in in_vietnamese(info.value, "must be a whole number")

    @pytest.mark.parametrize("config, method", [({"quant_method": "bitsandbytes"}, '"bitsandbytes"'),
                                                ({"quant_method": None}, "null"), ({"bits": 4}, "null"),
                                                ("int4", '"int4"')])
    def test_an_unknown_quantization_method_is_named_and_read_as_bf16(self, config, method):
        """A null or missing method, and a quantization_config that is no object, had been read as BF16
        without a word (the attack pass)."""
        m = parse({**DEEPSEEK_V3, "quantization_config": config})
        assert [(n.key, n.params["method"]) for n in m.notes] == [("hf_config.unknown_quantization", method)]
        assert set(m.weight_formats.values()) == {"bf16"}

    @pytest.mark.parametrize("pattern, run", [("re:(a+)+$", False), ("re:" + ".*" * 40 + "x", False),
                                              ("re:" + "a" * 300, False), ("re:(", True), (7, False)])
    def test_hostile_module_patterns_are_never_run_and_match_nothing(self, pattern, run, monkeypatch):
        """A nested repeat, many unbounded repeats or a long expression would backtrack for minutes on
        a module name: such a pattern is never given to the regex engine (a broken one is, and fails)."""
        given = []
        match = re.match
        monkeypatch.setattr(re, "match", lambda expression, *args: given.append(expression) or match(expression, *args))
        quantization = {**GPT_OSS["quantization_config"], "modules_to_not_convert": [pattern] * 1000}
        m = parse({**GPT_OSS, "quantization_config": quantization})
        assert (isinstance(pattern, str) and pattern[3:] in given) == run
        assert m.weight_formats["attention"] == "mxfp4"  # nothing left out

    @hyp_settings(deadline=None, max_examples=150)
    @given(st.sampled_from([DEEPSEEK_V3, GPT_OSS, QWEN3_NEXT, config_of("GLM-5"), config_of("MiniMax-M2.5")]), st.sampled_from(list(hf_config.CONFIG_LIMITS)),
           st.one_of(st.integers(min_value=-2, max_value=300_000), JSON_VALUES))
    def test_any_single_field_mutation_gives_a_model_or_an_input_error(self, base, field, value):
        start = time.perf_counter()
        try:
            model = parse({**base, field: value})
        except InputError as exc:  # it names the field changed, or the one the change contradicts
            assert any(f"'{name}'" in str(exc) for name in hf_config.CONFIG_LIMITS)
        else:
            assert model.params_total >= model.params_active > 0
            assert np.isfinite(model.cache_bytes(10**6))
        assert time.perf_counter() - start < HANG_S


class TestDraftHeads:
    @pytest.mark.parametrize("config, hidden, heads, kv_heads, head_dim, intermediate, vocab", [
        ("EAGLE3-SpecForge-deepseek-v3-671B", 7168, 56, 8, 128, 40_960, 129_280),
        ("EAGLE3-SpecForge-qwen3-32B", 5120, 64, 8, 128, 25_600, 151_936),
        ("EAGLE3-SafeAILab-traineagle3-llama3.1-8B", 4096, 32, 8, 128, 14_336, 128_256),
        ("EAGLE3-AQ-MedAI-kimi-k2", 7168, 64, 64, 128, 18_432, 163_840),
        ("EAGLE3-SpecForge-gpt-oss-120b", 2880, 64, 8, 64, 17_280, 201_088),
        ("EAGLE3-SpecForge-llama4-scout", 5120, 40, 8, 128, 32_768, 202_048),  # head_dim absent: 5120 / 40
        ("EAGLE3-SpecForge-qwen3-235b-a22b", 4096, 64, 4, 128, 24_576, 151_936),
    ])
    def test_an_eagle3_head_from_its_own_config_by_hand(self, config, hidden, heads, kv_heads, head_dim, intermediate,
                                                        vocab):
        m = hf_config.model_from_config(CONFIGS / f"{config}.json")
        h, d = hidden, head_dim
        # q, k and v read [embedding; fused feature] (2h); o; the MLP, three norms, a final norm and
        # the fc that fuses three of the target's layers; its embedding and a 32,000-token head.
        assert m.model_type == "eagle3" and m.layers == 1
        assert m.params == {"experts": 0, "attention": 2 * h * heads * d + 2 * 2 * h * kv_heads * d + heads * d * h,
                            "mlp": 3 * h * intermediate + 3 * h + h + 3 * h * h, "embeddings": vocab * h + 32_000 * h}
        assert m.kv_bytes_per_token() == 2 * kv_heads * d * 2

    def test_an_eagle3_head_without_its_draft_vocabulary_is_refused(self):
        """SpecForge's DeepSeek-V3 head with draft_vocab_size null had been read as a one-layer Llama
        draft model and priced as one (an attack pass): refused, naming the field."""
        config = json.loads((CONFIGS / "EAGLE3-SpecForge-deepseek-v3-671B.json").read_text())
        with pytest.raises(InputError) as info:
            hf_config.model_from_config({**config, "draft_vocab_size": None}, name="head.json")
        assert info.value.key == "hf_config.eagle3_without_draft_vocab"
        assert str(info.value).startswith("head.json names an EAGLE-3 head in its architectures but gives no draft_vocab_size")
        assert hf_config.model_from_config(config).model_type == "eagle3"

    def test_each_shipped_head_reads_its_targets_hidden_states(self):
        heads = hf_config.load_draft_heads(DATA)
        assert len(heads) == 7
        for head_id, (target_id, head) in heads.items():
            assert head.hidden_size == MODELS[target_id].hidden_size, head_id

    @pytest.mark.parametrize("config, mark", [
        ("EAGLE3-SpecForge-deepseek-v3-671B", 'architecture "LlamaForCausalLMEagle3"'),
        ("EAGLE3-SpecForge-qwen3-32B", 'architecture "LlamaForCausalLMEagle3"'),
        ("EAGLE3-SafeAILab-traineagle3-llama3.1-8B", "it sets 'draft_vocab_size'"),  # LlamaForCausalLM by name
    ])
    def test_a_head_is_refused_as_the_target_and_read_as_the_draft(self, config, mark):
        data = (SAMPLES / "configs" / f"{config}.config.json").read_bytes()
        with pytest.raises(InputError) as info:
            hf_config.model_from_config_bytes(data, "config.json", 10**6, target=True)
        assert info.value.key == "hf_config.draft_head_as_target"
        assert f"a draft head's ({mark})" in str(info.value) and "choose it as the draft" in str(info.value)
        assert "draft head" in in_vietnamese(info.value, "choose it as the draft")
        assert hf_config.model_from_config_bytes(data, "config.json", 10**6).model_type == "eagle3"

    def test_every_preset_and_frontier_model_is_taken_as_a_target(self):
        for path in [*CONFIGS.glob("*.json"), *(SAMPLES / "configs").glob("*.json")]:
            if "EAGLE3" not in path.name:
                assert hf_config.model_from_config(path, target=True).model_type != "eagle3", path.name
        with pytest.raises(InputError, match="architecture \"EagleLlamaForCausalLM\""):
            hf_config.model_from_config({**LLAMA_8B, "architectures": ["EagleLlamaForCausalLM"]}, target=True)

    def test_a_draft_vocabulary_larger_than_the_vocabulary_is_refused(self):
        config = json.loads((CONFIGS / "EAGLE3-SpecForge-qwen3-32B.json").read_text())
        with pytest.raises(InputError, match="'draft_vocab_size' must be a whole number between 1 and 151,936"):
            parse({**config, "draft_vocab_size": 200_000})

    def test_qwen3_next_has_one_mtp_layer_as_vllm_builds_it(self):
        m = MODELS["Qwen3-Next-80B-A3B"]
        assert m.mtp_layers == 1 and [(a.kind, a.layers) for a in m.mtp.attention] == [("full", 1)]
        assert MODELS["Qwen3-235B-A22B"].mtp is None and MODELS["Kimi-K2"].mtp is None


class TestNotJson:
    def test_where_it_breaks_in_the_reader_s_language(self, tmp_path):
        """The parser's English words ('Expecting property name enclosed in double quotes') had been put
        into the Vietnamese sentence (the attack pass)."""
        with pytest.raises(InputError) as info:
            broken = tmp_path / "config.json"
            broken.write_text('{\n  "model_type": "llama",\n  oops\n}')
            hf_config.model_from_config(broken)
        assert info.value.key == "hf_config.not_json" and (info.value.params["line"], info.value.params["column"]) == (3, 3)
        said = in_vietnamese(info.value, "line 3, column 3")
        assert "dòng 3, cột 3" in said and "Expecting" not in said


# DeepSeek-V4 (specviz.model.family_deepseek_v4): counts, caches and reads by hand.
DSV4_FLASH = config_of("DeepSeek-V4-Flash")


class TestDeepSeekV4:
    h, n_h, d, q, o, g, n_i, d_i = 4096, 64, 512, 1024, 1024, 8, 64, 128  # DeepSeek-V4-Flash

    def layer_by_hand(self, ratio: int) -> int:
        h, n_h, d, q, o, g, n_i, d_i = self.h, self.n_h, self.d, self.q, self.o, self.g, self.n_i, self.d_i
        # sinks, wq_a, q_norm, wq_b, wkv, kv_norm, wo_a (n_h·d → g·o in g groups), wo_b
        layer = n_h + h * q + q + q * n_h * d + h * d + d + n_h * d * o + g * o * h
        if ratio == 4:  # the compressor over 2·512 (overlapping windows: wkv, wgate, ape, norm) and the indexer
            layer += 2 * h * 2 * d + 4 * 2 * d + d
            layer += q * n_i * d_i + h * n_i + 2 * h * 2 * d_i + 4 * 2 * d_i + d_i
        elif ratio == 128:
            layer += 2 * h * d + 128 * d + d
        return layer

    def test_one_layer_of_each_ratio_and_the_totals_by_hand(self):
        m = MODELS["DeepSeek-V4-Flash"]
        assert [self.layer_by_hand(r) for r in (0, 4, 128)] == [106_956_352, 126_098_624, 111_216_704]
        assert m.params["attention"] == 2 * 106_956_352 + 21 * 126_098_624 + 20 * 111_216_704
        h, hc, vocab, experts, k, expert = self.h, 4, 129_280, 256, 6, 3 * 4096 * 2048
        mix = (2 + hc) * hc
        # two norms and two hyper-connections (mixing matrix, bias, 3 scales) a layer
        assert 2 * h + 2 * (mix * hc * h + mix + 3) == 794_678
        mlp = 43 * (794_678 + h * experts + experts + expert) + h + hc * hc * h + hc + 1 + 3 * (vocab * k - experts)
        assert m.params["mlp"] == mlp  # routers and bias, the shared expert; the head's mixing; 3 hash tables
        assert m.params_total == 284_334_567_511 and m.params_active == m.params_total - 43 * (experts - k) * expert
        assert m.weight_formats == {"experts": "mxfp4", "attention": "fp8-block", "mlp": "fp8-block", "embeddings": "bf16"}

    def test_the_mtp_layer_is_a_sliding_window_layer_with_its_projections(self):
        m = MODELS["DeepSeek-V4-Flash"]
        h, experts, expert = self.h, 256, 3 * 4096 * 2048
        # compress_ratios[43] = 0; e_proj, h_proj, three norms, the hyper-connection head; the tables it reads
        layer = 106_956_352 + 794_678 + h * experts + experts + expert + experts * expert
        assert m.mtp_params == layer + 2 * h * h + 3 * h + 16 * h + 4 + 1 + 2 * 129_280 * h
        assert [(a.kind, a.layers, a.window) for a in m.mtp.attention] == [("sliding", 1, 128)]

    @pytest.mark.parametrize("context, by_hand", [
        # window 43·512·128, CSA 21·128 and its indexer 21·32 a position, HCA 20·4 a position (FP8: 1 byte),
        # and the compressors' FP32 rings: 21·2·2²·4·(512 + 128) and 20·2·128·512 elements of 4 bytes
        (1024, 43 * 512 * 128 + (21 * 160 + 20 * 4) * 1024 + (21 * 20_480 + 20 * 131_072) * 4),
        (100_000, 43 * 512 * 128 + (21 * 160 + 20 * 4) * 100_000 + (21 * 20_480 + 20 * 131_072) * 4),
    ])
    def test_cache_bytes_by_hand_at_two_contexts(self, context, by_hand):
        m = MODELS["DeepSeek-V4-Flash"]
        assert m.cache_bytes(context, 1.0) == by_hand
        # 18,112 bytes a position at 1k, 3,590 at 100k: the window and the rings are fixed, the
        # compressed entries grow by 3,440 bytes a position (DeepSeek-V3: 35,136 whatever the context)
        assert round(by_hand / context) == {1024: 18_112, 100_000: 3_590}[context]
        # The rings are kept once, not for each position a verify pass may roll back to.
        assert m.cache_bytes(context, 1.0, state_copies=5) == by_hand

    def test_a_decode_step_reads_the_window_top_k_and_every_heavily_compressed_entry(self):
        m = MODELS["DeepSeek-V4-Flash"]
        gpu = roofline.GPU("x", "x", "gpu", 1000.0, 8.0, 192.0, "")
        fp8 = dtypes.precision_of("checkpoint", "fp8")
        near, far = (roofline.forward_work(gpu, m, 1, 1, context, precision=fp8) for context in (0, 100_000))
        # Per layer at 100k: the window's 128 entries of 512; CSA 512 of 25,000 entries and the indexer's
        # 25,000 keys of 128; HCA all 781.25 entries of 512 (bytes: FP8).
        read = 43 * 128 * 512 + 21 * 512 * 512 + 21 * 25_000 * 128 + 20 * 781.25 * 512
        assert far["bytes"] - near["bytes"] == pytest.approx(read)
        # 4·n_h·512 FLOPs an entry, the indexer 2·n_i·128 a key; the token reads L + 1 positions (1 at L = 0)
        flops = (4 * 64 * 512 * (43 * (128 - 1) + 21 * (2048 - 1) / 4 + 20 * 100_000 / 128)
                 + 2 * 64 * 128 * 21 * 100_000 / 4)
        assert far["flops"] - near["flops"] == pytest.approx(flops)

    def test_the_other_checkpoints_are_read_with_their_experts_formats(self):
        # NVIDIA's nvidia/DeepSeek-V4-Flash-NVFP4: FP8 blocks with NVFP4 experts (its quantization_config)
        nvidia = {**DSV4_FLASH["quantization_config"], "moe_quant_algo": "NVFP4", "quant_algo": "MIXED_PRECISION",
                  "ignore": ["*.attn.*", "*.ffn.shared_experts.*", "head", "mtp.*"]}
        assert parse({**DSV4_FLASH, "quantization_config": nvidia}).weight_formats == {
            "experts": "nvfp4", "attention": "fp8-block", "mlp": "fp8-block", "embeddings": "bf16"}
        reference = {key: value for key, value in DSV4_FLASH.items() if key != "expert_dtype"}
        sglang = parse({**reference, "model_type": "deepseek_ref"})
        assert sglang.weight_formats["experts"] == "fp8-block"  # SGLang's FP8 copies: no expert_dtype
        assert sglang.params_total == MODELS["DeepSeek-V4-Flash"].params_total

    @pytest.mark.parametrize("field, value, words", [
        ("compress_ratios", [4] * 43 + [3], "one of 0, 4, 128; got a list holding 3"),
        ("compress_ratios", [4] * 43 + [10**6], "got a list holding 1000000"),
        ("compress_ratios", [4] * 43, "one entry per layer (44)"),
        ("compress_ratios", None, "'compress_ratios' is missing or null; it must list one of 0, 4, 128 for each layer and MTP layer (44)"),
        ("num_hidden_layers", 10**6, "between 1 and 1,024"),
        ("o_groups", 65, "between 1 and 64 (num_attention_heads)"),
        ("o_groups", 48, "multiple"),
        ("num_hash_layers", 44, "between 0 and 43 (num_hidden_layers)"),
        ("expert_dtype", "fp2", "one of fp4, fp8, got \"fp2\""),
        ("sliding_window", 2 * 1_048_576, "more than the 1,048,576 of 'max_position_embeddings'"),
    ])
    def test_absurd_fields_name_the_field_at_once(self, field, value, words):
        """A ratio engines do not build (vLLM takes 0, 4 and 128: 0 is a layer with the window alone,
        as Flash's first two and its MTP layer are) or a list that does not cover the layers."""
        start = time.perf_counter()
        with pytest.raises(InputError) as info:
            parse({**DSV4_FLASH, field: value})
        assert words in str(info.value) and (field in str(info.value) or field == "o_groups")
        assert time.perf_counter() - start < HANG_S
        assert i18n.t(info.value.key, "vi", **info.value.params) not in (str(info.value), info.value.key)


# Kimi-K3 (specviz.model.family_kimi_k3): counts, the KDA state and the MLA cache by hand.
KIMI_K3 = config_of("Kimi-K3")


def kimi_k3(**text) -> architecture.Model:
    """Kimi-K3's config with ``text`` replacing fields of its text_config (None: the field left out)."""
    fields = {**KIMI_K3["text_config"], **text}
    return parse({**KIMI_K3, "text_config": {k: v for k, v in fields.items() if v is not None}})


def kimi_k3_linear(**linear) -> architecture.Model:
    return kimi_k3(linear_attn_config={**KIMI_K3["text_config"]["linear_attn_config"], **linear})


class TestKimiK3:
    h, n_h, q, rank, rope, nope, v = 7168, 96, 1536, 512, 64, 128, 128  # the MLA layers
    n, d, kernel = 96, 128, 4  # the KDA layers: P = n·d = 12,288
    latent, moe_i, experts, k, vocab = 3584, 3072, 896, 16, 163_840

    def test_one_mla_and_one_kda_layer_and_the_experts_by_hand(self):
        h, n_h, q, rank, rope, nope, v = self.h, self.n_h, self.q, self.rank, self.rope, self.nope, self.v
        # q_a, its norm, q_b; kv_a (latent + rope), its norm, kv_b; o; the output gate g_proj (h·n_h·d_v)
        mla = h * q + q + q * n_h * (nope + rope) + h * (rank + rope) + rank + rank * n_h * (nope + v) + n_h * v * h
        mla += h * n_h * v
        p = self.n * self.d
        # in_proj_qkvgfab (q, k, v, the full-rank gate, f_a, β), f_b, dt_bias, the convolution, A_log, o_norm, o_proj
        kda = h * (4 * p + self.d + self.n) + self.d * p + p + 3 * p * self.kernel + self.n + self.d + p * h
        assert (mla, kda) == (232_196_096, 443_740_384)
        m = MODELS["Kimi-K3"]
        assert m.params["attention"] == 24 * mla + 69 * kda
        # 3·r·i per expert in the latent space; 92 MoE layers (layer 0 is dense)
        expert = 3 * self.latent * self.moe_i
        assert (m.expert_params, m.moe_layers, m.num_experts, m.experts_per_token) == (expert, 92, 896, 16)
        assert m.params["experts"] == 92 * 896 * 33_030_144
        # per MoE layer: router and its bias, two shared experts (3·h·2i), latent down, its norm, up
        moe = h * 896 + 896 + 3 * h * 2 * self.moe_i + 2 * h * self.latent + self.latent
        # two norms and the attention residuals' two norms and two projections a layer; the dense layer;
        # the final norm and the output's residual norm and projection
        assert m.params["mlp"] == 93 * 6 * h + 3 * h * 33_792 + 92 * moe + 3 * h
        assert m.params["embeddings"] == 2 * self.vocab * h

    def test_totals_against_the_model_card(self):
        m = MODELS["Kimi-K3"]
        # 2.78T total; 105.36B active, 104.19B without the input table (the card's 104B, as K2's 32B)
        assert m.params_total == 2_779_484_476_000
        assert round(m.params_total / 1e11) == 28 and round((m.params_active - m.embedding_params) / 1e9) == 104
        assert m.params_active == 105_364_017_760 and m.mtp_layers == 0 and m.mtp is None

    @pytest.mark.parametrize("context, by_hand", [
        # 24 MLA layers of 512 + 64 BF16 a position; 69 KDA layers of 96·128·128 FP32 and 3·12,288·3 BF16
        (1024, 24 * 576 * 2 * 1024 + 69 * (96 * 128 * 128 * 4 + 3 * 12_288 * 3 * 2)),
        (100_000, 24 * 576 * 2 * 100_000 + 69 * (96 * 128 * 128 * 4 + 3 * 12_288 * 3 * 2)),
    ])
    def test_cache_and_state_bytes_by_hand_at_two_contexts(self, context, by_hand):
        m = MODELS["Kimi-K3"]
        assert m.cache_bytes(context) == by_hand == {1024: 477_683_712, 100_000: 3_214_172_160}[context]
        # The KDA state (449 MB a sequence) is kept for each position a verify pass may roll back to.
        assert m.cache_bytes(context, state_copies=5) == by_hand + 4 * 69 * 6_512_640
        # The latent is on every device; the state splits over the 96 KDA heads.
        assert m.cache_bytes(context, tensor_split=8) == 8 * 24 * 576 * 2 * context + 69 * 6_512_640

    def test_a_decode_step_reads_every_latent_and_the_whole_state(self):
        m = MODELS["Kimi-K3"]
        gpu = roofline.GPU("x", "x", "gpu", 1000.0, 8.0, 192.0, "")
        near, far = (roofline.forward_work(gpu, m, 1, 1, context) for context in (0, 100_000))
        assert far["bytes"] - near["bytes"] == pytest.approx(24 * 576 * 2 * 100_000)
        assert [(a.kind, a.layers, a.state_bytes) for a in m.attention] == [("latent", 24, 0.0), ("linear", 69, 4.0)]

    def test_the_mxfp4_experts_are_read_and_the_ignored_modules_stay_bf16(self):
        m = MODELS["Kimi-K3"]
        assert m.weight_formats == {"experts": "mxfp4", "attention": "bf16", "mlp": "bf16", "embeddings": "bf16"}
        assert [n.key for n in m.notes] == ["hf_config.vision_left_out"]
        unknown = kimi_k3(quantization_config={"quant_method": "bitnet"})
        assert set(unknown.weight_formats.values()) == {"bf16"}
        assert "hf_config.unknown_quantization" in [n.key for n in unknown.notes]

    def test_an_mtp_layer_is_an_mla_moe_layer_with_its_own_tables(self):
        m = kimi_k3(num_nextn_predict_layers=1)
        base = MODELS["Kimi-K3"]
        assert m.params_total == base.params_total and m.mtp_layers == 1
        h = self.h
        moe = h * 896 + 896 + 3 * h * 2 * self.moe_i + 2 * h * self.latent + self.latent
        layer = 232_196_096 + 2 * h + moe + 896 * 33_030_144
        assert m.mtp_params == layer + 2 * h + 2 * h * h + h + 2 * self.vocab * h
        assert [(a.kind, a.layers) for a in m.mtp.attention] == [("latent", 1)]

    @pytest.mark.parametrize("read, words", [
        (lambda: kimi_k3(num_experts_per_token=0), "'num_experts_per_token' must be a whole number between 1 and 896"),
        (lambda: kimi_k3_linear(full_attn_layers=list(range(4, 93, 4)) + [94]),
         "'linear_attn_config.full_attn_layers' must be a list of distinct layer indexes between 1 and 93 (num_hidden_layers), got a list holding 94"),
        (lambda: kimi_k3_linear(kda_layers=[0, 1]), "'linear_attn_config.kda_layers' must be a list of distinct layer indexes between 1 and 93"),
        (lambda: kimi_k3(num_hidden_layers=10**6), "'num_hidden_layers' must be a whole number between 1 and 1,024"),
        (lambda: kimi_k3_linear(full_attn_layers=[4, 8]), "(69 layers) and 'linear_attn_config.full_attn_layers' (2) must number each of the 93 layers once"),
        (lambda: kimi_k3_linear(kda_layers=[4] * 2), "got a list holding 4 twice"),
        (lambda: kimi_k3(linear_attn_config=[1, 2]), "'linear_attn_config' must be an object of fields, got a list"),
        (lambda: kimi_k3_linear(use_full_rank_gate=False), "'linear_attn_config.use_full_rank_gate' is not true"),
        (lambda: kimi_k3_linear(num_heads=None), "'linear_attn_config.num_heads' is missing"),
        (lambda: kimi_k3(mla_use_nope=False), "'mla_use_nope' must be true"),
        (lambda: kimi_k3(routed_expert_hidden_size=-1), "'routed_expert_hidden_size' must be a whole number between 1"),
        (lambda: kimi_k3(attn_res_block_size=94), "'attn_res_block_size' must be a whole number between 1 and 93 (num_hidden_layers)"),
    ])
    def test_absurd_fields_name_the_field_at_once(self, read, words):
        start = time.perf_counter()
        with pytest.raises(InputError) as info:
            read()
        assert words in str(info.value), str(info.value)
        assert time.perf_counter() - start < HANG_S
        assert i18n.t(info.value.key, "vi", **info.value.params) not in (str(info.value), info.value.key)
