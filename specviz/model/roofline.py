"""What a forward pass costs on given hardware: a roofline that knows batch, context and KV cache.

A pass over T = B·N new tokens (B sequences, N new positions each, L cached positions each) takes

    t = max(t_c, t_m) + (1 − overlap)·min(t_c, t_m) + overhead
    t_c = FLOPs / (peak · mfu),   t_m = bytes / (bandwidth · mbu)

With the defaults (mfu = mbu = overlap = 1, overhead 0) this is the pure roofline and the ridge is
peak / bandwidth: 989.4 TFLOPS / 3.35 TB/s ≈ 295 FLOP/byte on an H100 SXM.

References
----------
S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual performance model",
CACM 52(4), 2009. J. Chen et al., "MagicDec: Breaking the Latency-Throughput Tradeoff for Long
Context Generation with Speculative Decoding", arXiv:2408.11049, 2024 (KV traffic at large batch ×
long context keeps the verify pass memory-bound).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from specviz.errors import InputError, Notice
from specviz.i18n import PresetText

from . import dtypes, spec
from .architecture import COMPONENTS, Model
from .preset_rows import read_rows

__all__ = [
    "GPU",
    "REALISTIC",
    "MAX_TFLOPS",
    "MAX_BANDWIDTH_TB_S",
    "MAX_DEVICES",
    "load_gpus",
    "forward_pass",
    "forward_work",
    "forward_seconds",
    "one_regime",
    "evaluate",
    "crossover_batch", "crossings",
    "experts_touched",
    "weights_gb",
    "cache_gb",
]

# Defaults of the "realistic" preset and why:
# - mbu 0.8: decode GEMVs on H100-class GPUs reach about 70-85 % of peak bandwidth;
# - mfu 0.6: GEMMs with a few hundred rows reach well under peak tensor throughput;
# - overlap 0: within one layer the weight stream and the matmuls of a small batch run largely
#   back to back, so their times add; this is what bends EAGLE-style speedups down from batch 2 to
#   64, where a pure roofline predicts them flat (reference: EAGLE-3 on H100, 1.81x at batch 2,
#   1.38x at batch 64);
# - overhead 0.3 ms per pass: kernel launches and scheduling per forward pass (CUDA graphs on).
REALISTIC: dict[str, float] = {"mfu": 0.6, "mbu": 0.8, "overlap": 0.0, "overhead_ms": 0.3}

# Largest device figures accepted, far above any accelerator (B200: 2,250 dense BF16 TFLOPS, 8 TB/s).
MAX_TFLOPS = 1e6
MAX_BANDWIDTH_TB_S = 1e4
# The most devices one pass is split over (8-way tensor parallelism in each of 64 data-parallel
# attention groups: specviz.model.step.tensor_parallel_device adds their figures), so a pass sees up
# to this many times the figures above.
MAX_DEVICES = 512

# Linear-attention state is kept in the model's dtype whatever the KV cache's (vLLM's
# mamba_ssm_cache_dtype "auto").
_STATE_BYTES = 2.0


@dataclass(frozen=True)
class GPU:
    """An accelerator preset. Figures missing from a primary source are NaN. ``memory_gb`` is in GB of
    10⁹ bytes, read from the preset's ``memory_gib`` (a datasheet's "80 GB" is 80 GiB, 85.9 GB)."""

    id: str
    name: str
    kind: str
    tflops: float
    bandwidth_tb_s: float
    memory_gb: float
    source: str
    note: str = ""
    tflops_fp8: float = float("nan")
    link_gb_s: float = float("nan")  # one way, per device (NVLink: half the datasheet's both-ways total)
    tflops_fp4: float = float("nan")
    scale_up_gpus: float = float("nan")  # GPUs on one scale-up link (NVLink domain): 8 in a HGX, 72 in a NVL72
    scale_out_gb_s: float = float("nan")  # one way, per GPU, beyond the domain (one 400 Gb/s NIC a GPU: 50)

    def peak(self, compute: dtypes.Compute) -> float:
        """Dense TFLOPS of a matmul at ``compute``: the FP8 or FP4 peak where the device has one, else
        the BF16 peak (the weights are expanded to BF16 for the matmul)."""
        return {"bf16": self.tflops, "fp8": self.tflops_fp8, "fp4": self.tflops_fp4}[self.runs_at(compute)]

    def runs_at(self, compute: dtypes.Compute) -> dtypes.Compute:
        """The compute a matmul at ``compute`` runs at on this device: ``compute`` where the device
        has that unit's peak, else ``bf16`` (NVFP4 weights on an H100 or H200 are expanded to BF16),
        the peak :meth:`peak` and :meth:`ridge_at` use. ``w4a8`` (MXFP4 weights) runs at ``fp8``
        where the device has FP4 units, its activations MXFP8, and at ``bf16`` elsewhere
        (:mod:`specviz.model.dtypes`). ``nvfp4`` runs at ``fp4`` on NVIDIA's FP4 units only: elsewhere
        (MI355X's FP4 units take the MX formats' E8M0 scales) vLLM emulates it with BF16 matmuls."""
        if compute == "w4a8":
            return "fp8" if np.isfinite(self.tflops_fp4) and np.isfinite(self.tflops_fp8) else "bf16"
        if compute == "nvfp4":
            return "fp4" if np.isfinite(self.tflops_fp4) and str(self.name).startswith("NVIDIA") else "bf16"
        figure = {"bf16": self.tflops, "fp8": self.tflops_fp8, "fp4": self.tflops_fp4}[compute]
        return compute if np.isfinite(figure) else "bf16"

    @property
    def ridge(self) -> float:
        """Ridge point in FLOP per byte: peak FLOP/s over bytes/s (BF16)."""
        return self.tflops / self.bandwidth_tb_s

    def ridge_at(self, compute: dtypes.Compute) -> float:
        """Ridge point of matmuls at ``compute``: :meth:`peak` over bandwidth."""
        return self.peak(compute) / self.bandwidth_tb_s

    def joins(self, devices: int) -> bool:
        """Whether one copy of a model can span ``devices`` of this GPU as the step model prices it
        (:func:`specviz.model.step.link_bandwidth`): one always; more over its link, within its scale-up
        domain or past it where a scale-out network joins the domains (a device whose preset gives a
        link but no domain, a PCIe card's, any number over that link). A device without a link figure
        joins none: the sidebar refuses the split, and no advice offers it."""
        if devices <= 1:
            return True
        if not (np.isfinite(self.link_gb_s) and self.link_gb_s > 0):
            return False
        return bool(not np.isfinite(self.scale_up_gpus) or devices <= self.scale_up_gpus
                    or np.isfinite(self.scale_out_gb_s))

    @property
    def complete(self) -> bool:
        """True when both the peak FLOPS and the bandwidth are known."""
        return bool(np.isfinite(self.tflops) and np.isfinite(self.bandwidth_tb_s)
                    and self.tflops > 0 and self.bandwidth_tb_s > 0)


# A datasheet's memory "GB" are GiB: an "80 GB" H100 shows 81,559 MiB in nvidia-smi (79.6 GiB, 85.5 GB),
# a 192 GB MI300X 196,592 MiB. specviz counts memory in GB of 10⁹ bytes, as it counts weights and cache.
GB_PER_GIB = 2 ** 30 / 1e9


def _number(text: str) -> float:
    return float(text) if text.strip() else float("nan")


def load_gpus(data_dir: Path) -> dict[str, GPU]:
    """GPU presets from ``data_dir/gpus.csv`` keyed by id (figures left empty there become NaN; name
    and note with their translations, :class:`specviz.i18n.PresetText`)."""
    return {row["id"]: GPU(id=row["id"], name=PresetText.from_row(row, "name"), kind=row["kind"],
                           tflops=_number(row["tflops_bf16_dense"]),
                           bandwidth_tb_s=_number(row["bandwidth_tb_s"]),
                           memory_gb=_number(row["memory_gib"]) * GB_PER_GIB, source=row["source"],
                           note=PresetText.from_row(row, "note"), tflops_fp8=_number(row["tflops_fp8_dense"]),
                           link_gb_s=_number(row["link_gb_s_one_way"]), tflops_fp4=_number(row["tflops_fp4_dense"]),
                           scale_up_gpus=_number(row["scale_up_gpus"]), scale_out_gb_s=_number(row["scale_out_gb_s"]))
            for row in read_rows(Path(data_dir) / "gpus.csv")}


def _check_range(value: ArrayLike, name: str | Notice, low: float, high: float = np.inf,
                 low_open: bool = False) -> np.ndarray:
    """``value`` as a float array, refused unless finite and within the bounds; ``name`` names it in
    the message (an argument's name, or a ``roofline.name.*`` message for a figure's words)."""
    v = np.asarray(value, dtype=float)
    # The extremes decide (a NaN makes both NaN, which fails every comparison): two reductions, where
    # a test of each value took five operations and cost a grid's step model 0.2 ms.
    smallest, largest = (v.min(), v.max()) if v.size else (np.inf, low)
    if not ((smallest > low) if low_open else (smallest >= low)) or not (largest <= high and largest < np.inf):
        bracket = "(" if low_open else "["
        if np.isfinite(high):
            raise InputError("roofline.range", name=name, bracket=bracket, low=low, high=high)
        raise InputError("roofline.range_unbounded", name=name, bracket=bracket, low=low)
    return v


def forward_pass(gpu: GPU, model: Model, batch: ArrayLike, new_tokens: ArrayLike,
                 context: ArrayLike = 0, *, mfu: float = 1.0, mbu: float = 1.0,
                 overlap: float = 1.0, overhead_ms: float = 0.0,
                 precision: dtypes.Precision = dtypes.PRECISIONS["bf16"], tensor_split: int = 1,
                 dense_copies: float = 1.0, routed_tokens: ArrayLike | None = None) -> dict[str, np.ndarray]:
    """FLOPs, bytes and time of one forward pass of ``model`` over B·N new tokens.

    FLOPs = Σ_c 2·P_c·T + Σ_g layers_g·(f_g·T·min(L + (N + 1)/2, W_g) + φ_g·T), with T = B·N, P_c the
    active parameters of component c that take part in a matmul (an untied input embedding's rows are
    only gathered; a tied table is counted once, as the output head, which reads it whole), and per
    attention group g (:class:`specviz.model.architecture.Attention`) f_g FLOPs per position read,
    W_g its window and φ_g its FLOPs per token that do not depend on the context (linear attention).
    The attention term is causal: the i-th new token reads L + i positions, L + (N + 1)/2 on average,
    at most W_g.

    Bytes = Σ_c b_c·(weights of c read) + B·Σ_g layers_g·(c_g·(min(L, W_g) + N)·b_kv + σ_g·s_g·(1 + N)·b_s):
    each component at its format's bytes (:mod:`specviz.model.dtypes`); the cache's reads of the
    positions each layer attends to and writes of the N new ones; a linear-attention layer's state
    read once and written after each new token (σ_g = 1), as engines keep it to roll back to the
    accepted position (vLLM's hybrid models with speculative decoding); a compressor's ring
    (DeepSeek-V4) the share σ_g of it a position reads and writes, at its own format b_s. Weights read are every parameter
    except an untied input embedding, plus the T gathered embedding rows; in MoE layers only the
    experts that some token is routed to are read: E·(1 − (1 − k/E)^T) of them under uniform
    routing, the expert tax that a verify pass of B·(γ + 1) tokens pays over a plain one of B.
    ``routed_tokens`` replaces T there (None: T): B prices a verify pass whose drafts go to their
    sequence's experts, the bound without the tax. Activations are not counted (small beside weights and KV at decode shapes).

    On a group of devices (:func:`specviz.model.step.pass_time`): a layer's cache and state split
    over at most its ``kv_heads`` of the ``tensor_split`` devices its attention is split over, and are
    copied max(1, tensor_split / kv_heads) times beyond (vLLM replicates KV heads; MLA's one latent is
    on every device); the weights other than the routed experts are read ``dense_copies`` times (once
    by each data-parallel attention group).

    Time: ``max(t_c, t_m) + (1 − overlap)·min(t_c, t_m) + overhead_ms``, with
    t_c = Σ FLOPs_c / (peak_c·mfu), each component's matmuls at its format's peak
    (:meth:`GPU.peak`) and attention at the KV cache's, and t_m = bytes/(bandwidth·mbu).

    Returns
    -------
    dict
        ``flops``, ``bytes``, ``compute_s``, ``memory_s``, ``time_s`` (arrays broadcast over the
        inputs).
    """
    work = forward_work(gpu, model, batch, new_tokens, context, precision=precision, tensor_split=tensor_split,
                        dense_copies=dense_copies, routed_tokens=routed_tokens)
    seconds = forward_seconds(gpu, work, mfu=mfu, mbu=mbu, overlap=overlap)
    return {"flops": work["flops"], "bytes": work["bytes"], "compute_s": seconds["compute_s"],
            "memory_s": seconds["memory_s"], "time_s": seconds["time_s"] + overhead_ms * 1e-3}


def forward_work(gpu: GPU, model: Model, batch: ArrayLike, new_tokens: ArrayLike, context: ArrayLike = 0, *,
                 precision: dtypes.Precision = dtypes.PRECISIONS["bf16"], tensor_split: int = 1,
                 dense_copies: float = 1.0, routed_tokens: ArrayLike | None = None, prefill_tokens: ArrayLike = 0.0,
                 prefill_positions: ArrayLike = 0.0, prefill_routed: ArrayLike | None = None) -> dict[str, np.ndarray]:
    """What :func:`forward_pass` computes before its shares of peak and overlap: ``flops``, ``bytes``
    and ``compute``, Σ FLOPs_c / peak_c over the matmuls and the attention at their peaks (TFLOPS), so
    that the seconds at full peak are compute / 10¹². Many sets of those knobs (a band's draws) time
    the same work (:func:`forward_seconds`).

    ``prefill_tokens`` p are prompt tokens of other requests that the same pass carries (chunked
    prefill mixed into a decode step, as vLLM's scheduler packs them), each reading
    ``prefill_positions`` cached positions on average (about half its prompt). They add

    .. math:: 2\\,(P_{active} - P_{emb})\\,p + Σ_g \\text{layers}_g (f_g\\,p \\min(L_p, W_g) + φ_g\\,p)

    FLOPs, with P_emb the embeddings and the LM head (a prompt token's hidden state goes through no
    LM head: only each request's last position is sampled) and L_p = ``prefill_positions``; the writes of their p cache entries and their gathered embedding rows, and they are
    routed too, so that the experts read are those of T + p tokens. A chunk reads its prompt's earlier
    cache once, not once per token: those reads, and a linear-attention layer's state, are left out
    (a few hundred MB a step beside the weights). ``prefill_routed`` (None: p) are those of them
    that reach the routed experts, in their matmuls and the experts they read: fewer where p prices
    the busiest of several data-parallel attention ranks as if every rank carried its prompt tokens
    (:func:`specviz.workload.first_token`), while the experts, shared by all ranks, see each rank's own.

    Raises
    ------
    InputError
        As :func:`forward_pass`: an incomplete or out-of-range device, or a batch, new tokens or
        context out of range.
    """
    if not gpu.complete:
        raise InputError("roofline.gpu_incomplete", gpu=gpu.id)
    # A device, or the devices of a tensor-parallel group as one: a group of MAX_DEVICES at the largest
    # figures a device may have is still a finite, positive speed.
    _check_range(gpu.tflops, Notice("roofline.name.peak_tflops"), 0, MAX_TFLOPS * MAX_DEVICES, low_open=True)
    _check_range(gpu.bandwidth_tb_s, Notice("roofline.name.bandwidth"), 0, MAX_BANDWIDTH_TB_S * MAX_DEVICES,
                 low_open=True)
    b = _check_range(batch, "batch", 1)
    n = _check_range(new_tokens, "new_tokens", 1)
    ctx = _check_range(context, "context", 0)
    tokens = b * n
    prefill = _check_range(prefill_tokens, "prefill_tokens", 0)
    # Without prefill the terms below are skipped, not added as zeros (a grid's hot path).
    mixed = bool(prefill.any())
    untied_input = 0 if model.tied_embeddings else model.embedding_params
    flops, compute, weights = 0.0, 0.0, 0.0
    routed_prefill = prefill if prefill_routed is None or not mixed else _check_range(prefill_routed, "prefill_tokens", 0)
    for component in COMPONENTS:
        weight_format = precision.weight_format(model, component)
        carried = routed_prefill if component == "experts" else prefill
        matmul = 2.0 * (model.active[component] - (untied_input if component == "embeddings" else 0)) * (
            tokens + carried if mixed and component != "embeddings" else tokens)
        flops, compute = flops + matmul, compute + matmul / gpu.peak(weight_format.compute)
        read = float(model.params[component])
        if component == "embeddings":
            read = read - untied_input + (tokens + prefill if mixed else tokens) * model.hidden_size
        elif component == "experts" and model.num_experts:
            routed = tokens if routed_tokens is None else routed_tokens
            routed = routed + routed_prefill if mixed else routed
            read = read * experts_touched(model, routed) / model.num_experts
        if component != "experts":
            read = read * dense_copies
        weights = weights + weight_format.bytes * read
    prompt_positions = _check_range(prefill_positions, "prefill_positions", 0) if mixed else 0.0
    attention_flops, cache_bytes = 0.0, 0.0
    for group in model.attention:
        positions = np.minimum(ctx + 0.5 * (n + 1.0), group.window)
        attention_flops = attention_flops + group.layers * tokens * (group.flops_per_position * positions
                                                                     + group.flops_per_token)
        copies = max(1.0, tensor_split / group.kv_heads)
        cache_bytes = cache_bytes + copies * b * group.layers * (
            group.cached * (np.minimum(ctx, group.window) + n) * precision.kv_bytes
            + group.state * group.state_share * (1.0 + n) * (group.state_bytes or _STATE_BYTES))
        if mixed:
            attention_flops = attention_flops + group.layers * prefill * (
                group.flops_per_position * np.minimum(prompt_positions, group.window) + group.flops_per_token)
            cache_bytes = cache_bytes + copies * group.layers * group.cached * prefill * precision.kv_bytes
    flops = flops + attention_flops
    compute = compute + attention_flops / gpu.peak(precision.kv_compute)
    return {"flops": flops, "bytes": weights + cache_bytes, "compute": compute}


def forward_seconds(gpu: GPU, work: dict[str, np.ndarray], *, mfu: ArrayLike = 1.0, mbu: ArrayLike = 1.0,
                    overlap: ArrayLike = 1.0) -> dict[str, np.ndarray]:
    """A pass's time from its work (:func:`forward_work`) on ``gpu``, as :func:`forward_pass` gives it
    without its overhead: ``compute_s`` = compute / (10¹²·mfu), ``memory_s`` = bytes / (bandwidth·mbu)
    and ``time_s`` = max(t_c, t_m) + (1 − overlap)·min(t_c, t_m), each knob a number or an array that
    broadcasts with the work."""
    compute_s = work["compute"] / (1e12 * mfu)
    memory_s = work["bytes"] / (gpu.bandwidth_tb_s * 1e12 * mbu)
    time_s = np.maximum(compute_s, memory_s) + (1.0 - overlap) * np.minimum(compute_s, memory_s)
    return {"compute_s": compute_s, "memory_s": memory_s, "time_s": time_s}


def one_regime(intensity: ArrayLike, ratio: ArrayLike) -> str | None:
    """``memory`` where every pass's compute time is below its memory time, ``compute`` where every one
    is above, else None: t_c / t_m is the intensity (FLOPs per byte, at the points) times the ratio
    (bandwidth over peak, at the knobs'), decided within a margin far above rounding's."""
    if np.max(intensity, initial=-np.inf) * np.max(ratio) < 1.0 - 1e-9:
        return "memory"
    if np.min(intensity, initial=np.inf) * np.min(ratio) > 1.0 + 1e-9:
        return "compute"
    return None


def evaluate(gpu: GPU, target: Model, draft: Model | None = None, *, alpha: ArrayLike,
             gamma: ArrayLike, batch: ArrayLike, context: ArrayLike = 0, mfu: float = 1.0,
             mbu: float = 1.0, overlap: float = 1.0, overhead_ms: float = 0.0,
             draft_cost: float = spec.SEED_DRAFT_COST,
             precision: dtypes.Precision = dtypes.PRECISIONS["bf16"]) -> dict[str, np.ndarray]:
    """Speculative decoding on a roofline, over arrays of α, γ, batch and context at once.

    Baseline step: one target pass over B tokens, emitting B tokens.
    Speculative step: γ draft passes over B tokens, then one target verify pass over B·(γ + 1)
    tokens, emitting B·E(α, γ) tokens. With v = t_verify/t_base and c = t_draft/t_base,
    speedup = E / (v + γc), the form of :func:`specviz.model.spec.speedup`.

    Parameters
    ----------
    gpu, target : GPU, Model
    draft : Model, optional
        The draft model. Without one (n-gram, EAGLE head), a draft pass costs ``draft_cost``
        times a baseline pass.
    alpha : array_like
        Per-position acceptance α in [0, 1].
    gamma : array_like
        Draft length, whole numbers ≥ 1.
    batch : array_like
        Concurrent sequences B ≥ 1.
    context : array_like
        Cached positions per sequence L ≥ 0 (held fixed over the step).
    mfu, mbu : float
        Achieved share of peak FLOPS and of peak bandwidth, in (0, 1].
    overlap : float
        1: compute and memory time overlap fully (pure roofline); 0: they add up.
    overhead_ms : float
        Fixed time per forward pass (launches, scheduling).
    draft_cost : float
        Without a draft model, a draft pass's time over a baseline pass's.
    precision : Precision
        The formats of the weights and the KV cache.

    Returns
    -------
    dict of ndarray
        ``alpha, gamma, batch, context, tokens_per_verify, regime`` ("memory"/"compute", of the
        verify pass), ``baseline_regime, ridge_flop_per_byte, verify_intensity, baseline_step_ms,
        verify_step_ms, draft_step_ms, verify_cost, draft_cost, expected_tokens, speedup,
        baseline_tokens_per_s, spec_tokens_per_s``, all broadcast to one shape.

    Notes
    -----
    Only E and the final ratios are computed on the full grid: the passes depend on (γ, batch,
    context) alone, so an α axis costs one multiply per point.
    """
    a = np.asarray(alpha, dtype=float)
    g = np.asarray(gamma, dtype=float)
    e = np.asarray(spec.expected_tokens(a, g))
    _check_range(mfu, "mfu", 0, 1, low_open=True)
    _check_range(mbu, "mbu", 0, 1, low_open=True)
    _check_range(overlap, "overlap", 0, 1)
    _check_range(overhead_ms, "overhead_ms", 0)
    _check_range(draft_cost, "draft_cost", 0)
    knobs = dict(mfu=mfu, mbu=mbu, overlap=overlap, overhead_ms=overhead_ms, precision=precision)
    b = np.asarray(batch, dtype=float)
    ctx = np.asarray(context, dtype=float)
    base = forward_pass(gpu, target, b, 1.0, ctx, **knobs)
    verify = forward_pass(gpu, target, b, g + 1.0, ctx, **knobs)
    if draft is not None:
        draft_s = forward_pass(gpu, draft, b, 1.0, ctx, **knobs)["time_s"]
    else:
        draft_s = draft_cost * base["time_s"]
    spec_s = g * draft_s + verify["time_s"]
    speed = e * base["time_s"] / spec_s
    ridge = gpu.ridge * mfu / mbu
    out = {
        "alpha": a, "gamma": g, "batch": b, "context": ctx,
        "tokens_per_verify": b * (g + 1.0),
        "regime": np.where(verify["compute_s"] > verify["memory_s"], "compute", "memory"),
        "baseline_regime": np.where(base["compute_s"] > base["memory_s"], "compute", "memory"),
        "ridge_flop_per_byte": np.asarray(ridge),
        "verify_intensity": verify["flops"] / verify["bytes"],
        "baseline_step_ms": base["time_s"] * 1e3,
        "verify_step_ms": verify["time_s"] * 1e3,
        "draft_step_ms": draft_s * 1e3,
        "verify_cost": verify["time_s"] / base["time_s"],
        "draft_cost": draft_s / base["time_s"],
        "expected_tokens": e,
        "speedup": speed,
        "baseline_tokens_per_s": b / base["time_s"],
        "spec_tokens_per_s": b * e / spec_s,
    }
    shape = np.broadcast_shapes(*(np.shape(v) for v in out.values()))
    return {key: np.broadcast_to(value, shape) for key, value in out.items()}


def weights_gb(model: Model, precision: dtypes.Precision = dtypes.PRECISIONS["bf16"],
               dense_copies: float = 1.0) -> float:
    """The weights of ``model`` in GB (10⁹ bytes), each component at its format's bytes, all but the
    routed experts ``dense_copies`` times (once by each data-parallel attention group).

    .. math:: W = \\sum_c b_c P_c\\,r_c,\\quad r_{experts} = 1,\\ r_c = \\text{dense\\_copies}
    """
    return sum(precision.weight_format(model, c).bytes * model.params[c] * (1.0 if c == "experts" else dense_copies)
               for c in COMPONENTS) / 1e9


def cache_gb(model: Model, batch: ArrayLike, context: ArrayLike, gamma: ArrayLike = 0,
             precision: dtypes.Precision = dtypes.PRECISIONS["bf16"], tensor_split: int = 1) -> float | np.ndarray:
    """The caches of ``batch`` sequences of ``model`` in GB: each holds L + γ + 1 positions (the
    context and a verify pass's new ones), each layer up to its window, and a linear-attention
    state for each of the γ + 1 positions a verify pass may roll back to (a compressor's ring once)
    (:meth:`specviz.model.architecture.Model.cache_bytes`, its copies over ``tensor_split`` devices).

    .. math:: K = B\\,\\text{cache}(L + γ + 1)
    """
    b, ctx, g = (np.asarray(v, dtype=float) for v in (batch, context, gamma))
    result = b * model.cache_bytes(ctx + g + 1.0, precision.kv_bytes, _STATE_BYTES, state_copies=g + 1.0,
                                   tensor_split=tensor_split) / 1e9
    return float(result) if np.ndim(result) == 0 else result


def experts_touched(model: Model, tokens: ArrayLike) -> np.ndarray:
    """Routed experts per MoE layer that a pass over ``tokens`` tokens reads, under uniform routing.

    .. math:: E\\,(1 - (1 - k/E)^T)

    Each token picks k of the E experts, so it leaves a given expert out with probability exactly
    1 − k/E; T tokens routed independently leave it out with probability (1 − k/E)^T, and the
    expected count of experts some token picks is E times the rest. An expert no token picks is not
    read. A verify pass of B·(γ + 1) tokens reads more of them than a plain pass of B: the expert tax.
    0 for a dense model.
    """
    t = np.asarray(tokens, dtype=float)
    if not model.num_experts:
        return np.zeros_like(t)
    return model.num_experts * (1.0 - (1.0 - model.experts_per_token / model.num_experts) ** t)


def crossover_batch(batch: ArrayLike, values: ArrayLike, threshold: float = 1.0) -> float | np.ndarray:
    """Smallest batch from which ``values`` stay below ``threshold`` up to the last batch.

    For a curve that falls once this is where it first falls below. A mixture of experts' speedup
    can dip below 1 at small batches (its verify pass reads more experts than a plain pass) and
    rise above it again once a plain pass reads most of them: the dip is not where speculation
    stops paying (:func:`crossings` gives every crossing).

    Parameters
    ----------
    batch : array_like
        Increasing batch sizes (1-D), matching the last axis of ``values``.
    values : array_like
        E.g. the speedup from :func:`evaluate` with batch on the last axis.
    threshold : float
        1.0 for "speculation stops paying".

    Returns
    -------
    float or ndarray
        The batch, or NaN where the last value is not below the threshold.
    """
    b = np.asarray(batch, dtype=float)
    below = np.asarray(values) < threshold
    # The last batch at or above the threshold, counted from the end; the one after it is the answer.
    from_end = np.argmax(~below[..., ::-1], axis=-1)
    first = np.where((~below).any(axis=-1), below.shape[-1] - from_end, 0)
    result = np.where(below[..., -1], b[np.minimum(first, b.size - 1)], np.nan)
    return float(result) if np.ndim(result) == 0 else result


def crossings(batch: ArrayLike, values: ArrayLike, threshold: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every batch at which ``values`` cross ``threshold``: where they fall below it, and where they
    rise to it again (a mixture of experts' dip, :func:`crossover_batch`).

    Parameters
    ----------
    batch : array_like
        Increasing batch sizes (1-D), matching the last axis of ``values``.
    values : array_like
        1-D or 2-D (rows of curves, batch on the last axis).
    threshold : float
        The level crossed (a speedup of 1 by default).

    Returns
    -------
    rows, batches, rises : ndarray
        For each crossing, in order along each row: its row (0 for a 1-D ``values``), the first batch
        on its new side, and whether the values rise to the threshold there (else they fall below).
        The first batch counts as a fall where it is already below.
    """
    b = np.asarray(batch)
    below = np.atleast_2d(np.asarray(values) < threshold)
    # A column of "not below" before the first batch: a curve that starts below falls at batch 1.
    change = np.diff(np.concatenate([np.zeros((below.shape[0], 1), dtype=bool), below], axis=1).astype(np.int8), axis=1)
    rows, cols = np.nonzero(change)
    return rows, b[cols], change[rows, cols] < 0
