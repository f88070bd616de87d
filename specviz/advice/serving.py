"""The serving command for a scenario's engine, as the Deploy view and ``python -m specviz serve``
write it: vLLM's (:mod:`specviz.advice.commands`), SGLang's (:mod:`specviz.advice.sglang`) or
TensorRT-LLM's (:mod:`specviz.advice.trtllm`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from specviz import calculator
from specviz.advice.commands import VLLM_VERSIONS, Command, vllm_command, vllm_default_version
from specviz.advice.memory_flags import COMMAND_ENGINES, ENGINE_NAMES, batch_flag, command_engine_of
from specviz.advice import draft_length
from specviz.advice.sglang import sglang_command
from specviz.advice.trtllm import TRTLLM_DEFAULT, TRTLLM_VERSIONS, trtllm_command
from specviz.errors import Notice, SpecvizError
from specviz.scenario import Scenario, vocab_mismatch

__all__ = ["ENGINES", "VERSIONS", "DEFAULT_VERSIONS", "VERSION_KEYS", "REPO_CHARS", "command_engine", "default_version",
           "engine_no_fit", "one_length_off", "serve_command"]

ENGINES = tuple(COMMAND_ENGINES)
"""The engines a command is written for."""
VERSIONS = {"vllm": VLLM_VERSIONS, "trtllm": TRTLLM_VERSIONS}
"""The releases of each engine whose flags differ (SGLang's command is one for the releases checked)."""
DEFAULT_VERSIONS = {"vllm": VLLM_VERSIONS[-1], "trtllm": TRTLLM_DEFAULT}
"""Each engine's default release; a scenario at vLLM V0's costs has its own (:func:`default_version`)."""
VERSION_KEYS = {engine: "serve_version" if engine == "vllm" else f"{engine}_version" for engine in ENGINES}
"""The link parameter of each engine's release in the Deploy view, one each, so that a link keeps
them all (vLLM's was the first, ``serve_version``)."""
REPO_CHARS = 200
"""The longest checkpoint id (a Hugging Face id or a path) the Deploy view's fields take."""


def command_engine(scenario: Scenario) -> str:
    """The engine whose command a scenario's figures are for: SGLang's or TensorRT-LLM's for a
    scenario on its costs, vLLM's otherwise (its V1 and V0; eager PyTorch has no server command)."""
    return command_engine_of(scenario.engine.id) or "vllm"


def default_version(engine: str, scenario: Scenario) -> str | None:
    """The release of ``engine`` (:data:`ENGINES`) a command for ``scenario`` is for unless one is
    chosen: vLLM's follows the scenario's engine preset
    (:func:`specviz.advice.commands.vllm_default_version`); None for SGLang, whose command has no
    versions."""
    return vllm_default_version(scenario.engine.id) if engine == "vllm" else DEFAULT_VERSIONS.get(engine)


def engine_no_fit(scenario: Scenario, engine: str) -> SpecvizError:
    """``command.engine_no_fit``: not one sequence of ``scenario`` fits as ``engine`` divides the
    memory (SGLang keeps more of it than vLLM), so there is no command for it;
    ``command.engine_no_fit_elsewhere`` where the scenario's own engine holds some (it had been said
    so where that engine held none either: an engineer's pass)."""
    key = "command.engine_no_fit_elsewhere" if scenario.max_batch() >= 1 else "command.engine_no_fit"
    return SpecvizError(key, engine=ENGINE_NAMES[engine], context=scenario.context, devices=scenario.tp * scenario.dp)


def one_length_off(scenario: Scenario, alpha: float, context: int, length: int, schedule: pd.DataFrame,
                   engine: str) -> Notice | None:
    """``command.one_length_off`` (``..._later``): a command that drafts ``length`` at every batch (its
    engine or release takes no schedule) loses from a batch on where the lengths by batch of
    ``schedule`` still gain up to its last batch (or turn off only later); None where that length
    gains up to the schedule's last batch, or stops where the schedule does. gpt-oss-20b + n-gram on
    one H100 with an FP8 cache at context 256 and α 0.6, under SGLang: γ 3 throughout loses from
    batch 205, where the schedule turns off from 437 (an engineer's pass: the advice had said 437
    alone)."""
    limit = int(schedule["last"].iloc[-1])
    batches = np.arange(1, limit + 1)
    gains = np.asarray(calculator.evaluate_scenario(scenario, alpha, length, batches, context)["speedup"]) >= 1.0
    if gains[-1]:
        return None
    gaining = np.flatnonzero(gains)
    off = int(gaining[-1]) + 2 if gaining.size else 1  # the first batch after the last that gains
    scheduled = draft_length.stays_off_from(schedule)
    if scheduled is not None and scheduled <= off:
        return None
    if scheduled is None:
        return Notice("command.one_length_off", gamma=int(length), batch=off, limit=limit, flag=batch_flag(ENGINE_NAMES[engine]))
    return Notice("command.one_length_off_later", gamma=int(length), batch=off, schedule_off=scheduled,
                  flag=batch_flag(ENGINE_NAMES[engine]))


def serve_command(scenario: Scenario, schedule: pd.DataFrame, gamma: int, batch: int, *, engine: str | None = None,
                  version: str | None = None, method: str = "draft", draft_repo: str | None = None,
                  target_repo: str | None = None, by_load: bool = True, alpha: float | None = None,
                  context: int | None = None) -> Command:
    """The command for ``engine`` (:data:`ENGINES`; the scenario's by default) at ``version`` (by
    default the engine's release for the scenario, :func:`default_version`).

    By load (the scenario's own draft only: ``schedule``,
    :func:`specviz.advice.draft_length.gamma_schedule`, is that draft's), the schedule where the engine
    takes one, else the best γ at ``batch``, and the batch from which no γ gains; otherwise
    ``gamma`` throughout. A command by load of one length (the engine or release takes no schedule)
    says where that length stops gaining (:func:`one_length_off`), at ``alpha`` and ``context``
    (the scenario's where None), those ``schedule`` was found at.

    Raises
    ------
    SpecvizError
        ``command.engine_no_fit`` where ``schedule`` is empty (not one sequence fits as ``engine``
        divides the memory: SGLang keeps more of it than vLLM); as :func:`specviz.advice.commands.vllm_command`,
        :func:`specviz.advice.sglang.sglang_command` or :func:`specviz.advice.trtllm.trtllm_command`.
    """
    engine = engine or command_engine(scenario)
    if schedule.empty:  # the engine's memory rule holds not one sequence: a server that would not start
        raise engine_no_fit(scenario, engine)
    version = version or default_version(engine, scenario)
    by_load = by_load and method == "draft"
    # A batch past the memory's limit is served at the limit, the schedule's last row.
    held = min(batch, int(schedule["last"].iloc[-1]))
    here = schedule[(schedule["first"] <= held) & (schedule["last"] >= held)]["gamma"].iloc[0]
    length = max(1, int(here)) if by_load else gamma
    by_batch = schedule if by_load else None
    named = {"draft_repo": draft_repo, "target_repo": target_repo, "method": method}
    if engine == "sglang":
        command = sglang_command(scenario, length, schedule=by_batch, **named)
    elif engine == "trtllm":
        command = trtllm_command(scenario, version, length, schedule=by_batch, **named)
    else:
        # A release without a schedule turns speculation off from one batch on: from where it stays off,
        # not at a first run of batches after which it pays again.
        command = vllm_command(scenario, version, length, schedule=by_batch,
                               off_from=draft_length.stays_off_from(schedule), **named)
    if by_load and not command.by_batch and (said := one_length_off(
            scenario, scenario.alpha if alpha is None else alpha, scenario.context if context is None else context,
            length, schedule, engine)) is not None:
        command.notices.append(said)
    # A draft of another vocabulary starts, and its tokens are verified as ids of another tokenizer: said
    # first (an engineer's pass: DeepSeek-V3 drafted by Qwen3-0.6B had a command and nothing else).
    if method == "draft" and (mismatch := vocab_mismatch(scenario.target, scenario.draft)) is not None:
        command.notices.insert(0, mismatch)
    return command
