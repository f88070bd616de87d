"""Live: a running server's speculative decoding, window by window, and whether it pays at its batch now."""

from __future__ import annotations

import time
from typing import Any

import pandas as pd
import streamlit as st

from pages.parts.controls import refuse_url_value, set_mtp_reuse, show_url_notices, switch_target, url_choice, url_widget
from pages.parts.shared import (altair_chart, calculator_page, fragment, number_columns, offer_fit, open_store, presets,
                           require_router, scenario_link, titled_dataframe, whole_page_after)
from specviz import calculator, charts, errors, scenario, settings
from specviz.errors import Notice, SpecvizError
from specviz.i18n import escape_markdown, in_language, md, message, t
from specviz.names import model_preset
from specviz.live import access, exposition, prometheus, prometheus_api, replay, scrape, windows
from specviz.live.states import SpecDecodeState, spec_decode_states

require_router("live")
lang: str = st.session_state.get("lang", "en")
SOURCES = ("replay", "url", "prometheus")
# The metrics URL field's first value: vLLM's own address on this machine.
EXAMPLE_METRICS_URL = "http://localhost:8000/metrics"
# The Prometheus view's ranges, each drawn in RANGE_POINTS points.
RANGES = ("15m", "1h", "6h", "24h")
RANGE_POINTS = 60
# Windows kept for the charts without recording: an hour at the default poll of 5 s (24 minutes at
# the fastest, 2 s).
KEPT = 720
# Labels the Prometheus view keeps apart by first (the scraped server, vLLM's data-parallel engine), before
# the others its series carry (apart_labels).
REPLICA_LABELS = ("instance", "engine")
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


@st.cache_resource
def demo_server() -> replay.ReplayServer:
    """The demo source: one replay exporter per app process, on a free loopback port."""
    return replay.start()


@st.cache_data(ttl=60, show_spinner=False)
def apart_labels(url: str, span: str) -> tuple[tuple[str, ...], Notice | str | None]:
    """What the fleet's figures can be kept apart by: the servers and vLLM's engines, then the other
    labels its series carry over the range (a workload's, where Prometheus labels its servers so),
    looked up at most once a minute; where the lookup fails, the first two and why it failed (said
    under figures that came: where none do, their own query says why)."""
    now = time.time()
    try:
        found, failure = prometheus.label_names(url, now - prometheus_api.parse_duration(span), now), None
    except SpecvizError as exc:
        found, failure = [], errors.kept(exc)
    return (*REPLICA_LABELS, *(label for label in found if label not in REPLICA_LABELS)), failure


def source_url(where: Any, setting: str, key: str, label: str, example: str, help_key: str) -> str:
    """The URL to read: one of the sources an administrator named (``setting``), or, but for a viewer,
    one typed. A viewer reads named sources only: no visitor makes the server fetch an address of
    their choosing (each is checked against SPECVIZ_METRICS_ALLOW as it is fetched, all the same)."""
    named = access.named_sources(setting)
    viewer = settings.get("SPECVIZ_VIEWER")
    if viewer and not named:
        where.info(t("live.no_named_sources", lang, setting=setting))
        st.stop()
    if named:
        choices = [*named, *([] if viewer else [""])]  # "": a URL of the reader's own
        # A link's own address, without a named source's name, chooses it: the source named so, else
        # (but for a viewer, who is told the link's address is not read) a URL of the reader's own (an
        # SRE's pass: the first named source had been read instead, the address still the link's).
        linked = st.query_params.get(key) if f"{key}_name" not in st.query_params else None
        default = None if linked is None else next((n for n, u in named.items() if u == linked), None if viewer else "")
        if linked is not None and default is None:
            refuse_url_value(key, linked)
        name = url_choice(where.selectbox, t("live.named_source", lang), choices, f"{key}_name",
                          format_func=lambda n: n or t("live.own_url", lang), default=default)
        if name:
            st.query_params.pop(key, None)  # the address is the name's: a typed one would choose again
            return named[name]
    return url_widget(where.text_input, t(label, lang), key=key, value=example, help=t(help_key, lang))


st.title(t("live.title", lang))
st.caption(t("live.intro", lang))
# Every control of the page is kept for the session (persist_state): a visit to another page would
# otherwise reset the source, its URL and polling, and ask again which model the server serves. The
# source, its address, the range and the poll's period are kept in the URL too, so that a Live view
# is a link (an SRE's pass: a reload went back to the demo); polling is not: a link reads once.
kind = url_choice(st.radio, t("live.source", lang), SOURCES, "live_source", horizontal=True,
                  format_func=lambda k: t(f"live.source.{k}", lang))
if kind == "replay":
    # Recorded under its start time, not its port (a free one on each start of the app): a restarted
    # app's replay starts again from the recording's totals, and a window across the two would count
    # them all as new traffic.
    demo = demo_server()
    url, source = demo.url, time.strftime("specviz-replay (demo, %Y-%m-%d %H:%M:%S UTC)", time.gmtime(demo.started))
    st.info(t("live.replay_note", lang))
elif kind == "url":
    url = source = source_url(st, "SPECVIZ_METRICS_SOURCES", "live_url", "live.url", EXAMPLE_METRICS_URL,
                              "live.url_help")
else:
    col_base, col_range = st.columns([3, 1])
    url = source = source_url(col_base, "SPECVIZ_PROMETHEUS_SOURCES", "live_prometheus", "live.prometheus_url",
                              "http://localhost:9090", "live.prometheus_help")
    span = url_widget(col_range.select_slider, t("live.range", lang), RANGES, value="1h", key="live_range")
    apart_by, unlisted = apart_labels(url, span)
    by = st.selectbox(t("live.apart_by", lang), (None, *apart_by), key="live_apart_by", persist_state="session",
                      format_func=lambda label: t("live.apart_none", lang) if label is None else label,
                      help=t("live.apart_by_help", lang))
col_on, col_every = st.columns(2)
polling = col_on.toggle(t("live.poll", lang), key="live_on", persist_state="session")
every = url_widget(col_every.number_input, t("live.every", lang), 2, 60, value=5, key="live_every")
show_url_notices(st, lang)  # a link's value the page's controls do not take
store = open_store(lang)
# The store records every scrape, so the command line's recorder and this page share the history; a
# viewer or a read-only store keeps this session's windows only.
recording = not (settings.get("SPECVIZ_VIEWER") or store.read_only)
if not recording:
    st.info(t("live.not_recording", lang))
# This session's latest scrape and window per source, and (without recording) its windows.
last: dict[str, exposition.Snapshot] = st.session_state.setdefault("live_last", {})
latest: dict[str, list[SpecDecodeState]] = st.session_state.setdefault("live_latest", {})
# When each source's latest window ended (its scrape's time): said over its figures once scrapes fail.
latest_end: dict[str, float] = st.session_state.setdefault("live_latest_end", {})
kept: dict[str, list[dict]] = st.session_state.setdefault("live_windows", {})
# This session's latest window per source with the summed replicas kept apart (empty: nothing summed).
apart: dict[str, list[SpecDecodeState]] = st.session_state.setdefault("live_apart", {})
# Each source's totals since its server started, from the latest scrape: said where no window has a draft.
since_start: dict[str, list[SpecDecodeState]] = st.session_state.setdefault("live_since_start", {})


def scrape_once() -> bool:
    """One scrape of the source, recorded, and its window against the one before; a failure is
    shown, changes nothing and gives False."""
    previous = last.get(source)
    try:
        # A URL only: the command line also reads files, but a visitor's text never names a path here.
        snapshot = exposition.parse(scrape.fetch_url(url), time=time.time())
        if recording:
            recorded = store.record_scrape(source, snapshot)
            states = recorded.states if recorded.window else None
        else:
            states = spec_decode_states(snapshot, previous) if previous else None
        replicas = windows.replica_states(snapshot, previous, states or [])
    except SpecvizError as exc:
        if exc.key == "scrape.refused" and url == EXAMPLE_METRICS_URL:  # the field's example, not typed
            st.info(t("live.example_refused", lang, url=EXAMPLE_METRICS_URL))
        else:
            st.error(message(exc, lang))
        return False
    last[source] = snapshot
    since_start[source] = spec_decode_states(snapshot)
    if states is not None:
        latest[source] = states
        latest_end[source] = snapshot.time
        apart[source] = replicas
    if states is not None and not recording:
        rows = kept.setdefault(source, [])
        rows += [{"time_end": pd.Timestamp(snapshot.time, unit="s"), "model": state.model_name,
                  **{figure: getattr(state, figure) for figure in (*charts.LIVE_FIGURES, *windows.CALIBRATION_FIGURES)}}
                 for state in states]
        del rows[:-KEPT]
    return True


def source_windows() -> pd.DataFrame:
    """The source's windows charted: from the store when recording (those of the latest ``KEPT``
    polls' span), else this session's. The store keeps every window: read whole at each poll, a
    week of 5 s windows (121,000 a model) took 12.7 s and 100 MB of chart data a poll, and the
    poll of 5 s came every 11 to 20 s."""
    if recording:
        return store.windows(source, since=time.time() - KEPT * every)
    return pd.DataFrame(kept.get(source, []),
                        columns=["time_end", "model", *dict.fromkeys((*charts.LIVE_FIGURES, *windows.CALIBRATION_FIGURES))])


def verdict_scenario(model_name: str) -> scenario.Scenario | None:
    """The sidebar's scenario where the server serves its target, else None, with a warning and the
    way to match them: a switch to the served model's preset, or the user's word that an unknown
    name is the sidebar's model. The verdict is never computed for a model the server does not serve."""
    sidebar = st.session_state.get("scenario")
    if sidebar is None:
        return None
    served = model_preset(model_name, presets(settings.get("SPECVIZ_DATA_DIR")).models)
    if served == sidebar.target_id:
        return sidebar
    if served is not None:
        st.warning(md("live.other_model", lang, served=model_name, target=sidebar.target.name))
        # Drawn in the polling fragment, whose click reruns only the fragment: the callback sets the
        # target, then the whole page reruns so that the sidebar and every figure follow it.
        st.button(t("live.switch_target", lang, target=served), key=f"live_switch:{model_name}",
                  on_click=whole_page_after, args=(switch_target, served, model_name))
        return None
    # Per source: another server of the same name (trtllm-serve names every model "undefined") is asked again.
    confirmed = st.checkbox(t("live.same_model", lang, target=sidebar.target.name),
                            key=f"live_same_model:{source}:{model_name}", persist_state="session")
    if not confirmed:
        st.warning(md("live.unknown_model", lang, served=model_name or t("live.no_model_name", lang),
                      target=sidebar.target.name))
        return None
    return sidebar


def show_verdict(verdict: windows.PayingNow | Notice, served: scenario.Scenario, figures: dict, dp_engines: int,
                 stale: bool = False) -> None:
    """The step model's verdict at the live batch (:func:`specviz.live.windows.paying_now`), or why it
    gives none: the figures the window lacks, more tokens a step than the sidebar's MTP layer makes,
    or a batch the sidebar's setup does not hold (said instead of a speedup, with the captions about
    the batch). ``stale``: the scrapes since the window failed, so it is of when the window ended, not
    of now."""
    if isinstance(verdict, Notice) and verdict.key == "live.no_verdict":  # the figures by their labels
        needs = [t(VERDICT_NEEDS[name], lang) for name in windows.missing_for_verdict(figures)]
        st.info(md(verdict.key, lang, figures=", ".join(needs)))
        return
    if isinstance(verdict, Notice):
        st.warning(message(verdict, lang))
        if verdict.key != "live.no_fit":  # live.reuse_short: no batch was weighed, so none to caption
            return
        batch = verdict.params["batch"]
    else:
        lead = t(f"live.lead.{calculator.band_verdict(verdict.low, verdict.high)}{'_stale' if stale else ''}", lang)
        stops = windows.stops_notice(verdict, settings.get("SPECVIZ_BATCH_MAX"))
        st.markdown(md("live.verdict", lang, lead=lead, batch=verdict.batch, gamma=verdict.gamma, alpha=verdict.alpha,
                       speedup=verdict.speedup, low=verdict.low, high=verdict.high, stops=stops,
                       gpus=served.tp * served.dp, gpu=served.gpu.name, target=served.target.name)
                    + " " + message(verdict.context_from, lang))
        batch = verdict.batch
    if (servers := windows.server_count(figures)) > 1:  # a fleet's sum is no server's batch
        st.caption(t("live.per_server", lang, running=figures["running_requests"], servers=servers, batch=batch))
    # Each engine decodes its own share of the batch: said for one labelled engine too (a vLLM of one
    # engine="0" beside a sidebar of DP 2, as the switch to DeepSeek-V3 sets it, had been silent).
    if dp_engines and dp_engines != served.dp:
        st.caption(t("live.other_dp", lang, engines=dp_engines, running=figures["running_requests"], dp=served.dp))
    if isinstance(verdict, Notice):
        return
    if served.mtp_reused_from is not None and abs(verdict.alpha - figures["alpha_iid"]) >= 0.005:
        # The tile's α is one rate at every position; the verdict's, the MTP layer's at its trained ones.
        st.caption(t("live.alpha_reused", lang, alpha=verdict.alpha, iid=figures["alpha_iid"],
                     length=figures["acceptance_length"], gamma=verdict.gamma, reuse=served.mtp_reuse,
                     trained=served.mtp_reused_from - 1))
    if verdict.few_drafts:
        st.caption(t("live.few_drafts", lang, drafts=int(round(verdict.drafts)), low=verdict.alpha_low,
                     high=verdict.alpha_high))
    engines = presets(settings.get("SPECVIZ_DATA_DIR")).engines
    runs_on = figures.get("engine")
    if runs_on in engines and runs_on != served.engine.id:  # the verdict is at the sidebar's engine's costs
        st.caption(t("live.other_engine", lang, server=in_language(engines[runs_on].name, lang),
                     engine=in_language(served.engine.name, lang)))
    if not pd.isna(figures.get("draft_overhead")):
        gap = windows.draft_share_gap(figures["draft_overhead"], verdict.draft_share)
        st.markdown(md("live.draft_share", lang, measured=figures["draft_overhead"],
                       modelled=verdict.draft_share, batch=verdict.batch) + " " + md(
            f"live.draft_share.{gap}", lang, speedup=windows.speedup_at_draft_share(verdict, figures["draft_overhead"])))


def since_start_line(state: SpecDecodeState, key: str, **more: float) -> str | None:
    """A model's acceptance since its server started (``key``: before the first window, or beside one
    without drafts, with ``more`` of its values), or None where it has drafted nothing since."""
    if not state.draft_tokens or pd.isna(state.acceptance_rate):
        return None
    return t(key, lang, **more, model=escape_markdown(state.model_name) or t("live.no_model_name", lang),
             rate=state.acceptance_rate, length=state.acceptance_length, tokens=state.draft_tokens,
             alpha=t("live.since_start_alpha", lang, alpha=state.alpha_iid) if not pd.isna(state.alpha_iid) else "")


def show_figures(figures: dict, absent: dict, notices: list[Notice], acceptance: list | None,
                 conditional: list | None, model_name: str, dp_engines: int = 0, stale: bool = False,
                 ended: float | None = None) -> None:
    """One model's latest window: the headline figures (why any is absent, each reason once with the
    figures it explains, and what else to know of them: replicas summed, a restart), the verdict at its batch for the model it serves
    (:func:`verdict_scenario`), and its per-position acceptance. ``dp_engines``: vLLM's data-parallel
    engines of the scrape (its ``engine`` label's values; 0 where none is labelled), said where the
    sidebar splits the batch over another number of attention groups."""
    trtllm = figures.get("engine") == "trt-llm"  # the only engine that times its draft
    shown = [name for name in HEADLINE if name != "draft_overhead" or trtllm]
    row = st.container(horizontal=True)  # metrics wrap on a narrow screen instead of cutting their values
    for name in shown:
        label, help_key, number_format = HEADLINE[name]
        row.metric(t(label, lang), "—" if pd.isna(figures.get(name)) else format(figures[name], number_format),
                   help=t(help_key, lang), width="content")
    # A window far longer than a poll (the scrape before it another session's, or minutes old) averages
    # that whole span: said, where its figures had read as the server's now. Its place is kept when
    # empty, so that the elements below keep theirs from one poll to the next.
    long_window = st.empty()
    if (span := figures.get("seconds")) is not None and span > 3 * every:
        # In seconds under two minutes: a slow server's 8 s had read "0.1 minutes" (an SRE's pass).
        length = (t("live.span_seconds", lang, seconds=span) if span < 120
                  else t("live.span_minutes", lang, seconds=span, minutes=span / 60))
        long_window.caption(t("live.long_window", lang, span=length, every=every))
    elif ended is not None and (span := figures.get("seconds", figures.get("window_s"))) is not None and not pd.isna(span):
        # What every figure is over, said each time (it had been said only of a window over 3 polls
        # long): the span between the two scrapes, or the Prometheus step, and when it ended.
        key = "live.window_span" if figures.get("seconds") is not None else "live.window_span_step"  # a scrape's, or Prometheus's
        long_window.caption(t(key, lang, seconds=span, end=time.strftime("%H:%M:%S", time.gmtime(ended))))
    # A reason said once with the figures it explains: no drafts leaves the rate, α and the length out,
    # which read as the same sentence three times, none saying which figure it was about. The verdict's
    # needs not shown (γ) are among them: "no verdict … (why is said above)" had said nothing of γ.
    labels = {name: HEADLINE[name][0] for name in shown} | {
        name: label for name, label in VERDICT_NEEDS.items() if name not in shown}
    reasons: dict[str, list[str]] = {}
    for name, label in labels.items():
        if name in absent:
            reasons.setdefault(message(absent[name], lang), []).append(t(label, lang))
    for reason, names in reasons.items():
        st.caption(t("live.absent", lang, figures=", ".join(names), reason=reason))
    for notice in notices:
        st.caption(message(notice, lang))
    served = verdict_scenario(model_name)
    measured = served.reuse_from_rates(conditional) if served is not None else None
    if measured is not None and measured != served.mtp_reuse:
        # The server's own MTP layer, as its positions show it: offered for the sidebar, where every
        # page and link takes it, as the served model is (a verdict at a factor of its own would
        # disagree with the calculator it links to).
        line = st.container(horizontal=True, vertical_alignment="center")
        line.caption(t("live.reuse_measured", lang, reuse=measured, sidebar=served.mtp_reuse,
                       trained=served.mtp_reused_from - 1, target=served.target.name))
        line.button(t("live.use_reuse", lang, reuse=measured), key=f"live_reuse:{model_name}",
                    on_click=whole_page_after, args=(set_mtp_reuse, measured))
    verdict = windows.paying_now(served, figures, settings.get("SPECVIZ_BATCH_MAX")) if served else None
    if verdict is not None:
        show_verdict(verdict, served, figures, dp_engines, stale)
    if acceptance:
        # None, or none known (a Prometheus row's): the chart draws the unconditional shares alone.
        given = conditional if conditional and any(c is not None for c in conditional) else []
        altair_chart(charts.per_position(acceptance, given, lang, windows.position_intervals(
            acceptance, given, figures.get("drafts"))))
        if not given and "per_position_conditional" in absent:
            st.caption(message(absent["per_position_conditional"], lang))
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
        workload = "" if "input_tokens" in shown else " " + t("live.to_latency_example_workload", lang)
        st.page_link(calculator_page(lang), label=t("live.to_latency", lang), icon=":material/timer:",
                     query_params=shown, help=(t("live.to_latency_no_fit_help", lang, **verdict.params) if no_fit
                                               else t("live.to_latency_help", lang)) + workload)


# The replica table's figures as the headline formats them (a share of steps or of the cache in %).
REPLICA_FORMATS = {"acceptance_rate": "%.3f", "alpha_iid": "%.3f", "acceptance_length": "%.2f",
                   "zero_accept_rate": "percent", "generation_throughput": "%.0f", "running_requests": "%.0f",
                   "kv_cache_usage": "percent"}


def show_replicas(table: pd.DataFrame) -> None:
    """The replicas that a headline sums, one row each (:func:`specviz.live.windows.replica_table`);
    nothing where none reported at the latest point (a stopped model's section had been empty)."""
    if table.empty:
        return
    # Under its model's section: the model's name again in each row had pushed α out of a 1,280 px
    # page (an SRE's pass).
    table = table.drop(columns="model")
    with st.expander(t("live.replicas", lang, replicas=len(table))):
        st.caption(t("live.replicas_note", lang))
        titled_dataframe(table, lang, column_config=number_columns(table, REPLICA_FORMATS, lang))


def show_over_time(over_time: pd.DataFrame, servers_summed: bool = False) -> None:
    """Each figure over time (``servers_summed``: a fleet's, summed over its servers), and the step
    model calibrated on the windows of each model (on a click)."""
    for group in charts.LIVE_CHARTS:
        # A figure the engine does not export is said above, not drawn empty.
        if present := [figure for figure in group if over_time[figure].notna().any()]:
            altair_chart(charts.live_over_time(over_time, present[0], lang, also=tuple(present[1:]),
                                               servers_summed=servers_summed))
    sidebar = st.session_state.get("scenario")
    if sidebar is None:
        return
    if st.button(t("live.calibrate", lang), key="live_calibrate", help=t("live.calibrate_help", lang)):
        st.session_state[_CALIBRATED] = (source, windows.calibrate_models(
            sidebar, over_time, settings.get("SPECVIZ_PAGE_TIME_LIMIT_S")))
    # Said until the next click: the poll that follows it would otherwise wipe the fits within seconds.
    kept = st.session_state.get(_CALIBRATED)
    if kept is None or kept[0] != source:
        return
    for model, result in kept[1]:
        if model is None:  # the time limit stopped the fits
            st.warning(message(result, lang))
        elif isinstance(result, Notice):
            st.info(f"{escape_markdown(model) or t('live.no_model_name', lang)}: {message(result, lang)}")
        else:
            fitted, windows_fitted, warnings = result
            found = md("live.calibrated", lang, model=model or t("live.no_model_name", lang), windows=windows_fitted,
                       **vars(fitted.costs))
            offer_fit(lang, f"live_use_fit:{model}", found, [t(key, lang) for key in warnings], fitted,
                      presets(settings.get("SPECVIZ_DATA_DIR")))


# Session key of the last calibration on the Live page: (source, windows.calibrate_models(...)).
_CALIBRATED = "live_calibrated"


@fragment(run_every=every if polling else None)
def panel() -> None:
    """Scrape (when polling), then draw the latest window and the figures over time."""
    failed = False
    if source not in last:  # a source's first scrape may take up to the deadline: said while it runs
        with st.spinner(md("live.reading", lang, source=source)):
            failed = not scrape_once()
    elif polling:
        failed = not scrape_once()
    if failed and source not in latest:
        # The error says what is wrong: waiting for a scrape that failed would mislead. What was
        # recorded of the source before stands below it, said not to be current (an SRE's pass: a
        # visit while the server was down showed none of its 15 minutes of windows).
        show_history()
        return
    if source not in latest:
        st.info(t("live.waiting_polling", lang, seconds=every) if polling
                else t("live.waiting", lang, poll=t("live.poll", lang)))
        for state in since_start.get(source, []):
            if (said := since_start_line(state, "live.since_start_first")) is not None:
                st.caption(said)
        return
    if failed:  # the error above is of now; the figures below are of the latest window there is
        st.warning(message(windows.stale_window(latest_end[source], time.time()), lang))
    for state in latest[source]:
        st.subheader(escape_markdown(state.model_name) or t("live.no_model_name", lang))
        own = [r for r in apart.get(source, []) if (r.engine, r.model_name) == (state.engine, state.model_name)]
        show_figures(vars(state), state.absent, state.notices, state.per_position_acceptance,
                     state.per_position_conditional, state.model_name,
                     dp_engines=len(windows.engine_labels(last[source], state.model_name)), stale=failed,
                     ended=latest_end[source])
        if not state.draft_tokens:  # an idle window: the server's totals still say what it accepts
            started = [s for s in since_start.get(source, []) if (s.engine, s.model_name) == (state.engine, state.model_name)]
            # Idle only where nothing runs: with requests running (the tile says how many), they were in
            # prefill or not speculating, which "the server was idle" had contradicted (a browser pass).
            running = state.running_requests if state.running_requests and state.running_requests > 0 else 0
            key = "live.since_start_no_drafts" if running else "live.since_start_idle"
            if started and (said := since_start_line(started[0], key, running=running)) is not None:
                st.caption(said)
        # The labels last: vLLM's data-parallel engine label is named like the state's engine field.
        replicas = [{**vars(r), "model": r.model_name, **r.labels} for r in own]
        if replicas:
            show_replicas(windows.replica_table(replicas, state.summed_labels))
    over_time = source_windows()
    show_over_time(over_time)
    offer_save()


def show_history() -> None:
    """The source's recorded windows where this session has none (its scrapes fail): those of the
    ``KEPT`` polls' span before the last one recorded, charted and said not to be current, with the
    button that saves them as a run. Nothing without a store that records, or without windows."""
    if not recording:
        return
    recorded = store.live_sources()
    last_scrape = recorded.loc[recorded.source == source, "last"]
    if last_scrape.empty:
        return
    ended = pd.Timestamp(last_scrape.iloc[0]).timestamp()
    history = store.windows(source, since=ended - KEPT * every)
    if history.empty:
        return
    st.warning(message(windows.stale_window(pd.Timestamp(history["time_end"].max()).timestamp(), time.time()), lang))
    show_over_time(history)
    offer_save()


def offer_save() -> None:
    """The button that saves every window recorded of the source as a run, and what the last save did."""
    if recording and st.button(t("live.save", lang), key="live_save", help=t("live.save_help", lang)):
        # Every window recorded for the source, as the button's help says, not only those charted:
        # read whole on the click alone.
        recorded = store.windows(source)
        result = store.save_live_run(source, recorded["time_start"].min(), recorded["time_end"].max())
        st.session_state["live_saved"] = (source, result.status, result.runs)
    # Said until the next save: the poll that follows the click would otherwise wipe it within seconds.
    saved = st.session_state.get("live_saved")
    if recording and saved and saved[0] == source:
        (st.info if saved[1] == "skipped" else st.success)(t(f"live.saved.{saved[1]}", lang, runs=saved[2]))


@fragment(run_every=every if polling else None)
def fleet_panel() -> None:
    """The fleet's figures over the range from Prometheus, summed over the servers it scrapes: the
    latest point per model as the headline, every point over time."""
    step_s = prometheus_api.parse_duration(span) / RANGE_POINTS
    # This session's latest answer per (Prometheus, range, label): kept under an error, as a server's
    # latest window is (a failed query had left nothing of the fleet's figures, verdict or charts).
    answers: dict[tuple, tuple[pd.DataFrame, pd.DataFrame | None]] = st.session_state.setdefault("live_fleet_last", {})
    failed = False
    try:
        frame = prometheus.query_figures(url, span, step_s)
        # The replicas over the latest point's window, by the label chosen.
        latest_point = frame.index.get_level_values("time").max().timestamp()
        replicas = prometheus.query_window(url, step_s, at=latest_point, by=(by,)).reset_index().rename(
            columns={"model_name": "model"}) if by else None
        answers[(url, span, by)] = (frame, replicas)
    except SpecvizError as exc:
        st.error(message(exc, lang))
        if (url, span, by) not in answers:
            return
        frame, replicas = answers[(url, span, by)]
        failed = True
        st.warning(message(windows.stale_window(frame.attrs["end"], time.time()), lang))
    flat = frame.reset_index().rename(columns={"time": "time_end", "model_name": "model"})
    flat.attrs = {}  # the notices stay with the frame: a chart's data is serialised, attrs too
    for model, rows in flat.groupby("model", sort=True):
        now = rows.iloc[-1].to_dict()
        st.subheader(escape_markdown(model) or t("live.no_model_name", lang))
        # A server that stopped reporting leaves its model's latest point behind the others'.
        if (late := windows.late_point(now["time_end"].timestamp(), frame.attrs["end"], step_s)) is not None:
            st.warning(message(late, lang))
        elif (dropped := windows.servers_dropped(rows["servers"], rows["time_end"],
                                                 frame.attrs["stopped"].get(model, ()))) is not None:
            st.warning(message(dropped, lang))
        # The range's last step is its headline: at a long range, minutes long and up to a step old.
        point = windows.fleet_point(now["time_end"].timestamp(), now["window_s"], time.time())
        if point is not None:
            st.caption(message(point, lang))
        show_figures(now, frame.attrs["absent"].get(f"{now['engine']}/{model}", {}), [],
                     *prometheus.per_position(now), model, stale=failed or point is not None,
                     ended=now["time_end"].timestamp() if point is None else None)
        if by:
            show_replicas(windows.replica_table(replicas[replicas["model"] == model].to_dict("records"),
                                             (prometheus.label_column(by),), shown=(by,)))
    st.caption(t("live.fleet_note", lang, points=len(frame), queries=len(frame.attrs["queries"])))
    for notice in frame.attrs["notices"]:
        # The figures are summed by model; where replicas are kept apart, it is in their tables.
        apart = " " + md("live.apart_in_tables", lang, label=by) if by and notice.key == "prometheus.notice.summed" else ""
        st.caption(message(notice, lang) + apart)
    if unlisted is not None:
        st.caption(t("live.labels_unlisted", lang, labels=", ".join(REPLICA_LABELS), reason=message(unlisted, lang)))
    show_over_time(flat, servers_summed=True)


if kind == "prometheus":
    fleet_panel()
else:
    panel()
