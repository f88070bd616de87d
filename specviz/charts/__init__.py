"""Altair chart builders for the calculator, the explorer, Live and Claims. Each returns an
``alt.Chart`` (or layer) and takes the language of its labels; data come from
:mod:`specviz.calculator` and :mod:`specviz.results.explorer`. The Live page's charts are in
:mod:`specviz.charts.live`, the layout every chart with a legend shares in :mod:`specviz.charts.layout`,
how a chart's spec is written for the browser in :mod:`specviz.charts.spec`.
The charts import only the base (:mod:`specviz.i18n`) and each other."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from ..i18n import catalogue, t
from .layout import FIT_WIDTH, series_legend
from .live import LIVE_CHARTS, LIVE_FIGURES, live_over_time, per_position
from .spec import compiled_spec, vega_lite_spec

__all__ = ["vega_lite_spec", "compiled_spec", "speedup_vs_batch_spec", "claim_by_batch", "tokens_per_step", "gamma_map", "speedup_vs_batch", "speedup_heatmap", "speedup_vs_gamma", "roofline_chart", "metric_vs_load",
           "measured_speedup", "acceptance_by_workload", "measured_vs_predicted", "measured_vs_predicted_spec", "published_speedups",
           "LIVE_CHARTS", "LIVE_FIGURES", "live_over_time", "per_position", "request_acceptance"]

# Every encoding is a channel object (alt.Y("y:Q"), not "y:Q"): Altair resolves a shorthand string or
# a dict against the whole Vega-Lite schema, about 15 ms each, which a page pays on every rerun.

_BREAK_EVEN = pd.DataFrame({"y": [1.0]})


def _labelled_rule(data: pd.DataFrame, field: str, label: str, colour: str, axis_title: str, right: bool = False,
                   **mark: Any) -> list[alt.Chart]:
    """A horizontal rule at ``data[field]`` and ``label`` at its left end, as two layers (a rule has
    no legend entry: the colour alone would not say what it is), on the y axis titled ``axis_title``.

    Layers that share an axis join their titles ("Speedup (×), Break-even"), and one without a
    title or an axis takes the shared axis's away: the rule repeats the chart's own title."""
    base = alt.Chart(data).encode(y=alt.Y(f"{field}:Q", title=axis_title))
    return [base.mark_rule(color=colour, **mark).encode(tooltip=[alt.Tooltip(f"{field}:Q", title=label, format=".2f")]),
            base.mark_text(align="right" if right else "left", baseline="bottom", dx=-4 if right else 4, dy=-3,
                           color=colour).encode(x=alt.XValue("width" if right else 0), text=alt.TextValue(label))]


def _claim_rule(claim: float, lang: str, axis_title: str) -> list[alt.Chart]:
    """A claimed speedup as a red horizontal rule, labelled at its right end: the break-even's label is
    at the left, and a claim near 1 had printed over it (a manager's pass)."""
    return _labelled_rule(pd.DataFrame({"claim": [claim]}), "claim", f"{t('chart.claim', lang)} {claim:.2f}×",
                          "#d62728", axis_title, right=True, strokeWidth=2)


def _break_even_rule(lang: str, axis_title: str) -> list[alt.Chart]:
    """The speedup of 1 (no gain) as a dashed rule, labelled."""
    return _labelled_rule(_BREAK_EVEN, "y", t("chart.break_even", lang), "black", axis_title, strokeDash=[4, 4])


def _batch_frames(curves: pd.DataFrame, crossings: pd.DataFrame, lang: str, band: pd.DataFrame | None,
                  limit: int | None, here: tuple[float, float] | None,
                  yours: pd.DataFrame | None) -> dict[str, pd.DataFrame]:
    """The frames :func:`speedup_vs_batch` draws, by role, and ``extent``, the batch axis's ends (the
    sweep's, also where the memory's limit cuts what is drawn); a layer that is not drawn has none
    (its memory limit outside the batch axis, no band, no point of the scenario's, no curve of the
    user's α)."""
    # Each line's legend entry: a reference α by its value, the user's α as theirs, so that the
    # reference α keep their colours as the user's moves (and the spec stays the same).
    yours_label = t("chart.your_alpha", lang)
    your_alpha = float(yours["alpha"].iloc[0]) if yours is not None else None
    # The batch axis spans the sweep; past the memory's limit no curve, band or crossing is drawn: a
    # speedup there would be of a server that cannot run (the heatmap's cells there are dashes).
    extent = pd.DataFrame({"batch": [float(curves["batch"].min()), float(curves["batch"].max())]})
    if limit is not None:
        curves, crossings = curves[curves["batch"] <= limit], crossings[crossings["batch"] <= limit]
        band = band[band["batch"] <= limit] if band is not None else None
        yours = yours[yours["batch"] <= limit] if yours is not None else None
    is_yours = (np.isclose(crossings["alpha"], your_alpha) if your_alpha is not None
                else np.zeros(len(crossings), dtype=bool))
    frames = {"curves": curves.assign(line=curves["alpha"].round(2).astype(str)), "break_even": _BREAK_EVEN,
              "extent": extent,
              "crossings": crossings.assign(speedup=1.0, crossing=np.where(
                  crossings["rises"], t("chart.pays_again", lang), t("chart.loses_here", lang)),
                  line=np.where(is_yours, yours_label, crossings["alpha"].round(2).astype(str)))}
    if band is not None:
        frames["band"] = band
    if limit is not None and extent["batch"].min() <= limit <= extent["batch"].max():
        frames["limit"] = _memory_limit_frame(limit, lang)
    if here is not None:
        frames["here"] = pd.DataFrame({"batch": [here[0]], "speedup": [here[1]]})
    if yours is not None:
        frames["yours"] = yours.assign(line=yours_label)
    return frames


# The reference α's colours in order (Vega's tableau10), and the user's α's.
_LINE_COLOURS = ("#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d",
                 "#bab0ac")
_YOURS_COLOUR = "#000000"
_YOURS_WIDTH = 5  # px; Vega's default line is 2, so a reference line over it leaves 1.5 px of black each side


def _line_scale(frames: Mapping[str, pd.DataFrame], lang: str) -> alt.Scale:
    """The batch chart's colours: one per reference α, in α's order, and black for the user's α."""
    reference = sorted(frames["curves"]["line"].unique(), key=float)
    colours = [_LINE_COLOURS[i % len(_LINE_COLOURS)] for i in range(len(reference))]
    if "yours" in frames:
        return alt.Scale(domain=[*reference, t("chart.your_alpha", lang)], range=[*colours, _YOURS_COLOUR])
    return alt.Scale(domain=reference, range=colours)


def _batch_layers(frames: Mapping[str, pd.DataFrame], lang: str) -> alt.LayerChart:
    """:func:`speedup_vs_batch`'s chart of the frames :func:`_batch_frames` made."""
    curves = frames["curves"]
    alpha_title = t("chart.alpha", lang)
    domain = [float(frames["extent"]["batch"].min()), float(frames["extent"]["batch"].max())]
    x = alt.X("batch:Q", scale=alt.Scale(type="log", domain=domain, nice=False),
              title=t("chart.batch", lang))
    y = alt.Y("speedup:Q", title=t("chart.speedup", lang))
    color = alt.Color("line:N", title=alpha_title, scale=_line_scale(frames, lang))
    tooltip = [alt.Tooltip("alpha:N", title=alpha_title), alt.Tooltip("batch:Q", title=t("chart.batch", lang)),
               alt.Tooltip("speedup:Q", title=t("chart.speedup", lang), format=".3f"),
               alt.Tooltip("verify_cost:Q", title=t("chart.verify_cost", lang), format=".2f")]
    lines = [alt.Chart(curves).mark_line(point=False).encode(x=x, y=y, color=color, tooltip=tooltip)]
    if "yours" in frames:
        # The user's α beneath the others and wider: a reference α equal to it shows inside it (drawn
        # over them, it hid the reference curve of its α).
        lines.insert(0, alt.Chart(frames["yours"]).mark_line(point=False, strokeWidth=_YOURS_WIDTH).encode(
            x=x, y=y, color=color, tooltip=tooltip))
    marks = alt.Chart(frames["crossings"]).mark_point(size=120, filled=True).encode(
        x=alt.X("batch:Q", scale=alt.Scale(type="log", domain=domain, nice=False)),
        y=alt.Y("speedup:Q"),
        color=color,
        shape=alt.Shape("rises:N", scale=alt.Scale(domain=[False, True], range=["diamond", "triangle-up"]), legend=None),
        tooltip=[alt.Tooltip("alpha:N", title=alpha_title), alt.Tooltip("crossing:N", title=t("chart.crossing", lang)),
                 alt.Tooltip("batch:Q", title=t("chart.batch", lang))])
    layers = [*lines, *_labelled_rule(frames["break_even"], "y", t("chart.break_even", lang), "black",
                                     t("chart.speedup", lang), strokeDash=[4, 4]), marks]
    if "band" in frames:
        band_x = alt.X("batch:Q", scale=alt.Scale(type="log", domain=domain, nice=False))
        area = alt.Chart(frames["band"]).mark_area(opacity=0.2, color="gray").encode(
            x=band_x, y=alt.Y("low:Q"), y2=alt.Y2("high:Q"),
            tooltip=[alt.Tooltip("batch:Q", title=t("chart.batch", lang)),
                     alt.Tooltip("low:Q", title=t("chart.band_low", lang), format=".3f"),
                     alt.Tooltip("high:Q", title=t("chart.band_high", lang), format=".3f")])
        bound = alt.Chart(frames["band"]).mark_line(color="gray", strokeDash=[6, 4]).encode(
            x=band_x, y=alt.Y("ideal:Q"),
            tooltip=[alt.Tooltip("batch:Q", title=t("chart.batch", lang)),
                     alt.Tooltip("ideal:Q", title=t("chart.ideal", lang), format=".3f")])
        layers = [area, bound, *layers]
    if "limit" in frames:
        layers += _memory_wall(frames["limit"], alt.X("batch:Q", scale=alt.Scale(type="log", domain=domain, nice=False)),
                               lang)
    if "here" in frames:
        layers.append(alt.Chart(frames["here"]).mark_point(size=220, shape="circle", filled=False, color="black",
                                                           strokeWidth=2).encode(
            x=alt.X("batch:Q", scale=alt.Scale(type="log", domain=domain, nice=False)), y=alt.Y("speedup:Q"),
            tooltip=[alt.Tooltip("batch:Q", title=t("chart.batch", lang)),
                     alt.Tooltip("speedup:Q", title=t("chart.here", lang), format=".3f")]))
    return alt.layer(*layers, height=340)


def speedup_vs_batch(curves: pd.DataFrame, crossings: pd.DataFrame, lang: str = "en",
                     band: pd.DataFrame | None = None, limit: int | None = None,
                     here: tuple[float, float] | None = None, yours: pd.DataFrame | None = None) -> alt.LayerChart:
    """Speedup against batch (log x), one line per α, the 1.0 line and each α's crossings marked (a
    diamond where it falls below 1, a triangle where it rises to 1 again);
    with ``band`` (:func:`specviz.calculator.band_vs_batch`), one α's band shaded and its ideal
    roofline (the hardware alone, no engine costs) drawn dashed; ``limit``, the largest batch the
    speculative server's memory holds, as a red vertical rule, nothing drawn past it (no server
    reaches those batches); ``here``, the scenario's (batch, speedup), as a ringed point; ``yours``, the
    curve of the user's α, wider and black, named as theirs in the legend, beneath the others (which
    keep their colours; one at the user's α shows inside it): a dataset of its own, so that as α moves the others' data stay the
    same and the browser leaves them as drawn (Vega does not evaluate an unchanged dataset again).

    ``curves`` and ``crossings`` are the two results of :func:`specviz.calculator.batch_sweep`
    (``crossings`` those of every α drawn), ``yours`` the first for one α.
    """
    return _batch_layers(_batch_frames(curves, crossings, lang, band, limit, here, yours), lang)


def speedup_vs_batch_spec(curves: pd.DataFrame, crossings: pd.DataFrame, lang: str = "en",
                          band: pd.DataFrame | None = None, limit: int | None = None,
                          here: tuple[float, float] | None = None, yours: pd.DataFrame | None = None) -> dict[str, Any]:
    """:func:`vega_lite_spec` of :func:`speedup_vs_batch`, the chart built once for each language,
    batch axis and set of layers (:func:`compiled_spec`): the calculator redraws it at every move of α."""
    frames = _batch_frames(curves, crossings, lang, band, limit, here, yours)
    key = ("speedup_vs_batch", lang, *frames["extent"]["batch"], *sorted(frames),
           *sorted(frames["curves"]["line"].unique()))  # the colour scale's domain
    return compiled_spec(key, frames, lambda given: _batch_layers(given, lang))


def speedup_heatmap(grid: pd.DataFrame, lang: str = "en") -> alt.LayerChart:
    """α × batch heatmap of speedup, diverging at 1.0 (red loses, blue gains); a batch the memory
    does not hold with the draft (``fits`` False, :func:`specviz.calculator.heatmap_grid`) is a red
    dash, not a colour: it has no speedup, as in the Deploy view's map."""
    x, y = alt.X("batch:O", title=t("chart.batch", lang)), alt.Y("alpha:O", sort="descending", title=t("chart.alpha", lang))
    where = [alt.Tooltip("alpha:Q", title=t("chart.alpha", lang)), alt.Tooltip("batch:Q", title=t("chart.batch", lang))]
    cells = alt.Chart(grid[grid["fits"]]).mark_rect().encode(
        x=x, y=y, color=alt.Color("speedup:Q", title=t("chart.speedup", lang), scale=alt.Scale(scheme="redblue", domainMid=1.0)),
        tooltip=[*where, alt.Tooltip("speedup:Q", title=t("chart.speedup", lang), format=".3f")])
    out = grid[~grid["fits"]].assign(label=t("chart.no_fit_draft", lang), dash="—")
    beyond = alt.Chart(out).mark_text(fontSize=11, color="#d62728").encode(
        x=x, y=y, text=alt.Text("dash:N"), tooltip=[*where, alt.Tooltip("label:N", title=t("chart.memory_limit_title", lang))])
    return alt.layer(cells, beyond, height=340)


def speedup_vs_gamma(sweep: pd.DataFrame, best_gamma: int, lang: str = "en") -> alt.LayerChart:
    """Speedup for each draft length γ, the best one highlighted, each with its band (``low`` to
    ``high``, :func:`specviz.calculator.gamma_sweep`) as a whisker, with the 1.0 line."""
    data = sweep.assign(best=sweep["gamma"] == best_gamma)
    x = alt.X("gamma:O", title=t("chart.gamma", lang))
    tooltip = [alt.Tooltip("gamma:O", title=t("chart.gamma", lang)),
               alt.Tooltip("speedup:Q", title=t("chart.speedup", lang), format=".3f"),
               alt.Tooltip("low:Q", title=t("chart.band_low", lang), format=".3f"),
               alt.Tooltip("high:Q", title=t("chart.band_high", lang), format=".3f"),
               alt.Tooltip("expected_tokens:Q", title=t("chart.expected_tokens", lang), format=".3f"),
               alt.Tooltip("verify_cost:Q", title=t("chart.verify_cost", lang), format=".2f")]
    bars = alt.Chart(data).mark_bar().encode(
        x=x, y=alt.Y("speedup:Q", title=t("chart.speedup", lang)),
        color=alt.ColorValue(value="#c7c7c7", condition={"test": "datum.best", "value": "#1f77b4"}), tooltip=tooltip)
    whiskers = alt.Chart(data).mark_rule(color="#333333").encode(x=x, y=alt.Y("low:Q"), y2=alt.Y2("high:Q"),
                                                                 tooltip=tooltip)
    return alt.layer(bars, whiskers, *_break_even_rule(lang, t("chart.speedup", lang)), height=300)


def roofline_chart(roof: pd.DataFrame, passes: pd.DataFrame, lang: str = "en") -> alt.LayerChart:
    """Log-log roofline: attainable TFLOPS against FLOP/byte, with the decode and verify passes and
    the ridge (``roof.attrs["ridge"]``, :func:`specviz.calculator.roofline_points`) marked and labelled."""
    x = alt.X("intensity:Q", title=t("chart.intensity", lang),
              scale=alt.Scale(type="log", nice=False,
                              domain=[float(roof["intensity"].min()), float(roof["intensity"].max())]))
    y = alt.Y("tflops:Q", scale=alt.Scale(type="log"), title=t("chart.tflops", lang))
    # Its tooltip as the points' (Vega-Lite's own showed "37.3521852841").
    line = alt.Chart(roof).mark_line(color="gray").encode(
        x=x, y=y, tooltip=[alt.Tooltip("intensity:Q", title=t("chart.intensity", lang), format=".1f"),
                           alt.Tooltip("tflops:Q", title=t("chart.tflops", lang), format=".1f")])
    # Each pass named with its positions: γ + 1 a sequence for the verify pass, and a steady load's
    # prompts in both (specviz.calculator.roofline_points).
    labelled = passes.assign(label=[t(f"chart.pass.{kind}", lang, positions=positions)
                                    for kind, positions in zip(passes["pass"], passes["positions"])])
    dots = alt.Chart(labelled).mark_point(size=160, filled=True).encode(
        # Below the plot, never cut: on the right Vega-Lite cut "Plain decode (256 positio…" at 1,280 px,
        # and at 800 px its title ran into the ridge's label.
        x=x, y=y, color=alt.Color("label:N", legend=series_legend(t("chart.pass", lang), labelled["label"])),
        tooltip=[alt.Tooltip("label:N", title=t("chart.pass", lang)),
                 alt.Tooltip("positions:Q", title=t("chart.positions", lang)),
                 alt.Tooltip("intensity:Q", title=t("chart.intensity", lang), format=".1f"),
                 alt.Tooltip("tflops:Q", title=t("chart.tflops", lang), format=".1f")])
    ridge = alt.Chart(pd.DataFrame({"intensity": [roof.attrs["ridge"]]})).encode(x=x)
    ridge_label = t("chart.ridge", lang, ridge=roof.attrs["ridge"])
    rule = ridge.mark_rule(color="gray", strokeDash=[4, 4]).encode(
        tooltip=[alt.Tooltip("intensity:Q", title=ridge_label, format=".0f")])
    # Beside the rule on the side with room: right of it a ridge in the right part of the axis ran off
    # the chart (H200, NVFP4: "Ridge 155 FLOP/byte" cut at 800 px).
    low, high = float(roof["intensity"].min()), float(roof["intensity"].max())
    at = math.log(roof.attrs["ridge"] / low) / math.log(high / low) if high > low > 0 else 0.0
    left = at > 0.55
    label = ridge.mark_text(align="right" if left else "left", baseline="top", dx=-4 if left else 4, dy=4,
                            color="gray").encode(y=alt.YValue(0), text=alt.TextValue(ridge_label))
    return alt.layer(line, rule, label, dots, autosize=FIT_WIDTH, height=340)


def _natural_order(values: pd.Series) -> list[str]:
    """Distinct values with numbers in numeric order first (4 before 16), then text."""
    def key(value: str) -> tuple:
        try:
            return (0, float(value), "")
        except ValueError:
            return (1, 0.0, value)
    return sorted(values.dropna().unique(), key=key)


# Dash patterns that tell apart the groups beyond the first 20, which share tableau20's colours:
# group i has colour i mod 20 and dash i // 20 (the last pattern repeats past 100 groups).
_DASHES = ([1, 0], [6, 3], [2, 2], [8, 3, 2, 3], [12, 4])


def _group_style(groups: list[str], legend: alt.Legend) -> dict[str, alt.Color | alt.StrokeDash]:
    """The encodings that tell the lines of ``groups`` apart, each group the same in every chart given
    the same list: Vega's 10 colours up to 10 groups, tableau20's up to 20, beyond that also a dash
    pattern (in the same legend: both channels encode ``group`` with one title)."""
    if len(groups) <= 10:
        return {"color": alt.Color("group:N", scale=alt.Scale(domain=groups), legend=legend)}
    style = {"color": alt.Color("group:N", scale=alt.Scale(domain=groups, scheme="tableau20"), legend=legend)}
    if len(groups) > 20:
        dashes = [_DASHES[min(i // 20, len(_DASHES) - 1)] for i in range(len(groups))]
        style["strokeDash"] = alt.StrokeDash("group:N", scale=alt.Scale(domain=groups, range=dashes), legend=legend)
    return style


# Labels of a load axis: a sweep of doubling loads from 1 to 2,048 fits a 420 px chart; Vega hides
# any label that would overlap another.
_LOAD_TICKS = 12


def metric_vs_load(runs: pd.DataFrame, metric: str, axis: str, peaks: pd.DataFrame | None = None,
                   group_title: str | None = None, lang: str = "en") -> alt.LayerChart:
    """A metric against one load axis (concurrency or request rate, log x), one line per ``group``
    and ``series``, told apart by group (:func:`_group_style`), through the mean of the runs at each
    load, each run a point (a sweep's repeats of one setting, ``vllm bench sweep``'s run=0 and run=1,
    had drawn a line up and down through each at one load); the peak of each sweep ringed when
    ``peaks`` is given (:func:`specviz.results.explorer.sweep_peaks`, on the same means).

    ``runs`` come from :func:`specviz.results.explorer.on_load_axis` (their ``load`` is the ``axis``) and
    :func:`specviz.results.explorer.with_group`; ``group_title`` names the group key in the legend. The x
    domain is the load range of all ``runs``, not only of those with this metric, so that the charts
    of one set of runs line up, and its labels are at loads measured.
    """
    # Only the columns drawn: Altair copies and sanitises every column of the data it is given.
    named = runs[["group", "series", "load", metric, "source_file"]].assign(
        group=runs["group"].fillna(t("exp.not_set", lang)))
    data = named.dropna(subset=[metric, "load"])
    # Every group of the runs, not only those with this metric: a line keeps its colour from chart to chart.
    groups = _natural_order(named["group"])
    group_title = group_title or t("chart.series", lang)
    loads = named["load"].dropna()
    domain = [float(loads.min()), float(loads.max())] if loads.nunique() > 1 else alt.Undefined
    # A log axis labels its powers of ten only (points at 16 ended at a tick of 10): labelled at the
    # loads measured instead, at most _LOAD_TICKS of them spread over the sweep, both ends included.
    measured = np.unique(loads.to_numpy(dtype=float))
    ticks = measured[np.unique(np.linspace(0, measured.size - 1, min(measured.size, _LOAD_TICKS)).round().astype(int))]
    # Padded a few pixels: points and peak rings at the ends had been cut in half by the plot's edges.
    x = alt.X("load:Q", scale=alt.Scale(type="log", domain=domain, padding=12), title=t(f"col.{axis}", lang),
              axis=alt.Axis(values=ticks.tolist(), format=",~g"))
    y = alt.Y(f"{metric}:Q", title=t(f"col.{metric}", lang))
    tooltip = [alt.Tooltip("group:N", title=group_title), alt.Tooltip("series:N", title=t("chart.series", lang)),
               alt.Tooltip("load:Q", title=t(f"col.{axis}", lang)),
               alt.Tooltip(f"{metric}:Q", title=t(f"col.{metric}", lang), format=",.2f"),
               alt.Tooltip("source_file:N", title=t("col.source_file", lang))]
    style = _group_style(groups, series_legend(group_title, named["group"]))
    # Aggregated in the spec: every field the line encodes is one it groups by, so no file name here.
    mean = alt.Y(field=metric, aggregate="mean", type="quantitative", title=t(f"col.{metric}", lang))
    lines = alt.Chart(data).mark_line().encode(
        x=x, y=mean, **style, detail=alt.Detail("series:N"),
        tooltip=[*tooltip[:3], alt.Tooltip(field=metric, aggregate="mean", type="quantitative", format=",.2f",
                                           title=t("chart.mean_of_runs", lang, metric=t(f"col.{metric}", lang))),
                 alt.Tooltip(aggregate="count", type="quantitative", title=t("chart.runs_at_load", lang))])
    runs_drawn = alt.Chart(data).mark_point(filled=True, size=40).encode(
        x=x, y=y, color=style["color"], detail=alt.Detail("series:N"), tooltip=tooltip)
    layers = [lines, runs_drawn]
    if peaks is not None and not peaks.empty:
        layers.append(alt.Chart(peaks[["series", "load", metric]]).mark_point(size=260, color="black", strokeWidth=2).encode(
            x=x, y=y, tooltip=[alt.Tooltip("series:N", title=t("chart.peak", lang)),
                               alt.Tooltip("load:Q", title=t(f"col.{axis}", lang)),
                               alt.Tooltip(f"{metric}:Q", title=t(f"col.{metric}", lang), format=",.1f")]))
    return alt.layer(*layers, autosize=FIT_WIDTH, height=320)


def measured_speedup(paired: pd.DataFrame, crossover: pd.DataFrame, lang: str = "en") -> alt.LayerChart:
    """Measured speedup of each speculative run over its baseline against concurrency, with the
    1.0 line and each series' crossover concurrency marked: each series' line through the mean of its
    runs at a concurrency, each run a point (as :func:`metric_vs_load`: a sweep's repeats)."""
    x = alt.X("concurrency:Q", scale=alt.Scale(type="log"), title=t("col.concurrency", lang))
    speedup, series = t("col.measured_speedup", lang), t("chart.series", lang)
    color = alt.Color("series:N", legend=series_legend(series, paired["series"]))
    # Only the columns drawn (here and below): a run has some sixty, which the browser would parse.
    drawn = alt.Chart(paired[["series", "concurrency", "measured_speedup"]])
    lines = drawn.mark_line().encode(
        x=x, y=alt.Y(field="measured_speedup", aggregate="mean", type="quantitative", title=speedup), color=color,
        tooltip=[alt.Tooltip("series:N", title=series), alt.Tooltip("concurrency:Q", title=t("col.concurrency", lang)),
                 alt.Tooltip(field="measured_speedup", aggregate="mean", type="quantitative", format=".3f",
                             title=t("chart.mean_of_runs", lang, metric=speedup)),
                 alt.Tooltip(aggregate="count", type="quantitative", title=t("chart.runs_at_load", lang))])
    points = drawn.mark_point(filled=True, size=40).encode(
        x=x, y=alt.Y("measured_speedup:Q", title=speedup), color=color,
        tooltip=[alt.Tooltip("series:N", title=series), alt.Tooltip("concurrency:Q", title=t("col.concurrency", lang)),
                 alt.Tooltip("measured_speedup:Q", title=speedup, format=".3f")])
    crossings = crossover.dropna(subset=["crossover_concurrency"])[["series", "crossover_concurrency"]]
    marks = alt.Chart(crossings.assign(y=1.0)).mark_point(
        size=140, shape="diamond", filled=True, color="black").encode(
        x=alt.X("crossover_concurrency:Q", scale=alt.Scale(type="log")), y=alt.Y("y:Q"),
        tooltip=[alt.Tooltip("series:N", title=t("chart.series", lang)),
                 alt.Tooltip("crossover_concurrency:Q", title=t("col.crossover_concurrency", lang))])
    return alt.layer(lines, points, *_break_even_rule(lang, speedup), marks, autosize=FIT_WIDTH,
                     height=320)


# The figures of acceptance_by_workload, each a bar panel with its axis format.
_ACCEPTANCE_PANELS = {"acceptance_length": ".2f", "zero_accept_rate": "%"}


def acceptance_by_workload(summary: pd.DataFrame, lang: str = "en") -> alt.VConcatChart:
    """Mean acceptance length and zero-accept share per workload, one above the other (side by side,
    the second would run off a 1,000 px page); only the figures that some row has (no empty panel).
    Each draft setting (``draft_setting``) is a bar of its own within a workload, coloured by it; the
    examples and the user's runs (``origin``) are separate bars too, the examples paler.

    ``summary`` comes from :func:`specviz.results.explorer.workload_acceptance`.
    """
    data = summary.assign(origin=summary["origin"].map(lambda o: t(f"exp.origin.{o}", lang)))
    data["bar"] = data["origin"] + " · " + data["draft_setting"]
    style = {"color": alt.Color("draft_setting:N", legend=series_legend(t("col.draft_setting", lang), data["draft_setting"]))}
    if data["origin"].nunique() > 1:
        origins = [t(f"exp.origin.{o}", lang) for o in ("user", "example")]
        style["opacity"] = alt.Opacity("origin:N", scale=alt.Scale(domain=origins, range=[1.0, 0.45]),
                                       legend=series_legend(t("col.origin", lang), data["origin"]))
    panels = [alt.Chart(data).mark_bar().encode(
        # labelLimit 0: Streamlit's theme cut "(no workload named)" to "(no workload na…".
        y=alt.Y("workload:N", title=t("col.workload", lang), axis=alt.Axis(labelLimit=0)),
        yOffset=alt.YOffset("bar:N"), **style,
        x=alt.X(f"{figure}:Q", title=t(f"col.{figure}", lang), axis=alt.Axis(format=number_format)),
        tooltip=[alt.Tooltip("workload:N", title=t("col.workload", lang)),
                 alt.Tooltip("draft_setting:N", title=t("col.draft_setting", lang)),
                 alt.Tooltip("origin:N", title=t("col.origin", lang)),
                 alt.Tooltip(f"{figure}:Q", title=t(f"col.{figure}", lang),
                             format=".0%" if number_format == "%" else number_format),
                 alt.Tooltip("runs:Q", title=t("col.runs", lang))])
        for figure, number_format in _ACCEPTANCE_PANELS.items() if data[figure].notna().any()]
    return alt.vconcat(*panels)


def _predicted_frames(predicted: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The frames :func:`measured_vs_predicted` draws: the runs with a prediction, and the diagonal
    from 0 to a tenth past the largest figure, which sets both axes' extent."""
    data = predicted.dropna(subset=["predicted_speedup"])[
        ["series", "concurrency", "alpha", "setting", "measured_speedup", "predicted_speedup", "predicted_low",
         "predicted_high", "error", "own_setting"]]  # only the columns drawn: a run has some sixty
    top = float(max(data["measured_speedup"].max(), data["predicted_high"].max(), 1.0)) * 1.1
    return {"runs": data, "diagonal": pd.DataFrame({"x": [0.0, top], "y": [0.0, top]})}


def _predicted_layers(frames: Mapping[str, pd.DataFrame], lang: str) -> alt.LayerChart:
    """:func:`measured_vs_predicted`'s chart of the frames :func:`_predicted_frames` made. The axes
    take their extent from the diagonal's data, not from a domain written in the spec: the spec stays
    the same when the runs' figures move, and the browser updates the chart in place."""
    data = frames["runs"]
    square = alt.Scale(nice=False)  # both axes 0 to the diagonal's end: the data's extent, exactly
    diagonal = alt.Chart(frames["diagonal"]).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x=alt.X("x:Q", scale=square), y=alt.Y("y:Q", scale=square))
    # One colour encoding for both layers: a layer without a legend would drop the shared one. Vega's
    # strong colours, not the Streamlit theme's, whose second is a pale blue that barely shows on white.
    scheme = "tableau10" if data["series"].nunique() <= 10 else "tableau20"
    color = alt.Color("series:N", scale=alt.Scale(scheme=scheme), legend=series_legend(t("chart.series", lang), data["series"]))
    # A run predicted on the sidebar's setting is a hollow diamond (the page's warning says so): its
    # distance from the diagonal is the gap between two setups, not the model's miss (an analyst's pass:
    # MTP runs of a model of no preset had sat 2× off the line as if missed).
    own = "datum.own_setting"
    dots = alt.Chart(data).mark_point(size=90, filled=True).encode(
        x=alt.X("predicted_speedup:Q", title=t("col.predicted_speedup", lang), scale=square),
        y=alt.Y("measured_speedup:Q", title=t("col.measured_speedup", lang), scale=square),
        color=color, shape=alt.ShapeValue(value="diamond", condition={"test": own, "value": "circle"}),
        fillOpacity=alt.FillOpacityValue(value=0.0, condition={"test": own, "value": 1.0}),
        tooltip=[alt.Tooltip("series:N", title=t("chart.series", lang)),
                 alt.Tooltip("concurrency:Q", title=t("col.concurrency", lang)),
                 alt.Tooltip("alpha:Q", title=t("col.alpha", lang), format=".3f"),
                 alt.Tooltip("setting:N", title=t("col.setting", lang)),
                 alt.Tooltip("measured_speedup:Q", title=t("col.measured_speedup", lang), format=".3f"),
                 alt.Tooltip("predicted_speedup:Q", title=t("col.predicted_speedup", lang), format=".3f"),
                 alt.Tooltip("predicted_low:Q", title=t("col.predicted_low", lang), format=".3f"),
                 alt.Tooltip("predicted_high:Q", title=t("col.predicted_high", lang), format=".3f"),
                 alt.Tooltip("error:Q", title=t("col.error", lang), format="+.3f")])
    bands = alt.Chart(data).mark_rule(opacity=0.85, strokeWidth=3).encode(
        x=alt.X("predicted_low:Q", scale=square), x2=alt.X2("predicted_high:Q"),
        y=alt.Y("measured_speedup:Q", scale=square), color=color)
    return alt.layer(diagonal, bands, dots, autosize=FIT_WIDTH, height=340)


def measured_vs_predicted(predicted: pd.DataFrame, lang: str = "en") -> alt.LayerChart:
    """Measured against predicted speedup per run, each prediction's band as a horizontal bar
    (``predicted_low`` to ``predicted_high``, :func:`specviz.results.prediction.predict`), with the line where
    they agree; both axes from 0 to a tenth past the largest figure."""
    return _predicted_layers(_predicted_frames(predicted), lang)


def measured_vs_predicted_spec(predicted: pd.DataFrame, lang: str = "en") -> dict[str, Any]:
    """:func:`vega_lite_spec` of :func:`measured_vs_predicted`, the chart built once for each language,
    colour scheme and legend layout (:func:`compiled_spec`): the Explorer redraws it at every move of
    its context."""
    frames = _predicted_frames(predicted)
    series = frames["runs"]["series"]
    legend = series_legend(None, series)
    key = ("measured_vs_predicted", lang, series.nunique() <= 10, legend.columns)
    return compiled_spec(key, frames, lambda given: _predicted_layers(given, lang))


def metric_titles(metrics: pd.Series, lang: str = "en") -> pd.Series:
    """Published results' metric ids (``walltime_speedup``) by their titles (``metric.<id>``), an id
    the catalogue does not know (a data folder of one's own) as it is."""
    known = catalogue("en")
    return metrics.map(lambda metric: t(f"metric.{metric}", lang) if f"metric.{metric}" in known else metric)


def published_speedups(published: pd.DataFrame, paired: pd.DataFrame, lang: str = "en",
                       claim: float | None = None) -> alt.LayerChart:
    """Published speedups against batch (triangles, one colour per study, twenty colours before one
    repeats) beside the stored runs' measured ones (black circles, with a legend entry of their own:
    tableau20 has two greys a study takes, whose triangles the runs' grey had matched);
    a ``claim`` checked against them as a red rule. Either set of points, when empty, is left out
    (with it its legend)."""
    x = alt.X("batch:Q", scale=alt.Scale(type="log"), title=t("col.concurrency", lang))
    shown = ("study", "N"), ("system", "N"), ("hardware", "N"), ("target_model", "N"), ("method", "N"), ("batch", "Q"), \
        ("value", "Q"), ("metric", "N"), ("note", "N"), ("source", "N")
    # Only the columns drawn (here and below): a run has some sixty, which the browser would parse.
    drawn = published[[field for field, _ in shown]].assign(metric=metric_titles(published["metric"], lang))
    pub = alt.Chart(drawn).mark_point(shape="triangle-up", size=150, filled=True).encode(
        x=x, y=alt.Y("value:Q", title=t("col.measured_speedup", lang)),
        color=alt.Color("study:N", scale=alt.Scale(scheme="tableau20"),
                        legend=series_legend(t("chart.study", lang), published["study"])),
        tooltip=[alt.Tooltip(f"{field}:{kind}", title=t(f"col.{field}", lang)) for field, kind in shown])
    stored = t("chart.stored_runs", lang)
    mine_data = paired[["series", "concurrency", "measured_speedup"]].rename(columns={"concurrency": "batch"}).assign(
        kind=stored)
    # Drawn over the triangles, with an outline: a run of the user's under a study's mark was hidden.
    mine = alt.Chart(mine_data).mark_circle(size=60, opacity=0.8, stroke="white", strokeWidth=1).encode(
        x=x, y=alt.Y("measured_speedup:Q", title=t("col.measured_speedup", lang)),
        color=alt.Color("kind:N", scale=alt.Scale(domain=[stored], range=["black"]),
                        legend=series_legend(None, mine_data["kind"])),
        tooltip=[alt.Tooltip("series:N", title=t("chart.series", lang)),
                 alt.Tooltip("batch:Q", title=t("col.concurrency", lang)),
                 alt.Tooltip("measured_speedup:Q", title=t("col.measured_speedup", lang), format=".3f")])
    measured = t("col.measured_speedup", lang)
    # A layer with no points is left out: an empty one would still draw its legend's title alone.
    drawn = [layer for layer, data in ((pub, published), (mine, mine_data)) if not data.empty]
    layers = [*drawn, *_break_even_rule(lang, measured), *([] if claim is None else _claim_rule(claim, lang, measured))]
    return alt.layer(*layers, autosize=FIT_WIDTH, height=320).resolve_scale(color="independent")


def _memory_limit_frame(limit: int, lang: str, gamma: int | None = None) -> pd.DataFrame:
    """The memory's limit as a chart draws it (:func:`_memory_wall`): its batch and its label, which
    names the draft length it holds at where the chart's curves take several (``gamma``)."""
    label = t("chart.memory_limit", lang, batch=limit) if gamma is None else t("chart.memory_limit_at", lang,
                                                                               batch=limit, gamma=gamma)
    return pd.DataFrame({"batch": [limit], "label": [label]})


def _memory_wall(limit: pd.DataFrame, x: alt.X, lang: str) -> list[alt.Chart]:
    """The largest batch the memory holds with the draft, as a red dashed rule labelled at the top
    (``limit``: :func:`_memory_limit_frame`), on the chart's batch axis ``x``."""
    wall = alt.Chart(limit)
    return [wall.mark_rule(color="#d62728", strokeDash=[6, 3], strokeWidth=2).encode(
                x=x, tooltip=[alt.Tooltip("label:N", title=t("chart.memory_limit_title", lang))]),
            wall.mark_text(align="right", baseline="top", dx=-4, dy=4, color="#d62728").encode(
                x=x, y=alt.YValue(0), text="label:N")]


def claim_by_batch(batches: pd.DataFrame, claim: float, lang: str = "en", limit: int | None = None,
                   limit_gamma: int | None = None, claimed_batch: int | None = None) -> alt.LayerChart:
    """What a claim is up against at each batch (log x): the most the setting gives with every draft
    token accepted, best γ (line, its band shaded from the cautious to the optimistic edge), the speedup at the
    measured α where there is one (dashed, its band shaded), the claim as a red rule and, where the
    memory stops the batches short of the page's largest, its ``limit`` (the last batch drawn), at
    the draft length ``limit_gamma`` (:attr:`specviz.advice.claims.ClaimCheck.memory_gamma`).

    ``batches`` is :attr:`specviz.advice.claims.ClaimCheck.batches`: it stops at the memory's limit.
    For a slowdown it is :attr:`specviz.advice.slowdown.SlowdownCheck.batches`, whose ``floor`` (every
    draft token rejected) is drawn in place of the ceiling, both lines at the γ checked, and beside them,
    dotted grey, the unfavourable edge at α = 0 of the slowest γ at each batch: where it is under the
    claim is where the page's "batches where it can happen" says it can (a consistency pass: the card
    counted every γ while the chart drew one). The claim's
    own batch (``claimed_batch``), where it names one, is a grey rule labelled at the bottom: the figures the verdict
    weighs are where it crosses the lines (a manager's pass had looked for batch 64 on a log axis).
    """
    batch, speedup = t("chart.batch", lang), t("chart.speedup", lang)
    x = alt.X("batch:Q", scale=alt.Scale(type="log", nice=False), title=batch)
    slowing = "floor" in batches
    edge, name = ("floor", t("chart.claim_floor", lang)) if slowing else ("ceiling", t("chart.claim_ceiling", lang))
    kinds = [(edge, f"{edge}_low", f"{edge}_high", name, [])]
    if "at_alpha" in batches:
        kinds.append(("at_alpha", "at_alpha_low", "at_alpha_high",
                      t("chart.claim_at_alpha_gamma" if slowing else "chart.claim_at_alpha", lang), [6, 3]))
    any_gamma = t("chart.claim_floor_any_gamma", lang)
    legend = series_legend(None, pd.Series([name for *_, name, _ in kinds] + ([any_gamma] if slowing else [])))
    # Each entry a solid stroke of its line's colour: drawn from the first layer, a shaded band's, the
    # symbols had been pale circles, the dotted line's nearly invisible (a manager's pass).
    legend.symbolType, legend.symbolOpacity, legend.symbolStrokeWidth = "stroke", 1, 2
    color = alt.Color("kind:N", title=None, legend=legend)
    layers = []
    for line, low, high, name, dash in kinds:
        frame = batches.assign(kind=name)
        layers += [
            # Its own tooltip: without one the page's default listed the raw fields, unrounded (ceiling_high
            # 12.6694068684, and the band's low edge titled as the speedup: a Vietnamese reader's pass).
            alt.Chart(frame).mark_area(opacity=0.15).encode(
                x=x, y=alt.Y(f"{low}:Q", title=speedup), y2=alt.Y2(f"{high}:Q"), color=color,
                tooltip=[alt.Tooltip("batch:Q", title=batch), alt.Tooltip("kind:N", title=t("chart.series", lang)),
                         alt.Tooltip(f"{low}:Q", title=t("chart.band_low", lang), format=".2f"),
                         alt.Tooltip(f"{high}:Q", title=t("chart.band_high", lang), format=".2f")]),
            alt.Chart(frame).mark_line(strokeDash=dash).encode(
                x=x, y=alt.Y(f"{line}:Q", title=speedup), color=color,
                tooltip=[alt.Tooltip("batch:Q", title=batch), alt.Tooltip(f"{line}:Q", title=name, format=".2f"),
                         alt.Tooltip(f"{high}:Q", title=t("chart.band_high", lang), format=".2f")]),
        ]
    if slowing:
        layers.append(alt.Chart(batches.assign(kind=any_gamma)).mark_line(strokeDash=[2, 2]).encode(
            x=x, y=alt.Y("any_gamma_low:Q", title=speedup), color=color,
            tooltip=[alt.Tooltip("batch:Q", title=batch),
                     alt.Tooltip("any_gamma_low:Q", title=any_gamma, format=".2f"),
                     alt.Tooltip("any_gamma:Q", title=t("chart.gamma", lang))]))
    wall = _memory_wall(_memory_limit_frame(limit, lang, limit_gamma), x, lang) if limit is not None else []
    claimed = []
    if claimed_batch is not None:
        at = alt.Chart(pd.DataFrame({"batch": [claimed_batch],
                                     "label": [t("chart.claimed_batch", lang, batch=claimed_batch)]}))
        # Its label on the side with more room: in the right half of the log axis, to the rule's left (it
        # had run past the memory's limit beside it: a manager's pass).
        drawn = batches["batch"].to_numpy(dtype=float)
        left = drawn.size > 0 and math.log(claimed_batch) > (math.log(drawn.min()) + math.log(drawn.max())) / 2
        claimed = [at.mark_rule(color="gray", strokeDash=[2, 2]).encode(
                       x=x, tooltip=[alt.Tooltip("label:N", title=t("chart.claimed_batch_title", lang))]),
                   at.mark_text(align="right" if left else "left", baseline="bottom", dx=-4 if left else 4, dy=-4,
                                color="gray").encode(x=x, y=alt.YValue(320), text="label:N")]
    return alt.layer(*layers, *_break_even_rule(lang, speedup), *_claim_rule(claim, lang, speedup), *wall, *claimed,
                     autosize=FIT_WIDTH, height=320)


def tokens_per_step(counts: Sequence[int], lang: str = "en") -> alt.Chart:
    """The share of speculative steps that emitted 1, 2, …, γ + 1 tokens (bars), the one-token
    steps (no draft accepted: a whole speculative step's time for one token) set apart in colour.

    ``counts`` is :attr:`specviz.model.simulate.LatencySummary.counts`.
    """
    total = max(int(sum(counts)), 1)
    zero, some = t("chart.zero_accept", lang), t("chart.some_accepted", lang)
    frame = pd.DataFrame({"tokens": range(1, len(counts) + 1), "share": [c / total for c in counts]})
    frame["kind"] = [zero if k == 1 else some for k in frame["tokens"]]
    tokens, share = t("chart.tokens_per_step", lang), t("chart.share_of_steps", lang)
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("tokens:O", title=tokens, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("share:Q", title=share, axis=alt.Axis(format="%")),
        color=alt.Color("kind:N", title=None, legend=series_legend(None, frame["kind"]),
                        scale=alt.Scale(domain=[zero, some], range=["#d62728", "#4c78a8"])),
        tooltip=[alt.Tooltip("tokens:O", title=tokens), alt.Tooltip("share:Q", title=share, format=".1%")],
    ).properties(autosize=FIT_WIDTH, height=240)


def request_acceptance(lengths: pd.Series, gamma: int, lang: str = "en") -> alt.LayerChart:
    """The share of a run's requests by their acceptance length (bars of a quarter of a token from 1
    to γ + 1, counted here so that a run of a million requests sends the browser some dozen bars),
    with the mean over requests as a rule. ``lengths`` is
    :func:`specviz.results.request_acceptance.request_lengths`."""
    known = lengths.dropna().to_numpy(dtype=float)
    edges = np.arange(1.0, gamma + 1.25, 0.25)
    counts, _ = np.histogram(known, bins=edges)
    frame = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "share": counts / max(known.size, 1)})
    frame["range"] = [f"{a:.2f}–{b:.2f}" for a, b in zip(frame["start"], frame["end"])]
    length, share = t("col.acceptance_length", lang), t("chart.share_of_requests", lang)
    bars = alt.Chart(frame).mark_bar().encode(
        x=alt.X("start:Q", title=length, bin=alt.Bin(binned=True, step=0.25)), x2=alt.X2("end:Q"),
        y=alt.Y("share:Q", title=share, axis=alt.Axis(format="%")),
        tooltip=[alt.Tooltip("range:N", title=length), alt.Tooltip("share:Q", title=share, format=".1%")])
    mean = alt.Chart(pd.DataFrame({"mean": [float(known.mean()) if known.size else np.nan]})).mark_rule(
        color="#d62728", strokeDash=[4, 4]).encode(x=alt.X("mean:Q"),
                                                   tooltip=[alt.Tooltip("mean:Q", title=t("chart.mean", lang),
                                                                        format=".2f")])
    return alt.layer(bars, mean).properties(autosize=FIT_WIDTH, height=240)


def gamma_map(grid: pd.DataFrame, lang: str = "en") -> alt.LayerChart:
    """Batch × context: the best γ's speedup as colour, diverging at 1.0 (grey where no γ gains), and
    the best γ written in each cell; a cell the speculative server's memory does not hold is white
    and says so ("—" where plain decoding does not hold it either). ``grid`` is
    :func:`specviz.advice.draft_length.gamma_map`."""
    batch, context, gamma, speedup = (t(f"chart.{name}", lang) for name in ("batch", "context", "gamma", "speedup"))
    x = alt.X("batch:O", title=batch)
    y = alt.Y("context:O", sort="descending", title=context)
    tooltip = [alt.Tooltip("batch:Q", title=batch), alt.Tooltip("context:Q", title=context, format=","),
               alt.Tooltip("gamma:Q", title=gamma), alt.Tooltip("speedup:Q", title=speedup, format=".2f")]
    held = grid[grid["fits"]]
    out = grid[~grid["fits"]].assign(label=np.where(grid.loc[~grid["fits"], "fits_plain"],
                                                    t("chart.no_fit_draft", lang), "—"))
    # The colour scale spans 1 whatever the cells: where every cell gains, a scale of the data alone
    # put 1 outside it (Vega warned and painted the smallest gain red, as a loss).
    with_one = np.append(held["speedup"].to_numpy(dtype=float), 1.0)
    extent = [float(with_one.min()), float(with_one.max())]
    cells = alt.Chart(held).mark_rect().encode(
        x=x, y=y, tooltip=tooltip,
        color=alt.Color("speedup:Q", title=speedup, scale=alt.Scale(scheme="redblue", domain=extent, domainMid=1.0)))
    labels = alt.Chart(held).mark_text(fontSize=11).encode(x=x, y=y, text=alt.Text("gamma:Q"), tooltip=tooltip)
    beyond = alt.Chart(out).mark_text(fontSize=9, color="#d62728").encode(
        x=x, y=y, text=alt.Text("label:N"), tooltip=[alt.Tooltip("batch:Q", title=batch),
                                            alt.Tooltip("context:Q", title=context, format=","),
                                            alt.Tooltip("label:N", title=t("chart.memory_limit_title", lang))])
    return alt.layer(cells, labels, beyond, height=340)
