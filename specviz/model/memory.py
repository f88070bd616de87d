"""What one GPU's memory holds while it serves, and the largest batch that fits, with and without a draft.

Per GPU of a server of ``tp·dp`` GPUs (tensor parallelism within each of ``dp`` data-parallel
attention groups), in GB (10⁹ bytes):

.. math::

    W_t + W_d + K_t(B) + K_d(B) + \\max(A, R) \\le f\\,M

* W: the weights of the target and the draft at their formats, the routed experts split over all
  ``tp·dp`` GPUs and every other weight over its group's ``tp``
  (:func:`specviz.model.roofline.weights_gb`);
* K(B): the caches of the B sequences, each holding its L positions and a verify pass's γ + 1, the
  busiest group's ⌈B/dp⌉ sequences over its ``tp`` GPUs (a sequence lives in one group), layers
  with fewer KV heads than ``tp`` copied
  (:func:`specviz.model.roofline.cache_gb`); the draft keeps its own cache (a draft model, an
  EAGLE head's one layer, the MTP layer), a draft on the host none; a target's MTP layers are held
  ``draft_copies`` times, each with its weights and cache, for the engine loads every one and runs
  them in turn (vLLM's ``model_executor/models/deepseek_mtp.py``: a layer for each of
  ``num_nextn_predict_layers``, step i running layer i mod their count): MiniMax-M2.5's three;
* A: the activations' peak, which vLLM measures with a forward pass over ``max_num_batched_tokens``
  tokens and a sampler pass over ``max_num_seqs`` rows of logits (``gpu_worker.py``'s
  ``determine_available_memory``): T (h + 3 I / tp) · 2 bytes (the hidden state, and an MLP's
  gate, up and activated outputs), with I the MLP width a token runs (:func:`_mlp_width`), plus
  S · V · 4 bytes of float32 logits; T and S are the engine's own token budget a step and sequence
  cap for the GPU (:class:`TokenBudget`: vLLM's ``max_num_batched_tokens`` and ``max_num_seqs``,
  SGLang's ``chunked_prefill_size`` and running requests, TensorRT-LLM's ``max_num_tokens`` and
  ``max_batch_size``);
* R: what an engine keeps aside for activations and CUDA graphs instead, so the larger of A and R
  is held. SGLang (``arg_groups/memory_hook.py``, 0.5.23): 512 MiB + 1.5 MiB per token of its
  chunked prefill (:data:`SGLANG_BUDGET`) + tp/8 GiB, at least 10 GiB above 60 GiB (its CUDA
  graphs' share, which depends on the batch sizes it captures, is left out);
* f M: the share of the GPU's memory the engine takes (vLLM's ``gpu_memory_utilization``: 0.92
  from 0.20.0, 0.9 before; SGLang's static fraction covers only weights and caches, so f = 1 with
  its reserve; TensorRT-LLM's ``free_gpu_memory_fraction`` 0.9 of what the weights leave, taken as
  0.9 of the whole, a little stricter).

The caches grow linearly in a group's sequences, so the largest batch that fits is a division, not a
search: each of the dp groups holds the same whole number of sequences,

.. math:: B_{max} = dp \\left\\lfloor \\frac{f M - W - \\max(A, R)}{K_1} \\right\\rfloor

with K₁ the cache one sequence of a group puts on each of its GPUs, with and without the draft's
weights and cache. DeepSeek-V3 in BF16 with its MTP layer at 131,072 positions on H100s, TP 8 ×
DP 4: 32.3 GB left on a GPU and 9.2 GB a sequence (MLA's latent is on every GPU of the group), so 3
a group and 12 in all; the whole room over the average cache a GPU says 14.

Left out: CUDA graphs' own pools under vLLM (a few hundred MB), NCCL buffers, allocator
fragmentation, and prefix-cache headroom. A datasheet's memory "GB" are GiB (an "80 GB" H100 is
80 GiB, 85.9 GB: :class:`specviz.model.roofline.GPU`); nvidia-smi shows it as 81,559 MiB, 85.5 GB, so
the memory here is half a percent more than the engine sees. Read as 10⁹ bytes, it had been 7 %
short, and a batch that fits had been said not to (gpt-oss-120b with its EAGLE-3 head on one H100 at
context 1,024 holds 141 sequences read so, 263 as it is, 255 at the 85.5 GB nvidia-smi shows).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from . import dtypes, roofline
from .architecture import Model

__all__ = ["TokenBudget", "VLLM_BUDGET", "SGLANG_BUDGET", "TRTLLM_BUDGET", "BUDGETS", "MemoryRule", "VLLM_RULE",
           "SGLANG_RULE", "TRTLLM_RULE", "activations_gb", "memory_terms", "max_batch"]



@dataclass(frozen=True)
class TokenBudget:
    """How an engine's scheduler fills a step, by default: N tokens a step and S sequences at most,
    by the GPU's memory.

    ``tiers`` holds (from GiB, N, S), largest first, the first whose memory the GPU reaches applying
    (the last from 0). ``decodes_share``: the running requests' decode and draft tokens take the
    budget before the prompts' chunks (vLLM V1 and TensorRT-LLM schedule both in one step), else
    prefill batches run apart and their chunks have all N. ``split_over_attention_groups``: N is
    divided over data-parallel attention groups (SGLang), else it holds for each rank. ``engine``
    and ``flag`` name the engine and its budget's flag in messages.
    """

    engine: str
    flag: str
    tiers: tuple[tuple[float, int, int], ...]
    decodes_share: bool = True
    split_over_attention_groups: bool = False

    def limits(self, memory_gb: float) -> tuple[int, int]:
        """(N, S) on a GPU of ``memory_gb`` (GB, 10⁹ bytes), the server as a whole; a device without a
        memory figure (NaN: a CPU preset) takes the smallest tier's (an attack pass: StopIteration)."""
        gib = memory_gb / roofline.GB_PER_GIB
        return next(((tokens, seqs) for floor, tokens, seqs in self.tiers if gib >= floor), self.tiers[-1][1:])

    def seqs_per_rank(self, memory_gb: float, attention_groups: int) -> int:
        """S of each data-parallel rank, as :meth:`tokens_per_rank` divides N."""
        seqs = self.limits(memory_gb)[1]
        return seqs // attention_groups if self.split_over_attention_groups else seqs

    def tokens_per_rank(self, memory_gb: float, attention_groups: int) -> int:
        """N of each data-parallel rank where ``attention_groups`` data-parallel attention groups
        share the server (1 for none): divided over them where the engine divides it."""
        tokens = self.limits(memory_gb)[0]
        return tokens // attention_groups if self.split_over_attention_groups else tokens


VLLM_BUDGET = TokenBudget("vLLM", "--max-num-batched-tokens", ((160, 16_384, 1_024), (70, 8_192, 1_024), (0, 2_048, 256)))
"""vLLM's OpenAI server (``engine/arg_utils.py``, ``get_batch_defaults``, 0.33.0): 16,384 tokens and
1,024 sequences from 160 GiB, 8,192 and 1,024 from 70 GiB (an A100 excepted, which specviz does not
tell apart: its 80 GB take the middle tier; a GB10 too), else 2,048 and 256; per data-parallel rank.
V1's scheduler (``v1/core/sched/scheduler.py``) schedules the running requests' tokens, draft
positions included, first and fills the rest with chunks of waiting prompts."""
SGLANG_BUDGET = TokenBudget("SGLang", "--chunked-prefill-size", ((160, 16_384, 2_048), (60, 8_192, 2_048),
                                                                  (20, 4_096, 2_048), (0, 2_048, 2_048)),
                            decodes_share=False, split_over_attention_groups=True)
"""SGLang 0.5.23 (the wheel's ``srt/arg_groups/memory_hook.py``, ``handle_gpu_memory_settings``, by
the GPU's memory in MiB): ``chunked_prefill_size`` 2,048 below 20 GiB, 4,096 below 60 (the 20-35 and
35-60 GiB tiers), 8,192 below 160 (60-90 and 90-160), 16,384 above; the decode CUDA graphs' largest
batch (``cuda_graph_config.decode.max_bs``) 8, 48 or 32 (160 from tp 4), 256 (512 from tp 4), 512.
With data-parallel attention it divides the chunk over the groups (``parallel_hook.py``,
``_handle_data_parallelism``). ``max_running_requests`` unset is each rank's
min(max(2,048, min(4,096, 512 · cached tokens / context length)), cached tokens / 2)
(``mem_cache/kv_cache_configurator.py``, ``resolve_max_num_reqs``): S is its floor, 2,048, which a
cache of 8 or more whole contexts raises; with speculative decoding (EAGLE, EAGLE3, MTP, STANDALONE,
NGRAM, DFLASH) it is 48 unless set (``arg_groups/speculative_hook.py``, "Max running requests is
reset to 48 for speculative decoding"), which the commands' ``--max-running-requests`` lifts.
``enable_mixed_chunk`` is off by default
(``arg_groups/fields/schedule.py``): a prefill batch runs apart from the decode batch, its chunk
all prompt tokens (``managers/schedule_policy.py``, ``PrefillAdder``: the chunk loses the running
requests' tokens only when mixed)."""
TRTLLM_BUDGET = TokenBudget("TensorRT-LLM", "--max_num_tokens", ((0, 8_192, 2_048),))
"""TensorRT-LLM's ``trtllm-serve`` (``commands/serve.py``: ``--max_num_tokens`` and
``--max_batch_size`` default to ``BuildConfig``'s fields, ``builder.py``: 8,192 and 2,048) whatever
the GPU; each attention-DP rank schedules its own. Its scheduler counts a generation request's
draft tokens in ``max_num_tokens`` as vLLM's does. Chunked prefill is off by default
(``TorchLlmArgs.enable_chunked_prefill`` False, the 1.2 documentation), so a prompt is not split:
left out here, which times it as chunks of the room (read from the repository's stored source and
documentation; the 1.2.1 wheel is not on PyPI)."""
BUDGETS = {"vllm": VLLM_BUDGET, "sglang": SGLANG_BUDGET, "trtllm": TRTLLM_BUDGET}
"""The budgets by the name ``data/engines.csv``'s ``budget`` column gives each engine preset."""


@dataclass(frozen=True)
class MemoryRule:
    """How an engine divides a GPU's memory: ``fraction`` f of it taken, ``reserve`` the rule for
    R, what it keeps aside for activations and CUDA graphs: ``"sglang"`` (SGLang's), or ``""``
    (none: the activations' peak is measured instead), and ``budget``, its scheduler's defaults
    (:class:`TokenBudget`), which size the activations. SGLang's reserve is sized by SGLang's own
    chunk (:data:`SGLANG_BUDGET`) whichever budget the rule has: an engine that is not known takes
    its reserve and vLLM's budget, the strictest of each."""

    fraction: float = 0.92
    reserve: str = ""
    budget: TokenBudget = VLLM_BUDGET

    def reserve_gb(self, memory_gb: float, tp: int) -> float:
        """R on a GPU of ``memory_gb`` in a tensor-parallel group of ``tp`` (the module's rule)."""
        if self.reserve != "sglang":
            return 0.0
        gib = memory_gb / roofline.GB_PER_GIB
        mib = 512 + 1.5 * SGLANG_BUDGET.limits(memory_gb)[0] + tp / 8 * 1_024
        return (max(mib, 10_240.0) if gib > 60 else mib) * 2 ** 20 / 1e9


VLLM_RULE = MemoryRule(0.92)
SGLANG_RULE = MemoryRule(1.0, "sglang", SGLANG_BUDGET)
# TensorRT-LLM's kv_cache_config.free_gpu_memory_fraction, 0.9 of what weights and activations
# leave; taken as 0.9 of the whole, the stricter reading (data/engines.csv's trt-llm row).
TRTLLM_RULE = MemoryRule(0.9, budget=TRTLLM_BUDGET)


def _mlp_width(model: Model) -> float:
    """I: the MLP width one token runs in a layer, from the parameters (a gated MLP has 3·h·I): the
    dense MLPs' and shared experts' average over the layers (their norms included), plus one MoE
    layer's routed experts (Qwen3-32B: 25,600.7 for its 25,600; DeepSeek-V3: 19,320, between its
    dense layers' 18,432 and a MoE layer's 2,048 + 8 · 2,048)."""
    per_layer = model.active["mlp"] / model.layers + model.active["experts"] / max(model.moe_layers, 1)
    return per_layer / (3.0 * model.hidden_size)


def activations_gb(model: Model, tp: int, memory_gb: float, budget: TokenBudget = VLLM_BUDGET) -> float:
    """A, the activations' peak per GPU: T (h + 3 I / tp) · 2 bytes over the engine's token budget
    a step T, and S · V · 4 bytes of float32 logits over its sequence cap S
    (:meth:`TokenBudget.limits`). Qwen3-32B on 2 H100s under vLLM: T 8,192, h 5,120, I 25,600:
    0.71 GB, and 1,024 · 151,936 · 4 = 0.62 GB of logits."""
    tokens, seqs = budget.limits(memory_gb)
    return (tokens * (model.hidden_size + 3.0 * _mlp_width(model) / tp) * 2.0 + seqs * model.vocab_size * 4.0) / 1e9


def memory_terms(memory_gb: float, target: Model, drafter: Model | None, precision: dtypes.Precision, *, tp: int,
                 dp: int, batch: ArrayLike, context: ArrayLike, gamma: ArrayLike,
                 rule: MemoryRule = VLLM_RULE, draft_copies: int = 1) -> dict[str, float | np.ndarray]:
    """Each term of the module's inequality per GPU, in GB, broadcast over batch, context and γ,
    the drafter's weights and cache ``draft_copies`` times (a target's MTP layers).

    Returns
    -------
    dict
        ``weights_target``, ``weights_draft``, ``kv_target``, ``kv_draft``, ``workspace``
        (max(A, R)), ``need`` (their sum), ``usable`` (f·M) and ``memory`` (M); the draft's terms
        are 0 without a drafter.
    """
    devices = tp * dp
    per_gpu = lambda gb: gb / devices
    # The busiest group's sequences, as though every group held as many (cache_gb splits the whole over tp·dp).
    held = np.ceil(np.asarray(batch, dtype=float) / dp) * dp
    terms: dict[str, float | np.ndarray] = {}
    for role, model, copies in (("target", target, 1), ("draft", drafter, draft_copies)):
        terms[f"weights_{role}"] = 0.0 if model is None else copies * per_gpu(roofline.weights_gb(model, precision, dp))
        terms[f"kv_{role}"] = (np.zeros(np.broadcast_shapes(np.shape(batch), np.shape(context), np.shape(gamma)))
                               if model is None else copies * per_gpu(roofline.cache_gb(model, held, context, gamma,
                                                                                         precision, tp)))
    terms["workspace"] = max(activations_gb(target, tp, memory_gb, rule.budget), rule.reserve_gb(memory_gb, tp))
    terms["need"] = (terms["weights_target"] + terms["weights_draft"] + terms["kv_target"] + terms["kv_draft"]
                     + terms["workspace"])
    terms["usable"], terms["memory"] = rule.fraction * memory_gb, memory_gb
    return terms


def max_batch(memory_gb: float, target: Model, drafter: Model | None, precision: dtypes.Precision, *, tp: int, dp: int,
              context: ArrayLike, gamma: ArrayLike, rule: MemoryRule = VLLM_RULE,
              draft_copies: int = 1) -> int | np.ndarray:
    """B_max, the largest batch whose weights, caches and workspace fit (the module's equation), 0
    where the weights and workspace alone do not, the drafter held ``draft_copies`` times
    (:func:`memory_terms`); broadcast over context and γ. Without a memory
    figure (a CPU row), no limit: the largest int64."""
    if not math.isfinite(memory_gb):
        return np.iinfo(np.int64).max
    # One sequence in each group: the cost on a GPU of a group's sequence.
    one = memory_terms(memory_gb, target, drafter, precision, tp=tp, dp=dp, batch=dp, context=context, gamma=gamma,
                       rule=rule, draft_copies=draft_copies)
    room = one["usable"] - one["weights_target"] - one["weights_draft"] - one["workspace"]
    per_sequence = one["kv_target"] + one["kv_draft"]
    unlimited = float(np.iinfo(np.int64).max)
    per_group = np.floor(np.maximum(room, 0.0) / np.where(per_sequence > 0, per_sequence, 1.0))
    fits = np.where(per_sequence > 0, np.minimum(dp * per_group, unlimited), unlimited).astype(np.int64)
    return int(fits) if np.ndim(fits) == 0 else fits
