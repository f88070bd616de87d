"""Read a Hugging Face ``config.json`` into a :class:`specviz.model.architecture.Model`, offline.

Every field read is checked against :data:`CONFIG_LIMITS` first (JSON type and range,
:mod:`specviz.model.config_fields`), and the work
done does not grow with any value in the file; each component's format comes from the checkpoint's
``quantization_config`` (:mod:`specviz.model.quantization`). A multimodal wrapper (Llama 4, Gemma 3,
Mistral 3, Kimi-K2.5, Qwen3.5) nests its language model in ``text_config``: that is what is read, and the
model notes that the vision tower is left out.

Families (:data:`SUPPORTED_MODEL_TYPES`) and what is counted per layer, from the Hugging Face
transformers modeling files (and vLLM's, where they differ):

* dense GQA (``llama``, ``mistral``, ``qwen2``, ``qwen3``, ``phi3``): q (h·n_h·d), k and v
  (h·n_kv·d each), o (n_h·d·h); q/k/v biases for Qwen2 (all four with ``attention_bias``); q/k
  norms of d for Qwen3; gate, up and down (3·h·i); two norms of h.
* ``gemma3_text``: as dense, with q/k norms and four norms per layer; ``layer_types`` (or one full
  layer in every ``sliding_window_pattern``, 6) sets the sliding-window layers.
* MoE (``mixtral``, ``qwen2_moe``, ``qwen3_moe``): a router (h·E) and E experts of 3·h·i_moe, with
  Qwen2-MoE's shared expert and its gate; layer i is sparse when (i + 1) % ``decoder_sparse_step``
  is 0 and i is not in ``mlp_only_layers``.
* ``gpt_oss``: attention with biases and one sink per head; experts with biases (2i + h); the
  router with its bias; ``layer_types`` alternate sliding (``sliding_window``) and full attention.
* ``minimax_m2`` (MiniMax-M2, M2.5, M2.7; transformers' modular_minimax_m2.py, vLLM's
  minimax_m2.py): GQA whose q and k norms span the whole projection (n_h·d and n_kv·d, FlexOlmo's),
  ``rotary_dim`` rotating part of each head (no weight, no cache); ``num_local_experts`` of
  3·h·``intermediate_size`` with a router and its ``e_score_correction_bias`` (``use_routing_bias``),
  no shared expert. Its ``num_mtp_modules`` MTP modules (``use_mtp``; vLLM's minimax_m2_mtp.py) are
  each ``mtp_transformer_layers`` decoder layers with enorm, hnorm, eh_proj and a shared head of
  their own (a norm and V·h), the embedding the target's.
* ``llama4_text``: MoE every ``interleave_moe_layer_step`` layers (E experts of 3·h·i plus a shared
  one), dense layers of ``intermediate_size_mlp``; the RoPE layers (``no_rope_layers``, by default all
  but every fourth) attend within chunks of ``attention_chunk_size``, read here as a window of
  that size (an upper bound: a token at position L reads L mod C positions).
* ``deepseek_v3``, ``kimi_k2``, ``deepseek_v32`` (MLA): q through a rank-``q_lora_rank`` projection
  and its norm, then to n_h·(d_nope + d_rope); a joint kv projection to ``kv_lora_rank`` + d_rope,
  its norm, and kv_b to n_h·(d_nope + d_v); o from n_h·d_v. The cache holds one latent of
  ``kv_lora_rank + qk_rope_head_dim`` per position and layer, for all heads; a decode step scores
  it in the absorbed form, 2·n_h·(r + d_rope) + 2·n_h·r FLOPs per position (DeepSeek-V2,
  arXiv:2405.04434, §2.1). The first ``first_k_dense_replace`` layers are dense, then every
  ``moe_layer_freq``-th is MoE: ``n_routed_experts`` of 3·h·i_moe, ``n_shared_experts`` alike, a
  router with its correction bias. DeepSeek-V3.2's sparse attention reads ``index_topk`` latents
  chosen by an indexer that caches ``index_head_dim`` per position (its own projections counted).
* ``glm4_moe``: GQA attention (biases, q/k norms) with DeepSeek's MoE fields.
* ``glm_moe_dsa`` (GLM-5, 5.1, 5.2; transformers' modular_glm_moe_dsa.py, vLLM's deepseek_v2.py):
  DeepSeek-V3.2's MLA, sparse attention and indexer at GLM's head dims (``qk_nope_head_dim`` 192,
  ``v_head_dim`` 256; ``qk_head_dim`` must be their sum with the rope dim), DeepSeek's MoE fields
  (``mlp_layer_types``, where given, must agree with them) and MTP layer. A layer whose
  ``indexer_types`` is "shared" (GLM-5.2: 57 of 78) reuses the last full layer's top-k: it has no
  indexer and caches no index keys.
* ``qwen3_next`` (hybrid): every ``full_attention_interval``-th layer is gated full attention (q
  projected to 2·n_h·d); the others are Gated DeltaNet linear attention, whose state per sequence
  and layer is n_v·d_k·d_v plus a convolution window of (kernel − 1)·(2·n_k·d_k + n_v·d_v).
* ``qwen3_5_text``, ``qwen3_5_moe_text`` (Qwen3.5 and Qwen3.6, in a ``qwen3_5``/``qwen3_5_moe``
  wrapper; transformers' modular_qwen3_5.py and modular_qwen3_5_moe.py): Qwen3-Next's layers, the
  Gated DeltaNet's fused projections split into in_proj_qkv (h·(2·n_k·d_k + n_v·d_v)), in_proj_z
  (h·n_v·d_v), in_proj_b and in_proj_a (h·n_v each), so the same count; ``layer_types`` sets the
  linear layers; ``attn_output_gate`` (default true) doubles q; the MoE variant has the shared
  expert of h·``shared_expert_intermediate_size``·3 and its gate (h), the dense one an MLP of
  3·h·i.
* ``deepseek_v4`` (and ``deepseek_ref``, SGLang's FP8 copies): compressed attention over one KV head,
  hyper-connections, hash-routed first layers; read in :mod:`specviz.model.family_deepseek_v4`, whose
  docstring says what each field is and how it is counted.
* ``kimi_linear`` (Kimi-K3, in a ``kimi_k3`` wrapper): Kimi Delta Attention layers (``linear_attn_config``,
  numbered from 1) beside gated NoPE MLA layers, attention residuals, latent MoE (experts at
  ``routed_expert_hidden_size``); read in :mod:`specviz.model.family_kimi_k3`, whose docstring says
  what each field is and how it is counted.
* The multi-token-prediction layers (``num_nextn_predict_layers``) are counted apart as the draft
  they are: one decoder layer of the last layer's kind, two norms, the 2h·h projection that joins
  the embedding to the hidden state, and the norm before the shared head. Qwen3.5's
  (``mtp_num_hidden_layers``, vLLM's qwen3_5_mtp.py) is a full-attention layer of the model's MLP
  kind and reads the target's head (one table, as an EAGLE head) unless
  ``mtp_use_dedicated_embeddings`` gives it its own embedding.

Publishers count differently; the figures they print, against these counts:

* DeepSeek-V3: 671B total, both embedding tables in, MTP out (its 14B are the MTP layer with its
  own copies of the embedding and head); 37B active is the count with the output head in and the
  input embedding out (36.6B; 37.6B with both).
* gpt-oss (model card, table 1): 116.83B / 5.13B for 120b and 20.91B / 3.61B for 20b: totals with
  both tables, active with the unembedding and without the embedding.
* Qwen3 MoE and Qwen3-Next: totals with both tables (235B, 80B); the "A22B" and "A3B" active
  figures without them (the cards print "non-embedding" counts beside).
* Qwen3.5 (cards: 397B / 17B, 35B / 3B): totals with both tables, the vision encoder in and the MTP
  layer out (397B-A17B: 396.35B here, 396.80B with its 0.46B vision encoder); active with both
  tables (17.35B, 3.45B).
* Llama 4 Scout: 109B / 17B for the whole model, the vision tower in; this module counts the
  language model alone (107.8B / 17.2B).
* Kimi K2: 1.04T / 32B, counted as DeepSeek counts.
* MiniMax-M2 and M2.5 (card: 230B / 10B): the total with both tables and without the MTP modules
  (228.69B), the active count with the head and without the embedding (10.42B).
* GLM-5 (card: 744B / 40B): the total with both tables and without the MTP layer (743.91B), the
  active count with neither table (39.88B), as GLM-4.5's 355B / 32B.
* DeepSeek-V4-Pro 1.6T / 49B and -Flash 284B / 13B (model cards): counted as DeepSeek-V3 is, MTP out
  of the total, the head in and the input embedding out of the active count (1.573T / 48.9B and
  284.3B / 13.3B).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

from specviz.errors import InputError, Notice
from specviz.i18n import PresetText

from . import quantization
from .architecture import Attention, Model
from .config_parts import Parts, linear_attention, mla_attention, moe_layer_count
from .family_deepseek_v4 import DSV4_READERS, DSV4_TYPES
from .family_kimi_k3 import KIMI_LINEAR_TYPES, KIMI_READERS
from .preset_rows import read_rows
from .config_fields import (CONFIG_LIMITS, LAYER_KINDS, ConfigLimit, check_config, describe, flatten, require,
                            routed_experts, window_of)

__all__ = ["ConfigLimit", "CONFIG_LIMITS", "SUPPORTED_MODEL_TYPES", "WRAPPERS", "load_models", "load_draft_heads",
           "model_from_config", "model_from_config_bytes"]

DENSE_TYPES = ("llama", "mistral", "qwen2", "qwen3", "phi3", "gemma3_text")
MOE_TYPES = ("mixtral", "qwen2_moe", "qwen3_moe", "gpt_oss", "llama4_text", "minimax_m2")
MLA_TYPES = ("deepseek_v3", "kimi_k2", "deepseek_v32", "glm_moe_dsa")
# MLA with DeepSeek's sparse attention: DeepSeek-V3.2, and GLM-5's (its indexer shared across layers in 5.2).
SPARSE_MLA_TYPES = ("deepseek_v32", "glm_moe_dsa")
DEEPSEEK_TYPES = (*MLA_TYPES, "glm4_moe")
# Qwen3-Next's hybrid of Gated DeltaNet and gated full attention, and Qwen3.5's (dense and MoE).
HYBRID_TYPES = ("qwen3_next", "qwen3_5_text", "qwen3_5_moe_text")
SUPPORTED_MODEL_TYPES = (*DENSE_TYPES, *MOE_TYPES, *DEEPSEEK_TYPES, *HYBRID_TYPES, *DSV4_TYPES, *KIMI_LINEAR_TYPES)
# Multimodal wrappers whose language model sits in ``text_config``, and its type where the nested
# config does not name one.
WRAPPERS = {"llama4": "llama4_text", "gemma3": "gemma3_text", "mistral3": "mistral", "kimi_k25": "kimi_k2",
            "qwen3_5": "qwen3_5_text", "qwen3_5_moe": "qwen3_5_moe_text", "kimi_k3": "kimi_linear"}
# What transformers' config classes give a field a config leaves out, where the files rely on it
# (Gemma 3's text_config lists only what differs: Gemma3TextConfig's defaults).
FAMILY_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"vocab_size": 262_208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
                    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
                    "max_position_embeddings": 131_072, "sliding_window": 4096, "sliding_window_pattern": 6,
                    "tie_word_embeddings": True},
}
# What marks a config.json as a draft head's, not a model's: an architecture naming EAGLE (SpecForge's
# LlamaForCausalLMEagle3; vLLM's EagleLlamaForCausalLM and Eagle3LlamaForCausalLM, model_executor/
# models/registry.py) or a field only a head sets (EAGLE-3's draft_vocab_size, SafeAILab's
# traineagle3 config; SpecForge's eagle_config of the target layers it reads).
_HEAD_FIELDS = ("draft_vocab_size", "eagle_config")


def _draft_head_mark(config: Mapping[str, Any]) -> Notice | None:
    """What in ``config`` shows it is a draft head's (see ``_HEAD_FIELDS``), or None."""
    architectures = config.get("architectures")
    for architecture in architectures if isinstance(architectures, list) else ():
        if isinstance(architecture, str) and "eagle" in architecture.lower():
            return Notice("hf_config.head_mark.architecture", architecture=describe(architecture))
    for key in _HEAD_FIELDS:
        if config.get(key) is not None:
            return Notice("hf_config.head_mark.field", field=key)
    return None


def _names_eagle3(config: Mapping[str, Any]) -> bool:
    """Whether ``config``'s architectures name an EAGLE-3 head (SpecForge's LlamaForCausalLMEagle3,
    vLLM's Eagle3LlamaForCausalLM)."""
    architectures = config.get("architectures")
    return any(isinstance(a, str) and "eagle3" in a.lower() for a in (architectures if isinstance(architectures, list) else ()))


def _load_json(text: str | bytes, name: str) -> Any:
    """Parse one config.json (a byte-order mark before it, as some editors write, is skipped), turning
    every way it can fail into an InputError that names it."""
    try:
        return json.loads(text.decode("utf-8-sig") if isinstance(text, bytes) else text)
    except UnicodeDecodeError:
        raise InputError("hf_config.not_utf8", name=name) from None
    except RecursionError:  # json.loads recurses once per nesting level
        raise InputError("hf_config.too_deep", name=name) from None
    except json.JSONDecodeError as exc:
        # Where it breaks, not the parser's English words: the message is in the reader's language.
        raise InputError("hf_config.not_json", name=name, line=exc.lineno, column=exc.colno) from None
    except ValueError:  # the only other ValueError of json: an integer over 4,300 digits
        raise InputError("hf_config.long_integer", name=name) from None


def _types_of_layers(values: Mapping[str, Any], default: list[str]) -> list[str]:
    """The attention kind of each layer: ``layer_types`` where the config gives it, else ``default``."""
    return [LAYER_KINDS[name] for name in values.get("layer_types") or default]


def _gqa(values: Mapping[str, Any], model_type: str, kinds: list[str]) -> tuple[int, list[Attention]]:
    """Parameters of one GQA attention layer, and the groups of ``kinds`` (one per layer) by kind."""
    h, n_h = values["hidden_size"], values["num_attention_heads"]
    n_kv = values.get("num_key_value_heads", n_h)
    if n_h % n_kv:
        raise InputError("hf_config.heads_multiple", heads=n_h, kv_heads=n_kv)
    d = values.get("head_dim", h // n_h)
    if not 1 <= d <= CONFIG_LIMITS["head_dim"].high:
        raise InputError("hf_config.head_dim", value=d, high=CONFIG_LIMITS["head_dim"].high)
    attention = 2 * h * n_h * d + 2 * h * n_kv * d
    if model_type in ("qwen2", "qwen2_moe"):
        attention += n_h * d + 2 * n_kv * d
    elif values.get("attention_bias"):
        attention += n_h * d + 2 * n_kv * d + h
    if model_type in ("qwen3", "qwen3_moe", "gemma3_text", *HYBRID_TYPES) or (
            model_type == "glm4_moe" and values.get("use_qk_norm")):
        attention += 2 * d
    if model_type == "gpt_oss":
        attention += n_h  # one attention sink per head
    elif model_type == "minimax_m2":
        attention += (n_h + n_kv) * d  # q and k norms over the whole projection (FlexOlmoAttention's)
    windows = {"sliding": ("sliding_window", model_type), "chunked": ("attention_chunk_size", model_type)}
    groups = []
    for kind in ("full", "sliding", "chunked"):
        count = kinds.count(kind)
        if count:
            window = window_of(values, windows[kind][0]) if kind in windows else float("inf")
            groups.append(Attention(kind, count, 4.0 * n_h * d, 2.0 * n_kv * d, window, kv_heads=n_kv))
    return attention, groups


def _dense_family(values: Mapping[str, Any], model_type: str) -> Parts:
    layers, h = values["num_hidden_layers"], values["hidden_size"]
    if model_type == "gemma3_text":
        pattern = values["sliding_window_pattern"]
        default = ["full_attention" if (i + 1) % pattern == 0 else "sliding_attention" for i in range(layers)]
        norms = 4 * h
    else:
        default, norms = ["full_attention"] * layers, 2 * h
    attention, groups = _gqa(values, model_type, _types_of_layers(values, default))
    mlp = 3 * h * require(values, "intermediate_size")
    if values.get("mlp_bias"):
        mlp += 2 * values["intermediate_size"] + h
    return Parts(attention * layers, groups, norms, layers, mlp, 0, final_norm=h)


def _moe_family(values: Mapping[str, Any], model_type: str) -> Parts:
    layers, h = values["num_hidden_layers"], values["hidden_size"]
    default = ["full_attention"] * layers
    if model_type == "gpt_oss":
        default = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(layers)]
    elif model_type == "llama4_text":
        rope = values.get("no_rope_layers") or [int((i + 1) % 4 != 0) for i in range(layers)]
        default = ["chunked_attention" if uses else "full_attention" for uses in rope]
    experts = routed_experts(values)
    if not experts:  # null means unset: a config of a MoE family without experts is a dense model
        return _dense_family(values, model_type)
    attention, groups = _gqa(values, model_type, _types_of_layers(values, default))
    k = values.get("num_experts_per_tok") or values.get("experts_per_token") or require(values, "num_experts_per_tok")
    dense_i = 0
    if model_type == "llama4_text":
        i = require(values, "intermediate_size")
        expert = 3 * h * i
        router, shared = h * experts, expert
        moe_layers = layers // values.get("interleave_moe_layer_step", 1)
        dense_i = values.get("intermediate_size_mlp", 0) if moe_layers < layers else 0
        if moe_layers < layers and not dense_i:
            require(values, "intermediate_size_mlp")
    elif model_type == "gpt_oss":
        i = require(values, "intermediate_size")
        expert = 3 * h * i + 2 * i + h  # gate_up and down with their biases
        router, shared = h * experts + experts, 0
        moe_layers = layers
    else:
        # Mixtral's experts use intermediate_size; Qwen-MoE names theirs moe_intermediate_size.
        key = "moe_intermediate_size" if "moe_intermediate_size" in values else "intermediate_size"
        expert = 3 * h * require(values, key)
        shared_i = values.get("shared_expert_intermediate_size", 0)
        router, shared = h * experts, (3 * h * shared_i + h if shared_i else 0)
        if model_type == "minimax_m2" and values.get("use_routing_bias", True):
            router += experts  # e_score_correction_bias
        # Layer i is sparse when (i + 1) % step == 0 and it is not in mlp_only_layers (as in
        # transformers); counted arithmetically so that the time does not grow with the layer count.
        step = values.get("decoder_sparse_step", 1)
        dense_only = set(values.get("mlp_only_layers", ()))
        moe_layers = layers // step - sum(1 for i in dense_only if (i + 1) % step == 0)
        if moe_layers < layers:
            dense_i = require(values, "intermediate_size")
    return Parts(attention * layers, groups, 2 * h, layers - moe_layers, 3 * h * dense_i, moe_layers,
                  experts, k, expert, router, shared, final_norm=h)


def _deepseek_family(values: Mapping[str, Any], model_type: str) -> Parts:
    layers, h = values["num_hidden_layers"], values["hidden_size"]
    if model_type in MLA_TYPES:
        attention, layer_attention, groups = mla_attention(values, model_type in SPARSE_MLA_TYPES)
    else:
        layer_attention, groups = _gqa(values, model_type, ["full"] * layers)
        attention = layers * layer_attention
    experts = require(values, "n_routed_experts")
    if not experts:
        # Every MoE layer routes each token to num_experts_per_tok of these (transformers'
        # DeepseekV3MoE): none is the fault, not the per-token count it bounds (left unchecked).
        raise InputError("hf_config.count", field="n_routed_experts", low=1,
                         bound=f"{CONFIG_LIMITS['n_routed_experts'].high:,}", value=describe(experts))
    k = require(values, "num_experts_per_tok")
    moe_i = require(values, "moe_intermediate_size")
    expert = 3 * h * moe_i
    router, shared = h * experts + experts, values.get("n_shared_experts", 0) * expert
    moe_layers = moe_layer_count(values)
    if values.get("mlp_layer_types") and values["mlp_layer_types"].count("sparse") != moe_layers:
        # GLM-5.1's and 5.2's list says what first_k_dense_replace and moe_layer_freq do: both must agree.
        raise InputError("hf_config.layers_disagree", field="mlp_layer_types",
                         count=values["mlp_layer_types"].count("sparse"), expected=moe_layers)
    dense_mlp = 3 * h * require(values, "intermediate_size") if moe_layers < layers else 0
    # Beside a decoder layer of the MoE kind: enorm and hnorm, eh_proj (2h → h), the shared head's norm.
    return Parts(attention, groups, 2 * h, layers - moe_layers, dense_mlp, moe_layers,
                  experts, k, expert, router, shared, final_norm=h, mtp_attention=layer_attention,
                  mtp_extra=2 * h + 2 * h * h + h + 2 * h)


def _hybrid(values: Mapping[str, Any], model_type: str) -> Parts:
    """Qwen3-Next's and Qwen3.5's layers (module docstring): Qwen3.5 splits Qwen3-Next's fused
    in_proj_qkvz and in_proj_ba into in_proj_qkv, in_proj_z, in_proj_b and in_proj_a of the same
    sizes (transformers' modular_qwen3_5.py), and its dense variant has an MLP where Qwen3-Next has
    experts."""
    layers, h = values["num_hidden_layers"], values["hidden_size"]
    interval = require(values, "full_attention_interval")
    default = ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(layers)]
    kinds = _types_of_layers(values, default)
    full = kinds.count("full")
    full_layer, groups = _gqa(values, model_type, ["full"] * full) if full else (0, [])
    n_h, d = values["num_attention_heads"], values.get("head_dim", h // values["num_attention_heads"])
    if values.get("attn_output_gate", True):
        full_layer += h * n_h * d  # the output gate doubles q's projection
    n_k, n_v = require(values, "linear_num_key_heads"), require(values, "linear_num_value_heads")
    d_k, d_v = require(values, "linear_key_head_dim"), require(values, "linear_value_head_dim")
    kernel = require(values, "linear_conv_kernel_dim")
    conv = 2 * n_k * d_k + n_v * d_v
    linear = h * (2 * n_k * d_k + 2 * n_v * d_v) + h * 2 * n_v + conv * kernel + 2 * n_v + d_v + n_v * d_v * h
    count = len(kinds) - full
    if count:
        groups.append(linear_attention(count, n_v, d_k, d_v, conv, kernel))
    moe = _moe_family({**values, "layer_types": None, "num_hidden_layers": layers}, "qwen3_moe")
    # Its MTP layer (vLLM's Qwen3NextMTP and Qwen3_5MTP): a full-attention layer of the model's MLP kind
    # (experts, or Qwen3.5-27B's dense MLP), the norms of the embedding and the hidden state, fc
    # (2h → h) and a final norm. Qwen3.5's reads the target's tables unless
    # mtp_use_dedicated_embeddings gives it its own.
    dense_mlp = 0 if moe.moe_layers else moe.dense_mlp
    tables = 2 if values.get("mtp_use_dedicated_embeddings", True) else 1
    return replace(moe, attention_params=full * full_layer + count * linear, attention=groups,
                   mtp_attention=full_layer, mtp_extra=2 * h + 2 * h * h + h + 2 * h + dense_mlp, mtp_tables=tables)


def _minimax_m2(values: Mapping[str, Any], model_type: str) -> Parts:
    """MiniMax-M2's layers (:func:`_moe_family`) and its MTP modules (vLLM's minimax_m2_mtp.py): each
    ``mtp_transformer_layers`` decoder layers of the model's kind, enorm and hnorm, eh_proj (2h → h)
    and a shared head of its own (a norm and V·h) beside the target's embedding."""
    parts = _moe_family(values, model_type)
    if parts.moe_layers == 0:  # null means unset: without experts it is a dense model, with no MTP modules
        return parts
    h, block = values["hidden_size"], values.get("mtp_transformer_layers", 1)
    return replace(parts, mtp_attention=parts.attention_params // values["num_hidden_layers"],
                   mtp_extra=2 * h + 2 * h * h + h + block * 2 * h, mtp_tables=1, mtp_block_layers=block)


def _mtp_count(values: Mapping[str, Any], model_type: str) -> int:
    """The MTP layers (or modules) a checkpoint carries: ``num_nextn_predict_layers`` (DeepSeek, GLM);
    Qwen3.5's ``mtp_num_hidden_layers``, and Qwen3-Next's one, which its config does not state (vLLM's
    qwen3_next_mtp.py and qwen3_5_mtp.py: getattr(..., 1)); MiniMax-M2's ``num_mtp_modules`` where
    ``use_mtp`` is true."""
    if model_type == "minimax_m2":
        return values.get("num_mtp_modules", 0) if values.get("use_mtp") else 0
    default = values.get("mtp_num_hidden_layers", 1) if model_type in HYBRID_TYPES else 0
    return values.get("num_nextn_predict_layers", default)


_READERS = {**dict.fromkeys(DENSE_TYPES, _dense_family), **dict.fromkeys(MOE_TYPES, _moe_family),
            **dict.fromkeys(DEEPSEEK_TYPES, _deepseek_family), **dict.fromkeys(HYBRID_TYPES, _hybrid),
            "minimax_m2": _minimax_m2, **DSV4_READERS, **KIMI_READERS}


def _language_model(config: Mapping[str, Any], notes: list[Notice]) -> tuple[Mapping[str, Any], Any]:
    """The language model's config of a config.json (its ``text_config`` for a multimodal wrapper,
    noted), and its quantization config (nested or top-level)."""
    text = config.get("text_config")
    if not isinstance(text, Mapping):
        return config, config.get("quantization_config")
    outer = config.get("model_type")
    text = dict(text)
    if not isinstance(text.get("model_type"), str):
        text["model_type"] = WRAPPERS.get(outer) if isinstance(outer, str) else None
    if "vision_config" in config:
        notes.append(Notice("hf_config.vision_left_out", model_type=describe(outer)))
    return text, text.get("quantization_config", config.get("quantization_config"))


def model_from_config(config: str | Path | Mapping[str, Any], name: str | None = None, *,
                      target: bool = False) -> Model:
    """Exact parameter counts, attention layers and weight formats from a Hugging Face ``config.json``.

    What is counted for each family, and how publishers' figures compare, is in the module's
    docstring. Active parameters per token count k of the E routed experts instead of all E.

    Parameters
    ----------
    config : str, Path or mapping
        Path to a config.json, or its parsed content.
    name : str, optional
        Display name; defaults to the file stem or the model_type.
    target : bool
        The config is for the model to serve: a draft head's is refused (an EAGLE-3 head is read
        as one otherwise, and drafts).

    Returns
    -------
    Model

    Raises
    ------
    InputError
        If the file is not UTF-8 JSON (or is nested too deeply to parse), the model_type is
        unsupported, or a field is missing, of the wrong JSON type, out of range or in contradiction
        with another. The message names the field and says what it may hold.
        ``hf_config.draft_head_as_target`` for a draft head's config as the ``target``, with what
        marks it (its architecture or a field only a head sets).

    References
    ----------
    Hugging Face transformers modeling files (Llama, Mistral, Qwen2/Qwen3(-MoE), Phi-3, Gemma 3,
    Mixtral, gpt-oss, Llama 4, DeepSeek-V3, GLM-4.5, GLM-5, Qwen3-Next, Qwen3.5, MiniMax-M2). Checked against published totals:
    Llama-3.1-8B 8,030,261,248; Qwen3-30B-A3B 30.5B / 3.3B active; DeepSeek-V3 671B / 37B; gpt-oss-120b
    116.83B / 5.13B.
    """
    file = name if isinstance(name, str) and name else "config.json"
    if isinstance(config, (str, Path)):
        path = Path(config)
        file = path.name
        config = _load_json(path.read_bytes(), path.name)
        name = name or path.stem
    try:
        return _read_model(config, name, target)
    except InputError as exc:
        exc.params.setdefault("file", file)  # a field's message names the file it is in
        raise


def _read_model(config: Any, name: str | None, target: bool) -> Model:
    """:func:`model_from_config` of a config's content."""
    if not isinstance(config, Mapping):
        raise InputError("hf_config.not_object")
    if target and (mark := _draft_head_mark(config)) is not None:
        raise InputError("hf_config.draft_head_as_target", mark=mark)
    notes: list[Notice] = []
    language, quantization_config = _language_model(config, notes)
    model_type = language.get("model_type")
    if not isinstance(model_type, str) or model_type not in SUPPORTED_MODEL_TYPES:
        raise InputError("hf_config.model_type", value=describe(model_type), supported=", ".join(SUPPORTED_MODEL_TYPES))
    # null means unset, so a family's default stands where the config gives null
    values = check_config(flatten({**FAMILY_DEFAULTS.get(model_type, {}),
                                     **{key: value for key, value in language.items() if value is not None}}))
    h = require(values, "hidden_size")
    layers = require(values, "num_hidden_layers")
    n_h = require(values, "num_attention_heads")
    vocab = require(values, "vocab_size")
    if "draft_vocab_size" in values:
        return _eagle3_head(name or model_type, values)
    if _names_eagle3(config):  # its own head's size unknown: read as a model, it would draft as one
        raise InputError("hf_config.eagle3_without_draft_vocab")
    parts = _READERS[model_type](values, model_type)
    tied = values.get("tie_word_embeddings", False)
    embeddings = vocab * h * (1 if tied else 2)
    mlp = (parts.norms_per_layer * layers + parts.dense_layers * parts.dense_mlp
           + parts.moe_layers * (parts.router + parts.shared) + parts.final_norm + parts.extra)
    params = {"experts": parts.moe_layers * parts.experts * parts.expert_params,
              "attention": parts.attention_params, "mlp": mlp, "embeddings": embeddings}
    active = {**params, "experts": parts.moe_layers * parts.experts_per_token * parts.expert_params}
    n_kv = values.get("num_key_value_heads", n_h)
    mtp_layers = _mtp_count(values, model_type) if parts.mtp_attention else 0
    formats, read = quantization.weight_formats(quantization_config, shared=parts.shared > 0,
                                                dense=parts.dense_layers > 0, experts=parts.moe_layers > 0,
                                                expert_dtype=values.get("expert_dtype"))
    if not read:  # the method named, or the config itself where it is not an object
        method = (quantization_config.get("quant_method") if isinstance(quantization_config, Mapping)
                  else quantization_config)
        notes.append(Notice("hf_config.unknown_quantization", method=describe(method)))
    # An MLA model's heads are d_nope + d_rope wide (its cache: one latent, Model.attention).
    mla = model_type in (*MLA_TYPES, *KIMI_LINEAR_TYPES)
    head_dim = values.get("qk_nope_head_dim", 0) + values["qk_rope_head_dim"] if mla else values.get("head_dim", h // n_h)
    return Model(name=name or model_type, model_type=model_type, layers=layers, hidden_size=h, num_heads=n_h,
                 kv_heads=n_kv, head_dim=head_dim, vocab_size=vocab, tied_embeddings=tied,
                 num_experts=parts.experts, experts_per_token=parts.experts_per_token, moe_layers=parts.moe_layers,
                 expert_params=parts.expert_params, params=params, active=active, attention=tuple(parts.attention),
                 weight_formats=formats, mtp_layers=mtp_layers,
                 mtp=_mtp_layer(name or model_type, model_type, parts, values, formats) if mtp_layers else None,
                 notes=tuple(notes), max_positions=values.get("max_position_embeddings"))


def _eagle3_head(name: str, values: Mapping[str, Any]) -> Model:
    """An EAGLE-3 draft head from its own config (SafeAILab's ``traineagle3`` and SpecForge's
    ``LlamaForCausalLMEagle3`` shapes; Li et al., arXiv:2503.01840): per layer, attention whose q, k
    and v read the 2h-wide [embedding; fused feature], its MLP and three norms; the fc that fuses three
    of the target's layers (3·h_target → h), a final norm, its own embedding (gathered) and a head
    over ``draft_vocab_size`` tokens, read whole each pass."""
    layers, h, n_h = values["num_hidden_layers"], values["hidden_size"], values["num_attention_heads"]
    n_kv = values.get("num_key_value_heads", n_h)
    d = values.get("head_dim", h // n_h)
    vocab, draft_vocab = values["vocab_size"], values["draft_vocab_size"]
    attention = 2 * h * n_h * d + 2 * (2 * h) * n_kv * d + n_h * d * h
    mlp = layers * (3 * h * require(values, "intermediate_size") + 3 * h) + h + 3 * values.get("target_hidden_size", h) * h
    params = {"experts": 0, "attention": layers * attention, "mlp": mlp, "embeddings": vocab * h + draft_vocab * h}
    return Model(name=name, model_type="eagle3", layers=layers, hidden_size=h, num_heads=n_h, kv_heads=n_kv, head_dim=d,
                 vocab_size=vocab, tied_embeddings=False, num_experts=0, experts_per_token=0, moe_layers=0,
                 expert_params=0, params=params, active=dict(params),
                 attention=(Attention("full", layers, 4.0 * n_h * d, 2.0 * n_kv * d, kv_heads=n_kv),),
                 reads_hidden_size=values.get("target_hidden_size", h))


def _mtp_layer(name: str, model_type: str, parts: Parts, values: Mapping[str, Any], formats: dict[str, str]) -> Model:
    """A multi-token-prediction layer as the draft model it is (DeepSeek-V3, §2.2; vLLM's
    DeepSeekMTP, Qwen3NextMTP and Qwen3_5MTP): one decoder layer of the target's kind with its own
    cache, the projection that joins the token's embedding to the hidden state, and its own copies of
    the embedding and the head (the checkpoint ships them: DeepSeek's 14B MTP module is this layer's
    11.6B and the two 0.93B tables), or the head alone where it takes the target's embedding
    (``parts.mtp_tables`` 1: Qwen3.5 without ``mtp_use_dedicated_embeddings``, whose head is the
    target's, and MiniMax-M2, whose module has a head of its own), read whole each pass, counted as an
    EAGLE head's is; DeepSeek-V4's attends as its own window-only kind
    (``parts.mtp_groups``). A MiniMax-M2 module holds ``parts.mtp_block_layers`` decoder layers. Engines run
    it γ times for γ drafted tokens."""
    h, vocab, block = values["hidden_size"], values["vocab_size"], parts.mtp_block_layers
    params = {"experts": block * parts.experts * parts.expert_params, "attention": block * parts.mtp_attention,
              "mlp": block * (parts.router + parts.shared) + parts.mtp_extra, "embeddings": parts.mtp_tables * vocab * h}
    groups = parts.mtp_groups if parts.mtp_groups is not None else [a for a in parts.attention if a.kind != "linear"]
    attention = tuple(replace(a, layers=block) for a in groups)
    return Model(name=f"MTP of {name}", model_type=model_type, layers=block, hidden_size=h,
                 num_heads=values["num_attention_heads"], kv_heads=values.get("num_key_value_heads", 1),
                 head_dim=1, vocab_size=vocab, tied_embeddings=parts.mtp_tables == 1, num_experts=parts.experts,
                 experts_per_token=parts.experts_per_token, moe_layers=block if parts.experts else 0,
                 expert_params=parts.expert_params,
                 params=params, active={**params, "experts": block * parts.experts_per_token * parts.expert_params},
                 attention=attention, weight_formats=formats)


def model_from_config_bytes(data: bytes, name: str, max_bytes: int, *, target: bool = False) -> Model:
    """:func:`model_from_config` for an upload or a paste: size-limited, UTF-8, one JSON object
    (``target``: the model to serve, as there).

    Raises
    ------
    InputError
        If ``data`` is empty, larger than ``max_bytes``, not UTF-8 text, not JSON or nested too
        deeply to parse, or if :func:`model_from_config` refuses it; the message names ``name`` or
        the field and says what was expected.
    """
    if not data.strip():
        raise InputError("hf_config.empty", name=name)
    if len(data) > max_bytes:
        raise InputError("hf_config.too_large", name=name, size=len(data), limit=max_bytes)
    return model_from_config(_load_json(data, name), name=name, target=target)


def load_models(data_dir: Path) -> dict[str, Model]:
    """Model presets from ``data_dir/models.csv``, each derived from its shipped config.json (the
    name with its translations)."""
    models = {}
    for row in read_rows(Path(data_dir) / "models.csv"):
        model = model_from_config(Path(data_dir) / "model_configs" / row["config"], name=PresetText.from_row(row, "name"))
        models[row["id"]] = replace(model, source=row["source"])
    return models


def load_draft_heads(data_dir: Path) -> dict[str, tuple[str, Model]]:
    """Draft-head presets from ``data_dir/draft_heads.csv``: each head's config read (an EAGLE-3 head of
    its own shape) with the id of the target model it was trained for."""
    return {row["id"]: (row["target"], replace(model_from_config(Path(data_dir) / "model_configs" / row["config"],
                                                                 name=PresetText.from_row(row, "name")),
                                               source=row["source"]))
            for row in read_rows(Path(data_dir) / "draft_heads.csv")}
