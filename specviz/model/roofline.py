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

import csv
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, Mapping, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from specviz.errors import InputError, Notice
from specviz.i18n import PresetText

from . import spec

__all__ = [
    "GPU",
    "Model",
    "ConfigLimit",
    "CONFIG_LIMITS",
    "REALISTIC",
    "MAX_TFLOPS",
    "MAX_BANDWIDTH_TB_S",
    "MAX_DEVICES",
    "load_gpus",
    "load_models",
    "model_from_config",
    "model_from_config_bytes",
    "forward_pass",
    "evaluate",
    "crossover_batch",
    "footprint_gb",
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
# The most devices one pass is split over (tensor parallelism: specviz.model.step.tensor_parallel_device
# adds their figures), so a pass sees up to this many times the figures above.
MAX_DEVICES = 8

SUPPORTED_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "mixtral")


@dataclass(frozen=True)
class GPU:
    """An accelerator preset. Figures missing from a primary source are NaN."""

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

    @property
    def ridge(self) -> float:
        """Ridge point in FLOP per byte: peak FLOP/s over bytes/s."""
        return self.tflops / self.bandwidth_tb_s

    @property
    def complete(self) -> bool:
        """True when both the peak FLOPS and the bandwidth are known."""
        return bool(np.isfinite(self.tflops) and np.isfinite(self.bandwidth_tb_s)
                    and self.tflops > 0 and self.bandwidth_tb_s > 0)


@dataclass(frozen=True)
class Model:
    """Shape and exact parameter counts of a decoder-only transformer, from its config.json."""

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
    params_total: int
    params_active: int
    source: str = ""

    @property
    def embedding_params(self) -> int:
        """Parameters of the input embedding table (vocab × hidden)."""
        return self.vocab_size * self.hidden_size

    def kv_bytes_per_token(self, kv_dtype_bytes: float = 2.0) -> float:
        """KV-cache bytes per token: 2 (K and V) · layers · kv_heads · head_dim · dtype bytes."""
        return 2.0 * self.layers * self.kv_heads * self.head_dim * kv_dtype_bytes


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _number(text: str) -> float:
    return float(text) if text.strip() else float("nan")


def load_gpus(data_dir: Path) -> dict[str, GPU]:
    """GPU presets from ``data_dir/gpus.csv`` keyed by id (figures left empty there become NaN; name
    and note with their translations, :class:`specviz.i18n.PresetText`)."""
    return {row["id"]: GPU(id=row["id"], name=PresetText.from_row(row, "name"), kind=row["kind"],
                           tflops=_number(row["tflops_bf16_dense"]),
                           bandwidth_tb_s=_number(row["bandwidth_tb_s"]),
                           memory_gb=_number(row["memory_gb"]), source=row["source"],
                           note=PresetText.from_row(row, "note"), tflops_fp8=_number(row["tflops_fp8_dense"]),
                           link_gb_s=_number(row["link_gb_s_one_way"]))
            for row in _read_csv(Path(data_dir) / "gpus.csv")}


def load_models(data_dir: Path) -> dict[str, Model]:
    """Model presets from ``data_dir/models.csv``, each derived from its shipped config.json (the
    name with its translations)."""
    models = {}
    for row in _read_csv(Path(data_dir) / "models.csv"):
        model = model_from_config(Path(data_dir) / "model_configs" / row["config"], name=PresetText.from_row(row, "name"))
        models[row["id"]] = Model(**{**asdict(model), "source": row["source"]})
    return models


class ConfigLimit(NamedTuple):
    """What one config.json field may hold (see :data:`CONFIG_LIMITS`)."""

    kind: Literal["count", "flag", "layers"]
    low: int = 0
    high: int | str = 0


# Every config.json field the model reads, with what it may hold. Kinds: "count" is a JSON integer
# in [low, high]; "flag" is a JSON boolean; "layers" is a list of distinct integer layer indexes in
# [low, high). A high given as a field name is that field's value, checked earlier in this table.
# Absolute bounds hold the largest published models (Llama-3.1-405B: 126 layers, hidden 16384,
# 128 heads, intermediate 53,248; Gemma 3: vocabulary 262,144, head_dim 256; DeepSeek-V3: 256
# routed experts) with a margin of eight times or more, and keep every count far from overflow.
# null means the same as a missing key, as in Hugging Face's own config classes.
CONFIG_LIMITS: dict[str, ConfigLimit] = {
    "hidden_size": ConfigLimit("count", 1, 131_072),
    "num_hidden_layers": ConfigLimit("count", 1, 1024),
    "num_attention_heads": ConfigLimit("count", 1, 1024),
    "num_key_value_heads": ConfigLimit("count", 1, "num_attention_heads"),
    "head_dim": ConfigLimit("count", 1, 2048),
    "vocab_size": ConfigLimit("count", 1, 4_194_304),
    "intermediate_size": ConfigLimit("count", 1, 1_048_576),
    "moe_intermediate_size": ConfigLimit("count", 1, 1_048_576),
    "shared_expert_intermediate_size": ConfigLimit("count", 0, 1_048_576),
    "num_local_experts": ConfigLimit("count", 0, 4096),
    "num_experts": ConfigLimit("count", 0, 4096),
    "num_experts_per_tok": ConfigLimit("count", 1, "experts"),  # num_local_experts or num_experts
    "decoder_sparse_step": ConfigLimit("count", 1, "num_hidden_layers"),
    "mlp_only_layers": ConfigLimit("layers", 0, "num_hidden_layers"),
    "tie_word_embeddings": ConfigLimit("flag"),
    "attention_bias": ConfigLimit("flag"),
    "mlp_bias": ConfigLimit("flag"),
}


def _describe(value: Any) -> str | Notice:
    """A short rendering of a config value for an error message (never the whole of a big value):
    a scalar as JSON spells it, anything else as the kind of value it is (a ``roofline.kind.*``
    message, in the reader's language)."""
    if isinstance(value, Mapping):
        return Notice("roofline.kind.object")
    if isinstance(value, (list, tuple)):
        return Notice("roofline.kind.list")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if abs(value) < 10**40 else Notice("roofline.kind.long_number")
    if isinstance(value, (str, bool, float)) or value is None:
        text = json.dumps(value)  # JSON's spelling: true, null, NaN, "text"
        return text if len(text) <= 40 else text[:39] + "…"
    return Notice("roofline.kind.python", type=type(value).__name__)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _layers_problem(value: Any, low: int, high: int) -> str | Notice | None:
    """What is wrong with a list of distinct layer indexes in [low, high), or None if nothing."""
    if not isinstance(value, list):
        return _describe(value)
    seen: set[int] = set()
    for item in value:
        if not (_is_int(item) and low <= item < high):
            return Notice("roofline.kind.list_holding", item=_describe(item))
        if item in seen:
            return Notice("roofline.kind.list_twice", item=item)
        seen.add(item)
    return None


def _experts(values: Mapping[str, Any]) -> int:
    """Experts per MoE layer: Mixtral names the field num_local_experts, Qwen-MoE num_experts."""
    return values.get("num_local_experts") or values.get("num_experts") or 0


def _bound(limit: ConfigLimit, checked: Mapping[str, Any]) -> tuple[int | None, str | Notice]:
    """The upper bound of a limit and how to name it (the number, or a ``roofline.bound.*`` message
    naming the field it comes from); None when the field it names is unset."""
    if not isinstance(limit.high, str):
        return limit.high, f"{limit.high:,}"
    if limit.high == "experts":
        high, label = _experts(checked), Notice("roofline.field.experts")
    else:
        high, label = checked.get(limit.high), limit.high
    if not high:
        return None, label
    if limit.kind == "layers":
        return high, Notice("roofline.bound.last", last=high - 1, field=label)
    return high, Notice("roofline.bound.field", high=high, field=label)


def _check_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check every field of :data:`CONFIG_LIMITS` that ``config`` sets (null counts as unset).

    Returns the values of the fields that are set; raises ValueError naming the first field that
    breaks its limit. A field bounded by another field that is unset (or by the expert count in a
    dense model) is not used by the model and is left alone.
    """
    checked: dict[str, Any] = {}
    for key, limit in CONFIG_LIMITS.items():
        value = config.get(key)
        if value is None:
            continue
        high, bound = _bound(limit, checked)
        if limit.kind == "flag":
            if not isinstance(value, bool):
                raise InputError("roofline.flag", field=key, value=_describe(value))
        elif high is None:
            continue
        elif limit.kind == "count":
            if not _is_int(value) or not limit.low <= value <= high:
                raise InputError("roofline.count", field=key, low=limit.low, bound=bound, value=_describe(value))
        elif (problem := _layers_problem(value, limit.low, high)) is not None:
            raise InputError("roofline.layers", field=key, low=limit.low, bound=bound, problem=problem)
        checked[key] = value
    return checked


def _require(values: Mapping[str, Any], key: str) -> Any:
    """The checked value of a field the model cannot do without."""
    if key not in values:
        limit = CONFIG_LIMITS[key]
        _, bound = _bound(limit, values)
        raise InputError("roofline.missing", field=key, low=limit.low, bound=bound)
    return values[key]


def _load_json(text: str | bytes, name: str) -> Any:
    """Parse one config.json, turning every way it can fail into a ValueError that names it."""
    try:
        return json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)
    except UnicodeDecodeError:
        raise InputError("roofline.not_utf8", name=name) from None
    except RecursionError:  # json.loads recurses once per nesting level
        raise InputError("roofline.too_deep", name=name) from None
    except ValueError as exc:  # JSONDecodeError, and integers too long to convert
        raise InputError("roofline.not_json", name=name, detail=str(exc)) from None


def model_from_config(config: str | Path | Mapping[str, Any], name: str | None = None) -> Model:
    """Exact parameter counts and shape from a Hugging Face ``config.json``, read offline.

    Counts every weight and bias of the architectures in ``SUPPORTED_MODEL_TYPES``:

    * attention: q (h·n_h·d), k and v (h·n_kv·d each), o (n_h·d·h); q/k/v biases for Qwen2
      (and all four with ``attention_bias``); q/k RMS norms of size d for Qwen3;
    * MLP: gate, up and down (3·h·i); MoE layers: a router (h·E) and E experts of 3·h·i_moe, plus a
      shared expert and its gate where the config has one (Qwen2-MoE);
    * two RMS norms per layer and a final norm (h each); the embedding (V·h) and, unless
      ``tie_word_embeddings``, an output head (V·h).

    Active parameters per token count k of the E experts instead of all E.

    Every field read is checked against :data:`CONFIG_LIMITS` first (JSON type and range), and the
    work done does not grow with any value in the file.

    Parameters
    ----------
    config : str, Path or mapping
        Path to a config.json, or its parsed content.
    name : str, optional
        Display name; defaults to the file stem or the model_type.

    Returns
    -------
    Model

    Raises
    ------
    ValueError
        If the file is not UTF-8 JSON (or is nested too deeply to parse), the model_type is
        unsupported, or a field is missing, of the wrong JSON type or out of range. The message
        names the field and says what it may hold.

    References
    ----------
    Hugging Face transformers modeling files (LlamaForCausalLM, Qwen2/Qwen3(-MoE), Mixtral).
    Checked against published totals: Llama-3.1-8B 8,030,261,248; Qwen3-30B-A3B 30.5B / 3.3B active.
    """
    if isinstance(config, (str, Path)):
        path = Path(config)
        config = _load_json(path.read_bytes(), path.name)
        name = name or path.stem
    if not isinstance(config, Mapping):
        raise InputError("roofline.not_object")
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or model_type not in SUPPORTED_MODEL_TYPES:
        raise InputError("roofline.model_type", value=_describe(model_type), supported=", ".join(SUPPORTED_MODEL_TYPES))
    values = _check_config(config)
    num_experts = _experts(values)
    h = _require(values, "hidden_size")
    layers = _require(values, "num_hidden_layers")
    n_h = _require(values, "num_attention_heads")
    vocab = _require(values, "vocab_size")
    n_kv = values.get("num_key_value_heads", n_h)
    if n_h % n_kv:
        raise InputError("roofline.heads_multiple", heads=n_h, kv_heads=n_kv)
    d = values.get("head_dim", h // n_h)
    if not 1 <= d <= CONFIG_LIMITS["head_dim"].high:
        raise InputError("roofline.head_dim", value=d, high=CONFIG_LIMITS["head_dim"].high)
    tied = values.get("tie_word_embeddings", False)

    attention = 2 * h * n_h * d + 2 * h * n_kv * d
    if model_type in ("qwen2", "qwen2_moe"):
        attention += n_h * d + 2 * n_kv * d
    elif values.get("attention_bias"):
        attention += n_h * d + 2 * n_kv * d + h
    if model_type in ("qwen3", "qwen3_moe"):
        attention += 2 * d
    per_layer_fixed = attention + 2 * h

    if num_experts:
        k = _require(values, "num_experts_per_tok")
        # Mixtral's experts use intermediate_size; Qwen-MoE names theirs moe_intermediate_size.
        expert_key = "moe_intermediate_size" if "moe_intermediate_size" in values else "intermediate_size"
        expert = 3 * h * _require(values, expert_key)
        shared_i = values.get("shared_expert_intermediate_size", 0)
        moe_fixed = h * num_experts + (3 * h * shared_i + h if shared_i else 0)
        # Layer i is sparse when (i + 1) % step == 0 and it is not in mlp_only_layers (as in
        # transformers); counted arithmetically so that the time does not grow with the layer count.
        step = values.get("decoder_sparse_step", 1)
        dense_only = set(values.get("mlp_only_layers", ()))
        moe_layers = layers // step - sum(1 for i in dense_only if (i + 1) % step == 0)
    else:
        k, expert, moe_fixed, moe_layers = 0, 0, 0, 0
    dense_layers = layers - moe_layers
    dense_mlp = 3 * h * _require(values, "intermediate_size") if dense_layers else 0
    if dense_layers and values.get("mlp_bias"):
        dense_mlp += 2 * values["intermediate_size"] + h

    embeddings = vocab * h * (1 if tied else 2)
    common = embeddings + h + layers * per_layer_fixed + dense_layers * dense_mlp + moe_layers * moe_fixed
    return Model(name=name or model_type, model_type=model_type, layers=layers,
                 hidden_size=h, num_heads=n_h, kv_heads=n_kv, head_dim=d, vocab_size=vocab,
                 tied_embeddings=tied, num_experts=num_experts, experts_per_token=k,
                 moe_layers=moe_layers, expert_params=expert,
                 params_total=common + moe_layers * num_experts * expert,
                 params_active=common + moe_layers * k * expert)


def model_from_config_bytes(data: bytes, name: str, max_bytes: int) -> Model:
    """:func:`model_from_config` for an upload or a paste: size-limited, UTF-8, one JSON object.

    Raises
    ------
    ValueError
        If ``data`` is empty, larger than ``max_bytes``, not UTF-8 text, not JSON or nested too
        deeply to parse, or if :func:`model_from_config` refuses it; the message names ``name`` or
        the field and says what was expected.
    """
    if not data.strip():
        raise InputError("roofline.empty", name=name)
    if len(data) > max_bytes:
        raise InputError("roofline.too_large", name=name, size=len(data), limit=max_bytes)
    return model_from_config(_load_json(data, name), name=name)


def _check_range(value: ArrayLike, name: str | Notice, low: float, high: float = np.inf,
                 low_open: bool = False) -> np.ndarray:
    """``value`` as a float array, refused unless finite and within the bounds; ``name`` names it in
    the message (an argument's name, or a ``roofline.name.*`` message for a figure's words)."""
    v = np.asarray(value, dtype=float)
    bad = (v <= low) if low_open else (v < low)
    if not np.all(np.isfinite(v)) or np.any(bad | (v > high)):
        bracket = "(" if low_open else "["
        if np.isfinite(high):
            raise InputError("roofline.range", name=name, bracket=bracket, low=low, high=high)
        raise InputError("roofline.range_unbounded", name=name, bracket=bracket, low=low)
    return v


def forward_pass(gpu: GPU, model: Model, batch: ArrayLike, new_tokens: ArrayLike,
                 context: ArrayLike = 0, *, mfu: float = 1.0, mbu: float = 1.0,
                 overlap: float = 1.0, overhead_ms: float = 0.0, weight_bytes: float = 2.0,
                 kv_bytes: float = 2.0) -> dict[str, np.ndarray]:
    """FLOPs, bytes and time of one forward pass of ``model`` over B·N new tokens.

    FLOPs = 2·P_mm·T + 4·layers·n_h·d·T·(L + (N + 1)/2), with T = B·N and P_mm the active parameters that
    take part in a matmul (all active ones except an untied input embedding, whose rows are only
    gathered; a tied table is counted once, as the output head, which reads it whole). The
    attention term is causal: the i-th new token scores L + i positions, L + (N + 1)/2 on average.

    Bytes = weight_bytes·(weights read) + kv_bytes-sized KV traffic B·(L + N)·kv_bytes_per_token
    (reads of the L cached positions, writes of the N new ones). Weights read are all parameters
    except an untied input embedding, plus the T gathered embedding rows; in MoE layers only the
    experts that some token is routed to are read: E·(1 − (1 − k/E)^T) of them under uniform
    routing. Activations are not counted (small beside weights and KV at decode shapes).

    Time: ``max(t_c, t_m) + (1 − overlap)·min(t_c, t_m) + overhead_ms``, with
    t_c = FLOPs/(peak·mfu) and t_m = bytes/(bandwidth·mbu).

    Returns
    -------
    dict
        ``flops``, ``bytes``, ``compute_s``, ``memory_s``, ``time_s`` (arrays broadcast over the
        inputs).
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
    untied_input = 0 if model.tied_embeddings else model.embedding_params
    matmul_params = model.params_active - untied_input
    flops = 2.0 * matmul_params * tokens + (
        4.0 * model.layers * model.num_heads * model.head_dim * tokens * (ctx + 0.5 * (n + 1.0)))
    weights = float(model.params_total - untied_input) + tokens * model.hidden_size
    if model.num_experts:
        unused_share = (1.0 - model.experts_per_token / model.num_experts) ** tokens
        touched = model.num_experts * (1.0 - unused_share)
        weights = weights - model.moe_layers * model.expert_params * (model.num_experts - touched)
    nbytes = weight_bytes * weights + b * (ctx + n) * model.kv_bytes_per_token(kv_bytes)
    compute_s = flops / (gpu.tflops * 1e12 * mfu)
    memory_s = nbytes / (gpu.bandwidth_tb_s * 1e12 * mbu)
    time_s = (np.maximum(compute_s, memory_s) + (1.0 - overlap) * np.minimum(compute_s, memory_s)
              + overhead_ms * 1e-3)
    return {"flops": flops, "bytes": nbytes, "compute_s": compute_s, "memory_s": memory_s,
            "time_s": time_s}


def evaluate(gpu: GPU, target: Model, draft: Model | None = None, *, alpha: ArrayLike,
             gamma: ArrayLike, batch: ArrayLike, context: ArrayLike = 0, mfu: float = 1.0,
             mbu: float = 1.0, overlap: float = 1.0, overhead_ms: float = 0.0,
             draft_cost: float = spec.SEED_DRAFT_COST, weight_bytes: float = 2.0,
             kv_bytes: float = 2.0) -> dict[str, np.ndarray]:
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
    knobs = dict(mfu=mfu, mbu=mbu, overlap=overlap, overhead_ms=overhead_ms,
                 weight_bytes=weight_bytes, kv_bytes=kv_bytes)
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


def footprint_gb(target: Model, draft: Model | None, batch: ArrayLike, context: ArrayLike,
                 gamma: ArrayLike = 0, weight_bytes: float = 2.0,
                 kv_bytes: float = 2.0) -> float | np.ndarray:
    """Device memory that weights and KV caches need, in GB (10⁹ bytes).

    .. math:: M = w·(P_t + P_d) + B·(L + γ + 1)·(kv_t + kv_d)

    Activations, CUDA graphs and allocator slack are not counted, so a real server needs more;
    compare with the GPU's memory to see whether the pair fits on one device at all (the roofline
    models one device, no tensor parallelism).
    """
    models = [m for m in (target, draft) if m is not None]
    weights = weight_bytes * sum(m.params_total for m in models)
    positions = np.asarray(batch, dtype=float) * (np.asarray(context, dtype=float)
                                                  + np.asarray(gamma, dtype=float) + 1.0)
    kv = positions * sum(m.kv_bytes_per_token(kv_bytes) for m in models)
    result = (weights + kv) / 1e9
    return float(result) if np.ndim(result) == 0 else result


def crossover_batch(batch: ArrayLike, values: ArrayLike, threshold: float = 1.0) -> float | np.ndarray:
    """Smallest batch at which ``values`` first falls below ``threshold``.

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
        The batch, or NaN where the values never fall below the threshold.
    """
    b = np.asarray(batch, dtype=float)
    below = np.asarray(values) < threshold
    first = np.argmax(below, axis=-1)
    result = np.where(below.any(axis=-1), b[first], np.nan)
    return float(result) if np.ndim(result) == 0 else result
