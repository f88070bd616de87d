"""specviz router: the pages under pages/ and the scenario sidebar that every page shares.

The sidebar resolves the GPU, the model pair, the engine, the precision and the tensor parallelism
into ``st.session_state["scenario"]`` (a :class:`specviz.scenario.Scenario` at the engine's preset
costs, with the knobs the calculator's cost panel or a link set over them) or, when an entry is
unusable, ``st.session_state["scenario_error"]``.
"""

from __future__ import annotations

import math
from dataclasses import replace

import streamlit as st
from PIL import Image, ImageDraw
from streamlit.delta_generator import DeltaGenerator

from pages.parts.controls import (PARALLEL, PARALLEL_BEFORE, PARALLEL_DEFAULTS, clear_gpu_overrides, enter_page,
                             forget_target, new_draft, new_format, new_target_config, show_url_notices, url_choice,
                             url_widget)
from pages.parts.shared import (LINKED_COSTS, ROUTED, calculator_page, errors_said, knobs_said, model_choice_name, new_engine,
                           page_file, presets)
from specviz import i18n, scenario, settings
from specviz.errors import InputError, kept
from specviz.i18n import in_language, md, message, t
from specviz.model import architecture, dtypes, hf_config, step


def custom_model(role: str, lang: str) -> architecture.Model:
    """A model from an uploaded or pasted config.json (raises ValueError with a clear message), drawn
    under the choice it answers. A new file or text is a new model: a new target starts again from
    its own default draft (a draft of one's own is kept), and either from the fewest GPUs that hold
    the pair now known where the sidebar had set them (:func:`pages.parts.controls.sidebar_counts`)."""
    side = st.sidebar
    side.subheader(t(f"side.custom.{role}", lang))
    renewed = dict(on_change=new_target_config if role == "target" else new_draft)
    upload = side.file_uploader(t("side.config_upload", lang), type=["json"], key=f"{role}_config_file",
                                max_upload_size=settings.upload_mb("SPECVIZ_MAX_CONFIG_BYTES"), **renewed)
    pasted = side.text_area(t("side.config_paste", lang), key=f"{role}_config_text", height=120, **renewed)
    data = upload.getvalue() if upload is not None else pasted.encode("utf-8")
    name = upload.name if upload is not None else t("side.pasted_config", lang)
    return hf_config.model_from_config_bytes(data, name, settings.get("SPECVIZ_MAX_CONFIG_BYTES"),
                                             target=role == "target")


def config_reading(model: architecture.Model, role: str, precision: dtypes.Precision, lang: str) -> str:
    """What a config of one's own was read as: its parameters in all and a token's (embeddings in, as
    ``specviz model-from-config`` counts them), its layers and experts, an MTP module apart, and the KV
    cache a token adds at the precision's cache format (past every sliding window where that differs)."""
    kv, past = (model.kv_bytes_per_token(precision.kv_bytes, past_windows=p) for p in (False, True))
    parts = [t("side.read.experts", lang, experts=model.num_experts, per_token=model.experts_per_token,
               moe_layers=model.moe_layers)] if model.num_experts else []
    parts += [t("side.read.mtp", lang, params=model.mtp_params / 1e9, layers=model.mtp_layers)] if model.mtp_layers else []
    parts += [t("side.read.past_windows", lang, bytes=past)] if past != kv else []
    return t("side.read", lang, role=t(f"side.custom.{role}", lang), total=model.params_total / 1e9,
             active=model.params_active / 1e9, layers=model.layers, kv=kv, kv_format=precision.kv.upper(),
             more="".join(parts))


def component_formats(side: DeltaGenerator, precision_name: str, lang: str) -> dtypes.Precision:
    """The precision with each component's weight format and the KV cache's, as the expander's
    choices override them (kept in the URL)."""
    box = side.expander(t("side.formats", lang))
    same = lambda f: t("side.format.from_precision", lang) if not f else f.upper()
    weights = {component: chosen for key, component in scenario.WEIGHT_CHOICES.items()
               if (chosen := url_choice(box.selectbox, t(f"side.component.{component}", lang), ["", *dtypes.FORMATS],
                                        key, format_func=same, default="", on_change=new_format))}
    kv = url_choice(box.selectbox, t("side.kv_format", lang), ["", *dtypes.KV_FORMATS], "kv", format_func=same,
                    default="", on_change=new_format)
    return scenario.resolve_precision(precision_name, weights, kv or None)


def preset_hint(value: float, lang: str) -> str:
    """Placeholder of a figure field: the preset's value, or a request for one where it has none."""
    return t("side.preset_missing", lang) if math.isnan(value) else t("side.preset_value", lang, value=value)


def scenario_sidebar(lang: str) -> None:
    """Render the scenario widgets (bound to the URL) and store the resolved scenario, at the engine's
    preset costs and the default point (a page replaces what its own controls set)."""
    known = presets(settings.get("SPECVIZ_DATA_DIR"))
    gpus, models, engines = known.gpus, known.models, known.engines
    side = st.sidebar
    side.header(t("side.scenario", lang))
    gpu_id = url_choice(side.selectbox, t("side.gpu", lang), list(gpus), "gpu",
                        format_func=lambda g: in_language(gpus[g].name, lang), default=scenario.DEFAULT_GPU,
                        on_change=clear_gpu_overrides)
    gpu = gpus[gpu_id]
    figure = lambda name: scenario.FIELDS[name]
    tflops = url_widget(side.number_input, t("side.tflops", lang), min_value=figure("tflops").low,
                        max_value=figure("tflops").upper, value=None, key="tflops",
                        placeholder=preset_hint(gpu.tflops, lang),
                        help=t("side.figure_help", lang, source=gpu.source, note=gpu.note))
    bandwidth = url_widget(side.number_input, t("side.bandwidth", lang), min_value=figure("bandwidth").low,
                           max_value=figure("bandwidth").upper, value=None, key="bandwidth",
                           format="%.3f", placeholder=preset_hint(gpu.bandwidth_tb_s, lang),
                           help=t("side.figure_help", lang, source=gpu.source, note=gpu.note))
    gpu_figures = {name: value for name, value in (("tflops", tflops), ("bandwidth", bandwidth)) if value}
    gpu = replace(gpu, tflops=tflops or gpu.tflops, bandwidth_tb_s=bandwidth or gpu.bandwidth_tb_s)
    model_name = lambda m: model_choice_name(m, known, lang)
    # A model of one's own comes from an uploaded or pasted config.json, which a viewer does not take.
    own = [] if settings.get("SPECVIZ_VIEWER") else [scenario.CUSTOM]
    target_id = url_choice(side.selectbox, t("side.target", lang), [*scenario.model_choices(models), *own], "target",
                           format_func=model_name, default=scenario.DEFAULT_TARGET, on_change=forget_target,
                           args=("draft", *PARALLEL))
    # A config of one's own is read under its choice, so that the draft and the GPUs start from its size;
    # one that cannot be read (yet) is said once the sidebar is drawn.
    unread: ValueError | None = None
    target: architecture.Model | None = models.get(target_id)
    if target_id == scenario.CUSTOM:
        try:
            target = custom_model("target", lang)
        except ValueError as exc:
            unread = exc
    draft_default = scenario.default_draft(target_id, known, target) if target is not None else "eagle3"
    draft_id = url_choice(side.selectbox, t("side.draft", lang), [*scenario.draft_choices(known, target_id), *own],
                          "draft", format_func=model_name, default=draft_default, on_change=new_draft,
                          help=t("side.draft_help", lang), derived=True)
    draft: step.Draft | None = None
    try:
        draft = (scenario.custom_draft(custom_model("draft", lang)) if draft_id == scenario.CUSTOM
                 else scenario.resolve_draft(draft_id, known))
    except ValueError as exc:
        unread = unread or exc
    reuse_box = side.container()  # the MTP reuse factor, under the draft it belongs to, once the draft is read
    engine_id = url_choice(side.selectbox, t("side.engine", lang), list(engines), "engine",
                           format_func=lambda e: in_language(engines[e].name, lang), default=scenario.DEFAULT_ENGINE,
                           on_change=new_engine, help=t("side.engine_help", lang))
    # Precision and expert parallelism take the whole sidebar: in half of it their options are cut.
    precision_name = url_choice(
        side.selectbox, t("side.precision", lang), list(dtypes.PRECISIONS), "precision",
        format_func=lambda p: t(f"side.precision.{p}", lang), default=scenario.DEFAULT_PRECISION,
        on_change=new_format, help=t("side.precision_help", lang))
    precision = component_formats(side, precision_name, lang)
    # The fewest GPUs that hold the pair (a custom model's size is known only once it is read).
    known_pair = target is not None and draft is not None
    tp_default, dp_default, ep_default = (
        scenario.default_parallel(gpu, target, draft, precision, engines[engine_id].memory) if known_pair
        else (1, 1, False))
    col_tp, col_dp = side.columns(2)
    tp = int(url_choice(col_tp.selectbox, t("side.tp", lang), [str(n) for n in scenario.TENSOR_PARALLEL], "tp",
                        format_func=str, default=str(tp_default), help=t("side.tp_help", lang), derived=True))
    moe = target is not None and target.num_experts > 0
    dp = int(url_choice(col_dp.selectbox, t("side.dp", lang), [str(n) for n in scenario.DATA_PARALLEL], "dp",
                        format_func=str, default=str(dp_default), help=t("side.dp_help", lang), derived=moe))
    ep = url_choice(side.selectbox, t("side.ep", lang), list(scenario.EXPERT_PARALLEL), "ep",
                    format_func=lambda v: t(f"side.ep.{v}", lang), default="on" if ep_default else "off",
                    help=t("side.ep_help", lang), derived=moe) == "on"
    if ep and target is not None and not moe:  # as the command line says it (cli.ep_dense): a browser pass
        side.caption(t("side.ep_dense", lang, target=in_language(target.name, lang)))
    st.session_state[PARALLEL_DEFAULTS] = {"tp": str(tp_default), "dp": str(dp_default),
                                           "ep": "on" if ep_default else "off"}
    # Kept while a config to size them by is still to come: the counts before the choice of a config of
    # one's own are the ones its reading replaces (a browser pass: "it was 1", the waiting default, for 8).
    before = st.session_state.pop(PARALLEL_BEFORE, None) if known_pair else None
    # Set for the new choice: said, not silent (nor said while a config to size them by is still to come).
    if known_pair and before and (before["tp"], before["dp"]) != (str(tp), str(dp)):
        # "The fewest that hold the pair" only where they do (an engineer's pass: said of 8 holding none).
        holds = scenario.holds_default_point(gpu, target, draft, precision, tp, dp, engines[engine_id].memory)
        side.info(t("side.parallel_reset" if holds else "side.parallel_reset_none", lang, gpus=tp * dp, tp=tp, dp=dp,
                    was=int(before["tp"]) * int(before["dp"] or 1), gpu=in_language(gpu.name, lang)))
    show_url_notices(side, lang)
    # A parameter that reads nearly as a scenario's is a typo, which would leave its knob at the default
    # without a word (a browser pass: "gama=3" showed γ 4); said once, over the page (in the sidebar it
    # was below the fold, and hidden on a phone), and taken out of the address.
    for name, meant in scenario.near_names(list(st.query_params)).items():
        # Where the link gives the parameter it resembles too, that one is read (gamma=5&Gamma=3: γ 5).
        st.warning(md("url.near_name_given" if meant in st.query_params else "url.near_name", lang, param=name,
                      meant=meant))
        del st.query_params[name]
    st.session_state.pop("scenario", None)
    try:
        scenario.check_hardware(gpu, tp, dp)
        if unread is not None:
            raise unread
        if target is not None and draft is not None and (mismatch := scenario.head_mismatch(target, draft)):
            raise mismatch
    except ValueError as exc:
        st.session_state["scenario_error"] = kept(exc)  # rendered by the page, in its reader's language
        # A config not given yet is asked for, not refused (what it quotes from a file is escaped).
        waiting = isinstance(exc, InputError) and exc.key == "hf_config.empty"
        (side.info if waiting else side.error)(message(exc, lang))
        return
    st.session_state.pop("scenario_error", None)
    if (mismatch := scenario.vocab_mismatch(target, draft)) is not None:
        side.warning(message(mismatch, lang))
    for note in target.notes:
        side.info(message(note, lang))
    # What a config of one's own was read as, to check against what its publisher states.
    for role, model in (("target", target if target_id == scenario.CUSTOM else None),
                        ("draft", draft.model if draft_id == scenario.CUSTOM else None)):
        if model is not None:
            side.caption(config_reading(model, role, precision, lang))
    served = " · ".join(t(f"side.served.{c}", lang, format=precision.weight_format(target, c).name.upper())
                        for c in target.main_components)
    side.caption(t("side.formats_served", lang, parts=served, kv=precision.kv.upper()))
    compute = precision.matmul_compute(target)
    side.caption(t("side.ridge", lang, ridge=gpu.ridge_at(compute), dtype=gpu.runs_at(compute).upper()))
    if compute == "w4a8" and gpu.runs_at(compute) == "fp8":  # MXFP4 weights, MXFP8 activations
        side.caption(t("side.w4a8", lang, gpu=gpu.name))
    elif (expanded := scenario.expanded_compute(gpu, target, precision)) is not None:  # FP4 on Hopper
        side.caption(message(expanded, lang))
    engine = engines[engine_id]
    chosen = scenario.Scenario(
        gpu=gpu, target=target, draft=draft, engine=engine, costs=set_costs(scenario.preset_costs(engine)), target_id=target_id,
        draft_id=draft_id, precision=precision, tp=tp, dp=dp, ep=ep, gpu_figures=gpu_figures)
    if off := scenario.knobs_off_preset(chosen):  # every page prices them: said on every page
        side.caption(t("side.costs_set", lang, engine=in_language(engine.name, lang), knobs=knobs_said(off, lang)))
    if (reused := chosen.mtp_reused_from) is not None:  # the target's MTP layers run past their training
        field = scenario.FIELDS["mtp_reuse"]
        chosen = replace(chosen, mtp_reuse=url_widget(
            reuse_box.slider, t("side.mtp_reuse", lang), field.low, field.upper, value=field.default, step=field.step,
            key="mtp_reuse", help=t("side.mtp_reuse_help", lang, target=target.name, trained=reused - 1, reused=reused)))
    st.session_state["scenario"] = chosen


def set_costs(preset: step.Costs) -> step.Costs:
    """The engine's preset costs with the knobs set over them: by the calculator's cost panel (its
    controls keep their values for the session) or by a link, kept for the session (leaving a page
    drops its link's parameters), so that every page prices the scenario the calculator shows (a
    knob the link gives out of range is the calculator's to report, and stays at the preset here)."""
    linked = st.session_state.setdefault(LINKED_COSTS, {})
    for name in scenario.COST_KNOBS:
        if name in st.query_params:
            try:
                linked[name] = float(scenario.FIELDS[name].parse(st.query_params[name]))
            except ValueError:
                continue
    panel = {name: float(st.session_state[name]) for name in scenario.COST_KNOBS if name in st.session_state}
    return replace(preset, **{**linked, **panel})


def keep_language() -> None:
    """Put the language just chosen in the URL before the rerun (the selectbox's callback).

    With a ``pages/`` folder beside app.py, Streamlit 1.67 can take the first rerun of a session on
    the default page for a change of page and reset its widgets: the selectbox would fall back to
    the URL's language (Chromium: the choice of Vietnamese was lost). From the URL it comes back.

    A selectbox or radio keeps the label it showed, not the option (Streamlit 1.67), so after the
    switch it would show the old language's label until used again. Setting each choice to itself
    makes the next run send the label in the new language; every choice here is a string.
    """
    st.query_params["lang"] = st.session_state["lang"]
    for key in list(st.session_state):
        value = st.session_state[key]
        if key != "lang" and isinstance(value, str):
            st.session_state[key] = value


def language() -> str:
    """The interface's language for this browser session: chosen in the sidebar and kept in the URL
    (``?lang=vi``), ``SPECVIZ_LANG`` until then. The pages read it from ``st.session_state["lang"]``,
    the widget's key."""
    default = settings.get("SPECVIZ_LANG")
    default = default if default in i18n.LANGUAGES else "en"
    return url_choice(st.sidebar.selectbox, t("side.language", st.session_state.get("lang", default)),
                      list(i18n.LANGUAGES), "lang", format_func=i18n.LANGUAGES.get, default=default,
                      on_change=keep_language)


def favicon() -> Image.Image:
    """The tab's icon, drawn here: a page's Material icon as favicon is fetched from fonts.gstatic.com,
    and no request may leave the machine. Two bars, a plain step and a speculative one."""
    icon = Image.new("RGBA", (32, 32), (0, 0, 0, 0))
    draw = ImageDraw.Draw(icon)
    draw.rounded_rectangle((0, 0, 31, 31), radius=6, fill=(31, 119, 180, 255))
    draw.rectangle((7, 16, 13, 26), fill=(255, 255, 255, 255))
    draw.rectangle((18, 6, 24, 26), fill=(255, 255, 255, 255))
    return icon


def main() -> None:
    """Route to the selected page; no exception reaches the page as a traceback."""
    st.set_page_config(page_title="specviz", page_icon=favicon(), layout="wide")
    lang = language()
    # Each page's file is named by its URL path (pages/parts/shared.py, require_router, says why). The
    # calculator, the default page, is served at the root; the unique path st.navigation asks of it
    # ("calculator-page") is not served. Links from other pages open it at /what-if, the same file as a
    # page hidden from the menu (calculator_page: a link to the root has an empty path, which a browser
    # resolves against the page it is on). The icons are Streamlit's own font, not emoji, which a
    # machine without an emoji font shows as boxes.
    page = st.navigation([
        st.Page(page_file("calculator"), title=t("nav.calculator", lang), icon=":material/calculate:",
                url_path="calculator-page", default=True),
        st.Page(page_file("explorer"), title=t("nav.explorer", lang), icon=":material/bar_chart:",
                url_path=scenario.PAGE_PATHS["explorer"]),
        st.Page(page_file("live"), title=t("nav.live", lang), icon=":material/sensors:",
                url_path=scenario.PAGE_PATHS["live"]),
        st.Page(page_file("claims"), title=t("nav.claims", lang), icon=":material/fact_check:",
                url_path=scenario.PAGE_PATHS["claims"]),
        calculator_page(lang),
    ])
    enter_page(page.url_path)
    for unknown in settings.unknown_names():  # a misspelt setting, said where it would be missed
        st.sidebar.warning(message(unknown, lang))
    try:
        with errors_said(lang):
            scenario_sidebar(lang)
            st.session_state[ROUTED] = True
            page.run()
    finally:
        st.session_state[ROUTED] = False


main()
