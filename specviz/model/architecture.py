"""What a model is made of, as a forward pass sees it: parameters per component, the kinds of
attention layer it has, and what each keeps per position or per sequence.

A model is read from its config.json by :mod:`specviz.model.hf_config`; this module holds the result
and the sums over it that a pass and the memory need.

Components (:data:`COMPONENTS`), each with its own weight format (:mod:`specviz.model.dtypes`):

* ``experts``: the routed experts of MoE layers (a pass reads only those some token is routed to);
* ``attention``: attention projections (q, k, v, o; MLA's low-rank projections; linear attention's
  projections, convolution and gates; attention sinks and q/k norms);
* ``mlp``: dense MLPs, shared experts, routers and the layers' norms;
* ``embeddings``: the input table (a pass gathers T rows of it) and the output head (read whole).

Attention layers come in groups of one kind (:class:`Attention`). A full-attention layer reads the
whole cache; a sliding-window or chunked layer reads at most ``window`` positions; an MLA layer caches
one latent per position for all heads; a compressed layer (DeepSeek-V4's) caches one entry per
``ratio`` positions, which ``cached`` spreads over them; a linear-attention layer keeps a state per
sequence whose size does not grow with context.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from specviz.errors import Notice

__all__ = ["COMPONENTS", "MINOR_SHARE", "Attention", "Model"]

COMPONENTS = ("experts", "attention", "mlp", "embeddings")
# Below this share of the weights a token reads, a component is the routers and norms alone (0.06 % of
# gpt-oss-20b's, 0.4 % of Qwen3-30B-A3B's), where a dense MLP or shared experts hold 4 % or more.
MINOR_SHARE = 0.01
AttentionKind = Literal["full", "sliding", "chunked", "latent", "sparse", "compressed", "indexer", "linear"]


@dataclass(frozen=True)
class Attention:
    """``layers`` attention layers of one kind.

    ``flops_per_position``: FLOPs per layer for one query token and one position it reads (scores
    and the weighted sum: 2·n_h·(d_qk + d_v)); ``cached``: elements cached per position and layer
    (2·n_kv·d for K and V; kv_lora_rank + qk_rope_head_dim for MLA's latent); ``window``: the most
    positions a layer reads (inf: all); ``keeps_all``: whether the cache keeps every position whatever
    the window (a sparse layer chooses the ones it reads among all), else it keeps ``window``;
    ``state``: elements kept per sequence and layer whatever the context (linear attention);
    ``flops_per_token``: FLOPs per layer and token that do not depend on the context (linear
    attention's recurrence); ``kv_heads``: the heads the cache and state split into, so that tensor
    parallelism over more devices than that replicates them (1 for MLA's latent and an indexer's
    keys); ``state_bytes``: bytes of a state element where the state has a format of its own
    (DeepSeek-V4's compressors keep FP32: 4), 0 for the model's; ``state_share``: the share of the
    state a new position reads and writes, 1 for a recurrence (it rewrites all of it, and an engine
    keeps a copy for each position a verify pass may roll back to), below 1 for a ring of positions
    kept once (a compressor writes one row of its ring a position and reads the ring once a
    compression)."""

    kind: AttentionKind
    layers: int
    flops_per_position: float
    cached: float
    window: float = math.inf
    keeps_all: bool = False
    state: float = 0.0
    flops_per_token: float = 0.0
    kv_heads: int = 1
    state_bytes: float = 0.0
    state_share: float = 1.0


@dataclass(frozen=True)
class Model:
    """Shape and exact parameter counts of a decoder-only language model, from its config.json.

    ``params`` holds each component's parameters (all experts), ``active`` those one token uses
    (k of E routed experts); ``params_total`` and ``params_active`` are their sums, every weight of
    the language model counted, input embedding and output head included (publishers' conventions
    differ: :func:`specviz.model.hf_config.model_from_config` says whose is whose). ``num_heads``,
    ``kv_heads`` and ``head_dim`` describe the full-attention layers (an MLA model's query heads and
    its latent, a hybrid's full-attention layers). ``weight_formats`` is the format of each
    component as the checkpoint ships it (its ``quantization_config``); ``mtp_layers`` and
    ``mtp`` hold the multi-token-prediction layers apart: a draft model (one layer, with its own
    copies of the embedding and head), not part of the target's pass. ``notes`` are ``hf_config.*`` message keys that say what was left out or assumed.
    ``max_positions`` is the config's ``max_position_embeddings``, the longest request an engine
    serves without scaling the model's RoPE (None where the config does not say).
    ``reads_hidden_size`` is, for a draft head, the target's hidden size it reads (an EAGLE-3 head's
    fc fuses three of the target's layers, 3·this wide: SpecForge's ``target_hidden_size``, else its
    own); None for any other model.
    """

    name: str
    model_type: str
    layers: int
    hidden_size: int
    num_heads: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    tied_embeddings: bool
    num_experts: int
    experts_per_token: int
    moe_layers: int
    expert_params: int
    params: dict[str, int]
    active: dict[str, int]
    attention: tuple[Attention, ...]
    weight_formats: dict[str, str] = field(default_factory=lambda: dict.fromkeys(COMPONENTS, "bf16"))
    mtp_layers: int = 0
    mtp: Model | None = field(default=None, compare=False, repr=False)
    notes: tuple[Notice, ...] = field(default=(), compare=False)
    source: str = ""
    max_positions: int | None = field(default=None, compare=False)
    reads_hidden_size: int | None = field(default=None, compare=False)

    @property
    def params_total(self) -> int:
        """Every weight of the language model (all experts; MTP layers and vision towers apart)."""
        return sum(self.params.values())

    @property
    def params_active(self) -> int:
        """The weights one token uses: k of E routed experts, everything else whole."""
        return sum(self.active.values())

    @property
    def main_components(self) -> tuple[str, ...]:
        """The components holding at least :data:`MINOR_SHARE` of the weights a token reads: no
        experts in a dense model, no ``mlp`` in a MoE whose only dense weights are routers and norms."""
        return tuple(c for c in COMPONENTS if self.active[c] >= MINOR_SHARE * self.params_active)

    @property
    def mtp_params(self) -> int:
        """Parameters of the MTP layers, their tables included (0 without)."""
        return self.mtp_layers * self.mtp.params_total if self.mtp else 0

    @property
    def embedding_params(self) -> int:
        """Parameters of the input embedding table (vocab × hidden)."""
        return self.vocab_size * self.hidden_size

    def kv_bytes_per_token(self, kv_dtype_bytes: float = 2.0, *, past_windows: bool = False) -> float:
        """Cache bytes one more position adds while it is within every layer's window:
        Σ layers · cached elements · bytes (2·layers·n_kv·d·bytes for plain attention); with
        ``past_windows``, once it is past every window, from the layers that keep every position
        only (:meth:`cache_bytes`'s slope at long contexts: gpt-oss-120b's 73,728 bytes halve to
        36,864 past its 128-position windows)."""
        return sum(a.layers * a.cached for a in self.attention
                   if not past_windows or a.keeps_all or math.isinf(a.window)) * kv_dtype_bytes

    def cache_bytes(self, context: ArrayLike, kv_dtype_bytes: float = 2.0, state_bytes: float = 2.0, *,
                    state_copies: ArrayLike = 1.0, tensor_split: int = 1) -> np.ndarray:
        """Bytes one sequence keeps at ``context`` positions: each layer's cache up to its window,
        and the state a layer keeps per sequence, ``state_copies`` (n_s) times where it is rewritten
        whole (a recurrence's, one for each position a verify pass may roll back to), once where it
        is a ring of positions; over ``tensor_split`` devices, a layer with fewer KV heads is copied
        r_g = max(1, tensor_split / kv_heads) times (the sum over the devices).

        .. math:: \\sum_g r_g\\, \\text{layers}_g (c_g \\min(L, W_g)\\, b_{kv} + s_g\\, n_{s,g}\\, b_{state,g})

        with W_g infinite for a sparse layer, which keeps every position, and b_state,g the group's own
        state format where it has one (``state_bytes``).
        """
        ctx, copies = np.asarray(context, dtype=float), np.asarray(state_copies, dtype=float)
        return sum(max(1.0, tensor_split / a.kv_heads) * a.layers
                   * (a.cached * np.minimum(ctx, math.inf if a.keeps_all else a.window) * kv_dtype_bytes
                      + a.state * (copies if a.state_share == 1.0 else 1.0) * (a.state_bytes or state_bytes))
                   for a in self.attention) + 0.0 * ctx

    def row(self) -> dict[str, str | int | float | bool]:
        """The model as one flat row of a table: its shape, counts per component, attention groups
        (kind, layers and window) and weight formats as shipped."""
        groups = ", ".join(f"{a.kind}×{a.layers}" + (f" (window {a.window:g})" if math.isfinite(a.window) else "")
                           for a in self.attention)
        return {"name": str(self.name), "model_type": self.model_type, "layers": self.layers, "hidden_size": self.hidden_size,
                "num_heads": self.num_heads, "kv_heads": self.kv_heads, "head_dim": self.head_dim,
                "vocab_size": self.vocab_size, "tied_embeddings": self.tied_embeddings, "num_experts": self.num_experts,
                "experts_per_token": self.experts_per_token, "moe_layers": self.moe_layers,
                "params_total": self.params_total, "params_active": self.params_active,
                **{f"params_{component}": self.params[component] for component in COMPONENTS},
                "attention": groups, "weight_formats": ", ".join(f"{c} {f}" for c, f in self.weight_formats.items()),
                "mtp_layers": self.mtp_layers, "mtp_params": self.mtp_params}

