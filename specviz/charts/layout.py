"""How a chart fits the page: the width of its column and a legend below it that never cuts a name."""

from __future__ import annotations

import altair as alt
import pandas as pd


# For a chart with a legend below it: fit the width to the page, and keep the height for the plot
# (Streamlit's default, "fit", takes the legend's rows out of the plot's height).
FIT_WIDTH = alt.AutoSizeParams(type="fit-x", contains="padding")


# Where a series' name joins its parts ("eagle3 γ=3, top-k 1, 4 draft tokens · mtbench"), its legend
# label breaks into lines: a phone's 390 px had cut the name's end (an analyst's pass).
NAME_PARTS = " · "


def series_legend(title: str | None, labels: pd.Series) -> alt.Legend:
    """A legend below the chart that never cuts a name (``labelLimit=0``) nor drops an entry
    (``symbolLimit=0``), each name a line per part (:data:`NAME_PARTS`), in as many columns as its
    longest line leaves room for in about 330 px (a chart's width on a 390 px phone; about 7 px per
    character). Vega cannot wrap a legend to the chart's width, so it is fitted to the narrowest
    window the app is made for."""
    lines = labels.dropna().astype(str).str.split(NAME_PARTS, regex=False).explode()
    longest = int(lines.str.len().max()) if len(lines) else 0
    return alt.Legend(title=title, orient="bottom", columns=max(1, min(4, 330 // (7 * longest + 40))),
                      labelLimit=0, titleLimit=0, symbolLimit=0, labelExpr=f"split(datum.label, '{NAME_PARTS}')")


def wrapped_title(text: str, most: int = 40) -> str | list[str]:
    """A chart title of more than ``most`` characters as two lines, broken before its parenthesis
    where it has one (Vega cuts a title at the chart's width: "Acceptance rate của vLLM (được chấp
    nhận/…" on a phone); as it is otherwise."""
    head, found, tail = text.partition(" (")
    return [head, f"({tail}"] if found and len(text) > most else text
