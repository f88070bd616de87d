"""The calculator's Table, By batch, Heatmap, Best γ and Roofline views and its link to the scenario (a
helper of pages/what-if.py, not a page); what they read at one α (:class:`AtAlpha`), the views' ids
and the controls a link carries with each."""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from pages.parts.deploy import LINKED_FIELDS
from pages.parts.shared import altair_chart, csv_download, presets, titled_table
from specviz import calculator, charts, regime, scenario, settings
from specviz.advice import serving
from specviz.i18n import t

# The views' ids, in tab order: ``?view=<id>`` opens one, and a shared link carries the open one.
VIEW_IDS = ("table", "batch", "heatmap", "gamma", "roofline", "latency", "serve")
# The controls of a view that a shared link carries besides the scenario (each keeps its value in
# the URL).
VIEW_CONTROLS = {"latency": ("workload", "input_tokens", "output_tokens", "latency_rates"),
                 "serve": ("serve_engine", *serving.VERSION_KEYS.values(), "serve_method")}


@dataclass(frozen=True)
class AtAlpha:
    """The calculator at one α: the scenario with it (``chosen``: α, γ, batch, context and the rest),
    the page's mode and language, and what the page found once a run, which α does not move: the
    batch's fit in memory (None in ``ratios`` mode), the largest batch the memory holds up to the
    batch limit (``held_up_to``), the α at which speculation breaks even, and the published
    measurements of this setup (``measured``)."""

    chosen: scenario.Scenario
    mode: str
    lang: str
    fit: dict[str, Any] | None
    held_up_to: int
    breakeven_alpha: float
    measured: pd.DataFrame



def paragraphs(notes: list[str]) -> str:
    """Notes as the paragraphs of one caption: an α move redraws every element of its fragment, at
    2.5–4 ms of the browser's time each (docs/performance.md), so notes that go together are one."""
    return "\n\n".join(notes)


def show_table(chosen: scenario.Scenario, alpha: float, gamma: int, batch: int, context: int, mode: str,
               lang: str) -> None:
    """The Table view: seed 000's table (the speedup per α memory-bound, at the compute-bound limit and
    here at this batch), the user's α among the seed's."""
    # The seed's rows, and the user's α among them: its "this batch" figure is the headline's.
    table = calculator.alpha_table(chosen, gamma, batch, context,
                                   sorted({*calculator.SEED_ALPHAS, round(alpha, 3)}))
    if mode == "ratios":  # the costs are given: no batch enters the table, and its last column is theirs
        table = table.rename(columns={"this_batch": "given_costs"})
        st.caption(t("calc.table_caption_ratios", lang, gamma=gamma))
    else:
        st.caption(t("calc.table_caption_load" if chosen.prefill else "calc.table_caption", lang, gamma=gamma,
                     batch=batch))
    titled_table(table, lang, decimals=3)
    csv_download(table, "specviz_alpha_table.csv", "download_table", lang)


def show_batch(at: AtAlpha, speedup: float | None, held: bool,
               reference_sweep: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    """The By-batch view: the speedup against the batch at the reference α (``reference_sweep``, which
    α does not move) and at the user's, with its band, up to the batches the memory holds; the
    headline's ``speedup`` marked at this batch where it has one; ``held``: every cost knob set."""
    chosen, fit, lang, batch_max = at.chosen, at.fit, at.lang, settings.get("SPECVIZ_BATCH_MAX")
    alpha, gamma, context = chosen.alpha, chosen.gamma, chosen.context
    limit = fit["max_batch"] if fit is not None else None
    if limit == 0:  # not one sequence fits with the draft: no batch has a speedup to draw
        st.info(t("calc.memory.view_none_fit", lang))
        return
    yours, your_crossings = calculator.batch_sweep(chosen, [alpha], gamma, context, batch_max)
    reference, reference_crossings = reference_sweep
    crossings = pd.concat([reference_crossings, your_crossings]).drop_duplicates(ignore_index=True)
    band = calculator.band_vs_batch(chosen, alpha, gamma, context, batch_max)
    altair_chart(charts.speedup_vs_batch_spec(reference, crossings, lang, band=band, limit=limit,
                                              here=None if speedup is None else (chosen.batch, speedup), yours=yours))
    notes = [t("calc.memory.chart_limit", lang, batch=limit, plain=fit["max_batch_plain"])
             ] if limit is not None and limit < batch_max else []
    notes.append(t("calc.crossover_caption", lang, alpha=alpha,
                   batch=regime.at_batch(calculator.loses_from(crossings, alpha), at.held_up_to)))
    if dipped := calculator.dips(crossings, alpha):
        notes.append(t("calc.crossover_dips", lang, alpha=alpha,
                       ranges=", ".join(f"{first:,}–{last:,}" for first, last in dipped)))
    elif others := calculator.dipping_alphas(crossings, alpha):
        notes.append(t("calc.crossover_dips_other", lang, alphas=", ".join(f"{a:g}" for a in others)))
    st.caption(paragraphs(notes + [t(f"calc.band_caption{'_held' if held else ''}", lang, alpha=alpha,
                                     engine=chosen.engine.name)]))
    csv_download(lambda: calculator.batch_table(chosen, alpha, gamma, context, batch_max, band, limit),
                 "specviz_speedup_vs_batch.csv", "download_batch", lang)


def show_heatmap(chosen: scenario.Scenario, gamma: int, context: int, batch_max: int, fit: dict | None,
                 lang: str) -> None:
    """The Heatmap view: the speedup over α and batch, up to the batches the memory holds."""
    grid = calculator.heatmap_grid(chosen, gamma, context, batch_max, fit["max_batch"] if fit is not None else None)
    altair_chart(charts.speedup_heatmap(grid, lang))
    csv_download(grid, "specviz_heatmap.csv", "download_heatmap", lang)


def show_gamma(best_gamma_frame: pd.DataFrame, best_gamma: int | None, batch: int, lang: str) -> None:
    """The Best γ view: the speedup at each γ, the γ past which the batch does not fit said."""
    altair_chart(charts.speedup_vs_gamma(best_gamma_frame, best_gamma, lang))
    notes = [t("calc.gamma_caption", lang)]
    if not (beyond := best_gamma_frame[~best_gamma_frame["fits"]]).empty:
        # A longer draft keeps more draft KV a sequence: past some γ the batch does not fit, and has no bar.
        first = beyond.iloc[0]
        notes.append(t("calc.gamma_no_fit", lang, batch=batch, gamma=int(first["gamma"]), held=int(first["max_batch"])))
    st.caption(paragraphs(notes))
    csv_download(best_gamma_frame, "specviz_speedup_vs_gamma.csv", "download_gamma", lang)


def show_roofline(chosen: scenario.Scenario, gamma: int, batch: int, context: int, alpha: float, lang: str) -> None:
    """The Roofline view: the plain and speculative passes against the GPU's roofline."""
    roof, passes = regime.roofline_points(chosen, gamma, batch, context, alpha)
    altair_chart(charts.roofline_chart(roof, passes, lang))
    st.caption(t("calc.roofline_caption_load" if chosen.prefill else "calc.roofline_caption", lang))


def show_share_link(chosen: scenario.Scenario, open_view: str, load_refused: bool,
                    load_tokens: tuple[int, int] | None, lang: str) -> None:
    """The link to this scenario: written from the scenario itself, so the link is what the page
    computed with; the open view, its own controls (as the URL holds them) and the language travel
    with it."""
    shared = scenario.to_query_params(chosen, presets(settings.get("SPECVIZ_DATA_DIR")))
    if load_refused and load_tokens is not None:
        shared |= {"prefill": "on", "input_tokens": str(load_tokens[0]), "output_tokens": str(load_tokens[1])}
    shared |= {"view": open_view} if open_view != VIEW_IDS[0] else {}
    shared |= {key: st.query_params[key] for key in VIEW_CONTROLS.get(open_view, ()) if key in st.query_params}
    if open_view == "serve":
        shared |= {key: str(value).lower() if isinstance(value, bool) else value for key, default in
                   LINKED_FIELDS.items() if (value := st.session_state.get(key, default)) != default}
    shared |= {"lang": lang} if lang != settings.get("SPECVIZ_LANG") else {}
    query = urllib.parse.urlencode(shared)
    page_url = urllib.parse.urlsplit(st.context.url or "")
    page_url = page_url._replace(path=page_url.path or "/", query="", fragment="").geturl()
    st.code(f"{page_url}?{query}" if query else page_url or "?", language=None)
    st.caption(t("calc.share_help", lang))
    if scenario.CUSTOM in (chosen.target_id, chosen.draft_id):
        st.warning(t("calc.share_custom", lang))
