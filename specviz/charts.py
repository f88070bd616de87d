"""Altair chart builders for the calculator. Each returns an ``alt.Chart`` (or layer) and takes
the language of its labels; data come from :mod:`specviz.calculator`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from .i18n import t

__all__ = ["speedup_vs_batch", "speedup_heatmap", "speedup_vs_gamma", "roofline_chart"]

_BREAK_EVEN = pd.DataFrame({"y": [1.0]})


def _break_even_rule(lang: str) -> alt.Chart:
    return alt.Chart(_BREAK_EVEN).mark_rule(color="black", strokeDash=[4, 4]).encode(
        y="y:Q", tooltip=[alt.Tooltip("y:Q", title=t("chart.break_even", lang))])


def speedup_vs_batch(curves: pd.DataFrame, crossover: pd.Series, lang: str = "en") -> alt.LayerChart:
    """Speedup against batch (log x), one line per α, the 1.0 line and each α's crossover marked.

    ``curves`` and ``crossover`` are the two results of :func:`specviz.calculator.batch_sweep`.
    """
    alpha_title = t("chart.alpha", lang)
    domain = [float(curves["batch"].min()), float(curves["batch"].max())]
    x = alt.X("batch:Q", scale=alt.Scale(type="log", domain=domain, nice=False),
              title=t("chart.batch", lang))
    y = alt.Y("speedup:Q", title=t("chart.speedup", lang))
    color = alt.Color("alpha:N", title=alpha_title)
    tooltip = [alt.Tooltip("alpha:N", title=alpha_title), alt.Tooltip("batch:Q", title=t("chart.batch", lang)),
               alt.Tooltip("speedup:Q", title=t("chart.speedup", lang), format=".3f"),
               alt.Tooltip("verify_cost:Q", title=t("chart.verify_cost", lang), format=".2f")]
    lines = alt.Chart(curves).mark_line(point=False).encode(x=x, y=y, color=color, tooltip=tooltip)
    points = crossover.dropna().rename_axis("alpha").reset_index().assign(speedup=1.0)
    marks = alt.Chart(points).mark_point(size=120, shape="diamond", filled=True).encode(
        x=alt.X("crossover_batch:Q", scale=alt.Scale(type="log", domain=domain, nice=False)),
        y="speedup:Q",
        color=alt.Color("alpha:N", title=alpha_title),
        tooltip=[alt.Tooltip("alpha:N", title=alpha_title),
                 alt.Tooltip("crossover_batch:Q", title=t("chart.crossover", lang))])
    return alt.layer(lines, _break_even_rule(lang), marks).properties(height=340)


def speedup_heatmap(grid: pd.DataFrame, lang: str = "en") -> alt.Chart:
    """α × batch heatmap of speedup, diverging at 1.0 (red loses, blue gains)."""
    return alt.Chart(grid).mark_rect().encode(
        x=alt.X("batch:O", title=t("chart.batch", lang)),
        y=alt.Y("alpha:O", sort="descending", title=t("chart.alpha", lang)),
        color=alt.Color("speedup:Q", title=t("chart.speedup", lang),
                        scale=alt.Scale(scheme="redblue", domainMid=1.0)),
        tooltip=[alt.Tooltip("alpha:Q", title=t("chart.alpha", lang)),
                 alt.Tooltip("batch:Q", title=t("chart.batch", lang)),
                 alt.Tooltip("speedup:Q", title=t("chart.speedup", lang), format=".3f")],
    ).properties(height=340)


def speedup_vs_gamma(sweep: pd.DataFrame, best_gamma: int, lang: str = "en") -> alt.LayerChart:
    """Speedup for each draft length γ, the best one highlighted, with the 1.0 line."""
    data = sweep.assign(best=sweep["gamma"] == best_gamma)
    bars = alt.Chart(data).mark_bar().encode(
        x=alt.X("gamma:O", title=t("chart.gamma", lang)),
        y=alt.Y("speedup:Q", title=t("chart.speedup", lang)),
        color=alt.condition("datum.best", alt.value("#1f77b4"), alt.value("#c7c7c7")),
        tooltip=[alt.Tooltip("gamma:O", title=t("chart.gamma", lang)),
                 alt.Tooltip("speedup:Q", title=t("chart.speedup", lang), format=".3f"),
                 alt.Tooltip("expected_tokens:Q", title=t("chart.expected_tokens", lang), format=".3f"),
                 alt.Tooltip("verify_cost:Q", title=t("chart.verify_cost", lang), format=".2f")])
    return alt.layer(bars, _break_even_rule(lang)).properties(height=300)


def roofline_chart(roof: pd.DataFrame, passes: pd.DataFrame, lang: str = "en") -> alt.LayerChart:
    """Log-log roofline: attainable TFLOPS against FLOP/byte, with the decode and verify passes."""
    x = alt.X("intensity:Q", title=t("chart.intensity", lang),
              scale=alt.Scale(type="log", nice=False,
                              domain=[float(roof["intensity"].min()), float(roof["intensity"].max())]))
    y = alt.Y("tflops:Q", scale=alt.Scale(type="log"), title=t("chart.tflops", lang))
    line = alt.Chart(roof).mark_line(color="gray").encode(x=x, y=y)
    labelled = passes.assign(label=passes["pass"].map(lambda p: t(f"chart.pass.{p}", lang)))
    dots = alt.Chart(labelled).mark_point(size=160, filled=True).encode(
        x=x, y=y, color=alt.Color("label:N", title=t("chart.pass", lang)),
        tooltip=[alt.Tooltip("label:N", title=t("chart.pass", lang)),
                 alt.Tooltip("positions:Q", title=t("chart.positions", lang)),
                 alt.Tooltip("intensity:Q", title=t("chart.intensity", lang), format=".1f"),
                 alt.Tooltip("tflops:Q", title=t("chart.tflops", lang), format=".1f")])
    return alt.layer(line, dots).properties(height=340)
