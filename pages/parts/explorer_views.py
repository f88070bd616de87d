"""The Explorer's Acceptance, Predicted and Published views, the Baseline view's tables, and its SQL
console (a helper of pages/results.py, not a page), and how its tables' figures read."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any, Callable

import pandas as pd
import streamlit as st

from pages.parts.latency import DEFAULT_WORKLOAD
from pages.parts.shared import (altair_chart, chain_runs, csv_download, mix_tail_at, mix_tail_table, number_columns,
                                offer_fit, presets, titled_dataframe)
from specviz import calculator, charts, scenario, settings
from specviz.i18n import md, message, t
from specviz.results import explorer, export, prediction, request_acceptance, schedule
from specviz.results.sandbox import QueryError
from specviz.results.schema import LATENCY_METRICS, STATISTICS
from specviz.results.store import Store

# How the tables' figures read: speedups with two decimals and × (their differences signed), α and
# acceptance rates with three, the share of steps that accept nothing in percent (as the chart beside
# it and the Live page give it: the table had read 0.645 beside an axis of 64.5 %, an analyst's pass),
# acceptance lengths with two, milliseconds and throughputs with one, a request's tokens whole, and
# thousands separated.
FORMATS: dict[str, str] = {
    **dict.fromkeys(("measured_speedup", "speedup_vs_fastest", "speedup_vs_slowest", "predicted_speedup", "predicted_low",
                     "predicted_high"), "%.2f×"),
    "error": "%+.2f",
    **dict.fromkeys(("alpha", "acceptance_rate"), "%.3f"), "zero_accept_rate": "percent",
    "mtp_reuse": "%.2f",
    "acceptance_length": "%.2f",
    **dict.fromkeys(("num_requests", "failed_requests", "concurrency", "prompt_tokens", "output_tokens"), "%,d"),
    **dict.fromkeys(("output_throughput", "baseline_output_throughput", "total_token_throughput"), "%,.1f"),
    "baseline_mean_tpot_ms": "%,.1f",
    **dict.fromkeys(("request_throughput", "duration_s"), "%,.2f"),
    **dict.fromkeys((f"{stat}_{metric}_ms" for stat in STATISTICS for metric in LATENCY_METRICS), "%,.1f")}

# The Baseline view's table of pairs: what each measured speedup is the ratio of.
PAIR_COLUMNS = ("series", "workload", "concurrency", "measured_speedup", "speedup_vs_fastest", "speedup_vs_slowest", "measured_by",
                "output_throughput", "baseline_output_throughput", "mean_tpot_ms", "baseline_mean_tpot_ms", "request_rate",
                "source_file", "baseline_source_file")


def keep_fit(kind: str, fit: Callable[[], Any]) -> None:
    """Make a calibration and keep it for the session (a button's callback): made before the page
    runs again, so that the table and the chart above the buttons predict with it on that run."""
    st.session_state["fit"] = (kind, fit())


def show_predicted(paired: pd.DataFrame, lang: str) -> None:
    """The Predicted view: the paired runs beside the step model's prediction for the sidebar's scenario
    (each run's own setting where it names presets), with a band, and the calibrations on them that
    open the calculator."""
    sidebar: scenario.Scenario | None = st.session_state.get("scenario")
    if sidebar is None or paired.empty:
        st.info(t("exp.no_prediction.scenario" if sidebar is None else "exp.no_prediction.pairs", lang))
        return
    col_load, col_context = st.columns(2)
    # A calibration is made for one choice: another leaves it behind (its settings would not match).
    # Kept for the session, as the calibration is: a visit to the calculator must find both as left.
    loads = col_load.radio(t("calc.load", lang), list(scenario.PREFILL), key="exp_load", horizontal=True,
                           format_func=lambda p: t(f"exp.load.{p}", lang), help=t("exp.load_help", lang),
                           on_change=lambda: st.session_state.pop("fit", None), persist_state="session") == "on"
    context = col_context.select_slider(t("calc.context", lang),
                                        calculator.context_options(settings.get("SPECVIZ_CONTEXT_MAX")),
                                        value=scenario.FIELDS["context"].default, key="exp_context",
                                        help=t("exp.context_help", lang))
    known = presets(settings.get("SPECVIZ_DATA_DIR"))
    kind, fit = st.session_state.get("fit", (None, None))
    # The runs a calibration fits are predicted at its costs, as the calculator it opens predicts them.
    predicted = prediction.predict(paired, sidebar, known, context, prediction.calibration_in_use(kind, fit, sidebar),
                                 loads=loads)
    if beyond := int(predicted["beyond_reuse"].sum()):  # said, not dropped in silence
        st.warning(t("exp.beyond_reuse", lang, runs=beyond, reuse=sidebar.mtp_reuse))
    if trees := int(predicted["tree_draft"].sum()):
        st.info(t("exp.tree_not_predicted", lang, runs=trees))
    if predicted["predicted_speedup"].isna().all():
        if not beyond and not trees:
            st.info(t("exp.no_predictions", lang))
        return
    st.caption(t("exp.scenario", lang))
    if loads:
        at_load = int(predicted["prompt_tokens"].notna().sum())
        decoding = int(predicted["predicted_speedup"].notna().sum()) - at_load
        st.caption(t("exp.load_caption" if decoding else "exp.load_caption_all", lang, loaded=at_load,
                     decoding=decoding, context=context))
    if runs := int((predicted["costs"] == "calibrated").sum()):
        calibrated = predicted.loc[predicted["costs"] == "calibrated", "setting"].unique()
        st.info(t(f"exp.predicted_calibrated.{kind}", lang, runs=runs, settings="; ".join(calibrated)))
    # Where a run names no preset the sidebar's pair stands in: say so, with how many.
    stand_in = predicted["predicted_speedup"].notna() & ~predicted["own_setting"]
    if runs := int(stand_in.sum()):  # each setting named whole: its draft is the run's own method where it can be
        st.warning(md("exp.sidebar_setting", lang, runs=runs, target=sidebar.target.name, gpu=sidebar.gpu.name,
                      settings="; ".join(predicted.loc[stand_in, "setting"].unique())))
    altair_chart(charts.measured_vs_predicted_spec(predicted, lang))
    table = predicted[["series", "setting", "concurrency", "num_speculative_tokens", "acceptance_length", "alpha",
                       # the factor each MTP run was predicted at, its own where it measured its positions
                       *(("mtp_reuse",) if predicted["mtp_reuse"].notna().any() else ()),
                       *(("prompt_tokens", "output_tokens") if loads else ()),
                       "measured_speedup", "predicted_speedup", "predicted_low", "predicted_high", "error", "costs"]]
    table = table.assign(costs=table["costs"].map(lambda c: t(f"exp.costs.{c}", lang)))
    titled_dataframe(table, lang, column_config=number_columns(table, FORMATS, lang))
    synthetic = int(explorer.synthetic_acceptance(predicted).sum())
    wanted = bool(synthetic) and st.toggle(t("exp.fit_synthetic", lang, runs=synthetic), key="fit_synthetic",
                                           help=t("exp.fit_synthetic_help", lang))
    fitted, left_out = explorer.measured_acceptance(predicted, wanted)
    if left_out:
        st.caption(t("exp.synthetic_left_out", lang, runs=left_out))
    if by_tpot := int((split := explorer.tpot_at_load(fitted)).sum()):
        st.warning(t("exp.tpot_at_load", lang, runs=by_tpot))
        fitted = fitted[~split]
    col_step, col_ratios = st.columns(2)
    col_step.button(t("exp.calibrate_step", lang), key="fit_step", help=t("exp.calibrate_step_help", lang),
                    on_click=keep_fit, args=("step", partial(prediction.calibrate_settings, fitted, sidebar, known, context,
                                                             settings.get("SPECVIZ_PAGE_TIME_LIMIT_S"), loads)))
    col_ratios.button(t("exp.calibrate_ratios", lang), key="fit_ratios", help=t("exp.calibrate_ratios_help", lang),
                      on_click=keep_fit, args=("ratios", partial(prediction.calibrate_ratios, fitted)))
    if kind is None:
        return
    if not fit:
        st.warning(t("exp.fit_failed", lang))
    elif kind == "step":
        for number, one in enumerate(fit):
            if isinstance(one, prediction.SettingRefused):
                st.warning(t("exp.fit_refused", lang, setting=one.setting, points=one.points,
                             reason=message(one.reason, lang)))
                continue
            costs = one.scenario.costs
            found = t("exp.fit.step", lang, setting=one.setting, points=one.points, rms_error=one.rms_error,
                      **vars(costs))
            # A fit at its runs' load opens the calculator at that load (and its context).
            offer_fit(lang, f"use_fit_{number}", found, [t(key, lang) for key in one.warnings],
                      one.scenario if one.scenario.prefill else replace(one.scenario, context=context), known)
    else:
        offer_fit(lang, "use_fit", t("exp.fit.ratios", lang, **fit),
                  [message(notice, lang) for notice in prediction.ratio_warnings(fit)],
                  replace(prediction.ratios_scenario(fit, sidebar), context=context), known)


_WAIT_SHOWN_S = 0.1  # a wait for a console slot worth saying


def show_sql(store: Store, lang: str) -> None:
    """The SQL console: one read-only statement over the stored runs, run in the sandbox
    (:mod:`specviz.results.sandbox`), its result shown and offered as CSV, or why it was refused."""
    example = st.selectbox(t("exp.sql_examples", lang), list(explorer.EXAMPLE_QUERIES),
                           format_func=lambda k: t(f"exp.sql.{k}", lang), key="sql_example")
    # The label says the examples are in the runs table only while they are (an analyst's pass: it had
    # said so after "Remove examples").
    with_examples = (store.imports()["origin"] == "example").any()
    sql = st.text_area(t("exp.sql" if with_examples else "exp.sql_no_examples", lang), explorer.EXAMPLE_QUERIES[example],
                       height=140, key=f"sql_{example}",
                       help=t("exp.sql_help", lang, seconds=settings.get("SPECVIZ_SQL_TIMEOUT_S"),
                              rows=settings.get("SPECVIZ_SQL_MAX_ROWS")))
    if st.button(t("exp.sql_run", lang), key="sql_run"):
        try:
            # Up to SPECVIZ_SQL_TIMEOUT_S in the sandbox: said while it runs, as the page shows nothing new until then.
            with st.spinner(t("exp.sql_running", lang, seconds=settings.get("SPECVIZ_SQL_TIMEOUT_S"))):
                result = store.query(sql)
        except QueryError as exc:
            st.error(t("exp.sql_refused", lang, error=message(exc, lang)))
            return
        if result.truncated:
            st.warning(t(f"exp.sql_truncated.{result.truncated}", lang, rows=len(result.frame),
                         bytes=settings.get("SPECVIZ_SQL_MAX_BYTES")))
        st.caption(t("exp.sql_time", lang, rows=len(result.frame), seconds=result.seconds))
        if result.waited_s >= _WAIT_SHOWN_S:  # other sessions' queries held every slot meanwhile
            st.caption(t("exp.sql_waited", lang, seconds=result.waited_s, workers=settings.get("SPECVIZ_SQL_WORKERS")))
        st.dataframe(export.visible_frame(result.frame), hide_index=True, placeholder="")
        csv_download(result.frame, "specviz_query.csv", "download_sql", lang)


def show_acceptance(shown: pd.DataFrame, store: Store, lang: str) -> None:
    """The Acceptance view: each workload's acceptance over the shown runs, then by draft position and
    per request."""
    summary = explorer.workload_acceptance(shown)
    summary["workload"] = summary["workload"].fillna(t("exp.no_workload", lang))
    if summary.empty:
        st.info(t("exp.no_acceptance", lang))
        return
    missing = [f for f in explorer.ACCEPTANCE_FIGURES if summary[f].isna().all()]
    present = [f for f in explorer.ACCEPTANCE_FIGURES if f not in missing]
    for figure in missing:
        st.info(t("exp.missing_figure", lang, figure=t(f"col.{figure}", lang),
                  present=", ".join(t(f"col.{f}", lang) for f in present)))
    altair_chart(charts.acceptance_by_workload(summary, lang))
    if synthetic := int(explorer.synthetic_acceptance(shown).sum()):
        st.caption(t("exp.synthetic_left_out", lang, runs=synthetic))
    if summary["origin"].nunique() > 1:
        st.caption(t("exp.origins_apart", lang))
    labelled = summary.assign(origin=summary["origin"].map(lambda o: t(f"exp.origin.{o}", lang)))
    titled_dataframe(labelled, lang, column_config=number_columns(labelled, FORMATS, lang))
    show_position_acceptance(shown, lang)
    show_request_acceptance(shown, store, lang)


def show_position_acceptance(shown: pd.DataFrame, lang: str) -> None:
    """Each run's acceptance at each draft position, where it measured it: how acceptance decays with
    depth, which the mean acceptance length does not show."""
    table = explorer.position_acceptance(shown)
    if table.empty:
        return
    st.subheader(t("exp.positions", lang))
    st.caption(t("exp.positions_note", lang))
    # A column a position, titled by its number (the other columns by their titles, as titled_dataframe).
    title = lambda c: t("exp.position_column", lang, position=int(c.rsplit("_", 1)[1])) if c.startswith(
        "position_") else t(f"col.{c}", lang)
    st.dataframe(export.visible_frame(table).rename(columns=title), hide_index=True, placeholder="", column_config={
        **number_columns(table, FORMATS, lang),
        **{title(c): st.column_config.NumberColumn(format="%.3f") for c in table if c.startswith("position_")}})


def show_request_acceptance(shown: pd.DataFrame, store: Store, lang: str) -> None:
    """One shown run's per-request acceptance: its spread (a histogram and quantiles) and what the
    spread does to request latency against one α at its mean, with the sidebar's setting's step
    times at the run's γ and batch."""
    st.subheader(t("exp.per_request", lang))
    runs = store.request_acceptance()
    runs = chain_runs(runs[runs["run_id"].isin(shown["run_id"])], lang)
    if runs.empty:
        st.info(t("exp.no_request_acceptance", lang))
        return
    names = shown.set_index("run_id")["series"]
    run_id = st.selectbox(t("exp.request_run", lang), runs["run_id"], key="request_run",
                          format_func=lambda r: t("exp.request_run_option", lang, series=names.get(r, r),
                                                  requests=int(runs.set_index("run_id").at[r, "requests"])))
    run = runs.set_index("run_id").loc[run_id]
    gamma = None if pd.isna(run["num_speculative_tokens"]) else int(run["num_speculative_tokens"])
    requests = store.request_acceptance_of(run_id)
    lengths = request_acceptance.request_lengths(requests, gamma)
    spread = request_acceptance.length_quantiles(lengths)
    if gamma is not None:
        altair_chart(charts.request_acceptance(lengths, gamma, lang))
    titled_dataframe(pd.DataFrame([spread]), lang, column_config={
        t(f"col.{c}", lang): st.column_config.NumberColumn(format="%,d" if c == "requests" else "%.2f")
        for c in spread})
    # Which way the run's figure lies from the mean over requests, as the figures shown say (a
    # browser pass: "the requests that accept little weigh more" had stood beside 2.47 over 2.45).
    mean, whole = round(float(spread["mean"]), 2), round(float(run["acceptance_length"]), 2)
    side = "below" if whole < mean else "above" if whole > mean else "same"
    st.caption(t(f"exp.request_spread_note.{side}", lang, mean=spread["mean"], run=run["acceptance_length"]))
    sidebar: scenario.Scenario | None = st.session_state.get("scenario")
    if gamma is None or sidebar is None:
        st.info(t("exp.request_no_gamma", lang))
        return
    batch, output_tokens, measured_output, own_batch = request_acceptance.tail_setting(
        run["concurrency"], requests["output_tokens"], sidebar.batch,
        presets(settings.get("SPECVIZ_DATA_DIR")).workloads[DEFAULT_WORKLOAD].output_tokens)
    tail = mix_tail_at(sidebar, lengths, gamma, batch, sidebar.context, output_tokens, lang)
    if tail is None:
        return
    st.markdown(md("exp.request_tail", lang, target=sidebar.target.name, gpu=sidebar.gpu.name, gamma=gamma,
                   batch=batch, tokens=output_tokens, change=float(tail.at["p99", "change"]),
                   batch_whose=t("exp.request_batch.measured" if own_batch else "exp.request_batch.sidebar", lang),
                   whose=t("exp.request_tokens.measured" if measured_output else "exp.request_tokens.default", lang)))
    mix_tail_table(tail, lang)


def show_published(paired: pd.DataFrame, lang: str) -> None:
    """The Published view: the published speedups, the shown runs' measured ones beside them (``paired``)."""
    published = explorer.load_published(settings.get("SPECVIZ_DATA_DIR"))
    speedups = explorer.speedup_rows(published)
    altair_chart(charts.published_speedups(speedups, paired, lang))
    if not paired.empty:
        st.caption(t("exp.published_yours", lang))
    if len(speedups) < len(published):
        st.caption(t("exp.published_not_drawn", lang, rows=len(published) - len(speedups)))
    # Every column under its title; a row's value is in that row's metric, not always a speedup.
    # How each row's acceptance was obtained in the reader's words, as Claims says it ("measured" had
    # stood in the Vietnamese table: a Vietnamese reader's pass).
    acceptance = published["acceptance"].fillna("").map(lambda how: t(f"claims.acceptance.{how or 'unsaid'}", lang))
    titled_dataframe(published.rename(columns={"value": "reported_value"}).assign(
                         metric=charts.metric_titles(published["metric"], lang), acceptance=acceptance), lang,
                     placeholder="", column_config={t("col.source", lang): st.column_config.LinkColumn()})


def show_pairs(paired: pd.DataFrame, lang: str) -> None:
    """Each speculative run beside its baseline: both throughputs and TPOTs, the measured speedup and
    which of the two it is the ratio of (``measured_by``), so a reviewer can check every point the chart
    draws, those off it (a load by request rate) too."""
    st.subheader(t("exp.pairs", lang))
    # The range against repeated baselines only where some run has them: else it is the speedup again.
    repeats = (paired["baselines"] > 1).any()
    shown = [c for c in PAIR_COLUMNS if repeats or c not in ("speedup_vs_fastest", "speedup_vs_slowest")]
    table = paired[shown].dropna(axis=1, how="all")
    # The rate as text (∞, not "Infinity"), as the runs table shows it.
    table = table.assign(measured_by=table["measured_by"].map(lambda by: t(f"exp.measured_by.{by}", lang)),
                         **({"request_rate": table["request_rate"].map(explorer.rate_text)} if "request_rate" in table else {}))
    titled_dataframe(table, lang, column_config=number_columns(table, FORMATS, lang))
    st.caption(t("exp.pairs_note", lang))
    if pairs := int((paired["baselines"] > 1).sum()):  # their mean is taken, the range beside it
        st.info(t("exp.pairs_repeats", lang, pairs=pairs, most=int(paired["baselines"].max())))


def show_measured_schedule(shown: pd.DataFrame, lang: str) -> None:
    """The best γ measured at each batch of a grid of runs, beside the step model's choice among the
    same γ in the runs' setting, the batches where they differ counted (runs at synthetic acceptance
    left out)."""
    sidebar: scenario.Scenario | None = st.session_state.get("scenario")
    runs, _ = explorer.measured_acceptance(shown)
    table = schedule.beside_model(runs, sidebar, presets(settings.get("SPECVIZ_DATA_DIR"))) if sidebar else None
    if table is None or table.empty or table["gammas"].max() < 2:  # a table needs two γ at some batch
        return
    st.subheader(t("exp.measured_schedule", lang))
    differ = int((~table["agree"] & table["fits"]).sum())
    st.caption(t("exp.measured_schedule_note", lang, batches=len(table), differ=differ,
                 unfit=int((~table["fits"]).sum())))
    shown_table = table[[*schedule.SETTING, "batch", "gamma", "measured_speedup", "model_gamma", "model_speedup",
                         "agree"]].rename(columns={"gamma": "measured_gamma"})
    titled_dataframe(shown_table.dropna(axis=1, how="all"), lang, column_config={
        **number_columns(shown_table, FORMATS, lang),
        t("col.model_speedup", lang): st.column_config.NumberColumn(format="%.2f×"),
        t("col.model_gamma", lang): st.column_config.NumberColumn(format="%d"),
        t("col.measured_gamma", lang): st.column_config.NumberColumn(format="%d")})
