"""Claims: a vendor says "up to 3x": what would have to be true for it, and can it be, on this setting?"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st

from pages.parts.controls import (PARALLEL, PARALLEL_BEFORE, clear_gpu_overrides, context_control, forget, forget_controls,
                             forget_target, new_format, renew, show_url_notices, url_choice, url_widget, view_choice)
from pages.parts.shared import (altair_chart, calculator_page, how_sure, model_choice_name, new_engine, number_columns,
                           open_store, presets, published_speedups, require_router, scenario_link, titled_dataframe)
from specviz import charts, scenario, settings
from specviz.advice import claim_over, claim_verdict, claim_words, claims, evidence
from specviz.errors import SpecvizError
from specviz.i18n import in_language, md, message, t
from specviz.results import explorer

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
VERDICT_BOX = {"plausible": st.success, "conditional": st.warning, "impossible": st.error}
# How the tables' figures read: speedups with two decimals and ×, α and vLLM's acceptance rate with three.
FORMATS = {**dict.fromkeys(("ceiling", "ceiling_low", "ceiling_high", "at_alpha", "at_alpha_low", "at_alpha_high",
                            "value"), "%.2f×"),
           **dict.fromkeys(("alpha_needed", "alpha_safe", "alpha_optimistic", "acceptance_rate"), "%.3f"),
           "acceptance_length": "%.2f", "gamma": "%d", "batch": "%d"}


def open_example() -> None:
    """Set the worked example (a button's callback): its hardware and pair in the sidebar, every
    other choice at its default, and its claim here with nothing else stated."""
    forget_controls()
    for key in (*scenario.CHOICES, *scenario.FIELDS):  # the link's choices and fields too: the example states them all
        st.query_params.pop(key, None)
    # A sentence read before (or refused) is no part of the example: its reading and refusal go with it.
    st.session_state.pop("claim_reading", None)
    st.session_state.update(EXAMPLE_SETTING, tflops=None, bandwidth=None, claim=claims.DEFAULT_CLAIM, claim_batch=None,
                            claim_gamma=None, claim_measure="none", claim_value=None, claim_workload=EXAMPLE_WORKLOAD,
                            claim_sentence="")


# The scenario's choices a sentence can name, set as the sidebar's controls (and renewed, so that a
# control kept for the session takes them), and the claim's own fields.
SIDEBAR_ITEMS = ("gpu", "target", "precision", "kv", "engine", "draft", "tp", "dp")
# What setting an item clears, kept to put back with the old value: the figures typed over a GPU
# preset's, which belong to that device (clear_gpu_overrides), a model's draft, which a new model's
# default replaces (the draft chosen or pasted for the old model had been lost on undo), and the cost
# knobs an engine's preset replaces (new_engine).
KEPT_WITH = {"gpu": ("tflops", "bandwidth"), "target": ("draft",), "engine": scenario.COST_KNOBS}


def apply_sentence() -> None:
    """Read the pasted sentence into the scenario and the claim (a button's callback): each item set
    with the value it replaced, so that it can be undone; what the sentence leaves out, kept to ask.

    What the sentence read before set is undone first, where it still holds what that sentence set:
    a sentence is read from the page as it was before any (the same sentence gives the same verdict
    whatever was read before), and a refused one leaves nothing of the one before and no claim.
    """
    text = st.session_state.get("claim_sentence", "")
    if not text.strip():  # nothing to read: the page as it is (the claim typed in its own field, what was read)
        st.session_state["claim_reading"] = {**st.session_state.get("claim_reading", {}),
                                             "error": SpecvizError("claims.sentence_empty")}
        return
    for item in st.session_state.pop("claim_reading", {}).get("items", ()):
        if still_set(item):  # else the user has set it since
            undo(item)
    known = presets(settings.get("SPECVIZ_DATA_DIR"))
    try:
        reading = claim_words.read_sentence(text, known)
    except SpecvizError as exc:
        # The sentence was the claim to check and holds none: the page is as for no claim (its
        # refusal alone), not the verdict of the claim before it.
        st.session_state["claim"] = ""
        st.session_state["claim_reading"] = {"error": exc}
        return
    target = reading.target or st.session_state.get("target", scenario.DEFAULT_TARGET)
    choices, unused = claim_words.sentence_choices(reading, known, target)
    found = {"claim": f"{reading.speedup:g}x", "claim_batch": reading.batch, "claim_gamma": reading.gamma, **choices}
    # A method the target cannot draft with (MTP on a model without MTP layers) is said, not dropped.
    not_applied = [{"method": unused, "target": known.models[target].name}] if unused else []
    items = []
    for key, value in found.items():
        if value is None:
            continue
        items.append({"key": key, "value": value, "previous": st.session_state.get(key),
                      "kept": {name: st.session_state.get(name) for name in KEPT_WITH.get(key, ())}})
        # What a new choice sets afresh, only where it is new: a sentence naming the sidebar's own GPU or
        # model had set the user's GPU count (and draft) back to the defaults (a browser pass).
        new = st.session_state.get(key) != value
        st.session_state[key] = value
        if new and key == "gpu":
            clear_gpu_overrides()
        elif new and key == "target":
            forget_target("draft", *PARALLEL)
        elif new and key in FORMAT_ITEMS:  # as the sidebar's own choices do: default GPU counts follow it
            new_format()
        elif new and key == "engine":  # its preset's costs, as the sidebar's choice of one sets them
            new_engine()
        if key in SIDEBAR_ITEMS:
            renew(key)
    if "tp" in choices:  # the sentence's count, said as its item: not "the fewest that hold the pair"
        st.session_state.pop(PARALLEL_BEFORE, None)
    st.session_state["claim_reading"] = {"items": items, "dataset": reading.dataset, "unstated": reading.unstated,
                                         "not_applied": not_applied, "baseline": reading.baseline,
                                         "over_words": reading.over_words, "percent": reading.percent,
                                         "speedup": reading.speedup, "gpu_words": reading.gpu_words,
                                         "target_words": reading.target_words,
                                         "unknown_model": reading.unknown_model, "gpus": reading.gpus,
                                         "gamma_beyond": reading.gamma_beyond, "same_speed": reading.same_speed,
                                         "speculation_said": reading.speculation_said,
                                         "draft_named": reading.draft is not None}


# What the sidebar sets afresh when an item's choice changes, as its own controls do: the GPUs that
# hold the pair, and the draft of a target.
FORGOTTEN_WITH = {"gpu": PARALLEL, "target": ("draft", *PARALLEL)}
# A format set back sets the GPU counts as the sidebar's own choice of one does (_controls.new_format):
# counts the user chose stay (an undo had reset an 8 typed in the link to the 2 that hold the model).
FORMAT_ITEMS = ("precision", "kv")


def undo(item: dict[str, Any]) -> None:
    """Put one item read from a sentence back to the value it replaced, with what setting it cleared
    (:data:`KEPT_WITH`): a GPU with the figures typed for it (those typed since were for the sentence's
    GPU), a model with its draft."""
    if item["key"] in SIDEBAR_ITEMS:
        if item["key"] in FORMAT_ITEMS:
            new_format()
        else:
            (forget_target if item["key"] == "target" else forget)(*FORGOTTEN_WITH.get(item["key"], ()))
        for name, value in item["kept"].items():
            if value is None:
                forget(name)
            else:
                st.session_state[name] = value
                renew(name)
        if item["previous"] is None:
            forget(item["key"])
        else:
            st.session_state[item["key"]] = item["previous"]
            renew(item["key"])
    else:
        st.session_state[item["key"]] = item["previous"]


def still_set(item: dict[str, Any]) -> bool:
    """Whether what a sentence set (an item of its reading) still holds: a choice made since, in the
    sidebar or a field, is the user's, and neither listed as the sentence's nor undone (a browser pass:
    "The model: Qwen3-Next" had stayed listed after gpt-oss-20b was chosen, and its undo replaced
    that choice with Qwen3-32B)."""
    return st.session_state.get(item["key"]) == item["value"]


def undo_item(index: int) -> None:
    """Put one item read from the sentence back to the value it replaced (a button's callback). What
    the undo sets afresh (:data:`FORGOTTEN_WITH`: the model's draft, the GPU count of a GPU or model)
    goes from the list too, not left listed as set; a format's undo leaves counts the user chose."""
    items = st.session_state["claim_reading"]["items"]
    item = items.pop(index)
    if not still_set(item):  # set otherwise since: the user's value stays (show_reading lists it no more)
        return
    undo(item)
    forgotten = FORGOTTEN_WITH.get(item["key"], ())
    items[:] = [other for other in items if other["key"] not in forgotten]


# Session key: the link's claim_over has been read (on the session's first run of this page; after it,
# the page writes claim_over itself, and a worked example or a new sentence must not bring it back).
_OVER_FROM_LINK = "claim_over_read"


def reading_from_link() -> None:
    """What a link says the claim's figure is over (``claim_over``, written while a sentence's reading
    says it: :func:`specviz.advice.claim_over.over_from_link`), kept as the reading of the link's claim
    on the session's first run of the page: the page opened from a link leads its verdict and warns as
    the page it was copied from did. A value no sentence's reading gives is said and left out."""
    if st.session_state.get(_OVER_FROM_LINK):
        return
    st.session_state[_OVER_FROM_LINK] = True
    if "claim_over" not in st.query_params:
        return
    try:
        method, what = claim_over.over_from_link(", ".join(st.query_params.get_all("claim_over")))
    except SpecvizError as exc:
        st.warning(message(exc, lang))
        del st.query_params["claim_over"]
        return
    speedup = claimed_now()
    if speedup is not None and (method is not None or what is not None):
        st.session_state["claim_reading"] = {"items": [], "dataset": None, "unstated": (), "baseline": method,
                                             "over_words": what, "speedup": speedup}


def is_read_figure(reading: dict[str, Any], speedup: float | None) -> bool:
    """Whether the claim checked is the figure a sentence was read as: the claim field holds it written
    to six figures ("111% faster" is 2.1100000000000003, written "2.11x")."""
    return speedup is not None and "speedup" in reading and math.isclose(reading["speedup"], speedup, rel_tol=1e-6)


def claimed_now() -> float | None:
    """The figure of the claim field as it stands before it is drawn (its value kept for the session,
    else the link's), or None where it holds none (the field says why)."""
    text = st.session_state.get("claim", st.query_params.get("claim", claims.DEFAULT_CLAIM))
    try:
        return claim_words.parse_claim(text)
    except SpecvizError:
        return None


def show_reading() -> None:
    """What the sentence was read as, each item with its undo, and the questions it leaves open."""
    reading = st.session_state.get("claim_reading")
    if not reading:
        return
    if "error" in reading:
        st.error(message(reading["error"], lang))
        if "items" not in reading:  # a sentence refused: nothing of it was set
            return
    holding = [(index, item) for index, item in enumerate(reading["items"]) if still_set(item)]
    if holding:  # once every item is undone or set otherwise, no heading over nothing
        st.markdown(t("claims.sentence.read", lang))
    known = presets(settings.get("SPECVIZ_DATA_DIR"))
    # Each choice named as the sidebar names it ("NVIDIA H100 SXM", "EAGLE-3 head"), not by its id.
    shown = {"gpu": lambda gpu: in_language(known.gpus[gpu].name, lang),
             "precision": lambda precision: t(f"side.precision.{precision}", lang),
             "kv": str.upper,
             "engine": lambda engine: in_language(known.engines[engine].name, lang),
             "target": lambda model: model_choice_name(model, known, lang),
             "draft": lambda draft: model_choice_name(draft, known, lang)}
    for index, item in holding:
        line = st.container(horizontal=True, vertical_alignment="center")
        value = shown.get(item["key"], str)(item["value"])
        line.markdown(md(f"claims.sentence.item.{item['key']}", lang, value=value))
        line.button(t("claims.sentence.undo", lang), key=f"claims_undo_{index}", on_click=undo_item, args=(index,))
    # What the sentence leaves to the sidebar, said: the verdict rests on it (a manager's pass: "unlikely"
    # had rested on a draft model the sentence never named).
    sidebar = st.session_state["scenario"]
    if not reading.get("draft_named", True):
        st.caption(md("claims.sentence.draft_kept", lang, draft=shown["draft"](sidebar.draft_id)))
    if not reading.get("gpus"):
        st.caption(md("claims.sentence.gpus_kept", lang, gpus=sidebar.tp * sidebar.dp,
                      gpu=shown["gpu"](sidebar.gpu.id)))
    assumed = next((item["value"] for _, item in holding if item["key"] == "gpu"), None)
    if reading.get("gpu_words") and assumed:  # not once its item is undone
        st.caption(md("claims.sentence.gpu_assumed", lang, words=reading["gpu_words"], gpu=shown["gpu"](assumed)))
    read_as = next((item["value"] for _, item in holding if item["key"] == "target"), None)
    if reading.get("target_words") and read_as:
        st.caption(md("claims.sentence.same_architecture", lang, words=reading["target_words"],
                      model=known.models[read_as].name))
    if reading.get("unknown_model"):
        st.warning(md("claims.sentence.unknown_model", lang, model=reading["unknown_model"],
                      target=st.session_state["scenario"].target.name))
    if (beyond := reading.get("gamma_beyond")) is not None:
        st.warning(md("claims.sentence.gamma_beyond", lang, gamma=beyond, most=gamma_max))
    if (gpus := reading.get("gpus")) and scenario.split_of(gpus) is None:
        chosen = st.session_state["scenario"]
        st.warning(md("claims.sentence.gpus_not_split", lang, gpus=gpus, used=chosen.tp * chosen.dp))
    for dropped in reading.get("not_applied", ()):
        # Said while the sidebar's target is still the one that cannot draft so (a browser pass: "cannot
        # set mtp for Qwen3-32B" had stayed after the target became Qwen3-Next, drafting with its MTP).
        if dropped["target"] == st.session_state["scenario"].target.name:
            st.warning(md("claims.sentence.not_applied", lang, **dropped))
    # What the figure is over, while the claim checked is the sentence's figure: as the verdict's lead
    # and the link (claim_over) say it (a browser pass: it had stayed beside another figure typed).
    now_read = is_read_figure(reading, claimed_now())
    if reading.get("baseline") and now_read:
        st.warning(md("claims.sentence.relative", lang, baseline=claim_verdict.method_named(reading["baseline"]),
                      speedup=reading["speedup"]))
    if reading.get("over_words") and now_read:
        st.warning(md("claims.sentence.over_other", lang, what=reading["over_words"]))
        if not reading.get("speculation_said", True):  # one engine or GPU over another, for any reason
            st.warning(md("claims.sentence.no_speculation", lang, what=reading["over_words"]))
    if reading.get("same_speed"):
        st.warning(md("claims.sentence.same_speed", lang))
    if reading.get("percent"):
        st.caption(md("claims.percent_reading", lang, percent=reading["percent"], speedup=reading["speedup"],
                      other=reading["percent"] / 100))
    if reading["dataset"]:
        st.caption(md("claims.sentence.dataset", lang, dataset=reading["dataset"]))
    if reading["unstated"]:
        st.markdown(t("claims.sentence.ask", lang) + "\n" +
                    "\n".join(f"- {t(f'claims.sentence.unstated.{key}', lang)}" for key in reading["unstated"]))


def show_beside_published(sidebar: scenario.Scenario, speedup: float, batch: int | None, every_published: pd.DataFrame,
                          speedups: pd.DataFrame) -> None:
    """The claim beside ``speedups``, the published speedups of the same class of setting (of
    ``every_published``, all of them), and the user's own runs paired with their baselines (the
    examples' only where the user has none), with the published figures that reach it and how their
    acceptance was obtained."""
    family, drafting, vendor, kind = evidence.setting_class(sidebar.target, sidebar.draft_id, sidebar.gpu)
    st.caption(t("claims.comparable", lang, shown=len(speedups), every=len(every_published), family=family,
                 drafting=t(f"claims.drafting.{drafting}", lang),
                 hardware=t(f"claims.hardware.{kind}", lang, vendor=vendor)))
    reaching = evidence.published_reaching(speedups, speedup, batch)
    store = open_store(lang)
    read = store.shown_runs()
    runs, origin = explorer.one_origin(explorer.with_view_columns(read.frame, explorer.example_hashes(store.imports())))
    synthetic = int(explorer.synthetic_acceptance(runs).sum())
    synthetic_wanted = bool(synthetic) and st.toggle(t("claims.with_synthetic", lang, runs=synthetic),
                                                     key="claims_synthetic", help=t("claims.with_synthetic_help", lang))
    runs, left_out = explorer.measured_acceptance(runs, synthetic_wanted)
    if left_out:
        st.caption(t("exp.synthetic_left_out", lang, runs=left_out))
    every_paired = explorer.pair_with_baselines(runs)
    paired = evidence.comparable_runs(every_paired, sidebar, presets(settings.get("SPECVIZ_DATA_DIR")), batch)
    altair_chart(charts.published_speedups(speedups, paired, lang, claim=speedup))
    yours = int((paired["measured_speedup"] >= speedup).sum())
    if batch is None:
        st.caption(t("claims.beside_note", lang, reaching=len(reaching), published=len(speedups), yours=yours,
                     runs=len(paired), whose=t(f"claims.runs_of.{origin}", lang)))
    else:
        st.caption(t("claims.beside_note_batch", lang, reaching=len(reaching), batch=batch,
                     at_batch=int((speedups["batch"] >= batch).sum()), published=len(speedups),
                     any_batch=len(evidence.published_reaching(speedups, speedup)), yours=yours, runs=len(paired),
                     whose=t(f"claims.runs_of.{origin}", lang)))
    if len(paired) < len(every_paired):
        st.caption(t("claims.runs_elsewhere", lang, left=len(every_paired) - len(paired), runs=len(every_paired),
                     whose=t(f"claims.runs_of.{origin}", lang)))
    if read.cut:
        st.caption(t("claims.runs_cut", lang, shown=len(read.frame), stored=read.matching))
    if not reaching.empty:
        how = reaching["acceptance"].fillna("").value_counts()
        st.caption(t("claims.published_acceptance", lang, figures=len(reaching), measured=int(how.get("measured", 0)),
                     synthetic=int(how.get("synthetic", 0)), unsaid=int(how.get("", 0))))
        table = reaching[["study", "hardware", "target_model", "method", "batch", "value", "acceptance", "source"]].assign(
            acceptance=reaching["acceptance"].fillna("").map(lambda how: t(f"claims.acceptance.{how or 'unsaid'}", lang)))
        titled_dataframe(table, lang, placeholder="—",
                         column_config={**number_columns(table, FORMATS, lang),
                                        t("col.source", lang): st.column_config.LinkColumn()})


st.title(t("claims.title", lang))
st.caption(t("claims.intro", lang))
st.button(t("claims.example", lang), key="claims_example", on_click=open_example, help=t("claims.example_help", lang))
with st.container(border=True):
    most = settings.get("SPECVIZ_CLAIM_MAX_CHARS")
    # The box takes more than is read, so that a paragraph pasted whole is refused with its length
    # (claims.too_long), not dropped by the browser without a word.
    st.text_area(t("claims.sentence", lang), key="claim_sentence", max_chars=10 * most, height=80,
                 placeholder=t("claims.sentence_placeholder", lang), help=t("claims.sentence_help", lang, limit=most))
    st.button(t("claims.sentence.button", lang), key="claims_read", on_click=apply_sentence)
    reading_from_link()
    show_reading()

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
# Up to 100: a rate typed in percent, as vllm bench serve prints it, gets the library's words, not a
# field the browser turns red without one.
value = url_widget(col_value.number_input, t("claims.value", lang), 0.0, 100.0, key="claim_value",
                   value=None, step=0.01, disabled=measure == "none")
measured_gamma = url_widget(col_at.number_input, t("claims.measured_gamma", lang), 1, gamma_max,
                            key="claim_measured_gamma", value=claims.MEASURED_GAMMA, step=1,
                            disabled=measure in ("none", "alpha"), help=t("claims.measured_gamma_help", lang))
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
        st.caption(md("claims.percent_reading", lang, percent=percent, speedup=speedup, other=percent / 100))
    alpha = None if measure == "none" or value is None else claims.alpha_from_measurement(measure, value, measured_gamma,
                                                                                               sidebar.reuse)
except SpecvizError as exc:
    st.error(message(exc, lang))
    st.stop()

tokens = None if chosen_workload == "none" else (workloads[chosen_workload].input_tokens,
                                                workloads[chosen_workload].output_tokens)
claim = claims.Claim(speedup, batch=batch, gamma=gamma, alpha=alpha, workload=tokens)
known = presets(settings.get("SPECVIZ_DATA_DIR"))
# Read once per data folder; filtered once a run: the check weighs them, and the view beside published
# figures shows them.
every_published = published_speedups(settings.get("SPECVIZ_DATA_DIR"))
measured = evidence.comparable_published(every_published, sidebar, known)
check = claims.check_claim(replace(sidebar, context=context), claim, gamma_max, batch_max, known.acceptance, measured)

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
if not math.isnan(check.best["speedup"]):  # else the claim's batch does not fit: the verdict says so
    # Its range beside it: a central 1.75× under a 1.80× claim that only the range's top reaches (2.15×)
    # had read as a contradiction of the verdict (a manager's pass).
    row.metric(t("claims.m.best", lang), f"{check.best['speedup']:.2f}× ({check.best['low']:.2f}–{check.best['high']:.2f})",
               help=t("claims.m.best_help", lang, low=check.best["low"], high=check.best["high"],
                      gamma=check.best["gamma"], batch=check.best["batch"]), width="content")


def batch_range(low: float, high: float, gaps: tuple[tuple[int, int], ...]) -> str:
    """Batches from ``low`` to ``high`` but the runs ``gaps`` (:attr:`specviz.advice.claims.ClaimCheck.holds_gaps`)."""
    shown = t("claims.none", lang) if math.isnan(high) else f"{low:.0f}" if low == high else f"{low:.0f}–{high:.0f}"
    return t("claims.m.batches_except", lang, range=shown, gaps=claim_verdict.batch_runs(gaps)) if gaps else shown


row.metric(t("claims.m.batches", lang), batch_range(check.holds_from, check.holds_up_to, check.holds_gaps),
           help=t("claims.m.batches_help", lang), width="content")
if alpha is not None:
    row.metric(t("claims.m.yours", lang), batch_range(check.yours_from, check.yours_up_to, check.yours_gaps),
               help=t("claims.m.yours_help", lang), width="content")
# What "likely" means, as the calculator says it (a manager's pass: the page had never said).
if not math.isnan(check.best["speedup"]):  # else no range is shown (a batch that does not fit)
    st.caption(how_sure(sidebar.engine.name,
                        len(scenario.knobs_off_preset(sidebar)) == len(scenario.COST_KNOBS), lang))
# The same figure in the calculator: this claim's α, γ, batch and context on the sidebar's whole scenario.
point = claims.calculator_point(check)
label = (t("claims.to_calculator", lang, **point) if "alpha" in point else
         t("claims.to_calculator_no_fit", lang, batch=point["batch"]))
if "alpha" not in point:
    # A batch that does not fit: the calculator's own α and γ go with it, so that a new tab, which has
    # none, opens the figures this session's would (a consistency pass: E 2.73 here, 3.36 there).
    point |= {name: st.session_state[name] for name in ("alpha", "gamma") if st.session_state.get(name) is not None}
st.page_link(calculator_page(lang), icon=":material/calculate:", label=label,
             query_params=scenario_link(sidebar, **{name: f"{round(value, 3):g}" for name, value in point.items()},
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
    st.info(t("claims.view_no_fit", lang, batch=check.best["batch"], limit=check.memory_limit))
elif open_view == "batch":
    altair_chart(charts.claim_by_batch(check.batches, speedup, lang,
                                       limit=check.memory_limit if check.memory_limit < batch_max else None,
                                       limit_gamma=check.memory_gamma))
elif open_view == "required":
    st.subheader(t("claims.required", lang, batch=check.best["batch"]))
    st.caption(t("claims.required_note", lang))
    # A figure out of reach (NaN) is a dash, as the note says, not "None".
    shown = claims.required_as_shown(check.required)
    titled_dataframe(shown, lang, placeholder="—", column_config=number_columns(shown, FORMATS, lang))
else:
    show_beside_published(sidebar, speedup, batch, every_published, measured)
