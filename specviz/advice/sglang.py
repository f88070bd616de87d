"""From a scenario to SGLang's serving command, each release's facts.

SGLang (``python -m sglang.launch_server``, ``python/sglang/srt/server_args.py``): a chain of γ
drafts is ``--speculative-num-steps γ --speculative-eagle-topk 1 --speculative-num-draft-tokens γ+1``;
``--speculative-algorithm`` EAGLE, EAGLE3, STANDALONE (a separate draft model), NGRAM or DFLASH (a
block drafter, in 0.5.14, not in 0.5.5: one pass whose verify window is
``--speculative-num-draft-tokens``, steps and top-k forced to 1; with data-parallel attention it
requires ``--enable-dp-lm-head``, 0.5.23's ``arg_groups/speculative_hook.py``); a target's
MTP layers run as EAGLE with no draft path (its DeepSeek-V3 instructions). ``--speculative-adaptive
--speculative-adaptive-config FILE`` (0.5.11) takes tiers by batch size from 0.5.13, and a tier of
0 steps (plain decoding) from 0.5.14: keys are batch sizes, each tier a list of candidate steps;
the batch is first rounded up to the next CUDA-graph batch size, then the largest key at or below
it applies (``speculative/adaptive_spec_params.py``). EAGLE and EAGLE3 (MTP is renamed EAGLE
first) with top-k 1 only, and not with data-parallel attention (``adaptive_unsupported_reason``, 0.5.23:
"adaptive tier decisions are not synchronized across DP ranks"; the server then drafts its
``--speculative-num-steps`` throughout); ``--speculative-num-steps`` must be one of the tiers' steps. EAGLE3
needs the target's class to capture hidden states (``set_eagle3_layers_to_capture``, called by
``model_executor/model_runner.py``): of the model types specviz reads, all have it in 0.5.14 and
0.5.23 (``srt/models/*.py``: Llama's class and those derived from it, Mistral's and Phi-3's, Qwen's,
``deepseek_v2.py`` for DeepSeek-V3/V3.2 and Kimi-K2, ``gpt_oss.py``, ``mllama4.py``,
``qwen3_next.py``, ``glm4_moe.py``, ``gemma3_causal.py``) but Mixtral's. ``--tp`` counts every GPU of the server. Data-parallel
attention over ``dp`` groups of a MoE is ``--dp-size dp --enable-dp-attention`` (0.5.5 to 0.5.21) or
``--attn-dp-size dp`` from 0.5.22, which turns the old pair into it and plans to drop it after
2026-12-31 (``arg_groups/parallel_hook.py``); a dense target's ``--dp-size`` counts replicas.
``--ep-size`` spreads the routed experts, and must equal ``--tp`` (``ep_size · moe_dp_size ==
tp_size``, 0.5.14). Several nodes take ``--nnodes``, ``--node-rank`` and ``--dist-init-addr``. A
draft model (STANDALONE) loads at the target's ``--quantization`` unless
``--speculative-draft-model-quantization`` (from 0.5.7; 0.5.5 and 0.5.6 give the draft the target's
alone) names its own.

References
----------
SGLang wheels 0.5.5 to 0.5.23 (``server_args.py``, ``arg_groups/serving_hook.py``, ``speculative/adaptive_spec_params.py``,
``arg_groups/speculative_hook.py``).
"""

from __future__ import annotations

import json

import pandas as pd

from specviz.advice.commands import Command, draft_name, draft_quantization, speculation_method, target_words
from specviz.advice.memory_flags import memory_flags, node_notices
from specviz.errors import Notice, SpecvizError
from specviz.scenario import Scenario

__all__ = ["SGLANG_ALGORITHMS", "TIERED_METHODS", "sglang_command", "rank_tiers"]

_SGLANG_ATTN_DP = "0.5.22"  # --attn-dp-size replaces --dp-size with --enable-dp-attention
# The drafting methods SGLang's adaptive tiers run with: EAGLE and EAGLE3, and MTP, which it renames
# EAGLE before it checks (top-k 1 only).
TIERED_METHODS = ("eagle", "eagle3", "mtp")
SGLANG_ALGORITHMS = {"model": "STANDALONE", "eagle": "EAGLE", "eagle3": "EAGLE3", "ngram": "NGRAM", "block": "DFLASH"}
_SGLANG_DFLASH = "0.5.14"  # the first checked release with DFLASH (0.5.5 has none)
_SGLANG_DRAFT_QUANTIZATION = "0.5.7"  # --speculative-draft-model-quantization (0.5.6 has none)
# The model types specviz reads whose SGLang class captures the hidden states EAGLE3 reads.
_SGLANG_EAGLE3_TYPES = ("llama", "mistral", "phi3", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "deepseek_v3",
                        "deepseek_v32", "kimi_k2", "gpt_oss", "llama4_text", "qwen3_next", "glm4_moe", "gemma3_text")


def rank_tiers(schedule: pd.DataFrame, ranks: int) -> dict[str, dict[str, list[int]]]:
    """SGLang's adaptive tiers (``--speculative-adaptive-config``) from a schedule by the server's batch.

    Each data-parallel rank runs its own scheduler, and its speculative worker picks a tier by the
    batch that rank holds (``batch.seq_lens.shape[0]``, ``speculative/eagle_worker_v2.py`` of
    SGLang 0.5.23); so with ``ranks`` ranks sharing the load evenly, a rank's batch ``k`` stands for
    the server's ``k·ranks``. The keys are each row's first batch per rank, ``⌈first / ranks⌉``; a
    key takes the draft length of the last row that starts at or below ``k·ranks``, so rows that
    fall on one key keep the length the server has at that key.

    Returns
    -------
    dict
        ``{"<batch per rank>": {"candidate_steps": [γ]}}``, keys ascending, the first 1.
    """
    keys = sorted({-(-int(first) // ranks) for first in schedule["first"]})
    tiers = {}
    for key in keys:
        gamma = schedule.loc[schedule["first"] <= key * ranks, "gamma"].iloc[-1]
        tiers[str(key)] = {"candidate_steps": [int(gamma)]}
    return tiers


def sglang_command(scenario: Scenario, gamma: int, *, schedule: pd.DataFrame | None = None,
                   draft_repo: str | None = None, target_repo: str | None = None, method: str = "draft") -> Command:
    """``python -m sglang.launch_server`` with a chain of γ drafts (top-k 1), and with ``schedule``
    the adaptive tiers file (EAGLE, EAGLE3 and MTP, which SGLang runs as EAGLE; from SGLang 0.5.14,
    the first with a tier of 0 steps). ``method``, ``draft_repo`` and ``target_repo`` as in
    :func:`specviz.advice.commands.vllm_command`: SGLang runs a target's MTP layers as EAGLE with no draft path, and has no
    suffix decoding, Medusa or MLP speculator.

    Raises
    ------
    SpecvizError
        ``command.bad_method``; ``command.not_in_engine`` for a method SGLang does not have;
        ``command.sglang_eagle3_target`` for EAGLE3 on a target whose class cannot run it;
        ``command.no_self_draft`` for a self-speculative draft; ``command.bad_checkpoint``.
    """
    method = speculation_method(scenario, method, "SGLang")
    if method in ("suffix", "medusa", "mlp_speculator"):
        raise SpecvizError("command.not_in_engine", method=method, engine="SGLang")
    if scenario.draft.kind == "peagle" and method == "eagle3":
        raise SpecvizError("command.not_in_engine", method="P-EAGLE (parallel_drafting)", engine="SGLang")
    kind = "eagle" if method == "mtp" else scenario.draft.kind
    if kind == "eagle3" and scenario.target.model_type not in _SGLANG_EAGLE3_TYPES:
        raise SpecvizError("command.sglang_eagle3_target", target=scenario.target.name,
                           model_type=scenario.target.model_type)
    notices = [Notice("command.mtp_layers", target=scenario.target.name)] if method == "mtp" else []
    if kind == "block":
        notices.append(Notice("command.sglang_since", algorithm=SGLANG_ALGORITHMS[kind], since=_SGLANG_DFLASH))
    problems: list[Notice] = []
    target, target_flags = target_words(scenario, "SGLang", problems, notices, target_repo)
    argv = ["python", "-m", "sglang.launch_server", "--model-path", target, *target_flags]
    moe = scenario.target.moe_layers > 0
    # SGLang's --tp counts every GPU; a MoE's data-parallel groups split the attention within it.
    tp = scenario.tp * scenario.dp if moe else scenario.tp
    if tp > 1:
        argv += ["--tp", str(tp)]
    if scenario.dp > 1 and moe:
        argv += ["--attn-dp-size", str(scenario.dp)]
        if kind == "block":
            argv.append("--enable-dp-lm-head")  # DFLASH with data-parallel attention requires it
        notices.append(Notice("command.sglang_attn_dp", since=_SGLANG_ATTN_DP, dp=scenario.dp))
    elif scenario.dp > 1:
        argv += ["--dp-size", str(scenario.dp)]
    if scenario.ep:
        argv += ["--ep-size", str(scenario.tp * scenario.dp)]
    # Tiers run with EAGLE and EAGLE3, and with MTP, which SGLang renames EAGLE before it checks;
    # not where no tier would speculate, for --speculative-num-steps must be one of the tiers' steps.
    # Not with data-parallel attention, where SGLang turns them off: its groups would choose apart.
    attn_dp = scenario.dp > 1 and moe
    tiers = rank_tiers(schedule, scenario.dp) if schedule is not None and kind in TIERED_METHODS and not attn_dp else None
    longest = max(tier["candidate_steps"][0] for tier in tiers.values()) if tiers else 0
    all_off = tiers is not None and longest == 0
    tiered = tiers is not None and not all_off
    # With tiers, the longest tier's steps (not the schedule's: a rank's keys can pass over the
    # server's batch 1): what the server allocates and captures graphs for.
    steps = longest if tiered else gamma
    argv += memory_flags(scenario, "SGLang", problems, notices=notices, drafted=steps)
    notices += node_notices(scenario, "SGLang")
    argv += ["--speculative-algorithm", SGLANG_ALGORITHMS[kind]]
    draft = draft_name(scenario, method, draft_repo, problems, "SGLang")
    if draft is not None:
        argv += ["--speculative-draft-model-path", draft]
    # A draft model loads at the target's --quantization unless it is given its own.
    quantization = draft_quantization(scenario, method, draft, problems, "SGLang", "--speculative-draft-model-path")
    if quantization and quantization not in target_flags:
        argv += ["--speculative-draft-model-quantization", quantization]
        notices.append(Notice("command.sglang_draft_quantization", since=_SGLANG_DRAFT_QUANTIZATION))
    files = {}
    if all_off:
        notices.append(Notice("command.schedule_all_off"))
    if kind in ("ngram", "block"):
        # A DFLASH block is one pass: its verify window is the draft tokens, steps and top-k fixed at 1.
        argv += ["--speculative-num-draft-tokens", str(steps + 1)]
    else:
        argv += ["--speculative-num-steps", str(steps), "--speculative-eagle-topk", "1",
                 "--speculative-num-draft-tokens", str(steps + 1)]
    if tiered:
        files["adaptive_tiers.json"] = json.dumps(tiers, indent=2)
        argv += ["--speculative-adaptive", "--speculative-adaptive-config", "adaptive_tiers.json"]
        notices.append(Notice("command.sglang_tiers", since="0.5.14"))
        if scenario.dp > 1:
            notices.append(Notice("command.sglang_tiers_per_rank", dp=scenario.dp))
    elif schedule is not None and kind in TIERED_METHODS and attn_dp:
        notices.append(Notice("command.sglang_tiers_attn_dp", dp=scenario.dp, steps=steps))
    elif schedule is not None and kind not in ("eagle", "eagle3"):
        notices.append(Notice("command.sglang_tiers_eagle_only", algorithm=SGLANG_ALGORITHMS[kind]))
    return Command(argv, files, notices, problems, by_batch=tiered)
