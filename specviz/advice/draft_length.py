"""The draft length per batch size that the step model advises: the schedule a command states
(vLLM's ``num_speculative_tokens_per_batch_size``, SGLang's adaptive tiers, TensorRT-LLM's
``draft_len_schedule``), the batch × context map of where speculation pays, and the advice in words
beside them.

Each is the step model's speedup (:func:`specviz.calculator.evaluate_scenario`) searched over γ on a
grid of batches (and contexts), never a loop over it; the batches run to the memory's limit as the
command states it (:func:`specviz.advice.memory_flags.memory_flags`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from specviz import calculator
from specviz.advice.memory_flags import ENGINE_NAMES, engine_rule, stated_batch
from specviz.errors import Notice
from specviz.model import mtp, spec, step
from specviz.scenario import Scenario, largest_batch

__all__ = ["gamma_schedule", "gamma_map", "advise", "off_ranges", "stays_off_from", "head_past_training",
           "evidenced_positions",
           "WEAK_DRAFT_RATE", "EAGLE3_TRAINED"]

# Below this vLLM acceptance rate (accepted / drafted) a draft does not fit the target ("GPU chạy 30%
# công suất — bạn vẫn trả 100% tiền": record the acceptance rate; under 40 % the draft is unsuitable).
WEAK_DRAFT_RATE = 0.40
# What to try instead of a draft below it, by the draft's kind (advice.weak_remedy.*): a head is
# already the close draft, and prompt lookup has no model to replace.
_WEAK_REMEDY = {"model": "model", "ngram": "lookup", "suffix": "lookup", **dict.fromkeys(step.HEAD_KINDS, "head")}
# The draft positions an EAGLE-3 head is trained for: its training-time test unrolls 7 steps by default
# (SpecForge's scripts/train_eagle3.py, --ttt-length 7; SafeAILab's eagle/traineagle3/cnets.py,
# self.length = 7). No published run measures the acceptance past them.
EAGLE3_TRAINED = 7


def gamma_schedule(scenario: Scenario, alpha: float, context: int, batch_max: int, gamma_max: int,
                   engine: str | None = None) -> pd.DataFrame:
    """The best draft length for every batch size, in ranges: what vLLM's
    ``num_speculative_tokens_per_batch_size`` or SGLang's adaptive tiers should hold.

    The batches run to the largest the memory holds (:meth:`specviz.scenario.Scenario.max_batch` at
    this context, at least 1), which is what a command states as vLLM's ``--max-num-seqs``, SGLang's
    ``--max-running-requests`` or TensorRT-LLM's ``--max_batch_size``
    (:func:`specviz.advice.memory_flags.memory_flags`, at the longest draft the server allocates for,
    the schedule's own longest: fewer than at the scenario's γ where it takes more room, more where
    it takes less; the schedule is found again up to them), even past ``batch_max`` (up to
    :func:`specviz.advice.memory_flags.stated_batch`'s bound, which the command states too). A server
    never runs a batch it cannot hold, but it runs every batch it can, and an engine does not stop
    at a schedule's end: vLLM gives a batch past the last range that range's length
    (vllm-project/vllm #32374, ``vllm/v1/spec_decode/dynamic/utils.py``), SGLang the
    largest key at or below it (``speculative/adaptive_spec_params.py``), TensorRT-LLM from 1.3.0rc8
    no draft (NVIDIA/TensorRT-LLM #10860): a schedule ending short of the limit would give those
    batches a length the step model never chose. Only a server the memory does not bound (a device
    without a memory figure, whose command states no limit) stops at ``batch_max``. For each batch
    the γ in 1..``gamma_max`` with the highest speedup in the step model at ``alpha`` and
    ``context`` (up to the longest draft a steady load takes,
    :meth:`specviz.scenario.Scenario.gamma_limit`), or 0 where no γ gains (speculation off);
    consecutive batches with the same γ form
    one range. With ``engine`` (a command's engine, ``vllm``, ``sglang`` or ``trtllm``), the memory
    is divided by that engine's rule (:func:`engine_rule`), as its command's flags are: an
    eager-PyTorch scenario's command is vLLM's, and its schedule stopped at 233 sequences where the
    command stated 200.

    Returns
    -------
    DataFrame
        Columns ``first``, ``last`` (inclusive batch sizes), ``gamma`` and the speedup at that γ
        over the range, ``speedup_low`` and ``speedup_high`` (its smallest and largest; 1 where
        γ is 0). No rows where the memory holds not one sequence with the draft: no batch runs.
    """
    held = replace(_served_by(scenario, engine), context=context)
    limit = held.max_batch()  # the largest int64: no memory figure, no limit
    if limit < 1:
        return pd.DataFrame({"first": [], "last": [], "gamma": [], "speedup_low": [], "speedup_high": []}).astype(
            {"first": int, "last": int, "gamma": int})
    tried = set()
    while True:
        schedule = _best_ranges(scenario, alpha, context, stated_batch(limit) if limit < np.iinfo(np.int64).max
                                else batch_max, gamma_max)
        # The server allocates for the schedule's longest draft, not the scenario's γ: a shorter one
        # holds more sequences (Qwen3-32B on 2 H100s at γ 8: 199, and 200 at the schedule's 7), a
        # longer one fewer (Qwen3-Next + MTP on 2 H200s at γ 4: 423, and 277 at its 7), and the
        # schedule runs to what the server holds, which its command states.
        tried.add(limit)
        longest = max(1, int(schedule["gamma"].max()))
        limit = replace(held, gamma=longest).max_batch()
        if limit < 1:
            return schedule
        if limit in tried:
            # A cycle (Qwen3-Next + MTP on one B200 under SGLang: 18 at γ 4, whose schedule wants a 5,
            # 15 at γ 5, whose schedule's longest is 4 again): the batches the longest draft found
            # holds, none drafted longer, so that the schedule ends where the command's flag does.
            return _best_ranges(scenario, alpha, context, stated_batch(limit) if limit < np.iinfo(np.int64).max
                                else batch_max, min(gamma_max, longest))


def _served_by(scenario: Scenario, engine: str | None) -> Scenario:
    """``scenario`` with its memory divided as ``engine`` (a command's engine) divides it; as it is for None."""
    if engine is None:
        return scenario
    return replace(scenario, engine=replace(scenario.engine, memory=engine_rule(scenario, ENGINE_NAMES[engine])))


def _best_ranges(scenario: Scenario, alpha: float, context: int, batch_max: int, gamma_max: int) -> pd.DataFrame:
    """:func:`gamma_schedule`'s ranges over the batches 1..``batch_max``."""
    g = np.arange(1, scenario.gamma_limit(gamma_max) + 1)[:, None]
    b = np.arange(1, batch_max + 1)[None, :]
    speed = np.asarray(calculator.evaluate_scenario(scenario, alpha, g, b, context)["speedup"], dtype=float)
    best = np.where(speed.max(axis=0) > 1.0, np.argmax(speed, axis=0) + 1, 0)
    best_speed = np.where(best > 0, speed.max(axis=0), 1.0)
    starts = np.flatnonzero(np.diff(best, prepend=-1))
    ends = np.append(starts[1:], batch_max) - 1
    return pd.DataFrame({"first": starts + 1, "last": ends + 1, "gamma": best[starts],
                         "speedup_low": [best_speed[s:e + 1].min() for s, e in zip(starts, ends)],
                         "speedup_high": [best_speed[s:e + 1].max() for s, e in zip(starts, ends)]})


def evidenced_positions(scenario: Scenario) -> int | None:
    """The draft positions whose acceptance the scenario's draft is known to keep, past which the
    figures keep α on no evidence: an EAGLE-3 head's :data:`EAGLE3_TRAINED`, a reused MTP layer of a
    family trained over several steps :data:`specviz.model.mtp.MEASURED_HOLDING` (a manager's pass:
    Qwen3-Next's MTP was priced at E 17 at γ 16 without a word); None for the rest (an MTP layer run
    past its training is priced falling, :func:`specviz.model.mtp.reuse`)."""
    if scenario.draft.kind == "eagle3":
        return EAGLE3_TRAINED
    if scenario.draft.kind == "mtp" and not math.isfinite(mtp.trained_positions(scenario.target)):
        return mtp.MEASURED_HOLDING
    return None


def head_past_training(scenario: Scenario, gamma: int) -> Notice | None:
    """``advice.head_past_training`` where ``scenario``'s draft is an EAGLE-3 head drafting ``gamma``
    tokens, more than the :data:`EAGLE3_TRAINED` positions such heads are trained for, and
    ``advice.mtp_past_measured`` where it is a reused MTP layer drafting more than the positions it
    has been measured to hold (:func:`evidenced_positions`): the figures keep α past them; else None.
    The calculator says it at its γ, the Deploy view at the longest its schedule drafts."""
    limit = evidenced_positions(scenario)
    if limit is None or gamma <= limit:
        return None
    if scenario.draft.kind == "eagle3":
        return Notice("advice.head_past_training", gamma=int(gamma), trained=limit)
    return Notice("advice.mtp_past_measured", gamma=int(gamma), measured=limit, target=scenario.target.name)


def advise(scenario: Scenario, alpha: float, gamma: int, batch: int, schedule: pd.DataFrame,
           engine: str | None = None, by_load: bool = True) -> list[Notice]:
    """What to set, in words: the best γ at this batch and at batch 1, the batch from which
    speculation should be off, and whether the draft fits.

    ``schedule`` is :func:`gamma_schedule` for the same scenario, α, context and ``engine``; where it
    has no rows (not one sequence fits), ``advice.nothing_fits`` alone. A batch past the schedule's
    last is ``advice.batch_no_fit``, or ``advice.batch_past_schedule`` where it fits at ``gamma``
    all the same (the schedule's longest draft takes more room: a command of one draft length holds
    it, one by load stops at the schedule's end). A command of one draft length (``by_load`` False)
    that does not hold the batch at ``gamma`` is said first (``advice.batch_no_fit_gamma``). The best γ falls as
    the batch grows (the verify pass of B·(γ + 1) positions becomes compute-bound), which is why
    seed 000 (a 64-user load test) advises 2–4 draft tokens and seed 003 (a small team's coding
    assistant) 5–8: each is right at its own batch.

    Returns
    -------
    list of Notice
        ``advice.best_gamma`` (γ, speedup, batch) or ``advice.no_gamma``; ``advice.gamma_by_batch``
        (or ``advice.gamma_by_batch_rises``: the best γ at the first batch that speculates and here) where they differ,
        ``advice.gamma_by_batch_moves`` where it both rises and falls on the way (a mixture of experts:
        the expert tax fades as the batch grows while each verify position grows dearer), with the γ
        it turns at and that γ's batches; ``advice.mtp_reused`` for a draft longer than the positions
        the target's MTP layers were trained for (vLLM: "Enabling num_speculative_tokens > 1 will run
        multiple times of forward on same MTP layer, which may result in lower acceptance rate"),
        with the acceptance the figures take at the last trained position and the last drafted one;
        ``advice.head_past_training`` for an EAGLE-3 head drafting more than the
        :data:`EAGLE3_TRAINED` positions such heads are trained for, whose figures keep α there;
        where no γ gains, ``advice.off_from`` (from a batch on), ``advice.off_at`` or
        ``advice.off_at_and_from`` (at runs of batches, and maybe from one on: :func:`off_ranges`), or
        ``advice.never_off``; ``advice.weak_draft`` where vLLM's acceptance
        rate at this α and γ (a reused MTP layer's at the positions it was trained for) is below
        :data:`WEAK_DRAFT_RATE`, with a remedy for the draft's kind
        (``advice.weak_remedy.*``: a closer draft model or an EAGLE head for a draft model; a head
        trained for this target, or trained further on its outputs, for an EAGLE, EAGLE-3, P-EAGLE
        head or a block drafter; traffic that repeats its prompt for n-gram and suffix drafting; an
        EAGLE-3 head otherwise); ``advice.ngram`` unless the draft already looks up the prompt.
    """
    if schedule.empty:
        return [Notice("advice.nothing_fits", batch=int(batch), context=int(scenario.context))]
    limit = int(schedule["last"].iloc[-1])
    # The γ's course over the batches that speculate: a batch turned off is not a draft length.
    speculating = schedule[schedule["gamma"] > 0]
    own = replace(_served_by(scenario, engine), gamma=gamma).max_batch()  # what the page's γ holds
    if batch > limit:
        # The schedule stops where the memory holds its longest draft (gamma_schedule), which may hold
        # fewer sequences than the page's own γ: said with its γ (a browser pass: 265 beside 266), and
        # where the page's γ holds the batch, said so (a consistency pass: Qwen3-Next on a B200 at
        # batch 200 and γ 2, 234 held, had read "does not fit" beside the calculator's 1.62×).
        longest = max(1, int(schedule["gamma"].max()))
        notices = [Notice("advice.batch_past_schedule", batch=int(batch), limit=limit, gamma=longest,
                          own_gamma=int(gamma), own_limit=stated_batch(own)) if batch <= own
                   else Notice("advice.batch_no_fit", batch=int(batch), limit=limit, gamma=longest)]
    else:
        here = schedule[(schedule["first"] <= batch) & (schedule["last"] >= batch)].iloc[0]
        best = max(1, int(here["gamma"]))
        # With its band, as the calculator's headline says a speedup (a browser pass).
        low, high = calculator.speedup_band(scenario, alpha, best, batch, scenario.context)
        notices = [Notice("advice.best_gamma", gamma=int(here["gamma"]), batch=int(batch),
                          speedup=float(calculator.evaluate_scenario(scenario, alpha, best, batch,
                                                                     scenario.context)["speedup"]),
                          low=float(low), high=float(high))
                   if here["gamma"] else Notice("advice.no_gamma", batch=int(batch))]
        # Up to this batch the best γ falls for a dense model; it may rise for a MoE, or do both.
        gammas = speculating.loc[speculating["first"] <= batch, "gamma"].to_numpy()
        steps = np.sign(np.diff(gammas))
        first = speculating.iloc[0] if len(speculating) else here
        # Off at this batch (advice.no_gamma), there is no draft length to trace.
        if here["gamma"] and (steps > 0).any() and (steps < 0).any():
            # Where it turns: where it turns back a second time, its highest (having fallen) or lowest
            # after the first turn and before this batch's; where it turns once and runs on to this
            # batch, the point it turned at (a rise to 3 at batches 23-124 and a fall to 1 at 500 had
            # been said to turn at the 2 of 125-333).
            first_way = steps[0]
            after = int(np.argmax(steps == -first_way)) + 1
            between = gammas[after:-1]
            turns_again = (steps[after:] == first_way).any()
            turn = speculating.iloc[after + int(np.argmax(between if first_way < 0 else -between)) if turns_again
                                    else after - 1]
            notices.append(Notice("advice.gamma_by_batch_moves", small=int(first["gamma"]),
                                  small_batch=int(first["first"]), batch=int(batch), large=int(here["gamma"]),
                                  turn=int(turn["gamma"]), turn_first=int(turn["first"]), turn_last=int(turn["last"])))
        elif here["gamma"] and first["gamma"] != here["gamma"]:
            falls = here["gamma"] < first["gamma"]
            notices.append(Notice("advice.gamma_by_batch" if falls else "advice.gamma_by_batch_rises",
                                  small=int(first["gamma"]), small_batch=int(first["first"]), batch=int(batch),
                                  large=int(here["gamma"])))
    if not by_load and batch > own:
        # Within the schedule, but past what γ holds: the one-length command states that limit (an attack
        # pass: batch 192 at γ 8, 164 held, had read "γ 4 is best at batch 192" beside --max-num-seqs 164).
        said = Notice("advice.batch_no_fit_gamma", batch=int(batch), gamma=int(gamma), limit=int(own))
        notices[:1 if batch > limit else 0] = [said]  # in place of the schedule's "does not fit", if said
    notices.append(_off_notice(schedule))
    # The longest draft the page and its command ask for: this γ, or the schedule's (the command's
    # num_speculative_tokens). At γ 1 (DeepSeek-V3's published α 0.85 is at γ 1) the schedule still
    # drafted up to 11 tokens with the one MTP layer, and the warning was not given.
    longest = int(max(gamma, schedule["gamma"].max()))
    if (reused := scenario.mtp_reused_from) is not None and longest >= reused:
        rates = spec.position_rates(alpha, longest, **scenario.reuse)
        notices.append(Notice("advice.mtp_reused", target=scenario.target.name, trained=reused - 1, gamma=longest,
                              reuse=scenario.mtp_reuse, first=float(rates[reused - 2]), last=float(rates[-1])))
    if (past := head_past_training(scenario, longest)) is not None:
        notices.append(past)
    # A reused MTP layer is judged at the positions it was trained for: what it loses past them is the
    # draft length's to fix (the advice above), not the draft's.
    judged = int(gamma) if reused is None else min(int(gamma), reused - 1)
    rate = float(spec.acceptance_rate_from_alpha(alpha, judged, **scenario.reuse))
    if rate < WEAK_DRAFT_RATE:
        remedy = Notice(f"advice.weak_remedy.{_WEAK_REMEDY.get(scenario.draft.kind, 'other')}")
        notices.append(Notice("advice.weak_draft", rate=rate, gamma=judged, alpha=float(alpha),
                              floor=WEAK_DRAFT_RATE, remedy=remedy))
    if _WEAK_REMEDY.get(scenario.draft.kind) != "lookup":
        notices.append(Notice("advice.ngram"))
    return notices


def off_ranges(schedule: pd.DataFrame) -> list[tuple[int, int]]:
    """The batches a schedule (:func:`gamma_schedule`) turns speculation off at, as (first, last) runs of
    consecutive rows with γ 0; the last run ends at the schedule's last batch where speculation stays off
    from there on."""
    runs: list[tuple[int, int]] = []
    for first, last, gamma in schedule[["first", "last", "gamma"]].itertuples(index=False):
        if gamma:
            continue
        if runs and runs[-1][1] == int(first) - 1:
            runs[-1] = (runs[-1][0], int(last))
        else:
            runs.append((int(first), int(last)))
    return runs


def stays_off_from(schedule: pd.DataFrame) -> int | None:
    """The batch from which a schedule keeps speculation off up to its last batch, or None where its
    last row speculates: what an engine's one switch by batch size (vLLM's disable_by_batch_size) can
    say, where a first run of batches off after which speculation pays again cannot."""
    runs = off_ranges(schedule)
    return runs[-1][0] if runs and runs[-1][1] == int(schedule["last"].iloc[-1]) else None


def _off_notice(schedule: pd.DataFrame) -> Notice:
    """Where to turn speculation off: from a batch on (``advice.off_from``), at some batches and maybe
    from one on (a mixture of experts' small batches, or short plain steps that the costs only
    speculation pays outweigh: ``advice.off_at``, ``advice.off_at_and_from``), or nowhere up to the
    schedule's last batch (``advice.never_off``)."""
    runs, stops = off_ranges(schedule), stays_off_from(schedule)
    between = runs[:-1] if stops is not None else runs
    if not between:
        return (Notice("advice.never_off", batch=int(schedule["last"].iloc[-1])) if stops is None
                else Notice("advice.off_from", batch=stops))
    ranges = ", ".join(f"{a:,}" if a == b else f"{a:,}–{b:,}" for a, b in between)
    return Notice("advice.off_at", ranges=ranges) if stops is None else Notice("advice.off_at_and_from", ranges=ranges,
                                                                              batch=stops)


def gamma_map(scenario: Scenario, alpha: float, batch_max: int, context_max: int, gamma_max: int) -> pd.DataFrame:
    """Where speculation pays over batch × context, and with which γ: the best γ in 1..``gamma_max``
    (0 where none gains) and its speedup at each batch 1, 2, 4, … ``batch_max`` and context 256,
    512, … ``context_max`` (powers of two), at ``alpha``. Longer contexts move the crossover: the KV
    cache's reads keep a verify pass memory-bound at larger batches (MagicDec), so the best γ and
    the batch at which speculation stops paying both depend on the context.

    The memory limit moves with the context too: ``fits`` says where the speculative server holds
    the batch, ``fits_plain`` where plain decoding does (:meth:`specviz.scenario.Scenario.max_batch`).

    Returns
    -------
    DataFrame
        Long form: ``batch``, ``context``, ``gamma``, ``speedup`` (1 where ``gamma`` is 0),
        ``fits`` and ``fits_plain``.
    """
    g = np.arange(1, gamma_max + 1)[:, None, None]
    b = 2 ** np.arange(int(np.log2(batch_max)) + 1)
    ctx = 2 ** np.arange(8, int(np.log2(max(context_max, 256))) + 1)
    # Over the contexts (a device without a memory figure gives one unlimited batch for all: a CPU
    # preset's Deploy view had failed with IndexError, an attack pass).
    limit, limit_plain = (np.broadcast_to(largest_batch(scenario.gpu, scenario.target, draft, scenario.precision,
                                                        tp=scenario.tp, dp=scenario.dp, context=ctx, gamma=scenario.gamma,
                                                        rule=scenario.engine.memory), ctx.shape)
                          for draft in (scenario.draft, None))
    speed = np.asarray(calculator.evaluate_scenario(scenario, alpha, g, b[None, :, None], ctx[None, None, :])["speedup"],
                       dtype=float)
    best = speed.max(axis=0)
    gamma = np.where(best > 1.0, np.argmax(speed, axis=0) + 1, 0)
    return pd.DataFrame({"batch": np.repeat(b, ctx.size), "context": np.tile(ctx, b.size),
                         "gamma": gamma.ravel(), "speedup": np.where(gamma > 0, best, 1.0).ravel(),
                         "fits": (b[:, None] <= limit[None, :]).ravel(),
                         "fits_plain": (b[:, None] <= limit_plain[None, :]).ravel()})
