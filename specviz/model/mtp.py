"""A target's multi-token-prediction (MTP) layers as a draft: which engines run them, the draft
positions they were trained for, and what each position past those keeps of the acceptance.

vLLM and SGLang run a model's last MTP layer again for every draft token past its
``num_nextn_predict_layers``, each time on its own guess (vLLM warns that this "may result in lower
acceptance rate"). The acceptance math of such a draft is :func:`specviz.model.spec.expected_tokens`
with ``trained`` and ``decay``; :func:`reuse` gives them for a target and a draft kind.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .architecture import Model

__all__ = ["SERVED", "REUSE", "TRAINED", "trained_positions", "reuse"]

# Model types whose checkpoints carry MTP layers that vLLM's mtp method runs, with its first release
# for each (vllm/config/speculative.py, hf_config_override, of each release's sources on PyPI): the
# Deploy view's and serve's check (specviz.advice.commands), and a new scenario drafts with the MTP
# layer only where an engine runs it (specviz.scenario.default_draft). The first seven with the
# method (0.11.0); GLM-5's glm_moe_dsa from 0.16.0 (none in 0.14.1, 0.15 has no sources on PyPI);
# Qwen3.5's from 0.17.0 (its checkpoints' qwen3_5 and qwen3_5_moe; the text-only types from 0.22.0);
# DeepSeek-V4's from 0.20.0 (none in 0.19.1). SGLang 0.5.23 runs all of them (srt/models:
# deepseek_nextn.py, glm4_moe_nextn.py, qwen3_next_mtp.py, qwen3_5_mtp.py, deepseek_v4_nextn.py;
# GlmMoeDsaForCausalLMNextN, configs/model_config.py). MiniMax-M2's MTP modules run in neither up to
# vLLM 0.33.0 and SGLang 0.5.23 (only MiniMax-M3's, minimax_m3_mtp).
SERVED: dict[str, tuple[int, int, int]] = {
    **dict.fromkeys(("deepseek_v3", "deepseek_v32", "mimo", "glm4_moe", "ernie4_5_moe", "qwen3_next", "longcat_flash"),
                    (0, 11, 0)),
    "glm_moe_dsa": (0, 16, 0), "qwen3_5_text": (0, 17, 0), "qwen3_5_moe_text": (0, 17, 0), "deepseek_v4": (0, 20, 0)}
REUSE = 0.62
"""What each draft position past an MTP layer's training keeps of the acceptance before it
(:func:`specviz.model.spec.expected_tokens`'s ``decay``), as every scenario prices a reused MTP layer
unless told otherwise: the median of five measurements of DeepSeek-V4-Flash's one MTP layer run for
a second token, the conditional acceptance at position 2 over that at position 1 (0.586, 0.643,
0.619, 0.579: vLLM PR #41044, 4x B200 at temperature 1 and SM120 at concurrency 1, 4 and 8;
0.663: vllm-ascend-deepseekv4 PR #132, three tokens, whose third kept 0.49 of the second's, which
r = 0.62 compounding, 0.62² = 0.38, still overstates). Not fitted to specviz's published series."""
TRAINED: dict[str, float] = {"glm_moe_dsa": 3.0, **dict.fromkeys(("qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"), np.inf)}
"""Draft positions a family's MTP layers were trained to predict, where more than one per layer
(:func:`trained_positions`): GLM-5 shares one MTP layer's parameters over three steps in training
("GLM-5: from Vibe Coding to Agentic Engineering", 2026); Qwen3-Next's MTP was trained over several
steps as inference runs it (the Qwen3-Next release post, 2025-09), and Qwen3.5's and later's reused
layer holds its acceptance: 0.850, 0.843, 0.829 at positions 1–3 in a real vLLM 0.25.1 run of
Qwen3.8-27B-FP8 (``spec_decode_per_position_acceptance_rates`` 0.85, 0.717, 0.594, the sample of
``../shared/samples/2026/vllm_0.25.1``)."""


MEASURED_HOLDING = 3
"""Positions at which a reused MTP layer of a family trained over several steps (:data:`TRAINED`'s
infinite ones) has been measured to hold its acceptance: the vLLM 0.25.1 run's three. Past them the
figures keep α, which no run has measured (said: :func:`specviz.advice.draft_length.head_past_training`)."""


def trained_positions(target: Model) -> float:
    """The draft positions ``target``'s MTP layers were trained to predict: its family's
    (:data:`TRAINED`), else one per layer (DeepSeek's sequential modules, each trained for its own
    offset; at least 1)."""
    return TRAINED.get(target.model_type, float(max(1, target.mtp_layers)))


def reuse(target: Model, draft_kind: str, factor: ArrayLike = REUSE) -> dict[str, ArrayLike]:
    """How a draft's acceptance falls along its positions, as :func:`specviz.model.spec.expected_tokens`
    takes it (``trained``, ``decay``): the target's MTP layers (``draft_kind`` ``mtp``) keep ``factor``
    of the acceptance at each position past those they were trained for (:func:`trained_positions`);
    any other draft keeps α at every position."""
    if draft_kind != "mtp":
        return {"trained": np.inf, "decay": 1.0}
    return {"trained": trained_positions(target), "decay": factor}
