"""DeepSeek-V4's ``config.json`` (``deepseek_v4``; SGLang's FP8 copies name it ``deepseek_ref``) read into
the parts :func:`specviz.model.hf_config.model_from_config` makes a model of.

What each field means, from DeepSeek's reference ``inference/model.py`` (deepseek-ai/DeepSeek-V4-Flash
@60d8d707, the model's repository) and vLLM's ``model_executor/models/deepseek_v4.py``,
``deepseek_v4_mtp.py``, ``layers/deepseek_v4_attention.py`` and ``layers/deepseek_compressor.py``
(h: ``hidden_size``, n_h: ``num_attention_heads``, d: ``head_dim``, q: ``q_lora_rank``, o:
``o_lora_rank``, g: ``o_groups``, n_i and d_i: ``index_n_heads`` and ``index_head_dim``):

* Attention is one KV head (``num_key_value_heads`` 1) of d = 512 shared by keys and values, its last
  ``qk_rope_head_dim`` rotated: wq_a (h·q), its norm, wq_b (q·n_h·d), wkv (h·d) and its norm, one
  sink per head, and the grouped low-rank output: wo_a maps each of the g groups of heads to o
  (n_h·d·o in all) and wo_b (g·o·h).
* ``compress_ratios`` gives each layer r, then each MTP layer's: 0 keeps a sliding window of the last
  ``sliding_window`` positions only; r > 0 keeps the window and one compressed entry of d per r
  positions, pooled by a compressor (wkv and wgate, h·c·d each, a position bias ``ape`` of r·c·d and a
  norm of d; c = 2 for r = 4, whose windows overlap, else 1). ``compress_rope_theta`` is those layers'
  RoPE base, which changes no count.
* At r = 4 (CSA) an indexer picks ``index_topk`` of the compressed entries for each query: wq_b
  (q·n_i·d_i), weights_proj (h·n_i) and a compressor of its own over d_i, whose entries it caches
  (one per 4 positions) and scores all of; at r = 128 (HCA) every compressed entry is read.
* Hyper-connections keep ``hc_mult`` (m) copies of the residual stream: per layer, for attention and
  for the MoE, a mixing matrix of (2 + m)·m × m·h, its bias of (2 + m)·m and 3 scales
  (``hc_sinkhorn_iters`` is the Sinkhorn iterations that mix them, no parameters); the head mixes
  the copies with m × m·h, m and 1 more.
* Every layer is MoE: ``n_routed_experts`` of 3·h·i (i: ``moe_intermediate_size``, ``num_experts_per_tok``
  of them a token), ``n_shared_experts`` alike, a router of E·h with a correction bias of E, except in
  the first ``num_hash_layers``, which route a token by its id through a table of
  vocab·``num_experts_per_tok`` (int32, counted as the parameter the checkpoint ships).
* ``expert_dtype`` ``fp4``: the experts are MXFP4, the rest FP8 blocks
  (:func:`specviz.model.quantization.weight_formats`).
* The MTP layers (``num_nextn_predict_layers``) are a layer of ratio ``compress_ratios[L]`` with e_proj
  and h_proj (h·h each), three norms and a hyper-connection head; they use the model's embedding and
  head (the reference assigns them; the instruct checkpoints ship no copies), which the draft model
  still carries, as it reads them every pass.

Per layer of ratio r, with c = 1 + [r = 4]:

.. math::

    A(r) = n_h + hq + q + q n_h d + hd + d + n_h d o + g o h
           + [r > 0]\\,C(r, d) + [r = 4]\\,(q n_i d_i + h n_i + C(4, d_i)),\\quad
    C(r, d') = r c d' + 2 h c d' + d'

The cache of a layer keeps d·min(L, W) for the window and d·⌊L/r⌋ compressed (d_i·⌊L/4⌋ more for the
indexer), and a compressor's ring of 2·c²·r·d FP32 (running values and scores of its c·r last
positions; 2·c²·r·d_i more for the indexer's), of which a position writes one row and reads the whole
once a compression, every r positions: a share (1 + c)/(c·r) a position; a decode token reads min(L, W) + min(L/4, ``index_topk``) entries at r = 4, min(L, W) +
L/128 at r = 128, each for 4·n_h·d FLOPs (scores and the weighted sum over d), and the indexer's L/4
keys for 2·n_i·d_i each.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from specviz.errors import InputError

from .architecture import Attention
from .config_fields import CONFIG_LIMITS, describe, require, window_of
from .config_parts import Parts

__all__ = ["DSV4_TYPES", "DSV4_READERS"]

# DeepSeek-V4 (deepseek_ref: the same fields, SGLang's FP8 copies).
DSV4_TYPES = ("deepseek_v4", "deepseek_ref")

# The window's and each compressed entry's FLOPs per entry read, over d for the scores and the sum.
_SCORE = 4.0
_FP32 = 4.0


def _compressor(h: int, ratio: int, width: int) -> int:
    """A compressor's parameters: wkv and wgate (h·c·width each), ``ape`` (ratio·c·width), its norm."""
    c = 2 if ratio == 4 else 1
    return 2 * h * c * width + ratio * c * width + width


def _dsv4_attention(values: Mapping[str, Any], ratio: int) -> int:
    """Parameters of one attention layer of compression ``ratio`` (the module's A(r))."""
    h, n_h, d = values["hidden_size"], values["num_attention_heads"], values["head_dim"]
    q, o, g = require(values, "q_lora_rank"), require(values, "o_lora_rank"), require(values, "o_groups")
    if n_h % g:
        raise InputError("hf_config.heads_multiple", heads=n_h, kv_heads=g)
    layer = n_h + h * q + q + q * n_h * d + h * d + d + n_h * d * o + g * o * h
    if ratio:
        layer += _compressor(h, ratio, d)
    if ratio == 4:
        heads, width = require(values, "index_n_heads"), require(values, "index_head_dim")
        layer += q * heads * width + h * heads + _compressor(h, 4, width)
    return layer


def _dsv4_groups(values: Mapping[str, Any], counts: Mapping[int, int]) -> list[Attention]:
    """The attention groups of ``counts`` layers of each ratio: every layer's window, the compressed
    entries of each ratio (spread over the positions they pool) with their compressors' rings, and the
    indexers."""
    n_h, d = values["num_attention_heads"], values["head_dim"]
    window = window_of(values, "sliding_window")
    groups = [Attention("sliding", sum(counts.values()), _SCORE * n_h * d, d, window)]
    if counts.get(4):
        heads, width = values["index_n_heads"], values["index_head_dim"]
        # CSA reads index_topk entries of 4 positions each of the cache it keeps whole.
        groups.append(Attention("sparse", counts[4], _SCORE * n_h * d / 4, d / 4, 4 * require(values, "index_topk"),
                                keeps_all=True, state=2 * 4 * 4 * (d + width), state_bytes=_FP32,
                                state_share=3 / 8))
        groups.append(Attention("indexer", counts[4], 2.0 * heads * width / 4, width / 4))
    if counts.get(128):
        groups.append(Attention("compressed", counts[128], _SCORE * n_h * d / 128, d / 128,
                                state=2 * 128 * d, state_bytes=_FP32, state_share=2 / 128))
    return groups


def _deepseek_v4(values: Mapping[str, Any], model_type: str) -> Parts:
    layers, h, vocab = values["num_hidden_layers"], values["hidden_size"], values["vocab_size"]
    require(values, "head_dim")
    mtp = values.get("num_nextn_predict_layers", 0)
    ratios = np.asarray(require(values, "compress_ratios"))
    counts = {r: int(np.count_nonzero(ratios[:layers] == r)) for r in (0, 4, 128)}
    experts = require(values, "n_routed_experts")
    if not experts:
        raise InputError("hf_config.count", field="n_routed_experts", low=1,
                         bound=f"{CONFIG_LIMITS['n_routed_experts'].high:,}", value=describe(experts))
    k, moe_i = require(values, "num_experts_per_tok"), require(values, "moe_intermediate_size")
    m = require(values, "hc_mult")
    mix = (2 + m) * m
    # Two norms and the hyper-connections of the attention and of the MoE.
    per_layer = 2 * h + 2 * (mix * m * h + mix + 3)
    hc_head = m * m * h + m + 1
    hashed = values.get("num_hash_layers", 0)
    expert = 3 * h * moe_i
    mtp_ratio = int(ratios[layers]) if mtp else 0
    return Parts(sum(count * _dsv4_attention(values, r) for r, count in counts.items() if count),
                  _dsv4_groups(values, counts), per_layer, 0, 0, layers, experts, k, expert,
                  router=h * experts + experts, shared=values.get("n_shared_experts", 0) * expert,
                  final_norm=h, extra=hc_head + hashed * (vocab * k - experts),
                  mtp_attention=_dsv4_attention(values, mtp_ratio),
                  mtp_extra=per_layer + 2 * h * h + 3 * h + hc_head,
                  mtp_groups=_dsv4_groups(values, {mtp_ratio: 1}))


DSV4_READERS = dict.fromkeys(DSV4_TYPES, _deepseek_v4)
