"""The step model (v2): what one decoding step costs, plain and speculative, term by term.

One forward pass of a model over B sequences, N new positions each, with L cached positions each,
on ``tp`` devices (tensor parallelism):

.. math::

    t = \\underbrace{\\max(t_c, t_m) + (1 - o)\\min(t_c, t_m)}_{\\text{roofline}}
        + t_{comm} + \\text{layers}\\cdot t_{layer} + B N\\, t_{token}

* the roofline, :func:`specviz.model.roofline.forward_pass`, on one device of ``tp`` times the peak and
  the bandwidth: weights, KV cache and FLOPs split evenly over the devices (Megatron-style tensor
  parallelism, Shoeybi et al. 2019), at the precision's bytes and the dtype's peak;
* ``t_comm``: two all-reduces per layer (after attention, after the MLP) of the pass's activations,
  B·N·h·2 bytes each, on a ring: 2(tp − 1)/tp of them cross each device's link one way
  (Patarasuk & Yuan 2009), plus a fixed latency per all-reduce;
* ``t_layer``: launches per layer and pass (a few µs with CUDA graphs, tens without);
* ``t_token``: a cost per token in the pass (sampling, rejection sampling, per-sequence
  bookkeeping): the term that grows with the batch beside the roofline. With ``dp`` data-parallel
  attention ranks, each an engine of its own (vLLM's ``--data-parallel-size``), each samples its
  B·N/dp tokens at the same time: the term is B·N·t_token/dp.

A step adds ``t_step``, a fixed cost per engine step (scheduling, preparing the inputs, processing
the outputs), once: an engine runs its draft passes and the verify pass inside one step (vLLM V1's
EAGLE proposer and draft-model runner, SGLang's EAGLE worker, MagicDec's loop), so the scheduler's
work per step does not repeat per draft pass; each pass still pays its launches (``t_layer``). Two
costs only speculation pays come on top: ``t_draft_pass``, the proposer's work around each draft
pass (preparing its inputs, sampling its token, the loop's launches), and ``t_speculation``, once a
speculative step (rejection sampling's set-up, the accepted tokens' bookkeeping, the draft's inputs
after verification), counted in the verify step. A plain
step is one target pass (N = 1). A speculative step is γ draft passes and one verify pass over the
tree's nodes (γ + 1 for a chain); it yields E tokens per sequence, E = 1 + Σ_d p_d with
p_d the probability that depth d is accepted (α^d for a chain at per-position rate α: Leviathan et
al. 2023; the same sum over a tree's depths: Li et al. 2024, EAGLE-2). Drafts:

* ``model``: a separate model, each pass over B tokens, reading its own weights and KV cache;
* ``eagle`` / ``eagle3``: a head of one decoder layer of the target's width that reads the
  target's LM head each pass (EAGLE, Li et al. 2024; EAGLE-3 with a 32,000-token draft vocabulary
  and three fused feature layers, Li et al. 2025);
* ``self``: the target itself with a sparse KV cache of ``kv_budget`` positions (MagicDec,
  Sadhukhan et al. 2025);
* ``mtp``: the target's multi-token-prediction layer (DeepSeek-V3, arXiv:2412.19437, §2.2): one
  decoder layer of the target's kind with its own cache and its own copies of the embedding and the
  head, run γ times as vLLM and SGLang run it (:attr:`specviz.model.architecture.Model.mtp`);
* ``peagle``: an EAGLE-3 head of :data:`PEAGLE_LAYERS` decoder layers that drafts the γ tokens in
  one pass over γ positions per sequence (parallel drafting, P-EAGLE), and ``block``: a drafter
  that proposes a block of γ tokens in one pass (block-diffusion drafters of the DFlash kind,
  :func:`specviz.model.drafters.block_drafter`, or a draft model run so);
* ``medusa``: γ Medusa heads on the last hidden state, each a residual block and its own head over
  the vocabulary, all in one pass (Cai et al. 2024, arXiv:2401.10774);
* ``ngram`` and ``suffix``: prompt lookup, and suffix trees over the prompt and earlier outputs
  (SuffixDecoding, Oliaro et al. 2024, arXiv:2411.04975), on the host: no device pass.

A draft's own shape may come from its config (an EAGLE-3 head of SpecForge's or SafeAILab's, read
by :func:`specviz.model.hf_config.model_from_config`); without one it is derived from the target. A
draft model may keep only ``kv_budget`` positions too (MagicDec's StreamingLLM drafts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from specviz.errors import InputError

from . import dtypes, mtp, roofline, spec
from .architecture import Model
from .drafters import (HEAD_KINDS, HOST_DRAFTS, MODEL_KINDS, ONE_PASS_DRAFTS, PARALLEL_DRAFTS, PEAGLE_LAYERS, DraftKind,
                       drafter, proposer_passes)

__all__ = ["Costs", "Draft", "HOST_DRAFTS", "PARALLEL_DRAFTS", "ONE_PASS_DRAFTS", "PEAGLE_LAYERS", "ROUTING_OVERLAP",
           "tensor_parallel_device", "link_bandwidth", "pass_time", "pass_work", "pass_seconds", "step",
           "step_work", "step_seconds", "verify_routed_tokens", "ratio_terms", "step_ratio", "part_at"]


# Activations cross the links in BF16 whatever the weights' precision.
_ACTIVATION_BYTES = 2.0
ROUTING_OVERLAP = 0.38
"""The share of a token's routed experts that its sequence's previous token chose too (``routing_overlap``
of :func:`step`), as every scenario prices a mixture of experts unless told otherwise: measured by
Cohere between adjacent tokens of its Command MoE models served by vLLM (cohere.com/blog, "Why MoE
models get more from speculative decoding", 2026-04-21: "expert overlap (step 1)" 38 %, as
headsupai.io's summary of the post quotes it); not fitted to specviz's published series."""


@dataclass(frozen=True)
class Costs:
    """What a pass costs beyond the roofline, and how far the roofline is reached.

    ``mfu``, ``mbu``: shares of the peak FLOPS and bandwidth reached; ``overlap``: 1 when compute
    and memory time overlap fully, 0 when they add; ``step_ms``: fixed per engine step, once
    whatever the passes in it; ``layer_us``: per layer and pass; ``token_us``: per token in a pass; ``allreduce_us``: latency of one all-reduce;
    ``link_gb_s``: one way, per device (None: the GPU preset's); ``draft_pass_us``: per draft pass, the
    proposer's work around it (a parallel drafter's one pass, or Medusa's heads run together, pay it
    once; a draft on the host never); ``speculation_ms``: once per
    speculative step, beside ``step_ms`` (both 0 for a plain step: costs only speculation pays). Each
    may also be an array that broadcasts with the pass's inputs (a calibration evaluates many knob
    sets at once).
    """

    mfu: float = 1.0
    mbu: float = 1.0
    overlap: float = 1.0
    step_ms: float = 0.0
    layer_us: float = 0.0
    token_us: float = 0.0
    allreduce_us: float = 0.0
    link_gb_s: float | None = None
    draft_pass_us: float = 0.0
    speculation_ms: float = 0.0


@dataclass(frozen=True)
class Draft:
    """How the tokens are drafted: ``kind`` (see the module), the draft ``model`` (required for
    ``model``; for a head, ``eagle``, ``eagle3``, ``peagle`` or ``block``, its own config's shape where
    one is given, else derived from the target by :func:`specviz.model.drafters.drafter`; none for the
    others) and ``kv_budget``, the cached positions a sparse-KV draft reads (None: the whole context)."""

    kind: DraftKind
    model: Model | None = None
    kv_budget: float | None = None

    def __post_init__(self) -> None:
        if (self.kind in MODEL_KINDS) != (self.model is not None) and self.kind not in HEAD_KINDS:
            raise InputError("step.draft_model")



def tensor_parallel_device(gpu: roofline.GPU, tp: int) -> roofline.GPU:
    """The ``tp`` devices as one: their peaks and their bandwidth, added (weights, KV cache and FLOPs
    split evenly over them)."""
    return replace(gpu, tflops=gpu.tflops * tp, tflops_fp8=gpu.tflops_fp8 * tp, tflops_fp4=gpu.tflops_fp4 * tp,
                   bandwidth_tb_s=gpu.bandwidth_tb_s * tp)


def link_bandwidth(gpu: roofline.GPU, devices: int, costs: Costs) -> float:
    """Bytes per second one device sends one way to the others of a group of ``devices``: the
    scale-up link within its domain (``gpu.scale_up_gpus``), the scale-out network (one NIC per
    GPU, ``gpu.scale_out_gb_s``) for the share of the others beyond it.

    .. math:: \\frac{1}{b} = \\frac{S/D}{b_{up}} + \\frac{(D - S)/D}{b_{out}}

    Raises
    ------
    InputError
        ``step.no_link`` without a link figure; ``step.no_scale_out`` for a group larger than the
        domain on a GPU without a scale-out figure.
    """
    link = (costs.link_gb_s if costs.link_gb_s is not None else gpu.link_gb_s) * 1e9
    if not np.isfinite(link) or link <= 0:
        raise InputError("step.no_link", gpu=gpu.id)
    domain = gpu.scale_up_gpus
    if not np.isfinite(domain) or devices <= domain:
        return link
    out = gpu.scale_out_gb_s * 1e9
    if not np.isfinite(out) or out <= 0:
        raise InputError("step.no_scale_out", gpu=gpu.id, devices=devices, domain=int(domain))
    return 1.0 / ((domain / devices) / link + ((devices - domain) / devices) / out)


def pass_time(gpu: roofline.GPU, model: Model, batch: ArrayLike, new_tokens: ArrayLike,
              context: ArrayLike = 0, *, tp: int = 1, dp: int = 1, ep: bool = False,
              precision: dtypes.Precision = dtypes.PRECISIONS["bf16"], costs: Costs = Costs(),
              routed_tokens: ArrayLike | None = None) -> dict[str, np.ndarray]:
    """Time of one forward pass, with each term apart (the module's equation).

    Parameters
    ----------
    gpu, model : GPU, Model
    batch, new_tokens, context : array_like
        B sequences, N new positions each, L cached positions each (broadcast).
    tp : int
        Devices each attention group is split over (tensor parallelism); 1: no all-reduce.
    dp : int
        Data-parallel attention groups: each holds the attention and dense weights (split over its
        ``tp`` devices) and 1/dp of the sequences; ``tp·dp`` devices in all.
    ep : bool
        Expert parallelism: the routed experts spread over all ``tp·dp`` devices, each MoE layer
        dispatching its tokens to their experts' devices and combining them back (all-to-all),
        instead of each expert split over the ``tp`` devices with an all-reduce after the layer.
    precision : Precision
    costs : Costs
    routed_tokens : array_like, optional
        The tokens whose routing decides which experts are read
        (:func:`specviz.model.roofline.forward_pass`; None: all B·N).

    Returns
    -------
    dict of ndarray
        ``flops``, ``bytes`` (all devices), ``compute_s``, ``memory_s``, ``roofline_s``,
        ``comm_s``, ``layer_s`` (at the costs' shape), ``token_s`` and ``time_s``, their sum (a step's
        fixed cost, ``costs.step_ms``, is not a pass's: :func:`step` adds it once per step).

    Notes
    -----
    With ``tp = dp = 1``, the default precision and no extra costs this is
    :func:`specviz.model.roofline.forward_pass` exactly. Communication, per layer: an all-reduce
    after attention and after a dense or tensor-parallel MoE MLP, over a group's tokens T/dp on a
    ring, 2(tp − 1)/tp of them crossing each device's link (Patarasuk & Yuan 2009); with ``ep``, each
    MoE layer's dispatch and combine, each device sending its T/(tp·dp) tokens' activations, (D − 1)/D
    of them to other devices, each way (as DeepEP's normal kernels move them). A collective pays
    ``costs.allreduce_us`` of latency. KV heads fewer than ``tp`` are copied, as vLLM does
    (:func:`specviz.model.roofline.forward_pass`).
    """
    return pass_seconds(pass_work(gpu, model, batch, new_tokens, context, tp=tp, dp=dp, ep=ep, precision=precision,
                                  link_gb_s=costs.link_gb_s, routed_tokens=routed_tokens), costs)


def pass_work(gpu: roofline.GPU, model: Model, batch: ArrayLike, new_tokens: ArrayLike, context: ArrayLike = 0, *,
              tp: int = 1, dp: int = 1, ep: bool = False, precision: dtypes.Precision = dtypes.PRECISIONS["bf16"],
              link_gb_s: float | None = None, routed_tokens: ArrayLike | None = None, prefill_tokens: ArrayLike = 0.0,
              prefill_positions: ArrayLike = 0.0, prefill_routed: ArrayLike | None = None) -> dict:
    """What a pass does, before the costs that time it (:func:`pass_seconds`): its roofline work on the
    ``tp·dp`` devices as one (:func:`specviz.model.roofline.forward_work`), its tokens, its layers and
    its collectives as (how many, seconds of each one's transfer on the link per token in the pass:
    a collective moves each token's activations; ``link_gb_s``: None for the GPU preset's). Many sets
    of costs (a band's draws) time the same work; the arguments are :func:`pass_time`'s, which raises
    what this raises. ``prefill_tokens`` (each reading ``prefill_positions`` cached positions) are
    prompt tokens of other requests carried by the same pass (:func:`step`): in its roofline work and
    its collectives (``prefill``), not in the per-token cost of the decoded tokens (``tokens``), which
    pays for sampling; ``prefill_routed`` of them reach the routed experts
    (:func:`specviz.model.roofline.forward_work`)."""
    for value in (tp, dp):
        if value < 1 or int(value) != value:
            raise InputError("step.tp_whole")
    devices = tp * dp
    device = tensor_parallel_device(gpu, devices)
    work = roofline.forward_work(device, model, batch, new_tokens, context, precision=precision, tensor_split=tp,
                                 dense_copies=dp, routed_tokens=routed_tokens, prefill_tokens=prefill_tokens,
                                 prefill_positions=prefill_positions, prefill_routed=prefill_routed)
    tokens = np.asarray(batch, dtype=float) * np.asarray(new_tokens, dtype=float)
    link = Costs(link_gb_s=link_gb_s)
    collectives = []
    experts_apart = ep and model.moe_layers > 0
    if tp > 1:
        crossing = 2.0 * (tp - 1) / tp / dp * model.hidden_size * _ACTIVATION_BYTES
        reductions = 2 * model.layers - (model.moe_layers if experts_apart else 0)
        collectives.append((reductions, crossing / link_bandwidth(gpu, tp, link)))
    if experts_apart and devices > 1:
        sent = model.hidden_size * _ACTIVATION_BYTES / devices * (devices - 1) / devices
        collectives.append((2.0 * model.moe_layers, sent / link_bandwidth(gpu, devices, link)))
    return {**work, "device": device, "tokens": tokens, "prefill": np.asarray(prefill_tokens, dtype=float),
            "layers": model.layers, "collectives": collectives, "ranks": dp}


def pass_seconds(work: dict, costs: Costs) -> dict[str, np.ndarray]:
    """A pass's time from its work (:func:`pass_work`) at ``costs``, as :func:`pass_time` gives it, each
    cost a number or an array that broadcasts with the work."""
    base = roofline.forward_seconds(work["device"], work, mfu=costs.mfu, mbu=costs.mbu, overlap=costs.overlap)
    tokens = work["tokens"]
    carried = tokens + work["prefill"] if work["prefill"].any() else tokens
    collectives = [count * (costs.allreduce_us * 1e-6 + carried * per_token_s) for count, per_token_s in work["collectives"]]
    # The first collective starts the sum: zeros would cost one more pass over a band's draws × points.
    comm = sum(collectives[1:], collectives[0]) if collectives else np.zeros_like(tokens)
    layer = np.asarray(work["layers"] * costs.layer_us * 1e-6)
    # Each data-parallel rank samples and keeps the books of its own share of the tokens, at once.
    per_token = tokens / work["ranks"] * costs.token_us * 1e-6
    time_s = base["time_s"] + comm + layer + per_token
    return {"flops": work["flops"], "bytes": work["bytes"], "compute_s": base["compute_s"],
            "memory_s": base["memory_s"], "roofline_s": base["time_s"], "comm_s": comm, "layer_s": layer,
            "token_s": per_token, "time_s": time_s}


def step(gpu: roofline.GPU, target: Model, draft: Draft, *, batch: ArrayLike, gamma: ArrayLike,
         context: ArrayLike = 0, acceptance_length: ArrayLike | None = None, alpha: ArrayLike | None = None,
         tree_tokens: ArrayLike | None = None, draft_width: ArrayLike = 1, tp: int = 1, dp: int = 1, ep: bool = False,
         precision: dtypes.Precision = dtypes.PRECISIONS["bf16"], costs: Costs = Costs(),
         expert_tax: bool = True, broadcast: bool = True, prompt_tokens: ArrayLike = 0,
         output_tokens: ArrayLike = 1, routing_overlap: ArrayLike = 0.0,
         prompt_routed_share: ArrayLike = 1.0, mtp_reuse: ArrayLike = mtp.REUSE) -> dict[str, np.ndarray]:
    """Plain and speculative step times and the speedup, broadcast over batch, γ and context.

    .. math::

        t_{plain} = t(B) + t_{step},\\quad
        t_{spec} = γ\\,\\big(t_{draft}(B·w) + t_{draft\\,pass}\\big)
                 + \\underbrace{t(B·n) + t_{step} + t_{speculation}}_{t_{verify}},\\qquad
        S = \\frac{E\\, t_{plain}}{t_{spec}}

    with t(·) a target pass (:func:`pass_time`), t_step the fixed cost per engine step, t_draft_pass and
    t_speculation the costs only speculation pays (``costs.draft_pass_us``, ``costs.speculation_ms``: a
    parallel drafter's one pass and Medusa's heads pay t_draft_pass once, spread over the γ positions;
    a draft on the host never), n = ``tree_tokens`` (γ + 1 for a chain) and w = ``draft_width`` tokens per sequence in each
    draft pass (1 for a chain; a tree's top-k). E is the ``acceptance_length`` where given (measured),
    else E(α, γ) of a chain (:func:`specviz.model.spec.expected_tokens`; the target's MTP layers run
    past the positions they were trained for keep ``mtp_reuse`` of the acceptance at each further
    one, :func:`specviz.model.mtp.reuse`); a
    tree's E is its measured acceptance length, or :func:`specviz.model.spec.expected_tokens_chain`
    over its per-depth rates.
    ``expert_tax=False`` prices the verify pass as if each sequence's drafts went to the experts of
    its current token (``routed_tokens`` B): the bound a mixture of experts would reach without the
    expert tax.

    ``routing_overlap`` q is the share of a token's routed experts that its sequence's previous
    token in the same verify pass chose too (temporal locality of routing; 0, the default, is
    uniform routing, independent token by token). Each sequence's n verify tokens then draw
    1 + (n − 1)(1 − q) tokens' worth of experts at random, and the verify pass reads

    .. math:: E_x\\left(1 - (1 - k/E_x)^{B\\,(1 + (n - 1)(1 - q))}\\right)

    experts a layer (:func:`specviz.model.roofline.experts_touched` with that many routed tokens),
    between the uniform expert tax (q = 0) and none (q = 1). Cohere measured q = 0.38 between
    adjacent tokens of its Command MoE models served by vLLM (cohere.com/blog, "Why MoE models get more
    from speculative decoding", 2026-04-21; its figures as a summary of the post, headsupai.io, quotes
    them: "expert overlap (step 1)" 38 %, and four verify tokens loading about 2.5 times one token's
    unique experts, not four); the formula with q = 0.38 gives 2.86 for four, counting no overlap
    beyond adjacent tokens.

    With ``prompt_tokens`` P > 0, each step also carries the prefill of the requests that replace
    the finished ones, as a server at a steady load of B requests of P prompt and O = ``output_tokens``
    output tokens does under continuous batching: a step finishes B·E/O requests on average, and as
    many new prompts enter, so that plain and speculative steps carry

    .. math:: p_{plain} = \\frac{B P}{O},\\qquad p_{spec} = \\frac{B P E}{O}

    prompt tokens (each reading (P + 1)/2 cached positions on average) in their target pass
    (:func:`pass_work`). vLLM V1's scheduler (``vllm/v1/core/sched/scheduler.py``) schedules the
    running requests' decode and draft tokens first and fills the step's token budget with chunks of
    waiting prompts (chunked prefill, on by default), so decode and prefill share the step; SGLang
    runs prefill batches between decode batches by default, which costs the same time per output
    token up to the overlap of the two. Speculation, finishing requests in fewer steps, packs E times
    the prefill into each step: its gain in time per output token shrinks toward 1 as prefill
    dominates. The draft's own pass over the prompt tokens (vLLM's EAGLE and MTP proposers run over
    every scheduled token) is left out: one layer of the target's, about 1/layers of its prefill.
    P = 0, the default, is decode only. ``prompt_routed_share`` of the prompt tokens reach the routed
    experts (1, the default; less for a step priced by its busiest data-parallel rank:
    :func:`specviz.workload.first_token`).

    Returns
    -------
    dict of ndarray
        ``plain_s`` (a plain step), ``draft_s`` (the draft time per drafted position: one pass of a
        chain, a γ-th of a parallel drafter's one pass), ``verify_s`` (the verify pass and
        the step's fixed cost), ``spec_s``, ``expected_tokens``,
        ``speedup``, ``verify_cost`` (t_verify / t_plain), ``draft_cost`` (t_draft / t_plain),
        ``plain_compute_bound`` and ``verify_compute_bound`` (True where a pass's compute time exceeds
        its memory time), ``verify_intensity`` (FLOP per byte of the verify pass) and ``verify_ridge``
        (the intensity at which its compute and memory times meet, each format at its own peak, at
        the shares of peak reached). With
        ``broadcast=False`` each keeps its own shape (they broadcast together): a caller that computes
        further on them does so on the arrays' own sizes, not on the full grid.

    Raises
    ------
    ValueError
        Without ``alpha`` or ``acceptance_length``, or with an acceptance length outside [1, n]
        (more tokens than the verify pass scores).
    """
    g = np.asarray(gamma, dtype=float)
    nodes = g + 1.0 if tree_tokens is None else np.asarray(tree_tokens, dtype=float)
    if acceptance_length is not None:
        e = np.asarray(acceptance_length, dtype=float)
        if np.any((e < 1) | (e > nodes)):
            raise InputError("step.acceptance_length_range")
    elif alpha is not None:
        e = np.asarray(spec.expected_tokens(alpha, g, **mtp.reuse(target, draft.kind, mtp_reuse)), dtype=float)
    else:
        raise InputError("step.no_acceptance")
    t = step_seconds(step_work(gpu, target, draft, batch=batch, gamma=g, context=context, tree_tokens=nodes,
                               draft_width=draft_width, tp=tp, dp=dp, ep=ep, precision=precision,
                               link_gb_s=costs.link_gb_s, expert_tax=expert_tax, prompt_tokens=prompt_tokens,
                               output_tokens=output_tokens, expected_tokens=e, routing_overlap=routing_overlap,
                               prompt_routed_share=prompt_routed_share),
                     costs)
    plain, verify, one_draft, spec_s = t["plain_s"], t["verify_s"], t["draft_s"], t["spec_s"]
    plain_pass, verify_pass = t["plain_pass"], t["verify_pass"]
    out = {"plain_s": plain, "draft_s": one_draft, "verify_s": verify, "spec_s": spec_s, "expected_tokens": e,
           "speedup": e * (plain / spec_s), "verify_cost": verify / plain, "draft_cost": one_draft / plain,
           "plain_compute_bound": plain_pass["compute_s"] > plain_pass["memory_s"],
           "verify_compute_bound": verify_pass["compute_s"] > verify_pass["memory_s"],
           "verify_intensity": verify_pass["flops"] / verify_pass["bytes"],
           # The intensity at which this pass's compute and memory times meet: each format's matmuls at
           # their own peak (MXFP4 experts at FP8's, BF16 attention at BF16's), so a pass is compute-bound
           # exactly where its intensity passes it; one peak for every matmul had disagreed with the regime.
           "verify_ridge": verify_pass["flops"] * verify_pass["memory_s"] / (verify_pass["compute_s"] * verify_pass["bytes"])}
    if not broadcast:
        return out
    shape = np.broadcast_shapes(*(np.shape(v) for v in out.values()))
    return {key: np.broadcast_to(value, shape) for key, value in out.items()}


def verify_routed_tokens(batch: ArrayLike, tokens: ArrayLike, routing_overlap: ArrayLike) -> np.ndarray:
    """How many independently routed tokens a verify pass of ``tokens`` n positions a sequence is worth
    when each shares ``routing_overlap`` q of its experts with the position before it (:func:`step`):

    .. math:: B\\,(1 + (n - 1)(1 - q))

    B·n under uniform routing (q = 0), B where every position routes as its sequence's first (q = 1)."""
    b, n, q = (np.asarray(v, dtype=float) for v in (batch, tokens, routing_overlap))
    return b * (1.0 + (n - 1.0) * (1.0 - q))


def step_work(gpu: roofline.GPU, target: Model, draft: Draft, *, batch: ArrayLike, gamma: ArrayLike,
              context: ArrayLike = 0, tree_tokens: ArrayLike | None = None, draft_width: ArrayLike = 1, tp: int = 1,
              dp: int = 1, ep: bool = False, precision: dtypes.Precision = dtypes.PRECISIONS["bf16"],
              link_gb_s: float | None = None, expert_tax: bool = True, prompt_tokens: ArrayLike = 0,
              output_tokens: ArrayLike = 1, expected_tokens: ArrayLike = 1, routing_overlap: ArrayLike = 0.0,
              prompt_routed_share: ArrayLike = 1.0) -> dict:
    """What a step's passes do, before the costs that time them (:func:`pass_work`): ``plain``, ``verify``
    over n = ``tree_tokens`` positions a sequence (γ + 1 for a chain) and ``draft`` (None for a draft on
    the host), with ``gamma``, ``parallel`` (one draft pass for all γ positions) and ``proposer`` (the
    share of drafted positions that pays the proposer's work around a pass). The arguments are
    :func:`step`'s (``expected_tokens``: E, which sets the prefill a speculative step carries when
    ``prompt_tokens`` > 0); many sets of costs (a band's draws) time the same work (:func:`step_seconds`,
    :func:`step_ratio`, decode only).

    Raises
    ------
    InputError
        What :func:`pass_time` and :func:`specviz.model.drafters.drafter` raise.
    """
    g = np.asarray(gamma, dtype=float)
    nodes = g + 1.0 if tree_tokens is None else np.asarray(tree_tokens, dtype=float)
    b, ctx = np.asarray(batch, dtype=float), np.asarray(context, dtype=float)
    timed = dict(tp=tp, dp=dp, ep=ep, precision=precision, link_gb_s=link_gb_s)
    prompt = np.asarray(prompt_tokens, dtype=float)
    per_step = b * prompt / np.asarray(output_tokens, dtype=float) if prompt.any() else 0.0
    mixed = dict(prefill_positions=0.5 * (prompt + 1.0))
    share = np.asarray(prompt_routed_share, dtype=float)
    plain = pass_work(gpu, target, b, 1.0, ctx, **timed, prefill_tokens=per_step, prefill_routed=per_step * share,
                      **mixed)
    overlap = np.asarray(routing_overlap, dtype=float)
    if not expert_tax:
        routed = b
    elif overlap.any():
        routed = verify_routed_tokens(b, nodes, overlap)
    else:
        routed = None
    verify_prefill = per_step * np.asarray(expected_tokens, dtype=float)
    verify = pass_work(gpu, target, b, nodes, ctx, **timed, routed_tokens=routed, prefill_tokens=verify_prefill,
                       prefill_routed=verify_prefill * share, **mixed)
    draft_context = ctx if draft.kv_budget is None else np.minimum(ctx, draft.kv_budget)
    width = np.asarray(draft_width, dtype=float)
    draft_model = drafter(target, draft)
    parallel = draft.kind in PARALLEL_DRAFTS
    # The share of drafted positions that each pays the proposer's work around a pass.
    proposer = proposer_passes(draft.kind, g) / g
    if draft_model is None:
        drafted = None
    elif parallel:
        drafted = pass_work(gpu, draft_model, b, g * width, draft_context, **timed)
    else:
        # A head's attention reads its own one-layer cache over the whole context.
        drafted = pass_work(gpu, draft_model, b, width, draft_context, **timed)
    return {"gamma": g, "plain": plain, "verify": verify, "draft": drafted, "parallel": parallel, "proposer": proposer}


def step_seconds(work: dict, costs: Costs) -> dict:
    """A step's times from its work (:func:`step_work`) at ``costs``, each cost a number or an array that
    broadcasts with the work: ``plain_s``, ``draft_s``, ``verify_s`` and ``spec_s`` as :func:`step`
    gives them, and the plain and verify passes' terms (``plain_pass``, ``verify_pass``:
    :func:`pass_seconds`), each at its own shape."""
    plain_pass, verify_pass = pass_seconds(work["plain"], costs), pass_seconds(work["verify"], costs)
    step_s = np.asarray(costs.step_ms, dtype=float) * 1e-3
    plain = plain_pass["time_s"] + step_s
    verify = verify_pass["time_s"] + step_s + np.asarray(costs.speculation_ms, dtype=float) * 1e-3
    around = np.asarray(costs.draft_pass_us, dtype=float) * 1e-6 * work["proposer"]
    one_draft = _draft_seconds(work, plain, lambda drafted: pass_seconds(drafted, costs)["time_s"]) + around
    return {"plain_s": plain, "draft_s": one_draft, "verify_s": verify, "spec_s": work["gamma"] * one_draft + verify,
            "plain_pass": plain_pass, "verify_pass": verify_pass}


def _draft_seconds(work: dict, plain_s: np.ndarray, seconds: Callable[[dict], np.ndarray]) -> np.ndarray:
    """The draft time per drafted position of a step's work (:func:`step_seconds`' ``draft_s``), with
    ``seconds`` the time of a pass's work: zeros of ``plain_s``'s shape for a draft on the host."""
    if work["draft"] is None:
        return np.zeros_like(plain_s)
    if work["parallel"]:
        # One pass drafts all γ positions; its time is spread over them, so that γ·t_draft stays the
        # step's draft time.
        return seconds(work["draft"]) / work["gamma"]
    return seconds(work["draft"])


def _linear_costs(work: dict, costs: Costs) -> tuple[np.ndarray, np.ndarray]:
    """A pass's costs beyond its roofline (:func:`pass_seconds`) as τ per token in the pass and c once:
    τ = t_token + Σ_k n_k s_k and c = layers·t_layer + Σ_k n_k t_allreduce, with n_k and s_k each
    collective's count and link seconds per token (:func:`pass_work`)."""
    per_token = costs.token_us * 1e-6 / work["ranks"] + sum(count * per_token_s for count, per_token_s in work["collectives"])
    once = work["layers"] * costs.layer_us * 1e-6 + sum(count * costs.allreduce_us * 1e-6 for count, _ in work["collectives"])
    return np.asarray(per_token), np.asarray(once)


def _pass_outer(work: dict, costs: Costs, once: ArrayLike = 0.0) -> np.ndarray:
    """:func:`pass_seconds`' time_s to rounding, plus ``once``, for work at the points (a last axis of
    length 1) and costs of the draws alone (the last axis): :func:`_timed_outer` with the pass's costs
    beyond its roofline as τ per token and c once (:func:`_linear_costs`)."""
    per_token, fixed = _linear_costs(work, costs)
    return _timed_outer(work, costs, [work["tokens"], 1.0], [per_token, fixed + once])


def _timed_outer(work: dict, costs: Costs, points: list, draws: list) -> np.ndarray:
    """A pass's roofline time (:func:`specviz.model.roofline.forward_seconds`, to rounding) plus
    Σ_j points_j ⊗ draws_j, for work and ``points`` at the points (a last axis of length 1) and costs
    and ``draws`` of the draws alone (the last axis).

    .. math:: \\max(t_c, t_m) + (1 - o)\\min(t_c, t_m) = \\max(t_c + (1 - o)t_m,\\ t_m + (1 - o)t_c)

    for o ≤ 1, t_c and t_m the work's FLOPs and bytes times the seconds per FLOP and per byte the costs
    reach: each side, with the terms added to both, a sum of products of a figure of the points and
    one of the draws, one matrix product (:func:`_outer_sum`); only the side of the regime where one
    holds throughout (:func:`specviz.model.roofline.one_regime`).
    """
    per_flop = 1.0 / (1e12 * np.asarray(costs.mfu))
    per_byte = 1.0 / (work["device"].bandwidth_tb_s * 1e12 * np.asarray(costs.mbu))
    keep = 1.0 - np.asarray(costs.overlap)
    compute, moved = work["compute"], work["bytes"]
    regime = roofline.one_regime(compute / moved, per_flop / per_byte)
    led = []
    if regime != "compute":
        led.append(_outer_sum([moved, compute, *points], [per_byte, keep * per_flop, *draws]))
    if regime != "memory":
        led.append(_outer_sum([compute, moved, *points], [per_flop, keep * per_byte, *draws]))
    return led[0] if len(led) == 1 else np.maximum(led[0], led[1], out=led[0])


def _outer_sum(points: list, draws: list) -> np.ndarray:
    """Σ_j points_j ⊗ draws_j, with each points_j of the points (a last axis of length 1) and each
    draws_j of the draws alone (the last axis): one matrix product of (points × j) by (j × draws). A
    product of a figure of the points and one of the draws runs numpy's loop once for every point
    (a band's 400 draws a run); the matrix product of two such pairs took about a third of the time of
    the two products and their sum."""
    shape = np.broadcast_shapes(*(np.shape(value) for value in points + draws))
    rows, columns = np.empty(shape[:-1] + (len(points),)), np.empty((len(draws),) + shape[-1:])
    for j, (point, draw) in enumerate(zip(points, draws)):
        rows[..., j] = np.asarray(point)[..., 0] if np.ndim(point) else point
        columns[j] = np.reshape(draw, -1)
    product = np.empty(shape)
    np.matmul(rows.reshape(-1, len(points)), columns, out=product.reshape(-1, shape[-1]))
    return product


def ratio_terms(work: dict, costs: Costs) -> dict:
    """The terms of t_spec / t_plain, the inverse of a step's speedup at E = 1, from its work
    (:func:`step_work`) at the points (a last axis of length 1) and ``costs`` of the draws alone (the
    last axis; a band's), for :func:`step_ratio`.

    A pass's cost per token and its collectives' transfers are linear in its tokens
    (:func:`_linear_costs`: τ per token, c once), so that

    .. math:: t_{spec} = \\underbrace{t_{roof} + B n\\,τ + c + t_{step} + t_{speculation}}_{t_{verify}} + γ\\,t_{draft}

    where only γ·t_draft mixes a figure of the points with one of the draws × batches. ``per_plain``
    (1 / t_plain) and ``draft`` (t_draft, the proposer's ``draft_pass_us`` included) are found here at their own shapes (the draws × batches), beside
    the verify pass's ``work`` and ``costs``, its ``tokens`` (B·n), ``per_token`` (τ) and ``once``
    (c + t_step + t_speculation), and ``gamma``.
    """
    verify, step_s = work["verify"], np.asarray(costs.step_ms, dtype=float) * 1e-3
    if work["plain"]["prefill"].any() or verify["prefill"].any():
        raise ValueError("ratio_terms times decode-only steps: step_work without prompt_tokens")
    plain = _pass_outer(work["plain"], costs, step_s)
    per_token, fixed = _linear_costs(verify, costs)
    around = np.asarray(costs.draft_pass_us, dtype=float) * 1e-6 * work["proposer"]
    spec_only = np.asarray(costs.speculation_ms, dtype=float) * 1e-3
    return {"per_plain": 1.0 / plain,
            "draft": _draft_seconds(work, plain, lambda drafted: _pass_outer(drafted, costs)) + around,
            "gamma": work["gamma"], "tokens": verify["tokens"], "per_token": per_token, "once": fixed + step_s + spec_only,
            "work": {"device": verify["device"], "compute": verify["compute"], "bytes": verify["bytes"]},
            "costs": {"mfu": np.asarray(costs.mfu), "mbu": np.asarray(costs.mbu), "overlap": np.asarray(costs.overlap)}}


def step_ratio(terms: dict) -> np.ndarray:
    """t_spec / t_plain, the inverse of a step's speedup at E = 1, from its terms (:func:`ratio_terms`,
    or a part of them: :func:`part_at`): :func:`step_seconds`' figures to rounding (a few units in
    the last place).

    .. math:: \\frac{t_{roof} + B n\\,τ + c + t_{step} + γ\\,t_{draft}}{t_{plain}}

    The verify pass's time is one or two matrix products (:func:`_timed_outer`), and three operations
    a point add the drafts and take the ratio, where :func:`step_seconds` takes some twenty and a
    division: the inverse is a product with 1 / t_plain, found at the draws × batches' shape (a
    division at every point took three times as long).
    """
    spec_s = _timed_outer(terms["work"], Costs(**terms["costs"]), [terms["tokens"], 1.0], [terms["per_token"], terms["once"]])
    spec_s = spec_s + terms["gamma"] * terms["draft"]
    spec_s *= terms["per_plain"]
    return spec_s


def part_at(values: dict, index: tuple) -> dict:
    """Arrays that broadcast over a grid of points (a step's work, :func:`step_work`, or its ratio's
    terms, :func:`ratio_terms`; nested in dicts) at ``index``, a slice for each axis of the points:
    each array is cut along the axes on which it is longer than 1 (it broadcasts along the others),
    so that the part's figures are the whole's at those points."""
    def part(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: part(item) for key, item in value.items()}
        if isinstance(value, np.ndarray) and value.ndim:
            value = value.reshape((1,) * (len(index) - value.ndim) + value.shape)
            return value[tuple(cut if size > 1 else slice(None) for cut, size in zip(index, value.shape))]
        return value
    return part(values)
