"""Calculator: does speculation pay for this α, γ, batch, context and hardware, and why."""

from __future__ import annotations

import math

import streamlit as st

from pages._shared import csv_download, require_router, show_url_notices, url_choice, url_widget
from specviz import calculator, charts, roofline, settings, spec
from specviz.i18n import md, t

require_router()
lang: str = st.session_state.get("lang", "en")
gamma_max = settings.get("SPECVIZ_GAMMA_MAX")
batch_max = settings.get("SPECVIZ_BATCH_MAX")


def at_batch(value: float) -> str:
    """'at batch N', or 'at no batch up to …' for NaN."""
    if math.isnan(value):
        return t("calc.never", lang, batch_max=batch_max)
    return t("calc.at_batch", lang, batch=int(value))


st.title(t("calc.title", lang))
st.caption(t("calc.intro", lang))

if "scenario" not in st.session_state:
    st.info(md("calc.fix_scenario", lang, error=st.session_state.get("scenario_error", "")))
    st.stop()
parts = st.session_state["scenario"]

col_a, col_g, col_b, col_c = st.columns(4)
alpha = url_widget(col_a.slider, t("calc.alpha", lang), 0.0, 1.0, value=0.8, step=0.01, key="alpha",
                   help=t("calc.alpha_help", lang))
# A select_slider refuses a fraction in the URL, where an integer slider would truncate it.
gamma = url_widget(col_g.select_slider, t("calc.gamma", lang), range(1, gamma_max + 1), value=4,
                   key="gamma", help=t("calc.gamma_help", lang))
batch = url_widget(col_b.select_slider, t("calc.batch", lang), calculator.batch_options(batch_max),
                   value=64, key="batch", help=t("calc.batch_help", lang))
context = url_widget(col_c.select_slider, t("calc.context", lang),
                     calculator.context_options(settings.get("SPECVIZ_CONTEXT_MAX")), value=0,
                     key="context", help=t("calc.context_help", lang))

mode = url_choice(st.radio, t("calc.mode", lang), ["roofline", "ratios"], "mode", horizontal=True,
                  format_func=lambda m: t(f"calc.mode.{m}", lang))
knobs: dict[str, float] = {}
verify_cost, draft_cost = 1.0, 0.05
if mode == "ratios":
    col_v, col_d = st.columns(2)
    # Above zero: a verify pass that costs nothing would make the speedup infinite (spec.step_cost).
    verify_cost = url_widget(col_v.number_input, t("calc.verify_cost", lang), 0.01, 100.0, value=1.0,
                             step=0.1, key="verify_cost", help=t("calc.verify_cost_help", lang))
    draft_cost = url_widget(col_d.number_input, t("calc.draft_cost", lang), 0.0, 10.0, value=0.05,
                            step=0.01, key="draft_cost", help=t("calc.draft_cost_help", lang))
else:
    if parts["draft"] is None:
        draft_cost = url_widget(st.number_input, t("calc.draft_cost", lang), 0.0, 10.0, value=0.05,
                                step=0.01, key="draft_cost",
                                help=t("calc.draft_cost_none_help", lang))

    def use_realistic() -> None:
        st.session_state.update(roofline.REALISTIC)

    with st.expander(t("calc.advanced", lang)):
        st.button(t("calc.realistic", lang), on_click=use_realistic, help=t("calc.realistic_help", lang))
        col_1, col_2, col_3, col_4 = st.columns(4)
        knobs = {
            "mfu": url_widget(col_1.slider, t("calc.mfu", lang), 0.05, 1.0, value=1.0, step=0.05,
                              key="mfu"),
            "mbu": url_widget(col_2.slider, t("calc.mbu", lang), 0.05, 1.0, value=1.0, step=0.05,
                              key="mbu"),
            "overlap": url_widget(col_3.slider, t("calc.overlap", lang), 0.0, 1.0, value=1.0, step=0.05,
                                  key="overlap", help=t("calc.overlap_help", lang)),
            "overhead_ms": url_widget(col_4.slider, t("calc.overhead", lang), 0.0, 5.0, value=0.0,
                                      step=0.05, key="overhead_ms",
                                      help=t("calc.overhead_help", lang)),
        }
show_url_notices(st, lang)

scenario = calculator.Scenario(parts["gpu"], parts["target"], parts["draft"], mode=mode,
                               verify_cost=verify_cost, draft_cost=draft_cost, knobs=knobs)
try:
    here = {k: v.item() for k, v in calculator.evaluate_scenario(scenario, alpha, gamma, batch, context).items()}
except ValueError as exc:
    st.error(md("calc.bad_input", lang, error=exc))
    st.stop()

speed = here["speedup"]
need_gb = roofline.footprint_gb(scenario.target, scenario.draft, batch, context, gamma)
if need_gb > scenario.gpu.memory_gb:
    st.warning(t("calc.memory_warning", lang, need=need_gb, have=scenario.gpu.memory_gb))

cols = st.columns(5)
cols[0].metric(t("calc.m.expected_tokens", lang), f"{here['expected_tokens']:.2f}",
               help=t("calc.m.expected_tokens_help", lang, gamma=gamma))
cols[1].metric(t("calc.m.vllm_rate", lang), f"{spec.acceptance_rate_from_alpha(alpha, gamma):.2f}",
               help=t("calc.m.vllm_rate_help", lang, alpha=alpha))
cols[2].metric(t("calc.m.verify_cost", lang), f"{here['verify_cost']:.2f}×")
cols[3].metric(t("calc.m.draft_cost", lang), f"{here['draft_cost']:.3f}×")
cols[4].metric(t("calc.m.speedup", lang), f"{speed:.2f}×", delta=f"{speed - 1:+.0%}",
               delta_color="normal", help=t("calc.m.speedup_help", lang))

if mode == "roofline":
    crossings = calculator.regime_crossovers(scenario, gamma, context, batch_max)
    regime_key, explain_key, figures = calculator.regime_explanation(scenario, here)
    st.badge(t(regime_key, lang), color="green" if regime_key.endswith("memory") else "orange")
    same_ridge = math.isclose(figures["ridge"], figures["datasheet_ridge"])
    st.caption(t("calc.regime_detail" if same_ridge else "calc.regime_detail_shares", lang, **figures))
    st.info(t(explain_key, lang, batch=batch, gamma=gamma, verify_cost=figures["verify_cost"], limit=gamma + 1,
              verify_batch=at_batch(crossings["verify"]), baseline_batch=at_batch(crossings["baseline"])))
    if context:
        st.caption(t("calc.explain.context", lang, context=context))
else:
    st.caption(t("calc.ratios_note", lang))

best_gamma_frame, best_gamma = calculator.gamma_sweep(scenario, alpha, batch, context, gamma_max)
cols = st.columns(3)
cols[0].metric(t("calc.m.breakeven_verify", lang),
               f"{spec.breakeven_verify_cost(alpha, gamma, here['draft_cost']):.2f}×",
               help=t("calc.m.breakeven_verify_help", lang))
breakeven_alpha = spec.breakeven_alpha(gamma, here["verify_cost"], here["draft_cost"])
cols[1].metric(t("calc.m.breakeven_alpha", lang),
               "—" if math.isnan(breakeven_alpha) else f"{breakeven_alpha:.2f}",
               help=t("calc.m.breakeven_alpha_help", lang))
cols[2].metric(t("calc.m.best_gamma", lang), best_gamma,
               help=t("calc.m.best_gamma_help", lang, gamma_max=gamma_max))


def show_table() -> None:
    table = calculator.alpha_table(scenario, gamma, batch, context)
    st.caption(t("calc.table_caption", lang, gamma=gamma, batch=batch))
    st.dataframe(table.rename(columns=lambda c: t(f"col.{c}", lang)), hide_index=True,
                 column_config={t(f"col.{c}", lang): st.column_config.NumberColumn(format="%.3f")
                                for c in table.columns})
    csv_download(table, "specviz_alpha_table.csv", "download_table", lang)


def show_batch() -> None:
    alphas = sorted({0.5, 0.6, 0.7, 0.8, 0.9, round(alpha, 2)})
    curves, crossover = calculator.batch_sweep(scenario, alphas, gamma, context, batch_max)
    st.altair_chart(charts.speedup_vs_batch(curves, crossover, lang), width="stretch")
    st.caption(t("calc.crossover_caption", lang, alpha=alpha,
                 batch=at_batch(crossover.get(round(alpha, 2), float("nan")))))
    csv_download(curves, "specviz_speedup_vs_batch.csv", "download_batch", lang)


def show_heatmap() -> None:
    grid = calculator.heatmap_grid(scenario, gamma, context, batch_max)
    st.altair_chart(charts.speedup_heatmap(grid, lang), width="stretch")
    csv_download(grid, "specviz_heatmap.csv", "download_heatmap", lang)


def show_gamma() -> None:
    st.altair_chart(charts.speedup_vs_gamma(best_gamma_frame, best_gamma, lang), width="stretch")
    st.caption(t("calc.gamma_caption", lang))
    csv_download(best_gamma_frame, "specviz_speedup_vs_gamma.csv", "download_gamma", lang)


def show_roofline() -> None:
    roof, passes = calculator.roofline_points(scenario, gamma, batch, context)
    st.altair_chart(charts.roofline_chart(roof, passes, lang), width="stretch")
    st.caption(t("calc.roofline_caption", lang))


# (view name, renderer, needs the roofline cost model)
VIEWS = (("table", show_table, False), ("batch", show_batch, True), ("heatmap", show_heatmap, True),
         ("gamma", show_gamma, False), ("roofline", show_roofline, True))
# The tabs track which one is open so that only its content is built: Altair's schema validation
# costs tens of milliseconds per chart.
tabs = st.tabs([t(f"calc.tab.{name}", lang) for name, _, _ in VIEWS], key="view", on_change="rerun")
for tab, (_, show, needs_roofline) in zip(tabs, VIEWS):
    if tab.open:
        with tab:
            if needs_roofline and mode != "roofline":
                st.info(t("calc.needs_roofline", lang))
            else:
                show()
