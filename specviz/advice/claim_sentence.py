"""Reading a slide's whole sentence: the figure that is a speedup or a slowdown
(:mod:`specviz.advice.claim_figure` picks it), the hardware and how many, the model, its precision, the
drafting method and draft length, the batch, the dataset, what the figure is over
(:mod:`specviz.advice.claim_over`), and what the sentence leaves out, the questions to ask its author. The figure itself is read as a short claim is (:mod:`specviz.advice.claim_words`).

Words only, English and Vietnamese; every pattern runs over the words with each blank run one space
and the text bounded (:func:`specviz.advice.claim_words.claim_text`), so that every match takes time
linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container
from dataclasses import dataclass

from specviz import settings
from specviz.errors import SpecvizError
from specviz.model.architecture import Model
from specviz.model.dtypes import PRECISIONS
from specviz.names import gpu_preset, model_key, models_by_key, of_another_checkpoint
from specviz.scenario import Presets, draft_choices, split_of

from .claim_figure import FIGURE_IN_SENTENCE, claimed_figure
from .claim_over import compared, named_methods, over_words
from .claim_words import (BATCH_WORDS, batch_in_words, claim_text, cut_at_word, in_figures, other_batches,
                          percent_of, without_batch)

__all__ = ["SentenceReading", "UNSTATED", "read_sentence", "sentence_choices"]


# Words that say a figure is of speculative decoding, beside a drafting method's name (named_methods).
_SPECULATION_WORDS = re.compile(r"specul|\bdraft|nháp|lookahead|multi-token", re.IGNORECASE)
_DATASETS = ("MT-Bench", "HumanEval", "GSM8K", "ShareGPT", "Alpaca", "CNN/DailyMail", "SWE-bench", "MBPP",
             "LiveCodeBench", "AIME", "Spec-Bench", "Arena-Hard", "MATH-500")
# What a claim should state and often does not, each with the words that state it.
UNSTATED = {"model": None, "hardware": None, "method": None, "batch": None, "context": None, "dataset": None,
            "temperature": r"temperature|greedy|sampling|\btemp\b",
            "output_length": r"output (?:length|tokens)|\bosl\b|tokens out|\d+\s*(?:output|generated) tokens",
            "acceptance": r"synthetic|simulated|measured acceptance|acceptance (?:rate|length)",
            "equal_footing": None}
# A figure of throughput ("179% more tok/s/GPU") compares two servers at some point of their
# throughput-latency curves: at equal batch, or at equal speed per user, where speculation's server
# runs a larger batch. Asked where the sentence does not say which.
_THROUGHPUT_FIGURE = re.compile(r"throughput|tok(?:en)?s?/s|\btps\b|per\s+gpu|/gpu", re.IGNORECASE)
# A rate per user: "100 tokens/s per user", "100 tok/s/user", "50 TPS/user", "100 t/s/user",
# "100 output tokens/second/user"; not any "/user" (a URL's path had read as one: an attack pass).
_PER_USER = (r"(?:(?:output\s+)?(?:tok(?:en)?s?|t)\s*(?:/\s*s(?:ec(?:ond)?)?|\s+per\s+second)|tps)\s*"
             r"(?:/|\bper[\s-])\s*user")
_EQUAL_FOOTING = re.compile(r"same\s+(?:batch|concurrency|interactivity|latency|tpot|speed)|equal|\biso-?|at\s+batch"
                            rf"|at\s+(?:a\s+)?concurrency|\bper[\s-]user|{_PER_USER}", re.IGNORECASE)
# Of those, the point of equal speed per user, where the speculating server runs a larger batch than
# the plain one: a gain that a check at one batch for both does not weigh, said beside the verdict.
# A speed per user as the comparison's condition ("at 100 tokens/s per user"), not as the figure
# compared: "2.03x higher per-user output throughput at concurrency 1" had been read as one (a
# manager's pass).
_SAME_SPEED = re.compile(r"(?:same|equal)\s+(?:per[\s-]user\s+)?(?:interactivity|latency|tpot|speed)|\biso-?"
                         r"(?:interactivity|latency|tpot|speed)|\b(?:at|with|over|above)\s+(?:an?\s+(?:per[\s-]user\s+"
                         r"speed|interactivity)\s+of\s+)?(?:~|≈|over\s+|above\s+)?[\d,.]{1,12}\+?\s*" + _PER_USER,
                         re.IGNORECASE)


# The draft length a sentence names: "5 draft tokens", "3 speculative tokens", "a 4-token draft",
# "drafting 3 tokens", "2 MTP steps", "MTP 2 steps", "γ=5", "gamma 4", "draft length 4", "num_speculative_tokens=3",
# "K=3" (the vLLM blog's), "5 token nháp", "độ dài nháp 4"; up to nine digits, so that one past
# SPECVIZ_GAMMA_MAX is said to be left out ("gamma 100000" had been passed over without a word).
_GAMMA = re.compile(r"(?<![\w.])(?P<count>\d{1,9})(?:\s+|-)(?:draft(?:ed)?|speculative|speculated|lookahead|mtp)"
                    r"(?:\s+|-)(?:tokens?|steps?)\b"
                    r"|(?<![\w.])(?P<drafts>\d{1,9})-token\s+drafts?\b"
                    r"|\b(?:mtp|draft)\s+(?P<steps>\d{1,9})\s+(?:steps?|tokens?)\b"
                    r"|\b(?:draft(?:ing|s)?|speculat\w*)\s+(?P<tokens>\d{1,9})\s+tokens?\b"
                    r"|(?:γ|\bgamma\b|\bdraft[\s_-]length\b|\bnum_speculative_tokens\b|\bnum[\s_-]draft[\s_-]tokens\b"
                    r"|\bspeculative[\s_-]tokens\b|(?<![\w-])(?-i:K)\b(?=\s*=))\s*(?:of\s+)?[=:]?\s*(?P<named>\d{1,9})\b"
                    r"|(?<![\w.])(?P<vi>\d{1,9})\s+token\s+(?:nháp|draft)\b"
                    r"|\bđộ\s+dài\s+(?:nháp|draft)\s*(?:γ\s*)?[=:]?\s*(?P<vi_named>\d{1,9})\b",
                    re.IGNORECASE)
# The weights' format a sentence names → the sidebar's precision (:data:`specviz.model.dtypes.PRECISIONS`);
# FP4 alone is NVIDIA's NVFP4 (as :data:`specviz.model.dtypes.WEIGHT_NAMES` reads it), and FP8 is the
# weights' alone (vLLM's --quantization fp8 leaves the KV cache at the model's dtype; "FP8 KV" is read apart).
# A bare "W4A4" is not read: NVFP4 is W4A4 too.
_PRECISION_WORDS = (("mxfp4-w4a4", r"\bmxfp4[\s-]*w4a4\b"), ("mxfp4", r"\bmxfp4\b"),
                    ("nvfp4", r"\bnvfp4\b|\bfp4\b"), ("fp8-weights", r"\bfp8\b"),
                    ("int4-weights", r"\bint4\b|\bw4a16\b|\bawq\b|\bgptq\b"), ("bf16", r"\bbf16\b|\bfp16\b"))


_KV_AFTER = re.compile(r"[\s-]*(?:kv\b|kv-?cache|key-value)", re.IGNORECASE)
# The KV cache's formats the sidebar offers (:data:`specviz.model.dtypes.KV_FORMATS`), as a sentence names them.
_KV_WORDS = re.compile(r"\b(?P<format>fp8|bf16|fp16)[\s-]*(?:kv\b|kv-?cache|key-value)", re.IGNORECASE)


def _kv(words: str) -> str | None:
    """The KV cache's format a sentence names ("an FP8 KV cache": ``fp8``), None where it names none
    the sidebar offers (an FP4 KV cache is not modelled)."""
    found = _KV_WORDS.search(words)
    return None if found is None else {"fp16": "bf16"}.get(found["format"].lower(), found["format"].lower())


def _gamma(words: str) -> int | None:
    """The draft length γ a sentence names (:data:`_GAMMA`), None where it names none."""
    found = _GAMMA.search(words)
    return int(next(value for value in found.groupdict().values() if value)) if found else None


# The context length a sentence names, in tokens: "context 8k", "context length of 8,192 tokens",
# "ctx=32768", "ngữ cảnh 8k", or before the word: "8k context", "8,192-token context", "32K tokens of
# context", "128k-context window". A "k" is 1,024 tokens and an "M" 1,024² (an "8k context" is 8,192),
# as model cards and engines write lengths (a browser pass: "context 8k" had been left at the page's
# 1,024, and a batch that does not fit there was judged as holding).
_LENGTH = r"\d{1,3}(?:,\d{3})+(?![\d.])|\d{1,7}(?:\.\d{1,3})?\s*[km]?\b"
_CONTEXT = re.compile(rf"\b(?:context|ctx|ngữ\s+cảnh)(?:\s+(?:length|window|len|size|dài))?\s*(?:of\s+)?[=:]?\s*"
                      rf"(?P<after>{_LENGTH})"
                      rf"|(?<![\w.,])(?P<before>{_LENGTH})(?:\s*-?\s*tokens?)?(?:\s+of)?[\s-]+(?:context|ctx)\b",
                      re.IGNORECASE)
_LENGTH_UNITS = {"": 1, "k": 1024, "m": 1024 ** 2}


def _context(words: str) -> int | None:
    """The context length a sentence names (:data:`_CONTEXT`), in tokens, None where it names none."""
    found = _CONTEXT.search(words)
    if found is None:
        return None
    written = (found["after"] or found["before"]).replace(",", "").replace(" ", "").lower()
    unit = written[-1] if written[-1] in "km" else ""
    return round(float(written.removesuffix(unit)) * _LENGTH_UNITS[unit])

# Serving engines as a sentence names them → the engine presets (data/engines.csv); vLLM is V1 unless
# "V0" is written (V1 has been its engine since 0.8).
_ENGINE_WORDS = (("trt-llm", r"\btensorrt[\s-]*llm\b|\btrt[\s-]*llm\b"), ("sglang", r"\bsglang\b"),
                 ("vllm-v0", r"\bvllm[\s-]*v0\b"), ("vllm-v1", r"\bvllm\b"))


def _first_named(words: str, named: tuple[tuple[str, str], ...], keep: Callable[[re.Match], bool]) -> str | None:
    """The name of ``named`` ((name, pattern) pairs) whose pattern a sentence matches first, of the
    matches ``keep`` takes; the longest match where two start at one place ("MXFP4 W4A4" before
    "MXFP4"); None where none is taken."""
    found = [(match.start(), -len(match[0]), name) for name, pattern in named
             for match in re.finditer(pattern, words, re.IGNORECASE) if keep(match)]
    return min(found)[2] if found else None


def _engine(words: str) -> str | None:
    """The engine a sentence names first as the one it measured, None where it names none: an engine
    named after a comparison ("SGLang is 1.5x faster than vLLM": vLLM) is what the figure is over,
    not the engine measured (:func:`specviz.advice.claim_over.compared`)."""
    return _first_named(words, _ENGINE_WORDS, lambda match: not compared(words[:match.start()]))


def _precision(words: str) -> str | None:
    """The precision preset of the weights' format a sentence names first (the longest name where two
    start there: "MXFP4 W4A4" is AMD Quark's W4A4, not MXFP4 weights beside FP8 activations), None
    where it names none. A format said of the KV cache ("FP8 KV", "an FP8 KV cache") is not the weights'."""
    return _first_named(words, _PRECISION_WORDS, lambda match: not _KV_AFTER.match(words, match.end()))


@dataclass(frozen=True)
class SentenceReading:
    """What a claim's sentence states: the ``speedup`` (the first figure with its unit), the ``batch``
    or concurrency, the ``gpu`` and ``target`` presets it names, the ``draft`` kind
    (:data:`specviz.scenario.DRAFT_KINDS`, or a draft model's preset where the sentence names a model
    as its draft: "with a Llama-3.2-1B draft") and the ``dataset``, each None where it names none;
    ``unstated``, the keys of :data:`UNSTATED` it leaves out: the questions to ask its author; and
    ``baseline``, the draft kind the figure is measured over ("1.69x over EAGLE-3"), None where it is
    over plain decoding, as a speedup is unless the sentence says otherwise; and ``over_words``, the
    words of any other thing it is said to be over ("the best prior Blackwell baseline", "vLLM",
    "H100"), None where the sentence compares with plain decoding, a method or nothing; ``percent``,
    a figure of 100 % or more as written (:func:`percent_of`); ``gpu_words``, the sentence's words
    where they name a family of GPUs or one sold in several forms ("A100", "Blackwell") and ``gpu``
    is the form assumed (:data:`_GPU_FAMILIES`); ``unknown_model``, the words of a model the sentence
    names with its size that no preset is ("Mixtral 8x22B"), where ``target`` is None; ``gpus``, the
    number of GPUs it names ("8x H200"), None where it names none; ``gamma``, the draft length it
    names ("with 5 draft tokens"; ``gamma_beyond`` where it is outside 1 to ``SPECVIZ_GAMMA_MAX``,
    the longest draft a check weighs, and left out), ``precision``, the preset of the weights' format it names
    ("with FP4": ``nvfp4``), and ``kv``, the KV cache's ("FP8 KV": ``fp8``), each None where it names none;
    ``same_speed``, whether its figure of throughput compares the servers at the same speed per user
    (:data:`_SAME_SPEED`), where the speculating one runs a larger batch; ``target_words``, the
    sentence's words where they name a checkpoint of another's architecture and ``target`` is that
    preset ("Llama 3.3 70B" read as Llama 3.1 70B: :func:`specviz.names.of_another_checkpoint`);
    ``engine``, the serving engine's preset it names as the one measured (:func:`_engine`), None where
    it names none or names one only as what the figure is over ("faster than vLLM");
    ``speculation_said``, whether it says the figure is of speculative decoding at all (a drafting
    method, or its words: :data:`_SPECULATION_WORDS`): "SGLang is 1.5x faster than vLLM" does not;
    ``context``, the context length it names in tokens ("8k context": 8,192), ``context_beyond`` where
    it is past ``SPECVIZ_CONTEXT_MAX``, the longest a check weighs, and left out; ``other_gpus`` and
    ``other_batches``, the GPU presets and batches it names after the first, which the check leaves
    out ("on 8x H200 and 8x B200", "at batch 1, 32 and 256")."""

    speedup: float
    batch: int | None
    gpu: str | None
    target: str | None
    draft: str | None
    dataset: str | None
    unstated: tuple[str, ...]
    baseline: str | None = None
    over_words: str | None = None
    percent: float | None = None
    gpu_words: str | None = None
    unknown_model: str | None = None
    gpus: int | None = None
    gamma: int | None = None
    precision: str | None = None
    kv: str | None = None
    gamma_beyond: int | None = None
    same_speed: bool = False
    target_words: str | None = None
    engine: str | None = None
    speculation_said: bool = True
    context: int | None = None
    context_beyond: int | None = None
    other_gpus: tuple[str, ...] = ()
    other_batches: tuple[int, ...] = ()


def _ships(model: Model, precision: str) -> bool:
    """Whether ``model``'s checkpoint ships a component in the weights' format of ``precision`` (FP8
    for DeepSeek-V3's FP8 blocks, INT4 for Kimi-K2.5's INT4 experts)."""
    weights = PRECISIONS[precision].weights
    return any(shipped.split("-")[0] == weights for shipped in model.weight_formats.values())


# Names of a family of GPUs, or of a GPU sold in several forms, each read as the form most published
# benchmarks ran (the A100 of 80 GB, HGX B200, the H100 SXM), and said to be assumed: tried only
# where no preset is named, the longer names first; a plural too ("on A100s" had been read as no GPU).
_GPU_FAMILIES = (("B300", r"\bblackwell ultra\b"), ("GB200", r"\bgrace blackwell\b"), ("B200", r"\bblackwell\b"),
                 ("H100-SXM", r"\bhopper\b|\bh100s?\b"), ("A100-80GB", r"\ba100s?\b|\bampere\b"),
                 ("MI300X", r"\bmi300s?\b"), ("Trainium2", r"\btrainiums?\b"))
# A model's size as its name writes it: "72B", "8x22B", "0.6B", "68M".
_MODEL_SIZE = re.compile(r"\d+(?:\.\d+)?(?:x\d+)?[bm]", re.IGNORECASE)
_PUNCTUATION = ".,;:()[]\"'"


# A count of devices: "8x H200", "8×B200", "8 H100s", "2x NVIDIA H200", "on 8 GPUs", "a single H100"
# (the word after the count is a GPU's name or a word for one); of nodes: "2 nodes of 8x H100",
# "2x8 H100" (the nodes times the devices each).
_VENDOR = r"(?:(?:nvidia|amd|intel|google)\s+)?"
# In Vietnamese too ("trên một H100": a manager's pass had found it read as no count).
_COUNT_WORDS = {"single": 1, "one": 1, "two": 2, "dual": 2, "three": 3, "four": 4, "eight": 8,
                "một": 1, "hai": 2, "ba": 3, "bốn": 4, "tám": 8}
_COUNTED = re.compile(rf"(?<![\w.,])(\d{{1,4}}|{'|'.join(_COUNT_WORDS)})\s*(?:[x×]\s*)?{_VENDOR}([A-Za-z][\w\-]*)",
                      re.IGNORECASE)
_NODES = re.compile(rf"(?<![\w.,])(\d{{1,3}})\s*(?:(?:nodes?|servers?|machines?|hosts?)\s+(?:of|with|each\s+with)\s+|[x×]\s*)"
                    rf"(\d{{1,2}})\s*(?:[x×]\s*)?{_VENDOR}([A-Za-z][\w\-]*)", re.IGNORECASE)
_DEVICE_WORDS = frozenset(("gpu", "gpus", "card", "cards", "accelerator", "accelerators", "chip", "chips"))


def _gpu_count(words: str, presets: Presets) -> int | None:
    """The number of GPUs a sentence names ("on 8x H200" gives 8, "a single H100" 1, "2 nodes of 8x
    H100" 16), None where it names none."""
    device = lambda name: name.lower() in _DEVICE_WORDS or gpu_preset(name, presets.gpus) or _family_gpu(name, presets)
    for found in _NODES.finditer(words):
        if device(found.group(3)):
            return int(found.group(1)) * int(found.group(2)) or None
    for found in _COUNTED.finditer(words):
        if device(found.group(2)):
            written = found.group(1).lower()
            return (_COUNT_WORDS[written] if written in _COUNT_WORDS else int(written)) or None
    return None


def _family_gpu(words: str, presets: Presets) -> tuple[str, str] | None:
    """The GPU preset assumed for a family's name in ``words`` and the words that named it
    (:data:`_GPU_FAMILIES`), None where none is named but as what a figure is compared with ("3x
    faster than Hopper")."""
    for gpu_id, pattern in _GPU_FAMILIES:
        if gpu_id in presets.gpus:
            for found in re.finditer(pattern, words, re.IGNORECASE):
                if not compared(words[:found.start()]):
                    return gpu_id, found.group(0)
    return None





def _in_model_name(words: str, figure: re.Match, index: Container[str]) -> bool:
    """Whether a multiple ("8x") is part of the name the word before it begins: "Mixtral 8x" (the
    experts of Mixtral 8x7B) together begin a preset's key (:func:`specviz.names.model_key`) longer
    than them. Read as the claim, "Mixtral 8x gets 2x" had claimed 8×; :func:`read_sentence` leaves
    such a figure out only where another remains ("Mixtral 8x faster" claims 8×)."""
    before = words[:figure.start()].rsplit(None, 1)
    if not before or not before[-1][:1].isalpha() or not figure.group(0).rstrip().lower().endswith(("x", "×")):
        return False
    start = model_key(f"{before[-1]} {figure.group(0)}")
    return any(key.startswith(start) and key != start for key in index)


def _sized_model(words: str, known: Container[str] = ()) -> str | None:
    """The first model name with a size a sentence writes, None where it writes none: one word with
    its size after a hyphen ("Qwen2.5-72B", "gpt-oss-120b", "Mistral-7B-Instruct"), or a size in
    billions after a capitalised word ("Mixtral 8x22B", "Falcon 180B"; not "on 1.5B tokens"). A name
    whose key (:func:`specviz.names.model_key`) is ``known``, a preset's, is none: a draft the
    sentence names had been said to be no preset."""
    tokens = [token.strip(_PUNCTUATION) for token in words.split()]
    for index, token in enumerate(tokens):
        parts = token.split("-")
        if len(parts) > 1 and parts[0][:1].isalpha() and any(_MODEL_SIZE.fullmatch(part) for part in parts[1:]):
            if model_key(token) not in known:
                return token
        if index and _MODEL_SIZE.fullmatch(token) and token[-1] in "bB" and tokens[index - 1][:1].isupper():
            if model_key(f"{tokens[index - 1]} {token}") not in known:
                return f"{tokens[index - 1]} {token}"
    return None


# Words after a number that make it a figure, not a version: "3 times", "2 to 3x", "4 lần".
_AFTER_FIGURE = {"times", "time", "x", "×", "to", "lần", "fold", "%", "percent"}
# A version after a family's name: "K2.6", "V4", "R1", "3.3"; not a figure ("2x", "4x").
_MODEL_VERSION = re.compile(r"[a-z]{0,3}\d+(?:\.\d+)*[a-wyz]?", re.IGNORECASE)


def _versioned_model(words: str, presets: Presets) -> str | None:
    """The first model a sentence names by a preset family's word and a version, without a size
    ("Kimi K2.6", "DeepSeek-V4"), None where it names none: such a model is no preset (a preset's
    name would have been read as the target), and had been judged on the sidebar's unsaid (a
    manager's pass: Kimi K2.6 checked as Qwen3-32B)."""
    families = {found[0] for model_id in presets.models if (found := re.match(r"[a-z]+", model_id.lower()))}
    keys = [model_key(model_id) for model_id in presets.models]
    tokens = [token.strip(_PUNCTUATION) for token in words.replace("\u2011", "-").split()]
    for token, after, then in zip(tokens, [*tokens[1:], ""], [*tokens[2:], "", ""]):
        family, *rest = token.split("-")
        fused = re.fullmatch(r"([a-z]+)(\d[\w.]*)", family.lower())  # "Qwen3.6", "GLM4.6", "Qwen3-Max"
        if family.lower() in families and rest and any(_MODEL_VERSION.fullmatch(part) for part in rest):
            named = token
        elif fused and fused[1] in families and _MODEL_VERSION.fullmatch(fused[2]):
            named = token
        # Not the figure itself: "DeepSeek 3 times faster", "Qwen 1.5 times", "DeepSeek 2 to 3x".
        elif token.lower() in families and _MODEL_VERSION.fullmatch(after) and then.lower() not in _AFTER_FIGURE:
            named = f"{token} {after}"
        else:
            continue
        # The start of presets' names ("DeepSeek-V4": its -Pro and -Flash) is no model of its own; a
        # model named after it may be ("Like Llama 4, Kimi K2.6 …").
        if not any(key.startswith(model_key(named)) for key in keys):
            return named
    return None


def _named_gpus(tokens: list[str], presets: Presets) -> list[str]:
    """The GPU presets a sentence's words name, each once, in its order: a run of two or three words
    that spells a preset's own id ("A100 80GB", "RTX PRO 6000", "TPU v6e", "Gaudi 3"), else one word
    that names one (:func:`specviz.names.gpu_preset`: "H100", "8xB200"). A word whose next word makes
    it a form no preset is ("H100 NVL") names none: read alone, "H100" would be the SXM card's
    figures, unsaid (the family's reading, :data:`_GPU_FAMILIES`, says what it assumed). A GPU the
    figure is compared with ("3x faster than H100 on B200") is not one it was measured on. The first
    is the one a check is on; the others are said ("on 8x H200 and 8x B200": a manager's pass)."""
    own = {re.sub(r"[^a-z0-9]", "", gpu_id.lower()) for gpu_id in presets.gpus}
    found: list[str] = []
    start = 0
    while start < len(tokens):
        length, gpu = 1, None
        if not compared(" ".join(tokens[max(0, start - 5):start])):
            spelled = [n for n in (3, 2) if len(tokens) - start >= n
                       and re.sub(r"[^a-z0-9]", "", " ".join(tokens[start:start + n]).lower()) in own]
            if spelled:
                length, gpu = spelled[0], gpu_preset(" ".join(tokens[start:start + spelled[0]]), presets.gpus)
            elif gpu_preset(tokens[start], presets.gpus) and gpu_preset(" ".join(tokens[start:start + 2]), presets.gpus):
                gpu = gpu_preset(tokens[start], presets.gpus)
        if gpu is not None and gpu not in found:
            found.append(gpu)
        start += length
    return found


# A model named as the draft: "Llama-3.2-1B draft", "a Gemma 3 1B drafter" (the words after it), "draft
# model Llama-3.2-1B", "drafted by Qwen3-0.6B" (the words before it).
_DRAFT_AFTER = re.compile(r"(?:draft|drafter)s?\b", re.IGNORECASE)
_DRAFT_BEFORE = re.compile(r"(?:\bdraft(?:er)?(?:\s+model)?|\bdrafted\s+by|\bdrafting\s+with)\s*:?$", re.IGNORECASE)


def _named_models(tokens: list[str], index: dict[str, str]) -> list[tuple[int, int, str]]:
    """The model presets a sentence's words name, as (first word, word after the last, preset id):
    runs of four words to one, the longest first and then in the sentence's order, none inside a
    run already taken ("Llama 3.1 70B", not "Llama" again), nor one whose next word is a size: "Qwen3
    Next 32B" is no Qwen3-Next-80B-A3B (an attack pass), and is said to be no preset."""
    taken: list[tuple[int, int, str]] = []
    for n in (4, 3, 2, 1):
        for start in range(len(tokens) - n + 1):
            span = " ".join(tokens[start:start + n]).strip(".-/")
            sized = start + n < len(tokens) and _MODEL_SIZE.fullmatch(tokens[start + n].strip(_PUNCTUATION))
            if (span and not sized and (key := model_key(span)) in index
                    and not any(start < end and first < start + n for first, end, _ in taken)):
                taken.append((start, start + n, index[key]))
    return taken


def read_sentence(text: str, presets: Presets) -> SentenceReading:
    """A claim's whole sentence read: "Up to 3.2x faster decoding with speculative decoding on H100
    (Llama-3.1-70B, EAGLE-3)" states 3.2×, an H100, Llama-3.1-70B and an EAGLE-3 head, and leaves
    out the batch, the dataset, the temperature, the output length and whether the acceptance was
    measured. Models and GPUs are matched to presets by their names
    (:func:`specviz.names.model_preset`, :func:`specviz.names.gpu_preset`), over runs of one to
    four words, the longest first.

    Raises
    ------
    SpecvizError
        As :func:`parse_claim` for the figure; ``claims.no_speed_figure`` where its figures are all
        something else than a speedup of decoding (a cost, a reduction, a count of GPUs, a training
        speed), naming them; ``claims.unreadable`` where it holds no figure at all,
        ``claims.sentence_empty`` where it holds no word.
    """
    words = claim_text(text)
    if not words.strip():
        raise SpecvizError("claims.sentence_empty")
    figured = in_figures(words)
    unbatched = without_batch(figured)
    tokens = re.findall(r"[\w][\w.\-/]*", words)
    index = models_by_key(presets.models)  # once: built for each span, a 1,000-character sentence took 1.7 s
    # The figure that is a speedup: not a count of GPUs ("on 8x H100"), a model's name ("Mixtral 8x")
    # nor another ratio ("5x cheaper"); one beside a word of speed ("2x faster", "1.8x TPS") before any other.
    written = list(FIGURE_IN_SENTENCE.finditer(unbatched))
    # A figure that begins a model's name ("Mixtral 8x") is left out where another figure remains to claim.
    named_like = [f for f in written if _in_model_name(unbatched, f, index)]
    written = [f for f in written if f not in named_like] if len(named_like) < len(written) else written
    figure, figure_words, speedup = claimed_figure(words, unbatched, written, named_like, presets.gpus)
    named = _named_models(tokens, index)
    drafts = [model for start, end, model in named if _DRAFT_AFTER.match(" ".join(tokens[end:end + 2]))
              or _DRAFT_BEFORE.search(" ".join(tokens[max(0, start - 3):start]))]
    start, end, target = next(((start, end, model) for start, end, model in named if model not in drafts),
                              (0, 0, None))
    # Its words where they name another checkpoint of the preset's architecture, to be said.
    target_words = " ".join(tokens[start:end]).strip(".-/")
    target_words = target_words if of_another_checkpoint(target_words) else None
    gpus_named = _named_gpus(tokens, presets)
    gpu, gpu_words = next(iter(gpus_named), None), None
    if gpu is None and (family := _family_gpu(words, presets)):
        gpu, gpu_words = family
    unknown_model = None if target is not None else _sized_model(unbatched, index) or _versioned_model(unbatched, presets)
    unknown_model = None if unknown_model is None else cut_at_word(unknown_model)  # a 1,000-character name said back whole
    lower = words.lower()
    methods = named_methods(words)
    draft = next((kind for kind, baseline in methods if not baseline), drafts[0] if drafts else None)
    baseline = next((kind for kind, baseline in methods if baseline and kind != draft), None)
    # The dataset of the figure's own clause, between the figures before and after it: "2.11x on the
    # Random dataset and 1.80x on ShareGPT" does not give 2.11x on ShareGPT.
    bounds = [f.span() for f in written]
    clause = unbatched[max((end for _, end in bounds if end <= figure.start()), default=0):
                       min((start for start, _ in bounds if start >= figure.end()), default=len(unbatched))].lower()
    dataset = next((name for name in _DATASETS if name.lower() in clause), None)
    batch, more_batches = _figure_batch(words, figured, unbatched, figure)
    gamma = _gamma(words)
    in_range = gamma is None or 1 <= gamma <= settings.get("SPECVIZ_GAMMA_MAX")
    context = _context(words)
    context_held = context is None or context <= settings.get("SPECVIZ_CONTEXT_MAX")
    throughput = _THROUGHPUT_FIGURE.search(unbatched[figure.start():figure.end() + 40]) is not None
    stated = {"batch": batch is not None, "context": context is not None, "dataset": dataset is not None,
              "method": draft is not None,
              "model": target is not None or unknown_model is not None,
              "hardware": gpu is not None,
              "equal_footing": not throughput or _EQUAL_FOOTING.search(words) is not None}
    unstated = tuple(key for key, pattern in UNSTATED.items()
                     if not stated.get(key, pattern is not None and re.search(pattern, lower) is not None))
    return SentenceReading(speedup, batch, gpu, target, draft, dataset, unstated, baseline,
                           None if baseline else over_words(unbatched, figure.span(), bounds), percent_of(figure_words),
                           gpu_words, unknown_model, _gpu_count(unbatched, presets), gamma if in_range else None, _precision(words), _kv(words),
                           None if in_range else gamma, throughput and _SAME_SPEED.search(words) is not None,
                           target_words, _engine(words),
                           bool(methods) or _SPECULATION_WORDS.search(words) is not None,
                           context if context_held else None, None if context_held else context,
                           tuple(gpus_named[1:]), more_batches)


def _figure_batch(words: str, figured: str, unbatched: str, figure: re.Match) -> tuple[int | None, tuple[int, ...]]:
    """The batch a sentence's claimed ``figure`` is at, and the other batches it names: the batch named
    after the figure and before the next figure, else the last named before it since the previous one,
    else the first the sentence names (:func:`specviz.advice.claim_words.batch_in_words`). "0.9x at batch
    256 and 1.5x at batch 64" claims 1.5× at batch 64 (a regression pass: the check had been of 1.5× at
    batch 256). ``figured`` is ``words`` with multiples in
    figures, ``unbatched`` the same without its batches, where ``figure`` was found: the figures of
    both are the same, in the same order."""
    in_unbatched = [m.span() for m in FIGURE_IN_SENTENCE.finditer(unbatched)]
    in_figured = list(FIGURE_IN_SENTENCE.finditer(figured))
    named = list(BATCH_WORDS.finditer(figured))
    if len(named) < 2 or len(in_unbatched) != len(in_figured) or figure.span() not in in_unbatched:
        return batch_in_words(words), other_batches(words)
    at = in_unbatched.index(figure.span())
    start, end = in_figured[at].span()
    before = in_figured[at - 1].end() if at else 0
    after = in_figured[at + 1].start() if at + 1 < len(in_figured) else len(figured)
    own = ([b for b in named if end <= b.start() < after] or [b for b in named if before <= b.start() < start][-1:])
    if not own:
        return batch_in_words(words), other_batches(words)
    # The batches listed after its own ("at batch 1, 32 and 256"); another figure's own batch is that
    # figure's, not one this check leaves out.
    return batch_in_words(own[0].group(0)), other_batches(figured[own[0].start():])


def sentence_choices(reading: SentenceReading, presets: Presets, target: str) -> tuple[dict[str, str], str | None]:
    """The scenario's choices a sentence sets, as the Claims page and ``specviz claim`` set them: its
    ``gpu`` and ``target`` where it names them, its ``precision`` (``checkpoint`` where the target's
    checkpoint ships that format already: gpt-oss "in MXFP4" is as shipped, MXFP4 experts and BF16
    attention),
    the KV cache's format as ``kv``, the engine it measured as ``engine``, its drafting method as the ``draft`` where the model
    the scenario ends with (``target``) can draft with it, and its count of GPUs as ``tp`` and ``dp``
    where the sidebar splits that many (:func:`specviz.scenario.split_of`; after the GPU and the target,
    which set them afresh); and the method where it cannot draft with it (MTP named of Qwen3-32B),
    which is said rather than dropped, else None."""
    choices = {key: value for key, value in (("gpu", reading.gpu), ("target", reading.target)) if value is not None}
    if reading.precision is not None:  # set even where it is the sidebar's: a sentence is read from the defaults
        choices["precision"] = "checkpoint" if _ships(presets.models[target], reading.precision) else reading.precision
    if reading.kv is not None:
        choices["kv"] = reading.kv
    if reading.engine is not None and reading.engine in presets.engines:
        choices["engine"] = reading.engine
    if reading.gpus is not None and (split := split_of(reading.gpus)) is not None:
        choices.update(tp=str(split[0]), dp=str(split[1]))
    if reading.draft is not None and reading.draft in draft_choices(presets, target):
        return {**choices, "draft": reading.draft}, None
    return choices, reading.draft
