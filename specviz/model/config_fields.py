"""A config.json's fields as specviz reads them: what each may hold (:data:`CONFIG_LIMITS`), the check
every field passes before a family's reader sees it (:func:`check_config`), and the reads that refuse
a missing or impossible value by its field's name (:func:`require`, :func:`window_of`).

The checks do work that does not grow with any value in the file (a list is walked once, bounded by
a layer count checked before it), so a hostile config is refused quickly; each refusal is an
:class:`~specviz.errors.InputError` that names the field, its bound and what it held
(:func:`describe`: never the whole of a big value). Read by :mod:`specviz.model.hf_config` and the
family modules beside it.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Mapping, NamedTuple

from specviz.errors import InputError, Notice

__all__ = ["LAYER_KINDS", "ConfigLimit", "CONFIG_LIMITS", "describe", "routed_experts", "check_config", "flatten",
           "require", "window_of"]

LAYER_KINDS = {"full_attention": "full", "sliding_attention": "sliding", "chunked_attention": "chunked",
               "linear_attention": "linear", "deepseek_sparse_attention": "sparse"}
# What a per-layer list of each kind may hold (CONFIG_LIMITS): attention kinds, GLM-5.2's indexer of its
# own or the previous full layer's, GLM-5's dense or MoE MLP, or a bit.
_PER_LAYER = {"types": tuple(LAYER_KINDS), "indexers": ("full", "shared"), "mlps": ("dense", "sparse"), "bits": (0, 1)}
_POSITIONS = 2**30  # the most positions a context or window field may give (Llama 4 Scout: 10,485,760)
# Objects of fields a family nests in its config (Kimi-Linear's linear_attn_config), read as
# "object.field" keys of CONFIG_LIMITS.
_NESTED = ("linear_attn_config",)


class ConfigLimit(NamedTuple):
    """What one config.json field may hold (see :data:`CONFIG_LIMITS`)."""

    kind: Literal["count", "flag", "layers", "types", "indexers", "mlps", "bits", "ratios", "choice"]
    low: int = 0
    high: int | str = 0
    allowed: tuple[Any, ...] = ()


# Every config.json field the model reads, with what it may hold. Kinds: "count" is a JSON integer
# in [low, high]; "flag" is a JSON boolean; "layers" is a list of distinct integer layer indexes in
# [low, high + low) (numbered from 0, or from 1 where low is 1: Kimi-Linear's); "types", "indexers" and "mlps" are lists of one of _PER_LAYER's names per layer (high:
# the layer count); "bits" is a list of 0 or 1 per layer, or empty; "ratios" is a list of one of
# ``allowed`` per layer and per MTP layer (num_nextn_predict_layers); "choice" is one of ``allowed``.
# A high given as a field name is that field's
# value, checked earlier in this table. Absolute bounds hold the largest published models
# (Llama-3.1-405B: 126 layers, hidden 16384, 128 heads, intermediate 53,248; Gemma 3: vocabulary
# 262,144, head_dim 256; Qwen3-Next: 512 routed experts) with a margin of eight times or more, and
# keep every count far from overflow. null means the same as a missing key, as in Hugging Face's
# own config classes.
CONFIG_LIMITS: dict[str, ConfigLimit] = {
    "hidden_size": ConfigLimit("count", 1, 131_072),
    "num_hidden_layers": ConfigLimit("count", 1, 1024),
    "num_attention_heads": ConfigLimit("count", 1, 1024),
    "num_key_value_heads": ConfigLimit("count", 1, "num_attention_heads"),
    "head_dim": ConfigLimit("count", 1, 2048),
    "vocab_size": ConfigLimit("count", 1, 4_194_304),
    "draft_vocab_size": ConfigLimit("count", 1, "vocab_size"),
    "target_hidden_size": ConfigLimit("count", 1, 131_072),
    "max_position_embeddings": ConfigLimit("count", 1, _POSITIONS),
    "intermediate_size": ConfigLimit("count", 1, 1_048_576),
    "intermediate_size_mlp": ConfigLimit("count", 1, 1_048_576),
    "moe_intermediate_size": ConfigLimit("count", 1, 1_048_576),
    "shared_expert_intermediate_size": ConfigLimit("count", 0, 1_048_576),
    "num_local_experts": ConfigLimit("count", 0, 4096),
    "num_experts": ConfigLimit("count", 0, 4096),
    "n_routed_experts": ConfigLimit("count", 0, 4096),
    "n_shared_experts": ConfigLimit("count", 0, 64),
    "num_experts_per_tok": ConfigLimit("count", 1, "experts"),  # num_local_experts, num_experts or n_routed_experts
    "experts_per_token": ConfigLimit("count", 1, "experts"),
    "decoder_sparse_step": ConfigLimit("count", 1, "num_hidden_layers"),
    "mlp_only_layers": ConfigLimit("layers", 0, "num_hidden_layers"),
    "first_k_dense_replace": ConfigLimit("count", 0, "num_hidden_layers"),
    "moe_layer_freq": ConfigLimit("count", 1, "num_hidden_layers"),
    "interleave_moe_layer_step": ConfigLimit("count", 1, "num_hidden_layers"),
    "num_nextn_predict_layers": ConfigLimit("count", 0, 64),
    "q_lora_rank": ConfigLimit("count", 1, 131_072),
    "kv_lora_rank": ConfigLimit("count", 1, 131_072),
    "qk_rope_head_dim": ConfigLimit("count", 1, 2048),
    "qk_nope_head_dim": ConfigLimit("count", 0, 2048),
    "v_head_dim": ConfigLimit("count", 1, 2048),
    "index_n_heads": ConfigLimit("count", 1, 1024),
    "index_head_dim": ConfigLimit("count", 1, 2048),
    "index_topk": ConfigLimit("count", 1, _POSITIONS),
    # GLM-5
    "qk_head_dim": ConfigLimit("count", 1, 4096),
    "indexer_types": ConfigLimit("indexers", 0, "num_hidden_layers"),
    "mlp_layer_types": ConfigLimit("mlps", 0, "num_hidden_layers"),
    "sliding_window": ConfigLimit("count", 1, _POSITIONS),
    "sliding_window_pattern": ConfigLimit("count", 1, "num_hidden_layers"),
    "attention_chunk_size": ConfigLimit("count", 1, _POSITIONS),
    "layer_types": ConfigLimit("types", 0, "num_hidden_layers"),
    "no_rope_layers": ConfigLimit("bits", 0, "num_hidden_layers"),
    "full_attention_interval": ConfigLimit("count", 1, "num_hidden_layers"),
    "linear_num_key_heads": ConfigLimit("count", 1, 1024),
    "linear_num_value_heads": ConfigLimit("count", 1, 1024),
    "linear_key_head_dim": ConfigLimit("count", 1, 2048),
    "linear_value_head_dim": ConfigLimit("count", 1, 2048),
    "linear_conv_kernel_dim": ConfigLimit("count", 1, 64),
    # Qwen3.5
    "attn_output_gate": ConfigLimit("flag"),
    "mtp_num_hidden_layers": ConfigLimit("count", 0, 64),
    "mtp_use_dedicated_embeddings": ConfigLimit("flag"),
    # MiniMax-M2
    "rotary_dim": ConfigLimit("count", 1, "head_dim"),
    "use_routing_bias": ConfigLimit("flag"),
    "use_mtp": ConfigLimit("flag"),
    "num_mtp_modules": ConfigLimit("count", 0, 64),
    "mtp_transformer_layers": ConfigLimit("count", 1, 64),
    "tie_word_embeddings": ConfigLimit("flag"),
    "attention_bias": ConfigLimit("flag"),
    "mlp_bias": ConfigLimit("flag"),
    "use_qk_norm": ConfigLimit("flag"),
    # DeepSeek-V4 (specviz.model.family_deepseek_v4): ratios 0 (a sliding window only), 4 and 128 as
    # vLLM's DeepseekV4MLAAttention takes them (it refuses any other), experts as its
    # DeepseekV4FP8Config reads them.
    "o_lora_rank": ConfigLimit("count", 1, 131_072),
    "o_groups": ConfigLimit("count", 1, "num_attention_heads"),
    "hc_mult": ConfigLimit("count", 1, 64),
    "num_hash_layers": ConfigLimit("count", 0, "num_hidden_layers"),
    "compress_ratios": ConfigLimit("ratios", 0, "num_hidden_layers", (0, 4, 128)),
    "expert_dtype": ConfigLimit("choice", allowed=("fp4", "fp8")),
    # Kimi-Linear and Kimi-K3 (specviz.model.family_kimi_k3): layers numbered from 1 in
    # linear_attn_config, as vLLM's KimiLinearConfig.is_kda_layer reads them.
    "num_experts_per_token": ConfigLimit("count", 1, "experts"),
    "num_shared_experts": ConfigLimit("count", 0, 64),
    "routed_expert_hidden_size": ConfigLimit("count", 1, 131_072),
    "latent_moe_use_norm": ConfigLimit("flag"),
    "attn_res_block_size": ConfigLimit("count", 1, "num_hidden_layers"),
    "mla_use_nope": ConfigLimit("flag"),
    "mla_use_output_gate": ConfigLimit("flag"),
    "linear_attn_config.kda_layers": ConfigLimit("layers", 1, "num_hidden_layers"),
    "linear_attn_config.full_attn_layers": ConfigLimit("layers", 1, "num_hidden_layers"),
    "linear_attn_config.num_heads": ConfigLimit("count", 1, 1024),
    "linear_attn_config.head_dim": ConfigLimit("count", 1, 2048),
    "linear_attn_config.short_conv_kernel_size": ConfigLimit("count", 1, 64),
    "linear_attn_config.use_full_rank_gate": ConfigLimit("flag"),
}


def describe(value: Any) -> str | Notice:
    """A short rendering of a config value for an error message (never the whole of a big value):
    a scalar as JSON spells it, anything else as the kind of value it is (a ``hf_config.kind.*``
    message, in the reader's language)."""
    if isinstance(value, Mapping):
        return Notice("hf_config.kind.object")
    if isinstance(value, (list, tuple)):
        return Notice("hf_config.kind.list")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if abs(value) < 10**40 else Notice("hf_config.kind.long_number")
    if isinstance(value, (str, bool, float)) or value is None:
        text = json.dumps(value)  # JSON's spelling: true, null, NaN, "text"
        return text if len(text) <= 40 else text[:39] + "…"
    return Notice("hf_config.kind.python", type=type(value).__name__)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _layers_problem(value: Any, low: int, high: int) -> str | Notice | None:
    """What is wrong with a list of distinct layer indexes in [low, high), or None if nothing."""
    if not isinstance(value, list):
        return describe(value)
    seen: set[int] = set()
    for item in value:
        if not (_is_int(item) and low <= item < high):
            return Notice("hf_config.kind.list_holding", item=describe(item))
        if item in seen:
            return Notice("hf_config.kind.list_twice", item=item)
        seen.add(item)
    return None


def _per_layer_problem(value: Any, allowed: tuple[Any, ...], layers: int, empty_ok: bool) -> str | Notice | None:
    """What is wrong with a list of one of ``allowed`` per layer, or None if nothing."""
    if not isinstance(value, list):
        return describe(value)
    if not (len(value) == layers or empty_ok and not value):
        return Notice("hf_config.kind.list_of", count=len(value))
    for item in value:
        if isinstance(item, bool) or item not in allowed:
            return Notice("hf_config.kind.list_holding", item=describe(item))
    return None


# The fields that name the routed experts per MoE layer (:func:`routed_experts`).
_EXPERT_COUNTS = ("num_local_experts", "num_experts", "n_routed_experts")


def routed_experts(values: Mapping[str, Any]) -> int:
    """Routed experts per MoE layer: Mixtral and gpt-oss name the field num_local_experts,
    Qwen-MoE num_experts, DeepSeek n_routed_experts."""
    return values.get("num_local_experts") or values.get("num_experts") or values.get("n_routed_experts") or 0


def _bound(limit: ConfigLimit, checked: Mapping[str, Any]) -> tuple[int | None, str | Notice]:
    """The upper bound of a limit and how to name it (the number, or a ``hf_config.bound.*`` message
    naming the field it comes from); None when the field it names is unset."""
    if not isinstance(limit.high, str):
        return limit.high, f"{limit.high:,}"
    if limit.high == "experts":
        # An expert count given as 0 bounds too: Mixtral's num_local_experts 0 beside num_experts_per_tok 2
        # had read as a dense model, without a word (an attack pass).
        given = [key for key in _EXPERT_COUNTS if checked.get(key) is not None]
        high, label = routed_experts(checked), Notice("hf_config.field.experts")
        if given and high == 0:  # the expert count is named, as DeepSeek's n_routed_experts of 0 is
            raise InputError("hf_config.count", field=given[0], low=1, bound=f"{CONFIG_LIMITS[given[0]].high:,}",
                             value=describe(0))
    else:
        high, label = checked.get(limit.high), limit.high
    if not high:
        return None, label
    if limit.kind == "layers" and limit.low == 0:
        return high, Notice("hf_config.bound.last", last=high - 1, field=label)
    return high, Notice("hf_config.bound.field", high=high, field=label)


def check_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Check every field of :data:`CONFIG_LIMITS` that ``config`` sets (null counts as unset).

    Returns the values of the fields that are set; raises :class:`InputError` naming the first field
    that breaks its limit. A field bounded by another field that is unset (or by the expert count in a
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
                raise InputError("hf_config.flag", field=key, value=describe(value))
        elif limit.kind == "choice":
            if not isinstance(value, str) or value not in limit.allowed:
                raise InputError("hf_config.choice", field=key, allowed=", ".join(limit.allowed),
                                 value=describe(value))
        elif high is None:
            continue
        elif limit.kind == "count":
            if not _is_int(value) or not limit.low <= value <= high:
                raise InputError("hf_config.count", field=key, low=limit.low, bound=bound, value=describe(value))
        elif limit.kind == "layers":
            if (problem := _layers_problem(value, limit.low, high + limit.low)) is not None:
                raise InputError("hf_config.layers", field=key, low=limit.low, bound=bound, problem=problem)
        else:
            allowed = limit.allowed or _PER_LAYER[limit.kind]
            if limit.kind == "ratios":  # DeepSeek-V4's list holds its MTP layers' ratios after the layers'
                high += checked.get("num_nextn_predict_layers", 0)
            if (problem := _per_layer_problem(value, allowed, high, empty_ok=limit.kind == "bits")) is not None:
                raise InputError("hf_config.per_layer", field=key, layers=high,
                                 allowed=", ".join(map(str, allowed)), problem=problem)
        checked[key] = value
    return checked


def flatten(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with the fields of each object of :data:`_NESTED` as "object.field" keys (a null
    object is unset; one that is not an object is refused, named)."""
    flat = dict(config)
    for key in _NESTED:
        nested = flat.pop(key, None)
        if nested is None:
            continue
        if not isinstance(nested, Mapping):
            raise InputError("hf_config.object", field=key, value=describe(nested))
        flat.update((f"{key}.{field}", value) for field, value in nested.items() if isinstance(field, str))
    return flat


def require(values: Mapping[str, Any], key: str) -> Any:
    """The checked value of a field the model cannot do without."""
    if key not in values:
        limit = CONFIG_LIMITS[key]
        _, bound = _bound(limit, values)
        if limit.kind == "ratios":
            raise InputError("hf_config.missing_per_layer", field=key, allowed=", ".join(map(str, limit.allowed)),
                             layers=values["num_hidden_layers"] + values.get("num_nextn_predict_layers", 0))
        raise InputError("hf_config.missing", field=key, low=limit.low, bound=bound)
    return values[key]


def window_of(values: Mapping[str, Any], key: str) -> int:
    """A window the model uses (``sliding_window``, ``attention_chunk_size``), refused when it is
    missing or exceeds the context limit the config states."""
    window = require(values, key)
    limit = values.get("max_position_embeddings")
    if limit is not None and window > limit:
        raise InputError("hf_config.window_beyond_context", field=key, value=window, limit=limit)
    return window
