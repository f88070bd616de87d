"""From a scenario to TensorRT-LLM's serving command: ``trtllm-serve`` on the PyTorch backend, with
the speculation in the YAML file that ``--extra_llm_api_options`` names.

Each fact below names the first release it holds for. They were read from the Sphinx build of each
release's documentation (``nvidia.github.io/TensorRT-LLM/<release>/``): its ``_modules`` pages hold
``tensorrt_llm/llmapi/llm_args.py`` as the release shipped it, and its ``trtllm-serve`` page is
generated from ``tensorrt_llm/commands/serve.py``'s options. Releases checked: 0.19.0, 0.20.0,
0.21.0, 1.0.0, 1.1.0, 1.2.0rc1, 1.2.0rc3, 1.2.0, 1.2.1 and 1.3.0rc8 (the repository's history itself
is too large to fetch here).

* the command: ``trtllm-serve MODEL`` with ``--backend pytorch`` (the only choice before 1.0.0, the
  default from 1.0.0, accepted by all), ``--tp_size``, ``--ep_size`` (0.19.0), ``--max_batch_size``,
  ``--max_seq_len``, ``--kv_cache_free_gpu_memory_fraction`` (0.9 by default) and
  ``--extra_llm_api_options FILE`` (0.19.0; ``--config`` is an alias from 1.2.0, the old name kept),
  options written with underscores; the file's values override the flags. Before 0.19.0 there is
  no options file, so no speculation through ``trtllm-serve``;
* attention data parallelism: ``enable_attention_dp: true`` in the file (0.19.0), the attention of
  each of the ``--tp_size`` GPUs on its own batch while the MoE layers split over all of them;
  ``trtllm-serve`` has no flag for replicas of a dense model;
* ``speculative_config.decoding_type``: ``MTP``, ``Eagle`` and ``Medusa``/``Lookahead`` (the
  TensorRT engine only) from 0.19.0; ``NGram`` and ``DraftTarget`` from 0.21.0; EAGLE-3 is ``Eagle``
  up to 1.2.1 (the PyTorch backend runs every Eagle head as EAGLE-3; ``eagle3_one_model``, true by
  default, from 0.21.0) and ``Eagle3`` in 1.3.0rc8 (``Eagle`` kept as an alias; two-model EAGLE-3
  deprecated, so the key is left out); PARD, DFlash and SA (suffix automaton) appear only in 1.3
  release candidates' documentation and are not offered here. From 1.0.0 an unknown key is an error
  (``StrictBaseModel``, ``extra = "forbid"``), so each key is written only where its release has it;
* the draft's path: ``pytorch_eagle_weights_path`` (EAGLE, 0.19.0 and 0.20.0),
  ``pytorch_weights_path`` (0.21.0), ``speculative_model_dir`` (1.0.0 to 1.2.0rc4),
  ``speculative_model`` (1.2.0, with ``speculative_model_dir`` kept as an alias);
* the draft length: ``max_draft_len`` (0.19.0; NGram in 0.21.0 took ``prompt_lookup_num_tokens``
  instead); MTP's ``num_nextn_predict_layers`` (0.19.0; 1.1.0 to 1.2.1 overwrite ``max_draft_len``
  with it, 1.3 maps it to ``max_draft_len``: both are written, equal); NGram's
  ``max_matching_ngram_size``;
* ``kv_cache_config: {dtype: fp8}`` for an FP8 KV cache (checked in 1.0.0), with its
  ``free_gpu_memory_fraction`` beside it: whether a YAML block merges with the flag's fraction is
  not established;
* ``draft_len_schedule`` (``speculative_config``, pull request #8194), a map of batch size to draft
  length, in two meanings. From 1.2.0rc3 to 1.2.1 a key is a lower bound (the largest key at or
  below the batch applies; 0 stops speculating), key 1 is required and equals ``max_draft_len``, and
  only the two-model drafters (NGram, DraftTarget) read it. From 1.3.0rc8 (pull request #10860) a
  key is an upper bound (batches up to it; past the largest key, 0), the smallest key's length
  equals ``max_draft_len``, and one-model EAGLE-3 reads it too; MTP only from pull request #12262,
  whose first release is not established. The same map therefore means different schedules in 1.2
  and 1.3, and each is written for its release;
* the token budget an iteration (``--max_num_tokens``) counts a generation request's token and its
  draft tokens (the micro-batch scheduler, ``cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp``:
  ``beamWidth + getNumDraftTokens()``; the two-model drafters fill ``max_total_draft_tokens``
  placeholders before scheduling, ``py_executor.py``); past it the iteration leaves the later
  requests out, and nothing refuses to start (``validate_runtime_args`` only warns where
  ``max_batch_size`` passes ``max_num_tokens``). One-model EAGLE-3 and MTP were budgeted their token
  alone until pull request #16101 (July 2026; its first release not established), and a step past
  the budget then failed the forward pass's check (read from the repository's stored main);
* targets: MTP on DeepSeek-V3/R1 from 0.19.0 (V3.2 with more than one MTP layer from 1.2.0);
  EAGLE-3 on Llama 3 from 0.19.0, Llama 4 from 0.20.0, Qwen3 from 0.21.0 (release notes), gpt-oss
  from 1.1.0 (NVIDIA's blog on 1.1.0rc0); others are not established and get a notice.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Callable

import pandas as pd

from specviz.advice.commands import FINAL, Command, draft_name, parse_release, speculation_method, target_words
from specviz.advice.memory_flags import engine_rule, memory_flags, node_notices
from specviz.errors import Notice, SpecvizError
from specviz.model import architecture
from specviz.model.roofline import GPU
from specviz.scenario import Scenario

__all__ = ["TRTLLM_VERSIONS", "TRTLLM_DEFAULT", "trtllm_command", "draft_len_schedule", "reads_schedule", "batch_cap"]

# (major, minor, patch, release candidate), as parse_release reads it.
TrtVersion = tuple[int, int, int, int]

# The releases a user picks from: one per change above, and the newest checked.
TRTLLM_VERSIONS = ("0.19.0", "0.20.0", "0.21.0", "1.0.0", "1.1.0", "1.2.0", "1.2.1", "1.3.0rc8")
TRTLLM_DEFAULT = "1.2.1"  # the newest final release checked
_OPTIONS_FILE = (0, 19, 0, FINAL)
_TWO_MODEL_TYPES = (0, 21, 0, FINAL)  # NGram, DraftTarget, eagle3_one_model
_STRICT = (1, 0, 0, FINAL)  # unknown keys refused; speculative_model_dir; kv_cache_config.dtype checked
_SPECULATIVE_MODEL = (1, 2, 0, FINAL)
_SCHEDULE_LOWER = (1, 2, 0, 3)  # draft_len_schedule, keys as lower bounds
_SCHEDULE_UPPER = (1, 3, 0, 8)  # keys as upper bounds; Eagle3 its own type; one-model EAGLE-3 reads it
_DECODING_TYPES = {"mtp": "MTP", "eagle3": "Eagle", "ngram": "NGram", "draft_model": "DraftTarget"}
_METHOD_SINCE = {"mtp": _OPTIONS_FILE, "eagle3": _OPTIONS_FILE, "ngram": _TWO_MODEL_TYPES,
                 "draft_model": _TWO_MODEL_TYPES}
# Targets each method is established for, and from which release.
_MTP_TARGETS = {"deepseek_v3": (0, 19, 0, FINAL), "deepseek_v32": (1, 2, 0, FINAL)}
_EAGLE3_TARGETS = {"llama": (0, 19, 0, FINAL), "llama4_text": (0, 20, 0, FINAL), "qwen3": (0, 21, 0, FINAL),
                   "gpt_oss": (1, 1, 0, FINAL)}
_OPTIONS_NAME = "extra_llm_api_options.yaml"
_NGRAM_WINDOW = 4


def _text(version: TrtVersion) -> str:
    """A release as its tag reads: (1, 3, 0, 8) is "1.3.0rc8"."""
    return ".".join(map(str, version[:3])) + (f"rc{version[3]}" if version[3] != FINAL else "")


def reads_schedule(method: str, version: TrtVersion) -> bool:
    """Whether ``version`` reads ``draft_len_schedule`` for ``method`` (the module's facts): the
    two-model drafters (``ngram``, ``draft_model``) from 1.2.0rc3, one-model EAGLE-3 from 1.3.0rc8;
    MTP in no release identified (pull request #12262)."""
    return (method in ("ngram", "draft_model") and version >= _SCHEDULE_LOWER) or \
        (method == "eagle3" and version >= _SCHEDULE_UPPER)


def draft_len_schedule(schedule: pd.DataFrame, version: TrtVersion) -> dict[int, int] | None:
    """``draft_len_schedule`` for ``version`` from a schedule of ranges (``first``, ``last``,
    ``gamma``, :func:`specviz.advice.draft_length.gamma_schedule`), or None where the release cannot
    say it.

    Up to 1.2.1 the keys are lower bounds: each range's first batch, key 1 first, which must hold
    the longest draft (``max_draft_len``). From 1.3.0rc8 the keys are upper bounds: each speculating
    range's last batch, past the largest key nothing is drafted, and the smallest key must hold the
    longest draft; so the ranges of γ 0 must all come last.
    """
    gammas = [int(g) for g in schedule["gamma"]]
    if gammas[0] != max(gammas) or gammas[0] == 0:
        return None
    if version >= _SCHEDULE_UPPER:
        on = [g > 0 for g in gammas]
        if on != sorted(on, reverse=True):  # speculation off, then on again
            return None
        return {int(r.last): int(r.gamma) for r in schedule.itertuples() if r.gamma > 0}
    return {int(r.first): int(r.gamma) for r in schedule.itertuples()}


def _yaml(mapping: dict, indent: int = 0) -> str:
    """A YAML mapping of mappings and scalars; strings double-quoted as JSON writes them (valid YAML)."""
    lines = []
    for key, value in mapping.items():
        pad = "  " * indent
        if isinstance(value, dict):
            lines += [f"{pad}{key}:", _yaml(value, indent + 1)]
        elif isinstance(value, bool):
            lines.append(f"{pad}{key}: {'true' if value else 'false'}")
        elif isinstance(value, str):
            lines.append(f"{pad}{key}: {json.dumps(value)}")
        else:
            lines.append(f"{pad}{key}: {value}")
    return "\n".join(lines)


def _draft_keys(method: str, draft: str | None, steps: int, v: TrtVersion) -> dict[str, object]:
    """The keys of ``speculative_config`` for ``method`` in release ``v`` (see the module's facts)."""
    keys: dict[str, object] = {"decoding_type": "Eagle3" if method == "eagle3" and v >= _SCHEDULE_UPPER
                               else _DECODING_TYPES[method]}
    if method == "mtp":
        keys["num_nextn_predict_layers"] = steps
        if v >= _STRICT:
            keys["max_draft_len"] = steps
        return keys
    if method == "ngram" and v < _STRICT:
        keys["prompt_lookup_num_tokens"] = steps
    else:
        keys["max_draft_len"] = steps
    if method == "ngram":
        keys["max_matching_ngram_size"] = _NGRAM_WINDOW
        return keys
    path_key = ("speculative_model" if v >= _SPECULATIVE_MODEL else "speculative_model_dir" if v >= _STRICT
                else "pytorch_weights_path" if v >= _TWO_MODEL_TYPES else "pytorch_eagle_weights_path")
    keys[path_key] = draft
    if method == "eagle3" and _TWO_MODEL_TYPES <= v < _SCHEDULE_UPPER:
        keys["eagle3_one_model"] = True
    return keys


def nvidia(gpu: GPU) -> bool:
    """Whether TensorRT-LLM can run on ``gpu``: an NVIDIA GPU (its preset's name says the maker, as
    every row of ``data/gpus.csv`` does: "NVIDIA H100 SXM", "AMD Instinct MI355X")."""
    return gpu.kind == "gpu" and str(gpu.name).startswith("NVIDIA ")


def _nvfp4_without_fp4_units(scenario: Scenario) -> bool:
    """Whether the scenario serves NVFP4 weights on a GPU without FP4 units, which TensorRT-LLM does
    not run: ModelOpt's support matrix gives its FP4 (weights and activations) "GPUs: Blackwell and
    later", and TensorRT-LLM's lists no FP4 for Hopper (FP8, INT8 and INT4 there). MXFP4 is apart:
    TensorRT-LLM serves gpt-oss's MXFP4 experts on Hopper too."""
    return scenario.gpu.runs_at("fp4") != "fp4" and any(
        scenario.precision.weight_format(scenario.target, component).name == "nvfp4"
        for component in architecture.COMPONENTS)


def batch_cap(budget: int, drafted: int) -> Callable[[int], tuple[int, Notice]]:
    """For :func:`specviz.advice.memory_flags.memory_flags`: the most generation requests a rank whose
    iteration of ``budget`` tokens (``--max_num_tokens``) holds each with its token and ``drafted``
    draft tokens (``max_draft_len``, whatever a schedule drafts at the batch: the placeholders are
    the longest), ⌊budget / (drafted + 1)⌋, and the notice that says so for the sequences the memory
    holds a rank (see the module's facts). 8,192 tokens and 3 drafts: 2,048."""
    most = max(1, budget // (drafted + 1))

    def cap(held: int) -> tuple[int, Notice]:
        return most, Notice("command.trtllm_seqs_budget", flag="--max_batch_size", most=most, held=held,
                            budget=budget, gamma=drafted, over=most + 1, needed=held * (drafted + 1))
    return cap


def trtllm_command(scenario: Scenario, version: str, gamma: int, *, schedule: pd.DataFrame | None = None,
                   draft_repo: str | None = None, target_repo: str | None = None, method: str = "draft") -> Command:
    """``trtllm-serve`` for ``version`` with its options file (see the module's facts).

    Parameters
    ----------
    scenario : Scenario
        Target, draft, parallelism and memory.
    version : str
        The TensorRT-LLM release the command is for (:data:`TRTLLM_VERSIONS`).
    gamma : int
        ``max_draft_len`` (the largest of ``schedule`` when the release takes it).
    schedule : DataFrame, optional
        :func:`specviz.advice.draft_length.gamma_schedule`, written as ``draft_len_schedule`` where the
        release and the method read one.
    draft_repo, target_repo, method
        As :func:`specviz.advice.commands.vllm_command`.

    Raises
    ------
    SpecvizError
        ``command.bad_version``; ``command.trtllm_no_options`` before 0.19.0;
        ``command.not_in_engine`` for a method the PyTorch backend does not run;
        ``command.method_unknown`` where the release predates the method;
        ``command.trtllm_mtp_target`` for MTP on a target it is not established for; and as
        :func:`specviz.advice.commands.speculation_method`.
    """
    v = parse_release(version)
    if v < _OPTIONS_FILE:
        raise SpecvizError("command.trtllm_no_options", version=version, since=_text(_OPTIONS_FILE))
    parallel_drafting = method == "draft" and scenario.draft.kind == "peagle"
    method = speculation_method(scenario, method, "TensorRT-LLM")
    if method not in _DECODING_TYPES or parallel_drafting:
        shown = "P-EAGLE (parallel_drafting)" if parallel_drafting else method
        raise SpecvizError("command.not_in_engine", method=shown, engine="TensorRT-LLM")
    if v < _METHOD_SINCE[method]:
        raise SpecvizError("command.method_unknown", engine="TensorRT-LLM", method=_DECODING_TYPES[method], version=version,
                           since=_text(_METHOD_SINCE[method]))
    model_type = scenario.target.model_type
    if method == "mtp" and not (model_type in _MTP_TARGETS and v >= _MTP_TARGETS[model_type]):
        raise SpecvizError("command.trtllm_mtp_target", target=scenario.target.name, model_type=model_type,
                           version=version)
    notices: list[Notice] = []
    problems: list[Notice] = []
    if not nvidia(scenario.gpu):  # TensorRT-LLM's kernels are CUDA's: an MI355X, a TPU or Gaudi cannot start it
        problems.append(Notice("command.trtllm_nvidia_only", gpu=scenario.gpu.name))
    elif _nvfp4_without_fp4_units(scenario):
        problems.append(Notice("command.trtllm_nvfp4_blackwell", gpu=scenario.gpu.name))
    if method == "eagle3" and not (model_type in _EAGLE3_TARGETS and v >= _EAGLE3_TARGETS[model_type]):
        notices.append(Notice("command.trtllm_eagle3_unchecked", target=scenario.target.name, model_type=model_type))
    if method == "mtp":
        notices.append(Notice("command.mtp_layers", target=scenario.target.name))
    draft = draft_name(scenario, method, draft_repo, problems, "TensorRT-LLM")
    moe = scenario.target.moe_layers > 0
    # Attention DP splits a MoE's attention over the --tp_size GPUs; a dense model's DP is replicas.
    attention_dp = scenario.dp > 1 and moe
    tp = scenario.tp * scenario.dp if attention_dp else scenario.tp
    target, target_flags = target_words(scenario, "TensorRT-LLM", problems, notices, target_repo)
    argv = ["trtllm-serve", target, *target_flags, "--backend", "pytorch"]
    if tp > 1:
        argv += ["--tp_size", str(tp)]
    if scenario.ep:
        argv += ["--ep_size", str(scenario.tp * scenario.dp)]
    if scenario.dp > 1 and not moe:
        notices.append(Notice("command.trtllm_replicas", dp=scenario.dp, tp=scenario.tp))
    options: dict[str, object] = {}
    if attention_dp:
        options["enable_attention_dp"] = True
    sized = scenario
    if scenario.precision.kv == "fp8":
        if v >= _STRICT:
            options["kv_cache_config"] = {"dtype": "fp8",
                                          "free_gpu_memory_fraction": engine_rule(scenario, "TensorRT-LLM").fraction}
        else:  # the cache stays BF16, and the batch limit is that cache's
            sized = replace(scenario, precision=replace(scenario.precision, kv="bf16"))
            notices.append(Notice("command.trtllm_fp8_kv_since", version=version, since=_text(_STRICT)))
    # Attention DP gives every GPU its own attention group (attention TP 1, tensorrt_llm's Mapping:
    # attn_tp_size = 1 if enable_attention_dp), not the scenario's dp groups of tp: its per-rank
    # --max_batch_size divides the scenario's limit over every GPU.
    ranks = scenario.tp * scenario.dp if attention_dp else scenario.dp
    if attention_dp and scenario.tp > 1:
        notices.append(Notice("command.trtllm_attention_ranks", ranks=ranks, dp=scenario.dp, tp=scenario.tp))
    steps, table, drafting = int(gamma), None, []
    if schedule is not None:
        reads = reads_schedule(method, v)
        table = draft_len_schedule(schedule, v) if reads else None
        if table is not None:
            steps = max(table.values())
        elif reads:
            drafting.append(Notice("command.trtllm_schedule_shape"))
        elif method == "mtp":
            drafting.append(Notice("command.trtllm_mtp_no_schedule", gamma=steps))
        else:
            drafting.append(Notice("command.trtllm_no_schedule", method=_DECODING_TYPES[method], version=version,
                                   since=_text(_SCHEDULE_UPPER if method == "eagle3" else _SCHEDULE_LOWER),
                                   gamma=steps))
    budget = engine_rule(scenario, "TensorRT-LLM").budget.limits(scenario.gpu.memory_gb)[0]
    argv += memory_flags(sized, "TensorRT-LLM", problems, ranks=ranks, notices=notices, drafted=steps,
                         most_seqs=batch_cap(budget, steps))
    notices += node_notices(scenario, "TensorRT-LLM") + drafting
    speculative = _draft_keys(method, draft, steps, v)
    if table is not None:
        speculative["draft_len_schedule"] = table
        notices.append(Notice("command.trtllm_schedule_upper" if v >= _SCHEDULE_UPPER
                              else "command.trtllm_schedule_lower"))
    options["speculative_config"] = speculative
    argv += ["--extra_llm_api_options", _OPTIONS_NAME]
    return Command(argv, {_OPTIONS_NAME: _yaml(options) + "\n"}, notices, problems, by_batch=table is not None)
