"""A checkpoint's ``quantization_config``: the format of each component as it ships.

Read by :func:`specviz.model.hf_config.model_from_config`. The methods read: ``fp8`` (DeepSeek's
128 × 128 blocks with ``weight_block_size``), ``fbgemm_fp8``, ``mxfp4`` (gpt-oss), ``gptq`` and
``awq`` at 4 bits, ``modelopt`` (FP8, NVFP4, and ``MIXED_PRECISION``: each module's own
``quant_algo`` in ``quantized_layers``, a module not listed BF16) and ``compressed-tensors`` (its first
group: INT4, FP8 or NVFP4/MXFP4; Kimi-K3's ``mxfp4-pack-quantized`` groups of 32 with E8M0 scales are
MXFP4) and AMD Quark's (``quark``: FP8, INT4, MXFP4 W4A8 and W4A4, globally or per
``layer_quant_config`` pattern, :func:`_quark`). A component a config leaves out (``modules_to_not_convert``,
``ignored_layers``, ``exclude_modules`` or ``ignore``: names, globs or ``re:`` expressions) stays BF16.
A multimodal checkpoint names its language model's modules under ``model.language_model.`` (Qwen3.5),
which is matched as ``model.``.
DeepSeek-V4's experts take their own format: MXFP4 where the config's ``expert_dtype`` is ``fp4``,
NVFP4 where its ``quantization_config`` names ``moe_quant_algo`` NVFP4 (NVIDIA's checkpoints).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Mapping

from .architecture import COMPONENTS

__all__ = ["weight_formats"]

# Module names that stand for each component, as quantization configs name the modules they leave
# out (a glob, a name prefix or a ``re:`` expression). The MLP component stands for its largest part:
# the shared experts or dense layers where the model has them, else the routers; attention for its
# softmax projections or a hybrid's linear attention (layer 1 of Qwen3-Next and Qwen3.5 is linear);
# Mixtral's and MiniMax-M2's MoE block is block_sparse_moe.
_MODULES = {
    "attention": ("model.layers.1.self_attn.q_proj", "model.layers.1.linear_attn.in_proj_qkv"),
    "experts": ("model.layers.1.mlp.experts.0.gate_proj", "model.layers.1.block_sparse_moe.experts.0.w1"),
    "dense": ("model.layers.0.mlp.gate_proj",),
    "shared": ("model.layers.1.mlp.shared_experts.gate_proj", "model.layers.1.mlp.shared_expert.gate_proj"),
    "router": ("model.layers.1.mlp.gate", "model.layers.1.mlp.router", "model.layers.1.block_sparse_moe.gate"),
}
# A ``re:`` pattern is matched only when it is short, repeats no group and has few unbounded
# repeats: a module name is about 45 characters, so backtracking stays within 45³ steps.
_PATTERN_CHARS = 200
_PATTERN_REPEATS = 3
# A multimodal checkpoint's prefix of its language model's modules, beside the plain one.
_PREFIXES = ("model.", "model.language_model.")
# ModelOpt's per-module algorithms (``MIXED_PRECISION``'s ``quantized_layers``) as formats; W4A16_NVFP4
# stores NVFP4 weights.
_MODELOPT = {"FP8": "fp8", "NVFP4": "nvfp4", "W4A16_NVFP4": "nvfp4"}
_LISTED_LAYERS = 100_000  # the most quantized_layers entries looked at (a 78-layer model lists ~1,500)


def _matches(pattern: str, name: str) -> bool:
    """Whether a module ``name`` is one a quantization config's ``pattern`` leaves out."""
    if pattern.startswith("re:"):
        expression = pattern[3:]
        if (len(expression) > _PATTERN_CHARS or re.search(r"\)[*+?{]", expression)
                or len(re.findall(r"(?<!\\)[*+]", expression)) > _PATTERN_REPEATS):
            return False
        try:
            return re.match(expression, name) is not None
        except re.error:
            return False
    if "*" in pattern or "?" in pattern:
        return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(name, pattern + ".*")
    return f".{pattern}." in f".{name}."


def _names(part: str) -> list[str]:
    """The module names that stand for ``part`` (a key of :data:`_MODULES`), under each of
    :data:`_PREFIXES`."""
    return [prefix + name.removeprefix("model.") for name in _MODULES[part] for prefix in _PREFIXES]


def _left_out(patterns: list[Any], parts: tuple[str, ...]) -> bool:
    """Whether the modules of every one of ``parts`` (keys of :data:`_MODULES`) are left out."""
    texts = [p for p in patterns if isinstance(p, str)][:1000]
    return all(any(_matches(p, name) for p in texts for name in _names(part)) for part in parts)


def _per_module(layers: Any, parts: tuple[str, ...]) -> str | None:
    """The format ModelOpt's ``quantized_layers`` gives the first of ``parts`` it lists (a module
    named by itself or by one that holds it), "bf16" where it lists none, None where it is no object
    or names an algorithm not in :data:`_MODELOPT`."""
    if not isinstance(layers, Mapping):
        return None
    listed = [(key, value) for key, value in list(layers.items())[:_LISTED_LAYERS] if isinstance(key, str)]
    for part in parts:
        for name in _names(part):
            for key, value in listed:
                if f".{name}.".startswith(f".{key}."):
                    algo = value.get("quant_algo") if isinstance(value, Mapping) else None
                    return _MODELOPT.get(str(algo).upper())
    return "bf16"


def weight_formats(quantization: Any, *, shared: bool, dense: bool, experts: bool,
                   expert_dtype: str | None = None) -> tuple[dict[str, str], bool]:
    """Each component's format as a checkpoint's ``quantization_config`` gives it: FP8 (DeepSeek's
    128 × 128 blocks, fbgemm's per channel), MXFP4 (gpt-oss), compressed-tensors INT4, FP8 or NVFP4
    groups (Kimi-K2.5), ModelOpt FP8 or NVFP4, GPTQ or AWQ INT4. The input embedding and the head stay
    BF16, as every method read here leaves them.

    ``shared``, ``dense`` and ``experts`` say whether the model has shared experts, dense MLP layers
    and routed experts: the MLP component stands for its largest part (the routers where it has
    neither of the first two). ``expert_dtype`` is DeepSeek-V4's field: ``fp4`` ships the experts in
    MXFP4, FP4 with an E8M0 scale per 32 (the reference ``inference/model.py``'s float4_e2m1fn_x2
    with ``fp4_block_size`` 32; vLLM's DeepseekV4FP8Config gives them Mxfp4MoEMethod), unless the
    quantization config's ``moe_quant_algo`` is NVFP4; ``fp8`` or none leaves them at the config's
    format (the reference's default dtype).

    Returns
    -------
    formats : dict
        Component → a format of :data:`specviz.model.dtypes.FORMATS`.
    read : bool
        False where a ``quantization_config`` is given and not read here: a method of another kind,
        none (a null or missing ``quant_method``), or a config that is not an object. Its weights are
        then read as BF16, which the caller says.
    """
    formats = dict.fromkeys(COMPONENTS, "bf16")
    if quantization is None:
        return formats, True
    if not isinstance(quantization, Mapping):
        return formats, False
    method = quantization.get("quant_method")
    ignore = (quantization.get("modules_to_not_convert") or quantization.get("ignored_layers")
              or quantization.get("exclude_modules") or quantization.get("ignore") or [])
    if method == "fp8":
        chosen = "fp8-block" if quantization.get("weight_block_size") else "fp8"
    elif method == "fbgemm_fp8":
        chosen = "fp8"
    elif method == "mxfp4":
        chosen = "mxfp4"
    elif method in ("gptq", "awq") and quantization.get("bits") == 4:
        chosen = "int4-g32" if quantization.get("group_size") == 32 else "int4"
    elif method == "modelopt" and str(quantization.get("quant_algo", "")).upper() == "MIXED_PRECISION":
        return _mixed_precision(quantization.get("quantized_layers"), formats, shared=shared, dense=dense,
                                experts=experts)
    elif method == "modelopt":
        chosen = {"FP8": "fp8", "NVFP4": "nvfp4"}.get(str(quantization.get("quant_algo", "")).upper())
    elif method == "compressed-tensors":
        chosen = _compressed_tensors(quantization)
    elif method == "quark":
        return _quark(quantization, formats, shared=shared, dense=dense, experts=experts)
    else:
        chosen = None
    if chosen is None:
        return formats, False
    ignore = ignore if isinstance(ignore, list) else []
    for component, modules in _components(shared=shared, dense=dense, experts=experts):
        formats[component] = "bf16" if _left_out(ignore, modules) else chosen
    if experts and str(quantization.get("moe_quant_algo", "")).upper() == "NVFP4":
        formats["experts"] = "nvfp4"
    elif experts and expert_dtype == "fp4":
        formats["experts"] = "mxfp4"
    return formats, True


def _components(*, shared: bool, dense: bool, experts: bool) -> list[tuple[str, tuple[str, ...]]]:
    """Each quantizable component the model has, with the :data:`_MODULES` keys that stand for it."""
    mlp = tuple(part for part, present in (("shared", shared), ("dense", dense)) if present) or ("router",)
    return [(c, m) for c, m in (("experts", ("experts",)), ("attention", ("attention",)), ("mlp", mlp))
            if c != "experts" or experts]


def _mixed_precision(layers: Any, formats: dict[str, str], *, shared: bool, dense: bool,
                     experts: bool) -> tuple[dict[str, str], bool]:
    """ModelOpt's ``MIXED_PRECISION``: each component at the format ``quantized_layers`` gives the
    module that stands for it (nvidia's Qwen3.6 NVFP4 checkpoints: FP8 attention, NVFP4 experts)."""
    for component, modules in _components(shared=shared, dense=dense, experts=experts):
        if (chosen := _per_module(layers, modules)) is None:
            return dict.fromkeys(COMPONENTS, "bf16"), False
        formats[component] = chosen
    return formats, True


def _quark_format(spec: Any) -> str | None:
    """The format of one of AMD Quark's layer configs (its ``global_quant_config`` or an entry of
    ``layer_quant_config``): "bf16" where it quantizes no weight, None where its weights are of a kind
    not read here. FP4 weights (MXFP4: E8M0 scales per 32) are ``mxfp4-w4a4`` beside FP4 input
    tensors (vLLM's QuarkW4A4MXFP4: FP4 × FP4 on MI355X) and ``mxfp4`` (W4A8) beside FP8 ones; a
    list of weight specs is Quark's progressive quantization, whose last stage is what is stored
    (FP8 then INT4: INT4 weights)."""
    if not isinstance(spec, Mapping):
        return None
    weight = spec.get("weight")
    if isinstance(weight, list):
        weight = weight[-1] if weight else None
    if weight is None:
        return "bf16"
    if not isinstance(weight, Mapping):
        return None
    inputs = spec.get("input_tensors")
    dtype = str(weight.get("dtype", "")).lower()
    activation = str(inputs.get("dtype", "")).lower() if isinstance(inputs, Mapping) else ""
    if dtype.startswith("fp8"):
        return "fp8"
    if dtype in ("fp4", "fp4_e2m1"):
        return "mxfp4-w4a4" if activation in ("fp4", "fp4_e2m1") else "mxfp4" if activation.startswith("fp8") else None
    if dtype in ("int4", "uint4"):
        return "int4-g32" if weight.get("group_size") == 32 else "int4"
    return None


def _quark(quantization: Mapping[str, Any], formats: dict[str, str], *, shared: bool, dense: bool,
           experts: bool) -> tuple[dict[str, str], bool]:
    """AMD Quark's config (``quant_method`` quark; Quark's ``Config.to_dict`` and vLLM's
    ``QuarkConfig``): each component at the format of the first ``layer_quant_config`` pattern that
    matches its module (fnmatch over the module's name), else the ``global_quant_config``'s; BF16
    where ``exclude`` leaves it out (AMD's Kimi-K2.5-MXFP4: MXFP4 W4A4 routed experts, the rest BF16)."""
    global_format = _quark_format(quantization.get("global_quant_config") or {})
    layers = quantization.get("layer_quant_config")
    patterns = [(key, spec) for key, spec in list(layers.items())[:_LISTED_LAYERS]
                if isinstance(key, str)] if isinstance(layers, Mapping) else []
    exclude = quantization.get("exclude")
    exclude = exclude if isinstance(exclude, list) else []
    for component, modules in _components(shared=shared, dense=dense, experts=experts):
        names = [name for part in modules for name in _names(part)]
        chosen = next((_quark_format(spec) for key, spec in patterns if any(_matches(key, name) for name in names)),
                      global_format)
        if chosen is None:
            return dict.fromkeys(COMPONENTS, "bf16"), False
        formats[component] = "bf16" if _left_out(exclude, modules) else chosen
    return formats, True


def _compressed_tensors(quantization: Mapping[str, Any]) -> str | None:
    """The weight format of a compressed-tensors config's first group, or None if not one of ours."""
    groups = quantization.get("config_groups")
    if not isinstance(groups, Mapping) or not groups:
        return None
    weights = next(iter(groups.values()))
    weights = weights.get("weights") if isinstance(weights, Mapping) else None
    if not isinstance(weights, Mapping):
        return None
    bits, kind, group = weights.get("num_bits"), weights.get("type"), weights.get("group_size")
    if bits == 8 and kind == "float":
        return "fp8"
    if bits == 4 and kind == "float":
        return "nvfp4" if group in (16, None) else "mxfp4"
    if bits == 4 and kind == "int":
        return "int4-g32" if group == 32 else "int4"
    return None
