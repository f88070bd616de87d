"""How a chart fits the page: the width of its column and a legend below it that never cuts a name."""

from __future__ import annotations

import altair as alt
import pandas as pd


# For a chart with a legend below it: fit the width to the page, and keep the height for the plot
# (Streamlit's default, "fit", takes the legend's rows out of the plot's height).
FIT_WIDTH = alt.AutoSizeParams(type="fit-x", contains="padding")


def series_legend(title: str | None, labels: pd.Series) -> alt.Legend:
    """A legend below the chart that never cuts a name (``labelLimit=0``) nor drops an entry
    (``symbolLimit=0``), in as many columns as its longest name leaves room for in about 420 px (a
    chart's width beside the sidebar on an 800 px window; about 7 px per character). Vega cannot wrap
    a legend to the chart's width, so it is fitted to the narrowest window the app is made for."""
    longest = int(labels.dropna().astype(str).str.len().max()) if labels.notna().any() else 0
    return alt.Legend(title=title, orient="bottom", columns=max(1, min(4, 420 // (7 * longest + 40))),
                      labelLimit=0, titleLimit=0, symbolLimit=0)
