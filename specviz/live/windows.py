"""Live traffic beside the step model: is speculation paying at the batch the server runs now?

The live page measures, over a window of a running server (:mod:`specviz.live.states`), the draft length γ,
the acceptance length, the running requests (the batch the engine decodes) and the mean context of
the requests that finished. :func:`paying_now` puts those into the scenario of the sidebar (its GPU,
models, engine costs and precision) and asks the calculator's step model what speculation gains at
that batch and context, with its band, and at which batch it would stop paying at the acceptance
measured.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

import pandas as pd

from specviz import calculator, settings
from specviz.errors import InputError, Notice
from specviz.live import exposition
from specviz.live.processes import utc_clock
from specviz.live.states import SpecDecodeState, spec_decode_states
from specviz.model import calibration, spec
from specviz.scenario import Scenario

__all__ = ["PayingNow", "paying_now", "stops_notice", "latency_link_fields", "position_intervals", "missing_for_verdict", "scenario_alpha", "live_context", "server_batch", "server_count", "engine_labels", "draft_share_gap", "speedup_at_draft_share", "CALIBRATION_FIGURES",
           "calibrate_windows", "calibrate_models", "REPLICA_FIGURES", "replica_states", "replica_table", "stale_window", "late_point",
           "LATE_STEPS", "servers_dropped", "fleet_point", "CURRENT_WINDOW_S"]

# The width of α's sampling interval past which a verdict says its drafts were few: ±0.025 of α, about
# 250 drafts of 3 tokens at α 0.7, moves a speedup by a few percent.
FEW_DRAFTS_WIDTH = 0.05
# What a window needs to calibrate on: its batch, tokens per step, draft length and throughput.
CALIBRATION_FIGURES = ("running_requests", "acceptance_length", "num_speculative_tokens", "generation_throughput")
# Steps a Prometheus model's latest point may lag the range's end before its figures are said to be old.
LATE_STEPS = 2
# The longest window a headline's "now" may average: a Prometheus range of 6 h has steps of 6 minutes.
CURRENT_WINDOW_S = 300
# The figures that set replicas apart: acceptance (a replica serving other traffic), load and memory.
REPLICA_FIGURES = ("acceptance_rate", "alpha_iid", "acceptance_length", "zero_accept_rate", "generation_throughput",
                   "running_requests", "kv_cache_usage")


@dataclass(frozen=True)
class PayingNow:
    """The step model's verdict for a live window.

    Attributes
    ----------
    batch : int
        The running requests of one server, rounded, at least 1: the batch the engine decodes now
        (:func:`server_batch`).
    gamma : int
        The measured draft length (draft tokens per draft), rounded.
    alpha : float
        α of the measured acceptance length at that γ (i.i.d.).
    speedup, low, high : float
        The step model's speedup at that batch and its band
        (:func:`specviz.calculator.speedup_band`); where the window's drafts were few
        (:attr:`few_drafts`), the band's low end at ``alpha_low`` and its high end at ``alpha_high``:
        the model's error and the window's sampling both.
    stops_paying_at : float
        The smallest batch from which the speedup at this α stays below 1 up to ``batch_max``
        (:func:`specviz.calculator.loses_from`; NaN: none): above it, speculation should be off.
    draft_share : float
        The share of a speculative step the model spends drafting at that batch,
        γ·t_draft / (γ·t_draft + t_verify) = γc / (γc + v) with c and v the draft and verify costs:
        what TensorRT-LLM's ``draft_overhead`` measures (draft latency / iteration latency).
    expected_tokens, verify_cost : float
        E, the tokens a speculative step emits at that α and γ, and v, the verify pass's cost over
        a plain step's, at that batch.
    context : int
        The context the step model ran at (:func:`live_context`).
    context_from : Notice
        Where ``context`` comes from, said in a sentence: ``live.context.window`` (the mean of the
        window's finished requests, with their mean ``prompt`` and ``output``) or
        ``live.context.sidebar`` (the scenario's, where the window gives none).
    servers : int
        The servers the running requests were summed over (a Prometheus fleet's), 1 for one server's
        scrape: ``batch`` is their mean.
    memory_limit : int or None
        The largest batch the scenario holds with its draft at that γ and context
        (:meth:`specviz.scenario.Scenario.max_batch`): a ``stops_paying_at`` past it is a batch no
        such server runs. None where not known.
    drafts : float or None
        The drafts the window's α was measured over; None where the engine exports no count, or it
        is below one.
    alpha_low, alpha_high : float or None
        The 80 % sampling interval of ``alpha`` over ``drafts`` (:func:`specviz.model.spec.alpha_interval`);
        None where the drafts are not known.
    """

    batch: int
    gamma: int
    alpha: float
    speedup: float
    low: float
    high: float
    stops_paying_at: float
    draft_share: float
    expected_tokens: float
    verify_cost: float
    context: int
    context_from: Notice
    servers: int = 1
    memory_limit: int | None = None
    drafts: float | None = None
    alpha_low: float | None = None
    alpha_high: float | None = None

    @property
    def few_drafts(self) -> bool:
        """Whether the window's drafts leave α's sampling interval wider than :data:`FEW_DRAFTS_WIDTH`."""
        return self.alpha_low is not None and self.alpha_high - self.alpha_low > FEW_DRAFTS_WIDTH


def engine_labels(snapshot: exposition.Snapshot, model_name: str) -> set[str]:
    """The values of vLLM's data-parallel ``engine`` label on a model's draft counters in a scrape:
    the engines a server runs, one (``engine="0"``) included, which sums nothing and so has no
    replica of its own to count (:attr:`specviz.live.states.SpecDecodeState.summed_labels`)."""
    counted = (dict(labels) for _, labels in snapshot.series.get("drafts", {}))
    return {labels["engine"] for labels in counted if "engine" in labels and labels.get("model_name", "") == model_name}


def server_count(figures: Mapping[str, Any]) -> int:
    """The servers a window's running requests sum over: its ``servers`` where that is a count
    above 1, else 1."""
    servers = figures.get("servers")
    return int(round(servers)) if servers is not None and math.isfinite(servers) and servers >= 1.5 else 1


def server_batch(figures: Mapping[str, Any]) -> float | None:
    """The running requests of one server: a window's ``running_requests`` over its ``servers``.

    A Prometheus fleet's figures sum the running requests of every server it scrapes
    (:func:`specviz.live.prometheus.query_figures` counts those servers, ``servers``); each server
    decodes its own batch, and the step model is one server's (the sidebar's), so its batch is the
    mean per server. A scrape of one server (no ``servers``, or NaN) is its own batch: vLLM's
    data-parallel engines summed there are the scenario's ``dp`` groups, one batch across them.
    None where ``running_requests`` is absent.
    """
    running = figures.get("running_requests")
    if running is None or not math.isfinite(running):
        return None
    return running / server_count(figures)


def live_context(scenario: Scenario, figures: Mapping[str, Any]) -> tuple[int, Notice]:
    """The context the verdict runs the step model at, and the sentence that says where it comes from.

    The window's ``mean_context``, c̄ = P + O/2 of the requests that finished in it
    (:attr:`specviz.live.states.SpecDecodeState.mean_context`): a steady load's running requests
    are on average that long, and a step's attention reads and KV bytes, and the memory that holds
    the batch, grow with it. Rounded, at least 1 and at most the target's ``max_position_embeddings``
    (and ``SPECVIZ_CONTEXT_MAX``, the calculator's longest): ``live.context.window`` with the ``context``
    and the mean ``prompt`` and ``output``. Where the window gives none (no request finished in it, or
    the engine does not export the counts: its ``absent`` says which), the scenario's context:
    ``live.context.sidebar``.
    """
    mean = figures.get("mean_context")
    if mean is None or not math.isfinite(mean):
        return scenario.context, Notice("live.context.sidebar", context=scenario.context)
    longest = min(settings.get("SPECVIZ_CONTEXT_MAX"), scenario.target.max_positions or math.inf)
    context = int(min(max(1, round(mean)), longest))
    return context, Notice("live.context.window", context=context, prompt=float(figures["mean_prompt_tokens"]),
                           output=float(figures["mean_output_tokens"]))


ALPHA_DECIMALS = 3  # of the α a window gives the scenario: as the α tile shows it and a link carries it


def scenario_alpha(scenario: Scenario, alpha_iid: float, gamma: int) -> float | Notice:
    """The α at which the scenario's draft makes the tokens a step that a window measured (its i.i.d.
    ``alpha_iid`` at ``gamma``): the same α for a chain, and for the target's MTP layers run past their
    training the α at their trained positions (:meth:`specviz.scenario.Scenario.expected_tokens`),
    which the i.i.d. α understates. ``live.reuse_short`` where the tokens are more than that draft
    makes even at α = 1: its ``mtp_reuse`` is below the server's.

    The α is rounded to :data:`ALPHA_DECIMALS`, as the links to the calculator carry it
    (:func:`latency_link_fields`): the verdict is the calculator's figure at that link (an SRE's pass:
    2.13× at α 0.8128 beside the linked calculator's 2.14× at 0.813)."""
    length = float(spec.expected_tokens(alpha_iid, gamma))
    try:
        return round(float(spec.alpha_from_acceptance_length(length, gamma, **scenario.reuse)), ALPHA_DECIMALS)
    except InputError:
        return Notice("live.reuse_short", length=length, gamma=gamma, reuse=scenario.mtp_reuse,
                      top=float(scenario.expected_tokens(1.0, gamma)))


def missing_for_verdict(figures: Mapping[str, Any]) -> list[str]:
    """The figures a verdict needs that a window lacks (None or not finite), of ``alpha_iid``,
    ``num_speculative_tokens`` and ``running_requests``, in that order."""
    return [name for name in ("alpha_iid", "num_speculative_tokens", "running_requests")
            if figures.get(name) is None or not math.isfinite(figures[name])]


def paying_now(scenario: Scenario, figures: Mapping[str, Any], batch_max: int) -> PayingNow | Notice:
    """What speculation gains on the sidebar's scenario at the live batch, γ and acceptance.

    .. math:: S = \\frac{E\\, t_{plain}(B)}{γ\\, t_{draft}(B) + t_{verify}(B)},\\quad
              B = \\text{running requests per server},\\ E = \\text{measured acceptance length}

    with α = E⁻¹(acceptance length, γ) of the scenario's draft (:meth:`specviz.scenario.Scenario.expected_tokens`:
    a reused MTP layer's α at its trained positions) from the window's, every time t at the context c̄ of
    :func:`live_context` (the window's finished requests' P + O/2, else the scenario's). ``figures``
    holds a window's ``alpha_iid``, ``num_speculative_tokens``, ``running_requests``,
    ``mean_context`` and ``drafts`` (few of them widen the band by α's sampling interval,
    :func:`specviz.model.spec.alpha_interval`): the fields of a :class:`specviz.live.states.SpecDecodeState` (``vars(state)``)
    or a row of :func:`specviz.live.prometheus.query_figures`, whose ``servers`` divides the fleet's
    running requests into each server's batch (:func:`server_batch`).

    A batch larger than the scenario holds with its draft at that context and γ
    (:meth:`specviz.scenario.Scenario.max_batch`) gets no speedup, as the calculator gives none
    (:func:`specviz.calculator.memory_fit`): the server runs it, so it has more memory per request
    than the sidebar says (more GPUs, an FP8 KV cache, or, at the sidebar's context, requests
    shorter than it), and a speedup at the sidebar's setup would be for a server that cannot run
    this batch.

    Returns
    -------
    PayingNow, or a Notice: ``live.no_verdict`` naming the figure the window lacks (the engine does
    not export it, or nothing ran in the window); ``live.reuse_short`` where the measured tokens a
    step are more than the scenario's reused MTP layer makes even at α = 1 (its ``mtp_reuse`` is
    below the server's); ``live.no_fit`` with the live ``batch``, the
    ``most`` the scenario holds with its draft, the setup that holds it (``gpus``, ``gpu``, ``kv``
    the KV cache's format, ``context``) and ``context_from`` (:func:`live_context`).
    """
    missing = missing_for_verdict(figures)
    if missing:
        return Notice("live.no_verdict", figures=", ".join(missing))
    batch = max(1, int(round(server_batch(figures))))
    gamma = max(1, int(round(figures["num_speculative_tokens"])))
    context, context_from = live_context(scenario, figures)
    alpha = scenario_alpha(scenario, figures["alpha_iid"], gamma)
    if isinstance(alpha, Notice):
        return alpha
    live = replace(scenario, mode="step", alpha=alpha, gamma=gamma, batch=batch, context=context)
    if batch > (most := live.max_batch()):
        return Notice("live.no_fit", batch=batch, most=most, gpus=live.tp * live.dp, gpu=live.gpu.name,
                      kv=live.precision.kv.upper(), context=context, context_from=context_from)
    drafts = _draft_count(figures.get("drafts"))  # none: the band is the model's alone
    sampled = _sampled_alphas(live, figures["alpha_iid"], drafts, gamma) if drafts else None
    # The band holds the sampling where it is wide enough to be said (a caption does): below that it moves
    # the band by a percent or two, and the calculator the verdict links to, at the same α, gives the
    # model's band alone (a browser pass: 1.86–2.77× here beside 1.89–2.72× there, unexplained).
    wide = sampled is not None and sampled[1] - sampled[0] > FEW_DRAFTS_WIDTH
    here = calculator.evaluate_scenario(live, live.alpha, gamma, batch, live.context)
    low, high = calculator.speedup_band(live, sampled if wide else live.alpha, gamma, batch, live.context)
    _, crossings = calculator.batch_sweep(live, [live.alpha], gamma, live.context, batch_max)
    drafting = gamma * float(here["draft_cost"])
    return PayingNow(batch, gamma, float(live.alpha), float(here["speedup"]), float(np.asarray(low).flat[0]),
                     float(np.asarray(high).flat[-1]), calculator.loses_from(crossings, live.alpha),
                     drafting / (drafting + float(here["verify_cost"])), float(here["expected_tokens"]),
                     float(here["verify_cost"]), context, context_from, server_count(figures), most,
                     drafts, *(sampled or (None, None)))


def _draft_count(drafts: float | None) -> float | None:
    """A window's drafts as a count a sampling interval rests on, None where there is none: an engine
    without the count (SGLang's gauges), or less than one draft (counters of 1e-320, an attack pass,
    had given a NaN band)."""
    return drafts if drafts is not None and math.isfinite(drafts) and drafts >= 1 else None


def _sampled_alphas(scenario: Scenario, alpha_iid: float, drafts: float, gamma: int) -> list[float]:
    """The scenario's α (:func:`scenario_alpha`) at both ends of the i.i.d. α's sampling interval over
    ``drafts`` (:func:`specviz.model.spec.alpha_interval`). An end past what the scenario's reused MTP
    layer makes is its α = 1, the most it makes."""
    ends = spec.alpha_interval(alpha_iid, drafts, gamma)
    mapped = [scenario_alpha(scenario, end, gamma) for end in ends]
    return [1.0 if isinstance(end, Notice) else end for end in mapped]


def stops_notice(verdict: PayingNow, batch_max: int) -> Notice:
    """Where speculation stops paying on this server, as the Live verdict says it: past what its memory
    holds where that comes first (``live.pays_to_memory``: a batch the memory does not hold is no batch
    it stops paying at), at no batch up to ``batch_max`` (``live.never_stops``), else at the batch
    :attr:`PayingNow.stops_paying_at` (``live.stops_at``)."""
    held = verdict.memory_limit
    if held is not None and not verdict.stops_paying_at <= held and held < batch_max:
        return Notice("live.pays_to_memory", batch=held)
    if pd.isna(verdict.stops_paying_at) or math.isinf(verdict.stops_paying_at):
        return Notice("live.never_stops")
    return Notice("live.stops_at", batch=int(verdict.stops_paying_at))


def latency_link_fields(served: Scenario, figures: Mapping[str, Any], conditional: Sequence[float],
                        alpha: float | None) -> dict[str, str]:
    """The fields a link from the Live page to the calculator's Latency view sets over the served
    model's scenario: the window's conditional per-position rates and their γ; α where the sidebar's
    draft has one at the server's mean (at three decimals, as the α tile shows it: at two, 2.46x
    beside the verdict's 2.48x); one server's batch and the verdict's context (the same memory
    checked); and the measured requests' mean prompt and output, where the window has them, so that
    the view prices this load and not its example workload."""
    fields = {"latency_rates": ", ".join(f"{rate:.3f}" for rate in conditional), "gamma": str(len(conditional))}
    if alpha is not None:
        fields["alpha"] = f"{alpha:.{ALPHA_DECIMALS}f}"
    if (batch := server_batch(figures)) is not None:
        fields["batch"] = str(max(1, round(batch)))
    fields["context"] = str(live_context(served, figures)[0])
    for key, figure in (("input_tokens", "mean_prompt_tokens"), ("output_tokens", "mean_output_tokens")):
        if (tokens := figures.get(figure)) is not None and math.isfinite(tokens):
            fields[key] = str(max(1, round(tokens)))
    return fields


def position_intervals(acceptance: Sequence[float | None], conditional: Sequence[float | None],
                       drafts: float | None) -> tuple[list[tuple[float, float] | None], list[tuple[float, float] | None]]:
    """The 80 % sampling interval of each per-position figure (:func:`specviz.model.spec.share_interval`),
    as the Live chart draws it: the share of ``drafts`` accepted at position i over all of them, and the
    acceptance at i given the positions before over the drafts that reached i, the ``drafts`` accepted
    at i − 1 (all of them at the first). None for a figure not known, above 1 (counters read apart),
    at a position fewer than one draft reached, and every one where ``drafts`` is not known or below 1.

    Returns
    -------
    (unconditional, conditional) : lists of (low, high) or None, aligned with the inputs.
    """
    if (drafts := _draft_count(drafts)) is None:
        return [None] * len(acceptance), [None] * len(conditional)
    reached = [1.0, *acceptance[:-1]]  # the share of drafts that reached each position, given the ones before

    def interval(share: float | None, trials: float | None) -> tuple[float, float] | None:
        if share is None or not 0.0 <= share <= 1.0 or trials is None or not trials >= 1:
            return None
        low, high = spec.share_interval(share, trials)
        return float(low), float(high)
    return ([interval(share, drafts) for share in acceptance],
            [interval(share, None if i >= len(reached) or reached[i] is None else drafts * reached[i])
             for i, share in enumerate(conditional)])


def draft_share_gap(measured: float, modelled: float, tolerance: float = 0.05) -> str:
    """How TensorRT-LLM's measured draft overhead stands against the model's draft share of a step
    (:attr:`PayingNow.draft_share`): ``agrees`` within ``tolerance`` (absolute: the gauge is one
    iteration's value, so a few points either way is noise), else ``higher`` (the draft costs more
    than the model's draft cost says, and the speedup is overstated) or ``lower``."""
    if abs(measured - modelled) <= tolerance:
        return "agrees"
    return "higher" if measured > modelled else "lower"


def speedup_at_draft_share(verdict: PayingNow, share: float) -> float:
    """The speedup of the verdict's step with the draft taking ``share`` of it (TensorRT-LLM's
    measured draft overhead) and the verify pass as the model prices it.

    .. math:: S = \\frac{E}{γc + v} = \\frac{E\\,(1 - m)}{v},\\quad m = \\frac{γc}{γc + v}

    so that at the model's own share (m = :attr:`PayingNow.draft_share`) it is the verdict's
    speedup. Where the measured share differs, this is the speedup the measured draft gives if only
    the draft's cost is off. ``share`` in [0, 1)."""
    return verdict.expected_tokens * (1.0 - share) / verdict.verify_cost


def calibrate_windows(scenario: Scenario, windows: pd.DataFrame) -> calibration.Fit | Notice:
    """The step model calibrated on a live server's windows (one model's), so that the calculator
    can speak for a deployment nobody benchmarked.

    A window of B running requests at E tokens per step and R generated tokens per second spent
    t = B·E / R on a speculative step; windows at two loads or more pin the fixed cost per step and
    the cost per token (:func:`specviz.model.calibration.calibrate` on step times), the rest held at the
    engine's priors, with the same band as the explorer's calibration. B is the running requests at
    the window's end, and prefill steps in the window count as decode time: a steady load gives the
    truest figures. A fleet's windows (a ``servers`` column, :func:`server_batch`) are fitted at each
    server's batch and tokens/s: B and R over the servers.

    Windows the calculator cannot price are left out: a figure not finite, a batch or γ outside its
    ranges (``SPECVIZ_BATCH_MAX``, ``SPECVIZ_GAMMA_MAX``).

    Returns
    -------
    Fit, or a Notice: ``live.calibrate_loads`` where the windows hold fewer than two loads,
    ``live.calibrate_too_many`` where they are more than a fit takes (a shorter span fits).
    """
    rows = windows.dropna(subset=list(CALIBRATION_FIGURES))
    if "servers" in rows:  # a fleet's sums: each server's batch and tokens/s
        servers = rows["servers"].map(lambda n: server_count({"servers": n}))
        rows = rows.assign(running_requests=rows["running_requests"] / servers,
                           generation_throughput=rows["generation_throughput"] / servers)
    # Windows the calculator cannot price are left out: a batch or γ outside its ranges, a figure
    # not finite (a scrape of 1e300 running requests had failed the fit with "unexpected ValueError").
    figures = rows[list(CALIBRATION_FIGURES)].to_numpy(dtype=float)
    rows = rows[np.isfinite(figures).all(axis=1) & rows["running_requests"].between(1, settings.get("SPECVIZ_BATCH_MAX"))
                & rows["num_speculative_tokens"].between(1, settings.get("SPECVIZ_GAMMA_MAX"))
                & (rows["generation_throughput"] > 0)]
    batch = rows["running_requests"].to_numpy(dtype=float)
    if np.unique(np.round(batch)).size < 2:
        return Notice("live.calibrate_loads", windows=len(rows))
    length = rows["acceptance_length"].to_numpy(dtype=float)
    step_s = batch * length / rows["generation_throughput"].to_numpy(dtype=float)
    if batch.size > (most := calibration.most_points(measured_acceptance=True)):
        return Notice("live.calibrate_too_many", windows=batch.size, most=most)
    return calibration.calibrate(scenario.gpu, scenario.target, scenario.draft, scenario.engine, batch=batch,
                                 gamma=np.round(rows["num_speculative_tokens"].to_numpy(dtype=float)),
                                 context=scenario.context, measured_step_s=step_s, acceptance_length=length,
                                 **scenario.parallel, precision=scenario.precision,
                                 routing_overlap=scenario.routing_overlap)


def calibrate_models(sidebar: Scenario, over_time: pd.DataFrame, time_limit_s: float
                     ) -> list[tuple[str | None, Any]]:
    """The step model calibrated on the windows of each model of ``over_time`` (its ``model`` column;
    :func:`calibrate_windows`), as the Live page offers it: (model, the sidebar's scenario at the
    fitted costs, the windows fitted, the fit's warning keys), or (model, the notice why it was not
    fitted); past ``time_limit_s`` (counted from the call, checked between models) the fits stop,
    and a last (None, ``live.calibrate_stopped``) says how many were done."""
    started = time.monotonic()
    models = over_time.groupby("model", sort=True)
    out: list[tuple[str | None, Any]] = []
    for done, (model, rows) in enumerate(models):
        if time.monotonic() - started > time_limit_s:
            return out + [(None, Notice("live.calibrate_stopped", done=done, models=models.ngroups,
                                        seconds=time_limit_s))]
        fit = calibrate_windows(sidebar, rows)
        out.append((model, fit if isinstance(fit, Notice) else (
            replace(sidebar, costs=calibration.fitted_costs(fit, sidebar.costs.link_gb_s)), len(rows), fit.warnings)))
    return out


def replica_states(current: exposition.Snapshot, previous: exposition.Snapshot | None,
                   states: Iterable[SpecDecodeState]) -> list[SpecDecodeState]:
    """The same window's figures per replica, where ``states``
    (:func:`specviz.live.states.spec_decode_states` of ``current`` over ``previous``) summed
    replicas (their ``summed_labels``): kept apart by every label any of them summed over; none where
    nothing was summed or there is no window (no ``previous``)."""
    summed = tuple(sorted({label for state in states for label in state.summed_labels}))
    return spec_decode_states(current, previous, split_by=summed) if summed and previous is not None else []


def replica_table(rows: Iterable[Mapping[str, Any]], labels: Sequence[str], shown: Sequence[str] | None = None
                  ) -> pd.DataFrame:
    """One row per model and replica, where the headline sums the replicas: vLLM's data-parallel
    engines (``engine``), or the servers behind a Prometheus (``instance``).

    ``rows`` are the fields of per-replica :class:`specviz.live.states.SpecDecodeState` (``vars(state)``
    with ``model`` and the ``labels`` added) or records of :func:`specviz.live.prometheus.query_window`
    by those labels. A replica whose acceptance stands apart from the others' is serving other
    traffic, or another configuration.

    ``shown`` names the labels as the replica column says them, where their fields are named otherwise
    (:func:`specviz.live.prometheus.label_column`'s ``engine_label`` is the ``engine`` label).

    Returns
    -------
    DataFrame
        Columns ``model``, ``replica`` (``label=value`` pairs, comma-separated) and
        :data:`REPLICA_FIGURES` (NaN where absent), sorted by model and replica.
    """
    names = list(zip(labels, shown or labels))
    table = pd.DataFrame([{"model": row["model"], "replica": ", ".join(f"{name}={row.get(field, '')}" for field, name in names),
                           **{name: row.get(name) for name in REPLICA_FIGURES}} for row in rows],
                         columns=["model", "replica", *REPLICA_FIGURES])
    table[list(REPLICA_FIGURES)] = table[list(REPLICA_FIGURES)].astype(float)
    return table.sort_values(["model", "replica"], ignore_index=True)


def stale_window(end_s: float, now_s: float) -> Notice:
    """What to say over a server's latest window when the scrapes since it failed: the page keeps
    showing that window's figures and verdict, which are then of the time the window ended, not of
    now. ``live.stale_window`` with ``end`` (its end, :func:`_clock`) and ``seconds`` since
    (whole seconds, at least 0: the scrape's time and now come from the same clock)."""
    return Notice("live.stale_window", end=utc_clock(end_s), seconds=max(0, round(now_s - end_s)))


def late_point(point_s: float, end_s: float, step_s: float) -> Notice | None:
    """Whether a Prometheus model's latest point is too old to head the page as current, and what
    to say: ``live.late_point`` with the point's time, the range's end and the ``seconds`` between,
    where they are more than :data:`LATE_STEPS` steps apart; else None.

    The range ends at now rounded down to the step (:func:`specviz.live.prometheus.query_figures`),
    and a point needs two samples of a counter inside its window (a step long), so a server that
    Prometheus scrapes steadily has a point at the end or one step before it (its latest scrape not
    yet in the window). Two steps behind, its servers have stopped reporting for a whole window or
    more (or are scraped less often than a window, which the fleet's note already asks to avoid),
    while other models' points are current.
    """
    lag = end_s - point_s
    if lag <= LATE_STEPS * step_s:
        return None
    return Notice("live.late_point", time=utc_clock(point_s), end=utc_clock(end_s), seconds=round(lag))


def servers_dropped(servers: pd.Series, times: pd.Series, stopped: Sequence[str] = ()) -> Notice | None:
    """Whether fewer servers report a Prometheus model at its latest point than earlier in the range,
    and what to say: ``live.servers_dropped`` with ``now`` (the servers at the latest point), ``most``
    (the most at any point) and ``time`` (the last point that had them, :func:`_clock`); else None.
    With ``stopped`` (which servers those are: ``query_figures``'s ``attrs["stopped"]`` of the model),
    ``live.servers_dropped_named`` names them (``gone``).

    ``servers`` counts, at each point, the instances whose running-requests gauge Prometheus holds
    (:func:`specviz.live.prometheus.query_figures`); a server that stops answering its scrapes gets
    staleness markers at the next scrape and leaves the count. The fleet's running requests and
    generated tokens are sums over the servers that report, so they fall with it, not with the
    traffic; its ratios (acceptance) count what each server reported inside the window (the stopped
    one's counts until it stopped among them). A model none of whose servers
    report any longer has no latest point of its own (:func:`late_point`)."""
    counts = pd.to_numeric(servers, errors="coerce").reset_index(drop=True)
    if counts.empty or pd.isna(latest := counts.iloc[-1]) or not latest < (most := counts.max()):
        return None
    at_most = pd.Series(times).reset_index(drop=True)[counts == most].iloc[-1]
    said = {"now": int(latest), "most": int(most), "time": utc_clock(at_most.timestamp())}
    if stopped:
        return Notice("live.servers_dropped_named", **said, gone=", ".join(name or "?" for name in stopped[:5])
                      + (", …" if len(stopped) > 5 else ""))
    return Notice("live.servers_dropped", **said)


def fleet_point(end_s: float, window_s: float, now_s: float) -> Notice | None:
    """What to say over a Prometheus model's headline, the range's last point, where it is not a
    figure of now, else None: ``live.fleet_point`` with its window (``minutes``), its end (``time``,
    :func:`_clock`) and its age in whole ``seconds``, where the window is longer than
    :data:`CURRENT_WINDOW_S`, or ``live.fleet_point_late`` where it ended more than :data:`LATE_STEPS`
    windows ago (the servers report nothing newer: a shorter range would not help; a steady server's
    latest point is the range's end, rounded down to the step, or one step before it:
    :func:`late_point`). A range's points are a step apart and each averages its step
    (:func:`specviz.live.prometheus.query_figures`): at 24 hours, 24 minutes each, the last up to a
    step before now; its verdict is then of when its window ended."""
    age = max(0.0, now_s - end_s)
    if window_s <= CURRENT_WINDOW_S and age <= LATE_STEPS * window_s:
        return None
    if window_s <= CURRENT_WINDOW_S:  # a short step, but nothing newer: no shorter range helps
        return Notice("live.fleet_point_late", time=utc_clock(end_s), seconds=round(age))
    return Notice("live.fleet_point", minutes=window_s / 60, time=utc_clock(end_s), seconds=round(age))
