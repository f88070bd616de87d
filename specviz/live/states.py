"""Snapshots of ``/metrics`` → the state of speculative decoding of each model on a serving engine.

:func:`spec_decode_states` turns one :class:`specviz.live.exposition.Snapshot` (totals since the
server started) or two (a window between them) into one :class:`SpecDecodeState` per model, or per
model and replica: acceptance rate and length, γ, α, acceptance per draft position, the load and the
inter-token latency. Pure functions: no network, no Streamlit. What each engine exports is in
:mod:`specviz.live.roles`.

Series of one model are summed over every label other than ``model_name`` (vLLM's ``engine`` of
data-parallel engines, SGLang's ``tp_rank``, Prometheus's ``instance``); the result names the labels
summed over, and ``split_by`` keeps them apart instead.

Where an engine does not export what a figure needs, the figure is ``None`` and
:attr:`SpecDecodeState.absent` holds the reason (a :class:`specviz.errors.Notice`); nothing is
guessed. Windows treat a counter that went down as a restart, as Prometheus's ``increase()`` does,
and so a change of a process's start time between the two scrapes; two scrapes of two servers have no
window (:mod:`specviz.live.processes` says how each is told).

References
----------
Counter increases and histogram quantiles as Prometheus computes them: :mod:`specviz.live.promql`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

import numpy as np

from specviz import workload
from specviz.errors import Notice, SpecvizError
from specviz.model import spec

from .exposition import Snapshot
from .processes import refuse_other_server, restarted_processes
from .promql import counter_increase, histogram_quantile
from .roles import CUMULATIVE, MEANING_LABELS, OUTPUT_ROLE, ROLES, SPEC_ROLES, engine_of, metric_name

__all__ = ["SpecDecodeState", "spec_decode_states", "accepted_past_gamma", "MOST_TOKENS_PER_DRAFT"]

@dataclass(frozen=True)
class SpecDecodeState:
    """Speculative decoding of one model (or one replica of it) since start or over a window.

    Every figure is ``None`` where the engine does not export what it needs; ``absent`` then maps
    the figure's name to the reason. Token counts are sums over the replicas (``summed_labels``).

    Attributes
    ----------
    engine : str
        ``vllm-v1``, ``vllm-v0``, ``sglang``, ``llama.cpp``, ``trt-llm``, or the namespace of another
        engine that exports the vLLM counter schema.
    model_name : str
        The ``model_name`` label ("" where the engine exports none, as llama.cpp).
    labels : dict
        The values of the ``split_by`` labels for this state (empty when summed over).
    window : bool
        True for the increase between two snapshots, False for totals since start.
    seconds : float or None
        The window's length, where both snapshots carry a time.
    drafts, draft_tokens, accepted_tokens, emitted_tokens : float or None
        Counts of speculative steps, tokens proposed, proposed tokens accepted, and (vLLM V0)
        tokens emitted by speculative steps.
    acceptance_rate : float or None
        accepted_tokens / draft_tokens: what vLLM calls the acceptance rate (not α; see
        :mod:`specviz.model.spec`). For SGLang, its own gauge.
    acceptance_length : float or None
        1 + accepted_tokens / drafts: tokens per target step, bonus token included. For SGLang, and
        for a TensorRT-LLM without per-position counters, the engine's own gauge.
    num_speculative_tokens : float or None
        draft_tokens / drafts: γ, the draft length.
    alpha_iid : float or None
        The α with E(α, γ) = acceptance_length (:func:`specviz.model.spec.alpha_from_acceptance_length`).
    per_position_acceptance : list of float or None
        per_pos[i] / drafts: the share of drafts whose position i was accepted.
    per_position_conditional : list of float or None
        per_pos[i] / per_pos[i−1] (per_pos[0] / drafts at i = 0): acceptance at position i given
        that the positions before it were accepted, the a_i of
        :func:`specviz.model.spec.expected_tokens_chain`; ``None`` entries where the position before
        accepted nothing.
    zero_accept_rate : float or None
        1 − per_pos[0] / drafts: the share of drafts of which nothing was accepted.
    reported_acceptance_rate, reported_acceptance_length, system_efficiency : float or None
        The engine's own gauges (vLLM V0, SGLang), as reported at the latest snapshot.
    draft_overhead : float or None
        TensorRT-LLM's gauge at the latest snapshot: the share of its last logged iteration's time
        that the separate draft model took (draft latency / iteration latency), in (0, 1]. The
        model's counterpart is γ·t_draft / (γ·t_draft + t_verify)
        (:attr:`specviz.live.windows.PayingNow.draft_share`). None for other engines, and where
        TensorRT-LLM reports 0: it times only a separate draft model.
    running_requests, waiting_requests : float or None
        Requests being decoded (the live batch) and queued, summed over replicas.
    generation_tokens : float or None
        Tokens generated (since start, or over the window).
    generation_throughput : float or None
        generation_tokens / seconds over a window; absent over a window with a restart in it.
    kv_cache_usage : float or None
        Fraction of the KV cache in use: the highest across replicas (the first to run out).
    mean_prompt_tokens, mean_output_tokens : float or None
        P and O, the mean prompt and output tokens of the requests that finished (since start, or in
        the window): Δ tokens / Δ finished requests (:func:`_finished_means`).
    mean_context : float or None
        P + O/2 (:func:`specviz.workload.mean_context`): the mean context of a steady load's running
        requests, made of requests like those that finished; what the verdict runs the step model at
        (:func:`specviz.live.windows.paying_now`).
    itl_p50, itl_p99 : float or None
        Inter-token latency quantiles in seconds, from the histogram's buckets as Prometheus's
        ``histogram_quantile`` interpolates them.
    counter_reset : bool
        The server restarted between the snapshots: a counter went down, or the start time of the
        process that holds it changed (:func:`specviz.live.processes.restarted_processes`); the window counts from zero there.
    summed_labels : tuple of str
        Labels whose series were summed (e.g. ``("engine",)`` for data-parallel vLLM engines).
    absent : dict of str to Notice
        Why each ``None`` figure is absent.
    notices : list of Notice
        What a reader should know about the figures that are present.
    """

    engine: str
    model_name: str
    labels: dict[str, str]
    window: bool
    seconds: float | None
    drafts: float | None
    draft_tokens: float | None
    accepted_tokens: float | None
    emitted_tokens: float | None
    acceptance_rate: float | None
    acceptance_length: float | None
    num_speculative_tokens: float | None
    alpha_iid: float | None
    per_position_acceptance: list[float] | None
    per_position_conditional: list[float | None] | None
    zero_accept_rate: float | None
    reported_acceptance_rate: float | None
    reported_acceptance_length: float | None
    system_efficiency: float | None
    draft_overhead: float | None
    running_requests: float | None
    waiting_requests: float | None
    generation_tokens: float | None
    generation_throughput: float | None
    kv_cache_usage: float | None
    mean_prompt_tokens: float | None
    mean_output_tokens: float | None
    mean_context: float | None
    itl_p50: float | None
    itl_p99: float | None
    counter_reset: bool
    summed_labels: tuple[str, ...]
    absent: dict[str, Notice]
    notices: list[Notice]


def _group_key(prefix: str, labels: tuple[tuple[str, str], ...], split_by: tuple[str, ...]) -> tuple:
    named = dict(labels)
    return (prefix, named.get("model_name", ""), tuple(named.get(name, "") for name in split_by))


def _role_values(current: Snapshot, previous: Snapshot | None, role: str, split_by: tuple[str, ...],
                 restarted: list[dict[str, str]]) -> tuple[dict[tuple, list[tuple[dict[str, str], float]]], set[tuple]]:
    """Per group: the labels and value of each series of ``role`` (a counter's increase over the
    window when ``previous`` is given), and the groups in which a counter went down or whose
    process restarted (``restarted``, :func:`specviz.live.processes.restarted_processes`): those count from zero."""
    now = current.series[role]
    keys = list(now)
    values = np.fromiter(now.values(), dtype=float, count=len(keys))
    reset_groups: set[tuple] = set()
    if previous is not None and role in CUMULATIVE:
        before = previous.series[role]
        # A series the previous scrape did not hold was created since, from zero (vLLM creates
        # per-position series lazily; llama.cpp after the first speculative request), as
        # Prometheus's created-timestamp zero injection counts it.
        old = np.fromiter((before.get(k, 0.0) for k in keys), dtype=float, count=len(keys))
        # A series of a restarted process counts from zero too: its old value is another process's.
        anew = np.fromiter((any(process.items() <= dict(labels).items() for process in restarted)
                            for _, labels in keys), dtype=bool, count=len(keys))
        values, reset = counter_increase(np.where(anew, 0.0, old), values)
        reset_groups = {_group_key(*keys[i], split_by) for i in np.flatnonzero(reset | anew)}
    groups: dict[tuple, list[tuple[dict[str, str], float]]] = {}
    for (prefix, labels), value in zip(keys, values.tolist()):
        groups.setdefault(_group_key(prefix, labels, split_by), []).append((dict(labels), value))
    return groups, reset_groups


def spec_decode_states(current: Snapshot, previous: Snapshot | None = None,
                       split_by: tuple[str, ...] = ()) -> list[SpecDecodeState]:
    """Speculative-decoding figures of every model in a scrape, since start or over a window.

    Parameters
    ----------
    current : Snapshot
        The latest scrape.
    previous : Snapshot, optional
        An earlier scrape of the same server: the figures are then the increase between the two
        (counters), the latest value (gauges), and rates per second where both carry a time.
    split_by : tuple of str
        Labels to keep apart instead of summing over, e.g. ``("engine",)`` for the per-engine view
        of vLLM's data-parallel engines.

    Returns
    -------
    list of SpecDecodeState
        One per engine namespace, ``model_name`` and value of the ``split_by`` labels that has any
        speculative-decoding series, sorted by those.

        * acceptance_rate = accepted / draft_tokens; acceptance_length = 1 + accepted / drafts;
          num_speculative_tokens γ = draft_tokens / drafts; alpha_iid solves E(α, γ) = length.
        * per-position: per_pos[i] / drafts, and per_pos[i] / per_pos[i−1];
          zero_accept_rate = 1 − per_pos[0] / drafts.

    Raises
    ------
    specviz.live.processes.OtherServer
        ``prom.other_process`` where the two scrapes are of two processes that both ran at the
        previous one (:data:`specviz.live.processes.CLOCK_SKEW_S`), ``prom.other_models`` where they hold speculative
        decoding of no model in common and no process restarted between them.
    SpecvizError
        ``prom.no_spec_decode`` if no model has speculative-decoding series: speculation is off, or
        the engine is not one specviz reads; ``prom.no_spec_decode_values`` if the scrape's values
        of recognised series were all left out (not finite, or negative: ``current.notices``).
    """
    groups: dict[tuple, dict[str, list[tuple[dict[str, str], float]]]] = {}
    resets: set[tuple] = set()
    if previous is not None:
        refuse_other_server(current, previous)
    restarted = restarted_processes(current, previous) if previous is not None else []
    for role in ROLES:
        by_group, reset_groups = _role_values(current, previous, role, split_by, restarted)
        resets |= reset_groups
        for key, entries in by_group.items():
            groups.setdefault(key, {})[role] = entries
    # Companions (the server's load, its latency) have no model of their own in llama.cpp and SGLang
    # front ends; they join the spec-decode groups of the same namespace and model.
    built = [_state(key, roles, key in resets, current, previous, split_by)
             for key, roles in sorted(groups.items()) if any(r in roles for r in SPEC_ROLES)]
    if not built:
        # Series there were, but each value was left out: said with them, not as no series at all.
        dropped = [n.params["metric"] for n in current.notices if n.key == "prom.notice.dropped_value"]
        if dropped:
            raise SpecvizError("prom.no_spec_decode_values", metrics=", ".join(dropped))
        raise SpecvizError("prom.no_spec_decode")
    # α of every state in one vectorised solve: one bisection per state was 26 of the 35 s that a
    # fleet of 200 replicas × 61 points took.
    states = [state for state, _ in built]
    pending = [(index, solve) for index, (_, solve) in enumerate(built) if solve is not None]
    if pending:
        lengths, gammas = zip(*(solve for _, solve in pending))
        alphas = np.atleast_1d(spec.alpha_from_acceptance_length(np.array(lengths), np.array(gammas)))
        for (index, _), alpha in zip(pending, alphas):
            states[index] = replace(states[index], alpha_iid=float(alpha))
    return states


# Draft tokens per draft past which counters are no run's: 64 times the most any published run drafts
# a step (data/published_results.csv: γ up to 11, a tree of 26 tokens; z-lab's DFlash drafters propose
# blocks of 16, z-lab/Qwen3-8B-DFlash-b16), far past any engine's, far short of an exporter's garbage.
MOST_TOKENS_PER_DRAFT = 1024
# The figures a derived figure needs: where it is absent for want of one, it gives that one's reason.
_INPUTS = {
    "acceptance_rate": ("accepted_tokens", "draft_tokens"),
    "acceptance_length": ("accepted_tokens", "drafts"),
    "num_speculative_tokens": ("draft_tokens", "drafts"),
    "alpha_iid": ("acceptance_length", "num_speculative_tokens"),
}


def _ratio(num: float | None, den: float | None, field_name: str, den_metric: str,
           absent: dict[str, Notice]) -> float | None:
    """num / den, or None; a zero denominator's reason goes in ``absent`` (a missing count's
    reason is passed on by ``_INPUTS``). A denominator so near zero that the ratio overflows
    (a count of 1e-306 drafts) counts as zero."""
    if num is None or den is None:
        return None
    if den <= 0 or not math.isfinite(num / den):
        absent[field_name] = Notice("prom.absent.zero", count=Notice(f"prom.count.{den_metric}"))
        return None
    return num / den


def _state(key: tuple, roles: dict, counter_reset: bool, current: Snapshot, previous: Snapshot | None,
           split_by: tuple[str, ...]) -> tuple[SpecDecodeState, tuple[float, float] | None]:
    """One group's state, and the (acceptance length, γ) its α is solved from where it has one
    (``alpha_iid`` is left for :func:`spec_decode_states` to fill, all states' at once)."""
    prefix, model_name, split_values = key
    engine = engine_of(prefix, roles)
    absent: dict[str, Notice] = {}
    notices: list[Notice] = list(current.notices)
    window = previous is not None

    def total(role: str, field_name: str) -> float | None:
        if role not in roles:
            left_out = any(r == role and _group_key(p, labels, split_by) == key
                           for snapshot in (current, previous) if snapshot is not None
                           for r, p, labels in snapshot.dropped)
            absent[field_name] = (Notice("prom.absent.not_finite", metric=metric_name(engine, role))
                                  if left_out else _not_exported(engine, role))
            return None
        return float(sum(v for _, v in roles[role]))

    drafts = total("drafts", "drafts")
    draft_tokens = total("draft_tokens", "draft_tokens")
    accepted = total("accepted_tokens", "accepted_tokens")
    if engine == "trt-llm":
        drafts, draft_tokens, accepted = _trtllm_counts(roles, draft_tokens, accepted, absent, notices)
    emitted = total("emitted_tokens", "emitted_tokens")
    acceptance_rate = _ratio(accepted, draft_tokens, "acceptance_rate", "draft_tokens", absent)
    tokens_per_draft = _ratio(accepted, drafts, "acceptance_length", "drafts", absent)
    acceptance_length = None if tokens_per_draft is None else 1.0 + tokens_per_draft
    if accepted is not None and draft_tokens is not None and accepted > draft_tokens:
        # More tokens accepted than drafted, none drafted among them: no run's counters (a metrics
        # command had said a rate of 2,237, a recording 7.09, where an import refuses a rate above 1;
        # an attack pass's window of 500 drafts, 0 draft tokens and 500 accepted, after some counters
        # went back, had read an acceptance length of 2.00).
        absent["acceptance_rate"] = absent["acceptance_length"] = Notice(
            "prom.absent.more_accepted", accepted=accepted, drafted=draft_tokens)
        acceptance_rate = acceptance_length = None
    gamma = _ratio(draft_tokens, drafts, "num_speculative_tokens", "drafts", absent)
    if gamma is not None and not 1.0 <= gamma <= MOST_TOKENS_PER_DRAFT:
        # A draft proposes one token at least, and no engine drafts so many a step: counters such as
        # these are no run's (an attack pass: 1e300 tokens over one draft read "acceptance length
        # 1000000000000000052504760…", 300 digits; 0 tokens over 500 drafts read γ 0).
        key = "prom.absent.per_draft" if gamma > MOST_TOKENS_PER_DRAFT else "prom.absent.per_draft_few"
        said = absent["num_speculative_tokens"] = Notice(key, tokens=draft_tokens, drafts=drafts, most=MOST_TOKENS_PER_DRAFT)
        for name in ("acceptance_length", "acceptance_rate"):  # a reason given already (more accepted) stands
            absent.setdefault(name, said)
        gamma = acceptance_rate = acceptance_length = None
    gauges = {role: _gauge(roles, role, engine, absent)
              for role in ("reported_acceptance_rate", "reported_acceptance_length", "system_efficiency")}

    if engine == "vllm-v0":
        # V0 counts no drafts, and its accepted count is not the accepted prefix (issue #9539's
        # log: 8547 accepted of 13311 drafted at γ 3, but 10616 emitted leaves 10616 − 13311/3 =
        # 6179 tokens beyond the one a step emits anyway).
        for name in ("acceptance_length", "num_speculative_tokens", "alpha_iid"):
            absent[name] = Notice("prom.absent.v0_no_drafts")
    elif engine == "sglang":
        # SGLang exports acceptance only as gauges over its last logging interval: the figures it
        # has, said to be the engine's rather than this window's.
        acceptance_rate = _from_gauge(gauges, "acceptance_rate", "reported_acceptance_rate", absent)
        acceptance_length = _from_gauge(gauges, "acceptance_length", "reported_acceptance_length", absent)
        notices.append(Notice("prom.notice.gauge_source", engine=engine))
        absent["alpha_iid"] = Notice("prom.absent.no_gamma", engine=engine)
    elif engine == "trt-llm" and drafts is None:
        # Without its per-position counters TensorRT-LLM counts no drafts: the acceptance length is
        # its gauge of the last iteration it logged.
        acceptance_length = _from_gauge(gauges, "acceptance_length", "reported_acceptance_length", absent)
        notices.append(Notice("prom.notice.trtllm_gauge"))
        absent["alpha_iid"] = Notice("prom.absent.no_gamma", engine=engine)

    draft_overhead = _draft_overhead(roles, engine, absent, notices)
    solve = None
    if acceptance_length is not None and gamma is not None and _alpha_solvable(acceptance_length, gamma, absent):
        solve = (acceptance_length, gamma)
    derived = {"acceptance_rate": acceptance_rate, "acceptance_length": acceptance_length,
               "num_speculative_tokens": gamma, "alpha_iid": solve}
    for name, inputs in _INPUTS.items():
        if name not in absent and derived[name] is None:
            absent[name] = next(absent[n] for n in inputs if n in absent)

    unconditional, conditional, zero_accept = _per_position(roles, drafts, gamma, engine, absent)
    if (mixed := absent.get("per_position_conditional")) is not None and mixed.key == "prom.absent.mixed_lengths":
        # α of the i.i.d. model needs one γ: at the mean of several it is a figure of no draft.
        solve = None
        absent.setdefault("alpha_iid", mixed)
    over_one = [i + 1 for i, rate in enumerate(conditional or []) if rate is not None and rate > 1.0]
    if over_one:
        notices.append(Notice("prom.notice.conditional_over_one", positions=", ".join(map(str, over_one))))

    seconds = None
    if window and current.time is not None and previous.time is not None and current.time > previous.time:
        seconds = current.time - previous.time
    generation_tokens = total("generation_tokens", "generation_tokens")
    throughput = None
    if not window:
        absent["generation_throughput"] = Notice("prom.absent.not_a_window")
    elif seconds is None:
        absent["generation_throughput"] = Notice("prom.absent.no_time")
    elif generation_tokens is None:
        absent["generation_throughput"] = absent["generation_tokens"]
    elif counter_reset:
        # Its tokens count from the restart, at an unknown moment of the window: over the whole
        # window they read low, and from a counter that did not restart at 0 (an exporter's replay)
        # past what any server makes. The acceptance, a ratio of counts since the restart, stands.
        absent["generation_throughput"] = Notice("prom.absent.restarted")
    else:
        throughput = generation_tokens / seconds

    running = total("running", "running_requests")
    waiting = total("waiting", "waiting_requests")
    kv = None
    if "kv_cache_usage" in roles:
        kv = max(v for _, v in roles["kv_cache_usage"])
    else:
        absent["kv_cache_usage"] = _not_exported(engine, "kv_cache_usage")
    prompt, output, context = _finished_means(roles, engine, absent)
    itl_p50 = itl_p99 = None
    itl_role = "itl" if "itl" in roles else "itl_legacy"
    if itl_role in roles:
        itl_p50, itl_p99 = _itl_quantiles(roles[itl_role], engine, absent)
    else:
        absent["itl_p50"] = absent["itl_p99"] = _not_exported(engine, "itl")

    summed = sorted({name for entries in roles.values() for labels, _ in entries for name in labels}
                    - set(MEANING_LABELS) - set(split_by))
    # A label summed over has two values or more; series without it are not another replica
    # (prometheus_client's multiprocess mode, as TensorRT-LLM serves it, puts pid on gauges only).
    summed = [name for name in summed
              if len({labels[name] for entries in roles.values() for labels, _ in entries if name in labels}) > 1]
    if summed:
        notices.append(Notice("prom.notice.summed", labels=", ".join(summed)))
    if counter_reset:
        notices.append(Notice("prom.notice.counter_reset"))
    running, waiting, throughput, prompt, output, context = (
        _plausible(value, name, absent) for value, name in (
            (running, "running_requests"), (waiting, "waiting_requests"), (throughput, "generation_throughput"),
            (prompt, "mean_prompt_tokens"), (output, "mean_output_tokens"), (context, "mean_context")))

    return SpecDecodeState(
        engine=engine, model_name=model_name, labels=dict(zip(split_by, split_values)), window=window,
        seconds=seconds, drafts=drafts, draft_tokens=draft_tokens, accepted_tokens=accepted,
        emitted_tokens=emitted, acceptance_rate=acceptance_rate, acceptance_length=acceptance_length,
        num_speculative_tokens=gamma, alpha_iid=None,
        per_position_acceptance=unconditional, per_position_conditional=conditional,
        zero_accept_rate=zero_accept, reported_acceptance_rate=gauges["reported_acceptance_rate"],
        reported_acceptance_length=gauges["reported_acceptance_length"],
        system_efficiency=gauges["system_efficiency"], draft_overhead=draft_overhead, running_requests=running,
        waiting_requests=waiting,
        generation_tokens=generation_tokens, generation_throughput=throughput, kv_cache_usage=kv,
        mean_prompt_tokens=prompt, mean_output_tokens=output, mean_context=context, itl_p50=itl_p50, itl_p99=itl_p99, counter_reset=counter_reset, summed_labels=tuple(summed),
        absent={k: v for k, v in absent.items() if k in _FIGURES}, notices=notices), solve


_FIGURES = frozenset(SpecDecodeState.__dataclass_fields__) - {
    "engine", "model_name", "labels", "window", "seconds", "counter_reset", "summed_labels", "absent", "notices"}


def _finished_means(roles: dict, engine: str, absent: dict[str, Notice]
                    ) -> tuple[float | None, float | None, float | None]:
    """P and O, the mean prompt and output tokens of the requests that finished, and their mean
    context P + O/2 (:func:`specviz.workload.mean_context`):

    .. math:: P = \\frac{Δ\\,\\text{prompt tokens}}{Δ\\,\\text{finished requests}},\\quad
              O = \\frac{Δ\\,\\text{output tokens}}{Δ\\,\\text{finished requests}}

    over the window (or since start), every count added to once a request finishes (the module's
    docstring names each engine's series and source). A steady load's running requests are on
    average P + O/2 long: the finished ones' figures stand for the running ones'. None, each with its
    reason in ``absent``, where the engine does not export a count, or no request finished."""
    names = ("mean_prompt_tokens", "mean_output_tokens", "mean_context")
    counts = ("finished_requests", "request_prompt_tokens", OUTPUT_ROLE.get(engine, "request_output_tokens"))
    missing = next((role for role in counts if role not in roles), None)
    finished = 0.0 if missing else float(sum(v for _, v in roles["finished_requests"]))
    if missing is None and finished > 0:
        prompt, output = (float(sum(v for _, v in roles[role])) / finished for role in counts[1:])
        return prompt, output, float(workload.mean_context(prompt, output))
    reason = _not_exported(engine, missing) if missing else Notice("prom.absent.no_finished_requests")
    absent.update(dict.fromkeys(names, reason))
    return None, None, None


# The most a server's figure can be: past it a scrape is no server's (an attack pass: 1e308 running
# requests shown as a 309-digit tile, a histogram's 1e300 over 1e-300 as "Mean context inf").
_MOST = {"running_requests": 1e7, "waiting_requests": 1e7, "generation_throughput": 1e9, "mean_prompt_tokens": 1e8,
         "mean_output_tokens": 1e8, "mean_context": 1e8}


def _plausible(value: float | None, name: str, absent: dict[str, Notice]) -> float | None:
    """``value``, or None with its reason in ``absent`` where it is not finite or past :data:`_MOST`."""
    if value is None or (math.isfinite(value) and value <= _MOST[name]):
        return value
    absent[name] = Notice("prom.absent.implausible", value=value, most=_MOST[name])
    return None


def _from_gauge(gauges: dict[str, float | None], name: str, role: str, absent: dict[str, Notice]) -> float | None:
    """A figure read from the engine's own gauge ``role``, its reason passed on where it is absent."""
    absent.pop(name, None)
    if role in absent:
        absent[name] = absent[role]
    return gauges[role]


def _draft_overhead(roles: dict, engine: str, absent: dict[str, Notice], notices: list[Notice]) -> float | None:
    """TensorRT-LLM's ``trtllm_spec_decode_draft_overhead``: draft latency / iteration latency of the
    last iteration it logged, where ``last_draft_latency_ms`` is the separate draft model's; 0 where
    nothing timed a draft (a one-model MTP or EAGLE-3 head, an n-gram drafter, no drafts in that
    iteration), which is absent here rather than a free draft. Source (NVIDIA/TensorRT-LLM):
    ``tensorrt_llm/_torch/pyexecutor/py_executor.py``, ``_update_iter_stats`` (commit 00043967)."""
    if engine != "trt-llm":
        absent["draft_overhead"] = Notice("prom.absent.draft_overhead_engine", engine=engine)
        return None
    value = _gauge(roles, "draft_overhead", engine, absent)
    if value is None:
        return None
    if value == 0:
        absent["draft_overhead"] = Notice("prom.absent.draft_overhead_untimed")
        return None
    if value > 1:  # a part of the iteration cannot take longer than the whole
        absent["draft_overhead"] = Notice("prom.absent.draft_overhead_over_one", value=value)
        return None
    notices.append(Notice("prom.notice.trtllm_draft_overhead"))
    return value


def _position(labels: Mapping[str, str]) -> str:
    """The draft position a per-position series counts (``position``; TensorRT-LLM's ``token_position``)."""
    return labels.get("position", labels.get("token_position", ""))


def _trtllm_counts(roles: dict, draft_tokens: float | None, accepted: float | None, absent: dict[str, Notice],
                   notices: list[Notice]) -> tuple[float | None, float | None, float | None]:
    """TensorRT-LLM's drafts, draft tokens and accepted tokens.

    Its per-position counters (``trtllm_spec_decode_{drafted,accepted}_tokens_total{token_position}``)
    count every step of a request when the request finishes: position 0 is drafted once per draft, so
    drafts = drafted[0], draft tokens = Σ drafted, accepted = Σ accepted. Where it exports only its
    iteration counters (``trtllm_spec_decode_num_{draft,accepted}_tokens_total``), those count the
    iterations its server logged, one each time it drains its statistics, and there is no count of
    drafts. Sources (NVIDIA/TensorRT-LLM): ``tensorrt_llm/metrics/collector.py`` (commit 050f80de),
    ``log_request_metrics_dict`` and ``log_iteration_stats``; ``tensorrt_llm/serve/openai_server.py``
    (commit 00057725), ``_iteration_stats_collector_loop``.
    """
    if "drafted_per_pos" in roles and "accepted_per_pos" in roles:
        for name in ("drafts", "draft_tokens", "accepted_tokens"):
            absent.pop(name, None)
        notices.append(Notice("prom.notice.trtllm_per_request"))
        drafted = roles["drafted_per_pos"]
        return (float(sum(v for labels, v in drafted if _position(labels) == "0")), float(sum(v for _, v in drafted)),
                float(sum(v for _, v in roles["accepted_per_pos"])))
    absent["drafts"] = Notice("prom.absent.trtllm_no_drafts")
    if draft_tokens is not None:
        notices.append(Notice("prom.notice.trtllm_sampled"))
    return None, draft_tokens, accepted


def _not_exported(engine: str, role: str) -> Notice:
    return Notice("prom.absent.not_exported", engine=engine, metric=metric_name(engine, role))


def _gauge(roles: dict, role: str, engine: str, absent: dict[str, Notice]) -> float | None:
    """The engine's own ratio gauge: one value, or None where replicas disagree (a mean of ratios
    weighted by nothing would be a guess)."""
    if role not in roles:
        absent[role] = _not_exported(engine, role)
        return None
    values = sorted({v for _, v in roles[role]})
    if len(values) > 1:
        absent[role] = Notice("prom.absent.gauges_disagree", metric=metric_name(engine, role),
                              values=", ".join(f"{v:.4g}" for v in values))
        return None
    low, high = _GAUGE_RANGES.get(role, (0.0, math.inf))
    if not low <= values[0] <= high:
        absent[role] = Notice("prom.absent.gauge_out_of_range", metric=metric_name(engine, role), value=values[0],
                              low=low, high=high)
        return None
    return values[0]


# What an engine's ratio gauge can hold: a rate is a share of the drafted tokens, a length counts the
# token a step emits anyway (an attack pass: SGLang's spec_accept_rate 1.5 and spec_accept_length 0.2
# had been shown as such, where impossible vLLM counters are said).
_GAUGE_RANGES = {"reported_acceptance_rate": (0.0, 1.0),
                 "reported_acceptance_length": (1.0, 1.0 + MOST_TOKENS_PER_DRAFT)}


def _alpha_solvable(length: float, gamma: float, absent: dict[str, Notice]) -> bool:
    """Whether α can be solved from this acceptance length and γ; why not in ``absent``."""
    if gamma != round(gamma) or gamma < 1:
        absent["alpha_iid"] = Notice("prom.absent.gamma_not_whole", gamma=gamma)
        return False
    if not 1.0 <= length <= gamma + 1.0:
        absent["alpha_iid"] = Notice("prom.absent.length_out_of_range", length=length, gamma=gamma)
        return False
    return True


_RACE_SHARE = 1.1
# How far from a whole number draft tokens per draft may be and still be one γ (counters read one by
# one, a rate's extrapolation).
_WHOLE = 1e-6


def accepted_past_gamma(gamma: float, per_position: Sequence[float] | np.ndarray) -> bool:
    """Whether some draft accepted a position past γ rounded (counts or shares of drafts, by
    position): drafts of several lengths, where γ is their mean (4 and 2 tokens at equal rates read
    γ 3). Positions past γ that none accepted say nothing of the lengths."""
    return len(per_position) > round(gamma) and sum(per_position[round(gamma):]) > 0


def _per_position(roles: dict, drafts: float | None, gamma: float | None, engine: str, absent: dict[str, Notice]
                  ) -> tuple[list[float] | None, list[float | None] | None, float | None]:
    """Each position's share of the drafts that accepted it, its share of those that reached it, and
    the share that accepted none; absent, with why, where the counters cannot be one server's: a
    position accepted by a tenth more drafts than there were (more than reading the counters one by
    one explains; a zero-accept share of −100 % had been shown and stored), more tokens a draft (γ)
    than positions counted, or positions past γ whose counts rise. Drafts of several lengths (γ not
    whole, or a position past it that some draft accepted) keep their shares of all drafts but give
    none given the positions before, with why (``prom.absent.mixed_lengths``)."""
    names = ("per_position_acceptance", "per_position_conditional", "zero_accept_rate")

    def without(notice: Notice) -> tuple[None, None, None]:
        for name in names:
            absent[name] = notice
        return None, None, None

    if "accepted_per_pos" not in roles:
        return without(_not_exported(engine, "accepted_per_pos"))
    per_pos: dict[int, float] = {}
    for labels, value in roles["accepted_per_pos"]:
        position = _position(labels)
        if not (position.isascii() and position.isdigit()):  # "²".isdigit() holds, and int() refuses it
            return without(Notice("prom.absent.positions_incomplete", positions=position or "∅"))
        per_pos[int(position)] = per_pos.get(int(position), 0.0) + value
    if sorted(per_pos) != list(range(len(per_pos))):
        return without(Notice("prom.absent.positions_incomplete", positions=", ".join(map(str, sorted(per_pos)))))
    if drafts is None:
        return without(absent["drafts"])
    if drafts <= 0:
        return without(Notice("prom.absent.zero", count=Notice("prom.count.drafts")))
    counts = np.array([per_pos[i] for i in range(len(per_pos))])
    with np.errstate(over="ignore"):
        unconditional = counts / drafts
    if not np.all(np.isfinite(unconditional)):  # drafts so near 0 that the shares pass a float's range: none drafted
        return without(Notice("prom.absent.zero", count=Notice("prom.count.drafts")))
    # Counters read one by one can count a few steps at a position and not yet in the drafts (a small
    # window read between two updates: prom.notice.conditional_over_one); a tenth more is no such race.
    if (over := np.flatnonzero(unconditional > _RACE_SHARE)).size:
        return without(Notice("prom.absent.position_over_drafts", position=int(over[0]),
                              accepted=float(counts[over[0]]), drafts=drafts))
    if gamma is not None and gamma > len(counts) + _WHOLE:  # more tokens a draft than positions counted
        return without(Notice("prom.absent.positions_under_gamma", positions=len(counts), gamma=gamma))
    # Drafts of several lengths, where every draft that accepted a position accepted the ones before
    # it; else no draft's counters.
    longer = gamma is not None and accepted_past_gamma(gamma, counts)
    if longer and not np.all(counts[1:] <= counts[:-1] * _RACE_SHARE):
        return without(Notice("prom.absent.positions_over_gamma", positions=len(counts), gamma=gamma))
    zero_accept = float(1.0 - unconditional[0])
    if zero_accept < 0:  # within the race: no share of drafts is below 0
        absent["zero_accept_rate"] = Notice("prom.absent.zero_accept_race", accepted=float(counts[0]), drafts=drafts)
        zero_accept = None
    if longer or (gamma is not None and abs(gamma - round(gamma)) > _WHOLE):
        # Drafts of several lengths (servers of one model drafting different γ, a drafter of varying
        # length): a position's predecessor counts drafts that ended before it, so the share given the
        # positions before it is too low (an SRE's pass: 0.643 where the drafts that reached it
        # accepted 0.750), and summed counters cannot tell them apart.
        absent["per_position_conditional"] = Notice("prom.absent.mixed_lengths", gamma=gamma, positions=len(counts))
        return unconditional.tolist(), None, zero_accept
    before = np.concatenate(([drafts], counts[:-1]))
    with np.errstate(divide="ignore", invalid="ignore"):
        conditional = counts / before
    return unconditional.tolist(), [None if b <= 0 else float(c) for b, c in zip(before, conditional)], zero_accept


def _itl_quantiles(entries: list[tuple[dict[str, str], float]], engine: str, absent: dict[str, Notice]
                   ) -> tuple[float | None, float | None]:
    """p50 and p99 of the inter-token latency, the replicas' buckets summed by ``le`` first (as
    ``histogram_quantile(q, sum by (le) (...))``)."""
    buckets: dict[float, float] = {}
    for labels, value in entries:
        try:
            bound = float(labels.get("le", "nan"))
        except ValueError:
            continue
        if not math.isnan(bound):
            buckets[bound] = buckets.get(bound, 0.0) + value
    quantiles = [histogram_quantile(q, buckets.keys(), buckets.values()) for q in (0.5, 0.99)]
    if quantiles[0] is None:
        absent["itl_p50"] = absent["itl_p99"] = Notice("prom.absent.no_observations", metric=metric_name(engine, "itl"))
    return quantiles[0], quantiles[1]
