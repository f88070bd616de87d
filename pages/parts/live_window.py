"""One model's latest window on the Live page (a helper of pages/live-metrics.py, not a page): its
headline figures and why any is absent, the verdict at its batch for the model the sidebar serves,
its acceptance per position, the replicas it sums, and its figures over time with their calibration;
the windows recorded of a source that fails now, and the button that saves a source's windows as a run.
The page reads the source and keeps this session's windows; these draw them."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from pages.parts.controls import set_mtp_reuse, switch_target
from pages.parts.shared import (altair_chart, calculator_page, number_columns, offer_fit, presets, scenario_link,
                                titled_dataframe, whole_page_after)
from specviz import calculator, charts, scenario, settings
from specviz.errors import Notice
from specviz.i18n import escape_markdown, in_language, md, message, t
from specviz.live import windows
from specviz.live.states import SpecDecodeState
from specviz.names import model_preset
from specviz.results.store import Store


@dataclass(frozen=True)
class LiveView:
    """What the parts draw for: the source read (its name in the store), the poll's period in
    seconds and the page's language."""

    source: str
    every: int
    lang: str


# The headline's figures, each with its label's key, its help's and its format: the reason of each one
# absent is said, and only of those. The draft's share is TensorRT-LLM's alone.
HEADLINE = {
    "acceptance_rate": ("live.m.acceptance_rate", "live.m.acceptance_rate_help", ".3f"),
    "alpha_iid": ("live.m.alpha", "live.m.alpha_help", ".3f"),
    "acceptance_length": ("live.m.length", "live.m.length_help", ".2f"),
    "zero_accept_rate": ("live.m.zero_accept", "live.m.zero_accept_help", ".1%"),
    "generation_throughput": ("live.m.throughput", "live.m.throughput_help", ",.0f"),
    "running_requests": ("live.m.running", "live.m.running_help", ".0f"),
    "draft_overhead": ("live.m.draft_overhead", "live.m.draft_overhead_help", ".1%"),  # to 0.1 %: 0.4 % is not 0
    "mean_context": ("live.m.context", "live.m.context_help", ",.0f"),
}
# The labels of the figures a verdict needs (windows.paying_now names them by field), as the page shows them.
VERDICT_NEEDS = {"alpha_iid": "live.m.alpha", "num_speculative_tokens": "col.num_speculative_tokens",
                 "running_requests": "live.m.running"}
# The replica table's figures as the headline formats them (a share of steps or of the cache in %).
REPLICA_FORMATS = {"acceptance_rate": "%.3f", "alpha_iid": "%.3f", "acceptance_length": "%.2f",
                   "zero_accept_rate": "percent", "generation_throughput": "%.0f", "running_requests": "%.0f",
                   "kv_cache_usage": "percent"}
# Session key of the last calibration on the Live page: (source, windows.calibrate_models(...)).
_CALIBRATED = "live_calibrated"


def verdict_scenario(view: LiveView, model_name: str, engine: object) -> scenario.Scenario | None:
    """The sidebar's scenario where the server serves its target, else None, with a warning and the
    way to match them: a switch to the served model's preset, or the user's word that an unknown
    name is the sidebar's model. The verdict is never computed for a model the server does not serve.
    Its controls are keyed by ``engine`` and model: one scrape may name a model under two engines'
    prefixes (an attack pass: vllm: and sglang: series of one model had raised a duplicate key)."""
    sidebar = st.session_state.get("scenario")
    if sidebar is None:
        return None
    served = model_preset(model_name, presets(settings.get("SPECVIZ_DATA_DIR")).models)
    if served == sidebar.target_id:
        return sidebar
    if served is not None:
        st.warning(md("live.other_model", view.lang, served=model_name, target=sidebar.target.name))
        # Drawn in the polling fragment, whose click reruns only the fragment: the callback sets the
        # target, then the whole page reruns so that the sidebar and every figure follow it.
        st.button(t("live.switch_target", view.lang, target=served), key=f"live_switch:{engine}/{model_name}",
                  on_click=whole_page_after, args=(switch_target, served, model_name))
        return None
    # Per source: another server of the same name (trtllm-serve names every model "undefined") is asked again.
    confirmed = st.checkbox(t("live.same_model", view.lang, target=sidebar.target.name),
                            key=f"live_same_model:{view.source}:{engine}/{model_name}", persist_state="session")
    if not confirmed:
        st.warning(md("live.unknown_model", view.lang, served=model_name or t("live.no_model_name", view.lang),
                      target=sidebar.target.name))
        return None
    return sidebar


def show_verdict(view: LiveView, verdict: windows.PayingNow | Notice, served: scenario.Scenario, figures: dict,
                 dp_engines: int, stale: bool = False) -> None:
    """The step model's verdict at the live batch (:func:`specviz.live.windows.paying_now`), or why it
    gives none: the figures the window lacks, more tokens a step than the sidebar's MTP layer makes,
    or a batch the sidebar's setup does not hold (said instead of a speedup, with the captions about
    the batch). ``stale``: the scrapes since the window failed, so it is of when the window ended, not
    of now."""
    if isinstance(verdict, Notice) and verdict.key == "live.no_verdict":  # the figures by their labels
        needs = [t(VERDICT_NEEDS[name], view.lang) for name in windows.missing_for_verdict(figures)]
        st.info(md(verdict.key, view.lang, figures=", ".join(needs)))
        return
    if isinstance(verdict, Notice):
        st.warning(message(verdict, view.lang))
        if verdict.key != "live.no_fit":  # live.reuse_short: no batch was weighed, so none to caption
            return
        batch = verdict.params["batch"]
    else:
        lead = t(f"live.lead.{calculator.band_verdict(verdict.low, verdict.high)}{'_stale' if stale else ''}", view.lang)
        stops = windows.stops_notice(verdict, settings.get("SPECVIZ_BATCH_MAX"))
        st.markdown(md("live.verdict", view.lang, lead=lead, batch=verdict.batch, gamma=verdict.gamma, alpha=verdict.alpha,
                       speedup=verdict.speedup, low=verdict.low, high=verdict.high, stops=stops,
                       gpus=served.tp * served.dp, gpu=served.gpu.name, target=served.target.name)
                    + " " + message(verdict.context_from, view.lang))
        batch = verdict.batch
    if (servers := windows.server_count(figures)) > 1:  # a fleet's sum is no server's batch
        st.caption(t("live.per_server", view.lang, running=figures["running_requests"], servers=servers, batch=batch))
    # Each engine decodes its own share of the batch: said for one labelled engine too (a vLLM of one
    # engine="0" beside a sidebar of DP 2, as the switch to DeepSeek-V3 sets it, had been silent).
    if dp_engines and dp_engines != served.dp:
        st.caption(t("live.other_dp", view.lang, engines=dp_engines, running=figures["running_requests"], dp=served.dp))
    if isinstance(verdict, Notice):
        return
    if served.mtp_reused_from is not None and abs(verdict.alpha - figures["alpha_iid"]) >= 0.005:
        # The tile's α is one rate at every position; the verdict's, the MTP layer's at its trained ones.
        st.caption(t("live.alpha_reused", view.lang, alpha=verdict.alpha, iid=figures["alpha_iid"],
                     length=figures["acceptance_length"], gamma=verdict.gamma, reuse=served.mtp_reuse,
                     trained=served.mtp_reused_from - 1))
    if verdict.few_drafts:
        st.caption(t("live.few_drafts", view.lang, drafts=int(round(verdict.drafts)), low=verdict.alpha_low,
                     high=verdict.alpha_high))
    engines = presets(settings.get("SPECVIZ_DATA_DIR")).engines
    runs_on = figures.get("engine")
    if runs_on in engines and runs_on != served.engine.id:  # the verdict is at the sidebar's engine's costs
        st.caption(t("live.other_engine", view.lang, server=in_language(engines[runs_on].name, view.lang),
                     engine=in_language(served.engine.name, view.lang)))
    if not pd.isna(figures.get("draft_overhead")):
        gap = windows.draft_share_gap(figures["draft_overhead"], verdict.draft_share)
        speedup = windows.speedup_at_draft_share(verdict, figures["draft_overhead"])
        st.markdown(md("live.draft_share", view.lang, measured=figures["draft_overhead"],
                       modelled=verdict.draft_share, batch=verdict.batch)
                    + " " + md(f"live.draft_share.{gap}", view.lang, speedup=speedup))


def since_start_line(view: LiveView, state: SpecDecodeState, key: str, **more: float) -> str | None:
    """A model's acceptance since its server started (``key``: before the first window, or beside one
    without drafts, with ``more`` of its values) and, where its counters give them, by position and
    the drafts of which nothing was accepted, as ``specviz metrics`` prints them from the same
    scrape; None where it has drafted nothing since."""
    if not state.draft_tokens or pd.isna(state.acceptance_rate):
        return None
    said = t(key, view.lang, **more, model=escape_markdown(state.model_name) or t("live.no_model_name", view.lang),
             rate=state.acceptance_rate, length=state.acceptance_length, tokens=state.draft_tokens,
             alpha=t("live.since_start_alpha", view.lang, alpha=state.alpha_iid) if not pd.isna(state.alpha_iid) else "")
    if state.per_position_acceptance and state.zero_accept_rate is not None and not pd.isna(state.zero_accept_rate):
        said += t("live.since_start_positions", view.lang, zero=state.zero_accept_rate,
                  positions=", ".join(f"{share:.3f}" for share in state.per_position_acceptance))
    return said


def show_figures(view: LiveView, figures: dict, absent: dict, notices: list[Notice], acceptance: list | None,
                 conditional: list | None, model_name: str, dp_engines: int = 0, stale: bool = False,
                 ended: float | None = None) -> None:
    """One model's latest window: the headline figures (why any is absent, each reason once with the
    figures it explains, and what else to know of them: replicas summed, a restart), the verdict at
    its batch for the model it serves (:func:`verdict_scenario`), and its per-position acceptance. ``dp_engines``: vLLM's data-parallel
    engines of the scrape (its ``engine`` label's values; 0 where none is labelled), said where the
    sidebar splits the batch over another number of attention groups."""
    trtllm = figures.get("engine") == "trt-llm"  # the only engine that times its draft
    shown = [name for name in HEADLINE if name != "draft_overhead" or trtllm]
    row = st.container(horizontal=True)  # metrics wrap on a narrow screen instead of cutting their values
    for name in shown:
        label, help_key, number_format = HEADLINE[name]
        row.metric(t(label, view.lang), "—" if pd.isna(figures.get(name)) else format(figures[name], number_format),
                   help=t(help_key, view.lang), width="content")
    # A window far longer than a poll (the scrape before it another session's, or minutes old) averages
    # that whole span: said, where its figures had read as the server's now. Its place is kept when
    # empty, so that the elements below keep theirs from one poll to the next.
    long_window = st.empty()
    if (span := figures.get("seconds")) is not None and span > 3 * view.every:
        # In seconds under two minutes: a slow server's 8 s had read "0.1 minutes" (an SRE's pass).
        length = (t("live.span_seconds", view.lang, seconds=span) if span < 120
                  else t("live.span_minutes", view.lang, seconds=span, minutes=span / 60))
        long_window.caption(t("live.long_window", view.lang, span=length, every=view.every))
    elif ended is not None and (span := figures.get("seconds", figures.get("window_s"))) is not None and not pd.isna(span):
        # What every figure is over, said each time (it had been said only of a window over 3 polls
        # long): the span between the two scrapes, or the Prometheus step, and when it ended.
        key = "live.window_span" if figures.get("seconds") is not None else "live.window_span_step"  # a scrape's, or Prometheus's
        long_window.caption(t(key, view.lang, seconds=span, end=time.strftime("%H:%M:%S", time.gmtime(ended))))
    # A reason said once with the figures it explains: no drafts leaves the rate, α and the length out,
    # which read as the same sentence three times, none saying which figure it was about. The verdict's
    # needs not shown (γ) are among them: "no verdict … (why is said above)" had said nothing of γ.
    labels = {name: HEADLINE[name][0] for name in shown} | {
        name: label for name, label in VERDICT_NEEDS.items() if name not in shown}
    reasons: dict[str, list[str]] = {}
    for name, label in labels.items():
        if name in absent:
            reasons.setdefault(message(absent[name], view.lang), []).append(t(label, view.lang))
    for reason, names in reasons.items():
        st.caption(t("live.absent", view.lang, figures=", ".join(names), reason=reason))
    for notice in notices:
        st.caption(message(notice, view.lang))
    served = verdict_scenario(view, model_name, figures.get("engine"))
    measured = served.reuse_from_rates(conditional) if served is not None else None
    if measured is not None and measured != served.mtp_reuse:
        # The server's own MTP layer, as its positions show it: offered for the sidebar, where every
        # page and link takes it, as the served model is (a verdict at a factor of its own would
        # disagree with the calculator it links to).
        line = st.container(horizontal=True, vertical_alignment="center")
        line.caption(t("live.reuse_measured", view.lang, reuse=measured, sidebar=served.mtp_reuse,
                       trained=served.mtp_reused_from - 1, target=served.target.name))
        line.button(t("live.use_reuse", view.lang, reuse=measured), key=f"live_reuse:{figures.get('engine')}/{model_name}",
                    on_click=whole_page_after, args=(set_mtp_reuse, measured))
    verdict = windows.paying_now(served, figures, settings.get("SPECVIZ_BATCH_MAX")) if served else None
    if verdict is not None:
        show_verdict(view, verdict, served, figures, dp_engines, stale)
    if acceptance:
        # None, or none known (a Prometheus row's): the chart draws the unconditional shares alone.
        given = conditional if conditional and any(c is not None for c in conditional) else []
        altair_chart(charts.per_position(acceptance, given, view.lang, windows.position_intervals(
            acceptance, given, figures.get("drafts"))))
        if not given and "per_position_conditional" in absent:
            st.caption(message(absent["per_position_conditional"], view.lang))
    # The α of the sidebar's draft at the server's mean: none where the draft makes fewer tokens a step
    # than the server does (an MTP layer at a low reuse factor), which the verdict above says.
    alpha = (windows.scenario_alpha(served, figures["alpha_iid"], len(conditional))
             if conditional and served is not None and not pd.isna(figures.get("alpha_iid")) else None)
    if conditional and None not in conditional and served is not None and not isinstance(alpha, Notice):
        # The tail these rates give, in the calculator's Latency view at this load: only for the model
        # the server serves (the calculator would price the sidebar's other model, 1.85x for Qwen3-32B
        # beside a Llama 3.1 70B server, the verdict the page refuses above), and only where the sidebar's
        # draft makes the server's tokens a step (its headline had priced the default α 0.80 at 1.07x
        # beside the view's 1.85x: a browser pass).
        shown = scenario_link(served, view="latency", **windows.latency_link_fields(served, figures, conditional, alpha))
        # The calculator gives no speedup at a batch the sidebar's setup does not hold: the link says so first.
        no_fit = isinstance(verdict, Notice) and verdict.key == "live.no_fit"
        # Without the requests' histograms the Latency view prices its own example workload: said.
        workload = "" if "input_tokens" in shown else " " + t("live.to_latency_example_workload", view.lang)
        st.page_link(calculator_page(view.lang), label=t("live.to_latency", view.lang), icon=":material/timer:",
                     query_params=shown, help=(t("live.to_latency_no_fit_help", view.lang, **verdict.params) if no_fit
                                               else t("live.to_latency_help", view.lang)) + workload)


def show_replicas(view: LiveView, table: pd.DataFrame, section: str) -> None:
    """The replicas that a headline sums, one row each (:func:`specviz.live.windows.replica_table`),
    under the ``section`` of their engine and model ("vllm-v1/m"); nothing where none reported at the
    latest point (a stopped model's section had been empty)."""
    if table.empty:
        return
    # Under its model's section: the model's name again in each row had pushed α out of a 1,280 px
    # page (an SRE's pass).
    table = table.drop(columns="model")
    # Opened, it stays open while the page polls: its state is the session's, by its key, where an
    # expander without one is known by its place, which a caption coming or going above it moves (a
    # browser pass: it closed within seconds, each time "Mean context not shown" came or went).
    with st.expander(t("live.replicas", view.lang, replicas=len(table)), key=f"live_replicas:{section}",
                     on_change="rerun"):
        st.caption(t("live.replicas_note", view.lang))
        titled_dataframe(table, view.lang, column_config=number_columns(table, REPLICA_FORMATS, view.lang))


def show_over_time(view: LiveView, over_time: pd.DataFrame, servers_summed: bool = False) -> None:
    """Each figure over time (``servers_summed``: a fleet's, summed over its servers), and the step
    model calibrated on the windows of each model (on a click)."""
    for group in charts.LIVE_CHARTS:
        # A figure the engine does not export is said above, not drawn empty.
        if present := [figure for figure in group if over_time[figure].notna().any()]:
            altair_chart(charts.live_over_time(over_time, present[0], view.lang, also=tuple(present[1:]),
                                               servers_summed=servers_summed))
    sidebar = st.session_state.get("scenario")
    if sidebar is None:
        return
    if st.button(t("live.calibrate", view.lang), key="live_calibrate", help=t("live.calibrate_help", view.lang)):
        st.session_state[_CALIBRATED] = (view.source, windows.calibrate_models(
            sidebar, over_time, settings.get("SPECVIZ_PAGE_TIME_LIMIT_S")))
    # Said until the next click: the poll that follows it would otherwise wipe the fits within seconds.
    kept = st.session_state.get(_CALIBRATED)
    if kept is None or kept[0] != view.source:
        return
    for model, result in kept[1]:
        if model is None:  # the time limit stopped the fits
            st.warning(message(result, view.lang))
        elif isinstance(result, Notice):
            st.info(f"{escape_markdown(model) or t('live.no_model_name', view.lang)}: {message(result, view.lang)}")
        else:
            fitted, windows_fitted, warnings = result
            found = md("live.calibrated", view.lang, model=model or t("live.no_model_name", view.lang),
                       windows=windows_fitted, **vars(fitted.costs))
            offer_fit(view.lang, f"live_use_fit:{model}", found, [t(key, view.lang) for key in warnings], fitted,
                      presets(settings.get("SPECVIZ_DATA_DIR")))


def show_history(view: LiveView, store: Store, polls: int) -> None:
    """The source's windows recorded in ``store`` where this session has none (its scrapes fail):
    those of the ``polls`` polls' span before the last one recorded, charted and said not to be
    current, with the button that saves them as a run. Nothing without windows."""
    source, every, lang = view.source, view.every, view.lang
    recorded = store.live_sources()
    last_scrape = recorded.loc[recorded.source == source, "last"]
    if last_scrape.empty:
        return
    ended = pd.Timestamp(last_scrape.iloc[0]).timestamp()
    history = store.windows(source, since=ended - polls * every)
    if history.empty:
        return
    st.warning(message(windows.stale_window(pd.Timestamp(history["time_end"].max()).timestamp(), time.time()), lang))
    show_over_time(view, history)
    offer_save(view, store)


def offer_save(view: LiveView, store: Store) -> None:
    """The button that saves every window recorded of the source in ``store`` as a run, and what the
    last save did."""
    source, lang = view.source, view.lang
    if st.button(t("live.save", lang), key="live_save", help=t("live.save_help", lang)):
        # Every window recorded for the source, as the button's help says, not only those charted:
        # read whole on the click alone.
        recorded = store.windows(source)
        result = store.save_live_run(source, recorded["time_start"].min(), recorded["time_end"].max())
        st.session_state["live_saved"] = (source, result.status, result.runs)
    # Said until the next save: the poll that follows the click would otherwise wipe it within seconds.
    saved = st.session_state.get("live_saved")
    if saved and saved[0] == source:
        (st.info if saved[1] == "skipped" else st.success)(t(f"live.saved.{saved[1]}", lang, runs=saved[2]))
