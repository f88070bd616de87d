"""Claims: a vendor says "up to 3x": what would have to be true for it, and can it be, on this setting?"""

from __future__ import annotations

import math
import urllib.parse
from dataclasses import replace

import streamlit as st

from pages.parts.claim_beside import FORMATS, show_beside_published
from pages.parts.claim_sentence import apply_sentence, is_read_figure, reading_from_link, show_reading
from pages.parts.controls import context_control, forget_controls, show_url_notices, url_choice, url_widget, view_choice
from pages.parts.shared import (altair_chart, calculator_page, how_sure, number_columns, presets, published_speedups,
                                require_router, scenario_link, titled_dataframe)
from specviz import charts, scenario, settings
from specviz.advice import claim_verdict, claim_words, claims, evidence, slowdown
from specviz.errors import SpecvizError
from specviz.i18n import in_language, md, message, t

require_router("claims")
lang: str = st.session_state.get("lang", "en")
gamma_max = settings.get("SPECVIZ_GAMMA_MAX")
batch_max = settings.get("SPECVIZ_BATCH_MAX")
# The worked example: "up to 3x on decode-heavy work", AWS Trainium with Qwen3 (Qwen3-32B drafted by
# Qwen3-0.6B, the pair the same article recommends, on the one chip that holds it), for no stated
# batch; served by vLLM, as in the article (its costs are the CUDA preset's: none is Neuron's).
EXAMPLE_SETTING = {"gpu": "Trainium2", "target": "Qwen3-32B", "tp": "1", "engine": "vllm-v1"}
# The article's own scenario for the figure: decode-heavy work, a coding assistant (100 in, 500 out).
EXAMPLE_WORKLOAD = "coding_assistant"
# The evidence's tabs, by id (``?claim_view=`` opens one): the claim against batch size, the
# acceptance it needs, and the published figures and the user's runs beside it.
CLAIM_VIEWS = ("batch", "required", "beside")
VERDICT_BOX = {"plausible": st.success, "conditional": st.warning, "unlikely": st.error, "impossible": st.error}
# The address the worked example replaced, for a link back to it.
BEFORE_EXAMPLE = "claims_before_example"


def open_example() -> None:
    """Set the worked example (a button's callback): its hardware and pair in the sidebar, every
    other choice at its default, and its claim here with nothing else stated. The address it replaces
    is kept for a link back (a manager's pass: the example wiped the claim being checked, and Back did
    not bring it back)."""
    if not st.session_state.get(BEFORE_EXAMPLE):  # a second press would link back to the example itself
        st.session_state[BEFORE_EXAMPLE] = {key: st.query_params.get_all(key) for key in st.query_params}
    forget_controls()
    for key in (*scenario.CHOICES, *scenario.FIELDS):  # the link's choices and fields too: the example states them all
        st.query_params.pop(key, None)
    # A sentence read before (or refused) is no part of the example: its reading and refusal go with it.
    st.session_state.pop("claim_reading", None)
    st.session_state.update(EXAMPLE_SETTING, tflops=None, bandwidth=None, claim=claims.DEFAULT_CLAIM, claim_batch=None,
                            claim_gamma=None, claim_measure="none", claim_value=None, claim_workload=EXAMPLE_WORKLOAD,
                            claim_sentence="")


st.title(t("claims.title", lang))
st.caption(t("claims.intro", lang))
st.button(t("claims.example", lang), key="claims_example", on_click=open_example, help=t("claims.example_help", lang))
if before := st.session_state.get(BEFORE_EXAMPLE):
    # The address is percent-encoded (no bracket or blank in it): a Markdown link of its own.
    st.caption(t("claims.example_back", lang, url="?" + urllib.parse.urlencode(before, doseq=True)))
with st.container(border=True):
    most = settings.get("SPECVIZ_CLAIM_MAX_CHARS")
    # The box takes more than is read, so that a paragraph pasted whole is refused with its length
    # (claims.too_long), not dropped by the browser without a word.
    st.text_area(t("claims.sentence", lang), key="claim_sentence", max_chars=10 * most, height=80,
                 placeholder=t("claims.sentence_placeholder", lang), help=t("claims.sentence_help", lang, limit=most))
    st.button(t("claims.sentence.button", lang), key="claims_read", on_click=apply_sentence)
    reading_from_link(lang)
    show_reading(lang)

if "scenario" not in st.session_state:
    st.info(t("calc.fix_scenario", lang, error=message(st.session_state.get("scenario_error", ""), lang)))
    st.stop()
sidebar: scenario.Scenario = st.session_state["scenario"]

text = url_widget(st.text_input, t("claims.claim", lang), key="claim", value=claims.DEFAULT_CLAIM, help=t("claims.claim_help", lang))
col_batch, col_gamma, col_context = st.columns(3)
batch = url_widget(col_batch.number_input, t("claims.batch", lang), 1, batch_max, key="claim_batch", value=None,
                   step=1, placeholder=t("claims.any_batch", lang), help=t("claims.batch_help", lang))
gamma = url_widget(col_gamma.number_input, t("claims.gamma", lang), 1, gamma_max, key="claim_gamma", value=None,
                   step=1, placeholder=t("claims.best_gamma", lang), help=t("claims.gamma_help", lang))
context = context_control(col_context, lang)
workloads = presets(settings.get("SPECVIZ_DATA_DIR")).workloads
chosen_workload = url_choice(st.selectbox, t("claims.workload", lang), ["none", *workloads], "claim_workload",
                             format_func=lambda w: t("claims.workload.none", lang) if w == "none" else
                             t("claims.workload.preset", lang, name=in_language(workloads[w].name, lang),
                               input=workloads[w].input_tokens, output=workloads[w].output_tokens),
                             help=t("claims.workload_help", lang))
col_measure, col_value, col_at = st.columns(3)
measure = url_choice(col_measure.selectbox, t("claims.measure", lang), ["none", *claims.MEASURES], "claim_measure",
                     format_func=lambda m: t(f"claims.measure.{m}", lang), help=t("claims.measure_help", lang))
value = url_widget(col_value.number_input, t("claims.value", lang), 0.0, claims.MEASURED_VALUE_MAX, key="claim_value",
                   value=None, step=0.01, disabled=measure == "none")
# Left empty, the claim's γ, else the sidebar's: a figure quoted at γ 3 is one of γ 3.
measured_gamma = claims.measured_at(
    url_widget(col_at.number_input, t("claims.measured_gamma", lang), 1, gamma_max, key="claim_measured_gamma",
               value=None, step=1, disabled=measure in ("none", "alpha"),
               placeholder=t("claims.measured_gamma_claims" if gamma is not None else "claims.measured_gamma_sidebar",
                             lang, gamma=gamma if gamma is not None else sidebar.gamma),
               help=t("claims.measured_gamma_help", lang)), gamma, sidebar.gamma)
show_url_notices(st, lang)
if not text.strip():  # emptied by a refused sentence, whose refusal above says why; or by the user
    if "error" not in st.session_state.get("claim_reading", {}):  # not a page that stops without a word
        st.info(t("claims.claim_empty", lang))
    st.stop()

try:
    speedup = claim_words.parse_claim(text)
    # A batch in the claim's words counts where the field names none (past SPECVIZ_BATCH_MAX, refused);
    # where the field names another, the field's counts, and the page says so.
    batch, batch_note = claims.claimed_batch(batch, claim_words.batch_in_words(text))
    if batch_note is not None:
        st.warning(message(batch_note, lang))
    st.caption(md("claims.read_as", lang, speedup=speedup, text=text) if batch is None else
               md("claims.read_as_batch", lang, speedup=speedup, batch=batch, text=text))
    if percent := claim_words.percent_of(text):
        note = claim_words.percent_reading(percent, speedup)
        st.caption(md(note.key, lang, **note.params))
    alpha = None if measure == "none" or value is None else claims.alpha_from_measurement(measure, value, measured_gamma,
                                                                                               sidebar.reuse)
except SpecvizError as exc:
    st.error(message(exc, lang))
    st.stop()

tokens = None if chosen_workload == "none" else (workloads[chosen_workload].input_tokens,
                                                workloads[chosen_workload].output_tokens)
# The γ a vLLM rate or length was measured at: a slowdown with no γ of its own is checked there first.
claim = claims.Claim(speedup, batch=batch, gamma=gamma, alpha=alpha, workload=tokens,
                     measured_gamma=measured_gamma if alpha is not None and measure != "alpha" else None)
known = presets(settings.get("SPECVIZ_DATA_DIR"))
# Read once per data folder; filtered once a run: the check weighs them, and the view beside published
# figures shows them.
every_published = published_speedups(settings.get("SPECVIZ_DATA_DIR"))
measured = evidence.comparable_published(every_published, sidebar, known)
# A figure below 1 is a slowdown ("35% slower at 64 users"): the acceptance below which it holds.
slowing = speedup < 1.0
check = (slowdown.check_slowdown(replace(sidebar, context=context), claim, gamma_max, batch_max, known.acceptance,
                                  measured)
         if slowing else
         claims.check_claim(replace(sidebar, context=context), claim, gamma_max, batch_max, known.acceptance, measured))
# The figure the cards show: with nothing accepted for a slowdown, with everything accepted for a gain.
figure = check.floor if slowing else check.best

# A figure over another GPU or engine is no speedup over plain decoding: the verdict says so, in no colour.
read = st.session_state.get("claim_reading") or {}
held = read if is_read_figure(read, speedup) else {}  # a reading stands only while its figure is the claim's
over_words, over_method = held.get("over_words"), held.get("baseline")
# What the figure is over, in the address while it holds, so that a link copied from here says it too
# (reading_from_link): a method's kind, or the sentence's words.
if over := over_method or over_words:
    st.query_params["claim_over"] = over
else:
    st.query_params.pop("claim_over", None)
(st.info if over_words else VERDICT_BOX[check.verdict])(
    " ".join(message(n, lang) for n in claim_verdict.headline(check, over_words, over_method)))
st.markdown("\n".join(f"- {message(reason, lang)}" for reason in check.reasons))
if check.conditions:
    st.markdown(t("claims.conditions", lang) + "\n" + "\n".join(f"- {message(c, lang)}" for c in check.conditions))
row = st.container(horizontal=True)  # metrics wrap on a narrow screen instead of cutting their values
row.metric(t("claims.m.claim", lang), f"{speedup:.2f}×", help=md("claims.m.claim_help", lang, text=text),
           width="content")
if slowing and not math.isnan(figure["speedup"]):
    row.metric(t("claims.m.floor", lang), f"{figure['speedup']:.2f}× ({figure['low']:.2f}–{figure['high']:.2f})",
               help=t("claims.m.floor_help", lang, **figure), width="content")
elif not math.isnan(figure["speedup"]):  # else the claim's batch does not fit: the verdict says so
    # Its range beside it: a central 1.75× under a 1.80× claim that only the range's top reaches (2.15×)
    # had read as a contradiction of the verdict (a manager's pass).
    # Within the positions the draft is known to keep its acceptance (an EAGLE-3 head's training): its
    # γ 16 is said in the reasons.
    best = check.best.get("trained", check.best)
    row.metric(t("claims.m.best_trained" if best is not check.best else "claims.m.best", lang,
                 trained=best.get("positions")),
               f"{best['speedup']:.2f}× ({best['low']:.2f}–{best['high']:.2f})",
               help=t("claims.m.best_help", lang, low=best["low"], high=best["high"], gamma=best["gamma"],
                      batch=best["batch"]), width="content")


def batch_range(low: float, high: float, gaps: tuple[tuple[int, int], ...]) -> str:
    """Batches from ``low`` to ``high`` but the runs ``gaps`` (:attr:`specviz.advice.claims.ClaimCheck.holds_gaps`)."""
    shown = t("claims.none", lang) if math.isnan(high) else f"{low:.0f}" if low == high else f"{low:.0f}–{high:.0f}"
    return t("claims.m.batches_except", lang, range=shown, gaps=claim_verdict.batch_runs(gaps)) if gaps else shown


batches_key, batches_help = (("claims.m.slowdown_batches", "claims.m.slowdown_batches_help") if slowing else
                              ("claims.m.batches", "claims.m.batches_help"))
trained = None if slowing else check.best.get("trained")
if trained is not None:
    # Beside the best within the draft's trained positions, the batches within them too; every γ's in its help.
    row.metric(t("claims.m.batches_trained", lang, trained=trained["positions"]),
               batch_range(trained["holds_from"], trained["holds_up_to"], trained["holds_gaps"]),
               help=t("claims.m.batches_trained_help", lang, trained=trained["positions"], gamma_max=gamma_max,
                      every=batch_range(check.holds_from, check.holds_up_to, check.holds_gaps)), width="content")
else:
    row.metric(t(batches_key, lang), batch_range(check.holds_from, check.holds_up_to, check.holds_gaps),
               help=t(batches_help, lang), width="content")
if alpha is not None:
    yours_key, yours_help = (("claims.m.slowdown_yours", "claims.m.slowdown_yours_help") if slowing else
                             ("claims.m.yours", "claims.m.yours_help"))
    row.metric(t(yours_key, lang), batch_range(check.yours_from, check.yours_up_to, check.yours_gaps),
               help=t(yours_help, lang), width="content")
# What "likely" means, as the calculator says it (a manager's pass: the page had never said).
if not math.isnan(figure["speedup"]):  # else no range is shown (a batch that does not fit)
    st.caption(how_sure(sidebar.engine.name,
                        len(scenario.knobs_off_preset(sidebar)) == len(scenario.COST_KNOBS), lang))
# The same figure in the calculator: this claim's α, γ, batch and context on the sidebar's whole scenario.
point = slowdown.calculator_point(check) if slowing else claims.calculator_point(check, sidebar)
label = (t("claims.to_calculator", lang, **point) if "alpha" in point else
         t("claims.to_calculator_no_fit", lang, batch=point["batch"]))
if "alpha" not in point:
    # A batch that does not fit: the calculator's own α and γ go with it, so that a new tab, which has
    # none, opens the figures this session's would (a consistency pass: E 2.73 here, 3.36 there).
    point |= {name: st.session_state[name] for name in ("alpha", "gamma") if st.session_state.get(name) is not None}
st.page_link(calculator_page(lang), icon=":material/calculate:", label=label,
             # Four decimals: a measured rate's α (0.7295) at three had priced 1.74× beside the page's 1.73×.
             query_params=scenario_link(sidebar, **{name: f"{round(value, 4):g}" for name, value in point.items()},
                                        context=str(context)),
             help=t("claims.to_calculator_help", lang))

# The evidence, one view open at a time: only the open one is built (built at once, the published
# figures' chart and grid and the store's runs paired with their baselines cost a first render about
# 0.5 s here: 4.2 against 3.7 s).
# In the address, as this page's other choices are: a link copied from a view opens that view.
open_view = view_choice("claim_view", CLAIM_VIEWS, lambda view: t(f"claims.tab.{view}", lang), t("claims.views", lang),
                        in_url=True)
show_url_notices(st, lang)
if open_view != "beside" and check.batches.empty:
    # The claim's batch does not fit: nothing to draw or to need there (a blank view and a table of
    # dashes "out of reach whatever the acceptance" had said another reason: a manager's pass).
    st.info(t("claims.view_no_fit", lang, batch=figure["batch"], limit=check.memory_limit))
elif open_view == "batch":
    altair_chart(charts.claim_by_batch(check.batches, speedup, lang,
                                       limit=check.memory_limit if check.memory_limit < batch_max else None,
                                       limit_gamma=check.memory_gamma, claimed_batch=batch))
    if not slowing and (trained := check.best.get("trained")) is not None:
        # The line's best γ may be past the positions a head is trained for (a manager's pass: 7.1× on the
        # chart beside the card's 4.63× within them, nothing reconciling the two).
        st.caption(t("claims.chart_trained", lang, best=check.best["speedup"], gamma=int(check.best["gamma"]),
                     positions=int(trained["positions"]), trained=trained["speedup"]))
elif open_view == "required":
    st.subheader(t("claims.slowdown.required" if slowing else "claims.required", lang, batch=figure["batch"]))
    st.caption(t("claims.slowdown.required_note" if slowing else "claims.required_note", lang))
    # A figure out of reach (NaN) is a dash, as the note says, not "None".
    shown = (slowdown.required_as_shown(check.required) if slowing else
             claims.required_as_shown(check.required, replace(sidebar, context=context).reuse))
    titled_dataframe(shown, lang, placeholder="—", column_config=number_columns(shown, FORMATS, lang))
else:
    show_beside_published(sidebar, speedup, batch, every_published, measured, lang)
