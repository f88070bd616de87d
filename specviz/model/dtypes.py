"""Number formats of weights and KV cache, and the precision a scenario serves a model at.

A weight format has a size per element (its block scales included) and the matmul it runs where
the GPU has it: ``fp8`` at the dense FP8 peak, ``fp4`` at the dense FP4 peak (Blackwell, MI355X);
where the GPU lacks that unit the weights are expanded and the matmul runs at the BF16 peak
(W8A16 / W4A16 kernels such as Marlin), :meth:`specviz.model.roofline.GPU.peak`. MXFP4 is
``w4a8``: vLLM's MXFP4 MoE method (gpt-oss, DeepSeek-V4's FP4 experts) multiplies its weights with
MXFP8 activations on GPUs with FP4 units (FlashInfer's MXFP4 × MXFP8 kernels on Blackwell; the MMA
of mixed FP4 and FP8 operands runs at the FP8 rate), and with BF16 activations elsewhere (Hopper's
Triton and Marlin kernels), never FP4 × FP4 (vLLM issue 35528 lists the paths). NVFP4 checkpoints
(ModelOpt, compressed-tensors) quantize the activations too: FP4 × FP4 (``nvfp4``: on NVIDIA's FP4
units only, whose E4M3 block scales are NVIDIA's; vLLM runs NVFP4 on MI355X, MI300 and Hopper through
emulation, BF16 matmuls of weights dequantized on the fly: vllm-project/vllm pull request 35733,
merged 2026-03), and so do AMD Quark's
MXFP4 checkpoints whose input tensors are FP4 (``mxfp4-w4a4``: Kimi-K2.5-MXFP4; vLLM's
QuarkW4A4MXFP4 runs FP4 × FP4 GEMMs on MI355X, and expands the weights to BF16 where the GPU has
no FP4 unit).

Sizes per element, scales included:

* ``bf16``: 2 bytes; ``fp8``: 1 byte (per-tensor or per-channel scales, negligible);
* ``fp8-block``: 1 + 4/128² bytes, one FP32 scale per 128 × 128 block (DeepSeek-V3's
  ``weight_block_size``);
* ``int4``: 0.5 + 2/128 bytes, one BF16 scale per group of 128 (GPTQ/AWQ W4A16), or ``int4-g32``,
  0.5 + 2/32 (Kimi-K2.5's routed experts, compressed-tensors ``group_size`` 32);
* ``mxfp4`` and ``mxfp4-w4a4``: 0.5 + 1/32 bytes, an E8M0 scale per 32 elements (OCP Microscaling
  Formats v1.0, 2023);
* ``nvfp4``: 0.5 + 1/16 bytes, an E4M3 scale per 16 elements (NVIDIA, "Introducing NVFP4", 2025;
  the per-tensor FP32 scale is negligible).

A precision sets the format of the linear layers (experts, attention, dense MLP) and of the KV
cache; the input embedding and the output head stay BF16, as FP8 and FP4 checkpoints ship them
(llm-compressor and ModelOpt leave ``lm_head`` out), unless a component is overridden. ``checkpoint``
serves each component as its config.json's ``quantization_config`` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from specviz.errors import InputError

if TYPE_CHECKING:
    from .architecture import Model

__all__ = ["Format", "FORMATS", "KV_FORMATS", "WEIGHT_NAMES", "Precision", "PRECISIONS", "LINEAR_COMPONENTS", "precision_of"]

Compute = Literal["bf16", "fp8", "fp4", "w4a8", "nvfp4"]
# The components a precision's weight format applies to; the embeddings stay BF16.
LINEAR_COMPONENTS = ("experts", "attention", "mlp")


@dataclass(frozen=True)
class Format:
    """A number format: bytes per element (scales included) and the matmul it runs at."""

    name: str
    bytes: float
    compute: Compute


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("bf16", 2.0, "bf16"),
    Format("fp8", 1.0, "fp8"),
    Format("fp8-block", 1.0 + 4.0 / 128**2, "fp8"),
    Format("int4", 0.5 + 2.0 / 128, "bf16"),
    Format("int4-g32", 0.5 + 2.0 / 32, "bf16"),
    Format("mxfp4", 0.5 + 1.0 / 32, "w4a8"),
    Format("mxfp4-w4a4", 0.5 + 1.0 / 32, "fp4"),
    Format("nvfp4", 0.5 + 1.0 / 16, "nvfp4"),
)}
KV_FORMATS = ("bf16", "fp8")
# How results files and the command line name weight formats: FP4 alone is NVIDIA's NVFP4.
WEIGHT_NAMES = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "int4": "int4", "fp4": "nvfp4", "nvfp4": "nvfp4",
                "mxfp4": "mxfp4", "mxfp4-w4a4": "mxfp4-w4a4", "checkpoint": None}


@dataclass(frozen=True)
class Precision:
    """How a model is served: ``weights``, the format of its linear layers (None: as the checkpoint
    ships each component), ``kv``, the KV cache's format, and ``overrides``, (component, format)
    pairs that replace a component's format."""

    name: str
    weights: str | None
    kv: str = "bf16"
    overrides: tuple[tuple[str, str], ...] = ()

    def weight_format(self, model: Model, component: str) -> Format:
        """The format ``component`` of ``model`` is served in."""
        chosen = dict(self.overrides).get(component)
        if chosen is None:
            if self.weights is None:
                chosen = model.weight_formats.get(component, "bf16")
            else:
                chosen = self.weights if component in LINEAR_COMPONENTS else "bf16"
        return FORMATS[chosen]

    def matmul_compute(self, model: Model) -> Compute:
        """The matmul that most of a token's weights run at: the compute of the component with the
        most active parameters (the ridge a pass of ``model`` meets)."""
        largest = max(model.active, key=lambda component: model.active[component])
        return self.weight_format(model, largest).compute

    @property
    def kv_bytes(self) -> float:
        """Bytes per KV-cache element."""
        return FORMATS[self.kv].bytes

    @property
    def kv_compute(self) -> Compute:
        """The matmul the attention's scores run at: FP8 where the cache is FP8."""
        return FORMATS[self.kv].compute


PRECISIONS: dict[str, Precision] = {p.name: p for p in (
    Precision("checkpoint", None),
    Precision("bf16", "bf16"),
    Precision("fp8", "fp8", "fp8"),
    Precision("fp8-weights", "fp8"),
    Precision("int4-weights", "int4"),
    Precision("nvfp4", "nvfp4", "fp8"),
    Precision("mxfp4", "mxfp4", "fp8"),
    Precision("mxfp4-w4a4", "mxfp4-w4a4", "fp8"),
)}


def precision_of(weights: str, kv: str) -> Precision:
    """The precision of ``weights`` in the linear layers (a name of :data:`WEIGHT_NAMES`, ``checkpoint``
    for as shipped) and a ``kv`` cache of :data:`KV_FORMATS`; the preset of that pair where there is
    one (``fp8`` weights and KV: :data:`PRECISIONS` ``fp8``).

    Raises
    ------
    InputError
        Naming the weights or KV format that is not modelled and the ones that are.
    """
    weights, kv = weights.lower(), kv.lower()
    if weights not in WEIGHT_NAMES:
        raise InputError("dtypes.weights", value=weights, known=", ".join(WEIGHT_NAMES))
    if kv not in KV_FORMATS:
        raise InputError("dtypes.kv", value=kv, known=", ".join(KV_FORMATS))
    chosen = Precision(f"{weights}/{kv}", WEIGHT_NAMES[weights], kv)
    same = [p for p in PRECISIONS.values() if (p.weights, p.kv) == (chosen.weights, chosen.kv)]
    return same[0] if same else chosen

