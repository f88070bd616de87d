"""Calculator: does speculation pay for this α, γ, batch, context and hardware, by how much, and how sure."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import streamlit as st

from pages.parts.calculator_headline import show_headline
from pages.parts.calculator_views import (VIEW_IDS, AtAlpha, show_batch, show_gamma, show_heatmap, show_roofline,
                                          show_share_link, show_table)
from pages.parts.controls import context_control, url_choice, url_widget, view_choice
from pages.parts.deploy import show_serve
from pages.parts.latency import show_latency, workload_controls
from pages.parts.shared import LINKED_COSTS, fragment, presets, published_speedups, require_router, reset_costs
from specviz import calculator, scenario, settings, workload
from specviz.advice import commands, draft_length, evidence
from specviz.errors import InputError
from specviz.i18n import message, t
from specviz.model import step

require_router("calculator")
lang: str = st.session_state.get("lang", "en")
gamma_max = settings.get("SPECVIZ_GAMMA_MAX")
batch_max = settings.get("SPECVIZ_BATCH_MAX")


def use_published(alpha_value: float, gamma_value: int) -> None:
    """Set α and γ to a published acceptance's (a button's callback)."""
    st.session_state["alpha"] = round(alpha_value, 2)
    st.session_state["gamma"] = gamma_value


def typed_alpha() -> None:
    """The α typed beside the slider moves the slider, and the field empties again (a widget callback)."""
    if st.session_state["alpha_typed"] is not None:
        st.session_state["alpha"] = st.session_state["alpha_typed"]
        st.session_state["alpha_typed"] = None


_KNOB_WIDTH = 190  # px: two knobs a row at 800 px, four at 1,400; a label wraps between words


def field_widget(widget: Callable[..., Any], name: str, default: float | None = None, **kwargs: Any) -> Any:
    """A slider or number input for a numeric field of :data:`specviz.scenario.FIELDS`, bound to the URL,
    with the field's bounds and step and its default (``default`` for a field whose default is a preset's)."""
    f = scenario.FIELDS[name]
    value = f.default if default is None else default
    if f.step >= 10 and not f.whole:  # a knob stepped in tens reads as a whole number (270, not 270.00)
        kwargs.setdefault("format", "%.0f")
    return url_widget(widget, t(f"calc.{name}", lang), f.low, f.upper, value=value, step=f.step, key=name, **kwargs)


st.title(t("calc.title", lang))
st.caption(t("calc.intro", lang))

if "scenario" not in st.session_state:
    st.info(t("calc.fix_scenario", lang, error=message(st.session_state.get("scenario_error", ""), lang)))
    st.stop()
sidebar: scenario.Scenario = st.session_state["scenario"]

mode = url_choice(st.radio, t("calc.mode", lang), list(scenario.MODES), "mode", horizontal=True,
                  format_func=lambda m: t(f"calc.mode.{m}", lang))
col_a, col_g, col_b, col_c = st.columns([3, 3, 2, 3])
# α and all it moves are a fragment (at_alpha below): a move of α reruns them alone, not the
# sidebar nor these controls. Its own are drawn here, in their column.
alpha_box = col_a.container()
# Under the slider, as wide as it (a column of its own was too narrow to read at 800 px), and outside
# the fragment: a move of the slider does not draw it again. Empty after each use: writing the
# slider's value into it on every move would cost a round trip that drops presses of a held arrow key.
col_a.number_input(t("calc.alpha_typed", lang), 0.0, 1.0, value=None, step=0.01, format="%.3f",
                   placeholder=t("calc.alpha_typed_placeholder", lang), key="alpha_typed", on_change=typed_alpha,
                   help=t("calc.alpha_typed_help", lang))
# A select_slider refuses a fraction in the URL, where an integer slider would truncate it.
gamma = url_widget(col_g.select_slider, t("calc.gamma", lang), range(1, gamma_max + 1),
                   value=scenario.FIELDS["gamma"].default, key="gamma", help=t("calc.gamma_help", lang))
# Given ratios leave the batch and the context out: their controls say so by being disabled.
batch = field_widget(col_b.number_input, "batch", help=t("calc.batch_help", lang), disabled=mode == "ratios")
# Under the row: whether each step also takes the prompts of the requests that replace finished
# ones. The load's workload is then set there, for every view (the Latency view's own controls
# otherwise), and so is the context: a request's mean under the load, in place of the slider.
load_box = st.container()
chosen = replace(sidebar, mode=mode, gamma=gamma, batch=batch)
load_tokens: tuple[int, int] | None = None  # the workload, where drawn here (the Latency view draws it otherwise)
load_refused = False  # asked for and refused: the link carries the ask, so its reader is told the same
if url_choice(load_box.radio, t("calc.load", lang), list(scenario.PREFILL), "prefill", horizontal=True,
              format_func=lambda p: t(f"calc.load.{p}", lang), help=t("calc.load_help", lang),
              disabled=mode == "ratios") == "on" and mode == "step":
    with load_box:
        load_tokens = workload_controls(lang)
        try:
            chosen = workload.steady_load(chosen, *load_tokens)
        except InputError as exc:  # a load the model does not hold: said, and decoding only at the context
            st.warning(t("calc.load_refused", lang, error=message(exc, lang)))
            load_refused = True
    if chosen.prefill:
        # A link's own context gives way to the load's: said, and taken out of the URL.
        dropped = st.query_params.get("context")
        if dropped is not None:
            del st.query_params["context"]
        col_c.caption(t("calc.load_context", lang, context=chosen.context)
                      + (t("calc.load_context_dropped", lang, context=dropped) if dropped is not None else ""))
if not chosen.prefill:
    chosen = replace(chosen, context=context_control(col_c, lang, disabled=mode == "ratios"))
context = chosen.context
if mode == "step" and (beyond := chosen.beyond_positions()) is not None:
    st.warning(t("calc.beyond_positions", lang, **beyond))
if mode == "step" and (beyond := chosen.draft_beyond_positions()) is not None:
    st.warning(t("calc.draft_beyond_positions", lang, **beyond))
if (unserved := commands.mtp_unserved(chosen)) is not None:
    st.info(message(unserved, lang))
if (past := draft_length.head_past_training(chosen, gamma)) is not None:
    st.warning(message(past, lang))
for number, found in enumerate(scenario.published_acceptance(presets(settings.get("SPECVIZ_DATA_DIR")).acceptance,
                                                             chosen.target_id, chosen.draft_id)):
    line = st.container(horizontal=True, vertical_alignment="center")
    try:  # the α at which this draft, at the sidebar's MTP reuse factor, makes the published length
        found_alpha = found.alpha_at(chosen.reuse)
    except InputError as exc:
        line.caption(t("calc.published_alpha_beyond", lang, length=found.acceptance_length, gamma=found.gamma,
                       dataset=found.dataset, note=found.note, source=found.source, error=message(exc, lang)))
        continue
    # The tokens a step it was published as, where it was: a note's own figures ("2.43 at batch 64")
    # are lengths too, which α alone had left unnamed (a browser pass).
    line.caption(t("calc.published_alpha" if found.acceptance_length is None else "calc.published_alpha_length", lang,
                   alpha=found_alpha,
                   length=found.acceptance_length, gamma=found.gamma, dataset=found.dataset, note=found.note,
                   source=found.source))
    line.button(t("calc.use_published_alpha", lang, alpha=found_alpha, gamma=found.gamma), key=f"published_alpha_{number}",
                on_click=use_published, args=(found_alpha, found.gamma))
if mode == "ratios":
    col_v, col_d = st.columns(2)
    chosen = replace(chosen, verify_cost=field_widget(col_v.number_input, "verify_cost", help=t("calc.verify_cost_help", lang)),
                     draft_cost=field_widget(col_d.number_input, "draft_cost", help=t("calc.draft_cost_help", lang)))
else:
    preset = scenario.preset_costs(sidebar.engine)
    # A link's knobs, kept for the session (the router prices every page with them), are put back in
    # the URL where a visit to another page dropped them, so that the controls take them too.
    for name, value in st.session_state.get(LINKED_COSTS, {}).items():
        if name not in st.session_state and name not in st.query_params:
            st.query_params[name] = f"{value:g}"
    with st.expander(t("calc.advanced", lang, engine=sidebar.engine.name)):
        st.button(t("calc.reset_costs", lang, engine=sidebar.engine.name), on_click=reset_costs,
                  help=t("calc.reset_costs_help", lang))
        # A row that wraps, each slider as wide as its label needs: four columns broke the labels
        # mid-word at 800 px ("Compute/me mory overlap").
        with st.container(horizontal=True, gap="small"):
            costs = {name: field_widget(st.slider, name, default=getattr(preset, name), width=_KNOB_WIDTH,
                                        help=t(f"calc.{name}_help", lang))
                     for name in scenario.COST_KNOBS}
        if sidebar.target.num_experts:  # a mixture of experts' verify pass: how many experts its tokens share
            chosen = replace(chosen, routing_overlap=field_widget(st.slider, "routing_overlap",
                                                                  help=t("calc.routing_overlap_help", lang)))
    chosen = replace(chosen, costs=step.Costs(**costs))


@fragment
def at_alpha(chosen: scenario.Scenario, open_view: str) -> None:
    """α and everything it moves: the headline, the regime, the open view and the link. Rerun alone
    when α moves (by its slider or a view's own control); every other control reruns the page. Its
    elements go to the page's containers for them (``headline``, ``view_box``, ``share_box``): the
    controls between them, which α does not change, are not drawn again on a move of α (each element
    a fragment redraws costs the browser milliseconds, docs/performance.md).

    It reads the page's module-level names, set by the whole page's run before it is called (and kept
    as they were when it reruns alone): the controls' values (``batch``, ``gamma``, ``context``,
    ``mode``), the containers and what α does not move (``fit``, ``held_up_to``, ``breakeven_alpha``,
    ``measured``, ``reference_sweep``), which the bottom of the page sets. The headline
    (pages/parts/calculator_headline.py) and the views read them as one :class:`AtAlpha`."""
    # Shown to three decimals, as the typed field, a link and the Live page's α carry it: at the step's
    # two, a typed 0.805 had read 0.81 on the slider while the figures were at 0.805 (a browser pass).
    alpha = field_widget(alpha_box.slider, "alpha", help=t("calc.alpha_help", lang), format="%.3f")
    at = AtAlpha(replace(chosen, alpha=alpha), mode, lang, fit, held_up_to, breakeven_alpha, measured)
    with headline:
        shown = show_headline(at)
    chosen = at.chosen

    # Each view's renderer, whether it needs the step model and whether it gives speedups at this batch
    # (none for a batch the memory does not hold), by id (VIEW_IDS gives the order).
    VIEWS = {"table": (lambda: show_table(chosen, alpha, gamma, batch, context, mode, lang), False, True),
             "batch": (lambda: show_batch(at, shown.speedup if shown.fits else None, shown.held, reference_sweep),
                       True, False),
             "heatmap": (lambda: show_heatmap(chosen, gamma, context, batch_max, fit, lang), True, False),
             "gamma": (lambda: show_gamma(shown.gamma_frame, shown.best_gamma, batch, lang), False, True),
             "roofline": (lambda: show_roofline(chosen, gamma, batch, context, alpha, lang), True, False),
             "latency": (lambda: show_latency(chosen, alpha, gamma, batch, lang, load_tokens), True, True),
             "serve": (lambda: show_serve(chosen, alpha, gamma, batch, context, lang), True, False)}
    # Only the open view is built: Altair's schema validation costs tens of milliseconds per chart.
    show, needs_step, at_this_batch = VIEWS[open_view]
    with view_box:
        if needs_step and mode != "step":
            st.info(t("calc.needs_step", lang))
        elif at_this_batch and not shown.fits:
            st.info(t("calc.memory.view_no_fit", lang, batch=batch, limit=fit["max_batch"]))
        else:
            show()
    if share_box.open:
        with share_box:
            show_share_link(chosen, open_view, load_refused, load_tokens, lang)


# What α does not move is found once a page run, not at each move of α: whether the batch fits in
# memory (a batch that does not gets no speedup) and the α at which speculation breaks even.
fit = calculator.memory_fit(chosen) if mode == "step" else None
# Where speculation stops paying is said among the batches the memory holds: a crossover past them is
# none (the by-batch caption and the expert-tax line alike).
held_up_to = batch_max if fit is None or fit["max_batch"] is None else min(batch_max, fit["max_batch"])
breakeven_alpha = calculator.breakeven_alpha(chosen, gamma, batch, context)
# The page's places for what α moves (filled by at_alpha) and, between them, what it does not: the
# link's box (filled while open, once the open view's own controls have put their values in the URL;
# its code block costs the browser half a second to draw the first time) and the choice of view.
# Published measurements of this very setup at this batch and γ, beside the model's figure at each one's
# acceptance (a measurement does not move with α).
measured = evidence.measured_here(published_speedups(settings.get("SPECVIZ_DATA_DIR")), chosen, batch, gamma)
headline = st.container()
share_box = st.expander(t("calc.share", lang), key="share", on_change="rerun")
open_view = view_choice("view", VIEW_IDS, lambda view: t(f"calc.tab.{view}", lang), t("calc.views", lang), in_url=True)
view_box = st.container()
# The batch chart's reference α, whose curves do not move with α (the user's is drawn beside them).
reference_sweep = (calculator.batch_sweep(chosen, calculator.BATCH_CHART_ALPHAS, gamma, context, batch_max)
                   if open_view == "batch" and mode == "step" else None)
at_alpha(chosen, open_view)
