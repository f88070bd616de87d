"""The drafts a speculative step runs, as models: how each kind proposes its γ positions (a device
pass each, one pass for all, or on the host) and the model its pass runs, derived from the target
where the draft has no config of its own (an EAGLE or EAGLE-3 head, a P-EAGLE drafter, Medusa's
heads, a block drafter), for :mod:`specviz.model.step`, which times them. Imports the architecture
and nothing that times a pass.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike

from specviz.errors import InputError

from .architecture import Attention, Model

if TYPE_CHECKING:
    from .step import Draft

__all__ = ["DraftKind", "HOST_DRAFTS", "PARALLEL_DRAFTS", "ONE_PASS_DRAFTS", "HEAD_KINDS", "MODEL_KINDS", "PEAGLE_LAYERS",
           "drafting", "proposer_passes", "eagle_head", "medusa_head", "block_drafter", "drafter"]

DraftKind = Literal["model", "eagle", "eagle3", "self", "mtp", "peagle", "block", "medusa", "ngram", "suffix"]
# Drafts with no device pass; drafts that propose all γ tokens in one pass; drafts whose model may
# come from their own config (else derived from the target); drafts that must name one.
HOST_DRAFTS = ("ngram", "suffix")
PARALLEL_DRAFTS = ("peagle", "block")
# Drafts whose one pass proposes all γ positions, paying the proposer's work around a pass once: the
# parallel drafters, and Medusa's heads, run together on one hidden state.
ONE_PASS_DRAFTS = PARALLEL_DRAFTS + ("medusa",)
HEAD_KINDS = ("eagle", "eagle3", "peagle", "block")
MODEL_KINDS = ("model",)

# EAGLE-3's draft vocabulary (SafeAILab/EAGLE eagle/traineagle3/config.json: draft_vocab_size 32000)
# and the target features its head fuses (EAGLE: 2, the token's embedding and the top layer's
# feature; EAGLE-3: 3, low, middle and high layers).
_EAGLE3_VOCAB = 32_000
_EAGLE_FUSED = {"eagle": 2, "eagle3": 3}
# A DFlash drafter as SpecForge's configs shape it (configs/qwen3-8b-dflash.json, qwen3.6-27b-dflash.json,
# longcat-flash-dflash.json): 5 dense layers at the target's width, 32 query and 8 KV heads of 128, a
# gated MLP of 3h (their 2–3.4h), fusing the features of 5 target layers (dflash_config.target_layer_ids).
_BLOCK_LAYERS, _BLOCK_HEADS, _BLOCK_KV_HEADS, _BLOCK_HEAD_DIM, _BLOCK_MLP_WIDTH = 5, 32, 8, 128, 3
PEAGLE_LAYERS = 4
"""Decoder layers of a P-EAGLE drafter derived from its target: the published ones have four ("The
P-EAGLE drafter is a lightweight 4-layer model", vLLM blog, 2026-03-13; "we trained a 4-layer P-EAGLE",
the model cards of amazon/gpt-oss-20b-p-eagle and amazon/gpt-oss-120b-p-eagle)."""


def eagle_head(target: Model, kind: Literal["eagle", "eagle3"] = "eagle", layers: int = 1) -> Model:
    """An EAGLE draft head for ``target``: ``layers`` decoder layers of the target's shape (one for
    EAGLE and EAGLE-3, :data:`PEAGLE_LAYERS` for P-EAGLE), the layer that fuses its input features
    (``fused``·h·h), and an output head read whole each pass (the target's own LM head for EAGLE, a
    32,000-token one for EAGLE-3).

    .. math:: P = n\\,\\frac{P_{active} - P_{embeddings} - h}{L} + f h^2 + V_d h

    with n = ``layers`` and L the target's layers. The decoder layers' share comes from the target's
    active parameters, so an MoE target's head is counted with its active experts. Its attention is
    full attention of the target's first softmax-attention kind (a hybrid's full layers, an MLA
    target's latent). The input embedding is gathered, not read whole, and is left out.

    References
    ----------
    Y. Li et al., "EAGLE: Speculative Sampling Requires Rethinking Feature Uncertainty", ICML 2024
    (arXiv:2401.15077); "EAGLE-3", arXiv:2503.01840, 2025.
    """
    h = target.hidden_size
    outputs = 1 if target.tied_embeddings else 2
    layer = (target.params_active - outputs * target.embedding_params - h) / target.layers
    vocab = min(_EAGLE3_VOCAB, target.vocab_size) if kind == "eagle3" else target.vocab_size
    body, head = int(round(layers * layer + _EAGLE_FUSED[kind] * h * h)), vocab * h
    params = {"experts": 0, "attention": 0, "mlp": body, "embeddings": head}
    softmax = next(a for a in target.attention if a.kind not in ("linear", "indexer"))
    attention = Attention("full" if softmax.kind != "latent" else "latent", layers, softmax.flops_per_position,
                          softmax.cached, kv_heads=softmax.kv_heads)
    name = f"{kind.upper()} head of {target.name}" if layers == 1 else \
        f"{kind.upper()} head of {layers} layers of {target.name}"
    return replace(target, name=name, layers=layers, vocab_size=vocab,
                   tied_embeddings=True, num_experts=0, experts_per_token=0, moe_layers=0, expert_params=0,
                   params=params, active=dict(params), attention=(attention,),
                   weight_formats=dict.fromkeys(params, "bf16"), mtp_layers=0, mtp=None, notes=())


def medusa_head(target: Model) -> Model:
    """One Medusa head of ``target``: a residual block (h·h and its bias) and its own head over the
    vocabulary (V·h), with no attention (Medusa-1, Cai et al. 2024).

    .. math:: P = h^2 + h + V h
    """
    h = target.hidden_size
    params = {"experts": 0, "attention": 0, "mlp": h * h + h, "embeddings": target.vocab_size * h}
    return replace(target, name=f"Medusa head of {target.name}", layers=1, tied_embeddings=True, num_experts=0,
                   experts_per_token=0, moe_layers=0, expert_params=0, params=params, active=dict(params),
                   attention=(), weight_formats=dict.fromkeys(params, "bf16"), mtp_layers=0, mtp=None, notes=())


def block_drafter(target: Model) -> Model:
    """A block drafter of the DFlash kind for ``target``: :data:`_BLOCK_LAYERS` dense decoder layers
    at the target's width h that fuse the features of as many target layers, and the target's LM
    head, read whole each pass; one pass proposes the block's γ tokens.

    .. math:: P = L\\,h\\,(2 n_h + 2 n_{kv})\\,d + 3 L\\,h\\,(3h) + L h^2 + V h

    with L = 5, n_h = 32, n_kv = 8, d = 128 (norms left out). Qwen3-8B's (h 4096, its MLP 12288 = 3h):
    209.7M in attention, 755.0M in the MLPs and 83.9M in the fusing layer, 1.05B besides the head.

    References
    ----------
    SpecForge's DFlash configs (sgl-project/SpecForge ``configs/*-dflash.json``, 2026); DFlash's
    block-diffusion drafting as vLLM (``"method": "dflash"``, 0.20.0) and SGLang (``DFLASH``) run it.
    """
    h, d = target.hidden_size, _BLOCK_HEAD_DIM
    params = {"experts": 0, "attention": _BLOCK_LAYERS * h * (2 * _BLOCK_HEADS + 2 * _BLOCK_KV_HEADS) * d,
              "mlp": _BLOCK_LAYERS * 3 * h * _BLOCK_MLP_WIDTH * h + _BLOCK_LAYERS * h * h,
              "embeddings": target.vocab_size * h}
    attention = Attention("full", _BLOCK_LAYERS, 4.0 * _BLOCK_HEADS * d, 2.0 * _BLOCK_KV_HEADS * d,
                          kv_heads=_BLOCK_KV_HEADS)
    return replace(target, name=f"Block drafter of {target.name}", layers=_BLOCK_LAYERS, tied_embeddings=True,
                   num_experts=0, experts_per_token=0, moe_layers=0, expert_params=0, num_heads=_BLOCK_HEADS,
                   kv_heads=_BLOCK_KV_HEADS, head_dim=d, params=params, active=dict(params), attention=(attention,),
                   weight_formats=dict.fromkeys(params, "bf16"), mtp_layers=0, mtp=None, notes=())


def drafting(kind: str) -> Literal["chain", "one_pass", "host"]:
    """How a draft of ``kind`` proposes its γ positions: a device pass each (``chain``), one pass for
    all (``one_pass``: :data:`ONE_PASS_DRAFTS`), or on the host (``host``: :data:`HOST_DRAFTS`)."""
    return "host" if kind in HOST_DRAFTS else "one_pass" if kind in ONE_PASS_DRAFTS else "chain"


def proposer_passes(kind: str, gamma: ArrayLike) -> np.ndarray:
    """The draft passes a speculative step of γ positions runs, each paying the proposer's work around
    it (:attr:`specviz.model.step.Costs.draft_pass_us`): γ for a chain, one for a one-pass draft, none
    on the host (:func:`drafting`)."""
    g = np.asarray(gamma, dtype=float)
    return {"chain": g, "one_pass": np.ones_like(g), "host": np.zeros_like(g)}[drafting(kind)]


def drafter(target: Model, draft: Draft) -> Model | None:
    """The model a draft pass runs (None for a draft on the host).

    Raises
    ------
    InputError
        ``step.no_mtp`` for an MTP draft on a target whose config has no MTP layers.
    """
    if draft.kind in HOST_DRAFTS:
        return None
    if draft.model is not None:
        return draft.model
    if draft.kind == "self":
        return target
    if draft.kind == "mtp":
        if target.mtp is None:
            raise InputError("step.no_mtp", target=str(target.name), model_type=target.model_type)
        return target.mtp
    if draft.kind == "medusa":
        return medusa_head(target)
    if draft.kind == "block":
        return block_drafter(target)
    if draft.kind == "peagle":
        return eagle_head(target, "eagle3", PEAGLE_LAYERS)
    return eagle_head(target, "eagle" if draft.kind == "eagle" else "eagle3")
