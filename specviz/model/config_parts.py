"""What a family's reader of a ``config.json`` counts, and the parts several families share: an MLA
layer (DeepSeek-V3's, reused by Kimi-K3), DeepSeek's rule of which layers are MoE, and a delta-rule
linear-attention layer (Qwen3-Next's Gated DeltaNet, Kimi-K3's Kimi Delta Attention).

Read by :mod:`specviz.model.hf_config` and the family modules it registers
(:mod:`specviz.model.family_deepseek_v4`, :mod:`specviz.model.family_kimi_k3`), which import these
from here rather than from each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from specviz.errors import InputError

from .architecture import Attention
from .config_fields import require

__all__ = ["Parts", "mla_attention", "moe_layer_count", "linear_attention"]


@dataclass
class Parts:
    """What a family's reader counts, before it becomes a Model."""

    attention_params: int
    attention: list[Attention]
    norms_per_layer: int
    dense_layers: int
    dense_mlp: int
    moe_layers: int
    experts: int = 0
    experts_per_token: int = 0
    expert_params: int = 0
    router: int = 0  # per MoE layer, with its bias
    shared: int = 0  # per MoE layer: shared experts and their gate (Kimi-K3's latent projections)
    final_norm: int = 0
    mtp_attention: int = 0  # the attention of an MTP layer
    mtp_extra: int = 0  # an MTP layer's projection of [embedding; hidden] and its norms
    mtp_tables: int = 2  # the vocabulary tables an MTP layer reads: its own embedding and head, or the head alone
    mtp_block_layers: int = 1  # decoder layers in one MTP module (MiniMax-M2's mtp_transformer_layers)
    extra: int = 0  # counted once beside the layers (DeepSeek-V4's hyper-connection head, hash tables)
    mtp_groups: list[Attention] | None = None  # an MTP layer's attention where it is not the layers' kind


def mla_attention(values: Mapping[str, Any], sparse: bool) -> tuple[int, int, list[Attention]]:
    """Parameters of all MLA layers and of one with its indexer (an MTP layer's), and the attention
    groups (all layers); with DeepSeek's ``sparse`` attention (DeepSeek-V3.2, GLM-5), its indexer's
    too. GLM-5.2's layers whose ``indexer_types`` is "shared" reuse the last full layer's choice
    (transformers' modular_glm_moe_dsa.py): no indexer, no index keys cached."""
    layers, h, n_h = values["num_hidden_layers"], values["hidden_size"], values["num_attention_heads"]
    rank, rope = require(values, "kv_lora_rank"), require(values, "qk_rope_head_dim")
    nope, v = values.get("qk_nope_head_dim", 0), require(values, "v_head_dim")
    if values.get("qk_head_dim", nope + rope) != nope + rope:
        raise InputError("hf_config.sum_of", field="qk_head_dim", value=values["qk_head_dim"], first="qk_nope_head_dim",
                         second="qk_rope_head_dim", expected=nope + rope)
    q_rank = values.get("q_lora_rank")
    query = h * q_rank + q_rank + q_rank * n_h * (nope + rope) if q_rank else h * n_h * (nope + rope)
    layer = query + h * (rank + rope) + rank + rank * n_h * (nope + v) + n_h * v * h
    if values.get("attention_bias"):
        layer += (q_rank or 0) + rank + rope + h
    score = 2.0 * n_h * (rank + rope) + 2.0 * n_h * rank
    if not sparse:
        return layers * layer, layer, [Attention("latent", layers, score, rank + rope)]
    heads, dim = require(values, "index_n_heads"), require(values, "index_head_dim")
    indexer = (q_rank or h) * heads * dim + h * dim + 2 * dim + h * heads  # wq_b, wk, k_norm, weights_proj
    indexed = values["indexer_types"].count("full") if values.get("indexer_types") else layers
    groups = [Attention("sparse", layers, score, rank + rope, require(values, "index_topk"), keeps_all=True)]
    if indexed:
        groups.append(Attention("indexer", indexed, 2.0 * heads * dim, dim))
    return layers * layer + indexed * indexer, layer + indexer, groups


def moe_layer_count(values: Mapping[str, Any]) -> int:
    """MoE layers where layer i is MoE when i >= ``first_k_dense_replace`` and i % ``moe_layer_freq`` is 0
    (DeepSeek's modeling file, and vLLM's kimi_k3/nvidia/model.py), counted arithmetically so that the
    time does not grow with the layer count."""
    layers, first_dense, freq = values["num_hidden_layers"], values.get("first_k_dense_replace", 0), values.get("moe_layer_freq", 1)
    return (layers - 1) // freq - (first_dense - 1) // freq if first_dense else (layers - 1) // freq + 1


def linear_attention(layers: int, heads: int, d_k: int, d_v: int, conv: int, kernel: int, *,
                      window_share: float = 1.0, state_bytes: float = 0.0) -> Attention:
    """``layers`` delta-rule linear-attention layers of ``heads`` value heads (Gated DeltaNet, Kimi Delta
    Attention): a state of heads·d_k·d_v per sequence and layer, and the convolution's window of
    (kernel − 1)·``conv`` channels, counted in the state's elements at ``window_share`` of one (where the
    window has a narrower format than the state, ``state_bytes`` wide). The recurrence per token and
    head: kᵀS, the rank-one update and Sq, each d_k·d_v multiply-adds (Yang et al., "Gated Delta
    Networks", arXiv:2412.06464), and the convolution.

    .. math:: s = n\\,d_k d_v + w\\,(K - 1)\\,c,\\quad φ = 6\\,n\\,d_k d_v + 2\\,c\\,K
    """
    return Attention("linear", layers, 0.0, 0.0, state=heads * d_k * d_v + window_share * (kernel - 1) * conv,
                     kv_heads=heads, flops_per_token=6.0 * heads * d_k * d_v + 2.0 * conv * kernel,
                     state_bytes=state_bytes)
