"""The scenario every page, the URL and the command line share: hardware, models, engine, precision,
tensor parallelism, how the tokens are drafted, the cost knobs, the point (α, γ, batch, context) and
the load (a request's tokens in and out, and whether each step carries arriving prompts).

Each setting is declared once, in :data:`FIELDS` (its URL parameter, default, range and step), and
read from there by the calculator's controls, by :func:`from_query_params` (a shared link, the
command line's ``calc``) and by :func:`to_query_params` (the link that reproduces a scenario: only
what differs from the defaults is written).

Defaults are the realistic case: H100s, Qwen3-32B with a Qwen3-0.6B draft model, vLLM V1's costs
(:func:`preset_costs`), context 1,024, as many GPUs as the pair needs (:func:`default_parallel`). The ideal
roofline (every share of peak reached, no cost beyond it) is :meth:`Scenario.ideal`, the hardware's
optimistic case, labelled so.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import settings, workload
from .errors import InputError, Notice
from .model import architecture, calibration, drafters, dtypes, hf_config, memory, mtp, published, roofline, spec, step

__all__ = ["CUSTOM", "PAGE_PATHS", "Field", "FIELDS", "COST_KNOBS", "CHOICES", "WEIGHT_CHOICES", "MODEL_GROUPS", "MODES", "TENSOR_PARALLEL",
           "DATA_PARALLEL", "EXPERT_PARALLEL", "PREFILL",
           "DRAFT_KINDS", "Presets", "Scenario", "load_presets", "preset_costs", "model_group", "model_choices",
           "default_draft", "draft_choices", "resolve_draft", "expanded_compute", "custom_draft", "head_mismatch", "vocab_mismatch", "resolve_precision", "memory_use", "largest_batch", "default_parallel",
           "knobs_off_preset", "holds_default_point", "to_query_params", "from_query_params", "LINK_NAMES", "near_names",
           "published_acceptance"]

Mode = Literal["step", "ratios"]


@dataclass(frozen=True)
class Field:
    """One numeric setting: URL parameter ``name``, ``default`` (None: the engine preset's, see
    :func:`preset_costs`, or, for a device figure, the GPU preset's), bounds and a control's step.
    ``high`` may name a setting (:mod:`specviz.settings`) that bounds it."""

    name: str
    default: float | None
    low: float
    high: float | str
    step: float
    whole: bool = False

    @property
    def upper(self) -> float:
        """The largest value: a number, or a setting's (a whole number for a whole field)."""
        if not isinstance(self.high, str):
            return self.high
        return int(settings.get(self.high)) if self.whole else float(settings.get(self.high))

    def parse(self, text: str) -> float:
        """The value a URL's text gives, or ValueError when the text is not a number in range."""
        value = float(text)
        if not (math.isfinite(value) and self.low <= value <= self.upper) or (self.whole and value != int(value)):
            raise InputError("scenario.out_of_range", name=self.name, low=self.low, high=self.upper)
        return int(value) if self.whole else value


FIELDS: dict[str, Field] = {f.name: f for f in (
    Field("alpha", 0.8, 0.0, 1.0, 0.01),
    Field("gamma", 4, 1, "SPECVIZ_GAMMA_MAX", 1, whole=True),
    Field("batch", 64, 1, "SPECVIZ_BATCH_MAX", 1, whole=True),
    # A typical chat turn's cached positions; 0 would hide the KV cache's reads entirely.
    Field("context", 1024, 0, "SPECVIZ_CONTEXT_MAX", 1, whole=True),
    # Ratios mode: seed 000's form. At least 1: a verify pass reads what a plain pass reads and scores
    # γ + 1 tokens where it scores one, so it costs no less; below 1 the speedup would pass E ≤ γ + 1.
    Field("verify_cost", 1.0, 1.0, 100.0, 0.1),
    Field("draft_cost", spec.SEED_DRAFT_COST, 0.0, 10.0, 0.01),
    # A mixture of experts' verify pass: the share of a token's experts its previous token chose too.
    Field("routing_overlap", step.ROUTING_OVERLAP, 0.0, 1.0, 0.01),
    # An MTP layer run past the positions it was trained for: what each further position keeps.
    Field("mtp_reuse", mtp.REUSE, 0.0, 1.0, 0.01),
    # A request's tokens in and out: the Latency view's workload, and with ``prefill`` the load whose
    # arriving prompts share each step. The defaults are data/workloads.csv's coding assistant's.
    Field("input_tokens", 100, 1, "SPECVIZ_CONTEXT_MAX", 1, whole=True),
    Field("output_tokens", 500, 1, "SPECVIZ_CONTEXT_MAX", 1, whole=True),
    Field("mfu", None, 0.05, 1.0, 0.05),
    Field("mbu", None, 0.05, 1.0, 0.05),
    Field("overlap", None, 0.0, 1.0, 0.05),
    Field("step_ms", None, 0.0, 50.0, 0.05),
    Field("layer_us", None, 0.0, 400.0, 1.0),
    Field("token_us", None, 0.0, 500.0, 1.0),
    Field("allreduce_us", None, 0.0, 50.0, 0.5),
    Field("draft_pass_us", None, 0.0, 5000.0, 10.0),
    Field("speculation_ms", None, 0.0, 50.0, 0.05),
    # Positive and bounded: a zero or an overflowing figure would make a pass take no time.
    Field("tflops", None, 0.001, roofline.MAX_TFLOPS, 1.0),
    Field("bandwidth", None, 0.001, roofline.MAX_BANDWIDTH_TB_S, 0.01),
)}
COST_KNOBS = ("mfu", "mbu", "overlap", "step_ms", "layer_us", "token_us", "allreduce_us", "draft_pass_us", "speculation_ms")
# The id of a model read from an uploaded or pasted config.json (no preset; it cannot travel in a link).
CUSTOM = "custom"
# A component's weight format and the KV cache's, each over the precision's (URL parameters).
WEIGHT_CHOICES = {f"weights_{component}": component for component in architecture.COMPONENTS}
CHOICES = ("gpu", "target", "draft", "engine", "precision", *WEIGHT_CHOICES, "kv", "tp", "dp", "ep", "mode", "prefill")
MODEL_GROUPS = ("dense", "moe")
MODES: tuple[Mode, ...] = ("step", "ratios")
TENSOR_PARALLEL = (1, 2, 4, 8)
# Data-parallel attention groups (each of TENSOR_PARALLEL devices): up to a NVL72's 72 GPUs and more.
DATA_PARALLEL = (1, 2, 4, 8, 9, 16, 32, 64)
EXPERT_PARALLEL = ("off", "on")
PREFILL = ("off", "on")
DEFAULT_GPU, DEFAULT_TARGET, DEFAULT_ENGINE, DEFAULT_PRECISION = "H100-SXM", "Qwen3-32B", "vllm-v1", "checkpoint"
# Each page's path in the app's links (app.py routes them; the calculator, the default, is served at the
# root): a link's path says whose fields it carries, as the command line reads a Claims page's link.
PAGE_PATHS = {"calculator": "what-if", "explorer": "results", "live": "live-metrics", "claims": "check-a-claim"}
# Draft choices that are not preset models or heads: drafts made from the target (its MTP layer,
# heads of its shape) and drafts on the host (:mod:`specviz.model.step`).
DRAFT_KINDS = ("mtp", "eagle3", "peagle", "block", "eagle", "medusa", "ngram", "suffix")


@dataclass(frozen=True)
class Presets:
    """The shipped GPU, model, draft-head, engine and workload presets, by id (a head with the id of
    the target it was trained for)."""

    gpus: dict[str, roofline.GPU]
    models: dict[str, architecture.Model]
    engines: dict[str, calibration.Engine]
    heads: dict[str, tuple[str, architecture.Model]] = field(default_factory=dict)
    acceptance: tuple[published.PublishedAcceptance, ...] = ()
    workloads: dict[str, workload.Workload] = field(default_factory=dict)


def load_presets(data_dir: Path) -> Presets:
    """The GPU, model, engine, draft-head and workload presets of a data folder (``gpus.csv``,
    ``models.csv``, ``engines.csv``, ``draft_heads.csv``, ``workloads.csv``)."""
    models = hf_config.load_models(data_dir)
    return Presets(roofline.load_gpus(data_dir), models, calibration.load_engines(data_dir),
                   hf_config.load_draft_heads(data_dir), published.load_published_acceptance(data_dir, models),
                   workload.load_workloads(data_dir))


def published_acceptance(acceptance: Sequence[published.PublishedAcceptance], target_id: str,
                         draft_id: str) -> list[published.PublishedAcceptance]:
    """The published acceptances (``acceptance``: :attr:`Presets.acceptance`) of this target with this
    draft, matched by the draft's exact id: sourced starting points for α."""
    return [row for row in acceptance if (row.target, row.draft) == (target_id, draft_id)]


def preset_costs(engine: calibration.Engine) -> step.Costs:
    """The realistic costs of an engine: the median shares of peak of
    :data:`specviz.model.calibration.ROOFLINE_PRIORS` and the engine's median costs (``data/engines.csv``)."""
    shares = {name: prior[0] for name, prior in calibration.ROOFLINE_PRIORS.items()}
    return step.Costs(**shares, step_ms=engine.step_ms[0], layer_us=engine.layer_us[0],
                      token_us=engine.token_us[0], allreduce_us=engine.allreduce_us[0],
                      draft_pass_us=engine.draft_pass_us[0], speculation_ms=engine.speculation_ms[0])


def model_group(model: architecture.Model) -> str:
    """Where a model is listed (:data:`MODEL_GROUPS`): a mixture of experts, or dense."""
    return "moe" if model.num_experts else "dense"


def model_choices(models: Mapping[str, architecture.Model]) -> list[str]:
    """The preset models in the order a list shows them: dense, then mixtures of experts, each in the
    presets' order."""
    return sorted(models, key=lambda m: MODEL_GROUPS.index(model_group(models[m])))


def default_draft(target_id: str, presets: Presets, target: architecture.Model | None = None) -> str:
    """The draft a new scenario starts with (``target``: the model of ``target_id``, which an uploaded
    config.json gives where it is no preset): the target's own MTP layer where its checkpoint ships one
    and an engine runs it (:data:`specviz.model.mtp.SERVED`: DeepSeek-V3 and V4, GLM-4.5 and 5, Qwen3-Next and 3.5;
    MiniMax-M2's modules, which none runs yet, are a choice, not the start); else the smallest preset model of the
    target's family (its ``model_type``, a mixture of experts counted with its dense kin) with the
    same vocabulary and at most a sixth of its size, for the verify pass compares token ids and equal
    sizes alone do not make one tokenizer (Mixtral and TinyLlama both have 32,000 tokens), and a draft
    pass must cost a small share of a target pass (gpt-oss-20b is no draft for gpt-oss-120b); else a
    head preset trained for the target; else an EAGLE-3 head of the target's shape."""
    models = presets.models
    target = models[target_id] if target is None else target
    if target.mtp is not None and target.model_type in mtp.SERVED:
        return "mtp"
    family = lambda model: model.model_type.removesuffix("_moe")
    kin = [m for m, model in models.items() if m != target_id and family(model) == family(target)
           and model.vocab_size == target.vocab_size and 6 * model.params_total <= target.params_total]
    heads = heads_for(presets, target_id)
    return min(kin, key=lambda m: models[m].params_total) if kin else heads[0] if heads else "eagle3"


def heads_for(presets: Presets, target_id: str) -> list[str]:
    """The ids of the draft-head presets trained for ``target_id``."""
    return [head for head, (trained_for, _) in presets.heads.items() if trained_for == target_id]


def draft_choices(presets: Presets, target_id: str) -> list[str]:
    """Every draft id a scenario with ``target_id`` takes: the kinds (the MTP layer only where the
    target has one; all for a model of one's own), the head presets trained for the target, then the
    preset models (:func:`model_choices`)."""
    target = presets.models.get(target_id)
    kinds = [k for k in DRAFT_KINDS if k != "mtp" or target is None or target.mtp is not None]
    return [*kinds, *heads_for(presets, target_id), *model_choices(presets.models)]


def split_of(gpus: int) -> tuple[int, int] | None:
    """How a count of GPUs is split as the sidebar splits them, (tp, dp): a group of up to
    :data:`TENSOR_PARALLEL`'s largest, or data-parallel groups of that many (16 GPUs: 8 × 2); None for a
    count no split gives (3, 12)."""
    widest = TENSOR_PARALLEL[-1]
    if gpus in TENSOR_PARALLEL:
        return gpus, 1
    if gpus % widest == 0 and gpus // widest in DATA_PARALLEL:
        return widest, gpus // widest
    return None


def resolve_precision(name: str, weights: Mapping[str, str], kv: str | None) -> dtypes.Precision:
    """The precision ``name`` (:data:`specviz.model.dtypes.PRECISIONS`) with a component's weight
    format replaced where ``weights`` names one and the KV cache's where ``kv`` does."""
    base = dtypes.PRECISIONS[name]
    return replace(base, kv=kv or base.kv, overrides=tuple(sorted(weights.items())))


def resolve_draft(draft_id: str, presets: Presets) -> step.Draft:
    """A draft id (:func:`draft_choices`) as a :class:`specviz.model.step.Draft`."""
    if draft_id in DRAFT_KINDS:
        return step.Draft(draft_id)
    if draft_id in presets.heads:
        return step.Draft("eagle3", presets.heads[draft_id][1])
    return step.Draft("model", presets.models[draft_id])


def custom_draft(model: architecture.Model) -> step.Draft:
    """The draft of an uploaded config.json: an EAGLE-3 head's own config (read as model type
    ``eagle3``, :func:`specviz.model.hf_config.model_from_config`) drafts as that head, any other
    config as a separate draft model."""
    return step.Draft("eagle3" if model.model_type == "eagle3" else "model", model)


def check_hardware(gpu: roofline.GPU, tp: int, dp: int) -> None:
    """Refuse what the step model cannot price: a GPU without its peak or bandwidth, or ``tp`` × ``dp``
    of them that its links do not join (:meth:`specviz.model.roofline.GPU.joins`). The sidebar and every
    command that reads a calculator link refuse it alike (a review: ``specviz calc`` had priced 16 A100s
    in two groups of 8, which the sidebar refuses).

    Raises
    ------
    InputError
        ``scenario.gpu_incomplete``, ``scenario.no_link`` (several GPUs, no link figure) or
        ``scenario.beyond_domain`` (more than its scale-up domain, no scale-out network).
    """
    if not gpu.complete:
        raise InputError("scenario.gpu_incomplete", gpu=gpu.name)
    if tp * dp > 1 and not math.isfinite(gpu.link_gb_s):
        raise InputError("scenario.no_link", gpu=gpu.name)
    if not gpu.joins(tp * dp):
        raise InputError("scenario.beyond_domain", gpu=gpu.name, gpus=tp * dp, domain=int(gpu.scale_up_gpus))


def head_mismatch(target: architecture.Model, draft: step.Draft) -> InputError | None:
    """Why a draft head cannot serve ``target``, or None: a head that reads another hidden size than
    the target's (:attr:`specviz.model.architecture.Model.reads_hidden_size`; an EAGLE-3 head's fc takes
    three of its target's layers, 3·h wide) does not load on it, whatever its vocabulary, so no figure
    is given for the pair (``side.head_mismatch``: the head, the size it reads, the target's)."""
    reads = draft.model.reads_hidden_size if draft.model is not None else None
    if reads is None or reads == target.hidden_size:
        return None
    return InputError("side.head_mismatch", head=draft.model.name, reads=reads, target=target.name,
                      hidden=target.hidden_size)


def vocab_mismatch(target: architecture.Model, draft: step.Draft | None) -> Notice | None:
    """``side.vocab_mismatch`` where a draft model or head has another vocabulary size than ``target``:
    verification compares token ids, so the pair needs one tokenizer (two sizes over one tokenizer are
    padding, which :mod:`specviz.advice.compat` tells apart from their tokenizer.json files). The
    figures are still given, as for any pair; the sidebar, ``calc`` and the serving command say it."""
    drafter = draft.model if draft is not None else None
    if drafter is None or drafter.vocab_size == target.vocab_size:
        return None
    return Notice("side.vocab_mismatch", draft=drafter.vocab_size, target=target.vocab_size)


def _held_draft(target: architecture.Model, draft: step.Draft | None) -> tuple[architecture.Model | None, int]:
    """The draft model whose weights and cache a GPU holds, and how many times: none for plain
    decoding (``draft`` None) or self-speculation, which reads the target's cache; a host draft's
    drafter is None already; a target's MTP layers each (MiniMax-M2.5's three:
    :func:`specviz.model.memory.memory_terms`) without their copies of the embedding and the LM
    head, which the engine shares with the target's (vLLM 0.33.0's ``llm_base_proposer.py``:
    "Detected MTP model. Sharing target model embedding weights with the draft model", and its LM
    head; SGLang 0.5.23's EAGLE worker, which runs MTP, ``set_embed_and_head``: DeepSeek-V3's 1.85B
    parameters, 3.7 GB in BF16); an EAGLE-3 head read from its config without its input embedding,
    which it gathers from the target's (SpecForge saves no ``embed`` weights; vLLM's proposer: "Sharing
    target model embedding weights with the draft model" where the checkpoint has none or the
    target's; gpt-oss-120b's table is 0.58B parameters, 1.16 GB), its own head kept; any other
    drafter once."""
    if draft is None or draft.kind == "self":
        return None, 1
    drafter = drafters.drafter(target, draft)
    if drafter is not None and drafter.model_type == "eagle3":
        shared = drafter.vocab_size * drafter.hidden_size
        return replace(drafter, params={**drafter.params, "embeddings": drafter.params["embeddings"] - shared}), 1
    if draft.kind != "mtp":
        return drafter, 1
    return replace(drafter, params={**drafter.params, "embeddings": 0}), max(1, target.mtp_layers)


def memory_use(gpu: roofline.GPU, target: architecture.Model, draft: step.Draft | None, precision: dtypes.Precision,
               *, tp: int, dp: int = 1, batch: ArrayLike, context: ArrayLike, gamma: ArrayLike,
               rule: memory.MemoryRule = memory.VLLM_RULE) -> dict[str, float | np.ndarray]:
    """What each GPU of the ``tp·dp`` holds serving the pair (:func:`specviz.model.memory.memory_terms`):
    the draft's weights and cache where it has a device pass of its own (none for ``draft`` None,
    a host draft or self-speculation, which reads the target's cache)."""
    drafter, copies = _held_draft(target, draft)
    return memory.memory_terms(gpu.memory_gb, target, drafter, precision, tp=tp, dp=dp, batch=batch, context=context,
                               gamma=gamma, rule=rule, draft_copies=copies)


def largest_batch(gpu: roofline.GPU, target: architecture.Model, draft: step.Draft | None, precision: dtypes.Precision,
                  *, tp: int, dp: int = 1, context: ArrayLike, gamma: ArrayLike,
                  rule: memory.MemoryRule = memory.VLLM_RULE) -> int | np.ndarray:
    """The largest batch that fits, with the draft or (``draft`` None) plain decoding
    (:func:`specviz.model.memory.max_batch`)."""
    drafter, copies = _held_draft(target, draft)
    return memory.max_batch(gpu.memory_gb, target, drafter, precision, tp=tp, dp=dp, context=context,
                            gamma=gamma if draft is not None else 0, rule=rule, draft_copies=copies)


def holds_default_point(gpu: roofline.GPU, target: architecture.Model, draft: step.Draft,
                        precision: dtypes.Precision, tp: int, dp: int,
                        rule: memory.MemoryRule = memory.VLLM_RULE) -> bool:
    """Whether ``tp`` × ``dp`` GPUs hold the pair at the default batch, context and γ, as the engine's
    ``rule`` divides their memory (:func:`largest_batch`): what :func:`default_parallel` asks of each
    split, and what the sidebar says of the split it set."""
    point = {name: FIELDS[name].default for name in ("batch", "context", "gamma")}
    return bool(largest_batch(gpu, target, draft, precision, tp=tp, dp=dp, context=point["context"],
                              gamma=point["gamma"], rule=rule) >= point["batch"])


def default_parallel(gpu: roofline.GPU, target: architecture.Model, draft: step.Draft,
                     precision: dtypes.Precision, rule: memory.MemoryRule = memory.VLLM_RULE) -> tuple[int, int, bool]:
    """How a new scenario splits the model, as (tp, dp, ep): the fewest of :data:`TENSOR_PARALLEL`
    whose memory, as the engine's ``rule`` divides it, holds the pair at the default batch and context
    (:func:`largest_batch`; Qwen3-32B in BF16 with a draft: 2 H100s, for one holds 65.5 GB of weights
    but not the 17 GB of KV besides); for a
    mixture of experts that 8 GPUs do not hold, the fewest data-parallel attention groups of 8 with
    expert parallelism that do, where the GPU's domain or its scale-out network reaches them
    (DeepSeek-V3 in FP8 on H100s: 2 groups, 16 GPUs); else the most GPUs its link joins
    (:meth:`specviz.model.roofline.GPU.joins`: 8, or an A40's 2), said not to fit. 1 GPU on a device
    without an interconnect or a memory figure."""
    if not (math.isfinite(gpu.link_gb_s) and math.isfinite(gpu.memory_gb)):
        return 1, 1, False
    fits = lambda tp, dp: holds_default_point(gpu, target, draft, precision, tp, dp, rule)
    joined = [tp for tp in TENSOR_PARALLEL if gpu.joins(tp)]  # A40's link joins 2: no split of 4 is set
    for tp in joined:
        if fits(tp, 1):
            return tp, 1, False
    widest = joined[-1]
    if target.num_experts:
        for dp in DATA_PARALLEL[1:]:
            if gpu.joins(widest * dp) and fits(widest, dp):
                return widest, dp, True
    return widest, 1, False


@dataclass(frozen=True)
class Scenario:
    """One what-if: everything a prediction depends on.

    ``draft_id`` names the draft (:func:`draft_choices`, or ``custom`` for an uploaded config,
    which a link cannot carry) and ``draft`` is what it resolves to. ``routing_overlap`` is the
    share of a token's routed experts that its sequence's previous token chose too, for a mixture
    of experts' verify pass (:func:`specviz.model.step.step`; Cohere's measured 0.38 by default, 0
    for uniform routing, the largest expert tax). ``mtp_reuse`` is what each draft position keeps of
    the acceptance before it where the target's MTP layers run past the positions they were trained
    for (:func:`specviz.model.mtp.reuse`; 1, the i.i.d. chain, bounds it). ``input_tokens`` and ``output_tokens`` are a
    request's (the Latency view's workload); with ``prefill`` the batch is a server's steady load of
    such requests (:func:`specviz.workload.steady_load`, which sets the context to a request's mean), and each step
    also carries the prompts of the requests that replace the finished ones (:func:`specviz.model.step.step`'s ``prompt_tokens``: B·P/O prompt tokens a plain step, E
    times as many a speculative one). Without it, the default, every step decodes only, as the
    seeds' figures and published per-batch tables assume. ``costs`` are the step model's
    knobs (:class:`specviz.model.step.Costs`); in ``ratios`` mode the step's costs are ``verify_cost``
    and ``draft_cost`` as given, seed 000's form, and the hardware is not used.
    """

    gpu: roofline.GPU
    target: architecture.Model
    draft: step.Draft
    engine: calibration.Engine
    costs: step.Costs
    target_id: str
    draft_id: str
    precision: dtypes.Precision = dtypes.PRECISIONS[DEFAULT_PRECISION]
    tp: int = 1
    dp: int = 1
    ep: bool = False
    mode: Mode = "step"
    # The defaults of FIELDS, the one place they are set (a page's controls and links take them there).
    alpha: float = FIELDS["alpha"].default
    gamma: int = FIELDS["gamma"].default
    batch: int = FIELDS["batch"].default
    context: int = FIELDS["context"].default
    verify_cost: float = FIELDS["verify_cost"].default
    draft_cost: float = FIELDS["draft_cost"].default
    routing_overlap: float = FIELDS["routing_overlap"].default
    mtp_reuse: float = FIELDS["mtp_reuse"].default
    input_tokens: int = FIELDS["input_tokens"].default
    output_tokens: int = FIELDS["output_tokens"].default
    prefill: bool = False
    gpu_figures: dict[str, float] = field(default_factory=dict)  # tflops, bandwidth typed over the preset's

    @property
    def parallel(self) -> dict[str, Any]:
        """How the model is split, as :func:`specviz.model.step.pass_time` takes it: ``tp``, ``dp``, ``ep``."""
        return {"tp": self.tp, "dp": self.dp, "ep": self.ep}

    @property
    def attention_groups(self) -> int:
        """The data-parallel attention groups that share one server: ``dp`` for a mixture of experts,
        whose groups meet in the MoE layers; 1 for a dense model, whose ``dp`` ranks are replicas
        (the commands' ``--attn-dp-size`` and ``--dp-size``)."""
        return self.dp if self.target.moe_layers > 0 else 1

    @property
    def load(self) -> dict[str, int]:
        """The prefill each step carries, as :func:`specviz.model.step.step` takes it: ``prompt_tokens``
        (0, decode only, without ``prefill``) and ``output_tokens``."""
        return {"prompt_tokens": self.input_tokens if self.prefill else 0, "output_tokens": self.output_tokens}

    def prompts_per_step(self, batch: ArrayLike) -> np.ndarray:
        """The prompt tokens a plain step carries under the steady load, B·P/O
        (:func:`specviz.model.step.step`; a speculative step carries E times as many); 0 decoding only."""
        return np.asarray(batch, dtype=float) * self.load["prompt_tokens"] / self.load["output_tokens"]

    def step_times(self, *, batch: ArrayLike, gamma: ArrayLike, context: ArrayLike, alpha: ArrayLike | None = None,
                   acceptance_length: ArrayLike | None = None,
                   load: Mapping[str, ArrayLike] | None = None) -> dict[str, np.ndarray]:
        """:func:`specviz.model.step.step` at a point, on the scenario's hardware, models, split,
        precision, costs, routing overlap and load (or ``load``, its ``prompt_tokens`` and
        ``output_tokens`` as :attr:`load` gives them, and a ``prompt_routed_share``: a step carrying
        other prompts than the load's)."""
        return step.step(self.gpu, self.target, self.draft, batch=batch, gamma=gamma, context=context, alpha=alpha,
                         acceptance_length=acceptance_length, **self.parallel, precision=self.precision,
                         costs=self.costs, routing_overlap=self.routing_overlap, mtp_reuse=self.mtp_reuse,
                         **(self.load if load is None else load))

    @property
    def reuse(self) -> dict[str, ArrayLike]:
        """How the draft's acceptance falls along its positions (:func:`specviz.model.mtp.reuse`):
        ``trained`` and ``decay`` for the functions of :mod:`specviz.model.spec`."""
        return mtp.reuse(self.target, self.draft.kind, self.mtp_reuse)

    def expected_tokens(self, alpha: ArrayLike, gamma: ArrayLike) -> float | np.ndarray:
        """E(α, γ) of the scenario's draft: a chain's, or its target's MTP layers' with ``mtp_reuse``
        past the positions they were trained for."""
        return spec.expected_tokens(alpha, gamma, **self.reuse)

    def reuse_from_rates(self, conditional: Sequence[float | None] | None) -> float | None:
        """The reuse factor that measured conditional per-position rates show for the scenario's MTP
        layers (:func:`specviz.model.spec.decay_from_rates` past their trained positions), to the
        sidebar control's 0.01 so that a link carries the same figure; None where the draft is not a
        reused MTP layer, no position past its training was measured, or a rate is not one (above 1
        where a server's counters were read apart)."""
        reused = self.mtp_reused_from
        if reused is None or not conditional or len(conditional) < reused or \
                any(rate is None or not 0.0 <= rate <= 1.0 for rate in conditional):
            return None
        return round(spec.decay_from_rates(conditional, reused - 1), 2)

    @property
    def mtp_reused_from(self) -> int | None:
        """The first draft position at which the engine runs the target's MTP layers past their
        training (:func:`specviz.model.mtp.trained_positions` + 1); None for another draft or
        layers trained for every position."""
        trained = self.reuse["trained"]
        return int(trained) + 1 if math.isfinite(trained) else None

    def gamma_limit(self, gamma_max: int) -> int:
        """The longest draft the scenario takes, up to ``gamma_max``: under a steady load a request
        must decode one whole speculative step after its first token (γ ≤ O − 2, as
        :func:`specviz.workload.steady_load` holds the scenario's own γ to), so that no step finishes more requests
        than the batch holds; ``gamma_max`` decoding only."""
        return max(1, min(gamma_max, self.output_tokens - 2)) if self.prefill else gamma_max

    @property
    def longest_request(self) -> int:
        """The positions one request reaches: its tokens in and out under a steady load, else the
        context (what a command states as vLLM's ``--max-model-len``)."""
        return self.input_tokens + self.output_tokens if self.prefill else self.context

    def beyond_positions(self) -> dict[str, Any] | None:
        """Where :attr:`longest_request` is past the target's ``max_position_embeddings``: the
        target, the length and the limit, which an engine refuses (vLLM: "User-specified
        max_model_len ... is greater than the derived max_model_len") unless the model's RoPE is
        scaled (YaRN) as its card says; None where it is within, or the config states no limit."""
        limit = self.target.max_positions
        if limit is None or self.longest_request <= limit:
            return None
        return {"target": self.target.name, "length": self.longest_request, "limit": limit}

    def draft_beyond_positions(self) -> dict[str, Any] | None:
        """Where :attr:`longest_request` is past a draft model's own ``max_position_embeddings``
        (Gemma-3-1B's 32,768 beside a 128k context): the draft, the length and the limit. vLLM caps
        the draft's length at the shorter of the two models' (``SpeculativeConfig``'s
        ``_maybe_override_draft_max_model_len``), and the figures assume it drafts at every position;
        None for a draft that is no model of its own, within its limit, or whose config states none."""
        limit = self.draft.model.max_positions if self.draft.kind == "model" and self.draft.model else None
        if limit is None or self.longest_request <= limit:
            return None
        return {"draft": self.draft.model.name, "length": self.longest_request, "limit": limit}

    def memory(self) -> dict[str, float | np.ndarray]:
        """Each GPU's memory at the scenario's batch, context and γ, as its engine divides it
        (:func:`memory_use`)."""
        return memory_use(self.gpu, self.target, self.draft, self.precision, tp=self.tp, dp=self.dp, batch=self.batch,
                          context=self.context, gamma=self.gamma, rule=self.engine.memory)

    def max_batch(self, speculative: bool = True) -> int:
        """The largest batch that fits at the scenario's context, with its draft or plain
        (:func:`largest_batch`)."""
        return int(largest_batch(self.gpu, self.target, self.draft if speculative else None, self.precision,
                                 tp=self.tp, dp=self.dp, context=self.context, gamma=self.gamma, rule=self.engine.memory))

    def ideal(self) -> Scenario:
        """The same scenario on the ideal roofline: peak FLOPS and bandwidth reached, compute and memory
        overlapping, no cost beyond them but the transfers over the scale-up link, which take their
        bytes over its bandwidth (the data itself, not an engine's cost: at TP 2 an ideal pass still
        spends its all-reduces' bytes there). No engine reaches it: it bounds the tokens per second of
        plain and speculative decoding alike, never a forecast. Its speedup bounds the realistic one
        only where the roofline dominates: fixed costs per step slow plain decoding, and speculation
        spreads them over E tokens, so at large batches a realistic speedup can exceed it."""
        return replace(self, costs=step.Costs())

    def drawn(self, draws: int, seed: int = 0) -> Scenario:
        """The same scenario with each cost knob still at the engine's preset drawn ``draws`` times from
        its prior (:func:`specviz.model.calibration.prior_draws`) and each knob the user moved held at
        the user's value: its costs are arrays on a last axis, against which every other input of a
        figure priced from it must broadcast (scalars do). What a band is taken over
        (:func:`specviz.calculator.speedup_band`, :func:`specviz.calculator.band_of`)."""
        hold = {name: getattr(self.costs, name) for name in knobs_off_preset(self)}
        knobs = calibration.prior_draws(self.engine, draws, seed, hold)
        return replace(self, costs=step.Costs(**knobs, link_gb_s=self.costs.link_gb_s))


def expanded_compute(gpu: roofline.GPU, target: architecture.Model, precision: dtypes.Precision) -> Notice | None:
    """``side.expanded`` where the target's weights are in a format the GPU has no peak for (FP4 on
    Hopper): stored and read as such, multiplied at the BF16 peak; None otherwise. The sidebar says
    it, and the command line, which has no sidebar, beside its commands."""
    compute = precision.matmul_compute(target)
    if compute == "bf16" or gpu.runs_at(compute) != "bf16":
        return None
    return Notice("side.expanded", compute="MXFP4" if compute == "w4a8" else compute.upper(), gpu=gpu.name)


def knobs_off_preset(scenario: Scenario) -> dict[str, tuple[float, float]]:
    """Each cost knob that differs from the engine's preset, as (value, preset value): what a badge
    must show, for a shared link can carry knobs the recipient did not choose."""
    preset = preset_costs(scenario.engine)
    return {name: (getattr(scenario.costs, name), getattr(preset, name)) for name in COST_KNOBS
            if not math.isclose(getattr(scenario.costs, name), getattr(preset, name), abs_tol=1e-9)}


# The numeric fields a scenario holds as they are (the cost knobs and GPU figures are held elsewhere).
_POINT_FIELDS = ("alpha", "gamma", "batch", "context", "verify_cost", "draft_cost", "routing_overlap", "mtp_reuse",
                 "input_tokens", "output_tokens")


def _text(value: float) -> str:
    return f"{value:g}"


# What a link's scenario is read from; a page reads other parameters of its own (view, claim_batch, ...).
LINK_NAMES = (*CHOICES, *FIELDS, "workload")


def near_names(names: Sequence[str]) -> dict[str, str]:
    """The link parameters among ``names`` that are no scenario's but read nearly as one (``gama``,
    ``Batch``), each with the one it resembles: a typo, which a link's reader would otherwise drop
    without a word, at the default (a CLI pass: gamma 4 and batch 64 for "gama=2&Batch=8"). A page's
    own parameters resemble none of them."""
    return {name: found[0] for name in names if name not in LINK_NAMES
            and (found := difflib.get_close_matches(name.lower(), LINK_NAMES, n=1, cutoff=0.8))}


def to_query_params(scenario: Scenario, presets: Presets) -> dict[str, str]:
    """The URL parameters that reproduce ``scenario`` through :func:`from_query_params`: each choice
    and value that is not the default, and always the fields whose defaults derive from others (the
    draft, from the target; the GPUs, from the memory need; for a mixture of experts the attention
    groups and expert parallelism), so that a link keeps its figures when a default moves. A model
    from an uploaded config cannot travel in a link: its id, ``custom``, is written as it is, and
    the recipient's page says that it was refused."""
    target_default = DEFAULT_TARGET if scenario.target_id != CUSTOM else None
    draft_default = default_draft(scenario.target_id, presets) if scenario.target_id in presets.models else None
    tp_default, dp_default, ep_default = default_parallel(scenario.gpu, scenario.target, scenario.draft, scenario.precision,
                                                          scenario.engine.memory)
    choices = {"gpu": (scenario.gpu.id, DEFAULT_GPU), "target": (scenario.target_id, target_default),
               "draft": (scenario.draft_id, draft_default), "engine": (scenario.engine.id, DEFAULT_ENGINE),
               "precision": (scenario.precision.name, DEFAULT_PRECISION), "tp": (str(scenario.tp), str(tp_default)),
               "dp": (str(scenario.dp), str(dp_default)), "ep": ("on" if scenario.ep else "off", "on" if ep_default else "off"),
               "mode": (scenario.mode, "step"), "prefill": ("on" if scenario.prefill else "off", "off")}
    derived = {"draft", "tp", *(("dp", "ep") if scenario.target.num_experts else ())}
    params = {name: value for name, (value, default) in choices.items() if value != default or name in derived}
    overrides = dict(scenario.precision.overrides)
    params.update({key: overrides[component] for key, component in WEIGHT_CHOICES.items() if component in overrides})
    if scenario.precision.kv != dtypes.PRECISIONS[scenario.precision.name].kv:
        params["kv"] = scenario.precision.kv
    for name in _POINT_FIELDS:
        if name == "context" and scenario.prefill:  # the load's (steady_load), not a value of its own
            continue
        if getattr(scenario, name) != FIELDS[name].default:
            params[name] = _text(getattr(scenario, name))
    params.update({name: _text(value) for name, (value, _) in knobs_off_preset(scenario).items()})
    params.update({name: _text(value) for name, value in scenario.gpu_figures.items()})
    return params


def from_query_params(params: Mapping[str, str], presets: Presets) -> tuple[Scenario, list[tuple[str, str]]]:
    """The scenario a link describes, and the parameters refused as (name, text received).

    A refused value falls back to its default, as the calculator's controls do; parameters this
    module does not know are ignored (a page may keep its own). Ids are looked up among the
    presets only, so nothing in a link names a file. A request's tokens the link leaves out are its
    ``workload`` preset's where it names one (as the Latency view's controls take them), else the
    fields' defaults.
    """
    refused: list[tuple[str, str]] = []

    def choice(name: str, options: list[str], default: str) -> str:
        text = params.get(name)
        if text is None:
            return default
        if text not in options:
            refused.append((name, text))
            return default
        return text

    def number(name: str, default: Any) -> Any:
        text = params.get(name)
        if text is None:
            return default
        try:
            return FIELDS[name].parse(text)
        except ValueError:
            refused.append((name, text))
            return default

    gpu = presets.gpus[choice("gpu", list(presets.gpus), DEFAULT_GPU)]
    figures = {name: value for name in ("tflops", "bandwidth") if (value := number(name, None)) is not None}
    gpu = replace(gpu, tflops=figures.get("tflops", gpu.tflops), bandwidth_tb_s=figures.get("bandwidth", gpu.bandwidth_tb_s))
    target_id = choice("target", list(presets.models), DEFAULT_TARGET)
    draft_id = choice("draft", draft_choices(presets, target_id), default_draft(target_id, presets))
    draft = resolve_draft(draft_id, presets)
    precision_name = choice("precision", list(dtypes.PRECISIONS), DEFAULT_PRECISION)
    weights = {component: text for key, component in WEIGHT_CHOICES.items()
               if (text := choice(key, ["", *dtypes.FORMATS], ""))}
    precision = resolve_precision(precision_name, weights, choice("kv", ["", *dtypes.KV_FORMATS], "") or None)
    engine = presets.engines[choice("engine", list(presets.engines), DEFAULT_ENGINE)]
    tp_default, dp_default, ep_default = default_parallel(gpu, presets.models[target_id], draft, precision, engine.memory)
    tp = int(choice("tp", [str(n) for n in TENSOR_PARALLEL], str(tp_default)))
    dp = int(choice("dp", [str(n) for n in DATA_PARALLEL], str(dp_default)))
    ep = choice("ep", list(EXPERT_PARALLEL), "on" if ep_default else "off") == "on"
    preset = preset_costs(engine)
    costs = step.Costs(**{name: number(name, getattr(preset, name)) for name in COST_KNOBS})
    named = presets.workloads.get(params.get("workload", ""))  # its input_tokens and output_tokens
    scenario = Scenario(
        gpu=gpu, target=presets.models[target_id], draft=draft, engine=engine, costs=costs, target_id=target_id,
        draft_id=draft_id, precision=precision, tp=tp, dp=dp, ep=ep, mode=choice("mode", list(MODES), "step"),  # type: ignore[arg-type]
        **{name: number(name, getattr(named, name, FIELDS[name].default)) for name in _POINT_FIELDS},
        gpu_figures=figures)
    # Given ratios take no load (the page's control is disabled there), as the page computes.
    if choice("prefill", list(PREFILL), "off") == "on" and scenario.mode == "step":
        try:
            scenario = workload.steady_load(scenario, scenario.input_tokens, scenario.output_tokens)
        except InputError:  # a load the model does not hold: decoding only, and the link told so
            refused.append(("prefill", "on"))
    return scenario, refused
