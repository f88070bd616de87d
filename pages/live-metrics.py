"""Live: a running server's speculative decoding, window by window, and whether it pays at its batch now."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from pages.parts.controls import show_url_notices, url_choice, url_widget
from pages.parts.live_sources import REPLICA_LABELS, apart_labels, demo_server, source_url
from pages.parts.live_window import (LiveView, offer_save, show_figures, show_history, show_over_time, show_replicas,
                                     since_start_line)
from pages.parts.shared import fragment, open_store, require_router
from specviz import charts, settings
from specviz.errors import Notice, SpecvizError
from specviz.i18n import escape_markdown, md, message, t
from specviz.live import exposition, prometheus, prometheus_api, scrape, windows
from specviz.live.processes import OtherServer
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
    url = source_url(st, "SPECVIZ_METRICS_SOURCES", "live_url", "live.url", EXAMPLE_METRICS_URL, "live.url_help", lang)
    source = scrape.stored_source(url)  # as the store keeps it, as the command line's recorder does: no token
else:
    col_base, col_range = st.columns([3, 1])
    url = source_url(col_base, "SPECVIZ_PROMETHEUS_SOURCES", "live_prometheus", "live.prometheus_url",
                     "http://localhost:9090", "live.prometheus_help", lang)
    source = scrape.stored_source(url)
    span = url_widget(col_range.select_slider, t("live.range", lang), RANGES, value="1h", key="live_range")
    apart_by, unlisted = apart_labels(url, span)
    by = st.selectbox(t("live.apart_by", lang), (None, *apart_by), key="live_apart_by", persist_state="session",
                      format_func=lambda label: t("live.apart_none", lang) if label is None else label,
                      help=t("live.apart_by_help", lang))
col_on, col_every = st.columns(2)
polling = col_on.toggle(t("live.poll", lang), key="live_on", persist_state="session")
every = url_widget(col_every.number_input, t("live.every", lang), 2, 60, value=5, key="live_every")
view = LiveView(source, every, lang)
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
    previous, anew = last.get(source), None
    try:
        # A URL only: the command line also reads files, but a visitor's text never names a path here.
        scraped = scrape.fetch_scrape(url)
        snapshot = exposition.parse(scraped.text, time=time.time())
        if recording:
            recorded = store.record_scrape(source, snapshot)
            states, anew = (recorded.states if recorded.window else None), recorded.anew
        else:
            try:
                states = spec_decode_states(snapshot, previous) if previous else None
            except OtherServer as exc:  # the source's new start, as the store keeps it (Store.record_scrape)
                states, anew = None, Notice(exc.key, **exc.params)
        replicas = windows.replica_states(snapshot, previous, states or [])
    except SpecvizError as exc:
        if exc.key == "scrape.refused" and url == EXAMPLE_METRICS_URL:  # the field's example, not typed
            st.info(t("live.example_refused", lang, url=EXAMPLE_METRICS_URL))
        else:
            st.error(message(exc, lang))
        return False
    last[source] = snapshot
    since_start[source] = spec_decode_states(snapshot)
    if scraped.redirected:  # a (checked) redirect: where the figures came from
        st.caption(md("scrape.redirected", lang, source=scrape.shown(url), url=scrape.shown(scraped.url)))
    if anew is not None:
        st.warning(f"{message(anew, lang)} {t('live.anew', lang)}")
        # The previous server's window is not this one's: the panel waits for a second scrape of the
        # new start and shows its totals since it started (a consistency pass: the old window had
        # stayed under the warning, labelled as the latest).
        for kept_latest in (latest, latest_end, apart):
            kept_latest.pop(source, None)
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



@fragment(run_every=every if polling else None)
def panel() -> None:
    """Scrape (when polling), then draw the latest window and the figures over time."""
    failed = False
    if source not in last:  # a source's first scrape may take up to the deadline: said while it runs
        with st.spinner(md("live.reading", lang, source=scrape.shown(url))):
            failed = not scrape_once()
    elif polling:
        failed = not scrape_once()
    if failed and source not in latest:
        # The error says what is wrong: waiting for a scrape that failed would mislead. What was
        # recorded of the source before stands below it, said not to be current (an SRE's pass: a
        # visit while the server was down showed none of its 15 minutes of windows).
        if recording:
            show_history(view, store, KEPT)
        return
    if source not in latest:
        st.info(t("live.waiting_polling", lang, seconds=every) if polling
                else t("live.waiting", lang, poll=t("live.poll", lang)))
        for state in since_start.get(source, []):
            if (said := since_start_line(view, state, "live.since_start_first")) is not None:
                st.caption(said)
        return
    if failed:  # the error above is of now; the figures below are of the latest window there is
        st.warning(message(windows.stale_window(latest_end[source], time.time()), lang))
    for state in latest[source]:
        st.subheader(escape_markdown(state.model_name) or t("live.no_model_name", lang))
        own = [r for r in apart.get(source, []) if (r.engine, r.model_name) == (state.engine, state.model_name)]
        show_figures(view, vars(state), state.absent, state.notices, state.per_position_acceptance,
                     state.per_position_conditional, state.model_name,
                     dp_engines=len(windows.engine_labels(last[source], state.model_name)), stale=failed,
                     ended=latest_end[source])
        if not state.draft_tokens:  # an idle window: the server's totals still say what it accepts
            started = [s for s in since_start.get(source, []) if (s.engine, s.model_name) == (state.engine, state.model_name)]
            # Idle only where nothing runs: with requests running (the tile says how many), they were in
            # prefill or not speculating, which "the server was idle" had contradicted (a browser pass).
            running = state.running_requests if state.running_requests and state.running_requests > 0 else 0
            key = "live.since_start_no_drafts" if running else "live.since_start_idle"
            if started and (said := since_start_line(view, started[0], key, running=running)) is not None:
                st.caption(said)
        # The labels last: vLLM's data-parallel engine label is named like the state's engine field.
        replicas = [{**vars(r), "model": r.model_name, **r.labels} for r in own]
        if replicas:
            show_replicas(view, windows.replica_table(replicas, state.summed_labels), f"{state.engine}/{state.model_name}")
    over_time = source_windows()
    show_over_time(view, over_time)
    if recording:
        offer_save(view, store)


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
        show_figures(view, now, frame.attrs["absent"].get(f"{now['engine']}/{model}", {}), [],
                     *prometheus.per_position(now), model, stale=failed or point is not None,
                     ended=now["time_end"].timestamp() if point is None else None)
        if by:
            show_replicas(view, windows.replica_table(replicas[replicas["model"] == model].to_dict("records"),
                                             (prometheus.label_column(by),), shown=(by,)), f"{now['engine']}/{model}")
    st.caption(t("live.fleet_note", lang, points=len(frame), queries=len(frame.attrs["queries"])))
    for notice in frame.attrs["notices"]:
        # The figures are summed by model; where replicas are kept apart, it is in their tables.
        apart = " " + md("live.apart_in_tables", lang, label=by) if by and notice.key == "prometheus.notice.summed" else ""
        st.caption(message(notice, lang) + apart)
    if unlisted is not None:
        st.caption(t("live.labels_unlisted", lang, labels=", ".join(REPLICA_LABELS), reason=message(unlisted, lang)))
    show_over_time(view, flat, servers_summed=True)


if kind == "prometheus":
    fleet_panel()
else:
    panel()
