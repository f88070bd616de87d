"""A request's whole latency, prefill and decode, with and without speculation.

Speculation shortens decode only: the prompt is read in one compute-bound prefill pass either way
(and a draft model reads it too), so the end-to-end gain of a request is

.. math::

    S_{e2e} = \\frac{t_{first}^{plain} + (n_{out} - 1)\\, t_{plain}}
                   {t_{first}^{spec} + t_{draft\\ prefill} + \\frac{n_{out} - 1}{E}\\, t_{spec}}
            \\;\\le\\; \\frac{1}{\\text{prefill share}}

with t_plain and t_spec the step model's plain and speculative steps (:func:`specviz.model.step.step`) at
the batch and the request's mean context (its prompt and half its output), E the tokens per
speculative step, n_out − 1 the tokens after the first (which the prefill gives), and t_first the
time to first token of each server (:func:`first_token`): the prompt's chunks in the steps of a
server that decodes the batch meanwhile, after the prompts ahead of it, under the engine's token
budget a step; the prefill share is t_first^plain over the plain request's time. A prompt-heavy request (long in, short out) spends most of its time before
its first token, where speculation does nothing but harm: its speculative steps are longer, leave
less of the budget to prompts and, under a steady load, take E times as many of them (and a draft
model, a head or an MTP layer reads the prompt too). The bound holds because the speculative time
to first token is never the shorter.

A scenario becomes a server's steady load of such requests with :func:`steady_load`; the Latency view
and ``specviz simulate`` take their acceptance, step times and number of simulated requests from
:func:`latency_acceptance`, :func:`latency_step_times` and :func:`latency_runs`.

References
----------
"GPU chạy 30% công suất — bạn vẫn trả 100% tiền" (the Vietnamese article behind the worked example of
the Claims page): a coding assistant with about 100 input and 500 output tokens per response is
decode-heavy (5:1); prompt-heavy work is dominated by prefill, where speculation does nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import settings
from .errors import InputError
from .i18n import PresetText
from .model import drafters, simulate, spec, step, zero_accept
from .model.preset_rows import read_rows

if TYPE_CHECKING:  # the scenario's presets hold the workloads: a type here, not an import
    from .scenario import Scenario

__all__ = ["Workload", "load_workloads", "mean_context", "prompt_room", "first_token", "end_to_end", "PROMPT_HEAVY_SHARE",
           "check_request_length", "steady_load", "at_measured_rates", "latency_acceptance", "latency_step_times",
           "latency_runs", "LATENCY_STEPS", "ZERO_SHARES"]

# A request that spends at least this share of its time (without speculation) in prefill is called
# prompt-heavy: not even a free draft that is always right could make it 4x faster, and a real
# speedup of decode loses a large part of its gain (2.57x on decode is 1.56x on the request at 35 %).
PROMPT_HEAVY_SHARE = 0.25


@dataclass(frozen=True)
class Workload:
    """Tokens in and out per request, with where the figures come from."""

    id: str
    name: str
    input_tokens: int
    output_tokens: int
    source: str
    note: str


def mean_context(input_tokens: ArrayLike, output_tokens: ArrayLike) -> ArrayLike:
    """The mean context of a steady load's running requests of ``input_tokens`` P in and
    ``output_tokens`` O out, which each decode step reads and the KV cache holds:

    .. math:: \\bar{c} = P + O/2

    a request's prompt and half its output, for a steady load's requests are spread evenly over
    their output (one that has decoded k of its O tokens reads P + k). The one formula of it: the
    calculator's steady load (:func:`specviz.workload.steady_load`), the Latency view's decode steps
    and the live windows' mean of finished requests (:mod:`specviz.live.states`) all take it here.
    """
    return input_tokens + output_tokens / 2


def load_workloads(data_dir: Path) -> dict[str, Workload]:
    """The workload presets of ``data_dir / "workloads.csv"`` by id, in file order (name, source and
    note with their translations)."""
    return {row["id"]: Workload(row["id"], PresetText.from_row(row, "name"), int(row["input_tokens"]),
                                int(row["output_tokens"]), PresetText.from_row(row, "source"),
                                PresetText.from_row(row, "note"))
            for row in read_rows(Path(data_dir) / "workloads.csv")}


def prompt_room(scenario: Scenario, alpha: ArrayLike, gamma: ArrayLike, batch: ArrayLike) -> dict[str, np.ndarray]:
    """The engine's token budget a step and what takes it, per data-parallel rank, with and without
    speculation, broadcast over every argument.

    The engine's scheduler (:class:`specviz.model.memory.TokenBudget`, the scenario's engine's)
    gives each step a budget of N tokens for the GPU, per data-parallel rank (SGLang's divided over
    the attention groups of a mixture of experts). Where decodes share it (vLLM V1,
    ``vllm/v1/core/sched/scheduler.py``; TensorRT-LLM) the running requests' tokens come first, b·n
    of them (b = ⌈B/dp⌉; n = 1 plain, γ + 1 speculative: the draft positions count,
    ``num_tokens_with_spec``), then chunks of the waiting prompts in order (chunked prefill), so
    prompts have c = N − b·n tokens of room a step; where prefill batches run apart (SGLang) c = N.
    Under the scenario's steady load (P in, O out) prompts come at d = b·P/O tokens a step
    (:meth:`Scenario.prompts_per_step`), E(α, γ) times as many speculating, and use the room at
    ρ = d/c; decoding only, d = 0. Arithmetic alone, no step priced: a page checks it on every rerun.

    Returns
    -------
    dict of ndarray
        ``budget`` (N), ``batch_per_rank`` (b), ``room_plain`` and ``room_spec`` (c),
        ``prompts_plain`` and ``prompts_spec`` (d), ``queue_plain`` and ``queue_spec`` (ρ, infinite
        where c ≤ 0) and ``keeps_up_plain`` and ``keeps_up_spec`` (c > 0 and d < c: else the prompts'
        queue grows without end, and the steady load's batch is not one the server runs).
    """
    g = np.asarray(gamma, dtype=float)
    b = np.ceil(np.asarray(batch, dtype=float) / scenario.dp)
    rule = scenario.engine.memory.budget
    budget = float(rule.tokens_per_rank(scenario.gpu.memory_gb, scenario.attention_groups))
    others = scenario.prompts_per_step(b)
    out = {"budget": budget, "batch_per_rank": b}
    for side, positions, arriving in (("plain", 1.0, others), ("spec", g + 1.0, others * scenario.expected_tokens(alpha, g))):
        room = budget - b * positions if rule.decodes_share else np.full_like(b * positions, budget)
        out |= {f"room_{side}": room, f"prompts_{side}": arriving,
                f"queue_{side}": np.where(room > 0, arriving / np.where(room > 0, room, 1.0), np.inf),
                f"keeps_up_{side}": (room > 0) & (arriving < room)}
    shape = np.broadcast_shapes(*(np.shape(v) for v in out.values()))
    return {k: np.broadcast_to(v, shape) for k, v in out.items()}


def budget_batch(scenario: Scenario, alpha: float, gamma: int, speculative: bool = True) -> int:
    """The largest batch whose steps the engine's token budget admits with speculation or without
    (``speculative``): where :func:`prompt_room` keeps up. Per data-parallel rank, b sequences whose
    steps take n positions each (γ + 1 speculating, 1 plain) and bring a = P/O prompt tokens each
    under the steady load (E times as many speculating; 0 decoding only) keep up where

    .. math:: b\\,(n + a) < N \\quad\\text{(decodes share the budget)},\\qquad b\\,a < N \\quad\\text{(prefill apart)}

    so the most is ⌈N / (n + a)⌉ − 1 a rank (none where prefill runs apart and nothing arrives), times
    ``dp``. A larger batch is not what the server runs: it schedules fewer sequences a step."""
    rule = scenario.engine.memory.budget
    budget = float(rule.tokens_per_rank(scenario.gpu.memory_gb, scenario.attention_groups))
    arriving = float(scenario.prompts_per_step(1.0)) * (float(scenario.expected_tokens(alpha, gamma)) if speculative else 1.0)
    per_step = (gamma + 1.0 if speculative else 1.0) + arriving if rule.decodes_share else arriving
    if per_step <= 0:
        return np.iinfo(np.int64).max
    return max(0, math.ceil(budget / per_step) - 1) * scenario.dp


def first_token(scenario: Scenario, alpha: ArrayLike, gamma: ArrayLike, batch: ArrayLike, input_tokens: ArrayLike,
                context: ArrayLike) -> dict[str, np.ndarray]:
    """Time to first token of a prompt of P = ``input_tokens`` arriving at a server that decodes
    ``batch`` requests at ``context``, with and without speculation, broadcast over every argument.

    Each step has c tokens of room for prompts under the engine's budget (N − b·n, or N where prefill
    batches run apart), which the steady
    load's other prompts use at ρ = d/c (:func:`prompt_room`, per data-parallel rank; decoding only,
    d = 0). A prompt waits half a step on
    average for the step under way to end, waits W steps for the prompts ahead of it, and takes
    k = ⌈P/c⌉ steps of its own, each carrying x = max(d, P/k) prompt tokens on its rank, d on each
    other data-parallel rank. Such a step lasts as long as its busiest rank: it is priced as if every
    rank carried x, except in the routed experts, which all ranks share and which see
    x + (dp − 1)·d of them (decoding only, d = 0: x). Where prefill batches run apart (SGLang), t_step(x)
    reads as a prefill batch of x tokens and the decode step that follows it, as its scheduler
    alternates them:

    .. math::

        t_{first} = \\left(\\tfrac12 + W\\right) t_{step} + k\\, t_{step}(x),\\qquad
        W = \\frac{\\rho\\, P/c}{2\\,(1 - \\rho)}

    with t_step the load's step at the context (:meth:`Scenario.step_times`) and t_step(x) one carrying x prompt
    tokens; W is the Pollaczek–Khinchine mean wait of an M/D/1 queue (prompts arriving at random,
    served at c tokens a step; Kleinrock, *Queueing Systems* vol. 1, 1975, §5.5), and 0 where the
    prompts arrive evenly spaced (``*_even_s``), as a benchmark's identical requests can. Where
    ρ ≥ 1 (the prompts come faster than the budget admits them) or c ≤ 0 (the decodes alone fill
    the budget) the queue grows without end: the time is infinite, and the steady load's batch is
    not what the server runs. Speculation raises ρ twice over, E times the prompts a step and b·γ
    fewer tokens of room, and lengthens each step. The draft's own pass over the prompt is
    :func:`end_to_end`'s.

    Returns
    -------
    dict of ndarray
        ``ttft_plain_s`` and ``ttft_spec_s`` (prompts at random), ``ttft_plain_even_s`` and
        ``ttft_spec_even_s`` (evenly spaced), infinite where the prompts do not keep up; and
        :func:`prompt_room`'s figures.
    """
    prompt = np.asarray(input_tokens, dtype=float)
    g = np.asarray(gamma, dtype=float)
    room = prompt_room(scenario, alpha, g, batch)
    steps = scenario.step_times(batch=batch, gamma=g, context=context, alpha=alpha)
    e = steps["expected_tokens"]
    out = dict(room)
    for side in ("plain", "spec"):
        keeps_up, arriving, step_s = room[f"keeps_up_{side}"], room[f"prompts_{side}"], steps[f"{side}_s"]
        room_left = np.where(keeps_up, room[f"room_{side}"], 1.0)  # a placeholder where the queue grows without end
        queue = arriving / room_left
        own_steps = np.ceil(prompt / room_left)
        carried = np.maximum(arriving, prompt / own_steps)
        # A step carrying x prompt tokens on this prompt's rank and the load's d on each other one
        # lasts as long as its busiest rank: the load's step of B·P/(dp·x) output tokens, as if every
        # rank carried x (E times as many speculating, whose verify pass carries E·B·P/O), but the
        # experts all ranks share see x + (dp − 1)·d of them (decoding only, x).
        finishing = np.asarray(batch, dtype=float) * prompt / (carried * scenario.dp)
        routed_share = (carried + (scenario.dp - 1) * arriving) / (carried * scenario.dp)
        own = scenario.step_times(batch=batch, gamma=g, context=context, alpha=alpha,
                                  load={"prompt_tokens": prompt, "prompt_routed_share": routed_share,
                                        "output_tokens": finishing * (e if side == "spec" else 1.0)})[f"{side}_s"]
        wait = queue * (prompt / room_left) / (2.0 * (1.0 - queue))
        even = 0.5 * step_s + own_steps * own
        out |= {f"ttft_{side}_s": np.where(keeps_up, even + wait * step_s, np.inf),
                f"ttft_{side}_even_s": np.where(keeps_up, even, np.inf)}
    shape = np.broadcast_shapes(*(np.shape(v) for v in out.values()))
    return {k: np.broadcast_to(v, shape) for k, v in out.items()}


def end_to_end(scenario: Scenario, alpha: ArrayLike, gamma: ArrayLike, batch: ArrayLike, input_tokens: ArrayLike,
               output_tokens: ArrayLike) -> dict[str, np.ndarray]:
    """Time to first token, decode time and the whole request, plain and speculative (the module's
    equation), broadcast over every argument.

    Parameters
    ----------
    scenario : Scenario
        Hardware, models, engine costs, precision and tensor parallelism (its own α, γ, batch and
        context are not used).
    alpha, gamma, batch : array_like
        Per-position acceptance, draft length, and the requests decoded together.
    input_tokens, output_tokens : array_like
        Tokens in the prompt and tokens generated, per request (output at least 1).

    Returns
    -------
    dict of ndarray
        ``ttft_plain_s``, ``ttft_spec_s`` (:func:`first_token`, prompts arriving at random, and
        with speculation the draft's pass over the prompt too; infinite where the prompts' queue
        grows without end, and the ratios then NaN or 0), ``ttft_plain_even_s`` and
        ``ttft_spec_even_s`` (the same, prompts arriving evenly spaced), ``decode_plain_s``, ``decode_spec_s`` (the output's steps after the first token),
        ``e2e_plain_s``, ``e2e_spec_s``, ``decode_speedup``, ``e2e_speedup``, ``prefill_share``
        (of the plain request's time), ``e2e_limit`` (1 / prefill share: no speculation does
        better) and ``prompt_heavy`` (prefill share ≥ :data:`PROMPT_HEAVY_SHARE`).

    Raises
    ------
    ValueError
        If a count is below its minimum (prompt 1 token, output 1 token).
    """
    n_in, n_out = np.asarray(input_tokens, dtype=float), np.asarray(output_tokens, dtype=float)
    if np.any(n_in < 1) or np.any(n_out < 1):
        raise InputError("workload.tokens")
    timed = dict(**scenario.parallel, precision=scenario.precision, costs=scenario.costs)
    first = first_token(scenario, alpha, gamma, batch, n_in, mean_context(n_in, n_out))
    # Every draft that keeps a cache of its own reads the prompt too (vLLM's EAGLE and MTP proposers run
    # over every scheduled token): a draft model, an EAGLE, EAGLE-3 or P-EAGLE head (its own config's
    # where given), the MTP layer, a block drafter. None does on the host (n-gram, suffix), a
    # self-draft shares the target's prefill, and Medusa heads read the last hidden state alone.
    drafting = None if scenario.draft.kind in ("self", "medusa") else drafters.drafter(scenario.target, scenario.draft)
    drafted = (np.zeros_like(n_in) if drafting is None
               else step.pass_time(scenario.gpu, drafting, 1.0, n_in, 0.0, **timed)["time_s"])
    steps = scenario.step_times(batch=batch, gamma=gamma, context=mean_context(n_in, n_out), alpha=alpha)
    # The first token comes from the prefill; the other n_out − 1 from decode steps.
    decode_plain = (n_out - 1) * steps["plain_s"]
    decode_spec = (n_out - 1) / steps["expected_tokens"] * steps["spec_s"]
    ttft_plain, ttft_spec = first["ttft_plain_s"], first["ttft_spec_s"] + drafted
    e2e_plain, e2e_spec = ttft_plain + decode_plain, ttft_spec + decode_spec
    with np.errstate(invalid="ignore"):  # a queue that grows without end: infinite times, no ratio
        share, e2e_speedup = ttft_plain / e2e_plain, e2e_plain / e2e_spec
    out = {"ttft_plain_s": ttft_plain, "ttft_spec_s": ttft_spec, "ttft_plain_even_s": first["ttft_plain_even_s"],
           "ttft_spec_even_s": first["ttft_spec_even_s"] + drafted, "decode_plain_s": decode_plain,
           "decode_spec_s": decode_spec, "e2e_plain_s": e2e_plain, "e2e_spec_s": e2e_spec,
           "decode_speedup": steps["speedup"], "e2e_speedup": e2e_speedup, "prefill_share": share,
           "e2e_limit": 1.0 / share, "prompt_heavy": share >= PROMPT_HEAVY_SHARE}
    shape = np.broadcast_shapes(*(np.shape(v) for v in out.values()))
    return {k: np.broadcast_to(v, shape) for k, v in out.items()}


def at_measured_rates(scenario: Scenario, rates: Sequence[float]) -> tuple[Scenario, float]:
    """The scenario and the α at which its draft makes the tokens a step of measured conditional
    per-position ``rates`` (:func:`specviz.model.spec.expected_tokens_chain`): a reused MTP layer at
    the reuse factor the rates show (:meth:`Scenario.reuse_from_rates`), or, where even that falls
    short of them at α = 1, at 1 (the chain, which every length of γ rates reaches); any other draft
    as it is."""
    length, gamma = float(spec.expected_tokens_chain(rates)), len(rates)
    if (measured := scenario.reuse_from_rates(rates)) is not None:
        scenario = replace(scenario, mtp_reuse=measured)
        if length > float(scenario.expected_tokens(1.0, gamma)):
            scenario = replace(scenario, mtp_reuse=1.0)
    return scenario, float(spec.alpha_from_acceptance_length(length, gamma, **scenario.reuse))


def latency_acceptance(scenario: Scenario, alpha: float, gamma: int, rates: Sequence[float] | None = None
                       ) -> tuple[Scenario, float, tuple[float, ...] | None]:
    """The scenario, α and conditional per-position rates the Latency view simulates: measured
    ``rates`` as they are, with the scenario and α at which its draft makes their tokens a step
    (:func:`at_measured_rates`); else, for an MTP layer reused past its training, the falling rates
    it accepts at (:func:`specviz.model.spec.position_rates`); else no rates (i.i.d. α)."""
    if rates:
        scenario, alpha = at_measured_rates(scenario, rates)
        return scenario, alpha, tuple(float(a) for a in rates)
    if (reused := scenario.mtp_reused_from) is not None and gamma >= reused:
        return scenario, alpha, tuple(float(a) for a in spec.position_rates(alpha, gamma, **scenario.reuse))
    return scenario, alpha, None


def latency_step_times(scenario: Scenario, alpha: float, gamma: int, batch: int, input_tokens: int,
                       output_tokens: int) -> tuple[float, simulate.StepTimes]:
    """The context and the plain and speculative step times the Latency view simulates a request of
    ``input_tokens`` in and ``output_tokens`` out with (the calculator's page and ``specviz simulate``
    alike): its decode steps at the request's mean context, P + O/2
    (:func:`mean_context`), not the calculator's context slider, at ``batch``."""
    context = float(mean_context(input_tokens, output_tokens))
    steps = scenario.step_times(batch=batch, gamma=gamma, context=context, alpha=alpha)
    return context, simulate.StepTimes.from_step(steps)


# The Latency view's simulation, the page's and `specviz simulate`'s: its steps (with 2,000 requests,
# a p99 that moves by about 1 % between seeds, in a few tens of milliseconds: bench/bench_simulate.py)
# and the zero-accept shares of its sweep (none, and seed 002's measured 15-30 %).
LATENCY_STEPS = 200_000
ZERO_SHARES = (0.0, 0.15, 0.2, 0.25, 0.3)


def latency_runs(alpha: float, gamma: int, rates: Sequence[float] | None,
                 output_tokens: int) -> tuple[float, tuple[float, ...], int]:
    """The mean tokens a step at this acceptance, the zero-accept shares the Latency view sweeps at it
    (those of :data:`ZERO_SHARES` a chain of that mean length can have:
    :func:`specviz.model.zero_accept.zero_share_range`) and the requests each of its runs simulates, so
    that the view's runs stay within
    ``SPECVIZ_PAGE_SIMULATION_CELLS`` (:func:`specviz.model.simulate.requests_within`; 2,000 for the
    usual request, fewer for long outputs). The acceptance is the measured per-position ``rates``
    where given, else α at γ."""
    length = float(spec.expected_tokens_chain(rates) if rates else spec.expected_tokens(alpha, gamma))
    fewest, most = zero_accept.zero_share_range(length, gamma)
    shares = tuple(z for z in ZERO_SHARES if fewest <= z <= most)
    return length, shares, simulate.requests_within(settings.get("SPECVIZ_PAGE_SIMULATION_CELLS"), output_tokens,
                                                    runs=1 + len(shares))


def check_request_length(input_tokens: int, output_tokens: int) -> None:
    """Refuse a request (P + O) longer than ``SPECVIZ_CONTEXT_MAX``, the longest context the
    calculator takes (``scenario.load_too_long``, an :class:`InputError`)."""
    longest = settings.get("SPECVIZ_CONTEXT_MAX")
    if input_tokens + output_tokens > longest:
        raise InputError("scenario.load_too_long", input=input_tokens, output=output_tokens, most=longest)


def steady_load(scenario: Scenario, input_tokens: int, output_tokens: int) -> Scenario:
    """``scenario`` as a server's steady load of its batch of requests of ``input_tokens`` in and
    ``output_tokens`` out: each step also takes the prompts of the requests that replace finished
    ones (``prefill``), and the context is a request's mean, P + O/2 (its prompt and half its output:
    a steady load's requests are spread evenly over their output, :func:`mean_context`),
    which each decode step reads and the memory holds, as the Latency view's decode steps run.

    Raises
    ------
    InputError
        ``scenario.load_too_long`` where a request (P + O) is longer than ``SPECVIZ_CONTEXT_MAX``,
        the longest context the calculator takes; ``scenario.load_too_short`` where a request ends
        within one speculative step (O − 1 < γ + 1 tokens after the first, which its prefill
        gives): a speculative step would then finish more requests than the batch holds (B·E/O > B),
        and the load's prefill (:func:`specviz.model.step.step`) does not hold.
    """
    check_request_length(input_tokens, output_tokens)
    if output_tokens - 1 < scenario.gamma + 1:
        raise InputError("scenario.load_too_short", output=output_tokens, gamma=scenario.gamma,
                         tokens=scenario.gamma + 1)
    return replace(scenario, prefill=True, input_tokens=input_tokens, output_tokens=output_tokens,
                   context=mean_context(input_tokens, output_tokens))
