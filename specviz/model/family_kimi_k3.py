"""Kimi-K3's language model (``kimi_linear``, in a ``kimi_k3`` wrapper's ``text_config``) read into the parts
:func:`specviz.model.hf_config.model_from_config` makes a model of.

What each field means, from vLLM 0.33.0's ``vllm/models/kimi_k3/nvidia/model.py`` (KimiDecoderLayer,
KimiMoE, KimiMLP, KimiLinearModel), ``nvidia/mla.py`` (MultiHeadLatentAttention), ``nvidia/kda.py``
(KimiK3DeltaAttention), ``nvidia/mtp.py`` (KimiK3MTP), ``transformers_utils/configs/kimi_linear.py``
(KimiLinearConfig) and ``model_executor/layers/mamba/mamba_utils.py`` (the KDA state's shape and
format); aiconfigurator's ``sdk/models/kimi_k3.py`` (ai-dynamo/aiconfigurator @095f58a5) reads the same
layers (h: ``hidden_size``, L: ``num_hidden_layers``, V: ``vocab_size``):

* ``linear_attn_config.kda_layers`` numbers (from 1: ``is_kda_layer`` tests layer_idx + 1) the Kimi
  Delta Attention layers; every other layer is MLA, which ``full_attn_layers`` must list (vLLM reads
  only the first list: the two must number each layer once). A KDA layer of n = ``num_heads`` heads
  of d = ``head_dim`` (P = n·d) has in_proj_qkvgfab (h·(4P + d + n): q, k, v, the full-rank output
  gate ``use_full_rank_gate`` requires, the forget gate's first projection f_a and β), f_b (d·P),
  dt_bias (P), a depthwise convolution of K = ``short_conv_kernel_size`` over q, k and v (3P·K), A_log
  (n), the gated output norm (d) and o_proj (P·h). Its state per sequence is the recurrent n·d·d in
  FP32 (``kda_state_dtype``: ``mamba_ssm_cache_dtype`` "auto" is float32) and the convolution's window
  of (K − 1)·3P in the model's BF16 (``mamba_cache_dtype`` "auto"). Kimi-Linear's low-rank gate
  (``use_full_rank_gate`` false: KimiLinearGatedDeltaNetAttention) is refused, not counted.
* An MLA layer is DeepSeek's (:func:`specviz.model.config_parts.mla_attention`: q through ``q_lora_rank``, one
  latent of ``kv_lora_rank`` + ``qk_rope_head_dim`` cached per position for all heads) with
  ``mla_use_output_gate``'s sigmoid gate g_proj (h·n_h·d_v). ``mla_use_nope`` true applies no rotary
  embedding to the rope part, which is still projected and cached (head_size = kv_lora_rank +
  qk_rope_head_dim); vLLM asserts it, so false is refused.
* ``attn_res_block_size`` (Attention Residuals): each layer adds a norm and a projection to one
  score (h·1) before its attention and before its MLP, 4h, and the model one more pair before the
  final norm, 2h; the block size sets which earlier outputs are mixed (⌈L/block⌉ running sums, an
  elementwise cost not counted), no parameter.
* Layer i (from 0) is MoE when i ≥ ``first_k_dense_replace`` and i % ``moe_layer_freq`` is 0, else a
  dense MLP of 3·h·``intermediate_size``. A MoE layer has a router (h·E, FP32 logits) with its
  e_score_correction_bias (E), E = ``num_experts`` routed experts of which ``num_experts_per_token``
  a token, ``num_shared_experts`` shared ones as one MLP of 3·h·(i·n_s) (i: ``moe_intermediate_size``),
  and with ``routed_expert_hidden_size`` r (latent MoE) the routed experts work at width r: a
  down projection h·r, its norm r where ``latent_moe_use_norm``, the experts 3·r·i each, an up
  projection r·h. The activation (``hidden_act`` "situ" with ``activation_situ_beta`` and
  ``activation_situ_linear_beta``, or "silu", the only two KimiMLP builds) and the routing fields (``moe_router_activation_func``,
  ``moe_renormalize``, grouped top-k, ``routed_scaling_factor``) change no count.
* An MTP layer (``num_nextn_predict_layers``; vLLM's KimiK3MTP, the ``kimi_k3_mtp`` method of
  config/speculative.py) is a decoder layer numbered past L, so MLA and MoE, without attention
  residuals, with enorm, hnorm, eh_proj (2h·h), a shared head of its own (a norm and V·h) and its own
  embedding. Kimi-K3's config sets none: its drafts are the separate DSpark checkpoints.

Per model, with M MoE layers, F MLA and D = L − F KDA layers:

.. math::

    A_{KDA} = h(4P + d + n) + dP + P + 3PK + n + d + Ph,\\quad
    A_{MLA} = A_{DeepSeek} + h\\,n_h d_v,\\quad
    e = 3\\,r\\,i,\\quad
    S = 3\\,h\\,i\\,n_s + 2\\,h\\,r + r

and per sequence a KDA layer keeps n·d² FP32 + 3P·(K − 1) BF16 bytes' worth of state; an MLA layer
(kv_lora_rank + qk_rope_head_dim) elements per position, all of which a decode step reads.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from specviz.errors import InputError

from .config_fields import describe, require, routed_experts
from .config_parts import Parts, linear_attention, mla_attention, moe_layer_count

__all__ = ["KIMI_LINEAR_TYPES", "KIMI_READERS"]

# Kimi-K3's language model (Kimi Delta Attention and gated MLA).
KIMI_LINEAR_TYPES = ("kimi_linear",)

# The KDA state's formats (mamba_utils.py's kda_state_dtype at "auto"): the recurrent state FP32, the
# convolution's window the model's BF16, half an FP32 element each.
_FP32 = 4.0
_WINDOW_SHARE = 2.0 / _FP32


def _layer_numbers(values: Mapping[str, Any]) -> tuple[int, int]:
    """The KDA and MLA layer counts, refused where ``full_attn_layers`` does not list exactly the
    layers ``kda_layers`` leaves to MLA."""
    layers = values["num_hidden_layers"]
    kda = values.get("linear_attn_config.kda_layers", [])
    full = values.get("linear_attn_config.full_attn_layers")
    if full is not None and (len(kda) + len(full) != layers or not set(kda).isdisjoint(full)):
        raise InputError("hf_config.kimi.layers_partition", kda=len(kda), full=len(full), layers=layers)
    return len(kda), layers - len(kda)


def _kda_layer(values: Mapping[str, Any]) -> tuple[int, int, int, int]:
    """Parameters of one KDA layer (the module's A_KDA), with its heads, head width and kernel."""
    h = values["hidden_size"]
    if not values.get("linear_attn_config.use_full_rank_gate", False):
        raise InputError("hf_config.kimi.low_rank_gate")
    n, d = require(values, "linear_attn_config.num_heads"), require(values, "linear_attn_config.head_dim")
    kernel = require(values, "linear_attn_config.short_conv_kernel_size")
    p = n * d
    return h * (4 * p + d + n) + d * p + p + 3 * p * kernel + n + d + p * h, n, d, kernel


def _kimi_linear(values: Mapping[str, Any], model_type: str) -> Parts:
    layers, h = values["num_hidden_layers"], values["hidden_size"]
    if not values.get("mla_use_nope", False):
        raise InputError("hf_config.kimi.nope", value=describe(values.get("mla_use_nope", False)))
    kda_count, mla_count = _layer_numbers(values)
    # One group of the MLA layers (and the MTP layer's, of one), at least one layer for the latter.
    _, mla_layer, mla_groups = mla_attention({**values, "num_hidden_layers": max(mla_count, 1)}, sparse=False)
    if values.get("mla_use_output_gate"):
        mla_layer += h * values["num_attention_heads"] * values["v_head_dim"]
    groups = list(mla_groups) if mla_count else []
    attention = mla_count * mla_layer
    if kda_count:
        kda_layer, n, d, kernel = _kda_layer(values)
        attention += kda_count * kda_layer
        groups.append(linear_attention(kda_count, n, d, d, 3 * n * d, kernel, window_share=_WINDOW_SHARE,
                                        state_bytes=_FP32))
    res = 4 * h if values.get("attn_res_block_size") else 0
    experts = routed_experts(values)
    moe_layers = moe_layer_count(values) if experts else 0
    dense_mlp = 3 * h * require(values, "intermediate_size") if moe_layers < layers else 0
    parts = Parts(attention, groups, 2 * h + res, layers - moe_layers, dense_mlp, moe_layers, final_norm=h,
                   extra=res // 2, mtp_attention=mla_layer, mtp_extra=2 * h + 2 * h * h + h + 2 * h, mtp_groups=mla_groups)
    if not experts:
        return parts
    k, moe_i = require(values, "num_experts_per_token"), require(values, "moe_intermediate_size")
    r = values.get("routed_expert_hidden_size")
    latent = 2 * h * r + (r if values.get("latent_moe_use_norm") else 0) if r else 0
    return replace(parts, experts=experts, experts_per_token=k, expert_params=3 * (r or h) * moe_i,
                   router=h * experts + experts, shared=3 * h * moe_i * values.get("num_shared_experts", 0) + latent)


KIMI_READERS = dict.fromkeys(KIMI_LINEAR_TYPES, _kimi_linear)
