"""What one GPU's memory holds while it serves, and the largest batch that fits, with and without a draft.

Per GPU of a server of ``tp·dp`` GPUs (tensor parallelism within each of ``dp`` data-parallel
attention groups), in GB (10⁹ bytes):

.. math::

    W_t + W_d + K_t(B) + K_d(B) + \\max(A, R) \\le f\\,M

* W: the weights of the target and the draft at their formats, the routed experts split over all
  ``tp·dp`` GPUs and every other weight over its group's ``tp``
  (:func:`specviz.model.roofline.weights_gb`);
* K(B): the caches of the B sequences, each holding its L positions and a verify pass's γ + 1, a
  group's B/dp sequences over its ``tp`` GPUs, layers with fewer KV heads than ``tp`` copied
  (:func:`specviz.model.roofline.cache_gb`); the draft keeps its own cache (a draft model, an
  EAGLE head's one layer, the MTP layer), a draft on the host none;
* A: the activations' peak, which vLLM measures with a forward pass over ``max_num_batched_tokens``
  tokens and a sampler pass over ``max_num_seqs`` rows of logits (``gpu_worker.py``'s
  ``determine_available_memory``): T (h + 3 I / tp) · 2 bytes (the hidden state, and an MLP's
  gate, up and activated outputs), with I the MLP width a token runs (:func:`_mlp_width`) and T, S
  vLLM's defaults for the GPU (``arg_utils.py``, 0.33.0: T 16,384 and S 1,024 from
  160 GiB, 8,192 and 1,024 from 70 GiB but an A100, else 2,048 and 256), plus S · V · 4 bytes of
  float32 logits;
* R: what an engine keeps aside for activations and CUDA graphs instead, so the larger of A and R
  is held. SGLang (``arg_groups/memory_hook.py``, 0.5.23): 512 MiB + 1.5 MiB per token of its
  chunked prefill (2,048 below 20 GiB, 4,096 below 60, 8,192 below 160, 16,384 above) + tp/8 GiB,
  at least 10 GiB above 60 GiB (its CUDA graphs' share, which depends on the batch sizes it
  captures, is left out);
* f M: the share of the GPU's memory the engine takes (vLLM's ``gpu_memory_utilization``: 0.92
  from 0.20.0, 0.9 before; SGLang's static fraction covers only weights and caches, so f = 1 with
  its reserve; TensorRT-LLM's ``free_gpu_memory_fraction`` 0.9 of what the weights leave, taken as
  0.9 of the whole, a little stricter).

The caches grow linearly in B, so the largest batch that fits is a division, not a search:

.. math:: B_{max} = \\left\\lfloor \\frac{f M - W - \\max(A, R)}{K(1)} \\right\\rfloor

with and without the draft's weights and cache. Left out: CUDA graphs' own pools under vLLM (a few
hundred MB), NCCL buffers, allocator fragmentation, and prefix-cache headroom; the datasheet's
memory is read as 10⁹ bytes (an "80 GB" H100 holds 85.5 · 10⁹, so the limit is a few percent short).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from . import dtypes, roofline
from .architecture import Model

__all__ = ["MemoryRule", "VLLM_RULE", "SGLANG_RULE", "TRTLLM_RULE", "engine_defaults", "activations_gb", "memory_terms", "max_batch"]

_GIB = 2 ** 30 / 1e9  # GB in a GiB


@dataclass(frozen=True)
class MemoryRule:
    """How an engine divides a GPU's memory: ``fraction`` f of it taken, and ``reserve`` the rule
    for R, what it keeps aside for activations and CUDA graphs: ``"sglang"`` (SGLang's), or ``""``
    (none: the activations' peak is measured instead)."""

    fraction: float = 0.92
    reserve: str = ""

    def reserve_gb(self, memory_gb: float, tp: int) -> float:
        """R on a GPU of ``memory_gb`` in a tensor-parallel group of ``tp`` (the module's rule)."""
        if self.reserve != "sglang":
            return 0.0
        gib = memory_gb / _GIB
        chunk = 2_048 if gib < 20 else 4_096 if gib < 60 else 8_192 if gib < 160 else 16_384
        mib = 512 + 1.5 * chunk + tp / 8 * 1_024
        return (max(mib, 10_240.0) if gib > 60 else mib) * 2 ** 20 / 1e9


VLLM_RULE = MemoryRule(0.92)
SGLANG_RULE = MemoryRule(1.0, "sglang")
# TensorRT-LLM's kv_cache_config.free_gpu_memory_fraction, 0.9 of what weights and activations
# leave; taken as 0.9 of the whole, the stricter reading (data/engines.csv's trt-llm row).
TRTLLM_RULE = MemoryRule(0.9)


def engine_defaults(memory_gb: float) -> tuple[int, int]:
    """vLLM's defaults for a GPU of ``memory_gb``, as (max_num_batched_tokens, max_num_seqs) of its
    OpenAI server (``engine/arg_utils.py``, 0.33.0): 16,384 and 1,024 from 160 GiB, 8,192 and 1,024
    from 70 GiB (an A100 excepted, which specviz does not tell apart: its 80 GB take the middle
    tier), else 2,048 and 256."""
    if memory_gb >= 160 * _GIB:
        return 16_384, 1_024
    if memory_gb >= 70 * _GIB:
        return 8_192, 1_024
    return 2_048, 256


def _mlp_width(model: Model) -> float:
    """I: the MLP width one token runs in a layer, from the parameters (a gated MLP has 3·h·I): the
    dense MLPs' and shared experts' average over the layers (their norms included), plus one MoE
    layer's routed experts (Qwen3-32B: 25,600.7 for its 25,600; DeepSeek-V3: 19,320, between its
    dense layers' 18,432 and a MoE layer's 2,048 + 8 · 2,048)."""
    per_layer = model.active["mlp"] / model.layers + model.active["experts"] / max(model.moe_layers, 1)
    return per_layer / (3.0 * model.hidden_size)


def activations_gb(model: Model, tp: int, memory_gb: float) -> float:
    """A, the activations' peak per GPU while vLLM profiles: T (h + 3 I / tp) · 2 bytes over its
    ``max_num_batched_tokens`` T, and S · V · 4 bytes of float32 logits over ``max_num_seqs`` S
    (:func:`engine_defaults`). Qwen3-32B on 2 H100s: T 8,192, h 5,120, I 25,600: 0.71 GB, and
    1,024 · 151,936 · 4 = 0.62 GB of logits."""
    tokens, seqs = engine_defaults(memory_gb)
    return (tokens * (model.hidden_size + 3.0 * _mlp_width(model) / tp) * 2.0 + seqs * model.vocab_size * 4.0) / 1e9


def memory_terms(memory_gb: float, target: Model, drafter: Model | None, precision: dtypes.Precision, *, tp: int,
                 dp: int, batch: ArrayLike, context: ArrayLike, gamma: ArrayLike,
                 rule: MemoryRule = VLLM_RULE) -> dict[str, float | np.ndarray]:
    """Each term of the module's inequality per GPU, in GB, broadcast over batch, context and γ.

    Returns
    -------
    dict
        ``weights_target``, ``weights_draft``, ``kv_target``, ``kv_draft``, ``workspace``
        (max(A, R)), ``need`` (their sum), ``usable`` (f·M) and ``memory`` (M); the draft's terms
        are 0 without a drafter.
    """
    devices = tp * dp
    per_gpu = lambda gb: gb / devices
    terms: dict[str, float | np.ndarray] = {}
    for role, model in (("target", target), ("draft", drafter)):
        terms[f"weights_{role}"] = 0.0 if model is None else per_gpu(roofline.weights_gb(model, precision, dp))
        terms[f"kv_{role}"] = (np.zeros(np.broadcast_shapes(np.shape(batch), np.shape(context), np.shape(gamma)))
                               if model is None else per_gpu(roofline.cache_gb(model, batch, context, gamma, precision, tp)))
    terms["workspace"] = max(activations_gb(target, tp, memory_gb), rule.reserve_gb(memory_gb, tp))
    terms["need"] = (terms["weights_target"] + terms["weights_draft"] + terms["kv_target"] + terms["kv_draft"]
                     + terms["workspace"])
    terms["usable"], terms["memory"] = rule.fraction * memory_gb, memory_gb
    return terms


def max_batch(memory_gb: float, target: Model, drafter: Model | None, precision: dtypes.Precision, *, tp: int, dp: int,
              context: ArrayLike, gamma: ArrayLike, rule: MemoryRule = VLLM_RULE) -> int | np.ndarray:
    """B_max, the largest batch whose weights, caches and workspace fit (the module's equation), 0
    where the weights and workspace alone do not; broadcast over context and γ. Without a memory
    figure (a CPU row), no limit: the largest int64."""
    if not math.isfinite(memory_gb):
        return np.iinfo(np.int64).max
    one = memory_terms(memory_gb, target, drafter, precision, tp=tp, dp=dp, batch=1, context=context, gamma=gamma,
                       rule=rule)
    room = one["usable"] - one["weights_target"] - one["weights_draft"] - one["workspace"]
    per_sequence = one["kv_target"] + one["kv_draft"]
    unlimited = float(np.iinfo(np.int64).max)
    fits = np.where(per_sequence > 0, np.minimum(np.floor(np.maximum(room, 0.0) / np.where(per_sequence > 0, per_sequence, 1.0)),
                                                 unlimited), unlimited).astype(np.int64)
    return int(fits) if np.ndim(fits) == 0 else fits
