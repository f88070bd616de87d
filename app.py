"""specviz router: the pages under pages/ and the scenario sidebar that every page shares.

The sidebar resolves the GPU and the model pair into ``st.session_state["scenario"]`` (a dict with
``gpu``, ``target``, ``draft``) or, when an entry is unusable, ``st.session_state["scenario_error"]``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import streamlit as st

from pages._shared import ROUTED, clear_gpu_overrides, presets, show_url_notices, url_choice, url_widget
from specviz import roofline, settings
from specviz.errors import SpecvizError
from specviz.i18n import escape_markdown, message, t

ROOT = Path(__file__).resolve().parent
NO_DRAFT, CUSTOM = "none", "custom"


def custom_model(role: str, lang: str) -> roofline.Model:
    """A model from an uploaded or pasted config.json (raises ValueError with a clear message)."""
    side = st.sidebar
    side.subheader(t(f"side.custom.{role}", lang))
    upload = side.file_uploader(t("side.config_upload", lang), type=["json"], key=f"{role}_config_file")
    pasted = side.text_area(t("side.config_paste", lang), key=f"{role}_config_text", height=120)
    data = upload.getvalue() if upload is not None else pasted.encode("utf-8")
    name = upload.name if upload is not None else t("side.pasted_config", lang)
    return roofline.model_from_config_bytes(data, name, settings.get("SPECVIZ_MAX_CONFIG_BYTES"))


def preset_hint(value: float, lang: str) -> str:
    """Placeholder of a figure field: the preset's value, or a request for one where it has none."""
    return t("side.preset_missing", lang) if math.isnan(value) else t("side.preset_value", lang, value=value)


def scenario_sidebar(lang: str) -> None:
    """Render the scenario widgets (bound to the URL) and store the resolved scenario."""
    gpus, models = presets(settings.get("SPECVIZ_DATA_DIR"))
    side = st.sidebar
    side.header(t("side.scenario", lang))
    gpu_id = url_choice(side.selectbox, t("side.gpu", lang), list(gpus), "gpu",
                        format_func=lambda g: gpus[g].name, on_change=clear_gpu_overrides)
    gpu = gpus[gpu_id]
    # Positive and bounded: a zero or an overflowing figure would make a pass take no time.
    tflops = url_widget(side.number_input, t("side.tflops", lang), min_value=0.001,
                        max_value=roofline.MAX_TFLOPS, value=None, key="tflops",
                        placeholder=preset_hint(gpu.tflops, lang), persist_state="session",
                        help=t("side.tflops_help", lang, source=gpu.source))
    bandwidth = url_widget(side.number_input, t("side.bandwidth", lang), min_value=0.001,
                           max_value=roofline.MAX_BANDWIDTH_TB_S, value=None, key="bandwidth",
                           format="%.3f", placeholder=preset_hint(gpu.bandwidth_tb_s, lang),
                           persist_state="session", help=t("side.bandwidth_help", lang, note=gpu.note))
    gpu = replace(gpu, tflops=tflops or gpu.tflops, bandwidth_tb_s=bandwidth or gpu.bandwidth_tb_s)
    model_name = lambda m: t(f"side.{m}_option", lang) if m in (NO_DRAFT, CUSTOM) else models[m].name
    target_id = url_choice(side.selectbox, t("side.target", lang), [*models, CUSTOM], "target",
                           format_func=model_name, default="Qwen3-32B")
    draft_id = url_choice(side.selectbox, t("side.draft", lang), [NO_DRAFT, *models, CUSTOM], "draft",
                          format_func=model_name, help=t("side.draft_help", lang))
    show_url_notices(side, lang)
    st.session_state.pop("scenario", None)
    try:
        if not gpu.complete:
            raise ValueError(t("side.gpu_incomplete", lang, gpu=gpu.name))
        target = custom_model("target", lang) if target_id == CUSTOM else models[target_id]
        if draft_id == NO_DRAFT:
            draft = None
        elif draft_id == CUSTOM:
            draft = custom_model("draft", lang)
        else:
            draft = models[draft_id]
    except ValueError as exc:
        st.session_state["scenario_error"] = str(exc)
        side.error(escape_markdown(str(exc)))  # it can quote a file name or a value from the file
        return
    st.session_state.pop("scenario_error", None)
    if draft is not None and draft.vocab_size != target.vocab_size:
        side.warning(t("side.vocab_mismatch", lang, draft=draft.vocab_size, target=target.vocab_size))
    side.caption(t("side.ridge", lang, ridge=gpu.ridge))
    st.session_state["scenario"] = {"gpu": gpu, "target": target, "draft": draft}


def main() -> None:
    """Route to the selected page; no exception reaches the page as a traceback."""
    lang = settings.get("SPECVIZ_LANG")
    st.session_state["lang"] = lang
    st.set_page_config(page_title="specviz", layout="wide")
    # URL paths differ from the file names on purpose: see pages/_shared.py, require_router.
    page = st.navigation([
        st.Page(ROOT / "pages" / "calculator.py", title=t("nav.calculator", lang), icon="🧮",
                url_path="what-if", default=True),
        st.Page(ROOT / "pages" / "explorer.py", title=t("nav.explorer", lang), icon="📊", url_path="results"),
    ])
    try:
        scenario_sidebar(lang)
        st.session_state[ROUTED] = True
        page.run()
    except SpecvizError as exc:  # e.g. the store stayed locked by an import longer than the timeout
        st.error(message(exc, lang))
    except Exception as exc:  # the last layer: say what failed instead of showing a traceback
        st.error(t("error.unexpected", lang, kind=type(exc).__name__, detail=exc))
    finally:
        st.session_state[ROUTED] = False


main()
