"""A model or GPU preset recognised from the names people write: a served model's name, a benchmark's
``model`` field, a claim's words, a Hugging Face id or URL, a GPU's marketing name.

Used wherever a name from outside meets the presets: the Live page's served model, a run's target
and GPU in the Explorer's predictions, a claim's model and GPU, a command's checkpoint id.
"""

from __future__ import annotations

import re
from typing import Mapping

from .model import architecture, roofline

__all__ = ["HF_URL", "model_key", "hugging_face_id", "models_by_key", "model_preset", "gpu_preset"]

# Words after a model's name that do not change its shape: tuning, packaging, the weights' format.
_MODEL_QUALIFIERS = frozenset(("instruct", "chat", "hf", "base", "it", "thinking", "exp", "fp8", "fp4", "nvfp4", "mxfp4",
                               "awq", "gptq", "int4", "int8", "bf16", "fp16", "w4a16", "w8a8", "w4a4", "w8a16", "dynamic",
                               "kv", "quantized"))
# …and words of those shapes: a release date (Instruct-2507, R1-0528), a context length (4k, 32K) and a
# checkpoint's version below 2 (v0.1, v1.0: "V3.2" is a model's own name).
_MODEL_SUFFIX = re.compile(r"\d{4}|\d+k|v[01](\.\d+)+")
# A model page's URL, or one of its branch's file tree ("/tree/main"), a file or a download.
HF_URL = re.compile(r"https://huggingface\.co/([\w.-]+/[\w.-]+)(?:/(?:tree|blob|resolve)/[\w.\-/]*)?")
# A GPU's text (lower case, each run of other characters one space, a count before it dropped) → the
# preset it names, beside each preset's own id. A word starts each pattern: GB200 is no B200, GH200
# (a Grace Hopper's H100) no H200. A text that names a device without saying which of its presets (an
# A100 without its memory, an H100 PCIe or NVL) names none, nor does a number alone (5090 tokens/s).
_GPU_PATTERNS = (
    ("GB300", r"gb300"), ("GB200", r"gb200"), ("B300", r"\bb300"), ("B200", r"\bb200"),
    ("H100-PCIe", r"\bh100 ?pcie"), ("H100-SXM", r"\bh100(?!.*(pcie|nvl))"), ("H200", r"\bh200"), ("H800", r"\bh800"), ("H20", r"\bh20(?!\d)"),
    ("A100-80GB", r"\ba100.*80 ?g"), ("A100-40GB", r"\ba100.*40 ?g"), ("A40", r"\ba40(?!\d)"),
    ("L40S", r"\bl40s"), ("L4", r"\bl4(?![\d.])"), ("RTX-PRO-6000", r"\brtx pro 6000"), ("RTX-5090", r"\brtx ?5090"),
    ("RTX-4090", r"\brtx ?4090"), ("RTX-3090", r"\brtx ?3090"), ("MI355X", r"\bmi355x"), ("MI325X", r"\bmi325x"),
    ("MI300X", r"\bmi300x"), ("TPU-v6e", r"\bv6e"), ("Gaudi-3", r"\bgaudi ?3"), ("Trainium2", r"\btrainium ?2|\btrn2"))


def model_key(text: str) -> str:
    """A model's name as it is compared: the part after the organisation, lower case, letters and
    digits only, without the words at its end that do not change its shape (``Instruct``, ``FP8``,
    ``2507``, ``32K``, ``v0.1``) nor a leading ``Meta``: ``meta-llama/Meta-Llama-3.1-8B-Instruct-FP8``
    and the preset ``Llama 3.1 8B`` are both ``llama318b``, ``Qwen3-235B-A22B-Instruct-2507`` is
    ``qwen3235ba22b``."""
    words = [w for w in re.split(r"[\s_-]+", text.rsplit("/", 1)[-1].lower()) if w]
    while len(words) > 1 and (words[-1] in _MODEL_QUALIFIERS or _MODEL_SUFFIX.fullmatch(words[-1])):
        words.pop()
    if len(words) > 1 and words[0] == "meta":
        words.pop(0)
    return re.sub(r"[^a-z0-9]", "", "".join(words))


def hugging_face_id(model_source: str) -> str | None:
    """The Hugging Face id (``Qwen/Qwen3-32B``) in a preset's source, None where it names none."""
    found = HF_URL.search(model_source or "")
    return found[1] if found else None


# Checkpoints of another's architecture, by key: DeepSeek-R1 (R1-0528's key too, its date dropped),
# V3.1 and V3.1-Terminus ship DeepSeek-V3's config.json (model_type deepseek_v3, 61 layers, 256 routed
# experts), as V3-0324 does under V3's own key; Llama 3.3 70B's is Llama 3.1 70B's (80 layers, hidden
# 8,192, 64 heads of which 8 KV), Qwen3-Coder-30B-A3B's Qwen3-30B-A3B's (48 layers, 128 experts, 8 a
# token) but for its longer positions; "Qwen3-Next" names its one size, 80B-A3B (Instruct and Thinking:
# a browser pass found it read as no model).
# The active parameters a mixture of experts' name ends with after its total size: "a17b" of
# "qwen35397ba17b", "a3b" of "qwen3530ba3b".
_ACTIVE_SIZE = re.compile(r"(?<=\db)a\d+b$")
_SAME_ARCHITECTURE = {"deepseekr1": "deepseekv3", "deepseekv31": "deepseekv3", "deepseekv31terminus": "deepseekv3",
                      "llama3370b": "llama3170b", "qwen3coder30ba3b": "qwen330ba3b", "qwen3next": "qwen3next80ba3b"}


def of_another_checkpoint(name: str) -> bool:
    """Whether ``name`` names a checkpoint that :func:`models_by_key` reads as another's preset of its
    architecture ("Llama 3.3 70B" as Llama 3.1 70B's, "DeepSeek-R1" as DeepSeek-V3's)."""
    return model_key(name) in _SAME_ARCHITECTURE


def models_by_key(models: Mapping[str, architecture.Model]) -> dict[str, str]:
    """Each preset's id under the keys (:func:`model_key`) of its id, its name and the Hugging Face
    id its source names (``meta-llama/Llama-4-Scout-17B-16E-Instruct`` for Llama 4 Scout), under
    those of the checkpoints that share its architecture (DeepSeek-R1 is DeepSeek-V3's), and a
    mixture of experts also under its id's key without the active parameters, as its total size
    alone names it (``Qwen3.5-397B`` is ``Qwen3.5-397B-A17B``, ``Qwen3-Coder-480B``
    ``Qwen3-Coder-480B-A35B``), where no preset's own key is that."""
    by_key: dict[str, str] = {}
    for model_id, model in models.items():
        for name in (model_id, model.name, hugging_face_id(model.source)):
            if name:
                by_key.setdefault(model_key(name), model_id)
    for alias, key in _SAME_ARCHITECTURE.items():
        if key in by_key:
            by_key.setdefault(alias, by_key[key])
    for model_id in models:
        by_key.setdefault(_ACTIVE_SIZE.sub("", model_key(model_id)), model_id)
    return by_key


def model_preset(name: str, models: Mapping[str, architecture.Model]) -> str | None:
    """The preset a served, benchmarked or claimed model's name matches (``Qwen/Qwen3-32B`` is
    ``Qwen3-32B``), None where none does."""
    return models_by_key(models).get(model_key(name)) if name else None


def gpu_preset(text: str, gpus: Mapping[str, roofline.GPU]) -> str | None:
    """The GPU preset a text names: a preset's own id (``MI355X``, ``GB200``), else the patterns of
    the common ways to write one (``NVIDIA H100 80GB HBM3`` is ``H100-SXM``, ``AMD Instinct MI355X``
    ``MI355X``, ``8xB200`` ``B200``); None where none does."""
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    own = {re.sub(r"[^a-z0-9]", "", gpu_id.lower()): gpu_id for gpu_id in gpus}
    if key in own:
        return own[key]
    # "8x H100", "8xH100s": the count is no part of the name.
    words = re.sub(r"\b\d+ ?[x×] ?(?=[a-z])", "", re.sub(r"[^a-z0-9×]+", " ", text.lower()))
    return next((gpu_id for gpu_id, pattern in _GPU_PATTERNS if gpu_id in gpus and re.search(pattern, words)), None)
