"""The Live page's charts: each live figure over time, and acceptance per draft position."""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from ..i18n import t
from .layout import FIT_WIDTH, series_legend, wrapped_title


# The live figures a page keeps per window.
LIVE_FIGURES = ("acceptance_rate", "alpha_iid", "acceptance_length", "running_requests", "generation_throughput",
                "draft_overhead", "mean_context", "mean_prompt_tokens", "mean_output_tokens")
# The figures a fleet sums over its servers (the others are ratios of its sums).
SUMMED_OVER_SERVERS = ("running_requests", "generation_throughput")
LIVE_CHARTS = (("acceptance_rate", "acceptance_length", "alpha_iid"), ("running_requests",),
               ("generation_throughput",), ("draft_overhead",), ("mean_context", "mean_prompt_tokens", "mean_output_tokens"))
"""The live figures drawn over time, a chart per group: the group's first figure that has a value is
drawn, the others are in its tooltip. vLLM's acceptance rate, the acceptance length and the α they
convert to move together (with a fixed γ, rate = (length − 1) / γ): one chart, not three of one shape
(each chart also costs a page's first render about 80 ms in Chromium); so do the mean context and
the mean prompt and output it is made of (P + O/2)."""
# Each figure's axis labels (d3 formats; "~" drops trailing zeros): with one window, Vega-Lite would
# otherwise label the axis to six decimals.
_LIVE_FORMATS = {"acceptance_rate": ".3~f", "alpha_iid": ".3~f", "acceptance_length": ".2~f",
                 "running_requests": ".1~f", "generation_throughput": ",.0f", "draft_overhead": ".1~%",
                 "mean_context": ",.0f", "mean_prompt_tokens": ",.0f", "mean_output_tokens": ",.0f"}
# Each figure's least half-span of its axis (absolute, and as a share of the level) and the bounds the
# padding keeps within: fitted to the data alone, a steady 0.709 labelled all five ticks "0.709" and noise
# in its fourth digit zig-zagged across the chart's whole height (Chromium).
_LIVE_SPANS = {"acceptance_rate": (0.05, 0.0, 0.0, 1.0), "alpha_iid": (0.05, 0.0, 0.0, 1.0),
               "acceptance_length": (0.1, 0.0, 1.0, math.inf), "running_requests": (1.0, 0.0, 0.0, math.inf),
               "generation_throughput": (1.0, 0.05, 0.0, math.inf), "draft_overhead": (0.01, 0.0, 0.0, 1.0),
               **dict.fromkeys(("mean_context", "mean_prompt_tokens", "mean_output_tokens"), (1.0, 0.05, 0.0, math.inf))}


def _live_domain(values: pd.Series, figure: str) -> list[float]:
    """The y domain of a live figure: its data, widened about their middle to the figure's least span
    (:data:`_LIVE_SPANS`) so that a flat series is drawn flat on ticks that read apart; the widening
    stops at the figure's bounds (a rate at 1), the data never do."""
    least, share, lowest, highest = _LIVE_SPANS[figure]
    low, high = float(values.min()), float(values.max())
    middle = (low + high) / 2
    half = max(least, share * abs(middle))
    return [min(low, max(middle - half, lowest)), max(high, min(middle + half, highest))]


def live_over_time(windows: pd.DataFrame, figure: str, lang: str = "en", also: tuple[str, ...] = (),
                   servers_summed: bool = False) -> alt.LayerChart:
    """One live figure against the window's end time, one line per model (one chart per figure: their
    scales differ), with the figures ``also`` in its tooltip (see :data:`LIVE_CHARTS`);
    ``servers_summed``: a fleet's, whose running requests and generated tokens are its servers' sum
    (its title says so: "the live batch" read as one server's). The y axis
    spans :func:`_live_domain`, given as data (an invisible rule at each end, the first layer), not
    written in the spec: a refresh then sends the browser new data for a chart it has compiled, where a
    domain in the spec had Vega compile every chart again at every refresh.

    ``windows`` has ``time_end``, ``model`` and ``figure``, one of :data:`LIVE_FIGURES` (vLLM's
    acceptance rate and the α it converts to are different quantities, named apart, see
    :mod:`specviz.model.spec`). A line breaks where a window does not start where the model's previous
    one ended, and around a window that spans a gap between two visits: no line bridges a time
    nobody polled, nor across a window without the figure (an idle server's: no draft to divide by)."""
    data = windows.assign(run=_unbroken_runs(windows, windows[figure].isna()))[
        ["time_end", "model", "run", figure, *also]].dropna(subset=[figure])
    if isinstance(data["time_end"].dtype, pd.DatetimeTZDtype):
        # A Prometheus frame's times are tz-aware, the store's and a session's naive UTC: the browser
        # drew the former in its own zone and the latter as UTC (02:21 beside 19:21 for one moment at
        # UTC+7). Both as naive UTC, the zone the page's messages name.
        data = data.assign(time_end=data["time_end"].dt.tz_convert("UTC").dt.tz_localize(None))
    title = t(f"col.{figure}", lang)
    if servers_summed and figure in SUMMED_OVER_SERVERS:
        title = t("chart.summed_over_servers", lang, figure=title)
    # One model is named by the page's heading: a legend would only repeat it (and a long name cut).
    legend = series_legend(t("col.model", lang), data["model"]) if data["model"].nunique() > 1 else None
    # A figure labelled in whole numbers gets ticks a whole number apart: an idle server's tokens/s on
    # [0, 1] had read "0, 0, 0, 1, 1, 1" (a browser pass).
    whole = {"tickMinStep": 1} if _LIVE_FORMATS[figure].endswith(".0f") else {}
    y = alt.Y(f"{figure}:Q", title=None, scale=alt.Scale(zero=False, nice=False),
              axis=alt.Axis(format=_LIVE_FORMATS[figure], **whole))
    # No tooltip on the invisible ends: Streamlit's theme gives every mark one (the raw column's name
    # and the domain's end had shown near the axis: an SRE's pass).
    extent = alt.Chart(pd.DataFrame({figure: _live_domain(data[figure], figure)})).mark_rule(
        opacity=0, tooltip=False).encode(y=y)
    lines = alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("time_end:T", title=t("chart.time", lang), axis=alt.Axis(format="%H:%M:%S")),
        y=y,
        color=alt.Color("model:N", legend=legend), detail=alt.Detail("run:N"),
        # To the second, in digits: the default format gave the day alone, its month in English.
        tooltip=[alt.Tooltip("time_end:T", title=t("chart.time", lang), format="%Y-%m-%d %H:%M:%S"),
                 alt.Tooltip("model:N", title=t("col.model", lang)),
                 *(alt.Tooltip(f"{shown}:Q", title=t(f"col.{shown}", lang), format=_LIVE_FORMATS[shown].replace("~", ""))
                   for shown in (figure, *also))])
    return alt.layer(extent, lines).properties(height=160, title=wrapped_title(title), autosize=FIT_WIDTH)


# A window this many times a model's median window, and at least _GAP_S longer, spans a time nobody
# polled: the first window of a later visit, measured against the last scrape of an earlier one.
_GAP_RATIO, _GAP_S = 3.0, 30.0
# A Prometheus range's points are a step apart; one more than this many steps from the previous has
# steps without data between them.
_STEP_RATIO = 1.5


def _unbroken_runs(windows: pd.DataFrame, missing: pd.Series | None = None) -> pd.Series:
    """A number per window, shared along each unbroken run of one model's windows. A run ends where
    a window starts after the previous one ended, around a window that spans a gap (see
    ``_GAP_RATIO``: a true average over the gap, drawn as a point of its own), and after a window
    ``missing`` marks (drawn as nothing, it must not be bridged). Points without ``time_start`` (a
    Prometheus range, one a step) break where a model's point is further from its previous one than
    :data:`_STEP_RATIO` of its median spacing: steps at which Prometheus held none of its series
    (an SRE's pass: a line had bridged 75 s without data)."""
    ordered = windows.sort_values("time_end")
    model = ordered["model"]
    after = lambda marks: marks.groupby(model).shift(fill_value=False)
    starts = pd.Series(False, index=ordered.index)
    if "time_start" in windows:
        seconds = (ordered["time_end"] - ordered["time_start"]).dt.total_seconds()
        median = seconds.groupby(model).transform("median")
        gap = seconds > np.maximum(_GAP_RATIO * median, median + _GAP_S)
        starts = (ordered["time_start"] > ordered.groupby("model")["time_end"].shift()) | gap | after(gap)
    else:
        spacing = ordered.groupby("model")["time_end"].diff().dt.total_seconds()
        starts = spacing > _STEP_RATIO * spacing.groupby(model).transform("median")
    if missing is not None:
        starts = starts | after(missing.reindex(ordered.index).astype(bool))
    return starts.astype(int).groupby(model).cumsum().reindex(windows.index)


def per_position(acceptance: list[float], conditional: list[float | None], lang: str = "en",
                 intervals: tuple[list, list] | None = None) -> alt.Chart | alt.LayerChart:
    """Acceptance at each draft position: the share of drafts whose position i was accepted
    (unconditional) beside the acceptance at i given the positions before it (conditional), each
    with a rule over its sampling interval where ``intervals`` gives one ((low, high) or None per
    figure, aligned with the two lists: :func:`specviz.live.windows.position_intervals`)."""
    bounds = intervals or ([None] * len(acceptance), [None] * len(conditional))
    rows = [{"position": i + 1, "kind": t(f"chart.position.{kind}", lang), "value": value,
             "low": span[0] if span else math.nan, "high": span[1] if span else math.nan}
            for kind, values, spans in (("unconditional", acceptance, bounds[0]), ("conditional", conditional, bounds[1]))
            for i, (value, span) in enumerate(zip(values, spans)) if value is not None]
    data = pd.DataFrame(rows, columns=["position", "kind", "value", "low", "high"])
    # In this order in every language: sorted by name, the two had swapped places and colours in Vietnamese.
    # A kind with no bar is not in the legend (drafts of several lengths give no conditional share).
    kinds = [t(f"chart.position.{kind}", lang) for kind in ("unconditional", "conditional")]
    kinds = [kind for kind in kinds if kind in set(data["kind"])] or kinds
    x = alt.X("position:O", title=t("chart.position", lang), axis=alt.Axis(labelAngle=0))
    offset = alt.XOffset("kind:N", sort=kinds)
    tooltip = [alt.Tooltip("position:O", title=t("chart.position", lang)),
               alt.Tooltip("kind:N", title=t("chart.measure", lang)),
               alt.Tooltip("value:Q", title=t("chart.acceptance", lang), format=".3f")]
    spanned = data["low"].notna().any()
    if spanned:
        tooltip += [alt.Tooltip("low:Q", title=t("chart.position.low", lang), format=".3f"),
                    alt.Tooltip("high:Q", title=t("chart.position.high", lang), format=".3f")]
    bars = alt.Chart(data).mark_bar().encode(
        x=x, xOffset=offset,
        # Above 1 only where the counters were read apart (a notice says so): shown, not cut.
        y=alt.Y("value:Q", title=t("chart.acceptance", lang),
                scale=alt.Scale(domain=[0, max(1.0, data["value"].max() if len(data) else 1.0)])),
        color=alt.Color("kind:N", title=None, scale=alt.Scale(domain=kinds), legend=series_legend(None, data["kind"])),
        tooltip=tooltip,
    )
    if spanned:
        rules = alt.Chart(data).transform_filter("isValid(datum.low)").mark_rule(color="#444", strokeWidth=1.5).encode(
            x=x, xOffset=offset, y=alt.Y("low:Q", title=t("chart.acceptance", lang)), y2=alt.Y2("high:Q"), tooltip=tooltip)
        bars = alt.layer(bars, rules)
    return bars.properties(height=240, autosize=FIT_WIDTH)  # the legend below adds to the plot's height, not takes it
