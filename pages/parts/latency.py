"""The calculator's Latency view: a workload's whole request with and without speculation, and the
tail that acceptance gives it (a helper of pages/what-if.py, not a page)."""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd
import streamlit as st

from pages.parts.controls import renew, show_url_notices, url_choice, url_count, url_widget
from pages.parts.shared import altair_chart, chain_runs, mix_tail_at, mix_tail_table, open_store, presets
from specviz import calculator, charts, scenario, settings, workload
from specviz.errors import SpecvizError
from specviz.i18n import in_language, md, message, t
from specviz.model import simulate, spec, zero_accept
from specviz.results import request_acceptance

DEFAULT_WORKLOAD = "coding_assistant"


def pick_workload() -> None:
    """A workload preset sets the tokens in and out (a widget callback); "custom" keeps them."""
    workloads = presets(settings.get("SPECVIZ_DATA_DIR")).workloads
    if (chosen_id := st.session_state.get("workload")) in workloads:
        st.session_state["input_tokens"] = workloads[chosen_id].input_tokens
        st.session_state["output_tokens"] = workloads[chosen_id].output_tokens


def typed_tokens() -> None:
    """Tokens typed by hand make the workload a custom one (a widget callback)."""
    st.session_state["workload"] = "custom"
    renew("workload")


@st.cache_data(max_entries=64, show_spinner=False)
def simulated(alpha: float, gamma: int, plain_s: float, spec_s: float, output_tokens: int,
              rates: tuple[float, ...] | None = None) -> tuple[simulate.LatencySummary, pd.DataFrame]:
    """The latency simulation at this point (from measured per-position ``rates`` where given, else
    α), and the sweep of zero-accept shares at its mean tokens per step (both seeded, so cached by
    their inputs)."""
    times = simulate.StepTimes(plain_s=plain_s, spec_s=spec_s)
    acceptance = {"rates": rates} if rates else {"alpha": alpha, "gamma": gamma}
    # The requests simulated shrink so that the view's runs stay within its budget of cells; the
    # caption says how many.
    length, shares, requests = workload.latency_runs(alpha, gamma, rates, output_tokens)
    summary = simulate.latency(**acceptance, times=times, output_tokens=output_tokens, requests=requests,
                               steps=workload.LATENCY_STEPS)
    sweep = zero_accept.zero_accept_sweep(shares, length, gamma, times, output_tokens=output_tokens,
                                       requests=requests, steps=workload.LATENCY_STEPS) if shares else pd.DataFrame()
    return summary, sweep


def workload_controls(lang: str) -> tuple[int, int]:
    """A request's tokens in and out (the scenario's ``input_tokens`` and ``output_tokens``), from a
    workload preset or typed: drawn once a run, in the Latency view or, where each step carries the
    load's prompts, under the calculator's controls. Both counts are always in the URL (:func:`url_count`)."""
    workloads = presets(settings.get("SPECVIZ_DATA_DIR")).workloads
    col_w, col_in, col_out = st.columns(3)
    name = lambda w: t("calc.workload.custom", lang) if w == "custom" else in_language(workloads[w].name, lang)
    # A link's tokens name their preset where one has them, else a custom workload.
    linked = [st.query_params.get(key) for key in ("input_tokens", "output_tokens")]
    named = [w for w, found in workloads.items() if linked == [str(found.input_tokens), str(found.output_tokens)]]
    preset = url_choice(col_w.selectbox, t("calc.workload", lang), [*workloads, "custom"], "workload", format_func=name,
                        default=DEFAULT_WORKLOAD if linked == [None, None] else (named or ["custom"])[0],
                        on_change=pick_workload, help=t("calc.workload_help", lang))
    default = workloads.get(preset, workloads[DEFAULT_WORKLOAD])
    n_in = url_count(col_in.number_input, t("calc.input_tokens", lang), "input_tokens", default.input_tokens,
                     on_change=typed_tokens, help=t("calc.tokens_help", lang))
    n_out = url_count(col_out.number_input, t("calc.output_tokens", lang), "output_tokens", default.output_tokens,
                      on_change=typed_tokens, help=t("calc.tokens_help", lang))
    if preset in workloads:
        st.caption(t("calc.workload_source", lang, source=workloads[preset].source, note=workloads[preset].note))
    return int(n_in), int(n_out)


def show_latency(chosen: scenario.Scenario, alpha: float, gamma: int, batch: int, lang: str,
                 tokens: tuple[int, int] | None = None) -> None:
    """The Latency view at the calculator's point: the workload's request end to end, the tokens
    per step, the latency percentiles and the sweep of zero-accept shares. Where the load's
    workload was set under the calculator's controls (``tokens``), it is that one."""
    if tokens is not None:
        n_in, n_out = tokens
        if chosen.prefill:
            st.caption(t("calc.latency.load_workload", lang, input=n_in, output=n_out))
    else:
        n_in, n_out = workload_controls(lang)
    rates_text = url_widget(st.text_input, t("calc.latency.rates", lang), key="latency_rates", value="",
                            placeholder="0.83, 0.84, 0.86", max_chars=400, help=t("calc.latency.rates_help", lang))
    show_url_notices(st, lang)  # this view's own link values, on this run
    rates, sidebar_reuse = None, chosen.mtp_reuse
    if rates_text.strip():
        try:
            rates = simulate.parse_rates(rates_text)
        except SpecvizError as exc:
            st.error(message(exc, lang))
    # A request the model does not hold (longer than the calculator's longest context, or ending within
    # one speculative step) has no decode to time: the load's rules, said here too. Nor has a batch
    # whose requests' mean context, where the steps are timed, does not fit (only the slider's did), at
    # the γ simulated: the measured rates' count where given (an attack pass: 16 rates at a sidebar's
    # γ 1 had been checked at γ 1).
    try:
        fit = calculator.load_fit(replace(chosen, gamma=len(rates) if rates else gamma), n_in, n_out)
    except SpecvizError as exc:
        st.info(t("calc.latency.not_modelled", lang, error=message(exc, lang)))
        return
    if not fit["fits"]:
        st.info(t("calc.latency.no_fit", lang, batch=batch, context=fit["context"], limit=fit["max_batch"]))
        return
    # Measured rates: the α and γ with their tokens per step for the scenario's draft (the same mean
    # step, so the same request times), a reused MTP layer at the reuse factor they show, not the
    # sidebar's; the simulation draws from the rates themselves. Without them, an MTP layer run past
    # its training accepts less at each further position: drawn so.
    measured = bool(rates)
    gamma = len(rates) if rates else gamma
    chosen, alpha, rates = workload.latency_acceptance(chosen, alpha, gamma, rates)
    if measured:
        st.caption(t("calc.latency.from_rates", lang, gamma=gamma, length=float(spec.expected_tokens_chain(rates)),
                     alpha=alpha))
        if chosen.mtp_reused_from is not None and chosen.mtp_reuse != sidebar_reuse:
            st.caption(t("calc.latency.rates_reuse", lang, reuse=chosen.mtp_reuse, sidebar=sidebar_reuse))
    whole = {k: float(v) for k, v in workload.end_to_end(chosen, alpha, gamma, batch, n_in, n_out).items()}
    context, times = workload.latency_step_times(chosen, alpha, gamma, batch, n_in, n_out)
    first = {k: float(v) for k, v in workload.prompt_room(chosen, alpha, gamma, batch).items()}
    # Where the prompts queue without end there is no first token to time: said, not given a figure.
    if (side := next((s for s in ("plain", "spec") if not first[f"keeps_up_{s}"]), None)) is not None:
        room, budget = first[f"room_{side}"], int(first["budget"])
        st.warning(t("calc.latency.queue_grows" if room > 0 else "calc.latency.budget_full", lang,
                     side=t(f"calc.latency.side.{side}", lang), batch=batch, arriving=first[f"prompts_{side}"],
                     budget=budget, room=room, positions=budget - room, engine=chosen.engine.memory.budget.engine,
                     flag=chosen.engine.memory.budget.flag))
    shown = lambda value, form, unit="": format(value, form) + unit if math.isfinite(value) else "—"
    row = st.container(horizontal=True)
    row.metric(t("calc.m.ttft", lang), shown(whole["ttft_spec_s"] * 1e3, ",.0f", " ms"),
               delta=f"{(whole['ttft_spec_s'] - whole['ttft_plain_s']) * 1e3:+,.1f} ms" if side is None else None,
               delta_color="inverse", width="content",
               # Where the engine runs prefill batches apart from the decode (SGLang), a prompt's steps
               # alternate with the batch's decode steps instead of carrying it.
               help=t("calc.m.ttft_help" if chosen.engine.memory.budget.decodes_share else "calc.m.ttft_help_apart",
                      lang, plain=shown(whole["ttft_plain_s"] * 1e3, ",.0f", " ms"),
                      budget=int(first["budget"]), even=shown(whole["ttft_spec_even_s"] * 1e3, ",.0f", " ms"),
                      engine=chosen.engine.memory.budget.engine))
    row.metric(t("calc.m.request", lang), shown(whole["e2e_spec_s"], ",.2f", " s"),
               help=t("calc.m.request_help", lang, plain=shown(whole["e2e_plain_s"], ",.2f", " s")), width="content")
    # Its band as the headline's (an attack pass had found the request's speedup the one figure without one).
    low, high = calculator.band_shown(*calculator.request_speedup_band(chosen, alpha, gamma, batch, n_in, n_out))
    row.metric(t("calc.m.e2e_speedup", lang),
               t("calc.m.e2e_speedup_value", lang, speedup=whole["e2e_speedup"], low=low, high=high)
               if side is None and math.isfinite(whole["e2e_speedup"]) else "—",
               help=t("calc.m.e2e_speedup_help", lang, decode=whole["decode_speedup"], context=context),
               width="content")
    row.metric(t("calc.m.prefill_share", lang), shown(whole["prefill_share"], ".1%"),
               help=t("calc.m.prefill_share_help", lang, limit=whole["e2e_limit"]), width="content")
    st.caption(t("calc.latency.context_load" if chosen.prefill else "calc.latency.context", lang,
                 context=context, decode=whole["decode_speedup"]))
    if whole["prompt_heavy"] and n_out > 1 and side is None:  # with no token to decode, the note below says all there is
        st.warning(t("calc.prompt_heavy", lang, share=whole["prefill_share"], limit=whole["e2e_limit"],
                     decode=whole["decode_speedup"], e2e=whole["e2e_speedup"]))
    if n_out == 1:  # the prefill gives the only token: nothing is decoded, nothing to simulate
        st.info(t("calc.latency.no_decode", lang))
        return
    # The tokens after the first, which the prefill gives.
    summary, sweep = simulated(alpha, gamma, times.plain_s, times.spec_s, n_out - 1, rates)
    st.subheader(t("calc.latency.tail", lang))
    altair_chart(charts.tokens_per_step(summary.counts, lang))
    st.caption(t("calc.latency.tail_note", lang, zero=summary.zero_accept_share, spec_ms=summary.times.spec_s * 1e3,
                 plain_ms=summary.plain_s * 1e3, mean_ms=summary.itl_mean_s * 1e3, requests=summary.requests,
                 tokens=summary.output_tokens))
    # Milliseconds on the page, as in the metrics: the library's tables are in seconds.
    table = summary.table(per_step=True)
    table = table.assign(plain_s=table["plain_s"] * 1e3, spec_s=table["spec_s"] * 1e3).rename(
        columns={"plain_s": "plain_ms", "spec_s": "spec_ms"})
    st.dataframe(table.rename(index=lambda r: t(f"simulate.table.{r}", lang),
                              columns=lambda c: t(f"calc.latency.{c}", lang)),
                 column_config={t(f"calc.latency.{c}", lang): st.column_config.NumberColumn(format="%,.2f")
                                for c in ("plain_ms", "spec_ms", "ratio")})
    if not sweep.empty:
        st.subheader(t("calc.latency.sweep", lang, length=float(chosen.expected_tokens(alpha, gamma))))
        # What moves first, then what stays put.
        moving = ["zero_share", "tpot_mean_s", "tpot_p90_s", "tpot_p99_s", "request_p99_s", "request_p50_s",
                  "request_mean_s", "itl_mean_s", "itl_p99_s", "mean_tokens", "zero_accept_share", "tpot_p50_s"]
        shown = sweep[moving].assign(**{c: sweep[c] * 1e3 for c in moving if c.endswith("_s")})
        formats = {c: "%,.1f" if c.endswith("_s") else "%.2f" if c == "mean_tokens" else "percent" for c in moving}
        st.dataframe(shown.rename(columns=lambda c: t(f"calc.latency.sweep.{c}", lang)), hide_index=True,
                     column_config={t(f"calc.latency.sweep.{c}", lang): st.column_config.NumberColumn(format=f)
                                    for c, f in formats.items()})
        st.caption(t("calc.latency.sweep_note", lang))
    show_measured_mix(chosen, batch, context, n_out - 1, lang)


def show_measured_mix(chosen: scenario.Scenario, batch: int, context: float, output_tokens: int, lang: str) -> None:
    """The request latency from a stored run's measured mix of per-request acceptance instead of one
    α, at this view's batch, context and tokens, on the scenario at the run's γ: the tail that the
    requests which accept little make, against one α at their mean."""
    st.subheader(t("calc.latency.mix", lang))
    store = open_store(lang)
    runs = store.request_acceptance()
    runs = chain_runs(runs[runs["num_speculative_tokens"].notna()], lang)
    if runs.empty:
        st.caption(t("calc.latency.mix_none", lang))
        return
    by_id = runs.set_index("run_id")

    def name(run: str) -> str:
        return t("calc.latency.mix_option", lang, file=by_id.at[run, "source_file"], label=by_id.at[run, "label"] or "",
                 gamma=int(by_id.at[run, "num_speculative_tokens"]), requests=int(by_id.at[run, "requests"]))

    run_id = st.selectbox(t("exp.request_run", lang), runs["run_id"], key="latency_mix_run", format_func=name)
    gamma = int(by_id.at[run_id, "num_speculative_tokens"])
    lengths = request_acceptance.request_lengths(store.request_acceptance_of(run_id), gamma)
    tail = mix_tail_at(chosen, lengths, gamma, batch, context, output_tokens, lang)
    if tail is None:
        return
    st.markdown(md("calc.latency.mix_note", lang, gamma=gamma, batch=batch, tokens=output_tokens,
                   requests=int(lengths.notna().sum()), change=float(tail.at["p99", "change"])))
    mix_tail_table(tail, lang)
