"""From a scenario to vLLM's serving command, and what every engine's command shares: the draft's
name and the target's words (the memory flags and the hosts: :mod:`specviz.advice.memory_flags`;
SGLang's command: :mod:`specviz.advice.sglang`; TensorRT-LLM's: :mod:`specviz.advice.trtllm`).

vLLM changed how speculation is configured several times; a flag that works in one release is
ignored or rejected in another. Each fact below names the first release it holds for and where it
was checked (each release's source package on PyPI, and the pull request that made the change):

* up to 0.8.1, separate flags: ``--speculative-model`` (``[ngram]`` for prompt lookup),
  ``--num-speculative-tokens``, ``--ngram-prompt-lookup-max/-min``,
  ``--speculative-draft-tensor-parallel-size``, ``--speculative-disable-by-batch-size``;
* 0.8.2 added ``--speculative-config`` (vllm-project/vllm pull request #14434) and warned that the
  old flags would go; 0.8.3 removed them (#15466) and reads the config as JSON;
* ``disable_by_batch_size`` was read only by the V0 engine's speculative worker. From 0.8 the V1
  engine is the default, and it never read the key; 0.10.0 deleted V0, so from then the key was
  accepted and silently ignored; 0.17.0 removed it (#35060), and the config, which forbids unknown
  keys, rejects it;
* ``num_speculative_tokens_per_batch_size`` (#32374, first in 0.24.0): a list of
  ``[first batch, last batch, draft length]``, inclusive, sorted, not overlapping, the first
  starting at 1; a gap takes the previous range's length and batches past the last range take the
  last one; each length is capped at ``num_speculative_tokens``; with data parallelism > 1 ranks
  that pick different lengths deadlock, so 0.33.0 turns it off (``config/vllm.py``,
  ``_maybe_disable_dynamic_sd_for_data_parallel``; 0.24.0 did not), and so do these commands in
  every release; 0.33.0 keeps it, on its V1 model runner, for ngram, eagle, eagle3, mtp,
  draft_model and dflash only, and runs suffix decoding there (Model Runner V2 does not), so it
  drops a suffix schedule (``_maybe_disable_dynamic_sd_for_v1``), which 0.24.0 applied;
* methods: ``ngram``, ``eagle``, ``medusa``, ``mlp_speculator`` and ``draft_model`` from 0.8.2,
  ``eagle3`` from 0.8.5 (0.8.4's config has no such method), ``mtp`` from 0.11.0, ``suffix`` from
  0.11.1 (#25784), ``dflash`` (a block drafter that proposes γ tokens in one pass) from 0.20.0
  (none in 0.19.0); ``draft_model`` on the V1 engine only from 0.16.0 (#24322: 0.10.0 to 0.14.0
  refuse it, 0.15 has no source package to check); ``"parallel_drafting": true`` (P-EAGLE: all γ
  drafts in one pass of a head trained for it, "only compatible with EAGLE and draft model
  methods") from 0.16.0 (none in 0.14.0). Before 0.8.2 ``--speculative-model`` took a
  draft model, an EAGLE, Medusa or MLP-speculator checkpoint (told apart by its architecture) or
  ``[ngram]``. ``mtp`` runs the target's own multi-token-prediction layers and names no model;
  ``suffix`` builds suffix trees of the prompts and outputs with Arctic Inference (the
  ``arctic-inference`` package beside vLLM) and names no model either;
* the engine a method runs on while V0 exists: in 0.8.2 the V1 check reads only the old flags, and
  V1's model runner then refuses every method but ngram ("only ngram spec decode is supported in
  V1", ``v1/worker/gpu_model_runner.py``), so the rest need ``VLLM_USE_V1=0``; from 0.8.3 the check
  falls back to V0 by itself for a method V1 lacks (``arg_utils.py``, "Falling back to V0"):
  Medusa until 0.9.0 (``v1/spec_decode/medusa.py``), ``draft_model`` and the MLP speculator
  always (V1 refuses a draft model until 0.16.0, below);
* removals: the MLP speculator with V0 in 0.10.0 (its architecture is commented out of the model
  registry, "Re-enable this once the MLP Speculator is supported in V1"; V1 has no proposer for
  it), Medusa in 0.33.0 (no longer among ``config/speculative.py``'s methods);
* ``eagle3`` reads hidden states that only some targets expose. Until 0.16.0 the config accepts
  only a target whose model type contains a listed name ("Eagle3 is only supported for Llama
  models" in 0.8.5 to 0.10.0; ``eagle3_target_supported``: llama and qwen from 0.10.1); from 0.10.1
  the V1 model runner also requires that the target's class implements ``SupportsEagle3``
  (``v1/worker/gpu_model_runner.py``, "Model does not support EAGLE3 interface"), the only check
  from 0.17.0. Of the model types specviz reads: llama from 0.8.5, qwen3 from 0.10.1, qwen2 from
  0.10.2, gpt_oss from 0.11.0 (none in 0.10.2), qwen3_moe and llama4_text (Llama 4's
  ``mllama4.py`` class; "llama4" passes the name check) from 0.11.1, mistral and phi3 (their
  classes derive from Llama's) from 0.17.0, deepseek_v3, deepseek_v32 and kimi_k2
  (``DeepseekV3ForCausalLM``, ``deepseek_v2.py``; Kimi-K2.5's ``kimi_k25.py``) from 0.18.0 (none
  in 0.17.0), qwen3_next from 0.24.0 (none in 0.23.0); qwen2_moe, mixtral, glm4_moe and
  gemma3_text in no release up to 0.33.0 (``model_executor/models/*.py``, ``registry.py``);
* ``mtp`` maps a target's model type to its MTP draft (``hf_config_override``): DeepSeek-V3 and
  V3.2, MiMo, GLM-4.5, ERNIE-4.5-MoE, Qwen3-Next and LongCat-Flash in 0.11.0, GLM-5 from 0.16.0,
  Qwen3.5 from 0.17.0, DeepSeek-V4 from 0.20.0 (:data:`specviz.model.mtp.SERVED`); any other
  target is refused ("Unsupported speculative method").
* parallelism: ``--tensor-parallel-size`` is per data-parallel rank, so a server of ``tp·dp`` GPUs
  takes ``--tensor-parallel-size tp --data-parallel-size dp``; ``--data-parallel-size`` from 0.8.3
  (V1's ``DPAsyncMPClient``; the MoE layers split over ``tp·dp``), on the V1 engine only;
  ``--enable-expert-parallel`` from 0.8.0 (none in 0.7.3), the routed experts over all ``tp·dp``
  GPUs instead of tensor parallelism; a server beyond one host runs a command per host: its
  data-parallel ranks with ``--data-parallel-size-local``, ``--data-parallel-address`` and
  ``--data-parallel-rpc-port`` (0.9.2) and ``--data-parallel-start-rank`` (0.11.0), a
  tensor-parallel group across hosts with ``--nnodes``, ``--node-rank`` and ``--master-addr``
  (0.11.1; before it, on a Ray cluster, ``--distributed-executor-backend ray``).

References
----------
vLLM source packages 0.7.3 to 0.33.0 on PyPI (``vllm/engine/arg_utils.py``,
``vllm/config/speculative.py``, ``vllm/v1/spec_decode/dynamic/utils.py``); pull requests #14434,
#15466, #24322, #25784, #32374, #35060 of vllm-project/vllm.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from specviz.errors import Notice, SpecvizError
from specviz.model import mtp, roofline
from specviz.model.architecture import Model
from specviz.model.dtypes import LINEAR_COMPONENTS
from specviz.names import HF_URL, hugging_face_id
from specviz.scenario import Scenario

from .memory_flags import budget_notices, lengths_by_batch, memory_flags, node_notices, step_tokens

__all__ = ["VLLM_VERSIONS", "METHODS", "parse_version", "parse_release", "FINAL", "vllm_default_version", "vllm_schedule",
           "Command", "vllm_command", "speculation_method", "draft_name", "draft_quantization", "checkpoint_id",
           "target_words", "mtp_unserved", "names_a_draft", "vllm_most_seqs", "vllm_drops_schedule",
           "vllm_drafter_slots"]

Version = tuple[int, int, int]
FINAL = 10 ** 6
"""A final release's candidate number in :func:`parse_release`: after every candidate."""

# The releases a user picks from: one per change above, and the newest checked.
VLLM_VERSIONS = ("0.7.3", "0.8.1", "0.8.2", "0.8.3", "0.9.2", "0.10.0", "0.11.0", "0.11.1", "0.16.0", "0.17.0",
                 "0.18.0", "0.20.0", "0.24.0", "0.33.0")
_CONFIG_FLAG = (0, 8, 2)  # --speculative-config
_V0_GONE = (0, 10, 0)
_V1_DEFAULT = (0, 8, 0)  # the V1 engine serves unless told otherwise (vLLM 0.8.0 release notes)
_DISABLE_KEY_GONE = (0, 17, 0)
_SCHEDULE = (0, 24, 0)
_LARGE_BUDGET = (0, 33, 0)  # the first release read with 16,384 tokens a step from 160 GiB (0.24.0 has none)
_SMALL_BUDGET = 2_048
_SUFFIX_SCHEDULE_GONE = (0, 33, 0)  # the first release seen to drop a suffix schedule (0.24.0 kept it)
_DFLASH_OWN_PASS = (0, 33, 0)  # DFlash drafts in a query pass of its own: no slots in the budget (0.24.0 kept K - 1)
_EXPERT_PARALLEL = (0, 8, 0)  # --enable-expert-parallel
_DATA_PARALLEL = (0, 8, 3)  # --data-parallel-size
_DRAFT_MODEL_V1 = (0, 16, 0)
# First release each method is known in, through --speculative-config.
_METHOD_SINCE: dict[str, Version] = {"ngram": (0, 8, 2), "eagle": (0, 8, 2), "draft_model": (0, 8, 2),
                                     "medusa": (0, 8, 2), "mlp_speculator": (0, 8, 2), "eagle3": (0, 8, 5),
                                     "mtp": (0, 11, 0), "suffix": (0, 11, 1), "dflash": (0, 20, 0)}
_PARALLEL_DRAFTING = (0, 16, 0)  # "parallel_drafting" in --speculative-config
# The first release whose V1 engine runs each method (before it, V0 does); None: never.
_V1_SINCE: dict[str, Version | None] = {"medusa": (0, 9, 0), "draft_model": _DRAFT_MODEL_V1, "mlp_speculator": None}
_V0_FALLBACK = (0, 8, 3)  # from here vLLM picks V0 by itself for a method V1 lacks
# The first release that no longer runs each method.
_METHOD_GONE: dict[str, Version] = {"mlp_speculator": (0, 10, 0), "medusa": (0, 33, 0)}
# The first release whose EAGLE-3 runs on a target of each model type; absent: none up to 0.33.0.
_EAGLE3_TARGETS: dict[str, Version] = {"llama": (0, 8, 5), "qwen3": (0, 10, 1), "qwen2": (0, 10, 2), "gpt_oss": (0, 11, 0),
                                       "qwen3_moe": (0, 11, 1), "llama4_text": (0, 11, 1), "mistral": (0, 17, 0),
                                       "phi3": (0, 17, 0), "deepseek_v3": (0, 18, 0), "deepseek_v32": (0, 18, 0),
                                       "kimi_k2": (0, 18, 0), "qwen3_next": (0, 24, 0)}
# What --speculative-model ran before --speculative-config.
_OLD_FLAG_METHODS = {"ngram", "draft_model", "eagle", "medusa", "mlp_speculator"}
# Methods that name no model: the draft is the prompt, the target's own layers or suffix trees.
_NO_MODEL = {"ngram", "mtp", "suffix"}
# The scenario's draft kinds as engines name them.
_VLLM_METHOD = {"model": "draft_model", "eagle": "eagle", "eagle3": "eagle3", "ngram": "ngram", "mtp": "mtp",
                "suffix": "suffix", "medusa": "medusa", "block": "dflash", "peagle": "eagle3"}
# What a placeholder calls a draft that only the user can name (a command's text: English).
_HEAD_NAMES = {"eagle": "EAGLE head", "eagle3": "EAGLE-3 head", "medusa": "Medusa heads", "mlp_speculator": "MLP speculator",
               "dflash": "DFlash drafter", "peagle": "P-EAGLE head"}
# How a command drafts: the scenario's draft (the one the step model's figures are for), or a
# method the step model does not cost: the target's MTP layers, suffix decoding, Medusa heads or
# an MLP speculator.
METHODS = ("draft", "mtp", "suffix", "medusa", "mlp_speculator")
# What a user may give as a checkpoint (target or draft): a Hugging Face id or a local path, nothing a
# shell would read, in ASCII (a Cyrillic "е" in Qwеn/Qwen3-32B is another id that reads the same), and
# not starting with "-", which the command would take for an option (--trust-remote-code).
_CHECKPOINT = re.compile(r"[A-Za-z0-9_.~/][A-Za-z0-9_.~/-]{0,199}")


def parse_release(text: str) -> tuple[int, int, int, int]:
    """A release as (major, minor, patch, candidate): "0.8.3", "v0.10.1.1" (a fourth part is a
    post-release and ignored, as is ``.postN``), "0.11" (patch 0), "1.3.0rc8" (candidate 8). A
    final release's candidate is :data:`FINAL`, so it sorts after its candidates.

    Raises
    ------
    SpecvizError
        ``command.bad_version`` if the text is not such a version.
    """
    found = re.fullmatch(r"\s*v?(\d{1,3})\.(\d{1,3})(?:\.(\d{1,3}))?(?:rc(\d{1,3}))?(?:\.(?:post)?\d{1,3})?\s*",
                         text or "")
    if not found:
        raise SpecvizError("command.bad_version", text=(text or "")[:40])
    return int(found[1]), int(found[2]), int(found[3] or 0), int(found[4]) if found[4] else FINAL


def parse_version(text: str) -> Version:
    """A vLLM version as (major, minor, patch) (:func:`parse_release`, its candidate dropped).

    Raises
    ------
    SpecvizError
        ``command.bad_version`` if the text is not such a version.
    """
    return parse_release(text)[:3]


def vllm_default_version(engine: str) -> str:
    """The vLLM release the command of a scenario on ``engine`` (an engine preset's id) is for unless
    one is chosen: for vLLM V0's preset (``vllm-v0``), the newest of :data:`VLLM_VERSIONS` before V1 became the
    default engine (0.8.0), whose server runs V0 whatever the method; for any other, the newest. A
    newer release would serve the V0 scenario on V1, and from 0.24.0 its command would carry a draft
    length per batch size, which V0 never read."""
    if engine == "vllm-v0":
        return [version for version in VLLM_VERSIONS if parse_version(version) < _V1_DEFAULT][-1]
    return VLLM_VERSIONS[-1]


def vllm_schedule(schedule: pd.DataFrame, version: str) -> tuple[dict[str, Any] | None, Notice | None]:
    """A draft-length schedule (ranges ``first``, ``last``, ``gamma``) as vLLM ``version``'s
    ``--speculative-config`` keys: ``num_speculative_tokens`` its longest draft (at least 1) and
    ``num_speculative_tokens_per_batch_size`` its ranges, from 0.24.0; before it, None and
    ``command.no_schedule`` (the release has no such key). The data-parallel hold is the command's
    (:func:`vllm_command`), which knows the ranks."""
    if parse_version(version) < _SCHEDULE:
        return None, Notice("command.no_schedule", version=version, since=_release(_SCHEDULE))
    return {"num_speculative_tokens": max(1, int(schedule["gamma"].max())),
            "num_speculative_tokens_per_batch_size": [[int(r.first), int(r.last), int(r.gamma)]
                                                      for r in schedule.itertuples()]}, None


def vllm_drops_schedule(method: str, version: str) -> bool:
    """Whether vLLM ``version`` takes ``num_speculative_tokens_per_batch_size`` but drops it for
    ``method`` (one of its own method names): suffix decoding from 0.33.0 (the module's facts)."""
    return method == "suffix" and parse_version(version) >= _SUFFIX_SCHEDULE_GONE


def vllm_most_seqs(scenario: Scenario, version: str) -> int:
    """The most sequences a vLLM rank of ``version`` may be told to hold (``--max-num-seqs``): its
    default token budget a step (``--max-num-batched-tokens``, which the commands leave at its default:
    :func:`specviz.advice.memory_flags.budget_notices`), for vLLM refuses to start with more
    ("max_num_batched_tokens (8192) must be greater than or equal to max_num_seqs",
    ``config/scheduler.py`` in 0.24.0 and 0.33.0; ``config.py`` in 0.7.3).

    ``vllm serve``'s default (``engine/arg_utils.py``, ``get_batch_defaults``): 16,384 from 160 GiB
    (in 0.33.0, not in 0.24.0), 8,192 from 70 GiB but on an A100 (in 0.24.0 and 0.33.0), else 2,048;
    V0 without chunked prefill (0.7.3) the longest request where it passes 2,048. The releases
    between those read take the smaller figure, which each of them accepts: gpt-oss-20b on one H100
    with an FP8 cache holds 13,320 sequences of 256 positions, and 0.33.0 starts with 8,192."""
    v, gpu = parse_version(version), scenario.gpu
    if v < _V1_DEFAULT:
        return max(_SMALL_BUDGET, int(scenario.longest_request))
    gib = gpu.memory_gb / roofline.GB_PER_GIB
    if gib >= 160 and v >= _LARGE_BUDGET:
        return 16_384
    return 8_192 if gib >= 70 and "a100" not in gpu.name.lower() and v >= _SCHEDULE else _SMALL_BUDGET


def vllm_drafter_slots(method: str, parallel_drafting: bool, drafted: int, version: str) -> int:
    """The positions vLLM ``version`` sets aside in its token budget a step for each request beyond its
    token and its drafts (``max_num_new_slots_for_drafting``, ``config/speculative.py`` in 0.24.0 and
    0.33.0), ``drafted`` being ``num_speculative_tokens``: K − 1 for a parallel drafter (P-EAGLE's
    masked queries; DFlash's before 0.33.0, which drafts in a pass of its own), 1 for a draft model
    (its input keeps one unsliced token), 0 for the rest. Both arrived in 0.16.0, with parallel
    drafting and V1's draft model."""
    if parallel_drafting or (method == "dflash" and parse_version(version) < _DFLASH_OWN_PASS):
        return max(0, drafted - 1)
    return 1 if method == "draft_model" else 0


def _seqs_cap(refused: int, schedule: pd.DataFrame | None, gamma: int, slots: int,
              stepping: bool) -> Callable[[int], tuple[int, Notice]]:
    """For :func:`specviz.advice.memory_flags.memory_flags`: from the sequences the memory holds a
    rank, the most a vLLM command states and why. ``refused``: the most vLLM starts with
    (:func:`vllm_most_seqs`); with ``stepping`` (the V1 engine serves), also the most whose step fits
    the budget whole (:func:`specviz.advice.memory_flags.step_tokens`), with the budget that would step at once as many as
    the memory holds or vLLM starts with, whichever is fewer."""
    def cap(held: int) -> tuple[int, Notice]:
        said = Notice("command.seqs_budget", flag="--max-num-seqs", most=refused, held=held)
        if not stepping:
            return refused, said
        # Up to what vLLM starts with: no batch past it is stated (a small model's memory holds millions).
        lengths = lengths_by_batch(schedule, gamma, refused)
        need = step_tokens(lengths, slots)
        most = int(np.count_nonzero(need <= refused))
        if most >= min(held, refused):
            return refused, said
        most = max(1, most)
        key = "command.seqs_spec_budget_slots" if slots else "command.seqs_spec_budget"
        count = min(held, refused)  # the most a command could state with room in the budget
        return most, Notice(key, flag="--max-num-seqs", most=most, held=held, budget=refused, over=most + 1,
                            gamma=int(lengths[most]), slots=slots, count=count, needed=int(need[count - 1]))
    return cap


def _release(version: Version) -> str:
    """A release as a user reads it: (0, 10, 1) is "0.10.1"."""
    return ".".join(map(str, version))


@dataclass(frozen=True)
class Command:
    """A serving command and what to know about it.

    Attributes
    ----------
    argv : list of str
        The command's words (``shlex.join`` gives the line to paste).
    files : dict of str to str
        Files the command reads, by name (SGLang's adaptive tiers), with their text.
    notices : list of Notice
        Warnings and the alternatives where a flag does not take effect.
    problems : list of Notice
        Why the engine would refuse the command as it stands (a draft the version cannot run, a
        draft still to be named): a page shows these as errors, not as notes.
    by_batch : bool
        Whether the command drafts a length by batch (vLLM's ``num_speculative_tokens_per_batch_size``,
        SGLang's adaptive tiers, TensorRT-LLM's ``draft_len_schedule``), else one length throughout.
    """

    argv: list[str]
    files: dict[str, str] = field(default_factory=dict)
    notices: list[Notice] = field(default_factory=list)
    problems: list[Notice] = field(default_factory=list)
    by_batch: bool = False

    @property
    def line(self) -> str:
        """The command as one shell line, every word quoted where it needs to be."""
        return shlex.join(self.argv)

    @property
    def lines(self) -> str:
        """The command with each option and its value on a line of its own, continued by ``\\``:
        what a page shows, where a browser wrapping one long line can break inside an option's name."""
        out: list[str] = []
        for word in self.argv:
            if word.startswith("--") or not out:
                out.append(shlex.quote(word))
            else:
                out[-1] += " " + shlex.quote(word)
        return " \\\n    ".join(out)


# Model types whose config.json and tokenizer are code shipped in the checkpoint (``auto_map``) that no
# engine knows by itself: Moonshot's deployment guide for Kimi-K2 and vLLM's recipe for Kimi-K2-Thinking
# start vLLM and SGLang with --trust-remote-code, TensorRT-LLM's trtllm-serve takes --trust_remote_code.
_REMOTE_CODE_TYPES = ("kimi_k2", "kimi_k25")
_REMOTE_CODE_FLAG = {"vLLM": "--trust-remote-code", "SGLang": "--trust-remote-code",
                     "TensorRT-LLM": "--trust_remote_code"}
# Weight formats that load as one: FP8 with or without block scales, INT4 at any group size.
_FORMAT_FAMILY = {"fp8-block": "fp8", "int4-g32": "int4"}
# What an engine makes of a BF16 checkpoint while loading it: vLLM's and SGLang's --quantization fp8
# (FP8 weights with per-tensor scales, activations scaled per step). FP4, INT4 and a format smaller
# than the checkpoint's need a checkpoint quantized beforehand (ModelOpt, llm-compressor), and
# TensorRT-LLM's PyTorch backend reads the format from the checkpoint alone.
_ONLINE_FP8 = ("vLLM", "SGLang")


def checkpoint_id(text: str) -> str:
    """A Hugging Face id or a checkpoint's path as a user typed it, for a command: a Hugging Face URL
    gives its id (``https://huggingface.co/Qwen/Qwen3-32B/tree/main`` is ``Qwen/Qwen3-32B``).

    Raises
    ------
    SpecvizError
        ``command.bad_checkpoint`` if it is not an id or a path (ASCII letters, digits, ``_ . - /``
        and ``~``, not starting with ``-``, at most 200 characters): the text goes into a shell command.
    """
    if pasted := HF_URL.fullmatch(text.rstrip("/")):
        text = pasted[1]
    if not _CHECKPOINT.fullmatch(text):
        raise SpecvizError("command.bad_checkpoint", text=text[:60])
    return text


def _largest_formats(scenario: Scenario, model: Model) -> tuple[str, str, str]:
    """A model's largest linear component (its experts, or its MLP), the format the scenario serves it
    in and the one its checkpoint ships it in."""
    component = max((c for c in LINEAR_COMPONENTS if model.params.get(c, 0) > 0), key=lambda c: model.params[c])
    return component, scenario.precision.weight_format(model, component).name, model.weight_formats.get(component, "bf16")


def _same_format(served: str, shipped: str) -> bool:
    """Whether weights served in ``served`` load from a checkpoint in ``shipped`` as they are."""
    return _FORMAT_FAMILY.get(served, served) == _FORMAT_FAMILY.get(shipped, shipped)


def target_words(scenario: Scenario, engine: str, problems: list[Notice], notices: list[Notice],
                 target_repo: str | None = None) -> tuple[str, list[str]]:
    """The target as ``engine``'s command names it, and the flags its checkpoint needs.

    The name is ``target_repo`` where given (:func:`checkpoint_id`): a checkpoint of the preset's
    architecture that the preset does not name (DeepSeek-R1 and its FP4 builds serve DeepSeek-V3's
    config.json), which the command takes as it is, in the scenario's weight format, with a notice
    (``command.named_target``) that the figures are the preset's. Otherwise (or where it is the
    preset's own) the Hugging Face id in
    the preset's source, and the format the scenario serves the
    target's largest linear component in (its experts, or its MLP) is compared with the one its
    checkpoint ships: the same format loads as it is; FP8 from a BF16 checkpoint is
    ``--quantization fp8`` on vLLM and SGLang; any other needs a checkpoint in that format, which
    the command names by a placeholder, with a problem (``command.quantized_checkpoint``): the
    memory the page holds is that format's, and the shipped checkpoint would not fit it. A smaller
    component served in another format than it ships is a notice (``command.component_as_shipped``):
    the checkpoint loads it as shipped. A target
    without an id (a config.json the user gave) is a placeholder too (``command.name_the_target``).
    Kimi-K2's model types add the engine's trust-remote-code flag.

    Raises
    ------
    SpecvizError
        ``command.bad_checkpoint`` for a ``target_repo`` that is not an id or a path.
    """
    target, flags = scenario.target, []
    name = hugging_face_id(target.source)
    component, served, shipped = _largest_formats(scenario, target)
    named = checkpoint_id(target_repo) if target_repo else None
    if named and named.lower() != (name or "").lower():
        name = named
        notices.append(Notice("command.named_target", checkpoint=name, target=target.name, weights=served.upper()))
    elif not _same_format(served, shipped):
        if served == "fp8" and shipped == "bf16" and engine in _ONLINE_FP8:
            flags += ["--quantization", "fp8"]
        else:
            # The tools that make a checkpoint of that format: AMD Quark's MXFP4 W4A4, NVIDIA's and
            # llm-compressor's the others (an attack pass: AMD's format had been said to be NVIDIA's).
            tools = Notice("command.quantizers.amd" if served == "mxfp4-w4a4" else "command.quantizers.nvidia")
            problems.append(Notice("command.quantized_checkpoint", target=name or target.name, weights=served.upper(),
                                   shipped=shipped.upper(), engine=engine, tools=tools))
            name = f"<{served.upper()} checkpoint of {name or target.name}>"
    elif not named:
        # A smaller component served in another format than it ships (gpt-oss's attention in MXFP4 where
        # its checkpoint keeps BF16): the checkpoint loads as shipped, a little off the memory shown.
        for other in LINEAR_COMPONENTS:
            if other != component and target.params.get(other, 0) > 0:
                now, then = scenario.precision.weight_format(target, other).name, target.weight_formats.get(other, "bf16")
                if not _same_format(now, then):
                    notices.append(Notice("command.component_as_shipped", target=name or target.name,
                                          component=Notice(f"side.component.{other}"), weights=now.upper(),
                                          shipped=then.upper()))
    if name is None:
        problems.append(Notice("command.name_the_target", target=target.name, engine=engine))
        name = f"<{target.name}>"
    if target.model_type in _REMOTE_CODE_TYPES:
        flags.append(_REMOTE_CODE_FLAG[engine])
    return name, flags


def draft_name(scenario: Scenario, method: str, draft_repo: str | None, problems: list[Notice],
                engine: str) -> str | None:
    """The draft to name in a command for vLLM's ``method``: the user's, a draft model's own id, or
    None (a method without a model); a placeholder, with a problem noted, where nothing names it.

    Raises
    ------
    SpecvizError
        ``command.bad_checkpoint`` if ``draft_repo`` is not an id or a path (:func:`checkpoint_id`).
    """
    if method in _NO_MODEL:
        return None
    if draft_repo:
        return checkpoint_id(draft_repo)
    if method == "draft_model" and (found := hugging_face_id(scenario.draft.model.source)):
        return found
    # A head preset whose source names its published checkpoint (AQ-MedAI/Kimi-K2-Instruct-eagle3); the
    # others are training configs, of heads one trains (data/draft_heads.csv).
    head_preset = scenario.draft.model if scenario.draft.kind == "eagle3" else None
    if method == "eagle3" and head_preset is not None and (found := hugging_face_id(head_preset.source)):
        return found
    # eagle3 from the scenario's P-EAGLE draft is a head trained for parallel drafting.
    head = "peagle" if method == "eagle3" and scenario.draft.kind == "peagle" else method
    name = scenario.draft.model.name if method == "draft_model" else f"{_HEAD_NAMES[head]} for {scenario.target.name}"
    problems.append(Notice("command.name_the_draft", draft=name, engine=engine))
    return f"<{name}>"


def draft_quantization(scenario: Scenario, method: str, draft: str | None, problems: list[Notice],
                       engine: str, flag: str) -> str | None:
    """The quantization a draft model's own weights load with: ``"fp8"`` for a BF16 checkpoint the
    figures serve in FP8 (vLLM's ``--quantization`` is the target's alone: loaded in BF16,
    Llama-3.2-1B took 2.5 GB where the page counts 1.5, an engineer's pass); another format is a
    problem (``command.draft_quantized_checkpoint``, naming ``engine`` and the ``flag`` the draft's
    checkpoint goes in); None where it loads as the figures serve it."""
    if method != "draft_model" or draft is None:
        return None
    _, served, shipped = _largest_formats(scenario, scenario.draft.model)
    if _same_format(served, shipped):
        return None
    if served == "fp8" and shipped == "bf16":
        return "fp8"
    problems.append(Notice("command.draft_quantized_checkpoint", draft=draft, weights=served.upper(),
                           shipped=shipped.upper(), engine=engine, flag=flag))
    return None


def mtp_unserved(scenario: Scenario) -> Notice | None:
    """What the calculator says where its draft is the target's MTP layers and neither vLLM nor
    SGLang runs them for its model type (:data:`specviz.model.mtp.SERVED`: MiniMax-M2.5's three
    modules), so that its speedup is not read as one a server gives, as Deploy refuses the command
    (``command.no_mtp_layers``); None otherwise."""
    if scenario.draft.kind != "mtp" or scenario.target.model_type in mtp.SERVED:
        return None
    return Notice("calc.mtp_unserved", target=scenario.target.name, model_type=scenario.target.model_type)


def speculation_method(scenario: Scenario, method: str, engine: str) -> str:
    """vLLM's name for how ``engine``'s command drafts (``method`` one of :data:`METHODS`).

    Raises
    ------
    SpecvizError
        ``command.bad_method``; ``command.no_self_draft`` for the scenario's self-speculative draft;
        ``command.no_mtp_layers`` for MTP on a target whose model type has no MTP layers.
    """
    if method not in METHODS:
        raise SpecvizError("command.bad_method", method=str(method)[:40], methods=", ".join(METHODS))
    if method == "draft":
        if scenario.draft.kind not in _VLLM_METHOD:
            raise SpecvizError("command.no_self_draft", engine=engine)
        method = _VLLM_METHOD[scenario.draft.kind]
    if method == "mtp" and scenario.target.model_type not in mtp.SERVED:
        raise SpecvizError("command.no_mtp_layers", target=scenario.target.name, model_type=scenario.target.model_type)
    return method


def names_a_draft(scenario: Scenario, method: str) -> bool:
    """Whether a command for ``method`` (:data:`METHODS`) names a draft checkpoint of its own: a draft
    model or a head, not the target's MTP layers, n-gram or suffix decoding (nor a method no command
    serves, :func:`speculation_method`'s refusals)."""
    try:
        return speculation_method(scenario, method, "vLLM") not in _NO_MODEL
    except SpecvizError:
        return False


def vllm_command(scenario: Scenario, version: str, gamma: int, *, schedule: pd.DataFrame | None = None,
                 off_from: int | None = None, draft_repo: str | None = None, target_repo: str | None = None,
                 prompt_lookup_max: int = 4, method: str = "draft") -> Command:
    """``vllm serve`` with the speculation flags ``version`` takes (see the module's facts).

    Parameters
    ----------
    scenario : Scenario
        Target (its Hugging Face id from the preset's source), draft kind and model, tensor
        parallelism.
    version : str
        The vLLM release the command is for.
    gamma : int
        ``num_speculative_tokens`` (the largest of ``schedule`` when one is given).
    schedule : DataFrame, optional
        :func:`specviz.advice.draft_length.gamma_schedule`: written as
        ``num_speculative_tokens_per_batch_size`` from 0.24.0.
    off_from : int, optional
        The batch from which speculation should stop: ``disable_by_batch_size`` where it takes
        effect, otherwise a notice with the alternatives.
    draft_repo : str, optional
        The draft's Hugging Face id (an EAGLE or Medusa head has no preset).
    target_repo : str, optional
        The checkpoint served, where not the preset's own (:func:`target_words`).
    prompt_lookup_max : int
        The n-gram looked up in the prompt (vLLM's ``prompt_lookup_max``): from 0.8.2, with no
        ``prompt_lookup_min``, vLLM takes the same for it (``config/speculative.py``, 0.33.0), so it
        matches exactly this many tokens; 0.7.3's ``--ngram-prompt-lookup-max`` alone matches 1 up
        to it (its ``config.py``).
    method : str
        One of :data:`METHODS`: ``"draft"`` drafts as the scenario says; the others name that
        method whatever the scenario's draft.

    Raises
    ------
    SpecvizError
        ``command.bad_version``; ``command.bad_method``; ``command.method_unknown`` where the
        version predates the method (``command.mtp_before_method`` for ``mtp``, which earlier releases
        ran as ``deepseek_mtp``), ``command.method_gone`` where it no longer runs it,
        ``command.draft_model_unsupported`` for a draft model where only V1 runs and refuses it;
        ``command.eagle3_target_since`` or ``command.eagle3_target_never`` for EAGLE-3 on a target
        the version does not run it for; ``command.no_mtp_layers``; ``command.mtp_target_since`` for
        MTP on a target whose layers the version does not run yet; ``command.no_self_draft`` for a
        self-speculative (sparse KV) draft, which vLLM does not offer; ``command.bad_checkpoint`` for a
        draft id that is not an id or a path.
    """
    v = parse_version(version)
    parallel_drafting = method == "draft" and scenario.draft.kind == "peagle"
    method = speculation_method(scenario, method, "vLLM")
    if parallel_drafting and v < _PARALLEL_DRAFTING:
        raise SpecvizError("command.method_unknown", engine="vLLM", method="parallel_drafting", version=version,
                           since=_release(_PARALLEL_DRAFTING))
    known = v >= _METHOD_SINCE[method] if v >= _CONFIG_FLAG else method in _OLD_FLAG_METHODS
    if not known:
        # Before "mtp", DeepSeek's layer ran as "deepseek_mtp" (vllm/config.py's SpeculativeMethod in
        # 0.9 and 0.10), whose per-release rules these commands do not hold: said, not "another draft".
        raise SpecvizError("command.mtp_before_method" if method == "mtp" else "command.method_unknown", engine="vLLM",
                           method=method, version=version, since=_release(_METHOD_SINCE[method]))
    if method in _METHOD_GONE and v >= _METHOD_GONE[method]:
        raise SpecvizError("command.method_gone", method=method, version=version,
                           gone=_release(_METHOD_GONE[method]))
    if method == "draft_model" and _V0_GONE <= v < _DRAFT_MODEL_V1:
        raise SpecvizError("command.draft_model_unsupported", version=version)
    if method == "eagle3":
        since = _EAGLE3_TARGETS.get(scenario.target.model_type)
        if since is None or v < since:
            raise SpecvizError("command.eagle3_target_since" if since else "command.eagle3_target_never",
                               version=version, target=scenario.target.name,
                               model_type=scenario.target.model_type, since=_release(since) if since else "")
    if method == "mtp" and v < (since := mtp.SERVED[scenario.target.model_type]):
        raise SpecvizError("command.mtp_target_since", version=version, target=scenario.target.name,
                           model_type=scenario.target.model_type, since=_release(since))
    notices: list[Notice] = []
    problems: list[Notice] = []
    # V1 is the default from 0.8; before 0.10.0 a method it lacks runs on V0.
    v0_only = method in _V1_SINCE and (_V1_SINCE[method] is None or v < _V1_SINCE[method])
    env = []
    if v == _CONFIG_FLAG and method != "ngram":
        env = ["VLLM_USE_V1=0"]
        notices.append(Notice("command.v0_env", version=version, method=method))
    elif _V0_FALLBACK <= v < _V0_GONE and v0_only:
        notices.append(Notice("command.v0_fallback", version=version, method=method))
    if method == "mtp":
        notices.append(Notice("command.mtp_layers", target=scenario.target.name))
    elif method == "suffix":
        notices.append(Notice("command.suffix_package", package="arctic-inference"))
    draft = draft_name(scenario, method, draft_repo, problems, "vLLM")
    target, target_flags = target_words(scenario, "vLLM", problems, notices, target_repo)
    argv = [*env, "vllm", "serve", target, *target_flags]
    if scenario.tp > 1:
        argv += ["--tensor-parallel-size", str(scenario.tp)]
    if scenario.dp > 1:
        if v < _DATA_PARALLEL:
            problems.append(Notice("command.dp_since", version=version, since=_release(_DATA_PARALLEL)))
        elif env or (v < _V0_GONE and v0_only):
            problems.append(Notice("command.dp_v0", version=version, method=method))
        else:
            argv += ["--data-parallel-size", str(scenario.dp)]
    if scenario.ep:
        if v < _EXPERT_PARALLEL:
            problems.append(Notice("command.ep_since", version=version, since=_release(_EXPERT_PARALLEL)))
        else:
            argv.append("--enable-expert-parallel")
    # No per-batch schedule with more than one data-parallel rank (ranks that draft apart deadlock), nor
    # for suffix decoding where the release drops it: one length, the best at the page's batch.
    held = schedule is not None and v >= _SCHEDULE and scenario.dp > 1
    dropped = schedule is not None and vllm_drops_schedule(method, version) and not held
    held = held or dropped
    scheduled = schedule is not None and v >= _SCHEDULE and not held
    most = vllm_most_seqs(scenario, version)
    drafted = max(1, int(schedule["gamma"].max())) if scheduled else int(gamma)
    # The slots follow num_speculative_tokens, the schedule's longest: taken before the schedule ends at
    # the stated batch, which may drop its longest (then the cap is a little low, never too high).
    slots = vllm_drafter_slots(method, parallel_drafting, drafted, version)
    stepping = v >= _V1_DEFAULT and not env and not (v < _V0_GONE and v0_only)
    cap = _seqs_cap(most, schedule if scheduled else None, int(gamma), slots, stepping)
    argv += memory_flags(scenario, "vLLM", problems, notices=notices, drafted=drafted, most_seqs=cap)
    if scheduled:  # its ranges end where --max-num-seqs does (the token budget may hold fewer than the memory)
        stated = int(argv[argv.index("--max-num-seqs") + 1]) if "--max-num-seqs" in argv else None
        if stated is not None:
            schedule = schedule[schedule["first"] <= stated].assign(last=lambda rows: rows["last"].clip(upper=stated))
        notices[:] = [Notice("command.seqs_budget_schedule", **n.params) if n.key == "command.seqs_budget" else n
                      for n in notices]
    notices += node_notices(scenario, "vLLM") + budget_notices(scenario, gamma)
    quantization = draft_quantization(scenario, method, draft, problems, "vLLM",
                                      "--speculative-model" if v < _CONFIG_FLAG else "--speculative-config")
    if v < _CONFIG_FLAG:
        argv += ["--speculative-model", "[ngram]" if method == "ngram" else draft, "--num-speculative-tokens", str(gamma)]
        if quantization:
            argv += ["--speculative-model-quantization", quantization]
        if method == "ngram":
            argv += ["--ngram-prompt-lookup-max", str(prompt_lookup_max)]
        if off_from is not None:
            argv += ["--speculative-disable-by-batch-size", str(max(off_from, 2))]
        if schedule is not None:
            notices.append(vllm_schedule(schedule, version)[1])
        return Command(argv, notices=notices, problems=problems)
    config: dict[str, object] = {"method": method}
    by_batch = False
    if draft is not None:
        config["model"] = draft
    if quantization:
        config["quantization"] = quantization
    config["num_speculative_tokens"] = int(gamma)
    if method == "ngram":
        config["prompt_lookup_max"] = prompt_lookup_max
    if parallel_drafting:
        config["parallel_drafting"] = True
    if dropped:
        notices.append(Notice("command.schedule_suffix", version=version, gamma=int(gamma)))
    elif held:
        notices.append(Notice("command.schedule_dp", dp=scenario.dp, gamma=int(gamma)))
    elif schedule is not None:
        keys, unheld = vllm_schedule(schedule, version)
        config.update(keys or {})
        by_batch = keys is not None
        notices += [unheld] if unheld else []
    # A schedule's ranges of γ 0 already stop speculation where it loses.
    if off_from is not None and not scheduled and not held:
        if v < _V0_GONE:
            config["disable_by_batch_size"] = max(int(off_from), 2)
            notices.append(Notice("command.disable_v0_only", version=version))
        elif v < _DISABLE_KEY_GONE:
            notices.append(Notice("command.disable_ignored", version=version, batch=off_from,
                                  schedule=_release(_SCHEDULE)))
        else:
            notices.append(Notice("command.disable_removed", version=version, batch=off_from,
                                  schedule=_release(_SCHEDULE)))
    argv += ["--speculative-config", json.dumps(config, separators=(", ", ": "))]
    return Command(argv, notices=notices, problems=problems, by_batch=by_batch)
