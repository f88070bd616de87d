"""The calculator's headline at one α (a helper of pages/what-if.py, not a page): the speedup and its
band, the passes' costs and steps, whether the batch fits in memory, the regime and the expert tax,
the break-evens and the best γ."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
import streamlit as st

from pages.parts.calculator_views import AtAlpha, paragraphs
from pages.parts.controls import show_url_notices
from pages.parts.shared import how_sure, knobs_said
from specviz import calculator, regime, scenario, settings, workload
from specviz.advice import evidence
from specviz.i18n import message, t
from specviz.model import spec


@dataclass(frozen=True)
class Headline:
    """What the views read of the headline: the speedup (``fits``: the memory holds the batch, so it
    is one), ``held`` (every cost knob set: the band is the model's error alone) and the speedup at
    each γ with the best γ."""

    speedup: float
    fits: bool
    held: bool
    gamma_frame: pd.DataFrame
    best_gamma: int | None


def show_headline(at: AtAlpha) -> Headline:
    """The headline at ``at``'s α, drawn where the caller's container is: the passes' costs and steps,
    the speedup with its band and notes, whether the batch fits, then :func:`show_regime` (step mode)
    and :func:`show_break_evens`; a scenario the model refuses is said and the page stops."""
    chosen = at.chosen
    alpha, gamma, batch, context = chosen.alpha, chosen.gamma, chosen.batch, chosen.context
    fit, mode, lang = at.fit, at.mode, at.lang
    show_url_notices(st, lang, first=("alpha",))  # α's first: it is drawn first

    try:
        here = calculator.headline(chosen, fit)
    except ValueError as exc:
        st.error(t("calc.bad_input", lang, error=message(exc, lang)))
        st.stop()

    off = scenario.knobs_off_preset(chosen) if mode == "step" else {}
    # With every knob set (a calibration's link sets all nine) no cost is drawn: the band is the
    # model's own error alone, and its captions say so rather than offer a calibration to narrow it.
    held = "_held" if len(off) == len(scenario.COST_KNOBS) else ""
    if off:
        st.badge(t("calc.off_preset", lang, engine=chosen.engine.name), icon=":material/tune:", color="orange")
        st.caption(t("calc.off_preset_detail", lang, engine=chosen.engine.name, knobs=knobs_said(off, lang)))

    speed = here["speedup"]
    # A batch the memory does not hold gets no speedup: the headline says so and how to make it fit.
    if fit is not None and not fit["fits"]:
        ways = calculator.ways_to_fit(chosen, settings.get("SPECVIZ_CONTEXT_MAX"))
        # Not one sequence: the weights leave no room for a KV cache, said so, not "holds at most 0".
        no_room = fit["max_batch_plain"] == 0
        st.error(t("calc.memory.no_room" if no_room else "calc.memory.no_fit" if fit["fits_plain"] else
                   "calc.memory.no_fit_plain", lang, batch=batch, weights=fit["weights_target"] + fit["weights_draft"],
                   need=fit["need"], usable=fit["usable"], devices=chosen.tp * chosen.dp, limit=fit["max_batch"],
                   limit_plain=fit["max_batch_plain"], gamma=gamma,
                   ways="; ".join(message(way, lang) for way in ways) or t("calc.memory.no_way", lang)))

    # How the draft's γ positions are proposed: a pass each (the keys without a suffix), one pass for
    # all, or on the host.
    drafting = regime.message_suffix(chosen.draft.kind)
    row = st.container(horizontal=True)  # metrics wrap on a narrow screen instead of cutting their values
    row.metric(t("calc.m.expected_tokens", lang), f"{here['expected_tokens']:.2f}",
               help=t("calc.m.expected_tokens_help", lang, gamma=gamma), width="content")
    row.metric(t("calc.m.vllm_rate", lang), f"{spec.acceptance_rate_from_alpha(alpha, gamma, **chosen.reuse):.2f}",
               help=t("calc.m.vllm_rate_help", lang, alpha=alpha), width="content")
    fits = fit is None or fit["fits"]
    if fits:  # a batch the memory does not hold with the draft has no speculative step to price (a manager's pass)
        row.metric(t("calc.m.verify_cost", lang), f"{here['verify_cost']:.2f}×", help=t("calc.m.verify_cost_help", lang),
                   width="content")
    row.metric(t("calc.m.draft_cost", lang), f"{here['draft_cost']:.3f}×",
               help=t(f"calc.m.draft_cost_help{drafting}", lang, gamma=gamma), width="content")
    notes: list[str] = []  # the headline's notes, one caption: each element costs the browser a redraw
    if fits:
        # Three places where two would read 1.00× for a speedup that is not 1 (0.9992: "1.00×, −0%").
        near_one = round(speed, 2) == 1 and round(speed, 3) != 1  # 0.99999999 is 1: "1.000×, −0.0%" had read as a loss
        row.metric(t("calc.m.speedup", lang), f"{speed:.3f}×" if near_one else f"{speed:.2f}×",
                   delta=f"{speed - 1:+.1%}" if near_one else f"{0.0 if round(speed, 3) == 1 else speed - 1:+.0%}",
                   delta_color="normal", help=t("calc.m.speedup_help", lang), width="content")
    if fit is not None:
        row = st.container(horizontal=True)
        # A steady load's steps carry its arriving prompts too, which the helps say (a browser pass:
        # "one token per sequence" and "decode only" beside a step of 336 positions).
        load = "_load" if chosen.prefill else ""
        prompts = float(chosen.prompts_per_step(batch)) if chosen.prefill else 0.0
        row.metric(t("calc.m.plain_step", lang), f"{here['baseline_step_ms']:,.2f} ms",
                   help=t(f"calc.m.plain_step_help{load}", lang, batch=batch, prompts=prompts), width="content")
        if fits:
            row.metric(t("calc.m.spec_step", lang), f"{here['spec_step_ms']:,.2f} ms",
                       help=t(f"calc.m.spec_step_help{drafting}", lang, gamma=gamma, draft=here["draft_step_ms"],
                              drafts=gamma * here["draft_step_ms"], verify=here["verify_step_ms"]), width="content")
        if fit["fits_plain"]:
            row.metric(t("calc.m.plain_tokens", lang), f"{here['baseline_tokens_per_s']:,.0f}",
                       help=t(f"calc.m.tokens_help{load}", lang, batch=batch), width="content")
        if fits:
            row.metric(t("calc.m.spec_tokens", lang), f"{here['spec_tokens_per_s']:,.0f}",
                       help=t(f"calc.m.tokens_help{load}", lang, batch=batch), width="content")
            low, high, ideal = here["low"], here["high"], here["ideal_speedup"]
            low_shown, high_shown = calculator.band_shown(low, high)
            st.markdown(t(f"calc.band.{calculator.band_verdict(low, high)}", lang, low=low_shown, high=high_shown,
                          speedup=speed))
            # A step the engine's budget does not admit: the load's prompts queue without end, or the
            # decode and draft positions alone fill it (a consistency pass: batch 1,000 at γ 8, 9,000
            # positions of vLLM's 8,192, had a speedup and no word here, where the Latency view had one).
            room = workload.prompt_room(chosen, alpha, gamma, batch)
            if not bool(room["keeps_up_spec"]):
                budget, size = chosen.engine.memory.budget, int(room["budget"])
                st.warning(t("calc.load_over_budget", lang, batch=batch, budget=size, engine=budget.engine,
                             flag=budget.flag) if room["room_spec"] > 0 else
                           t("calc.latency.budget_full", lang, side=t("calc.latency.side.spec", lang), batch=batch,
                             positions=size - float(room["room_spec"]), budget=size, engine=budget.engine,
                             flag=budget.flag))
            notes += [how_sure(chosen.engine.name, bool(held), lang),
                      t("calc.ideal_caption" if round(ideal, 2) >= round(speed, 2) else "calc.ideal_caption_below", lang,
                        ideal=ideal)]
            # A measurement of this very setup the model does not reach, or on the other side of 1 from
            # the figure above, is a warning, not a footnote (an engineer's pass: 0.50-0.83x measured for
            # DeepSeek-R1 + MTP on 2 GB300s at concurrency 64 sat in a caption under "pays here: 1.49x").
            # One priced at its own acceptance is compared there (measured_notice), one without at yours.
            for _, found in at.measured.iterrows():
                notice = evidence.measured_notice(found)
                said = message(notice, lang)
                against = math.isnan(found["model_speedup"]) and (found["value"] < 1.0) != (speed < 1.0)
                if against:
                    said += " " + t("calc.measured_here_against" if speed >= 1.0 else "calc.measured_here_against_gain",
                                    lang, speedup=speed, alpha=alpha)
                if against or notice.key in evidence.OFF_MODEL:
                    st.warning(said)
                else:
                    notes.append(said)
            if chosen.prefill:  # what the load's prompts take from the speedup
                prompts = float(chosen.prompts_per_step(batch))
                decode_only = float(calculator.evaluate_scenario(replace(chosen, prefill=False), alpha, gamma, batch,
                                                                 context)["speedup"])
                notes.append(t("calc.load_note", lang, batch=batch, input=chosen.input_tokens,
                               output=chosen.output_tokens, plain=prompts, spec=prompts * here["expected_tokens"],
                               decode=decode_only))
        if fit["weighed"]:
            largest = t("calc.memory.largest_none" if fit["max_batch_plain"] == 0 else "calc.memory.largest", lang,
                        max_batch=fit["max_batch"], max_batch_plain=fit["max_batch_plain"], gamma=gamma)
            notes.append(t("calc.memory.terms", lang, **fit, devices=chosen.tp * chosen.dp, engine=chosen.engine.name,
                           source=chosen.engine.memory_source, largest=largest))
        else:
            notes.append(t("calc.memory.not_weighed", lang, gpu=chosen.gpu.name, batch=batch))
        if (full := calculator.equal_memory(chosen)) is not None:
            # Under a batch that does not fit, said not to be its figure (a consistency pass: 1.89× under
            # "Batch 64 does not fit" read as the page's speedup).
            low, high = calculator.band_shown(full["low"], full["high"])
            said = t("calc.memory.equal" if fit["fits"] else "calc.memory.equal_not_yours", lang,
                     **full | {"low": low, "high": high}, yours=batch)
            if full["budget_binds"]:
                budget = chosen.engine.memory.budget
                said += " " + t("calc.memory.equal_budget", lang, engine=budget.engine, flag=budget.flag)
            if "default_seqs" in full:
                budget = chosen.engine.memory.budget
                said += " " + t("calc.memory.equal_default_seqs", lang, **full, engine=budget.engine)
            notes.append(said)
        st.caption(paragraphs(notes))
    if mode == "step":
        show_regime(at, here, fits)
    else:
        st.caption(t("calc.ratios_note", lang))
    best_gamma_frame, best_gamma = show_break_evens(at, here, fits)
    return Headline(speed, fits, bool(held), best_gamma_frame, best_gamma)


def show_regime(at: AtAlpha, here: dict[str, Any], fits: bool) -> None:
    """Step mode's regime: whether the verify pass is memory- or compute-bound against its ridge, the
    batches where each pass crosses it, why the step costs what it does, and a mixture of experts'
    expert tax."""
    chosen, lang = at.chosen, at.lang
    alpha, gamma, batch, context = chosen.alpha, chosen.gamma, chosen.batch, chosen.context
    batch_max = settings.get("SPECVIZ_BATCH_MAX")
    crossings = regime.regime_crossovers(chosen, alpha, gamma, context, batch_max)
    regime_key, explain_key, figures = regime.regime_explanation(chosen, here)
    st.badge(t(regime_key, lang), color="green" if regime_key.endswith("memory") else "orange")
    groups = t("calc.regime_groups", lang, dp=chosen.dp) if chosen.dp > 1 else ""
    st.caption(t(regime.ridge_detail_key(figures), lang, **figures, groups=groups))
    st.info(t(explain_key, lang, **figures, batch=batch, gamma=gamma, limit=gamma + 1,
              verify_batch=regime.at_batch(crossings["verify"], batch_max),
              baseline_batch=regime.at_batch(crossings["baseline"], batch_max)))
    notes = [message(n, lang) for n in regime.explanation_notes(figures, chosen.draft.kind, gamma, context)]
    if (tax := regime.expert_tax(chosen, alpha, gamma, batch, context, batch_max)) is not None:
        verdict = regime.expert_tax_verdict(tax, alpha, gamma, batch, fits, at.held_up_to, batch_max)
        notes.append(" ".join([t("calc.expert_tax", lang, **tax), *(message(n, lang) for n in verdict)]))
    if notes:
        st.caption(paragraphs(notes))


def show_break_evens(at: AtAlpha, here: dict[str, Any], fits: bool) -> tuple[pd.DataFrame, int | None]:
    """The verify cost and α at which speculation breaks even here and the best γ with its band, where
    the memory holds the batch; returns the speedup at each γ and the best γ (:func:`calculator.gamma_sweep`)."""
    chosen, lang = at.chosen, at.lang
    alpha, gamma, batch, context = chosen.alpha, chosen.gamma, chosen.batch, chosen.context
    gamma_max = settings.get("SPECVIZ_GAMMA_MAX")
    best_gamma_frame, best_gamma = calculator.gamma_sweep(chosen, alpha, batch, context, gamma_max)
    row = st.container(horizontal=True)
    # Whether speculation pays at this batch (its break-even, its best γ) is no question where the
    # memory does not hold the batch; the passes' costs above are still what they are.
    if fits and best_gamma is not None:  # the batch fits at γ, so at the best γ of those that hold it
        best = best_gamma_frame.loc[best_gamma_frame["gamma"] == best_gamma].iloc[0]
        best_speed = float(best["speedup"])
        # Below 1 no verify pass is cheap enough (none costs less than a plain pass): the drafts alone
        # cost more than they return.
        breakeven_verify = float(spec.breakeven_verify_cost(alpha, gamma, here["draft_cost"], **chosen.reuse))
        row.metric(t("calc.m.breakeven_verify", lang), "—" if breakeven_verify < 1 else f"{breakeven_verify:.2f}×",
                   help=t("calc.m.breakeven_verify_help", lang), width="content")
        row.metric(t("calc.m.breakeven_alpha", lang), "—" if math.isnan(at.breakeven_alpha) else f"{at.breakeven_alpha:.2f}",
                   help=t("calc.m.breakeven_alpha_help", lang), width="content")
        # The range under the figure, in the metric's smaller line: within the value it was cut off on a
        # phone ("2 (1.58×, likely 1.29–1…": a browser pass). Given ratios are no estimate: no range
        # ("likely 4.22–4.22×").
        low, high = calculator.band_shown(best["low"], best["high"])
        row.metric(t("calc.m.best_gamma", lang),
                   t("calc.m.best_gamma_value" if best_speed > 1 else "calc.m.best_gamma_none", lang, gamma=best_gamma,
                     speedup=best_speed),
                   None if chosen.mode == "ratios" else t("calc.m.best_gamma_band", lang, low=low, high=high),
                   delta_color="off", delta_arrow="off",
                   help=t("calc.m.best_gamma_help", lang, gamma_max=gamma_max), width="content")
    return best_gamma_frame, best_gamma

