"""Explorer: benchmark results into DuckDB, charted by load, set beside the model, queried with SQL."""

from __future__ import annotations

import math
from functools import cache, partial
from typing import Callable

import pandas as pd
import streamlit as st

from pages.parts.controls import view_choice
from pages.parts.explorer_views import (FORMATS, show_acceptance, show_measured_schedule, show_pairs, show_predicted,
                                       show_published, show_sql)
from pages.parts.imports import offer_speculation_statement, stated_files, unstated_note, upload_section
from pages.parts.shared import (altair_chart, csv_download, fragment, number_columns, open_store, require_router,
                                titled_dataframe)
from specviz import charts, settings
from specviz.i18n import md, message, t, visible
from specviz.results import benchmark_report, explorer, export

require_router("explorer")
lang: str = st.session_state.get("lang", "en")
_VIEW_RUNS = "explorer_view_runs"  # (the store's read, the examples, the runs with the view columns)

st.title(t("exp.title", lang))
st.caption(t("exp.intro", lang))
store = open_store(lang)
# A viewer (SPECVIZ_VIEWER) or a read-only store shows and queries the runs but changes nothing.
editable = not (settings.get("SPECVIZ_VIEWER") or store.read_only)
if editable:
    upload_section(store, lang)
else:
    st.info(t("exp.viewer" if settings.get("SPECVIZ_VIEWER") else "exp.read_only", lang))

# The runs carry no origin: the example files' hashes, from the imports, mark the examples' runs
# (known by their import's origin, not by a name a user's file may share).
imported = store.imports()
examples = explorer.example_hashes(imported)
if examples:
    st.info(t("exp.examples_note", lang))
    # Its own row: beside the note, a 1,000 px window left it room for "Remove e…".
    if editable and st.button(t("exp.remove_examples", lang), key="remove_examples"):
        store.remove_examples()
        st.rerun()
# The shipped examples are never mixed with the user's runs: once there are runs of one's own, the
# examples are shown only on request, and then alone. Which is known from the imports, before the
# filters, so that the filters offer the values of the runs shown and no others.
has_own = bool(explorer.own_imports(imported)["runs"].gt(0).any())
wanted = has_own and bool(examples) and st.toggle(t("exp.show_examples", lang), key="show_examples",
                                                  help=t("exp.show_examples_help", lang))
origin = "example" if wanted or not has_own else "user"


def filter_text(value: object) -> str:
    """A filter's value as it is listed: None, the runs without one, as the legend names them."""
    return t("exp.not_set", lang) if value is None else visible(str(value))


# ----------------------------------------------------------------------------------- filters
# The filters are applied by the store, so that they reach every stored run, not only those shown.
# The lists are built only while their expander is open (eight of them cost a first render about a
# third of a second in Chromium); closed, the choices kept for the page (persist_state) still apply.
# Its title stays the same: a title that changes makes the browser draw the expander anew, closed.
filters = {c: st.session_state.get(f"filter_{c}", []) for c in explorer.FILTER_COLUMNS}
filter_box = st.expander(t("exp.filters", lang), key="filters", on_change="rerun")
if not filter_box.open and (applied := {c: chosen for c, chosen in filters.items() if chosen}):
    st.caption(md("exp.filters_applied", lang, filters="; ".join(
        f"{t(f'col.{c}', lang)}: {', '.join(filter_text(v) for v in chosen)}" for c, chosen in applied.items())))
if filter_box.open:
    offered = store.filter_values(explorer.FILTER_COLUMNS, origin)
    with filter_box:
        # Rows of four: seven lists in one row leave each a few characters wide on a 1,000 px window.
        cells = [cell for _ in range(0, len(explorer.FILTER_COLUMNS), 4) for cell in st.columns(4)]
        filters = {c: cell.multiselect(t(f"col.{c}", lang), offered[c].values, key=f"filter_{c}", persist_state="page",
                                       format_func=filter_text, placeholder=t("exp.filter_any", lang))
                   for c, cell in zip(explorer.FILTER_COLUMNS, cells)}
        if more := [t(f"col.{c}", lang) for c in explorer.FILTER_COLUMNS if offered[c].more]:
            st.caption(t("exp.filter_more", lang, values=settings.get("SPECVIZ_FILTER_MAX_VALUES"),
                         columns=", ".join(more)))
read = store.shown_runs(filters)
# The view columns (the series' names above all: 30 ms a rerun for the 48 examples) are made again
# only when the store's read or the examples change; the read is kept by the store until then.
kept = st.session_state.get(_VIEW_RUNS)
if kept is None or kept[0] is not read.frame or kept[1] != examples:
    kept = st.session_state[_VIEW_RUNS] = (read.frame, examples, explorer.with_view_columns(read.frame, examples))
loaded = kept[2]
shown = loaded[loaded["origin"] == origin]
if wanted:
    st.warning(t("exp.showing_examples", lang, runs=len(shown)))
if read.cut:
    st.info(t("exp.shown_cut", lang, shown=len(read.frame), matching=read.matching))
if shown.empty:  # the filters may match only runs of the origin not shown
    st.info(t("exp.empty" if not any(filters.values()) else "exp.none_match", lang))


@cache
def paired_runs() -> pd.DataFrame:
    """The shown runs paired with their baselines (:func:`specviz.results.explorer.pair_with_baselines`),
    made once a run of the page: a view that reruns alone (:func:`open_view`) pairs the same runs."""
    return explorer.pair_with_baselines(shown)


def show_runs() -> None:
    columns = ["source_file", "source_format", "series", "workload", "engine", "endpoint", "target_model", "gpu",
               "spec_method", "num_speculative_tokens", "concurrency", "request_rate", "output_throughput",
               # TPOT beside ITL: with speculation a chunk holds several tokens, and the note says to compare TPOT.
               "mean_tpot_ms", "p99_tpot_ms", "p50_itl_ms", "p99_itl_ms", "mean_ttft_ms", "p99_ttft_ms", "acceptance_length",
               "acceptance_rate", "speculation_by_user", "imported_at"]
    newest = explorer.newest_first(shown)
    # The rate as text for the table only (∞, not "Infinity"); the download keeps the number.
    table = newest[columns].assign(request_rate=newest["request_rate"].map(explorer.rate_text),
                                   speculation_by_user=newest["speculation_by_user"].notna())
    titled_dataframe(table, lang, placeholder="", column_config=number_columns(table, FORMATS, lang))
    downloads = st.container(horizontal=True)
    with downloads:
        csv_download(newest, "specviz_runs.csv", "download_runs", lang)
        # Written and checked against the v0.2.1 schema when it is clicked, from the runs as stored.
        st.download_button(t("exp.download_report", lang), partial(benchmark_report.stored_text, store,
                                                                   tuple(newest["run_id"])),
                           "specviz_runs.benchmark_report.yaml", "application/yaml", key="download_report",
                           help=t("exp.download_report_help", lang))
    offer_removal()
    offer_speculation_statement(store, stated_files(shown, origin), editable, lang)


# Session key of the last removal, (file name, runs removed): said once, after the rerun that shows
# the store without the file.
_REMOVED = "removed_import"


def offer_removal() -> None:
    """What the last removal removed, and a file of the user's to remove whole (its runs and their
    per-request rows); not offered to a viewer or on a read-only store, which change nothing."""
    if removed := st.session_state.pop(_REMOVED, None):
        st.success(md("exp.removed_import", lang, file=removed[0], runs=removed[1]))
    own = explorer.own_imports(imported).set_index("content_hash")
    if not editable or own.empty:
        return
    # No file is chosen at first: the choice, then the button, is the confirmation.
    line = st.container(horizontal=True, vertical_alignment="bottom")
    # Files of one name (AIPerf names every run's export profile_export_aiperf.json) are told apart by
    # the import's id, the 12 characters that begin their runs' ids and that specviz remove takes.
    repeated = own["source_file"].duplicated(keep=False)

    def option(h: str) -> str:
        name = visible(own.at[h, "source_file"]) + (f" · {h[:12]}" if repeated[h] else "")
        return t("exp.remove_import_option", lang, file=name, runs=int(own.at[h, "runs"]),
                 imported=f"{own.at[h, 'imported_at']:%Y-%m-%d %H:%M}")

    chosen = line.selectbox(
        t("exp.remove_import", lang), own.index, index=None, key="remove_import", width=480,
        placeholder=t("exp.remove_import_placeholder", lang), help=t("exp.remove_import_help", lang),
        format_func=option)
    # Runs another file left to this one as already stored go with it: said before the button is pressed.
    for shared in store.sharing_imports(chosen) if chosen is not None else []:
        st.warning(message(shared, lang))
    if line.button(t("exp.remove_import_button", lang), key="remove_import_button", disabled=chosen is None):
        st.session_state[_REMOVED] = (own.at[chosen, "source_file"], store.remove_import(chosen))
        st.rerun()  # the whole page: every list, count and view without the file


def group_title(key: str) -> str:
    """A group key as the legend and the table name it: a column's title, or the field's path."""
    return key.removeprefix(explorer.EXTRA_PREFIX) if key.startswith(explorer.EXTRA_PREFIX) else t(f"col.{key}", lang)


def show_load() -> None:
    with_runs = [a for a in explorer.LOAD_AXES if not explorer.on_load_axis(shown, a).empty]
    # A row that wraps: in two columns at 800 px the axis buttons were cut ("Request rate (re").
    controls = st.container(horizontal=True, gap="medium")
    axis = controls.segmented_control(t("exp.axis", lang), explorer.LOAD_AXES, default=(with_runs or ["concurrency"])[0],
                                      required=True, format_func=lambda a: t(f"col.{a}", lang), key="load_axis",
                                      help=t("exp.axis_help", lang), persist_state="session")
    placed = explorer.on_load_axis(shown, axis)
    # The other axis as its button names it, in the reader's language: the messages send the reader there.
    other_axis = next(a for a in explorer.LOAD_AXES if a != axis)
    groups = [*explorer.GROUP_COLUMNS, *explorer.extra_keys(placed)]
    if st.session_state.get("load_group") not in (None, *groups):  # kept for the session: a field of runs not shown
        st.session_state.pop("load_group")
    group = controls.selectbox(
        t("exp.group_by", lang), groups, key="load_group", width=280, persist_state="session",
        format_func=lambda k: t("exp.group.extra", lang, field=group_title(k)) if k.startswith(explorer.EXTRA_PREFIX)
        else group_title(k), help=t("exp.group_by_help", lang))
    if placed.empty:
        st.info(t(f"exp.no_axis.{axis}", lang, axis=t(f"col.{other_axis}", lang)))
    else:
        lines = explorer.with_group(placed, group)
        peaks = explorer.sweep_peaks(lines)
        # TPOT beside ITL: with speculation ITL is per streamed chunk (the note below), and GuideLLM's,
        # genai-perf's and llmperf's runs give TPOT alone (an analyst's pass: they had no latency line).
        for metric in ("output_throughput", "mean_tpot_ms", "p50_itl_ms", "p99_itl_ms"):
            if lines[metric].isna().all():
                st.info(t("exp.no_metric", lang, metric=t(f"col.{metric}", lang)))
                continue
            chart = charts.metric_vs_load(lines, metric, axis, peaks if metric == "output_throughput" else None,
                                          group_title(group), lang)
            altair_chart(chart)
            # The legend lists every group so that a line has one colour in all three charts.
            if missing := explorer.groups_without(lines, metric):
                st.caption(t("exp.legend_without", lang, groups=missing, metric=t(f"col.{metric}", lang)))
        if not peaks.empty:
            st.caption(t("exp.peaks", lang))
            table = ["series", "load", "output_throughput", "runs", "source_file"]
            table = table if group in table else ["group", *table]
            titles = {"group": group_title(group), "load": t(f"col.{axis}", lang)}
            # A run without the group's field is "(not set)" here as in the charts' legend.
            peaks = peaks.assign(group=peaks["group"].fillna(t("exp.not_set", lang)))
            st.dataframe(export.visible_frame(peaks[table]).rename(columns=lambda c: titles.get(c) or t(f"col.{c}", lang)),
                         hide_index=True, column_config=number_columns(peaks[table], FORMATS, lang), placeholder="")
        st.caption(t("exp.itl_note", lang))
    at_once = explorer.infinite_rate_runs(shown, axis)
    if not at_once.empty:
        st.info(t(f"exp.all_at_once.{axis}", lang, runs=len(at_once)))
        table = at_once[["series", "concurrency", "output_throughput", "p99_itl_ms", "source_file"]]
        titled_dataframe(table, lang, column_config=number_columns(table, FORMATS, lang))
    if not (elsewhere := explorer.other_axis_runs(shown, axis)).empty:
        st.info(t(f"exp.other_axis.{axis}", lang, runs=len(elsewhere), axis=t(f"col.{other_axis}", lang)))
    if not (no_load := explorer.runs_without_load(shown)).empty:
        st.info(t("exp.no_load", lang, runs=len(no_load)))
        titled_dataframe(no_load[["series", "source_file"]], lang)


def show_versus_baseline() -> None:
    paired = paired_runs()
    if not (unpaired := explorer.unpaired_speculative(shown, paired)).empty:
        series = unpaired["series"].dropna().unique()
        named = ", ".join(series[:10]) + (" …" if len(series) > 10 else "")  # a few names say which
        st.info(md("exp.unpaired", lang, runs=len(unpaired), series_count=len(series), series=named))
    if any(filters.values()) and (paired.empty or not unpaired.empty):
        # The pairing is among the runs the filters keep: a filter on the method hides every plain run,
        # and the messages above had blamed the data (an analyst's pass).
        st.info(t("exp.pairs_filtered", lang))
    if paired.empty:
        if not any(filters.values()):  # under filters the note above says why: "none yet" was not true
            st.info(t("exp.no_pairs", lang))
            unstated_note(stated_files(shown, origin), lang)  # perhaps some of them speculated, unsaid
        return
    on_chart = paired.dropna(subset=["concurrency"])
    if len(on_chart) < len(paired):
        st.info(t("exp.pairs_off_chart", lang, pairs=len(paired) - len(on_chart)))
    if on_chart.empty:
        return
    crossover = explorer.crossover_concurrency(paired)
    altair_chart(charts.measured_speedup(on_chart, crossover, lang))
    # "Faster at every measured concurrency" only where more than one was measured.
    shown_crossover = crossover.assign(crossover_concurrency=[
        f"{v:g}" if not math.isnan(v) else t("exp.no_crossover" if n > 1 else "exp.no_crossover_one", lang)
        for v, n in zip(crossover["crossover_concurrency"], crossover["concurrencies"])]).drop(columns="concurrencies")
    titled_dataframe(shown_crossover, lang)
    st.caption(t("exp.crossover_note", lang))
    show_pairs(paired, lang)
    show_measured_schedule(shown, lang)


@fragment
def open_view(show: Callable[[], None]) -> None:
    """The open tab's view, rerun alone by its own controls (the load axis and the lines' grouping, the
    context, the SQL console): the page above it stays as drawn, from the runs it read. Where an import
    or a removal has changed the store since (in this session or another process), the whole page runs
    again, as every rerun would have read it."""
    if not store.imports().equals(imported):
        st.rerun()
    show()


VIEWS = {"runs": show_runs, "load": show_load, "baseline": show_versus_baseline,
         "acceptance": lambda: show_acceptance(shown, store, lang),
         "predicted": lambda: show_predicted(paired_runs(), lang), "published": lambda: show_published(paired_runs(), lang),
         "sql": lambda: show_sql(store, lang)}
open_view(VIEWS[view_choice("exp_view", list(VIEWS), lambda name: t(f"exp.tab.{name}", lang), t("exp.views", lang))])
