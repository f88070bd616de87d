"""The Claims page's view of a claim beside the published speedups of its class of setting and the
user's own runs (a helper of pages/check-a-claim.py, not a page), and how the page's tables' figures
read."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from pages.parts.shared import altair_chart, number_columns, open_store, presets, titled_dataframe
from specviz import charts, scenario, settings
from specviz.advice import evidence
from specviz.i18n import t
from specviz.results import explorer

# How the tables' figures read: speedups with two decimals and ×, α and vLLM's acceptance rate with three.
FORMATS = {**dict.fromkeys(("ceiling", "ceiling_low", "ceiling_high", "floor", "floor_low", "floor_high", "at_alpha",
                            "at_alpha_low", "at_alpha_high", "value"), "%.2f×"),
           **dict.fromkeys(("alpha_needed", "alpha_safe", "alpha_optimistic", "alpha_max", "alpha_certain",
                            "alpha_possible", "acceptance_rate", "acceptance_rate_at_most"), "%.3f"),
           "acceptance_length": "%.2f", "acceptance_length_at_most": "%.2f", "gamma": "%d", "batch": "%d"}


def show_beside_published(sidebar: scenario.Scenario, speedup: float, batch: int | None, every_published: pd.DataFrame,
                          speedups: pd.DataFrame, lang: str) -> None:
    """The claim beside ``speedups``, the published speedups of the same class of setting (of
    ``every_published``, all of them), and the user's own runs paired with their baselines (the
    examples' only where the user has none), with the published figures that reach it and how their
    acceptance was obtained."""
    family, drafting, vendor, kind = evidence.setting_class(sidebar.target, sidebar.draft_id, sidebar.gpu)
    st.caption(t("claims.comparable", lang, shown=len(speedups), every=len(every_published), family=family,
                 drafting=t(f"claims.drafting.{drafting}", lang),
                 hardware=t(f"claims.hardware.{kind}", lang, vendor=vendor)))
    # A slowdown is borne out by figures as slow or slower, at its batch or a smaller one; a gain by
    # figures as high or higher, at its batch or a larger one.
    slow = speedup < 1.0
    bearing = evidence.published_as_slow if slow else evidence.published_reaching
    reaching = bearing(speedups, speedup, batch)
    store = open_store(lang)
    read = store.shown_runs()
    runs, origin = explorer.one_origin(explorer.with_view_columns(read.frame, explorer.example_hashes(store.imports())))
    synthetic = int(explorer.synthetic_acceptance(runs).sum())
    synthetic_wanted = bool(synthetic) and st.toggle(t("claims.with_synthetic", lang, runs=synthetic),
                                                     key="claims_synthetic", help=t("claims.with_synthetic_help", lang))
    runs, left_out = explorer.measured_acceptance(runs, synthetic_wanted)
    if left_out:
        st.caption(t("exp.synthetic_left_out", lang, runs=left_out))
    every_paired = explorer.pair_with_baselines(runs)
    paired = evidence.comparable_runs(every_paired, sidebar, presets(settings.get("SPECVIZ_DATA_DIR")), batch)
    altair_chart(charts.published_speedups(speedups, paired, lang, claim=speedup))
    yours = int((paired["measured_speedup"] <= speedup if slow else paired["measured_speedup"] >= speedup).sum())
    # Without a run of the setting, that none is stored (a manager's pass: "0 of 0 … runs reach it").
    if batch is None:
        key = (("claims.beside_note_no_runs_slow" if slow else "claims.beside_note_no_runs") if paired.empty else
               "claims.beside_note_slow" if slow else "claims.beside_note")
        st.caption(t(key, lang, reaching=len(reaching), published=len(speedups), yours=yours,
                     runs=len(paired), whose=t(f"claims.runs_of.{origin}", lang)))
    else:
        at_batch = speedups["batch"] <= batch if slow else speedups["batch"] >= batch
        key = (("claims.beside_note_batch_no_runs_slow" if slow else "claims.beside_note_batch_no_runs") if paired.empty
               else "claims.beside_note_batch_slow" if slow else "claims.beside_note_batch")
        st.caption(t(key, lang,
                     reaching=len(reaching), batch=batch, at_batch=int(at_batch.sum()), published=len(speedups),
                     any_batch=len(bearing(speedups, speedup)), yours=yours, runs=len(paired),
                     whose=t(f"claims.runs_of.{origin}", lang)))
    if len(paired) < len(every_paired):
        st.caption(t("claims.runs_elsewhere", lang, left=len(every_paired) - len(paired), runs=len(every_paired),
                     whose=t(f"claims.runs_of.{origin}", lang)))
    if read.cut:
        st.caption(t("claims.runs_cut", lang, shown=len(read.frame), stored=read.matching))
    if not reaching.empty:
        how = reaching["acceptance"].fillna("").value_counts()
        st.caption(t("claims.published_acceptance", lang, figures=len(reaching), measured=int(how.get("measured", 0)),
                     synthetic=int(how.get("synthetic", 0)), unsaid=int(how.get("", 0))))
        table = reaching[["study", "hardware", "target_model", "method", "batch", "value", "acceptance", "source"]].assign(
            acceptance=reaching["acceptance"].fillna("").map(lambda how: t(f"claims.acceptance.{how or 'unsaid'}", lang)))
        titled_dataframe(table, lang, placeholder="—",
                         column_config={**number_columns(table, FORMATS, lang),
                                        t("col.source", lang): st.column_config.LinkColumn()})
