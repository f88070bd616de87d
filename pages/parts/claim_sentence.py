"""A claim's sentence read into the Claims page's scenario and claim (a helper of
pages/check-a-claim.py, not a page): each item it sets kept with the value it replaced, so that it
can be undone, and what the reading says of the claim and leaves open."""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

from pages.parts.controls import (PARALLEL, PARALLEL_BEFORE, clear_gpu_overrides, forget, forget_target, new_format,
                                  renew)
from pages.parts.shared import model_choice_name, new_engine, presets
from specviz import scenario, settings
from specviz.advice import claim_over, claim_sentence, claim_verdict, claim_words, claims
from specviz.errors import SpecvizError
from specviz.i18n import in_language, md, message, t

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
        reading = claim_sentence.read_sentence(text, known)
    except SpecvizError as exc:
        # The sentence was the claim to check and holds none: the page is as for no claim (its
        # refusal alone), not the verdict of the claim before it.
        st.session_state["claim"] = ""
        st.session_state["claim_reading"] = {"error": exc}
        return
    target = reading.target or st.session_state.get("target", scenario.DEFAULT_TARGET)
    choices, unused = claim_sentence.sentence_choices(reading, known, target)
    found = {"claim": f"{reading.speedup:g}x", "claim_batch": reading.batch, "claim_gamma": reading.gamma,
             "context": reading.context, **choices}
    # A method the target cannot draft with (MTP on a model without MTP layers) is said, not dropped.
    not_applied = [{"method": unused, "target": known.models[target].name}] if unused else []
    items = []
    for key, value in found.items():
        if value is None:
            continue
        # The context slider is never empty: its undo goes back to its default where it had no value yet.
        previous = st.session_state.get(key, scenario.FIELDS["context"].default if key == "context" else None)
        items.append({"key": key, "value": value, "previous": previous,
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
    # The sidebar's draft and GPU count before the sentence: what it leaves unnamed is "kept" only where
    # they stay (a new target brings its own default draft and GPUs: a manager's pass read "keeps the
    # sidebar's EAGLE-3 head" where Qwen3-0.6B had been).
    before = st.session_state["scenario"]
    st.session_state["claim_reading"] = {"draft_before": before.draft_id, "gpus_before": before.tp * before.dp,"items": items, "dataset": reading.dataset, "unstated": reading.unstated,
                                         "not_applied": not_applied, "baseline": reading.baseline,
                                         "over_words": reading.over_words, "percent": reading.percent,
                                         "speedup": reading.speedup, "gpu_words": reading.gpu_words,
                                         "target_words": reading.target_words,
                                         "unknown_model": reading.unknown_model, "gpus": reading.gpus,
                                         "gamma_beyond": reading.gamma_beyond, "context_beyond": reading.context_beyond,
                                         "same_speed": reading.same_speed,
                                         "speculation_said": reading.speculation_said,
                                         "draft_named": reading.draft is not None,
                                         "gpus_named": (reading.gpu, reading.other_gpus),
                                         "batches_named": (reading.batch, reading.other_batches)}


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


def reading_from_link(lang: str) -> None:
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


def show_reading(lang: str) -> None:
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
             "draft": lambda draft: model_choice_name(draft, known, lang),
             "context": lambda context: f"{context:,}"}
    for index, item in holding:
        line = st.container(horizontal=True, vertical_alignment="center")
        value = shown.get(item["key"], str)(item["value"])
        line.markdown(md(f"claims.sentence.item.{item['key']}", lang, value=value))
        line.button(t("claims.sentence.undo", lang), key=f"claims_undo_{index}", on_click=undo_item, args=(index,))
    # What the sentence leaves to the sidebar, said: the verdict rests on it (a manager's pass: "unlikely"
    # had rested on a draft model the sentence never named).
    sidebar = st.session_state["scenario"]
    target = in_language(known.models[sidebar.target_id].name, lang)
    if not reading.get("draft_named", True):
        kept = sidebar.draft_id == reading.get("draft_before", sidebar.draft_id)
        st.caption(md("claims.sentence.draft_kept" if kept else "claims.sentence.draft_default", lang,
                      draft=shown["draft"](sidebar.draft_id), target=target))
    if not reading.get("gpus"):
        kept = sidebar.tp * sidebar.dp == reading.get("gpus_before", sidebar.tp * sidebar.dp)
        st.caption(md("claims.sentence.gpus_kept" if kept else "claims.sentence.gpus_default", lang,
                      gpus=sidebar.tp * sidebar.dp, gpu=shown["gpu"](sidebar.gpu.id), target=target))
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
        st.warning(md("claims.sentence.gamma_beyond", lang, gamma=beyond, most=settings.get("SPECVIZ_GAMMA_MAX")))
    if (beyond := reading.get("context_beyond")) is not None:
        st.warning(md("claims.sentence.context_beyond", lang, context=beyond, most=settings.get("SPECVIZ_CONTEXT_MAX")))
    if others := claim_words.gpus_left_out(*reading.get("gpus_named", (None, ())), sidebar.gpu.id):
        # "on 8x H200 and 8x B200": one verdict, on the sidebar's GPU (the first, unless changed)
        st.warning(md("claims.sentence.other_gpus", lang, others=", ".join(shown["gpu"](gpu) for gpu in others),
                      gpu=shown["gpu"](sidebar.gpu.id)))
    batch = st.session_state.get("claim_batch")
    if others := claim_words.batches_left_out(*reading.get("batches_named", (None, ())), batch):
        # "at batch 1, 32 and 256": at the batch field's, while it holds one (the first, unless changed)
        st.warning(md("claims.sentence.other_batches", lang, others=", ".join(f"{other:,}" for other in others),
                      batch=f"{batch:,}"))
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
        note = claim_words.percent_reading(reading["percent"], reading["speedup"])
        st.caption(md(note.key, lang, **note.params))
    if reading["dataset"]:
        st.caption(md("claims.sentence.dataset", lang, dataset=reading["dataset"]))
    if reading["unstated"]:
        st.markdown(t("claims.sentence.ask", lang) + "\n" +
                    "\n".join(f"- {t(f'claims.sentence.unstated.{key}', lang)}" for key in reading["unstated"]))
