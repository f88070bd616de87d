"""What every engine's serving command says of memory and hosts: the flags that state the largest
batch, the context and the memory share as the page's memory fit has them, the engines a command is
written for and the memory rule each divides a GPU by, and the notices on the token budget and the
hosts a split spans. vLLM's command is :mod:`specviz.advice.commands`', SGLang's
:mod:`specviz.advice.sglang`'s, TensorRT-LLM's :mod:`specviz.advice.trtllm`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd

from specviz import settings, workload
from specviz.errors import Notice
from specviz.model import memory
from specviz.scenario import Scenario

__all__ = ["COMMAND_ENGINES", "ENGINE_NAMES", "batch_flag", "command_engine_of", "engine_rule", "stated_batch", "memory_flags",
           "budget_notices", "node_notices", "step_tokens", "lengths_by_batch"]

# GPUs one host holds: 8 in an HGX or MI300-series server, 4 in a compute tray of an NVL72 rack.
_HOST_GPUS, _TRAY_GPUS = 8, 4


@dataclass(frozen=True)
class _MemoryFlags:
    """How an engine's command states what its memory holds: the flags for the largest batch, the
    context and the memory share (None: not a flag), and the KV cache's FP8 format; ``states_budget``:
    whether it writes its token budget a step (:class:`specviz.model.memory.TokenBudget`'s flag)."""

    batch: str
    context: str
    fraction: str | None
    kv_dtype: str | None
    fp8: str
    per_rank: bool  # the batch limit holds per data-parallel (attention) rank
    states_budget: bool


_MEMORY_FLAGS = {
    # vLLM's budget is left to its default, which budget_notices says when to raise.
    "vLLM": _MemoryFlags("--max-num-seqs", "--max-model-len", "--gpu-memory-utilization", "--kv-cache-dtype", "fp8", True,
                         False),
    "SGLang": _MemoryFlags("--max-running-requests", "--context-length", None, "--kv-cache-dtype", "fp8_e4m3", False,
                           True),
    # TensorRT-LLM's KV format is written in its YAML (kv_cache_config.dtype), not as a flag.
    "TensorRT-LLM": _MemoryFlags("--max_batch_size", "--max_seq_len", "--kv_cache_free_gpu_memory_fraction", None,
                                 "fp8", True, True),
}


# Each engine a command is written for (specviz.advice.serving.ENGINES): its name in the tables above
# and in messages, what the ids of its cost presets (data/engines.csv) start with, and how it divides
# a GPU's memory where the scenario is on another engine's costs.
COMMAND_ENGINES = {"vllm": ("vLLM", "vllm", memory.VLLM_RULE), "sglang": ("SGLang", "sglang", memory.SGLANG_RULE),
                   "trtllm": ("TensorRT-LLM", "trt-llm", memory.TRTLLM_RULE)}


ENGINE_NAMES = {engine: name for engine, (name, _, _) in COMMAND_ENGINES.items()}


def command_engine_of(engine_id: str) -> str | None:
    """The command engine (:data:`COMMAND_ENGINES`) whose cost presets ``engine_id`` is one of
    (``vllm-v1`` is vLLM's), None for a preset of no server (eager PyTorch)."""
    return next((engine for engine, (_, prefix, _) in COMMAND_ENGINES.items() if engine_id.startswith(prefix)), None)


def batch_flag(engine: str) -> str:
    """``engine``'s flag ("vLLM", "SGLang" or "TensorRT-LLM") for the most sequences it runs at once."""
    return _MEMORY_FLAGS[engine].batch


def engine_rule(scenario: Scenario, engine: str) -> memory.MemoryRule:
    """How ``engine`` ("vLLM", "SGLang" or "TensorRT-LLM") divides a GPU's memory: the scenario's
    engine's rule where the scenario is on that engine, else the engine's default."""
    command = next(key for key, (name, _, _) in COMMAND_ENGINES.items() if name == engine)
    return scenario.engine.memory if command_engine_of(scenario.engine.id) == command else COMMAND_ENGINES[command][2]


def stated_batch(limit: int) -> int:
    """The largest batch a command states and its schedule covers: the memory's ``limit``, at most
    ``SPECVIZ_SERVE_BATCH_MAX`` (a small model on large GPUs holds millions of sequences, and the
    schedule is found at every batch up to the one stated)."""
    return min(limit, settings.get("SPECVIZ_SERVE_BATCH_MAX"))


def memory_flags(scenario: Scenario, engine: str, problems: list[Notice], ranks: int | None = None,
                 notices: list[Notice] | None = None, *, drafted: int,
                 most_seqs: Callable[[int], tuple[int, Notice]] | None = None) -> list[str]:
    """The flags that hold ``engine``'s server to what its memory fits (:mod:`specviz.model.memory`)
    at ``drafted``, the longest draft the server allocates each request for (vLLM's
    ``num_speculative_tokens``, SGLang's ``--speculative-num-steps``, TensorRT-LLM's
    ``max_draft_len``: a schedule's longest, not the scenario's γ; a hybrid model keeps a
    linear-attention state for each of its positions, so Qwen3.5-397B-A17B on 8 H200s holds 357
    sequences at γ 4 and 242 at the 7 its schedule drafts at batches 25–68):
    the largest batch (vLLM's ``--max-num-seqs``, SGLang's ``--max-running-requests``, TensorRT-LLM's
    ``--max_batch_size``), at most what ``most_seqs`` gives for the sequences the memory holds a rank,
    with the notice that says why, where the engine refuses more or would not step them all at once
    (vLLM's token budget a step: :func:`specviz.advice.commands.vllm_most_seqs`,
    :func:`step_tokens`), the context (``--max-model-len``,
    ``--context-length``, ``--max_seq_len``),
    the memory share the limit was computed for (vLLM's ``--gpu-memory-utilization``, written out
    for its default moved from 0.9 to 0.92 in 0.20.0; TensorRT-LLM's
    ``--kv_cache_free_gpu_memory_fraction``, 0.9 by default in every release from 0.18.2) and an FP8
    KV cache (vLLM's ``--kv-cache-dtype fp8``, in 0.7.3 to 0.33.0; SGLang's ``fp8_e4m3``, in 0.5.14
    and 0.5.23), and the token budget a step the figures take for SGLang and TensorRT-LLM (their
    defaults for the GPU, :class:`specviz.model.memory.TokenBudget`: ``--chunked-prefill-size`` for
    the server, which SGLang divides over its attention groups itself; ``--max_num_tokens`` for each
    rank), which sizes their activations and the prompts' room. SGLang's ``--max-running-requests``
    matters most when it speculates: unset, it is then 48 (:data:`specviz.model.memory.SGLANG_BUDGET`),
    whatever the memory holds. vLLM's ``max_num_seqs`` holds for each data-parallel rank (``config/scheduler.py``,
    0.33.0), and so does TensorRT-LLM's ``max_batch_size`` for each attention-DP rank (each rank
    has its own KV cache and schedules its own requests: TensorRT-LLM's "ADP Balance Strategy" blog
    post, its blog 10); SGLang divides its ``max_running_requests`` over the
    attention groups itself (``pool_configurator.py``, 0.5.23). A command for another engine than
    the scenario's is sized with that engine's rule. Where nothing fits, a problem: the server would
    find no memory for its cache."""
    flags_of = _MEMORY_FLAGS[engine]
    at_gamma = replace(scenario, engine=replace(scenario.engine, memory=engine_rule(scenario, engine)))
    scenario = replace(at_gamma, gamma=drafted)
    limit = scenario.max_batch()
    if limit < 1:
        problems.append(Notice("command.no_fit", context=scenario.context, devices=scenario.tp * scenario.dp))
        return []
    flags = []
    if limit < np.iinfo(np.int64).max:
        if notices is not None and stated_batch(limit) != stated_batch(other := at_gamma.max_batch()):
            # The page's largest batch is at its γ; said, so that the two are not read as disagreeing.
            notices.append(Notice("command.drafted_batch", flag=flags_of.batch, drafted=drafted, limit=stated_batch(limit),
                                  gamma=at_gamma.gamma, at_gamma=stated_batch(other)))
        held, limit = limit, stated_batch(limit)
        if held > limit and notices is not None:
            # A command states at most SPECVIZ_SERVE_BATCH_MAX: said, not passed off as what the memory holds.
            notices.append(Notice("command.batch_capped", flag=flags_of.batch, limit=limit, held=held, engine=engine))
        shares = ranks or scenario.dp
        stated = max(1, limit // shares) if flags_of.per_rank else limit
        most, why = most_seqs(max(1, held // shares) if flags_of.per_rank else held) if most_seqs else (stated, None)
        if stated > most:
            # The server refuses more sequences than its token budget a step, or would not step them
            # all at once (vLLM's --max-num-seqs).
            if notices is not None:
                notices.append(why)
            stated = most
        flags += [flags_of.batch, str(stated)]
        if flags_of.per_rank and shares > 1 and notices is not None:
            # The page says the server's largest batch (1,199); the flag is each rank's (149): said, so
            # that the two are not read as disagreeing.
            key = "command.per_rank_batch_capped" if held > limit else "command.per_rank_batch"
            notices.append(Notice(key, flag=flags_of.batch, per_rank=stated, ranks=shares,
                                  total=stated * shares, limit=limit, engine=engine))
    # A steady load's requests are as long as their tokens in and out (its context is their mean).
    longest = scenario.longest_request
    if longest > 0:
        flags += [flags_of.context, str(int(longest))]
        if notices is not None:
            # Pasted as it is, the server refuses a longer request (a browser pass: "--max-model-len 1024"
            # from the context's default, said nowhere).
            # Under a steady load the page has no context slider: its requests' tokens in and out set it.
            notices.append(Notice("command.context_flag_load" if scenario.prefill else "command.context_flag",
                                  flag=flags_of.context, longest=int(longest), batch_flag=flags_of.batch))
    if (beyond := scenario.beyond_positions()) is not None:
        problems.append(Notice("command.beyond_positions", **beyond, engine=engine, flag=flags_of.context))
    if (beyond := scenario.draft_beyond_positions()) is not None:
        notices.append(Notice("calc.draft_beyond_positions", **beyond))
    if flags_of.states_budget:
        budget = scenario.engine.memory.budget
        flags += [budget.flag, str(budget.limits(scenario.gpu.memory_gb)[0])]
    if flags_of.fraction:
        flags += [flags_of.fraction, f"{scenario.engine.memory.fraction:g}"]
    if flags_of.kv_dtype and scenario.precision.kv == "fp8":
        flags += [flags_of.kv_dtype, flags_of.fp8]
    return flags


def step_tokens(lengths: np.ndarray, slots: int) -> np.ndarray:
    """The tokens a vLLM V1 step needs to advance every sequence at once at each batch 1, 2, … (one a
    batch of ``lengths``, the draft length there), each batch's need the most of any smaller batch's
    too, so that the first batch past the budget ends every batch that steps whole.

    .. math:: n(S) = \\max_{b \\le S} b\\,(\\gamma_b + 1) + s\\,S

    with s = ``slots`` (:func:`specviz.advice.commands.vllm_drafter_slots`). A running request takes its token and its
    drafts from the budget a step (``num_tokens_with_spec``) and the slots beside them (0.33.0's
    ``input_budget``; 0.24.0 takes s times ``--max-num-seqs`` off the budget before any request,
    ``_set_max_num_scheduled_tokens``, and refuses to start where nothing is left); past the budget
    the scheduler leaves the rest of the running requests for a later step
    (``v1/core/sched/scheduler.py``), so the step model's batch would not step as one. The
    batches that step whole are those where n is within the budget: a prefix, for n never falls."""
    batch = np.arange(1, lengths.size + 1)
    return np.maximum.accumulate(batch * (np.asarray(lengths) + 1)) + slots * batch


def lengths_by_batch(schedule: pd.DataFrame | None, gamma: int, upto: int) -> np.ndarray:
    """The draft length at batches 1 to ``upto``: ``gamma`` throughout, or the schedule's range
    holding each batch (a gap takes the range before it, batches past the last the last one, as
    vLLM reads ``num_speculative_tokens_per_batch_size``)."""
    if schedule is None:
        return np.full(upto, int(gamma))
    which = np.searchsorted(schedule["first"].to_numpy(), np.arange(1, upto + 1), side="right") - 1
    return schedule["gamma"].to_numpy()[np.clip(which, 0, None)]


def budget_notices(scenario: Scenario, gamma: int) -> list[Notice]:
    """A notice where one speculative step at the scenario's batch schedules more tokens than vLLM's
    default budget a step (``--max-num-batched-tokens``), which counts each sequence's draft
    positions as well as its token and the prompts' chunks (V1's scheduler, ``num_tokens_with_spec``):
    the scheduler would then run fewer sequences a step than the figures assume. The budget is per
    data-parallel rank, and its default is the one the memory figures take for activations
    (:data:`specviz.model.memory.VLLM_BUDGET`: 8,192 from 70 GiB, 16,384 from 160 GiB, 2,048
    below), whatever engine the scenario's costs are. The flag is not written: vLLM sizes the
    activations it keeps aside by it, which the memory figures do not hold for a larger budget."""
    scenario = replace(scenario, engine=replace(scenario.engine, memory=engine_rule(scenario, "vLLM")))
    room = {k: float(v) for k, v in workload.prompt_room(scenario, scenario.alpha, gamma, scenario.batch).items()}
    batch, prompts, budget = int(room["batch_per_rank"]), room["prompts_spec"], int(room["budget"])
    tokens = int(np.ceil(batch * (gamma + 1) + prompts))
    if tokens <= budget:
        return []
    return [Notice("command.token_budget" if scenario.prefill else "command.token_budget_decode", batch=batch,
                   tokens=tokens, positions=gamma + 1, budget=budget, prompts=round(prompts))]


def node_notices(scenario: Scenario, engine: str) -> list[Notice]:
    """A command starts the server on one host; a scenario of more GPUs than a host holds says how
    to start it on each: vLLM's data-parallel ranks per host, or a tensor-parallel group across
    hosts; SGLang's nodes; TensorRT-LLM's processes under MPI or Slurm."""
    devices = scenario.tp * scenario.dp
    per_host = _TRAY_GPUS if scenario.gpu.scale_up_gpus > _HOST_GPUS else _HOST_GPUS
    if devices <= per_host:
        return []
    where = {"devices": devices, "hosts": -(-devices // per_host), "per_host": per_host}
    if engine != "vLLM":
        return [Notice("command.multi_node_sglang" if engine == "SGLang" else "command.multi_node_trtllm", **where)]
    notices = []
    if scenario.tp > per_host:
        notices.append(Notice("command.multi_node_vllm_tp", tp=scenario.tp, since="0.11.1", **where))
    if scenario.dp > 1:
        notices.append(Notice("command.multi_node_vllm_dp", **where))
    return notices
